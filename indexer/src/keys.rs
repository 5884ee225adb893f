//! Row-key encoding of the `{source}_{yyyy}` tables.
//!
//! ```text
//! data row   [salt][0x00][MM][DD][hh][mm][ss][url-hash 8B]                       (15 bytes)
//! index key  [salt][0x01][attr][escaped value][0x00][MM][DD][hh][mm][ss][url-hash 8B]
//! posting    [salt][0x02][attr][escaped value][0x00][MM]      one cell per page:
//!            qualifier = the page's suffix (13 bytes), value = its index value
//! format     [0xff]"format"                                   (family a, see Index)
//! ```
//! * posting rows hold the index: the pages of one (bucket, attribute, value,
//!   month) are the cells of one row, so a query reads one stored value per
//!   month instead of one per page. An index key names one entry of a page:
//!   the data row lists its entries as qualifiers of family `i` (so a
//!   re-index finds the posting cells to delete). Tables made before posting
//!   rows, which held one index row per page under these keys, are no longer
//!   read (refused by [`crate::Index`]).
//! * `url-hash` = big-endian xxh3-64 of the (already normalised) URL; stable
//!   across versions and platforms.
//! * `salt` = first byte of `url-hash` modulo the bucket count.
//! * the time is the page's publish time, else its fetch time (UTC, whole
//!   seconds); the year is in the table name, not in the key.
//! * index values are escaped so they never contain 0x00 and keep their byte
//!   order: `0x00 -> 0x01 0x01`, `0x01 -> 0x01 0x02`.
//!
//! The last 13 bytes of every data or index key (time + url hash) are the
//! page's [`Suffix`]: within one bucket it identifies the data row, and
//! suffixes sort in time order.

use chrono::{DateTime, Datelike, NaiveDate, TimeZone, Timelike, Utc};
use xxhash_rust::xxh3::xxh3_64;

use crate::error::{Error, Result};

/// Default number of salt buckets (regions) per table.
pub const DEFAULT_BUCKETS: u8 = 16;
/// Second key byte of a data row.
pub const DATA_TAG: u8 = 0x00;
/// Second byte of an index key.
pub const INDEX_TAG: u8 = 0x01;
/// Index attribute: topic.
pub const ATTR_TOPIC: u8 = b't';
/// Index attribute: media source.
pub const ATTR_MEDIA: u8 = b'm';
/// Index attribute: keyword (lowercased).
pub const ATTR_KEYWORD: u8 = b'k';
/// Second key byte of a posting row.
pub const POSTING_TAG: u8 = 0x02;
/// Key of a page table's format marker row (sorts after every bucket: salts
/// are below 255).
pub const FORMAT_KEY: &[u8] = b"\xffformat";
/// Terminator after an index value.
pub const VALUE_END: u8 = 0x00;
/// Escape byte inside index values.
const ESCAPE: u8 = 0x01;
/// Bytes of the URL hash.
pub const URL_HASH_LEN: usize = 8;
/// Bytes of the key time (MM DD hh mm ss).
pub const TIME_LEN: usize = 5;
/// Bytes of a [`Suffix`].
pub const SUFFIX_LEN: usize = TIME_LEN + URL_HASH_LEN;
/// Bytes of a data-row key.
pub const DATA_KEY_LEN: usize = 2 + SUFFIX_LEN;

/// Time + URL hash: the last 13 bytes of a data or index key.
pub type Suffix = [u8; SUFFIX_LEN];

/// Stable 8-byte hash of a URL (big-endian xxh3-64).
pub fn url_hash(url: &str) -> [u8; URL_HASH_LEN] {
    xxh3_64(url.as_bytes()).to_be_bytes()
}

/// Salt byte of a URL hash for a table with `buckets` buckets.
pub fn salt(hash: &[u8; URL_HASH_LEN], buckets: u8) -> u8 {
    hash[0] % buckets.max(1)
}

/// The 5 time bytes of a key (month, day, hour, minute, second).
pub fn time_bytes(t: DateTime<Utc>) -> [u8; TIME_LEN] {
    // chrono guarantees these ranges (second() <= 59 even on leap seconds).
    [
        t.month() as u8,
        t.day() as u8,
        t.hour() as u8,
        t.minute() as u8,
        t.second() as u8,
    ]
}

/// Builds a suffix from a time and a URL hash.
pub fn suffix(t: DateTime<Utc>, hash: &[u8; URL_HASH_LEN]) -> Suffix {
    let mut s = [0u8; SUFFIX_LEN];
    s[..TIME_LEN].copy_from_slice(&time_bytes(t));
    s[TIME_LEN..].copy_from_slice(hash);
    s
}

/// Decodes the time of a suffix (or of 5 time bytes) in the given year.
pub fn suffix_time(year: i32, s: &[u8]) -> Result<DateTime<Utc>> {
    let bad = || Error::BadKey {
        key: s.to_vec(),
        reason: "invalid time bytes",
    };
    let [mo, d, h, mi, se] = *s.first_chunk::<TIME_LEN>().ok_or_else(bad)?;
    let date = NaiveDate::from_ymd_opt(year, u32::from(mo), u32::from(d)).ok_or_else(bad)?;
    let naive = date
        .and_hms_opt(u32::from(h), u32::from(mi), u32::from(se))
        .ok_or_else(bad)?;
    Ok(Utc.from_utc_datetime(&naive))
}

/// Key of a data row.
pub fn data_key(salt: u8, s: &Suffix) -> Vec<u8> {
    let mut k = Vec::with_capacity(DATA_KEY_LEN);
    k.push(salt);
    k.push(DATA_TAG);
    k.extend_from_slice(s);
    k
}

/// Splits a data-row key into (salt, suffix).
pub fn split_data_key(key: &[u8]) -> Result<(u8, Suffix)> {
    match key {
        [salt, DATA_TAG, rest @ ..] if rest.len() == SUFFIX_LEN => {
            let mut s = [0u8; SUFFIX_LEN];
            s.copy_from_slice(rest);
            Ok((*salt, s))
        }
        _ => Err(Error::BadKey {
            key: key.to_vec(),
            reason: "not a data-row key",
        }),
    }
}

/// Escapes an index value so that it contains no 0x00 and keeps its order.
pub fn escape_value(value: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(value.len());
    for &b in value.as_bytes() {
        match b {
            0x00 => out.extend_from_slice(&[ESCAPE, 0x01]),
            ESCAPE => out.extend_from_slice(&[ESCAPE, 0x02]),
            _ => out.push(b),
        }
    }
    out
}

/// Reverses [`escape_value`].
pub fn unescape_value(bytes: &[u8]) -> Result<String> {
    let bad = |reason| Error::BadKey {
        key: bytes.to_vec(),
        reason,
    };
    let mut out = Vec::with_capacity(bytes.len());
    let mut it = bytes.iter();
    while let Some(&b) = it.next() {
        if b == ESCAPE {
            match it.next() {
                Some(0x01) => out.push(0x00),
                Some(0x02) => out.push(ESCAPE),
                _ => return Err(bad("bad escape in index value")),
            }
        } else {
            out.push(b);
        }
    }
    String::from_utf8(out).map_err(|_| bad("index value is not UTF-8"))
}

/// `[salt][tag][attr][escaped value][0x00]`.
pub(crate) fn tagged_prefix(salt: u8, tag: u8, attr: u8, value: &str) -> Vec<u8> {
    let esc = escape_value(value);
    let mut k = Vec::with_capacity(4 + esc.len() + SUFFIX_LEN);
    k.extend_from_slice(&[salt, tag, attr]);
    k.extend_from_slice(&esc);
    k.push(VALUE_END);
    k
}

/// `[salt][0x01][attr][escaped value][0x00]`: the prefix of all index keys of
/// one (attribute, value) in one bucket.
pub fn index_prefix(salt: u8, attr: u8, value: &str) -> Vec<u8> {
    tagged_prefix(salt, INDEX_TAG, attr, value)
}

/// `[salt][0x02][attr][escaped value][0x00]`: the prefix of all posting rows
/// of one (attribute, value) in one bucket.
pub fn posting_prefix(salt: u8, attr: u8, value: &str) -> Vec<u8> {
    tagged_prefix(salt, POSTING_TAG, attr, value)
}

/// Key of the posting row holding the pages of one (attribute, value) in
/// one bucket and month (1..=12).
pub fn posting_key(salt: u8, attr: u8, value: &str, month: u8) -> Vec<u8> {
    let mut k = posting_prefix(salt, attr, value);
    k.push(month);
    k
}

/// The posting row and cell qualifier (the suffix) that hold the entry of an
/// index key.
pub fn posting_of(index: &IndexKey) -> (Vec<u8>, Suffix) {
    (
        posting_key(index.salt, index.attr, &index.value, index.suffix[0]),
        index.suffix,
    )
}

/// A decoded posting-row key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostingKey {
    /// Salt bucket.
    pub salt: u8,
    /// Attribute tag (`ATTR_*`).
    pub attr: u8,
    /// Unescaped value.
    pub value: String,
    /// Month (1..=12).
    pub month: u8,
}

/// Decodes a posting-row key.
pub fn split_posting_key(key: &[u8]) -> Result<PostingKey> {
    let bad = |reason| Error::BadKey {
        key: key.to_vec(),
        reason,
    };
    let [salt, tag, attr, rest @ .., end, month] = key else {
        return Err(bad("posting key too short"));
    };
    if *tag != POSTING_TAG || *end != VALUE_END || rest.contains(&VALUE_END) {
        return Err(bad("not a posting-row key"));
    }
    Ok(PostingKey {
        salt: *salt,
        attr: *attr,
        value: unescape_value(rest)?,
        month: *month,
    })
}

/// Index key of one entry of a page (a qualifier of its data row's family `i`).
pub fn index_key(salt: u8, attr: u8, value: &str, s: &Suffix) -> Vec<u8> {
    let mut k = index_prefix(salt, attr, value);
    k.extend_from_slice(s);
    k
}

/// A decoded index-row key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexKey {
    /// Salt bucket.
    pub salt: u8,
    /// Attribute tag (`ATTR_*`).
    pub attr: u8,
    /// Unescaped value.
    pub value: String,
    /// Time + URL hash of the page.
    pub suffix: Suffix,
}

/// Decodes an index-row key.
pub fn split_index_key(key: &[u8]) -> Result<IndexKey> {
    let bad = |reason| Error::BadKey {
        key: key.to_vec(),
        reason,
    };
    let [salt, tag, attr, rest @ ..] = key else {
        return Err(bad("index key too short"));
    };
    if *tag != INDEX_TAG || rest.len() < SUFFIX_LEN + 1 {
        return Err(bad("not an index-row key"));
    }
    let (value, tail) = rest.split_at(rest.len() - SUFFIX_LEN - 1);
    if tail.first() != Some(&VALUE_END) || value.contains(&VALUE_END) {
        return Err(bad("index value not terminated"));
    }
    let mut suffix = [0u8; SUFFIX_LEN];
    suffix.copy_from_slice(&tail[1..]);
    Ok(IndexKey {
        salt: *salt,
        attr: *attr,
        value: unescape_value(value)?,
        suffix,
    })
}

/// Checks a source name: `[a-z0-9_]+`.
pub fn validate_source(source: &str) -> Result<()> {
    if source.is_empty()
        || !source
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
    {
        return Err(Error::BadTableName {
            name: source.to_owned(),
            reason: "source names must match [a-z0-9_]+",
        });
    }
    Ok(())
}

/// `{source}_{yyyy}`; the source must match `[a-z0-9_]+`, the year 1000..=9999.
pub fn table_name(source: &str, year: i32) -> Result<String> {
    validate_source(source)?;
    if !(1000..=9999).contains(&year) {
        return Err(Error::BadTableName {
            name: format!("{source}_{year}"),
            reason: "year must have four digits",
        });
    }
    Ok(format!("{source}_{year}"))
}

/// Splits `{source}_{yyyy}` into (source, year); `None` for other tables.
pub fn parse_table_name(name: &str) -> Option<(&str, i32)> {
    let (source, year) = name.rsplit_once('_')?;
    if year.len() != 4
        || !year.bytes().all(|b| b.is_ascii_digit())
        || validate_source(source).is_err()
    {
        return None;
    }
    Some((source, year.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> DateTime<Utc> {
        s.parse().unwrap_or_default()
    }

    #[test]
    fn data_keys_sort_by_time_then_hash() {
        let h = url_hash("http://www.dw.com/en/a");
        let a = data_key(3, &suffix(t("2017-01-31T23:59:59Z"), &h));
        let b = data_key(3, &suffix(t("2017-02-01T00:00:00Z"), &h));
        assert!(a < b);
        assert_eq!(a.len(), DATA_KEY_LEN);
        let (s, suf) = split_data_key(&b).expect("data key");
        assert_eq!(s, 3);
        assert_eq!(
            suffix_time(2017, &suf).ok(),
            Some(t("2017-02-01T00:00:00Z"))
        );
    }

    #[test]
    fn url_hash_is_stable() {
        // Pinned: changing the hash would orphan every stored row.
        assert_eq!(url_hash(""), 0x2d06_8005_38d3_94c2u64.to_be_bytes());
    }

    #[test]
    fn index_key_round_trips_and_escapes() {
        let s = suffix(
            t("2016-12-30T07:11:00Z"),
            &url_hash("http://tass.com/world/923"),
        );
        for v in ["syria", "", "a\0b", "x\u{1}y", "北京"] {
            let k = index_key(5, ATTR_KEYWORD, v, &s);
            assert!(
                !k[3..k.len() - SUFFIX_LEN - 1].contains(&VALUE_END),
                "escaped value has no 0x00"
            );
            let d = split_index_key(&k).expect("index key");
            assert_eq!(
                (d.salt, d.attr, d.value.as_str(), d.suffix),
                (5, ATTR_KEYWORD, v, s)
            );
        }
        // escaping keeps byte order of values
        assert!(escape_value("a\0") < escape_value("a\u{1}"));
        assert!(escape_value("a\u{1}") < escape_value("a\u{2}"));
        assert!(index_prefix(0, ATTR_MEDIA, "ab") > index_prefix(0, ATTR_MEDIA, "a"));
    }

    #[test]
    fn posting_keys_round_trip_and_sort_by_month() {
        let s = suffix(t("2018-03-09T10:00:00Z"), &url_hash("http://www.bbc.com/a"));
        for v in ["brexit", "", "a\0b", "x\u{1}y", "北京"] {
            let ik = split_index_key(&index_key(7, ATTR_TOPIC, v, &s)).expect("index key");
            let (row, q) = posting_of(&ik);
            assert_eq!(q, s);
            assert!(row.starts_with(&posting_prefix(7, ATTR_TOPIC, v)));
            let p = split_posting_key(&row).expect("posting key");
            assert_eq!(
                (p.salt, p.attr, p.value.as_str(), p.month),
                (7, ATTR_TOPIC, v, 3)
            );
        }
        assert!(posting_key(0, ATTR_KEYWORD, "a", 2) < posting_key(0, ATTR_KEYWORD, "a", 11));
        assert!(posting_key(0, ATTR_KEYWORD, "a", 12) < posting_key(0, ATTR_KEYWORD, "a\u{1}", 1));
        assert!(split_posting_key(&index_key(0, ATTR_KEYWORD, "a", &s)).is_err());
        assert!(split_posting_key(&[0, POSTING_TAG]).is_err());
        // every bucket's keys sort before the format marker
        assert!(posting_key(254, 0xff, "\u{10ffff}", 12).as_slice() < FORMAT_KEY);
    }

    #[test]
    fn table_names_are_validated() {
        assert_eq!(
            table_name("sina_news", 2017).ok().as_deref(),
            Some("sina_news_2017")
        );
        assert!(table_name("Sina", 2017).is_err());
        assert!(table_name("a-b", 2017).is_err());
        assert!(table_name("sina", 17).is_err());
        assert_eq!(
            parse_table_name("sina_news_2017"),
            Some(("sina_news", 2017))
        );
        assert_eq!(parse_table_name("urls"), None);
        assert_eq!(parse_table_name("digests"), None);
    }
}
