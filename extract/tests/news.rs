//! Extraction on real news pages from the newspaper4k test corpus: title and
//! publish date must match the values that project records for each page.

use extract::extract;
use serde_json::Value;
use url::Url;

/// The crate's test pages (`tests/fixtures`).
fn fixtures() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

const NEWS: [&str; 5] = [
    "chinese_article_001",
    "chinese_article_002",
    "cleveland.com1",
    "cnn_article",
    "fox13now_001",
];

struct Expected {
    url: Url,
    title: String,
    /// `YYYY-MM-DD` of newspaper4k's publish_date.
    date: String,
}

fn load(name: &str) -> (String, Expected) {
    let dir = fixtures().join("news");
    let html = std::fs::read_to_string(dir.join(format!("{name}.html"))).expect("fixture html");
    let meta: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join(format!("{name}.expected.json"))).expect("fixture json"),
    )
    .expect("valid json");
    let field = |k: &str| {
        meta.get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let expected = Expected {
        url: Url::parse(&field("url")).expect("fixture url"),
        title: field("title"),
        date: field("publish_date").chars().take(10).collect(),
    };
    (html, expected)
}

#[test]
fn title_and_publish_date_match_newspaper4k() {
    for name in NEWS {
        let (html, want) = load(name);
        let got = extract(&html, &want.url);
        assert_eq!(
            got.title.as_deref(),
            Some(want.title.as_str()),
            "{name} title"
        );
        let date = got.published.map(|d| d.format("%Y-%m-%d").to_string());
        assert_eq!(
            date.as_deref(),
            Some(want.date.as_str()),
            "{name} publish date"
        );
        assert!(!got.body_text.is_empty(), "{name} body text");
        assert!(!got.links.is_empty(), "{name} links");
        assert!(
            got.links.iter().all(|l| l.starts_with("http")),
            "{name} absolute links"
        );
    }
}

#[test]
fn exact_times_media_language_and_keywords() {
    let (html, want) = load("cnn_article");
    let cnn = extract(&html, &want.url);
    assert_eq!(
        cnn.published.map(|d| d.to_rfc3339()).as_deref(),
        Some("2013-11-27T08:36:32+00:00")
    );
    assert_eq!(cnn.media.as_deref(), Some("CNN"));
    assert_eq!(cnn.language.as_deref(), Some("en"));
    assert_eq!(cnn.keywords.len(), extract::KEYWORD_COUNT);
    assert!(cnn.body_text.contains("Thanksgiving"));

    let (html, want) = load("cleveland.com1");
    let cle = extract(&html, &want.url);
    assert_eq!(cle.media.as_deref(), Some("cleveland.com"));

    let (html, want) = load("chinese_article_001");
    let zh = extract(&html, &want.url);
    assert_eq!(zh.language.as_deref(), Some("zh"));
    assert!(!zh.keywords.is_empty());
    assert!(
        zh.keywords.iter().all(|k| k.chars().count() >= 2),
        "{:?}",
        zh.keywords
    );

    let (html, want) = load("chinese_article_002");
    let xinhua = extract(&html, &want.url);
    // The visible byline `来源：新华网` names the media; the page's meta
    // `source` (新华社, the agency) only counts when the text names none.
    assert_eq!(xinhua.media.as_deref(), Some("新华网"));
    assert_eq!(
        xinhua.published_local.map(|d| d.to_rfc3339()).as_deref(),
        Some("2023-11-17T20:52:15+08:00")
    );
    assert_eq!(xinhua.published_from, Some(extract::PublishedFrom::Text));
    assert!(xinhua.article_text.contains("短缺药品"));
    assert!(!xinhua.media_from_host);
    assert!(xinhua.body_text.contains("短缺药品"));
}
