//! Extraction on small labelled pages written for each Chinese date, title,
//! media and author pattern of issue 11 (markup shapes of the portals that
//! use them) and on bad input (dozens of dates, nonsense dates, a 10 KB
//! title, no `<head>`, a page labelled GBK that is UTF-8). Labels:
//! `fixtures/pages/labels.json`; a label left out is not checked, a `null`
//! label must come out missing.

use chrono::{DateTime, FixedOffset, Utc};
use extract::{extract_with, TimeContext};
use serde_json::Value;
use url::Url;

/// The crate's test pages (`tests/fixtures`).
fn fixtures() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn labels() -> Vec<Value> {
    let path = fixtures().join("pages/labels.json");
    let text = std::fs::read_to_string(&path).expect("labels.json");
    match serde_json::from_str(&text).expect("valid json") {
        Value::Array(a) => a,
        other => panic!("labels.json is not a list: {other}"),
    }
}

fn text_of(label: &Value, key: &str) -> Option<String> {
    label.get(key).and_then(Value::as_str).map(str::to_string)
}

#[test]
fn every_labelled_attribute_comes_out_right() {
    let mut failures = Vec::new();
    let labels = labels();
    assert!(labels.len() >= 15, "fixtures missing");
    for label in &labels {
        let file = text_of(label, "file").expect("file");
        let bytes = std::fs::read(fixtures().join("pages").join(&file)).expect("fixture file");
        let text = shapes::charset::decode(&bytes, None).text;
        let url = Url::parse(&text_of(label, "url").expect("url")).expect("fixture url");
        let fetched: DateTime<Utc> = text_of(label, "fetched")
            .and_then(|f| DateTime::parse_from_rfc3339(&f).ok())
            .expect("fetched")
            .with_timezone(&Utc);
        // The zone an operator configures for a source whose pages give
        // times without an offset that the defaults would not guess (an
        // English page of a Beijing outlet on a `.com` host).
        let zone = text_of(label, "zone").map(|z| z.parse::<chrono_tz::Tz>().expect("label zone"));
        let ctx = TimeContext {
            fetched,
            zone,
            hint: None,
        };
        let got = extract_with(&text, &url, &ctx);
        let mut check = |what: &str, want: Option<String>, got: Option<String>| {
            if want != got {
                failures.push(format!("{file} {what}: want {want:?}, got {got:?}"));
            }
        };
        if label.get("title").is_some() {
            check("title", text_of(label, "title"), got.title.clone());
        }
        if label.get("published").is_some() {
            let want = text_of(label, "published")
                .map(|p| DateTime::parse_from_rfc3339(&p).expect("label time"));
            let as_utc =
                |d: Option<DateTime<FixedOffset>>| d.map(|d| d.with_timezone(&Utc).to_rfc3339());
            check(
                "published",
                as_utc(want),
                got.published.map(|d| d.to_rfc3339()),
            );
        }
        if label.get("published_from").is_some() {
            check(
                "published_from",
                text_of(label, "published_from"),
                got.published_from.map(|p| p.to_string()),
            );
        }
        if label.get("media").is_some() {
            check("media", text_of(label, "media"), got.media.clone());
        }
        if label.get("author").is_some() {
            check("author", text_of(label, "author"), got.author.clone());
        }
        if got.published.is_none() && got.published_from.is_some() {
            failures.push(format!("{file}: a provenance without a time"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} wrong:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn a_page_that_names_no_media_gets_its_host_flagged() {
    let text = "<html><head><title>小区停车位涨价，业主该怎么维权？</title></head><body>\
        <h1>小区停车位涨价，业主该怎么维权？</h1><p>发表于 2024-01-05 10:20</p>\
        <p>我们小区的地下停车位月租从三百涨到五百，物业说是业委会同意的，但业主都不知道。</p></body></html>";
    let url = Url::parse("https://bbs.example.com/thread-1001-1-1.html").expect("url");
    let got = extract::extract(text, &url);
    assert_eq!(got.media.as_deref(), Some("bbs.example.com"));
    assert!(got.media_from_host);
    // The forum's name after the headline in its `<title>` (`… - 业主论坛 -
    // 幸福社区 - Powered by Discuz!`) names it, not flagged.
    let bytes = std::fs::read(fixtures().join("pages/discuz_forum.html")).expect("fixture");
    let text = String::from_utf8(bytes).expect("utf-8");
    let got = extract::extract(&text, &url);
    assert_eq!(got.media.as_deref(), Some("幸福社区"));
    assert!(!got.media_from_host);
}

#[test]
fn a_configured_zone_reads_times_without_an_offset() {
    let bytes = std::fs::read(fixtures().join("pages/chinanews.html")).expect("fixture");
    let text = String::from_utf8(bytes).expect("utf-8");
    let url = Url::parse("https://www.chinanews.com.cn/cj/2024/04-12/10198765.shtml").expect("url");
    let ctx = TimeContext {
        fetched: DateTime::parse_from_rfc3339("2024-04-13T00:00:00Z")
            .expect("time")
            .with_timezone(&Utc),
        zone: Some(chrono_tz::Europe::Berlin),
        hint: None,
    };
    let got = extract_with(&text, &url, &ctx);
    assert_eq!(
        got.published_local.map(|d| d.to_rfc3339()).as_deref(),
        Some("2024-04-12T14:20:00+02:00")
    );
}

/// A page fetched long after its top bar's date was printed (a cached copy,
/// an archive served again): the byline's time under the headline still
/// wins over the bar's day above it.
#[test]
fn a_stale_top_bar_date_does_not_hide_the_byline() {
    let bytes = std::fs::read(fixtures().join("pages/mil81.html")).expect("fixture");
    let text = String::from_utf8(bytes).expect("utf-8");
    let url = Url::parse("http://www.81.cn/hj_208563/16350123.html").expect("url");
    let ctx = TimeContext {
        fetched: DateTime::parse_from_rfc3339("2026-12-05T00:00:00Z")
            .expect("time")
            .with_timezone(&Utc),
        zone: None,
        hint: None,
    };
    let got = extract_with(&text, &url, &ctx);
    assert_eq!(
        got.published_local.map(|d| d.to_rfc3339()).as_deref(),
        Some("2024-11-25T06:45:11+08:00")
    );
}

/// Bad input: every labelled page and every newspaper4k page cut at many
/// points (unclosed tags, half a date, half a JSON-LD block, no body) and
/// with its markup doubled extracts without a panic, and a time it finds is
/// never after the fetch time or before 1995.
#[test]
fn truncated_and_doubled_pages_never_panic_nor_give_absurd_times() {
    let mut pages: Vec<String> = Vec::new();
    for dir in ["pages", "news"] {
        for entry in std::fs::read_dir(fixtures().join(dir)).expect("fixture dir") {
            let path = entry.expect("entry").path();
            if path.extension().is_some_and(|e| e == "html") {
                let bytes = std::fs::read(&path).expect("page");
                pages.push(shapes::charset::decode(&bytes, None).text);
            }
        }
    }
    assert!(pages.len() >= 25, "{} pages", pages.len());
    let url = Url::parse("https://news.example.cn/2024/0301/a.html").expect("url");
    let fetched: DateTime<Utc> = "2024-06-30T00:00:00Z".parse().expect("time");
    let ctx = TimeContext {
        fetched,
        zone: None,
        hint: None,
    };
    let earliest: DateTime<Utc> = "1995-01-01T00:00:00Z".parse().expect("time");
    for page in &pages {
        let n = page.chars().count();
        let mut variants: Vec<String> = (1..12)
            .map(|k| page.chars().take(n * k / 12).collect())
            .collect();
        variants.push(format!("{page}{page}"));
        for v in &variants {
            let x = extract_with(v, &url, &ctx);
            if let Some(t) = x.published {
                assert!(t <= fetched && t >= earliest, "absurd time {t}");
            }
            assert!(x.title.as_ref().is_none_or(|t| t.chars().count() <= 400));
        }
    }
}
