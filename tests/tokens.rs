//! One segmentation of a page's text, read by every consumer of its words
//! (`tokens::Tokens`, made by the extractor as `Extracted::tokens`): the
//! outputs are those of segmenting the text once per consumer, as before.
//!
//! On real pages: the `--zh-reposts` site of `harvest bench neardup` (every
//! People's Daily 1998-01 article of 250 characters or more and its two
//! reposts, 6,898 pages), the English repost site built the same way from
//! NewsArticles.csv (a sample of 600 stories), and the demo site's 377
//! LibreOffice help pages (Chinese with English names, numbers and code:
//! many mixed runs). For every page:
//!
//! - the fingerprint (`ingest::fingerprint`, from the tokens) equals
//!   `classifier::simhash::simhash` of the main text (FINGERPRINT_VERSION
//!   unchanged);
//! - the classifier's tokens (`ingest::classifier_tokens`) equal
//!   `tokenize("{title}\n{first CLASSIFY_CHARS characters}")`, and also with
//!   cuts of 200 and 1,000 characters (a cut inside a line);
//! - the keywords equal jieba's TF-IDF (`jieba_rs::TfIdf`, default IDF table)
//!   over the first 50,000 characters, numbers dropped, as the extractor
//!   computed them before (English pages: term frequency, unchanged code).
//!
//! The corpora come from `deploy/data/fetch-neardup.sh`; the test fails
//! pointing at it when they are missing.

// The benchmarks' repost fixture generator (`harvest-bench`), compiled into
// this test as source: its pages are this crate's `harvest::site::SiteFiles`.
#[path = "../bench/src/reposts.rs"]
#[allow(dead_code)]
mod reposts;

use std::path::PathBuf;

use harvest::site::{SiteFiles, DEMO_SITE};
use reposts::Story;

fn cache() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("deploy/cache");
    for f in ["NewsArticles.csv", "199801.txt"] {
        assert!(
            dir.join(f).exists(),
            "{} is missing: run deploy/data/fetch-neardup.sh",
            dir.join(f).display()
        );
    }
    dir
}

/// The HTML pages of a site, sorted by path, as (url, html).
fn pages(files: &SiteFiles, host: &str) -> Vec<(String, String)> {
    let mut paths: Vec<&str> = files.html_paths().collect();
    paths.sort_unstable();
    paths
        .into_iter()
        .filter_map(|p| {
            let html = String::from_utf8_lossy(files.get(p)?).into_owned();
            Some((format!("http://{host}/{}", p.trim_start_matches('/')), html))
        })
        .collect()
}

/// Keywords as the extractor computed them before the shared segmentation:
/// jieba's own TF-IDF over the first 50,000 characters, numbers dropped.
fn reference_keywords(text: &str, chinese: bool) -> Vec<String> {
    use jieba_rs::KeywordExtract;
    static TFIDF: std::sync::LazyLock<jieba_rs::TfIdf> =
        std::sync::LazyLock::new(jieba_rs::TfIdf::default);
    if !chinese {
        return extract::keywords(text, false);
    }
    let text: String = text.chars().take(50_000).collect();
    let n = extract::KEYWORD_COUNT;
    TFIDF
        .extract_keywords(tokens::jieba(), &text, n * 3, Vec::new())
        .into_iter()
        .map(|k| k.keyword)
        .filter(|k| {
            !k.chars()
                .all(|c| c.is_ascii_digit() || c.is_ascii_punctuation())
        })
        .take(n)
        .collect()
}

/// What one page's check found.
#[derive(Default)]
struct Tally {
    pages: usize,
    chinese: usize,
    fingerprinted: usize,
    tokens: usize,
    keywords: usize,
}

/// Checks every page (on two threads); returns the tally.
fn check(name: &str, pages: &[(String, String)]) -> Tally {
    let half = pages.len().div_ceil(2).max(1);
    let tallies: Vec<Tally> = std::thread::scope(|s| {
        let handles: Vec<_> = pages
            .chunks(half)
            .map(|chunk| s.spawn(move || check_chunk(name, chunk)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("check thread"))
            .collect()
    });
    let mut t = Tally::default();
    for x in tallies {
        t.pages += x.pages;
        t.chinese += x.chinese;
        t.fingerprinted += x.fingerprinted;
        t.tokens += x.tokens;
        t.keywords += x.keywords;
    }
    println!(
        "{name}: {} pages ({} Chinese), {} fingerprinted, {} classifier tokens, {} keywords: all as before",
        t.pages, t.chinese, t.fingerprinted, t.tokens, t.keywords
    );
    t
}

fn check_chunk(name: &str, pages: &[(String, String)]) -> Tally {
    let mut t = Tally::default();
    for (url, html) in pages {
        let u = url::Url::parse(url).expect("url");
        let x = extract::extract(html, &u);
        let text = x.main_text();
        let chinese = x.language.as_deref() == Some("zh");
        t.pages += 1;
        t.chinese += usize::from(chinese);
        // Chinese pages: the tokens derived from jieba's cut without HMM (the keywords'
        // words) are those of the classifier's own tokenizer.
        assert_eq!(
            x.tokens,
            tokens::Tokens::new(text),
            "{name}: tokens of {url}"
        );

        let fp = harvest::ingest::fingerprint(&x);
        assert_eq!(
            fp,
            classifier::simhash::simhash(text),
            "{name}: fingerprint of {url}"
        );
        t.fingerprinted += usize::from(fp.is_some());

        let title = x.title.as_deref().unwrap_or("");
        let mut got = Vec::new();
        harvest::ingest::classifier_tokens(&x, &mut |w| got.push(w.to_owned()));
        let before: String = text.chars().take(harvest::ingest::CLASSIFY_CHARS).collect();
        assert_eq!(
            got,
            classifier::tokenize::tokenize(&format!("{title}\n{before}")),
            "{name}: classifier tokens of {url}"
        );
        t.tokens += got.len();
        for cut in [200, 1_000] {
            let mut got = Vec::new();
            x.tokens
                .for_each_in_prefix(text, cut, |w| got.push(w.to_owned()));
            let before: String = text.chars().take(cut).collect();
            assert_eq!(
                got,
                classifier::tokenize::tokenize(&before),
                "{name}: tokens of the first {cut} characters of {url}"
            );
        }

        assert_eq!(
            x.keywords,
            reference_keywords(text, chinese),
            "{name}: keywords of {url}"
        );
        t.keywords += x.keywords.len();
    }
    t
}

#[test]
fn chinese_repost_site_keeps_its_fingerprints_tokens_and_keywords() {
    let stories = reposts::chinese_stories(&cache().join("199801.txt"), 250).expect("199801");
    let (files, _) = reposts::repost_site(&stories, 3, 1998);
    let t = check("zh reposts", &pages(&files, "127.0.0.1"));
    // The bench's site: every page, most of them Chinese articles.
    assert_eq!(t.pages, 6_898);
    assert!(
        t.chinese > 6_800 && t.fingerprinted > 6_800,
        "{}",
        t.chinese
    );
}

#[test]
fn english_repost_site_keeps_its_fingerprints_tokens_and_keywords() {
    let en = reposts::english_stories(&cache().join("NewsArticles.csv"), 120).expect("english");
    let step = (en.len() / 600).max(1);
    let stories: Vec<Story> = en.into_iter().step_by(step).take(600).collect();
    let (files, _) = reposts::repost_site(&stories, 3, 7);
    let t = check("en reposts", &pages(&files, "127.0.0.1"));
    assert!(t.pages >= 1_800 && t.fingerprinted >= 1_700, "{}", t.pages);
}

#[test]
fn demo_site_keeps_its_fingerprints_tokens_and_keywords() {
    let files = SiteFiles::from_tar_gz(DEMO_SITE).expect("demo site");
    let t = check("demo (LibreOffice help zh-CN)", &pages(&files, "127.0.0.1"));
    assert!(
        t.pages >= 377 && t.chinese >= 300,
        "{} {}",
        t.pages,
        t.chinese
    );
}
