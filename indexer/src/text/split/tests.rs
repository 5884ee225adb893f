//! The split index on an embedded table store and a local folder of files:
//! writes, searches, merges, readers that follow, files left by killed
//! writers and damaged splits.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::super::embedded::tests::{
    doc, revisit_flags_on, scope, urls, words_phrases_scope_replace_and_delete_on,
};
use super::super::{TextDoc, TextPage, TextQuery, TextStore};
use super::*;
use crate::error::Result;
use crate::store::TableStore;
use crate::EmbeddedStore;

struct Place {
    _dir: tempfile::TempDir,
    tables: Arc<dyn TableStore>,
    files: Arc<FolderFiles>,
    root: PathBuf,
}

fn place() -> Place {
    let dir = tempfile::tempdir().unwrap();
    let tables: Arc<dyn TableStore> =
        Arc::new(EmbeddedStore::open(dir.path().join("tables")).unwrap());
    let files = Arc::new(FolderFiles::new(&dir.path().join("files")));
    Place {
        root: dir.path().to_owned(),
        _dir: dir,
        tables,
        files,
    }
}

/// A reader or writer of the place with a cache of its own.
fn open(p: &Place, cache: &str) -> SplitText {
    SplitText::open(p.tables.clone(), p.files.clone(), &p.root.join(cache)).unwrap()
}

#[test]
fn split_hits_carry_the_revisit_flag() {
    let p = place();
    revisit_flags_on(&open(&p, "cache"));
}

#[test]
fn words_phrases_scope_replace_and_delete_in_splits() {
    let p = place();
    let n = AtomicU64::new(0);
    // Every opening with an empty cache: what it finds, it fetched from the files.
    words_phrases_scope_replace_and_delete_on(&|| {
        let k = n.fetch_add(1, Ordering::SeqCst);
        Box::new(open(&p, &format!("cache{k}")))
    });
}

/// The file store of a place, noting the files read.
struct Counting {
    inner: Arc<FolderFiles>,
    read: Mutex<Vec<String>>,
}

impl SplitFiles for Counting {
    fn put(&self, path: &str, bytes: &[u8]) -> Result<()> {
        self.inner.put(path, bytes)
    }
    fn get(&self, path: &str) -> Result<Vec<u8>> {
        self.read.lock().unwrap().push(path.to_owned());
        self.inner.get(path)
    }
    fn delete(&self, path: &str) -> Result<()> {
        self.inner.delete(path)
    }
    fn list(&self, prefix: &str) -> Result<Vec<String>> {
        self.inner.list(prefix)
    }
}

#[test]
fn a_merge_reads_only_its_month_and_leaves_no_stale_cache() {
    let p = place();
    let first = open(&p, "first");
    let write = |w: &SplitText, source: &str, i: i64| {
        let url = format!("http://{source}/{i}");
        w.write(&[doc(source, 100 + i, &url, "Harbour", "ships arrived")])
            .unwrap();
    };
    // Another writer made splits of two sources (no merge yet at 8).
    for i in 0..3 {
        write(&first, "a", i);
        write(&first, "b", i);
    }
    let counting = Arc::new(Counting {
        inner: p.files.clone(),
        read: Mutex::new(Vec::new()),
    });
    let cache = p.root.join("second");
    let second = SplitText::open(p.tables.clone(), counting.clone(), &cache)
        .unwrap()
        .merge_at(4);
    write(&second, "b", 3);
    let read = counting.read.lock().unwrap().clone();
    assert_eq!(read.len(), 3, "{read:?}");
    assert!(read.iter().all(|r| r.starts_with("_text/b/")), "{read:?}");
    let listed = second.splits().unwrap();
    assert_eq!(listed.len(), 4, "3 of a, 1 merged of b: {listed:?}");
    // Only the merged split is left in the writer's cache.
    let cached = std::fs::read_dir(&cache)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().join("meta.json").exists())
        .count();
    assert_eq!(cached, 1);
    let all = scope(0, 10_000_000);
    assert_eq!(urls(&second, "ships", &all).len(), 7);
}

#[test]
fn files_a_killed_writer_left_are_found_once_old_and_removed() {
    let p = place();
    let w = open(&p, "w");
    w.write(&[doc("a", 100, "http://a/1", "Harbour", "ships")])
        .unwrap();
    let now = u64::try_from(chrono::Utc::now().timestamp_micros()).unwrap();
    let old = now - 2 * 3_600 * 1_000_000;
    let left = [
        format!("{SPLIT_FOLDER}/a/1970-01/{old:016x}-00000001.split"),
        format!("{SPLIT_FOLDER}/a/1970-01/{old:016x}-00000002.part"),
    ];
    let young = format!("{SPLIT_FOLDER}/a/1970-01/{now:016x}-00000003.split");
    for f in left.iter().chain([&young]) {
        p.files.put(f, b"HVSPLIT1 torn").unwrap();
    }
    let found = w.unlisted_files().unwrap();
    assert_eq!(
        found,
        left.to_vec(),
        "the listed split and the young file stay"
    );
    w.remove_files(&found).unwrap();
    assert!(w.unlisted_files().unwrap().is_empty());
    assert_eq!(
        p.files.list(SPLIT_FOLDER).unwrap().len(),
        2,
        "listed + young"
    );
    assert!(w.remove_files(&["packs/x.warc.gz".into()]).is_err());
    let all = scope(0, 10_000_000);
    assert_eq!(urls(&open(&p, "r"), "ships", &all).len(), 1);
}

#[test]
fn a_writer_merges_a_month_and_readers_follow() {
    let p = place();
    let writer = open(&p, "w").merge_at(3);
    let reader = open(&p, "r");
    let all = scope(0, 10_000_000);
    let h = |u: &str| crate::keys::url_hash(u);
    // Five batches of one month: merged at the third, then two more.
    for i in 0..5 {
        writer
            .write(&[doc(
                "a",
                100 + i,
                &format!("http://x/{i}"),
                "Harbour news",
                &format!("ships arrived number{i}"),
            )])
            .unwrap();
    }
    // A page written again and a page deleted: the merge keeps only what counts.
    writer
        .write(&[doc("a", 100, "http://x/0", "Harbour news", "planes left")])
        .unwrap();
    let deleted = TextPage {
        source: Arc::from("a"),
        time: 101,
        hash: h("http://x/1"),
    };
    writer.delete(std::slice::from_ref(&deleted)).unwrap();
    assert_eq!(urls(&reader, "ships", &all).len(), 3, "x/2, x/3, x/4");
    assert_eq!(urls(&reader, "planes", &all), vec![h("http://x/0")]);
    assert_eq!(reader.len().unwrap(), 4);
    // Three more writes: a second merge, of the first merge and the rest.
    for i in 5..8 {
        writer
            .write(&[doc(
                "a",
                100 + i,
                &format!("http://x/{i}"),
                "Harbour",
                "ships",
            )])
            .unwrap();
    }
    let splits = reader.splits().unwrap();
    assert!(splits.len() < 4, "merged: {splits:?}");
    let total: u64 = splits.iter().map(|(_, n)| n).sum();
    assert_eq!(
        total, 7,
        "superseded and deleted versions left out: {splits:?}"
    );
    assert_eq!(urls(&reader, "ships", &all).len(), 6);
    assert_eq!(reader.len().unwrap(), 7);
    // Merged-away files are gone from the store and from the reader's cache.
    let on_disk = walk(&p.root.join("files"));
    assert_eq!(on_disk.len(), splits.len(), "{on_disk:?}");
    let cached = std::fs::read_dir(p.root.join("r")).unwrap().count();
    assert_eq!(cached, splits.len());
    // Another month is another split, outside a scope of the first month.
    writer
        .write(&[doc("a", 40 * 86_400, "http://y/1", "Port", "ships")])
        .unwrap();
    assert_eq!(urls(&reader, "ships", &all).len(), 7);
    assert_eq!(urls(&reader, "ships", &scope(0, 86_400)).len(), 6);
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

#[test]
fn scores_are_those_of_one_index_of_every_split() {
    let p = place();
    let splits = open(&p, "w");
    let dir = tempfile::tempdir().unwrap();
    let one = super::super::embedded::EmbeddedText::open(dir.path()).unwrap();
    let docs: Vec<TextDoc> = (0..30)
        .map(|i| {
            let body = format!(
                "{} harbour {}",
                "ships ".repeat(i % 5 + 1),
                "news ".repeat(i % 3)
            );
            doc(
                ["a", "b"][i % 2],
                1_000 * i as i64,
                &format!("http://z/{i}"),
                "T",
                &body,
            )
        })
        .collect();
    for chunk in docs.chunks(7) {
        splits.write(chunk).unwrap();
        one.write(chunk).unwrap();
    }
    for q in [
        "ships",
        "ships news",
        "harbour OR news",
        "\"ships harbour\"",
    ] {
        let q = TextQuery::parse(q).unwrap();
        let by_page = |store: &dyn TextStore| -> Vec<(TextPage, u32)> {
            let mut v: Vec<_> = store
                .search(&q, &scope(0, 1_000_000))
                .unwrap()
                .into_iter()
                .map(|h| (h.page, h.score.to_bits()))
                .collect();
            v.sort_by_key(|a| (a.0.time, a.0.hash));
            v
        };
        let a = by_page(&splits);
        assert!(!a.is_empty());
        assert_eq!(a, by_page(&one), "{q:?}");
    }
}

#[test]
fn a_refresh_that_fails_part_way_misses_nothing_once_it_succeeds() {
    let p = place();
    let w = open(&p, "w");
    w.write(&[doc("a", 1, "http://x/1", "T", "words")]).unwrap();
    w.write(&[doc("a", 2, "http://x/2", "T", "words")]).unwrap();
    let mut files = walk(&p.root.join("files"));
    files.sort();
    let last = files.last().unwrap().clone();
    let good = std::fs::read(&last).unwrap();
    std::fs::write(&last, b"HVSPLIT1").unwrap();
    let r = open(&p, "r");
    let q = TextQuery::parse("words").unwrap();
    assert!(r.search(&q, &scope(0, 10)).is_err());
    std::fs::write(&last, good).unwrap();
    assert_eq!(r.search(&q, &scope(0, 10)).unwrap().len(), 2);
    assert_eq!(r.len().unwrap(), 2);
}

#[test]
fn a_damaged_split_file_is_an_error_naming_it() {
    let p = place();
    open(&p, "w")
        .write(&[doc("a", 1, "http://x/1", "T", "words")])
        .unwrap();
    let files = walk(&p.root.join("files"));
    std::fs::write(&files[0], b"HVSPLIT1\0\0\0\x09").unwrap();
    let err = open(&p, "r")
        .search(&TextQuery::parse("words").unwrap(), &scope(0, 10))
        .unwrap_err()
        .to_string();
    assert!(err.contains(".split"), "{err}");
    assert!(err.contains("truncated"), "{err}");
}
