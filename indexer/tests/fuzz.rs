//! Fuzz targets of the row-key and row decoders (issue 13): data, index and
//! posting keys, escaped values, key times, page ids, cursors, table names
//! and stored page rows. Arbitrary bytes must decode to a value or an error,
//! never a panic; every key we encode must decode to what was encoded.
//! `deploy/fuzz.sh SECONDS` runs them longer.

use chrono::{TimeZone, Utc};
use fuzzkit::gen;
use fuzzkit::proptest;
use fuzzkit::proptest::prelude::*;
use indexer::keys;

fn key_corpus() -> Vec<Vec<u8>> {
    let t = Utc
        .with_ymd_and_hms(2024, 2, 29, 23, 59, 58)
        .single()
        .unwrap_or_default();
    let h = keys::url_hash("https://news.example.com/a.html");
    let s = keys::suffix(t, &h);
    vec![
        keys::data_key(3, &s),
        keys::index_key(3, keys::ATTR_KEYWORD, "军事\u{0}\u{1}x", &s),
        keys::posting_key(15, keys::ATTR_MEDIA, "新华社", 2),
        keys::FORMAT_KEY.to_vec(),
    ]
}

#[test]
fn fuzz_row_key_decoders() {
    fuzzkit::fuzz("row_keys", gen::bytes_or_mutated(key_corpus(), 64), |key| {
        let _ = keys::split_data_key(&key);
        let _ = keys::split_posting_key(&key);
        if let Ok(ik) = keys::split_index_key(&key) {
            let (posting, suffix) = keys::posting_of(&ik);
            assert_eq!(suffix, ik.suffix);
            assert!(keys::split_posting_key(&posting).is_ok());
        }
        let _ = keys::unescape_value(&key);
        for year in [1970, 2024, -1, i32::MAX, i32::MIN] {
            let _ = keys::suffix_time(year, &key);
        }
        let _ = indexer::record::decode_time(&key);
        let text = String::from_utf8_lossy(&key);
        let _ = keys::parse_table_name(&text);
        let _ = indexer::PageId::parse(&text);
        let _ = indexer::Cursor::decode(&text);
        let _ = indexer::zone::Zone::parse(&text);
    });
}

#[test]
fn fuzz_row_key_round_trip() {
    let strategy = (
        any::<u8>(),
        prop_oneof![
            Just(keys::ATTR_TOPIC),
            Just(keys::ATTR_MEDIA),
            Just(keys::ATTR_KEYWORD)
        ],
        "[\\u{0}-\\u{10FFFF}]{0,16}",
        0i64..4_102_444_800,
        "[ -~]{0,40}",
    );
    fuzzkit::fuzz(
        "row_key_round_trip",
        strategy,
        |(salt, attr, value, secs, url)| {
            let t = Utc.timestamp_opt(secs, 0).single().unwrap_or_default();
            let s = keys::suffix(t, &keys::url_hash(&url));
            assert_eq!(
                keys::split_data_key(&keys::data_key(salt, &s)).ok(),
                Some((salt, s))
            );
            let ik =
                keys::split_index_key(&keys::index_key(salt, attr, &value, &s)).expect("index key");
            assert_eq!(
                (ik.salt, ik.attr, ik.value.as_str(), ik.suffix),
                (salt, attr, value.as_str(), s)
            );
            let month = (t.format("%m").to_string().parse::<u8>()).unwrap_or(1);
            let pk = keys::split_posting_key(&keys::posting_key(salt, attr, &value, month))
                .expect("posting key");
            assert_eq!(pk.value, value);
            let year: i32 = t.format("%Y").to_string().parse().unwrap_or(1970);
            assert_eq!(keys::suffix_time(year, &s).ok(), Some(t));
        },
    );
}

#[test]
fn fuzz_page_row_decoder() {
    let cells = proptest::collection::vec(
        (
            prop_oneof![Just("a".to_string()), Just("i".to_string()), "[a-z]{1,2}"],
            prop_oneof![
                Just(b"url".to_vec()),
                Just(b"title".to_vec()),
                Just(b"published".to_vec()),
                Just(b"fetched".to_vec()),
                Just(b"comments".to_vec()),
                Just(b"keywords".to_vec()),
                Just(b"offset".to_vec()),
                Just(b"simhash".to_vec()),
                gen::bytes(12),
            ],
            gen::bytes(24),
        ),
        0..12,
    );
    fuzzkit::fuzz("page_row", (gen::bytes(20), cells), |(key, cells)| {
        let row = indexer::store::Row {
            key,
            cells: cells
                .into_iter()
                .map(|(family, qualifier, value)| indexer::store::Cell {
                    family,
                    qualifier,
                    value,
                })
                .collect(),
        };
        let _ = indexer::PageRecord::from_row(&row);
    });
}
