//! `harvest bench extract`: title, publish time (minute and day), author and
//! media accuracy of harvest's extraction, and how much of the article text
//! it finds, beside trafilatura's on the same pages in the same run.
//!
//! Dev set (`--set dev`, the default): the newspaper4k 0.9.6 test pages that
//! have expected metadata (`deploy/data/fetch-extract-devset.sh`: 20 pages,
//! title and publish_date; media from `meta_site_name` where set) and
//! harvest's own labelled pages (`extract/tests/fixtures/pages/labels.json`:
//! Chinese date/title/media patterns and bad input). The rules were built on
//! these pages.
//!
//! Held-out sets (`--set heldout`; `deploy/data/fetch-extract-heldout.sh`):
//! real pages labelled by other projects (or by us, by hand), which the rules
//! were not built on.
//! - `htmldate`: go-htmldate v1.10.1's comparison pages (799 German/English
//!   news and blog pages, `data-default.go`) and its mediacloud pages (200, many
//!   languages, `data-mediacloud.go`): URL and publish day (`nan` = the page
//!   has none). Both extractors get the URL (a date in it is a real source).
//! - `readability`: go-readability v2.1.3's test pages from real sites (the
//!   hand-written unit-test pages of [`READABILITY_SYNTHETIC`] left out): the
//!   title, byline, siteName and publishedTime Readability.js is expected to
//!   find. The pages carry no URL: both get Readability's test URL
//!   [`READABILITY_URL`].
//! - `gne`: the 62 real pages of Chinese news portals (163, Sina, Toutiao,
//!   The Paper, ifeng, Tencent, People's Daily, Xinhua, ...) that the PyPI
//!   sdist of GeneralNewsExtractor 0.4.3 ships as its test pages, labelled by
//!   us by reading each page (`bench/data/gne-labels.tsv`: the headline
//!   without a site suffix, the publish time as the page shows it in Beijing
//!   time, the named source media and the byline), without running an
//!   extractor on them. No URL was saved with them: both get
//!   [`READABILITY_URL`].
//! - `twnews`: the 20 sample pages of the PyPI wheels of twnews 0.1.6, 0.2.4
//!   and 0.3.3 (seven Taiwanese news sites: Apple Daily, China Times, CNA,
//!   ETtoday, Liberty Times, SETN, UDN; eight articles, most saved again by
//!   each version in the site's layout of the day), labelled by the
//!   version's own tests (`tests/soup/test_soup_<site>.py`: the headline, the
//!   publish time to the minute, the author), copied into
//!   `bench/data/twnews-labels.tsv` with each page's canonical URL. Added on
//!   2026-12-04 and first run with the rules of that day: no rule was built
//!   on them before.
//!
//! The fetch time given to the extractor (relative times count back from it,
//! later times are rejected) is the release time of the module the pages came
//! from: every page was saved before it. Only times the extractor found count;
//! a page without one is a miss, never the fetch time.
//!
//! Each held-out set is cut in two halves by a hash of the page's name
//! ([`Half::of`]): rules may be developed on the `develop` half (its mistakes
//! are listed); the `untouched` half is only counted, never listed, and is the
//! held-out figure.
//!
//! A time metric counts the pages labelled with a time; a page labelled "no
//! date" must get none. Minute: the labelled time has a time of day and the
//! extracted one is the same to the minute (in the page's own offset when the
//! label has none). Day: the same calendar day as the label, in the label's
//! offset (or the page's, when it has none); a page with no answer is a miss
//! (wrong days and missing ones are also counted apart). Author: the byline
//! label and the answer, lowercased, without a leading `By`, equal or one
//! containing the other (Readability's bylines often carry a date or a role).
//!
//! Article text: on the pages that come with the text another extractor is
//! expected to find (the newspaper4k pages' `txt/`, the text newspaper4k's
//! tests expect; Readability's `expected.html`), the precision, recall and F1
//! of the answer's tokens against it, as bags ([`text_overlap`]: words, and
//! each character of Chinese, Japanese, Thai...), averaged over the pages.
//! Those texts are another extractor's output checked by its authors, not
//! hand-cut articles: agreement with them, not truth. harvest's answer is
//! [`extract::Extracted::article_text`] (empty where it finds no
//! article), trafilatura's its main text without comments.
//!
//! Chinese article text, on gne's pages: snippets written by reading each
//! page's source with no extractor run on it (`bench/data/gne-text-labels.tsv`,
//! the way trafilatura's own evaluation is built): from the story's first and
//! last paragraphs (must be in the answer) and from one or two boilerplate
//! regions (must not be: another story's headline in a link list, a menu, a
//! comment, the footer). Counted over the pages: story snippets found,
//! boilerplate snippets held, and their F1. Spaces are ignored.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use chrono::{DateTime, NaiveDate, NaiveDateTime, NaiveTime, Utc};
use extract::{extract_with, PublishedFrom, TimeContext};
use serde_json::Value;

use crate::cli::{BenchArgs, ExtractSet};

/// The peer program, relative to the repository root.
const PEER_SCRIPT: &str = "deploy/bench/extract_peer.py";

/// go-htmldate v1.10.1's release time (its module's `.info`): the fetch time
/// of its pages.
const HTMLDATE_RELEASED: &str = "2026-09-14T15:29:37Z";
/// go-readability v2.1.3's release time: the fetch time of its pages.
const READABILITY_RELEASED: &str = "2026-09-30T18:53:19Z";
/// The URL Readability.js's test harness gives every test page (the pages
/// carry none of their own).
pub const READABILITY_URL: &str = "http://fakehost/test/page.html";
/// go-readability's test pages that are not pages of a real site: markup of
/// a few KB written by hand for one cleaning or metadata rule ("Lorem ipsum"
/// text, titles like "Base URL test"). Left out of the held-out set.
pub const READABILITY_SYNTHETIC: &[&str] = &[
    "003-metadata-preferred",
    "004-metadata-space-separated-properties",
    "base-url",
    "base-url-base-element",
    "base-url-base-element-relative",
    "basic-tags-cleaning",
    "comment-inside-script-parsing",
    "data-url-image",
    "dev418",
    "embedded-videos",
    "hidden-nodes",
    "invalid-attributes",
    "js-link-replacement",
    "keep-images-2",
    "lazy-image-3",
    "metadata-content-missing",
    "missing-paragraphs",
    "normalize-spaces",
    "ol",
    "parsely-metadata",
    "remove-aria-hidden",
    "remove-extra-brs",
    "remove-extra-paragraphs",
    "remove-script-tags",
    "reordering-paragraphs",
    "replace-brs",
    "replace-font-tags",
    "rtl-1",
    "rtl-2",
    "rtl-3",
    "rtl-4",
    "social-buttons",
    "style-tags-removal",
    "svg-parsing",
    "title-and-h1-discrepancy",
    "title-en-dash",
    "visibility-hidden",
];
/// go-readability v2.1.3's test pages with both `source.html` and
/// `expected-metadata.json` (what the fetch script checks).
const READABILITY_PAGES: usize = 134;

/// A labelled publish time.
#[derive(Debug, Clone)]
enum Label {
    /// No label: not counted.
    Unknown,
    /// The page has no publish time: the right answer is none.
    None,
    /// With its offset, or naive (page-local); with or without a time of day.
    Time {
        local: NaiveDateTime,
        offset: Option<chrono::FixedOffset>,
        has_time: bool,
    },
}

/// Which half of a held-out set a page is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Half {
    /// Rules may be developed on it: its mistakes are listed.
    Develop,
    /// Only counted: the held-out figure.
    Untouched,
}

impl Half {
    /// By the FNV-1a hash of the page's name (`set/file`): odd = develop.
    fn of(name: &str) -> Half {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in name.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        if h & 1 == 1 {
            Half::Develop
        } else {
            Half::Untouched
        }
    }
}

#[derive(Debug, Clone)]
struct Page {
    name: String,
    path: PathBuf,
    url: String,
    fetched: DateTime<Utc>,
    title: Option<Option<String>>,
    published: Label,
    author: Option<String>,
    media: Option<String>,
    /// The article text another extractor is expected to find (newspaper4k's
    /// `txt`, Readability's `expected.html`).
    text: Option<String>,
    /// Snippets the article text must and must not hold (gne's pages).
    snippets: Option<Snippets>,
    /// `None` on the dev set.
    half: Option<Half>,
}

/// A page's article-text snippets (`bench/data/gne-text-labels.tsv`): from
/// the story's first and last paragraphs, and from boilerplate beside it.
#[derive(Debug, Clone, Default)]
struct Snippets {
    with: Vec<String>,
    without: Vec<String>,
}

/// One system's answers for a page.
#[derive(Debug, Clone, Default)]
struct Answer {
    title: Option<String>,
    /// Page-local time as the system states it (naive), and the UTC instant
    /// when the system knows it.
    local: Option<NaiveDateTime>,
    utc: Option<DateTime<Utc>>,
    /// Where harvest found the time (`meta`, `text`, ...), shown with a
    /// wrong one.
    from: Option<&'static str>,
    author: Option<String>,
    media: Option<String>,
    /// The main text.
    text: Option<String>,
}

#[derive(Debug, Default, Clone, Copy)]
struct Tally {
    right: u64,
    total: u64,
}

impl Tally {
    fn add(&mut self, ok: bool) {
        self.total += 1;
        self.right += u64::from(ok);
    }

    fn show(&self) -> String {
        if self.total == 0 {
            return "-".into();
        }
        format!(
            "{}/{} = {:.1}%",
            self.right,
            self.total,
            100.0 * self.right as f64 / self.total as f64
        )
    }
}

fn parse_label(v: Option<&Value>) -> Label {
    let Some(v) = v else { return Label::Unknown };
    let Some(s) = v.as_str() else {
        return if v.is_null() {
            Label::None
        } else {
            Label::Unknown
        };
    };
    let s = s.trim();
    if let Ok(d) = DateTime::parse_from_rfc3339(s) {
        let has_time = d.time() != NaiveTime::MIN;
        return Label::Time {
            local: d.naive_local(),
            offset: Some(*d.offset()),
            has_time,
        };
    }
    for f in [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%d %H:%M",
    ] {
        if let Ok(n) = NaiveDateTime::parse_from_str(s, f) {
            return Label::Time {
                local: n,
                offset: None,
                has_time: n.time() != NaiveTime::MIN,
            };
        }
    }
    if let Ok(d) = NaiveDate::parse_from_str(s, "%Y-%m-%d") {
        return Label::Time {
            local: d.and_time(NaiveTime::MIN),
            offset: None,
            has_time: false,
        };
    }
    Label::Unknown
}

fn text(v: &Value, k: &str) -> Option<String> {
    v.get(k)
        .and_then(Value::as_str)
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// The newspaper4k pages with expected metadata.
fn newspaper_pages(dir: &Path, fetched: DateTime<Utc>) -> Result<Vec<Page>> {
    let meta_dir = dir.join("metadata");
    let mut names: Vec<PathBuf> = std::fs::read_dir(&meta_dir)
        .with_context(|| {
            format!(
                "{} missing: run deploy/data/fetch-extract-devset.sh",
                meta_dir.display()
            )
        })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    names.sort();
    let mut pages = Vec::new();
    for m in names {
        let stem = m
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default()
            .to_string();
        let html = dir.join("html").join(format!("{stem}.html"));
        if !html.exists() {
            continue;
        }
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&m)?)
            .with_context(|| format!("{}", m.display()))?;
        pages.push(Page {
            name: format!("newspaper4k/{stem}"),
            path: html,
            // One page has no URL in its metadata.
            url: text(&v, "url").unwrap_or_else(|| format!("http://{stem}.invalid/")),
            fetched,
            title: Some(text(&v, "title")),
            // newspaper4k leaves publish_date empty where it found none: not a
            // label that the page has none.
            published: match v.get("publish_date") {
                Some(Value::Null) | None => Label::Unknown,
                other => parse_label(other),
            },
            author: None,
            media: text(&v, "meta_site_name"),
            text: read_if_there(&dir.join("txt").join(format!("{stem}.txt")))?,
            snippets: None,
            half: None,
        });
    }
    if pages.len() < 20 {
        bail!(
            "{}: {} labelled pages, expected 20 (run deploy/data/fetch-extract-devset.sh)",
            dir.display(),
            pages.len()
        );
    }
    Ok(pages)
}

/// harvest's own labelled pages.
fn fixture_pages(dir: &Path) -> Result<Vec<Page>> {
    let path = dir.join("labels.json");
    let labels: Vec<Value> = serde_json::from_str(
        &std::fs::read_to_string(&path).with_context(|| format!("{}", path.display()))?,
    )?;
    labels
        .iter()
        .map(|l| {
            let file = text(l, "file").context("label without file")?;
            let fetched = text(l, "fetched")
                .and_then(|f| DateTime::parse_from_rfc3339(&f).ok())
                .context("label without fetched")?
                .with_timezone(&Utc);
            Ok(Page {
                name: format!("fixtures/{file}"),
                path: dir.join(&file),
                url: text(l, "url").context("label without url")?,
                fetched,
                title: l.get("title").map(|_| text(l, "title")),
                published: parse_label(l.get("published")),
                author: text(l, "author"),
                media: text(l, "media"),
                text: None,
                snippets: None,
                half: None,
            })
        })
        .collect()
}

/// One entry of go-htmldate's comparison data: `{URL: "…", File: "…", Date:
/// "…", …}` Go struct literals, one field a line.
#[derive(Debug, Default, Clone, PartialEq)]
struct GoEntry {
    url: String,
    file: String,
    date: String,
}

/// The entries of a go-htmldate `data-*.go` file.
fn go_entries(src: &str) -> Result<Vec<GoEntry>> {
    let mut out: Vec<GoEntry> = Vec::new();
    for (n, line) in src.lines().enumerate() {
        let Some((key, rest)) = line.trim().split_once(':') else {
            continue;
        };
        if !matches!(key, "URL" | "File" | "Date") {
            continue;
        }
        let rest = rest.trim().trim_end_matches(',');
        let value = rest
            .strip_prefix('"')
            .and_then(|r| r.strip_suffix('"'))
            .with_context(|| format!("line {}: {key} is not a string: {rest}", n + 1))?
            .replace("\\\"", "\"")
            .replace("\\\\", "\\");
        match key {
            "URL" => out.push(GoEntry {
                url: value,
                ..GoEntry::default()
            }),
            _ => {
                let e = out
                    .last_mut()
                    .with_context(|| format!("line {}: {key} before URL", n + 1))?;
                if key == "File" {
                    e.file = value;
                } else {
                    e.date = value;
                }
            }
        }
    }
    if let Some(e) = out.iter().find(|e| e.file.is_empty() || e.date.is_empty()) {
        bail!("entry {} without File or Date", e.url);
    }
    Ok(out)
}

/// go-htmldate's pages labelled in `data_file` (`data-default.go` or
/// `data-mediacloud.go`), named `{set}/{file}`; a file listed twice once.
fn htmldate_pages(dir: &Path, data_file: &str, set: &str, expect: usize) -> Result<Vec<Page>> {
    let root = dir.join("htmldate");
    let data = root.join(data_file);
    let src = std::fs::read_to_string(&data).with_context(|| {
        format!(
            "{} missing: run deploy/data/fetch-extract-heldout.sh",
            data.display()
        )
    })?;
    let fetched = DateTime::parse_from_rfc3339(HTMLDATE_RELEASED)?.with_timezone(&Utc);
    let mut seen = HashSet::new();
    let mut pages = Vec::new();
    for e in go_entries(&src).with_context(|| format!("{}", data.display()))? {
        if !seen.insert(e.file.clone()) {
            continue;
        }
        // Where go-htmldate's comparison program looks, in its order.
        let path = ["mediacloud", "comparison", "mock"]
            .iter()
            .map(|d| root.join(d).join(&e.file))
            .find(|p| p.is_file())
            .with_context(|| format!("{}: {} not found", data.display(), e.file))?;
        let published = if e.date == "nan" {
            Label::None
        } else {
            match parse_label(Some(&Value::String(e.date.clone()))) {
                Label::Unknown => bail!("{}: {}: date {:?}", data.display(), e.file, e.date),
                l => l,
            }
        };
        let name = format!("{set}/{}", e.file);
        pages.push(Page {
            half: Some(Half::of(&name)),
            name,
            path,
            url: e.url,
            fetched,
            title: None,
            published,
            author: None,
            media: None,
            text: None,
            snippets: None,
        });
    }
    if pages.len() != expect {
        bail!(
            "{}: {} pages, expected {expect} (run deploy/data/fetch-extract-heldout.sh)",
            data.display(),
            pages.len()
        );
    }
    Ok(pages)
}

/// The rows of a labels TSV of `bench/data` (`name`), its header starting
/// with the `header` columns, each row with at least as many fields.
fn label_rows(text: &'static str, name: &str, header: &str) -> Result<Vec<Vec<&'static str>>> {
    let mut lines = text.lines();
    let first = lines.next().unwrap_or_default();
    if !first.starts_with(header) {
        bail!("bench/data/{name}: unexpected header {first:?}");
    }
    let want = header.split('\t').count();
    let mut rows = Vec::new();
    for (n, line) in lines.enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let f: Vec<&str> = line.split('\t').collect();
        if f.len() < want {
            bail!("bench/data/{name} line {}: {} fields", n + 2, f.len());
        }
        rows.push(f);
    }
    Ok(rows)
}

/// The labels of the gne pages (see the module documentation).
const GNE_LABELS: &str = include_str!("../data/gne-labels.tsv");
/// Article-text snippets of the gne pages, written by reading each page's
/// source, no extractor run on it: from the story's first and last
/// paragraphs, and from one or two boilerplate regions (another story's
/// headline in a link list, a menu, a comment, the footer).
const GNE_TEXT_LABELS: &str = include_str!("../data/gne-text-labels.tsv");

/// The snippets of `tsv` by page file; a page labelled with no snippet
/// (no article) is left out.
fn gne_snippets(tsv: &'static str) -> Result<std::collections::HashMap<&'static str, Snippets>> {
    let mut out = std::collections::HashMap::new();
    for f in label_rows(
        tsv,
        "gne-text-labels.tsv",
        "file\twith_first\twith_last\twithout_1\twithout_2",
    )? {
        let field = |i: usize| {
            f.get(i)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        let s = Snippets {
            with: [field(1), field(2)].into_iter().flatten().collect(),
            without: [field(3), field(4)].into_iter().flatten().collect(),
        };
        if s.with.is_empty() && s.without.is_empty() {
            continue;
        }
        if out.insert(f[0], s).is_some() {
            bail!("bench/data/gne-text-labels.tsv: {} twice", f[0]);
        }
    }
    Ok(out)
}
/// Pages in the gne sdist's `tests/` (what the fetch script checks).
const GNE_PAGES: usize = 62;
/// The fetch time of the gne pages: the date of gne 0.4.1 in its changelog
/// (0.4.3 came later; the pages were saved in 2019 and 2020, the WeChat ones
/// in February 2020, so every page was saved before it).
const GNE_SAVED: &str = "2026-03-02T00:00:00Z";

/// The gne sdist's test pages with our labels: one TSV line a page (`file`,
/// `kind`, `title`, `published`, `media`, `author`, `where`); `published` is
/// a local time, `none` (the page states none) or `relative:...` (only a
/// relative time: not counted); an empty field is no label.
fn gne_pages(dir: &Path) -> Result<Vec<Page>> {
    let root = dir.join("gne");
    let fetched = DateTime::parse_from_rfc3339(GNE_SAVED)?.with_timezone(&Utc);
    let mut snippets = gne_snippets(GNE_TEXT_LABELS)?;
    let mut pages = Vec::new();
    for f in label_rows(
        GNE_LABELS,
        "gne-labels.tsv",
        "file\tkind\ttitle\tpublished\tmedia\tauthor",
    )? {
        let file = f[0].strip_prefix("tests/").unwrap_or(f[0]);
        let path = root.join(file);
        if !path.is_file() {
            bail!(
                "{} missing: run deploy/data/fetch-extract-heldout.sh",
                path.display()
            );
        }
        let field = |i: usize| Some(f[i].trim().to_string()).filter(|s| !s.is_empty());
        let published = match f[3].trim() {
            "none" => Label::None,
            p if p.is_empty() || p.starts_with("relative:") => Label::Unknown,
            p => match parse_label(Some(&Value::String(p.to_string()))) {
                Label::Unknown => bail!("bench/data/gne-labels.tsv: {file}: time {p:?}"),
                l => l,
            },
        };
        let name = format!("gne/{file}");
        pages.push(Page {
            half: Some(Half::of(&name)),
            name,
            path,
            url: READABILITY_URL.to_string(),
            fetched,
            title: field(2).map(Some),
            published,
            author: field(5),
            media: field(4),
            text: None,
            snippets: snippets.remove(file),
        });
    }
    if pages.len() != GNE_PAGES {
        bail!(
            "bench/data/gne-labels.tsv: {} pages, expected {GNE_PAGES}",
            pages.len()
        );
    }
    if let Some(file) = snippets.keys().next() {
        bail!("bench/data/gne-text-labels.tsv: {file} is no page of gne-labels.tsv");
    }
    Ok(pages)
}

/// The labels of the twnews pages (see the module documentation).
const TWNEWS_LABELS: &str = include_str!("../data/twnews-labels.tsv");
/// Pages of the three twnews wheels (what the fetch script checks).
const TWNEWS_PAGES: usize = 20;
/// Upload times of the twnews wheels on PyPI: each version's pages were
/// saved before it.
const TWNEWS_RELEASED: [(&str, &str); 3] = [
    ("0.1.6", "2018-10-30T19:48:31Z"),
    ("0.2.4", "2018-12-12T06:24:10Z"),
    ("0.3.3", "2019-08-14T04:43:18Z"),
];

/// The twnews wheels' sample pages with the labels of their tests: one TSV
/// line a page (`file`, `title`, `published` (Taiwan's local time, to the
/// minute), `author`, `url`, `where`); an empty field is no label.
fn twnews_pages(dir: &Path) -> Result<Vec<Page>> {
    let root = dir.join("twnews");
    let mut pages = Vec::new();
    for f in label_rows(
        TWNEWS_LABELS,
        "twnews-labels.tsv",
        "file\ttitle\tpublished\tauthor\turl",
    )? {
        let file = f[0];
        let path = root.join(file);
        if !path.is_file() {
            bail!(
                "{} missing: run deploy/data/fetch-extract-heldout.sh",
                path.display()
            );
        }
        let version = file.split('/').next().unwrap_or_default();
        let Some((_, saved)) = TWNEWS_RELEASED.iter().find(|(v, _)| *v == version) else {
            bail!("bench/data/twnews-labels.tsv: {file}: unknown version");
        };
        let fetched = DateTime::parse_from_rfc3339(saved)?.with_timezone(&Utc);
        let field = |i: usize| Some(f[i].trim().to_string()).filter(|s| !s.is_empty());
        let published = match parse_label(Some(&Value::String(f[2].trim().to_string()))) {
            Label::Unknown => bail!("bench/data/twnews-labels.tsv: {file}: time {:?}", f[2]),
            l => l,
        };
        let name = format!("twnews/{file}");
        pages.push(Page {
            half: Some(Half::of(&name)),
            name,
            path,
            url: f[4].trim().to_string(),
            fetched,
            title: field(1).map(Some),
            published,
            author: field(3),
            media: None,
            text: None,
            snippets: None,
        });
    }
    if pages.len() != TWNEWS_PAGES {
        bail!(
            "bench/data/twnews-labels.tsv: {} pages, expected {TWNEWS_PAGES}",
            pages.len()
        );
    }
    Ok(pages)
}

/// go-readability's test pages from real sites.
fn readability_pages(dir: &Path) -> Result<Vec<Page>> {
    let root = dir.join("readability");
    let fetched = DateTime::parse_from_rfc3339(READABILITY_RELEASED)?.with_timezone(&Utc);
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .with_context(|| {
            format!(
                "{} missing: run deploy/data/fetch-extract-heldout.sh",
                root.display()
            )
        })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("source.html").is_file() && p.join("expected-metadata.json").is_file())
        .collect();
    dirs.sort();
    if dirs.len() != READABILITY_PAGES {
        bail!(
            "{}: {} pages, expected {READABILITY_PAGES} (run deploy/data/fetch-extract-heldout.sh)",
            root.display(),
            dirs.len()
        );
    }
    let mut pages = Vec::new();
    for d in dirs {
        let id = d
            .file_name()
            .and_then(|s| s.to_str())
            .unwrap_or_default()
            .to_string();
        if READABILITY_SYNTHETIC.contains(&id.as_str()) {
            continue;
        }
        let meta = d.join("expected-metadata.json");
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&meta)?)
            .with_context(|| format!("{}", meta.display()))?;
        let name = format!("readability/{id}");
        pages.push(Page {
            half: Some(Half::of(&name)),
            name,
            path: d.join("source.html"),
            url: READABILITY_URL.to_string(),
            fetched,
            // Readability found none: no label that the page has none.
            title: text(&v, "title").map(Some),
            published: match v.get("publishedTime") {
                Some(Value::String(_)) => parse_label(v.get("publishedTime")),
                _ => Label::Unknown,
            },
            author: text(&v, "byline"),
            media: text(&v, "siteName"),
            text: Some(html_text(&std::fs::read_to_string(
                d.join("expected.html"),
            )?)),
            snippets: None,
        });
    }
    Ok(pages)
}

/// The file's text, `None` when there is no such file.
fn read_if_there(path: &Path) -> Result<Option<String>> {
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("{}", path.display())),
    }
}

/// The visible text of an HTML fragment or page.
fn html_text(html: &str) -> String {
    extract::visible_text(&scraper::Html::parse_document(html))
}

/// A character of a script written without spaces between words (Han,
/// kana, Thai, Lao, Myanmar, Khmer): each is a token of its own.
fn unspaced(c: char) -> bool {
    matches!(c as u32,
        0x0E00..=0x0EFF // Thai, Lao
        | 0x1000..=0x109F // Myanmar
        | 0x1780..=0x17FF // Khmer
        | 0x3040..=0x30FF // kana
        | 0x3400..=0x4DBF // Han extension A
        | 0x4E00..=0x9FFF // Han
        | 0xF900..=0xFAFF // Han compatibility
        | 0x20000..=0x2FFFF) // Han extensions B-F
}

/// The text's tokens, counted: lowercased runs of letters and digits, and
/// each character of a script written without spaces.
fn token_bag(text: &str) -> std::collections::HashMap<String, u32> {
    let mut bag = std::collections::HashMap::new();
    let mut word = String::new();
    let flush = |word: &mut String, bag: &mut std::collections::HashMap<String, u32>| {
        if !word.is_empty() {
            *bag.entry(std::mem::take(word)).or_insert(0) += 1;
        }
    };
    for c in text.chars() {
        if unspaced(c) {
            flush(&mut word, &mut bag);
            *bag.entry(c.to_string()).or_insert(0) += 1;
        } else if c.is_alphanumeric() {
            word.extend(c.to_lowercase());
        } else {
            flush(&mut word, &mut bag);
        }
    }
    flush(&mut word, &mut bag);
    bag
}

/// Precision, recall and F1 of the answer's tokens against the expected
/// text's (bags: a token counts as often as it appears in both). No answer
/// scores 0.
fn text_overlap(want: &str, got: &str) -> (f64, f64, f64) {
    let (w, g) = (token_bag(want), token_bag(got));
    let sum =
        |b: &std::collections::HashMap<String, u32>| b.values().map(|&n| f64::from(n)).sum::<f64>();
    let common: f64 = g
        .iter()
        .map(|(t, &n)| f64::from(n.min(w.get(t).copied().unwrap_or(0))))
        .sum();
    let (nw, ng) = (sum(&w), sum(&g));
    if common == 0.0 || nw == 0.0 || ng == 0.0 {
        return (0.0, 0.0, 0.0);
    }
    let (p, r) = (common / ng, common / nw);
    (p, r, 2.0 * p * r / (p + r))
}

fn ours(page: &Page) -> Result<Answer> {
    let bytes = std::fs::read(&page.path)?;
    let decoded = crawler::charset::decode(&bytes, None);
    let url = url::Url::parse(&page.url)?;
    let ctx = TimeContext {
        fetched: page.fetched,
        zone: None,
        hint: None,
    };
    let x = extract_with(&decoded.text, &url, &ctx);
    // Only a time the page gave counts, never the fetch time standing in.
    let found = x.published_from.is_some_and(|f| f != PublishedFrom::Fetch);
    Ok(Answer {
        title: x.title,
        local: x.published_local.filter(|_| found).map(|d| d.naive_local()),
        utc: x.published.filter(|_| found),
        from: x
            .published_from
            .filter(|_| found)
            .map(PublishedFrom::as_str),
        author: x.author,
        media: if x.media_from_host { None } else { x.media },
        text: Some(x.article_text).filter(|t| !t.is_empty()),
    })
}

fn peer(python: &Path, pages: &[Page]) -> Result<(Vec<Answer>, f64)> {
    let input: Vec<Value> = pages
        .iter()
        .map(|p| serde_json::json!({"path": p.path, "url": p.url}))
        .collect();
    let mut child = Command::new(python)
        .arg(PEER_SCRIPT)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("starting {} {PEER_SCRIPT}", python.display()))?;
    {
        let stdin = child.stdin.take().context("peer stdin")?;
        serde_json::to_writer(stdin, &input)?;
    }
    let out = child.wait_with_output()?;
    if !out.status.success() {
        bail!("{PEER_SCRIPT} failed: {}", out.status);
    }
    let answers: Vec<Value> = serde_json::from_slice(&out.stdout).context("peer output")?;
    if answers.len() != pages.len() {
        bail!(
            "{PEER_SCRIPT}: {} answers for {} pages",
            answers.len(),
            pages.len()
        );
    }
    let mut seconds = 0.0;
    let parsed = answers
        .iter()
        .map(|a| {
            seconds += a.get("seconds").and_then(Value::as_f64).unwrap_or(0.0);
            Answer {
                title: text(a, "title"),
                local: text(a, "date")
                    .and_then(|d| NaiveDateTime::parse_from_str(&d, "%Y-%m-%d %H:%M").ok()),
                utc: None,
                from: None,
                author: text(a, "author"),
                media: text(a, "sitename"),
                text: text(a, "text"),
            }
        })
        .collect();
    Ok((parsed, seconds))
}

fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A byline as compared: lowercased, the marks between names (`、`, commas,
/// semicolons) as spaces, spaces squashed, without a leading "by".
fn author_key(s: &str) -> String {
    let s = squash(&s.replace(['、', ',', '，', ';', '；'], " ")).to_lowercase();
    // `X and Y` lists what `X, Y` lists.
    let s = s.replace(" and ", " ");
    s.strip_prefix("by ").map(str::to_string).unwrap_or(s)
}

/// The byline label `want` and the answer `got` name the same author: equal
/// keys, or one (of at least 4 characters) inside the other.
fn author_ok(want: &str, got: &str) -> bool {
    let (w, g) = (author_key(want), author_key(got));
    let inside = |a: &str, b: &str| a.chars().count() >= 4 && b.contains(a);
    !g.is_empty() && (w == g || inside(&g, &w) || inside(&w, &g))
}

/// One row of a table: a name and how to read it from [`Scores`].
type Metric = fn(&Scores) -> String;

/// The title label `want` and the answer `got` are the same headline, a
/// site segment aside: equal with quotes straightened, or one is the other
/// and a segment after (or before) a separator (`… | eHow`, `… - Wikipedia`,
/// `…_光明网`, `… [LWN.net]`). Readability keeps such segments where the
/// headline alone would be short; harvest cuts them.
fn title_core_ok(want: &str, got: &str) -> bool {
    let n = |s: &str| {
        squash(s)
            .replace(['“', '”', '„'], "\"")
            .replace(['‘', '’'], "'")
    };
    let (w, g) = (n(want), n(got));
    if w == g {
        return true;
    }
    let (long, short) = if w.len() > g.len() { (w, g) } else { (g, w) };
    const SEPARATORS: [char; 14] = [
        '|', '-', '–', '—', '_', '·', ':', '[', '(', '«', '»', '/', '（', '【',
    ];
    short.chars().count() >= 4
        && (long
            .strip_prefix(&short)
            .is_some_and(|r| r.trim_start().starts_with(SEPARATORS))
            || long
                .strip_suffix(&short)
                .is_some_and(|r| r.trim_end().ends_with(SEPARATORS)))
}

#[derive(Default)]
struct Scores {
    title: Tally,
    /// [`title_core_ok`].
    title_core: Tally,
    minute: Tally,
    day: Tally,
    /// Labelled with a day, answered with another.
    day_wrong: u64,
    /// Of those, answered with the day before or after (often the same
    /// instant read at another offset).
    day_off_one: u64,
    /// Labelled with a day, no answer.
    day_missing: u64,
    no_date: Tally,
    author: Tally,
    media: Tally,
    text: TextTally,
    snippets: SnippetTally,
}

/// Article-text snippets found and not found, summed over pages (as
/// trafilatura's own evaluation counts them).
#[derive(Debug, Default, Clone, Copy)]
struct SnippetTally {
    /// `with` snippets found.
    found: u64,
    /// `with` snippets missed.
    missed: u64,
    /// `without` snippets in the answer.
    boiler: u64,
    /// `without` snippets not in it.
    clean: u64,
}

impl SnippetTally {
    /// Counts `s` against `answer`; returns the story snippets it misses and
    /// the boilerplate ones it holds. Spaces are ignored on both sides.
    fn add<'a>(&mut self, s: &'a Snippets, answer: &str) -> (Vec<&'a str>, Vec<&'a str>) {
        let answer: String = answer.split_whitespace().collect();
        let has = |snip: &str| answer.contains(&snip.split_whitespace().collect::<String>());
        let missed: Vec<&str> = s
            .with
            .iter()
            .map(String::as_str)
            .filter(|w| !has(w))
            .collect();
        let boiler: Vec<&str> = s
            .without
            .iter()
            .map(String::as_str)
            .filter(|w| has(w))
            .collect();
        self.found += (s.with.len() - missed.len()) as u64;
        self.missed += missed.len() as u64;
        self.boiler += boiler.len() as u64;
        self.clean += (s.without.len() - boiler.len()) as u64;
        (missed, boiler)
    }

    fn show_f1(&self) -> String {
        let tp = self.found as f64;
        if self.found + self.missed == 0 {
            return "-".into();
        }
        let p = tp / (tp + self.boiler as f64);
        let r = tp / (tp + self.missed as f64);
        if tp == 0.0 {
            return "0.000".into();
        }
        format!("{:.3}", 2.0 * p * r / (p + r))
    }

    fn show_counts(&self) -> String {
        if self.found + self.missed == 0 {
            return "-".into();
        }
        format!(
            "{}/{} / {}/{}",
            self.found,
            self.found + self.missed,
            self.boiler,
            self.boiler + self.clean
        )
    }
}

/// Article-text overlap summed over pages ([`text_overlap`]).
#[derive(Debug, Default, Clone, Copy)]
struct TextTally {
    pages: u64,
    precision: f64,
    recall: f64,
    f1: f64,
    /// Pages with an F1 of at least 0.8.
    good: u64,
}

impl TextTally {
    fn add(&mut self, (p, r, f): (f64, f64, f64)) {
        self.pages += 1;
        self.precision += p;
        self.recall += r;
        self.f1 += f;
        self.good += u64::from(f >= 0.8);
    }

    fn mean(&self, v: f64) -> String {
        if self.pages == 0 {
            return "-".into();
        }
        format!("{:.3}", v / self.pages as f64)
    }

    fn show_f1(&self) -> String {
        self.mean(self.f1)
    }

    fn show_pr(&self) -> String {
        if self.pages == 0 {
            return "-".into();
        }
        format!("{} / {}", self.mean(self.precision), self.mean(self.recall))
    }

    fn show_good(&self) -> String {
        Tally {
            right: self.good,
            total: self.pages,
        }
        .show()
    }
}

/// Scores `a` on `page`; returns the mistakes.
fn score(page: &Page, a: &Answer, s: &mut Scores) -> Vec<String> {
    let mut wrong = Vec::new();
    let clip = |t: &Option<String>| {
        t.as_deref().map(|t| {
            let mut c: String = t.chars().take(100).collect();
            if t.chars().count() > 100 {
                c.push('…');
            }
            c
        })
    };
    if let Some(want) = &page.title {
        let ok = want.as_deref().map(squash) == a.title.as_deref().map(squash);
        s.title.add(ok);
        s.title_core.add(match (want, &a.title) {
            (Some(w), Some(g)) => title_core_ok(w, g),
            (w, g) => w.is_none() && g.is_none(),
        });
        if !ok {
            wrong.push(format!(
                "title {:?} (want {:?})",
                clip(&a.title),
                clip(want)
            ));
        }
    }
    match &page.published {
        Label::Unknown => {}
        Label::None => {
            s.no_date.add(a.local.is_none());
            if a.local.is_some() {
                let from = a.from.map(|f| format!(" from {f}")).unwrap_or_default();
                wrong.push(format!("date {:?}{from} (want none)", a.local));
            }
        }
        Label::Time {
            local,
            offset,
            has_time,
        } => {
            // The answer at the label's offset when both know the instant.
            let got = match (offset, a.utc) {
                (Some(o), Some(u)) => Some(u.with_timezone(o).naive_local()),
                _ => a.local,
            };
            let day_ok = got.is_some_and(|g| g.date() == local.date());
            let from = a.from.map(|f| format!(" from {f}")).unwrap_or_default();
            s.day.add(day_ok);
            if got.is_none() {
                s.day_missing += 1;
            } else if !day_ok {
                s.day_wrong += 1;
                let off = got.map(|g| (g.date() - local.date()).num_days().abs());
                s.day_off_one += u64::from(off == Some(1));
            }
            if *has_time {
                let minute = |t: NaiveDateTime| t.format("%Y-%m-%d %H:%M").to_string();
                let ok = got.is_some_and(|g| minute(g) == minute(*local));
                s.minute.add(ok);
                if !ok {
                    wrong.push(format!("time {got:?}{from} (want {local})"));
                }
            } else if !day_ok {
                wrong.push(format!("day {got:?}{from} (want {})", local.date()));
            }
        }
    }
    if let Some(want) = &page.author {
        let ok = a.author.as_deref().is_some_and(|g| author_ok(want, g));
        s.author.add(ok);
        if !ok {
            wrong.push(format!(
                "author {:?} (want {:?})",
                clip(&a.author),
                clip(&Some(want.clone()))
            ));
        }
    }
    if let Some(want) = &page.media {
        let ok = a
            .media
            .as_deref()
            .is_some_and(|m| squash(m).to_lowercase() == squash(want).to_lowercase());
        s.media.add(ok);
        if !ok {
            wrong.push(format!("media {:?} (want {want:?})", a.media));
        }
    }
    if let Some(snips) = &page.snippets {
        let (missed, boiler) = s.snippets.add(snips, a.text.as_deref().unwrap_or_default());
        if !missed.is_empty() || !boiler.is_empty() {
            wrong.push(format!(
                "text misses {missed:?}, holds boilerplate {boiler:?}"
            ));
        }
    }
    if let Some(want) = &page.text {
        let (p, r, f) = text_overlap(want, a.text.as_deref().unwrap_or_default());
        s.text.add((p, r, f));
        if f < 0.8 {
            wrong.push(format!("text F1 {f:.2} (precision {p:.2}, recall {r:.2})"));
        }
    }
    wrong
}

/// harvest's and the peer's answers for `pages`, and their extraction times
/// (the peer's `None` when its Python is missing).
type Answers = (Vec<Answer>, f64, Option<(Vec<Answer>, f64)>);

fn answer_all(args: &BenchArgs, pages: &[Page]) -> Result<Answers> {
    let start = Instant::now();
    let mine: Vec<Answer> = pages
        .iter()
        .map(|p| ours(p).with_context(|| p.name.clone()))
        .collect::<Result<_>>()?;
    let our_secs = start.elapsed().as_secs_f64();
    let theirs = if args.python.exists() {
        Some(peer(&args.python, pages)?)
    } else {
        eprintln!(
            "harvest: {} missing: the trafilatura peer is skipped (deploy/data/setup-peers.sh sets it up)",
            args.python.display()
        );
        None
    };
    Ok((mine, our_secs, theirs))
}

/// Prints a page's mistakes (harvest | trafilatura) when either made one.
fn print_mistakes(name: &str, ours: &[String], theirs: &[String]) {
    if ours.is_empty() && theirs.is_empty() {
        return;
    }
    let show = |w: &[String]| {
        if w.is_empty() {
            "ok".to_string()
        } else {
            w.join("; ")
        }
    };
    println!("  {:<36} {} | {}", name, show(ours), show(theirs));
}

/// Runs the benchmark on the pages `args.set` names and prints the tables.
pub fn run(args: &BenchArgs) -> Result<()> {
    match args.set {
        ExtractSet::Dev => run_dev(args),
        ExtractSet::Heldout => run_heldout(args),
        ExtractSet::All => {
            run_dev(args)?;
            println!();
            run_heldout(args)
        }
    }
}

/// The dev set.
fn run_dev(args: &BenchArgs) -> Result<()> {
    let fetched = Utc::now();
    let mut pages = newspaper_pages(&args.devset, fetched)?;
    pages.extend(fixture_pages(&args.fixtures)?);
    let (mine, our_secs, theirs) = answer_all(args, &pages)?;
    let (mut s_ours, mut s_peer) = (Scores::default(), Scores::default());
    println!("mistakes (harvest | trafilatura):");
    for (i, page) in pages.iter().enumerate() {
        let w_ours = score(page, &mine[i], &mut s_ours);
        let w_peer = theirs
            .as_ref()
            .map(|(t, _)| score(page, &t[i], &mut s_peer))
            .unwrap_or_default();
        print_mistakes(&page.name, &w_ours, &w_peer);
    }
    let newspaper = pages
        .iter()
        .filter(|p| p.name.starts_with("newspaper4k"))
        .count();
    println!(
        "\ndev set: {} pages ({} newspaper4k 0.9.6, {} harvest fixtures)",
        pages.len(),
        newspaper,
        pages.len() - newspaper
    );
    println!(
        "{:<34} {:>22} {:>22}",
        "metric", "harvest", "trafilatura 2.3.1"
    );
    let rows: [(&str, Metric); 9] = [
        ("title", |s| s.title.show()),
        ("publish time (minute)", |s| s.minute.show()),
        ("publish time (day)", |s| s.day.show()),
        ("no date where the page has none", |s| s.no_date.show()),
        ("media (named outlet)", |s| s.media.show()),
        ("author (byline)", |s| s.author.show()),
        ("article text F1 (mean)", |s| s.text.show_f1()),
        ("  precision / recall (mean)", |s| s.text.show_pr()),
        ("  pages with F1 >= 0.8", |s| s.text.show_good()),
    ];
    for (name, get) in rows {
        println!(
            "{:<34} {:>22} {:>22}",
            name,
            get(&s_ours),
            if theirs.is_some() {
                get(&s_peer)
            } else {
                "-".into()
            }
        );
    }
    println!(
        "{:<34} {:>22} {:>22}",
        "extraction time (all pages)",
        format!("{:.3} s", our_secs),
        theirs
            .as_ref()
            .map(|(_, s)| format!("{s:.3} s"))
            .unwrap_or_else(|| "-".into())
    );
    Ok(())
}

/// A held-out set: its pages and what the table says of it.
struct HeldOut {
    title: String,
    pages: Vec<Page>,
}

/// The held-out sets: each page scored, the develop half's mistakes listed,
/// a table a set with both halves.
fn run_heldout(args: &BenchArgs) -> Result<()> {
    let dir = &args.heldout;
    let sets = [
        HeldOut {
            title: "htmldate: go-htmldate v1.10.1 comparison pages (data-default.go), publish day"
                .into(),
            pages: htmldate_pages(dir, "data-default.go", "htmldate", 799)?,
        },
        HeldOut {
            title: "mediacloud: go-htmldate v1.10.1 mediacloud pages (data-mediacloud.go), publish day"
                .into(),
            pages: htmldate_pages(dir, "data-mediacloud.go", "mediacloud", 200)?,
        },
        HeldOut {
            title: format!(
                "readability: go-readability v2.1.3 test pages of real sites ({} hand-written ones left out)",
                READABILITY_SYNTHETIC.len()
            ),
            pages: readability_pages(dir)?,
        },
        HeldOut {
            title: "gne: GeneralNewsExtractor 0.4.3's test pages of Chinese news portals, our labels (publish time in Beijing time)"
                .into(),
            pages: gne_pages(dir)?,
        },
        HeldOut {
            title: "twnews: the sample pages of twnews 0.1.6, 0.2.4 and 0.3.3 (7 Taiwanese news sites, 8 articles, Traditional Chinese), its tests' labels".into(),
            pages: twnews_pages(dir)?,
        },
    ];
    let all: Vec<Page> = sets.iter().flat_map(|s| s.pages.iter().cloned()).collect();
    let (mine, our_secs, theirs) = answer_all(args, &all)?;
    // [set][half][system]
    let mut scores: Vec<[[Scores; 2]; 2]> = sets.iter().map(|_| Default::default()).collect();
    println!("mistakes on the develop halves (harvest | trafilatura):");
    let mut i = 0;
    for (k, set) in sets.iter().enumerate() {
        for page in &set.pages {
            let h = usize::from(page.half == Some(Half::Untouched));
            let [s_ours, s_peer] = &mut scores[k][h];
            let w_ours = score(page, &mine[i], s_ours);
            let w_peer = theirs
                .as_ref()
                .map(|(t, _)| score(page, &t[i], s_peer))
                .unwrap_or_default();
            if page.half == Some(Half::Develop) {
                print_mistakes(&page.name, &w_ours, &w_peer);
            }
            i += 1;
        }
    }
    let rows: [(&str, Metric); 14] = [
        ("title", |s| s.title.show()),
        ("  a site segment aside", |s| s.title_core.show()),
        ("publish time (minute)", |s| s.minute.show()),
        ("publish time (day)", |s| s.day.show()),
        ("  wrong day (±1 day) / no date", |s| {
            if s.day.total == 0 {
                "-".into()
            } else {
                format!("{} ({}) / {}", s.day_wrong, s.day_off_one, s.day_missing)
            }
        }),
        ("no date where the page has none", |s| s.no_date.show()),
        ("author (byline)", |s| s.author.show()),
        ("media (site name)", |s| s.media.show()),
        ("article text F1 (mean)", |s| s.text.show_f1()),
        ("  precision / recall (mean)", |s| s.text.show_pr()),
        ("  pages with F1 >= 0.8", |s| s.text.show_good()),
        ("article text snippets F1", |s| s.snippets.show_f1()),
        ("  story found / boilerplate held", |s| {
            s.snippets.show_counts()
        }),
        ("", |_| String::new()),
    ];
    for (k, set) in sets.iter().enumerate() {
        let count = |h: Half| set.pages.iter().filter(|p| p.half == Some(h)).count();
        println!("\n{}", set.title);
        println!(
            "{:<34} {:>41}   {:>41}",
            "",
            format!("untouched half ({} pages)", count(Half::Untouched)),
            format!("develop half ({} pages)", count(Half::Develop)),
        );
        println!(
            "{:<34} {:>20} {:>20}   {:>20} {:>20}",
            "metric", "harvest", "trafilatura 2.3.1", "harvest", "trafilatura 2.3.1"
        );
        let [dev, untouched] = &scores[k];
        for (name, get) in &rows[..rows.len() - 1] {
            let used = |s: &Scores| {
                s.title.total
                    + s.day.total
                    + s.no_date.total
                    + s.author.total
                    + s.media.total
                    + s.text.pages
                    + s.snippets.found
                    + s.snippets.missed
                    > 0
                    && get(s) != "-"
            };
            if !used(&untouched[0]) && !used(&dev[0]) {
                continue;
            }
            let peer = |s: &Scores| {
                if theirs.is_some() {
                    get(s)
                } else {
                    "-".into()
                }
            };
            println!(
                "{:<34} {:>20} {:>20}   {:>20} {:>20}",
                name,
                get(&untouched[0]),
                peer(&untouched[1]),
                get(&dev[0]),
                peer(&dev[1])
            );
        }
    }
    println!(
        "\n{:<34} {:>20} {:>20}",
        format!("extraction time ({} pages)", all.len()),
        format!("{our_secs:.3} s"),
        theirs
            .as_ref()
            .map(|(_, s)| format!("{s:.3} s"))
            .unwrap_or_else(|| "-".into())
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_entries_reads_the_struct_literals() {
        let src = r#"var data = []comparisonEntry{
	{
		URL:       "https://example.org/2020/a?x=\"y\"",
		File:      "a.html",
		Date:      "2020-06-07",
		Fast:      "2020-06-07",
		Extensive: "2020-06-07",
	}, {
		URL:       "https://example.org/b",
		File:      "b.html",
		Date:      "nan",
		Fast:      "",
		Extensive: "",
	},
}"#;
        let e = go_entries(src).unwrap();
        assert_eq!(
            e,
            vec![
                GoEntry {
                    url: "https://example.org/2020/a?x=\"y\"".into(),
                    file: "a.html".into(),
                    date: "2020-06-07".into()
                },
                GoEntry {
                    url: "https://example.org/b".into(),
                    file: "b.html".into(),
                    date: "nan".into()
                },
            ]
        );
        assert!(go_entries("{\n File: \"a.html\",\n}").is_err());
    }

    #[test]
    fn labels_of_every_shape() {
        let t = |s: &str| parse_label(Some(&Value::String(s.into())));
        assert!(matches!(
            t("2015-07-24T05:36:09+01:00"),
            Label::Time {
                offset: Some(_),
                has_time: true,
                ..
            }
        ));
        assert!(matches!(
            t("2017-11-24T18:42:20.314667"),
            Label::Time {
                offset: None,
                has_time: true,
                ..
            }
        ));
        assert!(matches!(
            t("2018-04-05T06:00"),
            Label::Time {
                offset: None,
                has_time: true,
                ..
            }
        ));
        assert!(matches!(
            t("2024-06-25"),
            Label::Time {
                offset: None,
                has_time: false,
                ..
            }
        ));
        assert!(matches!(t("yesterday"), Label::Unknown));
        assert!(matches!(parse_label(Some(&Value::Null)), Label::None));
    }

    #[test]
    fn bylines_compare_without_by_and_extras() {
        assert!(author_ok("By Erin Cunningham", "Erin Cunningham"));
        assert!(author_ok("余毅菁 向雪妮", "余毅菁、向雪妮"));
        assert!(!author_ok("余毅菁 向雪妮", "余毅菁、王五"));
        assert!(author_ok("by Lucas Nolan22 Dec 2016651", "Lucas Nolan"));
        assert!(!author_ok("Dan Goodin", "Ars Technica"));
        assert!(!author_ok("Dan Goodin", ""));
    }

    #[test]
    fn titles_compare_a_site_segment_aside() {
        assert!(title_core_ok("Mozilla - Wikipedia", "Mozilla"));
        assert!(title_core_ok(
            "How to Build a Terrarium | eHow",
            "How to Build a Terrarium"
        ));
        assert!(title_core_ok(
            "宇航员在太空中喝酒 _探索者 _光明网",
            "宇航员在太空中喝酒"
        ));
        assert!(title_core_ok("LWN.net Weekly [LWN.net]", "LWN.net Weekly"));
        assert!(title_core_ok("Online \"Burned\"", "Online “Burned”"));
        assert!(
            !title_core_ok("standalone binaries · V8", "V8"),
            "the site, not the headline"
        );
        assert!(!title_core_ok("Obama wins", "Obama"));
    }

    #[test]
    fn snippets_count_story_found_and_boilerplate_held() {
        let s = Snippets {
            with: vec!["国务院总理主持".into(), "确保就业 形势稳定".into()],
            without: vec!["版权所有".into(), "相关新闻一".into()],
        };
        let mut t = SnippetTally::default();
        let (missed, boiler) = t.add(&s, "国务院 总理主持召开会议。\n相关新闻一：降准");
        assert_eq!(missed, ["确保就业 形势稳定"]);
        assert_eq!(boiler, ["相关新闻一"]);
        assert_eq!((t.found, t.missed, t.boiler, t.clean), (1, 1, 1, 1));
        assert_eq!(t.show_f1(), "0.500");
        t.add(&s, "");
        assert_eq!(t.show_counts(), "1/4 / 1/4");
    }

    #[test]
    fn token_bags_split_words_and_unspaced_scripts() {
        let (p, r, f) = text_overlap("The cat sat. 中国人", "the CAT, 中国");
        assert!((p - 1.0).abs() < 1e-9, "{p}");
        assert!((r - 4.0 / 6.0).abs() < 1e-9, "{r}");
        assert!((f - 0.8).abs() < 1e-9, "{f}");
        assert_eq!(text_overlap("words here", ""), (0.0, 0.0, 0.0));
    }

    #[test]
    fn halves_are_stable_and_both_used() {
        assert_eq!(Half::of("htmldate/a.html"), Half::of("htmldate/a.html"));
        let develop = (0..1000)
            .filter(|i| Half::of(&format!("set/{i}.html")) == Half::Develop)
            .count();
        assert!((400..600).contains(&develop), "{develop}");
    }
}
