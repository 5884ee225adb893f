//! ARCHITECTURE.md against the code, where a documented fact can drift.
//!
//! The "Row keys" section of ARCHITECTURE.md shows a worked example: one
//! page's URL, time, source and keyword, and the bytes of its row keys. This
//! test reads that example, computes the same keys with `indexer::keys`,
//! writes the page through `Index` into an embedded store and compares the
//! rows really stored with the documented bytes. It also pins the one way the
//! document states the salt formula (issue 15: it had been stated two ways,
//! one of them wrong).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use chrono::{DateTime, Datelike, Utc};
use indexer::keys::{self, ATTR_KEYWORD};
use indexer::store::Scan;
use indexer::{EmbeddedStore, Index, IndexOptions, PageRecord, TableStore};

/// The only spelling of the salt formula ARCHITECTURE.md may use.
const SALT_FORMULA: &str = "url-hash[0] % buckets";

fn architecture_md() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ARCHITECTURE.md");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// The `name = value` lines of the fenced block that follows the line
/// containing `marker` (a value ends where a `(` comment starts).
fn example_block(doc: &str, marker: &str) -> BTreeMap<String, String> {
    let start = doc
        .find(marker)
        .unwrap_or_else(|| panic!("ARCHITECTURE.md has no {marker:?}"));
    let mut lines = doc[start..].lines().skip_while(|l| !l.starts_with("```"));
    assert!(lines.next().is_some(), "no fenced block after {marker:?}");
    let mut fields = BTreeMap::new();
    for line in lines.take_while(|l| !l.starts_with("```")) {
        let Some((name, value)) = line.split_once(" = ") else {
            continue;
        };
        let value = value.split(" (").next().unwrap_or_default().trim();
        let previous = fields.insert(name.trim().to_owned(), value.to_owned());
        assert!(previous.is_none(), "{name:?} is documented twice");
    }
    fields
}

fn field<'a>(fields: &'a BTreeMap<String, String>, name: &str) -> &'a str {
    fields
        .get(name)
        .unwrap_or_else(|| panic!("the row-key example has no `{name} = ...` line"))
}

/// Bytes written as two-digit hex pairs; `|` separates fields for the reader.
fn hex(text: &str) -> Vec<u8> {
    text.split_whitespace()
        .filter(|t| *t != "|")
        .map(|t| {
            assert_eq!(t.len(), 2, "{t:?} in {text:?} is not a hex byte");
            u8::from_str_radix(t, 16)
                .unwrap_or_else(|_| panic!("{t:?} in {text:?} is not a hex byte"))
        })
        .collect()
}

fn spaced(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

#[track_caller]
fn assert_documented(name: &str, documented: &str, computed: &[u8]) {
    assert_eq!(
        hex(documented),
        computed,
        "ARCHITECTURE.md, row-key example, `{name}`: documented {documented:?}, \
         the code gives {:?}",
        spaced(computed)
    );
}

/// The example as the document states it.
struct Example {
    url: String,
    time: DateTime<Utc>,
    source: String,
    buckets: u8,
    keyword: String,
    fields: BTreeMap<String, String>,
}

fn example() -> Example {
    let fields = example_block(&architecture_md(), "Worked example");
    let time = field(&fields, "time");
    Example {
        url: field(&fields, "url").to_owned(),
        time: time
            .parse()
            .unwrap_or_else(|e| panic!("time {time:?}: {e}")),
        source: field(&fields, "source").to_owned(),
        buckets: field(&fields, "buckets")
            .parse()
            .unwrap_or_else(|e| panic!("buckets: {e}")),
        keyword: field(&fields, "keyword").to_owned(),
        fields,
    }
}

#[test]
fn documented_key_bytes_are_what_indexer_keys_computes() {
    let ex = example();
    let f = |name| field(&ex.fields, name);
    assert_eq!(
        ex.buckets,
        keys::DEFAULT_BUCKETS,
        "the example uses the default bucket count"
    );

    let hash = keys::url_hash(&ex.url);
    assert_documented("url-hash", f("url-hash"), &hash);
    let salt = keys::salt(&hash, ex.buckets);
    assert_documented("salt", f("salt"), &[salt]);
    // The example tells the documented formula from the one ARCHITECTURE.md
    // used to state as well (the whole 64-bit hash modulo the buckets).
    assert_eq!(salt, hash[0] % ex.buckets);
    assert_ne!(
        u64::from_be_bytes(hash) % u64::from(ex.buckets),
        u64::from(salt),
        "pick an example URL whose salt differs under xxh3-64(url) % buckets"
    );

    assert_eq!(
        keys::table_name(&ex.source, ex.time.year()).ok().as_deref(),
        Some(f("table")),
        "`table`"
    );
    let suffix = keys::suffix(ex.time, &hash);
    assert_documented("suffix", f("suffix"), &suffix);
    let data = keys::data_key(salt, &suffix);
    assert_eq!(data.len(), keys::DATA_KEY_LEN);
    assert_documented("data row", f("data row"), &data);
    let keyword = ex.keyword.to_lowercase();
    let month = u8::try_from(ex.time.month()).unwrap_or_default();
    assert_documented(
        "posting row",
        f("posting row"),
        &keys::posting_key(salt, ATTR_KEYWORD, &keyword, month),
    );
    assert_documented(
        "index key",
        f("index key"),
        &keys::index_key(salt, ATTR_KEYWORD, &keyword, &suffix),
    );
    assert_documented("format", f("format"), keys::FORMAT_KEY);

    let (raw, escaped) = ex
        .fields
        .iter()
        .find_map(|(name, value)| Some((name.strip_prefix("escaped ")?, value)))
        .unwrap_or_else(|| panic!("the row-key example has no `escaped BYTES = BYTES` line"));
    let raw = String::from_utf8(hex(raw)).unwrap_or_else(|e| panic!("escaped input: {e}"));
    assert_documented("escaped", escaped, &keys::escape_value(&raw));
}

#[test]
fn documented_rows_are_the_rows_index_writes() {
    let ex = example();
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let store: Arc<dyn TableStore> =
        Arc::new(EmbeddedStore::open(dir.path()).unwrap_or_else(|e| panic!("embedded store: {e}")));
    let index = Index::new(Arc::clone(&store), IndexOptions::default())
        .unwrap_or_else(|e| panic!("index: {e}"));
    index
        .index_pages(&[page(&ex)])
        .unwrap_or_else(|e| panic!("index_pages: {e}"));

    let table = field(&ex.fields, "table");
    let rows = store
        .scan(table, &Scan::default())
        .unwrap_or_else(|e| panic!("scan {table}: {e}"));
    let row = |name: &str| {
        let key = hex(field(&ex.fields, name));
        rows.iter().find(|r| r.key == key).unwrap_or_else(|| {
            let stored: Vec<String> = rows.iter().map(|r| spaced(&r.key)).collect();
            panic!("ARCHITECTURE.md's `{name}` is not a row of {table}; stored: {stored:#?}")
        })
    };
    row("data row");
    let suffix = hex(field(&ex.fields, "suffix"));
    assert!(
        row("posting row")
            .cells
            .iter()
            .any(|c| c.family == "i" && c.qualifier == suffix),
        "the posting row holds the page as a cell whose qualifier is the documented suffix"
    );
    let marker = row("format")
        .cells
        .iter()
        .find(|c| c.family == "a" && c.qualifier == b"format")
        .map(|c| String::from_utf8_lossy(&c.value).into_owned());
    assert_eq!(
        marker.as_deref(),
        Some(field(&ex.fields, "format cell")),
        "the format marker's cell `a:format`"
    );
    // A new table holds posting rows, never per-page index rows.
    assert!(
        rows.iter().all(|r| r.key.get(1) != Some(&keys::INDEX_TAG)),
        "a new table has no index rows"
    );
}

#[test]
fn the_salt_formula_is_stated_one_way() {
    let doc = architecture_md();
    let flat = doc.split_whitespace().collect::<Vec<_>>().join(" ");
    let statements: Vec<String> = flat
        .match_indices("salt =")
        .map(|(at, _)| flat[at..].chars().take(48).collect::<String>())
        .collect();
    assert!(
        !statements.is_empty(),
        "ARCHITECTURE.md states no salt formula"
    );
    for s in statements {
        // The worked example's `salt = 01 (url-hash[0] % buckets)` states it too.
        let formula = s.trim_start_matches("salt = ");
        let formula = match formula.split_once(" (") {
            Some((byte, rest)) if hex_byte(byte) => rest,
            _ => formula,
        };
        assert!(
            formula.starts_with(SALT_FORMULA),
            "ARCHITECTURE.md states the salt as {s:?}; keys::salt is `{SALT_FORMULA}`"
        );
    }
}

fn hex_byte(t: &str) -> bool {
    t.len() == 2 && t.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The example page: published at the documented time, one keyword.
fn page(ex: &Example) -> PageRecord {
    PageRecord {
        url: ex.url.clone(),
        title: "Syria talks".to_owned(),
        published: Some(ex.time),
        fetched: ex.time,
        first_seen: None,
        media: Some("BBC".to_owned()),
        comments: None,
        participants: None,
        keywords: vec![ex.keyword.clone()],
        topic: "world".to_owned(),
        topic_score: 0.9,
        cluster: 0,
        pack_path: "world/2017/03/09/a.warc.gz".to_owned(),
        offset: 0,
        length: 1,
        digest: "sha1:AAAA".to_owned(),
        record_id: "<urn:uuid:0>".to_owned(),
        simhash: None,
        simhash_version: None,
        near_duplicate_of: None,
        language: Some("en".to_owned()),
        charset: Some("utf-8".to_owned()),
        status: 200,
        source: ex.source.clone(),
        revisit: false,
        published_from: Some("meta".to_owned()),
        author: None,
        media_from_host: false,
        outlet: None,
    }
}
