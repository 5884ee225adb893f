//! Fuzz targets of the binary's parsers (issue 13): `harvest.toml` (the
//! sample config with random edits, and arbitrary text) and the query API's
//! parameters (`/api/search` and `/api/stats` query strings). Every input
//! must give a value or an error naming what is wrong, never a panic or a
//! hang. `deploy/fuzz.sh SECONDS` runs them longer.

use fuzzkit::gen;
use fuzzkit::proptest;
use fuzzkit::proptest::prelude::*;
use harvest::config::{Config, RawConfig, SAMPLE_CONFIG};
use harvest::serve::{search_request, stats_request};

#[test]
fn fuzz_config_parser() {
    let corpus = vec![
        SAMPLE_CONFIG.as_bytes().to_vec(),
        include_bytes!("../deploy/cluster/harvest.cluster.toml").to_vec(),
    ];
    let strategy = prop_oneof![
        3 => gen::mutated(corpus, 6),
        1 => gen::bytes(512),
    ];
    fuzzkit::fuzz("config", strategy, |bytes| {
        let text = String::from_utf8_lossy(&bytes);
        if let Ok(raw) = toml::from_str::<RawConfig>(&text) {
            // What parses also serialises and validates (or names the key).
            if let Ok(again) = toml::to_string(&raw) {
                let back: RawConfig = toml::from_str(&again).expect("a written config reads back");
                assert_eq!(back, raw);
            }
            if let Err(e) = Config::from_raw(raw) {
                assert!(!format!("{e:#}").is_empty());
            }
        }
    });
}

/// Query strings of known parameter names with values near the valid ones.
fn query_string() -> impl Strategy<Value = String> {
    let name = prop_oneof![
        Just("source"),
        Just("from"),
        Just("to"),
        Just("tz"),
        Just("topic"),
        Just("media"),
        Just("keyword"),
        Just("any"),
        Just("min_comments"),
        Just("max_comments"),
        Just("collapse"),
        Just("revisits"),
        Just("published_from"),
        Just("sort"),
        Just("limit"),
        Just("cursor"),
        Just("interval"),
        Just("group_by"),
        Just("bogus"),
    ];
    let value = prop_oneof![
        Just("2017-01-01".to_string()),
        Just("2017-13-45".to_string()),
        Just("9999-12-31".to_string()),
        Just("-262143-01-01".to_string()),
        Just("2017-01-01T00:00:00%2B14:00".to_string()),
        Just("Asia%2FShanghai".to_string()),
        Just("%2B23:59".to_string()),
        Just("-99:99".to_string()),
        Just("18446744073709551615".to_string()),
        Just("99999999999999999999999".to_string()),
        Just("true".to_string()),
        Just("time_asc".to_string()),
        Just("relevance".to_string()),
        Just("day".to_string()),
        Just("story".to_string()),
        Just("%E5%86%9B%E4%BA%8B,%00,%FF".to_string()),
        "[ -~]{0,24}",
        "[A-Za-z0-9_-]{0,60}",
    ];
    proptest::collection::vec((name, value), 0..8).prop_map(|pairs| {
        pairs
            .into_iter()
            .map(|(n, v)| format!("{n}={v}"))
            .collect::<Vec<_>>()
            .join("&")
    })
}

#[test]
fn fuzz_api_parameters() {
    let strategy = prop_oneof![
        4 => query_string(),
        1 => "[ -~]{0,80}",
        1 => gen::bytes(80).prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
    ];
    fuzzkit::fuzz("api_params", strategy, |raw| {
        match search_request(Some(&raw)) {
            Ok(q) => assert!(q.from < q.to, "{raw}"),
            // An error says what is wrong (the parameter may be `""`: `?=x`).
            Err(e) => assert!(!e.message.is_empty(), "{raw}: {}", e.param),
        }
        if let Ok(sq) = stats_request(Some(&raw)) {
            // The bucket plan the statistics would lay out (capped, or an error).
            let _ = indexer::BucketPlan::new(sq.interval, &sq.tz, sq.query.from, sq.query.to);
        }
    });
}
