//! Issue 42 item 5: the media series of the news demo name outlets. The demo
//! (`harvest demo --news`: 3,824 real articles of nine outlets served on
//! 127.0.0.1 and crawled) is run as a newcomer runs it, every archived page
//! is listed (`query --format jsonl`), and each page's media must be its own
//! outlet's name (as the outlet names itself, `og:site_name`), the host for a
//! hub page that names no outlet, or a wire agency the article credits in its
//! own text (`BRUSSELS (Reuters) -`, `Source: AFP news agency`: the agency
//! that filed the story is its media). Before the rules of issue 42, 85 pages
//! had other values: `Al Jazeera News` beside `Al Jazeera`, `Gov.UK However`,
//! `Mathew Nyaungwa`, `bit.ly`, `SPD`, `IOC`. A page's outlet (the site that
//! published it) is its outlet's name on every article, never an agency, and
//! its host on a hub page; `stats --group-by outlet` has one series per outlet
//! and one for the host.

mod util;

use std::collections::{BTreeMap, HashMap};

use harvest::newssite;

/// Wire agencies a page of the corpus may be credited to, and how its text
/// credits them.
const AGENCIES: [&str; 4] = ["Reuters", "AFP", "AP", "Associated Press"];

/// Whether `text` credits `agency`: a dateline's `(Reuters)` or a `Source:`
/// line naming it.
fn credits(text: &str, agency: &str) -> bool {
    text.contains(&format!("({agency})"))
        || ["Source: ", "Source:-", "SOURCE: "]
            .iter()
            .any(|l| text.contains(&format!("{l}{agency}")))
}

#[test]
fn every_news_demo_page_is_named_by_its_outlet_or_its_host() {
    let csv = util::news_csv();
    let articles = newssite::read_articles(&csv).expect("the news corpus");
    let by_path: HashMap<String, &newssite::Article> = articles
        .iter()
        .map(|a| (newssite::article_path(a), a))
        .collect();

    let scratch = tempfile::tempdir().expect("temp dir");
    let dir = scratch.path().join("news");
    util::run_harvest(&[
        "demo",
        "--news",
        csv.to_str().expect("utf-8 path"),
        "--dir",
        dir.to_str().expect("utf-8 path"),
        "--quiet",
    ]);
    let config = dir.join("harvest.toml");
    let pages = util::jsonl(&util::run_harvest(&[
        "-c",
        config.to_str().expect("utf-8 path"),
        "query",
        "--from",
        "1990-01-01",
        "--to",
        "2100-01-01",
        "--format",
        "jsonl",
    ]));
    assert!(
        pages.len() > articles.len(),
        "{} pages archived, {} articles",
        pages.len(),
        articles.len()
    );

    let mut wrong = Vec::new();
    let mut by_media: BTreeMap<String, u64> = BTreeMap::new();
    let mut by_outlet: BTreeMap<String, u64> = BTreeMap::new();
    let (mut hubs, mut credited) = (0, 0);
    for p in &pages {
        let url = crawler::Url::parse(p["url"].as_str().unwrap_or_default()).expect("page URL");
        let host = url.host_str().unwrap_or_default();
        let media = p["media"].as_str().unwrap_or_default();
        let from_host = p["media_from_host"].as_bool().unwrap_or(false);
        *by_media.entry(media.to_string()).or_default() += 1;
        let outlet = p["outlet"].as_str().unwrap_or_default();
        *by_outlet.entry(outlet.to_string()).or_default() += 1;
        let outlet_ok = match by_path.get(url.path()) {
            Some(a) => outlet == newssite::outlet_name(&a.host),
            None => outlet == host,
        };
        if !outlet_ok {
            wrong.push(format!("{} outlet {outlet:?}", url.path()));
        }
        let ok = match by_path.get(url.path()) {
            Some(a) => {
                let outlet = newssite::outlet_name(&a.host);
                let text = format!("{}\n{}", a.subtitle, a.text);
                let agency = AGENCIES.contains(&media) && credits(&text, media);
                credited += u64::from(agency);
                !from_host && (media == outlet || agency)
            }
            // The root, an outlet's page and its day pages name no outlet.
            None => {
                hubs += 1;
                from_host && media == host
            }
        };
        if !ok {
            wrong.push(format!(
                "{} media {media:?} (from host: {from_host})",
                url.path()
            ));
        }
    }
    assert!(hubs > 0 && hubs < pages.len(), "{hubs} hub pages");
    assert!(
        wrong.is_empty(),
        "{} of {} pages are not named by their outlet or host:\n{}\nmedia: {by_media:?}",
        wrong.len(),
        pages.len(),
        wrong.join("\n")
    );
    // Nine outlets, the host, and the agencies credited.
    assert!(by_media.len() <= 10 + AGENCIES.len(), "media: {by_media:?}");
    assert_eq!(by_outlet.len(), 10, "outlets: {by_outlet:?}");

    // The chart's series by outlet: the same ten names and counts.
    let stats = util::run_harvest(&[
        "-c",
        config.to_str().expect("utf-8 path"),
        "stats",
        "--from",
        "1990-01-01",
        "--to",
        "2100-01-01",
        "--interval",
        "year",
        "--group-by",
        "outlet",
        "--format",
        "json",
    ]);
    let stats: serde_json::Value = serde_json::from_slice(&stats.stdout).expect("stats JSON");
    let mut series: BTreeMap<String, u64> = BTreeMap::new();
    for row in stats.as_array().expect("stats rows") {
        *series
            .entry(row["group"].as_str().unwrap_or_default().to_string())
            .or_default() += row["count"].as_u64().unwrap_or_default();
    }
    assert_eq!(series, by_outlet, "stats --group-by outlet vs the pages");
    eprintln!(
        "news demo: {} pages, {hubs} hub pages named by their host, {credited} credited to an agency; media {by_media:?}; outlets {by_outlet:?}",
        pages.len()
    );
}
