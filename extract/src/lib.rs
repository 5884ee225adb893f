//! Attribute extraction from an HTML page: title, publish time (and where it
//! came from), media source, author, comment and participant counts, visible
//! body text, article text, keywords, language, links.
//!
//! Uses scraper (html5ever), which accepts any input the way browsers do, so
//! malformed markup never fails; every field is best-effort and optional: a
//! missing attribute rather than a wrong one.
//!
//! Parts: [`time`] (publish time candidates and the decision, time zones),
//! [`title`] (headline and site-name stripping), [`media`] (media and author),
//! [`text`] (article text, readability-style).

pub mod budget;
mod fold;
mod lines;
mod lists;
pub mod media;
mod scan;
pub mod text;
pub mod time;
pub mod title;

use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

use chrono::{DateTime, FixedOffset, Utc};
use regex::Regex;
use scraper::{ElementRef, Html, Node};
use serde_json::Value;
use tokens::Tokens;
use url::Url;

pub use budget::{LimitReport, Limits};
use lines::{is_han, push_squashed, squash, BLOCK_ELEMENTS, SKIPPED_ELEMENTS};
pub use scan::EmbedKind;
use shapes::normalize::parse_normalized;
pub use shapes::page::Embed;
pub use time::{page_zone, parse_date, Published, PublishedFrom, TimeContext};
use time::{score, Candidate};

/// Number of keywords extracted per page.
pub const KEYWORD_COUNT: usize = 10;
/// Share of CJK characters above which a page is taken as Chinese.
pub const CJK_SHARE_ZH: f64 = 0.30;
/// At most this many characters of body text go to keyword extraction.
const KEYWORD_TEXT_CHARS: usize = 50_000;

/// Meta names/properties/itemprops that name the publish time.
pub const PUBLISHED_META_KEYS: [&str; 31] = [
    "article:published_time",
    "publishedtime",
    "og:published_time",
    "og:article:published_time",
    "article:published",
    "datepublished",
    "pubdate",
    "publishdate",
    "publish_date",
    "publish-date",
    "publishtime",
    "publish_time",
    "pubtime",
    "parsely-pub-date",
    "sailthru.date",
    "dc.date.issued",
    "dcterms.issued",
    "article.published",
    "og:pubdate",
    "bytedance:published_time",
    "weibo:article:create_at",
    "apub:time",
    "og:release_date",
    "release_date",
    "firstpublishedtime",
    "citation_publication_date",
    "originalpublicationdate",
    "article_date_original",
    "publication_date",
    "date_published",
    "cxenseparse:recs:publishtime",
];

/// Meta keys holding a date that is usually, not surely, the publish time.
pub const DATE_META_KEYS: [&str; 7] = [
    "date",
    "dc.date",
    "dcterms.date",
    "dcterms.created",
    "created",
    "citation_date",
    // schema.org's `dateCreated` (Zhihu's articles, beside `dateModified`).
    "datecreated",
];

/// Meta tags (and microdata) naming when the page was modified: a
/// publish time only when the page states none ([`PublishedFrom::Modified`]).
pub const MODIFIED_META_KEYS: [&str; 9] = [
    "article:modified_time",
    "og:updated_time",
    "og:modified_time",
    "datemodified",
    "dateupdated",
    "dateupdate",
    "dcterms.modified",
    "last-modified",
    "lastmod",
];

/// Attributes holding a comment count directly.
const COMMENT_DATA_ATTRS: [&str; 3] =
    ["data-comments", "data-comment-count", "data-comments-count"];

/// Small English stop-word list for term-frequency keywords.
const STOP_WORDS: [&str; 119] = [
    "the", "and", "for", "are", "but", "not", "you", "all", "any", "can", "had", "her", "was",
    "one", "our", "out", "has", "have", "him", "his", "how", "its", "may", "new", "now", "old",
    "see", "two", "way", "who", "did", "get", "got", "let", "say", "says", "said", "she", "too",
    "use", "that", "with", "this", "from", "they", "will", "would", "there", "their", "what",
    "about", "which", "when", "make", "like", "time", "just", "know", "take", "into", "year",
    "your", "some", "could", "them", "than", "then", "look", "only", "come", "over", "also",
    "back", "after", "first", "well", "even", "want", "because", "these", "give", "most", "were",
    "been", "more", "where", "here", "while", "such", "each", "other", "those", "very", "should",
    "being", "does", "through", "before", "between", "under", "again", "against", "both", "same",
    "during", "without", "within", "upon", "yet", "per", "via", "off", "own", "why", "yes", "http",
    "https", "www", "com",
];

/// The rule that decided one attribute of a page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// `title`, `published`, `media`, `outlet` or `author`.
    pub attribute: &'static str,
    /// The rule's name, then the corrections made to its value; `none` when
    /// no rule gave a value.
    pub rule: String,
}

/// What [`extract`] finds in a page.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Extracted {
    /// The headline: `<h1>` confirmed by `<title>`/`og:title`/JSON-LD, else
    /// `og:title`, JSON-LD `headline`, `<title>` without the site name (see
    /// [`title::choose`]).
    pub title: Option<String>,
    /// Publish time in UTC (see [`time`]): `None` when the page states none
    /// that passes the checks.
    pub published: Option<DateTime<Utc>>,
    /// Where [`Extracted::published`] came from (`None` with it).
    pub published_from: Option<PublishedFrom>,
    /// The publish time at the offset the page stated or was read in.
    pub published_local: Option<DateTime<FixedOffset>>,
    /// Media source: labelled in the text (`来源：新华社`, `Source: AP`), a source element, meta
    /// `source`, a WeChat account, the outlet beside the date, the account a
    /// follow button names under the headline, `og:site_name`, JSON-LD
    /// publisher, `application-name`, the site name a `<title>` ends with,
    /// else the host (then [`Extracted::media_from_host`] is set).
    pub media: Option<String>,
    /// The media is only the host name: the page names no outlet.
    pub media_from_host: bool,
    /// The site that published the page, as it names itself
    /// ([`site_outlet`]): unlike [`Extracted::media`], never the agency or
    /// paper an article credits. `None`: the page names no site (its host
    /// stands for it).
    pub outlet: Option<String>,
    /// Author: JSON-LD `author`, meta `author`, a byline, `作者：`.
    pub author: Option<String>,
    /// Which rule decided each attribute (`harvest reextract --explain URL`), in
    /// the order title, published, media, outlet, author.
    pub decisions: Vec<Decision>,
    /// Comment count when the markup states one.
    pub comments: Option<u64>,
    /// Participant count when the markup states one.
    pub participants: Option<u64>,
    /// Visible text without script/style/nav/footer, one line per block element.
    pub body_text: String,
    /// Main content without navigation, comments and boilerplate (see
    /// [`text::article_text`]); empty when the page has no article.
    pub article_text: String,
    /// Top keywords of [`Extracted::main_text`] (jieba TF-IDF for Chinese,
    /// term frequency otherwise).
    pub keywords: Vec<String>,
    /// The word tokens of [`Extracted::main_text`] (`tokens::Tokens`: jieba words for
    /// Chinese, Unicode words otherwise, lowercased, stop words dropped), segmented once here
    /// for every later reader of the page's words (the topic classifier, the near-duplicate
    /// fingerprint). Empty when the texts are dropped.
    pub tokens: Tokens,
    /// Absolute, normalised http(s) links (`<a href>`, `<area href>`, `<link rel=next>`),
    /// first occurrence order, no duplicates.
    pub links: Vec<String>,
    /// What the page embeds (images, stylesheets, scripts, icons, media):
    /// absolute, normalised http(s) URLs, each once, in document order.
    pub embeds: Vec<Embed>,
    /// `zh` when CJK share is above 30 %, else the `<html lang>` primary subtag,
    /// else `en` for mostly-Latin text.
    pub language: Option<String>,
    /// What the page's budgets ([`Limits`]) did: flattened nesting, a parse
    /// cut at its CPU budget, links dropped. All zero for ordinary pages.
    pub limits: LimitReport,
}

impl Extracted {
    /// The article text, or the whole visible text when no article was found:
    /// the text for keywords, the classifier and near-duplicate detection.
    pub fn main_text(&self) -> &str {
        if self.article_text.is_empty() {
            &self.body_text
        } else {
            &self.article_text
        }
    }
}

fn re(s: &str) -> Regex {
    Regex::new(s).expect("static regex is valid")
}

static RE_COUNT: LazyLock<Regex> =
    LazyLock::new(|| re(r"(\d[\d,]*(?:\.\d+)?)\s*(万|千|[kK]|[wW])?"));
static RE_ZH_COMMENTS: LazyLock<[Regex; 3]> = LazyLock::new(|| {
    [
        re(r"评论\s*[（(\[]\s*(\d[\d,]*(?:\.\d+)?\s*万?)\s*[)）\]]"),
        re(r"(\d[\d,]*(?:\.\d+)?\s*万?)\s*条评论"),
        re(r"评论数\s*[:：]?\s*(\d[\d,]*(?:\.\d+)?\s*万?)"),
    ]
});
static RE_ZH_PARTICIPANTS: LazyLock<[Regex; 2]> = LazyLock::new(|| {
    [
        re(r"参与人数\s*[:：]?\s*(\d[\d,]*(?:\.\d+)?\s*万?)"),
        re(r"(\d[\d,]*(?:\.\d+)?\s*万?)\s*人参与"),
    ]
});

/// An element's text, a `<br>` in it a space (`<h1>长三角一体化发展再提速<br>三省一市签署
/// 合作协议</h1>`: a headline of two clauses the page sets on two lines; `作者：郭轩<br>
/// 责任编辑：王小琳`: a byline's two labels).
fn element_text(e: &ElementRef<'_>) -> String {
    let mut out = String::new();
    for node in e.descendants() {
        match node.value() {
            scraper::Node::Text(t) => out.push_str(t),
            scraper::Node::Element(el) if el.name() == "br" => out.push(' '),
            _ => {}
        }
    }
    squash(&out)
}

/// Meta tags as (lowercased key, content) in document order; the key is the
/// `property`, `name`, `itemprop` or `http-equiv` attribute.
fn meta_pairs(metas: &[ElementRef<'_>]) -> Vec<(String, String)> {
    metas
        .iter()
        .filter_map(|m| {
            let v = m.value();
            let content = v.attr("content")?.trim();
            if content.is_empty() {
                return None;
            }
            let key = v
                .attr("property")
                .or_else(|| v.attr("name"))
                .or_else(|| v.attr("itemprop"))
                .or_else(|| v.attr("http-equiv"))?;
            // `weibo: article:create_at`, `og:time `: spaces are typos.
            let key: String = key.chars().filter(|c| !c.is_whitespace()).collect();
            Some((key.to_ascii_lowercase(), content.to_string()))
        })
        .collect()
}

impl Decision {
    fn new(attribute: &'static str, rule: Option<String>) -> Self {
        Decision {
            attribute,
            rule: rule.unwrap_or_else(|| "none".to_string()),
        }
    }
}

/// One source of an attribute's value, by name: the rule tables of
/// [`extract`] list them in order, and [`decide`] takes the first that gives a
/// value.
type Rule<'a> = (&'static str, Box<dyn Fn() -> Option<String> + 'a>);

/// The first rule that gives a value, with the rule's name.
fn decide(rules: &[Rule<'_>]) -> Option<(String, &'static str)> {
    rules
        .iter()
        .find_map(|(name, rule)| rule().map(|v| (v, *name)))
}

/// The site a page belongs to, as it names itself: `og:site_name` (not a
/// domain), the JSON-LD publisher, `application-name` and the other site
/// meta keys, else the site name its `<title>` ends with. A Chinese name with
/// its Latin form after it is the Chinese name (`三立新聞網 SETN.COM`).
fn site_outlet(
    metas: &[(String, String)],
    publisher: Option<&str>,
    title_tag: Option<&str>,
    names: &[String],
) -> Option<(String, &'static str)> {
    let rules: Vec<Rule<'_>> = vec![
        ("og:site_name", Box::new(|| og_site_name(metas))),
        ("JSON-LD publisher", Box::new(|| publisher_name(publisher))),
        (
            "site meta",
            Box::new(|| site_meta(metas).filter(|s| !media::domain_like(s))),
        ),
        (
            "site part of <title>",
            Box::new(|| title_site_part(title_tag, names)),
        ),
    ];
    decide(&rules)
        .filter(|(m, _)| !media::link_shortener(m))
        .map(|(m, rule)| (media::chinese_part(&m).unwrap_or(m), rule))
}

/// `og:site_name` when it names the site, not its domain (`dw.com`).
fn og_site_name(metas: &[(String, String)]) -> Option<String> {
    meta_value(metas, "og:site_name")
        .and_then(media::name_value)
        .filter(|s| !media::domain_like(s))
}

/// The JSON-LD publisher's name.
fn publisher_name(publisher: Option<&str>) -> Option<String> {
    publisher.and_then(media::name_value)
}

/// The first of the site meta keys (`application-name`, `publisher`, ...) that holds a
/// name.
fn site_meta(metas: &[(String, String)]) -> Option<String> {
    media::SITE_META_KEYS
        .iter()
        .find_map(|k| meta_value(metas, k).and_then(media::name_value))
}

/// The site name a `<title>` ends (or starts) with, one of `names`.
fn title_site_part(title_tag: Option<&str>, names: &[String]) -> Option<String> {
    title_tag
        .and_then(|t| title::site_segment(t, names))
        .and_then(|n| media::name_value(&n))
}

fn meta_value<'a>(metas: &'a [(String, String)], key: &str) -> Option<&'a str> {
    metas
        .iter()
        .find(|(k, v)| k == key && !v.trim().is_empty())
        .map(|(_, v)| v.trim())
}

/// Parses "1,234", "1.2万", "3k" into a count.
pub fn parse_count(s: &str) -> Option<u64> {
    let c = RE_COUNT.captures(s)?;
    let digits: String = c.get(1)?.as_str().chars().filter(|ch| *ch != ',').collect();
    let value: f64 = digits.parse().ok()?;
    let mult = match c.get(2).map(|m| m.as_str()) {
        Some("万") | Some("w") | Some("W") => 10_000.0,
        Some("千") | Some("k") | Some("K") => 1_000.0,
        _ => 1.0,
    };
    let v = (value * mult).round();
    (v.is_finite() && v >= 0.0 && v < u64::MAX as f64).then_some(v as u64)
}

/// Facts gathered from JSON-LD blocks.
#[derive(Default)]
struct JsonLd {
    /// `datePublished` of an article-typed object.
    published: Option<String>,
    /// `datePublished` of any other object (a web page, a list item).
    published_other: Option<String>,
    /// `dateModified` of an article-typed object.
    modified: Option<String>,
    publisher: Option<String>,
    headline: Option<String>,
    author: Option<String>,
    comments: Option<u64>,
}

/// Whether a JSON-LD object is an article (`NewsArticle`, `BlogPosting`, ...).
fn article_typed(map: &serde_json::Map<String, Value>) -> bool {
    let is_article = |t: &str| t.ends_with("Article") || t.ends_with("Posting") || t == "Report";
    match map.get("@type") {
        Some(Value::String(t)) => is_article(t),
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).any(is_article),
        _ => false,
    }
}

/// Names of a JSON-LD `author`: a string, a Person/Organization, or a list.
fn jsonld_names(v: &Value) -> Vec<String> {
    match v {
        Value::String(s) => vec![s.clone()],
        Value::Object(o) => o
            .get("name")
            .and_then(Value::as_str)
            .map(|n| vec![n.to_string()])
            .unwrap_or_default(),
        Value::Array(a) => a.iter().take(8).flat_map(jsonld_names).collect(),
        _ => Vec::new(),
    }
}

fn json_count(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => parse_count(s),
        _ => None,
    }
}

fn walk_jsonld(v: &Value, out: &mut JsonLd, depth: usize) {
    if depth > 16 {
        return;
    }
    match v {
        Value::Array(items) => items.iter().for_each(|i| walk_jsonld(i, out, depth + 1)),
        Value::Object(map) => {
            let article = article_typed(map);
            if let Some(Value::String(s)) = map.get("datePublished") {
                let slot = if article {
                    &mut out.published
                } else {
                    &mut out.published_other
                };
                if slot.is_none() {
                    *slot = Some(s.clone());
                }
            }
            if article && out.modified.is_none() {
                if let Some(Value::String(s)) = map.get("dateModified") {
                    out.modified = Some(s.clone());
                }
            }
            if article && out.headline.is_none() {
                out.headline = map
                    .get("headline")
                    .and_then(Value::as_str)
                    .map(str::to_string);
            }
            if article && out.author.is_none() {
                let names: Vec<String> = map
                    .get("author")
                    .map(jsonld_names)
                    .unwrap_or_default()
                    .into_iter()
                    .filter_map(|n| media::author_value(&n))
                    .collect();
                // Chinese names listed as Chinese lists them (`周以寧、郭明哲`).
                let chinese = names.iter().all(|n| n.chars().any(is_han));
                if !names.is_empty() {
                    out.author = Some(names.join(if chinese { "、" } else { ", " }));
                }
            }
            if out.publisher.is_none() {
                out.publisher = match map.get("publisher") {
                    Some(Value::String(s)) => Some(s.clone()),
                    Some(Value::Object(p)) => {
                        p.get("name").and_then(Value::as_str).map(str::to_string)
                    }
                    Some(Value::Array(a)) => a
                        .iter()
                        .find_map(|p| p.get("name").and_then(Value::as_str))
                        .map(str::to_string),
                    _ => None,
                };
            }
            if out.comments.is_none() {
                out.comments = map.get("commentCount").and_then(json_count);
            }
            if out.comments.is_none() {
                if let Some(stats) = map.get("interactionStatistic") {
                    let list: Vec<&Value> = match stats {
                        Value::Array(a) => a.iter().collect(),
                        other => vec![other],
                    };
                    out.comments = list.iter().find_map(|s| {
                        let kind = match s.get("interactionType")? {
                            Value::String(t) => t.clone(),
                            Value::Object(o) => o.get("@type").and_then(Value::as_str)?.to_string(),
                            _ => return None,
                        };
                        if kind.contains("Comment") {
                            s.get("userInteractionCount").and_then(json_count)
                        } else {
                            None
                        }
                    });
                }
            }
            map.values().for_each(|i| walk_jsonld(i, out, depth + 1));
        }
        _ => {}
    }
}

/// A script's text without the XHTML `<![CDATA[ … ]]>` wrapper (also
/// commented out, `//<![CDATA[` … `//]]>`, `/*<![CDATA[*/` … `/*]]>*/`),
/// trimmed.
fn without_cdata(text: &str) -> &str {
    let t = text.trim();
    let Some(i) = t.find("<![CDATA[").filter(|i| *i <= 4) else {
        return t;
    };
    let t = t[i + "<![CDATA[".len()..].trim_start_matches("*/");
    let t = t.rfind("]]>").map_or(t, |j| &t[..j]);
    t.trim()
        .trim_end_matches("/*")
        .trim_end_matches("//")
        .trim()
}

fn jsonld(scripts: &[ElementRef<'_>]) -> JsonLd {
    let mut out = JsonLd::default();
    for script in scripts {
        let text: String = script.text().collect();
        if let Ok(v) = serde_json::from_str::<Value>(without_cdata(&text)) {
            walk_jsonld(&v, &mut out, 0);
        }
    }
    out
}

/// The shortest line taken for a post's text when a page has neither a
/// headline on it nor an article text.
const MIN_POST_CHARS: usize = 20;

/// Lines searched around the title for bylines (date, source, author).
const HEADER_LINES_AFTER: usize = 10;
/// Lines after the title searched for the account a page's follow button
/// names ([`media::followed_account`]).
const ACCOUNT_LINES: usize = 4;
/// Lines at the head and foot of the article searched for source and author.
const ARTICLE_EDGE_LINES: usize = 4;

/// Index of the line of `lines` that shows the title: the chosen title's own
/// line first (a page's first `<h1>` is often its logo), then an `<h1>`'s.
fn title_line(lines: &[&str], title: Option<&str>, h1s: &[String]) -> Option<usize> {
    let norm = |s: &str| s.split_whitespace().collect::<String>();
    let wanted: Vec<String> = title
        .map(norm)
        .into_iter()
        .chain(h1s.iter().map(|h| norm(h)))
        .filter(|t| t.chars().count() >= 2)
        .collect();
    for w in &wanted {
        if let Some(i) = lines.iter().position(|l| norm(l) == *w) {
            return Some(i);
        }
    }
    // A headline the page sets on two or three lines: the last of them.
    for w in &wanted {
        for i in 0..lines.len() {
            let mut joined = norm(lines[i]);
            if joined.is_empty() || joined.len() >= w.len() || !w.starts_with(&joined) {
                continue;
            }
            for (k, l) in lines[i + 1..].iter().take(2).enumerate() {
                joined.push_str(&norm(l));
                if joined == *w {
                    return Some(i + k + 1);
                }
                if !w.starts_with(&joined) {
                    break;
                }
            }
        }
    }
    let t = norm(title?);
    if t.chars().count() < 6 {
        return None;
    }
    lines.iter().position(|l| {
        let l = norm(l);
        l.contains(&t) && l.chars().count() < t.chars().count() * 2
    })
}

/// Publish-time candidates from the markup: meta tags, microdata, JSON-LD, `<time>`.
fn markup_time_candidates(
    els: &scan::PageElements<'_>,
    metas: &[(String, String)],
    ld: &JsonLd,
) -> Vec<Candidate> {
    let mut out = Vec::new();
    for (keys, sc) in [
        (&PUBLISHED_META_KEYS[..], score::META_PUBLISHED),
        (&DATE_META_KEYS[..], score::META_WEAK),
    ] {
        out.extend(
            metas
                .iter()
                .filter(|(k, _)| keys.contains(&k.as_str()))
                .find_map(|(_, v)| time::parsed_candidate(v, PublishedFrom::Meta, sc)),
        );
    }
    out.extend(els.itemprop_published.iter().find_map(|e| {
        let v = e.value();
        let from = if v.name() == "time" {
            PublishedFrom::Time
        } else {
            PublishedFrom::Meta
        };
        let value = v
            .attr("content")
            .or_else(|| v.attr("datetime"))
            .map(str::to_string)
            .unwrap_or_else(|| element_text(e));
        time::parsed_candidate(&value, from, score::META_PUBLISHED)
    }));
    out.extend(
        ld.published
            .as_deref()
            .and_then(|v| time::parsed_candidate(v, PublishedFrom::Jsonld, score::JSONLD)),
    );
    out.extend(
        ld.published_other
            .as_deref()
            .and_then(|v| time::parsed_candidate(v, PublishedFrom::Jsonld, score::META_WEAK)),
    );
    // When the page was modified: taken only if it states no publish time.
    out.extend(
        metas
            .iter()
            .filter(|(k, _)| MODIFIED_META_KEYS.contains(&k.as_str()))
            .find_map(|(_, v)| time::parsed_candidate(v, PublishedFrom::Modified, score::MODIFIED)),
    );
    out.extend(
        ld.modified
            .as_deref()
            .and_then(|v| time::parsed_candidate(v, PublishedFrom::Modified, score::MODIFIED)),
    );
    let times = &els.time;
    let mut unmarked_taken = false;
    for t in times {
        let v = t.value();
        let marks = format!(
            "{} {} {}",
            v.attr("class").unwrap_or_default(),
            v.attr("itemprop").unwrap_or_default(),
            v.attr("id").unwrap_or_default()
        )
        .to_ascii_lowercase();
        // `class="entry-date published updated"` (a post never updated) is
        // the publish time.
        if (marks.contains("updat") || marks.contains("modif")) && !marks.contains("publish") {
            let value = v
                .attr("datetime")
                .map(str::to_string)
                .unwrap_or_else(|| element_text(t));
            out.extend(time::parsed_candidate(
                &value,
                PublishedFrom::Modified,
                score::MODIFIED,
            ));
            continue;
        }
        let marked = v.attr("pubdate").is_some() || marks.contains("pub") || marks.contains("post");
        let sc = match (marked, unmarked_taken) {
            (true, _) => score::TIME_MARKED,
            (false, true) => continue,
            (false, false) if times.len() <= 3 => score::TIME_FIRST,
            (false, false) => score::TIME_OTHER,
        };
        // An unreadable `datetime` (`01-11-2023 10:29`): the visible text.
        let parsed = v
            .attr("datetime")
            .and_then(|d| time::parsed_candidate(d, PublishedFrom::Time, sc))
            .or_else(|| time::parsed_candidate(&element_text(t), PublishedFrom::Time, sc));
        if let Some(c) = parsed {
            unmarked_taken |= !marked;
            out.push(c);
        }
    }
    // hAtom's `<abbr class="published" title="2024-11-25T15:05:00-08:00">3:05
    // PM</abbr>` (Blogger, older blog themes): the title holds the instant.
    for (class, from, sc) in [
        ("published", PublishedFrom::Time, score::TIME_MARKED),
        ("updated", PublishedFrom::Modified, score::MODIFIED),
    ] {
        out.extend(els.titled.iter().find_map(|e| {
            let v = e.value();
            v.attr("class")?
                .split_whitespace()
                .any(|c| c == class)
                .then(|| time::parsed_candidate(v.attr("title")?, from, sc))?
        }));
    }
    out
}

/// The page's sections: its `article:section` metas and the steps of a
/// breadcrumb line (`首页 / 财经新闻 / 企业`, `Home > World`).
fn page_sections(metas: &[(String, String)], lines: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = metas
        .iter()
        .filter(|(k, _)| k == "article:section")
        .map(|(_, v)| squash(v))
        .collect();
    const HOME: [&str; 5] = ["首页", "首頁", "Home", "当前位置", "您的位置"];
    for l in lines.iter().take(MAX_CRUMB_LINES) {
        let t = l.trim();
        if !HOME.iter().any(|h| t.starts_with(h)) {
            continue;
        }
        out.extend(
            t.split(['/', '>', '›', '»', '|', '＞', '／'])
                .map(|w| w.trim().trim_start_matches(['：', ':']).trim().to_string())
                .filter(|w| !w.is_empty()),
        );
    }
    out
}

/// Lines from the page's top searched for a breadcrumb.
const MAX_CRUMB_LINES: usize = 80;

/// `By <a rel="author">Joe Cash</a> and <a rel="author">Ellen Zhang</a>`:
/// the names of the first byline link and the byline links beside it (the
/// same parent), when they are two or more, listed as their script lists
/// them.
fn sibling_author_links(bylines: &[ElementRef<'_>]) -> Option<String> {
    let first = bylines.first().filter(|e| e.value().name() == "a")?;
    let parent = first.parent()?.id();
    let mut names: Vec<String> = Vec::new();
    for e in bylines
        .iter()
        .filter(|e| e.value().name() == "a" && e.parent().is_some_and(|p| p.id() == parent))
    {
        let name = media::author_value(&element_text(e))?;
        if !names.contains(&name) {
            names.push(name);
        }
    }
    match names.as_slice() {
        [] | [_] => None,
        _ if names.iter().any(|n| n.chars().any(is_han)) => Some(names.join("、")),
        [rest @ .., last] => Some(format!("{} and {last}", rest.join(", "))),
    }
}

/// `<div itemprop="author"><meta itemprop="name" content="航空观察员老李">…
/// <div>民航从业者</div></div>`: the name microdata gives an author element,
/// not the badge beside it.
fn microdata_name(e: &ElementRef<'_>) -> Option<String> {
    // The element or one inside it (`<div class="Post-Author"><div
    // itemprop="author">…`).
    let author = e
        .descendants()
        .filter_map(ElementRef::wrap)
        .find(|d| d.value().attr("itemprop") == Some("author"))?;
    author
        .descendants()
        .filter_map(ElementRef::wrap)
        .find(|d| d.value().attr("itemprop") == Some("name"))
        .map(|d| {
            d.value()
                .attr("content")
                .map(squash)
                .unwrap_or_else(|| element_text(&d))
        })
        .filter(|n| !n.is_empty())
}

/// Author from the byline elements of the markup.
fn byline_author(bylines: &[ElementRef<'_>]) -> Option<String> {
    if let Some(names) = sibling_author_links(bylines) {
        return Some(names);
    }
    bylines.iter().find_map(|e| {
        let v = e
            .value()
            .attr("content")
            .map(str::to_string)
            .or_else(|| microdata_name(e))
            .unwrap_or_else(|| element_text(e));
        // `作者：王希`, `楼主：海东青2024`: the name after its label.
        const LABELS: [&str; 5] = ["作者", "楼主", "樓主", "博主", "发帖人"];
        let v = v.trim_start_matches(|c: char| c.is_whitespace());
        let v = LABELS
            .iter()
            .find_map(|l| v.strip_prefix(l))
            .unwrap_or(v)
            .trim_start_matches([':', '：', ' ']);
        // `<div class="byline"><address>…</address><time>…</time>`: the
        // names before the date.
        let v = match time::first_date_start(v) {
            // `Rajesh Kumar / TNN / Updated: Nov 25, 2024`: nor the date's
            // label.
            Some(at) if at > 0 && v.is_char_boundary(at) => without_date_label(&v[..at]),
            _ => v,
        };

        // `<span class="author">黄斌汉：</span>标题`: a list item's author
        // before its headline, not this page's byline.
        if v.trim_end().ends_with([':', '：']) {
            return None;
        }
        // `本文来源：工人日报 作者：赵琛 责任编辑：王晓易`: the labelled name.
        let name = media::labelled_author([v]).or_else(|| media::author_value(v))?;
        // `Rajesh Kumar / TNN`, `Jane Doe | Reuters`: the names come first
        // (`界面新闻记者 | 李可` was read as the reporter's line above).
        let name = [" / ", " | ", " ｜ "]
            .iter()
            .fold(name.as_str(), |n, sep| n.split(sep).next().unwrap_or(n))
            .to_string();
        Some(name)
    })
}

/// `v` without the label of the date that followed it (`… / Updated:`,
/// `Last updated:`, `发布时间：`): the words before its colon that a date's
/// label is made of.
fn without_date_label(v: &str) -> &str {
    let t = v.trim_end();
    let Some(body) = t.strip_suffix([':', '：']) else {
        return v;
    };
    const WORDS: [&str; 12] = [
        "updated",
        "published",
        "posted",
        "modified",
        "last",
        "first",
        "date",
        "time",
        "on",
        "stand",
        "publié",
        "le",
    ];
    let separator = |c: char| c.is_whitespace() || matches!(c, '/' | '|' | '·' | '•' | '｜');
    let mut end = body.len();
    // The label's last word may run into the colon in any script
    // (`发布时间：`); the words before it only from the list.
    let mut first = true;
    while let Some(at) = body[..end].rfind(separator) {
        let word = body[at..end].trim_matches(separator);
        if !(first || WORDS.contains(&word.to_lowercase().as_str())) {
            break;
        }
        first = false;
        end = at;
    }
    if first {
        // One word only (`发布时间：`): nothing is left.
        return "";
    }
    body[..end].trim_end_matches(separator)
}

/// Site names the title may carry: `og:site_name`, `application-name`,
/// JSON-LD publisher, host labels.
fn site_names(metas: &[(String, String)], ld: &JsonLd, url: &Url) -> Vec<String> {
    let mut names: Vec<String> = [
        "og:site_name",
        "application-name",
        "apple-mobile-web-app-title",
    ]
    .iter()
    .filter_map(|k| meta_value(metas, k))
    .map(squash)
    .chain(ld.publisher.iter().map(|p| squash(p)))
    .filter(|n| !n.is_empty() && n.chars().count() <= 60)
    .collect();
    names.extend(title::host_names(url.host_str()));
    names
}

fn extract_counts(
    els: &scan::PageElements<'_>,
    ld: &JsonLd,
    body_text: &str,
) -> (Option<u64>, Option<u64>) {
    let mut comments = ld.comments;
    if comments.is_none() {
        comments = els.itemprop_comments.iter().find_map(|e| {
            e.value()
                .attr("content")
                .and_then(parse_count)
                .or_else(|| parse_count(&element_text(e)))
        });
    }
    if comments.is_none() {
        comments = els.count_attr.iter().find_map(|e| {
            COMMENT_DATA_ATTRS
                .iter()
                .find_map(|a| e.value().attr(a).and_then(parse_count))
        });
    }
    if comments.is_none() {
        comments = els
            .comment_marked
            .iter()
            .find_map(|e| parse_count(&element_text(e)));
    }
    if comments.is_none() {
        comments = RE_ZH_COMMENTS.iter().find_map(|r| {
            r.captures(body_text)
                .and_then(|c| parse_count(c.get(1)?.as_str()))
        });
    }
    let participants = RE_ZH_PARTICIPANTS
        .iter()
        .find_map(|r| {
            r.captures(body_text)
                .and_then(|c| parse_count(c.get(1)?.as_str()))
        })
        .or_else(|| {
            els.participant_marked
                .iter()
                .find_map(|e| parse_count(&element_text(e)))
        });
    (comments, participants)
}

enum Step<T> {
    Visit(T),
    Break,
}

/// Visible text of the document, one line per block element.
pub fn visible_text(doc: &Html) -> String {
    let mut out = String::new();
    let mut stack = vec![Step::Visit(doc.tree.root())];
    let newline = |out: &mut String| {
        if !out.is_empty() && !out.ends_with('\n') {
            while out.ends_with(' ') {
                out.pop();
            }
            out.push('\n');
        }
    };
    while let Some(step) = stack.pop() {
        let node = match step {
            Step::Break => {
                newline(&mut out);
                continue;
            }
            Step::Visit(n) => n,
        };
        match node.value() {
            Node::Text(t) => push_squashed(&mut out, t, &[]),
            Node::Element(e) => {
                let name = e.name();
                if SKIPPED_ELEMENTS.contains(&name) {
                    continue;
                }
                let block = BLOCK_ELEMENTS.contains(&name);
                if block {
                    newline(&mut out);
                    stack.push(Step::Break);
                }
                stack.extend(node.children().rev().map(Step::Visit));
            }
            Node::Document | Node::Fragment => {
                stack.extend(node.children().rev().map(Step::Visit));
            }
            _ => {}
        }
    }
    out.trim().to_string()
}

/// Language guess from the text and the `<html lang>` attribute.
fn detect_language(text: &str, html_lang: Option<&str>) -> Option<String> {
    let (mut han, mut kana, mut hangul, mut latin, mut letters) =
        (0usize, 0usize, 0usize, 0usize, 0usize);
    for c in text.chars().filter(|c| c.is_alphanumeric()) {
        letters += 1;
        if is_han(c) {
            han += 1;
        } else if matches!(c as u32, 0x3040..=0x30FF) {
            kana += 1;
        } else if matches!(c as u32, 0xAC00..=0xD7AF) {
            hangul += 1;
        } else if c.is_ascii_alphabetic() || matches!(c as u32, 0xC0..=0x24F) {
            latin += 1;
        }
    }
    let lang_attr = html_lang
        .and_then(|l| l.split(['-', '_']).next())
        .map(|l| l.trim().to_ascii_lowercase())
        .filter(|l| !l.is_empty());
    if letters > 0 {
        let share = |n: usize| n as f64 / letters as f64;
        if share(han + kana + hangul) > CJK_SHARE_ZH {
            if share(kana) > 0.05 {
                return Some("ja".into());
            }
            if hangul > han {
                return Some("ko".into());
            }
            return Some("zh".into());
        }
    }
    if lang_attr.is_some() {
        return lang_attr;
    }
    (letters > 0 && latin as f64 / letters as f64 > 0.8).then(|| "en".into())
}

static STOP_WORD_SET: LazyLock<HashSet<&'static str>> =
    LazyLock::new(|| STOP_WORDS.into_iter().collect());

/// Keywords ranked by jieba's TF-IDF: the first [`KEYWORD_COUNT`] that are not numbers.
/// More are asked for than needed: numbers ("17", "2023") are dropped here.
const TFIDF_CANDIDATES: usize = KEYWORD_COUNT * 3;

/// The first [`KEYWORD_COUNT`] of jieba's TF-IDF ranking that are not numbers.
fn without_numbers(ranked: Vec<String>) -> Vec<String> {
    ranked
        .into_iter()
        .filter(|k| {
            !k.chars()
                .all(|c| c.is_ascii_digit() || c.is_ascii_punctuation())
        })
        .take(KEYWORD_COUNT)
        .collect()
}

/// The keywords and the word tokens of a page's main text, from one segmentation of it:
/// for Chinese, jieba's cut gives both (`tokens::Tokens::with_keywords`); otherwise the
/// tokens and the term-frequency keywords are separate walks over the words.
pub fn keywords_and_tokens(text: &str, chinese: bool) -> (Vec<String>, Tokens) {
    if chinese {
        let (tokens, ranked) = Tokens::with_keywords(text, KEYWORD_TEXT_CHARS, TFIDF_CANDIDATES);
        return (without_numbers(ranked), tokens);
    }
    (keywords(text, false), Tokens::new(text))
}

/// Top keywords of `text`: jieba TF-IDF for Chinese (jieba's default IDF table, no HMM),
/// term frequency otherwise.
pub fn keywords(text: &str, chinese: bool) -> Vec<String> {
    if chinese {
        return without_numbers(tokens::tfidf_keywords(
            text,
            KEYWORD_TEXT_CHARS,
            TFIDF_CANDIDATES,
        ));
    }
    let text: String = text.chars().take(KEYWORD_TEXT_CHARS).collect();
    let mut counts: HashMap<String, u64> = HashMap::new();
    for word in text
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .map(|w| w.trim_matches('\'').to_lowercase())
        .filter(|w| w.chars().count() >= 3 && !w.chars().all(|c| c.is_ascii_digit()))
        .filter(|w| !STOP_WORD_SET.contains(w.as_str()))
    {
        *counts.entry(word).or_default() += 1;
    }
    let mut ranked: Vec<(String, u64)> = counts.into_iter().collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    ranked
        .into_iter()
        .take(KEYWORD_COUNT)
        .map(|(w, _)| w)
        .collect()
}

/// The embeds of a page: resolved against `base`, http(s) only (no `data:`),
/// each URL once.
fn resolve_embeds(raw: &[(EmbedKind, &str)], base: &Url, limits: &Limits) -> Vec<Embed> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for (kind, href) in raw {
        let href = href.trim();
        if href.is_empty() || href.starts_with("data:") || limits.raw_href_too_long(href) {
            continue;
        }
        let Some(u) = parse_normalized(href, Some(base)) else {
            continue;
        };
        let s = u.to_string();
        if s.len() <= limits.max_url_length && seen.insert(s.clone()) {
            out.push(Embed {
                url: s,
                kind: *kind,
            });
        }
    }
    out
}

/// Distinct links in order, under the page's link budgets.
struct LinkSink<'a> {
    base: &'a Url,
    limits: &'a Limits,
    seen: HashSet<String>,
    out: Vec<String>,
    dropped: u64,
    long: u64,
}

impl<'a> LinkSink<'a> {
    fn new(base: &'a Url, limits: &'a Limits) -> Self {
        LinkSink {
            base,
            limits,
            seen: HashSet::new(),
            out: Vec::new(),
            dropped: 0,
            long: 0,
        }
    }

    fn offer(&mut self, href: &str) {
        if self.out.len() >= self.limits.max_links {
            self.dropped += 1;
            return;
        }
        if self.limits.raw_href_too_long(href) {
            self.long += 1;
            return;
        }
        if let Some(u) = parse_normalized(href, Some(self.base)) {
            let s = String::from(u);
            if s.len() > self.limits.max_url_length {
                self.long += 1;
            } else if self.seen.insert(s.clone()) {
                self.out.push(s);
            }
        }
    }

    fn offer_all(&mut self, hrefs: &[&str]) {
        for href in hrefs {
            self.offer(href);
        }
    }

    fn finish(self) -> Links {
        Links {
            links: self.out,
            dropped: self.dropped,
            too_long: self.long,
        }
    }
}

/// A page's links under its budgets.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Links {
    /// Absolute, normalised, distinct, in order, at most `max_links`.
    pub links: Vec<String>,
    /// Link elements past `max_links`.
    pub dropped: u64,
    /// Links longer than `max_url_length`.
    pub too_long: u64,
}

/// Pages with more markup than this (bytes of decoded HTML outside scripts,
/// styles and comments) are not parsed into one DOM: their attributes come
/// from a prefix with this much markup (see [`large_page_cut`]) and their
/// links from a streaming tokenizer over the whole page. A DOM of a 10 MB page
/// (rust-doc's generated sources) took ~500 MB; a crawl of rust-doc peaked
/// at 976 MB resident with whole-page DOMs, 517 MB with a 1 MiB cut.
pub const LARGE_PAGE_BYTES: usize = 512 * 1024;

/// The longest DOM prefix, scripts and styles included. A script or style is
/// one text node in the DOM (about its own bytes), where markup costs tens
/// of bytes a byte: WeChat's article pages carry ~600 KB of inline scripts
/// and styles before the `<body>` that holds the headline and the article.
pub const LARGE_PAGE_PREFIX_BYTES: usize = 4 * LARGE_PAGE_BYTES;

/// Extracts all attributes of a decoded HTML page fetched from `url`.
/// Times are checked against the current time, read in the zone the site
/// implies; [`extract_with`] takes the fetch time, a configured zone and a
/// feed hint.
pub fn extract(html: &str, url: &Url) -> Extracted {
    extract_with(html, url, &TimeContext::default())
}

/// Extracts all attributes of a decoded HTML page fetched from `url`, with
/// the fetch time, the configured zone and the feed or sitemap hint of `ctx`,
/// under the default [`Limits`].
pub fn extract_with(html: &str, url: &Url, ctx: &TimeContext) -> Extracted {
    extract_limited(html, url, ctx, &Limits::default())
}

/// [`extract_with`] under the given budgets (see [`budget`]): the DOM is
/// parsed from the first [`LARGE_PAGE_BYTES`] with nesting deeper than
/// `limits.max_depth` flattened and at most `limits.parse_cpu` of parsing;
/// links come from the DOM, or from the tokenizer over the whole page when
/// the DOM holds less than the page (large, flattened or cut).
pub fn extract_limited(html: &str, url: &Url, ctx: &TimeContext, limits: &Limits) -> Extracted {
    let cut = large_page_cut(html);
    let prefix = &html[..cut];
    let flat = budget::flatten(prefix, limits.max_depth);
    if flat.dropped > 0 {
        tracing::debug!(url = %url, depth = flat.depth, dropped = flat.dropped, "nesting flattened");
    }
    let cpu = budget::CpuBudget::start(limits.parse_cpu);
    let (doc, parse_truncated) = parse_budgeted(flat.html.as_deref().unwrap_or(prefix), &cpu);
    let (mut x, base, hrefs) = extract_doc(&doc, url, ctx);
    let whole_prefix = flat.dropped == 0 && !parse_truncated;
    // The tokenizer is linear in the page (at most `max_body_bytes`): its
    // links are not cut by the CPU budget, so they never depend on the
    // machine's speed. A large page's DOM holds its prefix: the links after
    // it are streamed from where the prefix ends (a tag's start).
    let links = if whole_prefix {
        let mut sink = LinkSink::new(&base, limits);
        sink.offer_all(&hrefs);
        drop(hrefs);
        drop(doc);
        if cut < html.len() {
            sink = stream_into(sink, &html[cut..]);
        }
        sink.finish()
    } else {
        drop(hrefs);
        drop(doc);
        stream_links(html, &base, limits)
    };
    if parse_truncated {
        tracing::debug!(url = %url, "parse stopped at its CPU budget");
    }
    x.links = links.links;
    x.limits = LimitReport {
        depth: flat.depth,
        flattened_tags: flat.dropped,
        parse_truncated,
        links_dropped: links.dropped,
        long_links: links.too_long,
    };
    x
}

/// Where a page's DOM prefix ends: the whole page when it has at most
/// [`LARGE_PAGE_BYTES`] of markup (bytes outside the contents of `<script>`,
/// `<style>` and comments) and at most [`LARGE_PAGE_PREFIX_BYTES`] in all;
/// else the start of the last tag (a `<` outside scripts, styles and
/// comments) before either bound is passed, so no tag is cut in two between
/// the DOM and the streamed rest; a character boundary when there is none in
/// the prefix's second half.
fn large_page_cut(html: &str) -> usize {
    if html.len() <= LARGE_PAGE_BYTES {
        return html.len();
    }
    let b = html.as_bytes();
    // Bytes the DOM would hold as markup, up to `at`.
    let mut markup = 0usize;
    let mut at = 0usize;
    let mut last_tag: Option<usize> = None;
    loop {
        let Some(lt) = memchr::memchr(b'<', &b[at..]).map(|i| at + i) else {
            markup += b.len() - at;
            at = b.len();
            break;
        };
        markup += lt - at;
        if markup > LARGE_PAGE_BYTES || lt > LARGE_PAGE_PREFIX_BYTES {
            break;
        }
        last_tag = Some(lt);
        let rest = &b[lt..];
        let raw_end = if rest.starts_with(b"<!--") {
            Some(find_from(b, lt + 4, b"-->").map_or(b.len(), |e| e + 3))
        } else {
            ["script", "style"]
                .into_iter()
                .find(|name| opens_element(rest, name))
                .map(|name| closing_tag_end(b, lt + 1 + name.len(), name))
        };
        match raw_end {
            // The element's tags count; its contents do not.
            Some(end) => {
                markup += 32;
                at = end;
            }
            None => {
                markup += 1;
                at = lt + 1;
            }
        }
        if at >= b.len() {
            break;
        }
    }
    if markup <= LARGE_PAGE_BYTES && at <= LARGE_PAGE_PREFIX_BYTES {
        return html.len();
    }
    match last_tag {
        Some(t) if t >= LARGE_PAGE_BYTES / 2 => t,
        _ => {
            let mut cut = LARGE_PAGE_BYTES.min(html.len());
            while !html.is_char_boundary(cut) {
                cut -= 1;
            }
            cut
        }
    }
}

/// Whether `tag` (starting at its `<`) opens a `name` element.
fn opens_element(tag: &[u8], name: &str) -> bool {
    let n = name.len();
    tag.len() > n + 1
        && tag[1..=n].eq_ignore_ascii_case(name.as_bytes())
        && matches!(
            tag[n + 1],
            b'>' | b'/' | b' ' | b'\t' | b'\n' | b'\r' | b'\x0c'
        )
}

/// Where the closing tag `</name ...>` at or after `from` ends (the page's
/// end when it is not closed).
fn closing_tag_end(b: &[u8], from: usize, name: &str) -> usize {
    let mut at = from;
    while let Some(i) = find_from(b, at, b"</") {
        let tag = &b[i + 1..];
        if opens_element(tag, name) {
            return memchr::memchr(b'>', &b[i..]).map_or(b.len(), |e| i + e + 1);
        }
        at = i + 2;
    }
    b.len()
}

/// The first `needle` in `b` at or after `from`.
fn find_from(b: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(b.get(from..)?, needle).map(|i| from + i)
}

/// The chunks of `html` fed to the parser: [`budget::PARSE_CHUNK_BYTES`]
/// each, cut at character boundaries.
fn chunks(html: &str) -> impl Iterator<Item = &str> {
    let mut at = 0;
    std::iter::from_fn(move || {
        if at >= html.len() {
            return None;
        }
        let mut end = (at + budget::PARSE_CHUNK_BYTES).min(html.len());
        while !html.is_char_boundary(end) {
            end += 1;
        }
        let chunk = &html[at..end];
        at = end;
        Some(chunk)
    })
}

/// Bytes of markup a DOM node stands for, to size the node vector before
/// parsing (an overestimate of the nodes costs memory for the page's parse
/// only).
const NODE_BYTES_ESTIMATE: usize = 24;

/// Parses `html` into a DOM, a chunk at a time, until `cpu` is spent; true
/// when it stopped before the end.
fn parse_budgeted(html: &str, cpu: &budget::CpuBudget) -> (Html, bool) {
    use html5ever::tendril::{StrTendril, TendrilSink};
    // The node vector sized from the page (about one node, element or
    // text, for each 28 bytes of markup on the rust-doc pages): growing it
    // by doubling copied it and faulted in fresh pages several times a page.
    let mut document = Html::new_document();
    document.tree = ego_tree::Tree::with_capacity(
        scraper::Node::Document,
        (html.len() / NODE_BYTES_ESTIMATE).max(64),
    );
    let mut parser =
        html5ever::driver::parse_document(scraper::HtmlTreeSink::new(document), Default::default());
    let mut fed = 0;
    for chunk in chunks(html) {
        if cpu.spent() {
            break;
        }
        parser.process(StrTendril::from_slice(chunk));
        fed += chunk.len();
    }
    (parser.finish(), fed < html.len())
}

/// Links of `html` (`a[href]`, `area[href]`, `link[rel~=next][href]`, in
/// order, each once, under `limits`) found by the HTML tokenizer alone:
/// linear time, and memory stays flat whatever the page's size or nesting.
pub fn stream_links(html: &str, base: &Url, limits: &Limits) -> Links {
    stream_into(LinkSink::new(base, limits), html).finish()
}

/// Offers the links of `html`, found by the tokenizer alone, to `sink`.
fn stream_into<'a>(mut sink: LinkSink<'a>, html: &str) -> LinkSink<'a> {
    each_start_tag(html, false, |name, attrs| {
        let attr = |n: &str| tag_attr(attrs, n);
        let wanted = match name {
            "a" | "area" => true,
            "link" => attr("rel").is_some_and(|r| {
                r.split_ascii_whitespace()
                    .any(|t| t.eq_ignore_ascii_case("next"))
            }),
            _ => false,
        };
        if let Some(href) = attr("href").filter(|_| wanted) {
            sink.offer(href);
        }
    });
    sink
}

/// The value of attribute `name` of a tag.
fn tag_attr<'a>(attrs: &'a [html5ever::Attribute], name: &str) -> Option<&'a str> {
    attrs
        .iter()
        .find(|a| &*a.name.local == name)
        .map(|a| &*a.value)
}

/// Runs the HTML tokenizer alone over `html` (linear time, flat memory) and
/// calls `on_tag` with the name and the attributes of every start tag.
/// The content of `script`, `style`, `textarea`, `title` and their kin is
/// text, as the parser reads it; with `noscript_text`, that of `noscript`
/// too (the parser's reading with scripting on).
fn each_start_tag(
    html: &str,
    noscript_text: bool,
    on_tag: impl FnMut(&str, &[html5ever::Attribute]),
) {
    use html5ever::tendril::StrTendril;
    use html5ever::tokenizer::states::RawKind;
    use html5ever::tokenizer::{
        BufferQueue, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts,
    };

    struct Tags<F> {
        on_tag: std::cell::RefCell<F>,
        noscript_text: bool,
    }

    impl<F: FnMut(&str, &[html5ever::Attribute])> TokenSink for Tags<F> {
        type Handle = ();

        fn process_token(&self, token: Token, _line: u64) -> TokenSinkResult<()> {
            let Token::TagToken(tag) = token else {
                return TokenSinkResult::Continue;
            };
            if tag.kind != TagKind::StartTag {
                return TokenSinkResult::Continue;
            }
            let name: &str = &tag.name;
            (self.on_tag.borrow_mut())(name, &tag.attrs);
            match name {
                // Their content is text, not markup.
                "script" => TokenSinkResult::RawData(RawKind::ScriptData),
                "style" | "xmp" | "iframe" | "noembed" | "noframes" => {
                    TokenSinkResult::RawData(RawKind::Rawtext)
                }
                "noscript" if self.noscript_text => TokenSinkResult::RawData(RawKind::Rawtext),
                "textarea" | "title" => TokenSinkResult::RawData(RawKind::Rcdata),
                _ => TokenSinkResult::Continue,
            }
        }
    }

    let tags = Tags {
        on_tag: std::cell::RefCell::new(on_tag),
        noscript_text,
    };
    let tok = Tokenizer::new(tags, TokenizerOpts::default());
    let input = BufferQueue::default();
    for chunk in chunks(html) {
        input.push_back(StrTendril::from_slice(chunk));
        let _ = tok.feed(&input);
    }
    tok.end();
}

/// What `html` embeds ([`Extracted::embeds`]: the same rule, base URL and
/// budgets), found by the HTML tokenizer alone: a fraction of the cost of
/// [`extract`] for a reader that wants only the requisites of a stored page.
/// Elements inside `<noscript>` are left out, as the parser (scripting on)
/// leaves them out of the document the extraction walks.
pub fn stream_embeds(html: &str, url: &Url) -> Vec<Embed> {
    let mut base: Option<String> = None;
    let mut raw: Vec<(EmbedKind, String)> = Vec::new();
    each_start_tag(html, true, |name, attrs| {
        let attr = |n: &str| tag_attr(attrs, n);
        if name == "base" {
            if base.is_none() {
                base = attr("href").map(str::to_string);
            }
        } else if raw.len() < scan::MAX_EMBEDS {
            let attrs = scan::EmbedAttrs {
                src: attr("src"),
                lazy_src: attr("data-src").or_else(|| attr("data-original")),
                poster: attr("poster"),
                rel: attr("rel"),
                href: attr("href"),
            };
            scan::element_embeds(name, &attrs, |(k, v)| raw.push((k, v.to_string())));
        }
    });
    let base = base
        .and_then(|h| url.join(h.trim()).ok())
        .unwrap_or_else(|| url.clone());
    let raw: Vec<(EmbedKind, &str)> = raw.iter().map(|(k, v)| (*k, v.as_str())).collect();
    resolve_embeds(&raw, &base, &Limits::default())
}

/// A page as its attribute rules read it: the elements the scan found, the meta
/// pairs and JSON-LD facts, the site's names, and the page's visible text and article
/// text by line.
struct PageView<'p> {
    url: &'p Url,
    ctx: &'p TimeContext,
    els: &'p scan::PageElements<'p>,
    metas: &'p [(String, String)],
    ld: &'p JsonLd,
    language: Option<&'p str>,
    /// Site names the title may carry ([`site_names`]).
    names: Vec<String>,
    h1s: Vec<String>,
    title_tag: Option<String>,
    article_text: &'p str,
    lines: Vec<&'p str>,
    article_lines: Vec<&'p str>,
    /// The first and last lines of the article: bylines, datelines, source labels.
    edges: Vec<&'p str>,
}

impl<'p> PageView<'p> {
    #[allow(clippy::too_many_arguments)]
    fn new(
        url: &'p Url,
        ctx: &'p TimeContext,
        els: &'p scan::PageElements<'p>,
        metas: &'p [(String, String)],
        ld: &'p JsonLd,
        language: Option<&'p str>,
        body_text: &'p str,
        article_text: &'p str,
    ) -> Self {
        let h1s: Vec<String> = els
            .h1
            .iter()
            .map(element_text)
            .filter(|t| !t.is_empty())
            .collect();
        let title_tag = els.title.iter().map(element_text).find(|t| !t.is_empty());
        let article_lines: Vec<&str> = article_text.lines().collect();
        let edges: Vec<&str> = article_lines
            .iter()
            .take(ARTICLE_EDGE_LINES)
            .chain(article_lines.iter().rev().take(ARTICLE_EDGE_LINES))
            .copied()
            .collect();
        PageView {
            url,
            ctx,
            els,
            metas,
            ld,
            language,
            names: site_names(metas, ld, url),
            h1s,
            title_tag,
            article_text,
            lines: body_text.lines().collect(),
            article_lines,
            edges,
        }
    }

    /// The header's lines, then the article's edges.
    fn header_and_edges<'v>(
        &'v self,
        around: &'v Around<'p>,
    ) -> impl Iterator<Item = &'p str> + 'v {
        around.header.iter().chain(self.edges.iter()).copied()
    }
}

/// Where a page's headline is among its lines, and the lines around it.
struct Around<'p> {
    /// The line of the headline.
    at_title: Option<usize>,
    /// Two lines above the headline to [`HEADER_LINES_AFTER`] below it.
    header: &'p [&'p str],
    /// The last line of the article's text, below its start.
    article_end: Option<usize>,
    /// The header down to the article's end (not the related items and
    /// comments under a short article).
    header_above_end: Vec<&'p str>,
    /// Where the page's text starts: the headline, else the article's first line,
    /// else the longest line of the page (a microblog post, a forum reply).
    anchor: Option<usize>,
}

impl<'p> Around<'p> {
    fn find(p: &'p PageView<'p>, title: Option<&str>) -> Self {
        let lines = &p.lines;
        let at_title = title_line(lines, title, &p.h1s);
        let header: &[&str] = match at_title {
            Some(i) => &lines[i.saturating_sub(2)..(i + 1 + HEADER_LINES_AFTER).min(lines.len())],
            None => &[],
        };
        // A page without a headline on it (a microblog post, a forum reply): its
        // byline is read around where its text starts.
        // With no article text found, the longest line of the page (the post).
        let anchor =
            at_title.or_else(
                || match p.article_lines.iter().find(|l| !l.trim().is_empty()) {
                    Some(first) => lines.iter().position(|l| l == first),
                    None => lines
                        .iter()
                        .enumerate()
                        .map(|(i, l)| (l.chars().count(), std::cmp::Reverse(i)))
                        .max()
                        .filter(|(n, _)| *n >= MIN_POST_CHARS)
                        .map(|(_, std::cmp::Reverse(i))| i),
                },
            );
        // The last line of the article's text, below the title.
        let article_end = anchor.and_then(|i| {
            p.article_lines
                .iter()
                .rev()
                .find(|l| !l.trim().is_empty())
                .and_then(|last| lines.iter().skip(i + 1).rposition(|l| l == last))
                .map(|j| j + i + 1)
        });
        let from = at_title.map_or(0, |i| i.saturating_sub(2));
        let header_above_end = header
            .iter()
            .enumerate()
            .filter(|(k, _)| article_end.is_none_or(|e| from + k <= e))
            .map(|(_, l)| *l)
            .collect();
        Around {
            at_title,
            header,
            article_end,
            header_above_end,
            anchor,
        }
    }

    /// Up to `n` lines under the headline.
    fn under_title(&self, lines: &'p [&'p str], n: usize) -> &'p [&'p str] {
        self.at_title.map_or(&[][..], |i| {
            &lines[(i + 1).min(lines.len())..(i + 1 + n).min(lines.len())]
        })
    }
}

/// The headline and the rule that chose it (see [`title::choose_ruled`]), as the page
/// shows it.
fn decide_title(p: &PageView<'_>) -> (Option<String>, Option<&'static str>) {
    let og_title = meta_value(p.metas, "og:title").or_else(|| meta_value(p.metas, "twitter:title"));
    let founder_title = p
        .els
        .founder_title
        .map(|e| element_text(&e))
        .filter(|t| !t.is_empty());
    let (title, rule) = title::choose_ruled(
        p.title_tag.as_deref(),
        og_title,
        p.ld.headline.as_deref().or(founder_title.as_deref()),
        &p.h1s,
        &p.names,
    )
    .unzip();
    let title = title
        .map(|t| title::as_shown(&t, &p.lines).unwrap_or(t))
        .map(|t| title::as_spaced(&t, &p.lines).unwrap_or(t));
    (title, rule)
}

/// The publish time: every candidate the page offers (markup, the lines near the
/// headline, labels, marked and classed elements, the article's edges, the URL, the
/// page's scripts, the feed's or sitemap's hint), scored and decided by [`time::decide`].
fn decide_published(p: &PageView<'_>, a: &Around<'_>) -> Option<Published> {
    let (els, url, ctx) = (p.els, p.url, p.ctx);
    let locales: Vec<&str> = els
        .html_lang
        .into_iter()
        .chain(meta_value(p.metas, "og:locale"))
        .collect();
    let zone = page_zone(ctx.zone, url.host_str(), p.language, &locales);
    let mut cands = markup_time_candidates(els, p.metas, p.ld);
    if let Some(i) = a.anchor {
        cands.extend(time::near_title_candidates(
            &p.lines,
            i,
            a.article_end,
            ctx,
            zone,
            time::url_year(url.path()),
        ));
    }
    cands.extend(time::labelled_candidates(&p.lines));
    let marked: Vec<String> = els
        .date_marked
        .iter()
        .filter(|e| {
            let c = format!(
                "{} {}",
                e.value().attr("class").unwrap_or_default(),
                e.value().attr("id").unwrap_or_default()
            )
            .to_ascii_lowercase();
            !(c.contains("updat") || c.contains("modif")) || c.contains("publish")
        })
        .take(50)
        .map(element_text)
        .filter(|t| t.chars().count() <= 120)
        .collect();
    cands.extend(time::marked_element_candidate(&marked));
    let classed: Vec<String> = els
        .date_classed
        .iter()
        .filter(|e| {
            let c = e
                .value()
                .attr("class")
                .unwrap_or_default()
                .to_ascii_lowercase();
            !(c.contains("updat") || c.contains("modif"))
        })
        .map(element_text)
        .filter(|t| t.chars().count() <= 120)
        .collect();
    cands.extend(time::date_class_candidate(&classed));
    cands.extend(time::article_edge_candidates(p.article_text));
    // `发表于 <span title="2024-11-25 15:05:06">3 天前</span>`: the first
    // relative phrase's time, to the second.
    cands.extend(els.titled.iter().find_map(|e| {
        time::is_relative(&element_text(e))
            .then(|| e.value().attr("title"))
            .flatten()
            .and_then(|t| time::parsed_candidate(t, PublishedFrom::Text, score::TITLED))
    }));
    cands.extend(time::url_candidate(url.path()));
    cands.extend(time::script_candidates(
        els.scripts.iter().flat_map(|e| e.text()),
        zone,
    ));
    if let Some((t, from)) = ctx.hint {
        cands.push(Candidate {
            stated: time::Stated::Zoned(t.fixed_offset()),
            has_time: true,
            from,
            score: score::FEED,
            near_title: false,
            year_inferred: false,
            relative: false,
        });
    }
    time::decide(&cands, ctx, zone)
}

/// The media as decided: the outlet a page names or credits, else its host.
struct MediaChoice {
    media: Option<String>,
    /// The media is only the host name.
    from_host: bool,
    /// What a source label names (it outranks a wire agency credited as the author).
    labelled: Option<String>,
    /// The rule, then the corrections made to its value.
    rule: Vec<&'static str>,
}

/// The account a follow button names under the headline.
fn followed_account(p: &PageView<'_>, a: &Around<'_>) -> Option<String> {
    media::followed_account(a.under_title(&p.lines, ACCOUNT_LINES))
}

/// The media's sources, in order: the first that names one decides.
fn media_rules<'r>(
    p: &'r PageView<'_>,
    a: &'r Around<'_>,
    title: Option<&'r str>,
    published: Option<Published>,
    labelled: &'r Option<String>,
) -> Vec<Rule<'r>> {
    let metas = p.metas;
    vec![
        ("source label", Box::new(|| labelled.clone())),
        // `資料來源：環境部` under the headline of a government's release (a
        // data source's label elsewhere: a chart's).
        (
            "data source label",
            Box::new(|| media::data_source_media(a.header.iter().copied())),
        ),
        (
            "edition line",
            Box::new(|| media::edition_media(a.header.iter().copied())),
        ),
        (
            "source element",
            Box::new(|| {
                media::source_element_media(
                    p.els
                        .source
                        .iter()
                        .filter(|e| e.children().filter(|c| c.value().is_element()).count() <= 2)
                        .map(element_text),
                )
            }),
        ),
        (
            "source meta",
            Box::new(|| {
                media::MEDIA_META_KEYS
                    .iter()
                    .find_map(|k| meta_value(metas, k).and_then(media::name_value))
            }),
        ),
        (
            "account element",
            Box::new(|| {
                p.els
                    .account
                    .and_then(|e| media::name_value(&element_text(&e)))
            }),
        ),
        (
            "outlet beside the date",
            Box::new(move || {
                // Not a related item's line under the article (`行政院會通過前瞻預算
                // 18:10 2024/11/25`, the same day).
                media::dateline_media(
                    a.header_above_end.iter().copied(),
                    published.map(|p| p.local.date_naive()),
                )
                // `2024-10-30 14:26 财经新闻`: the page's section beside the date
                // (its `article:section`, a step of its breadcrumb) is no outlet.
                .filter(|m| !page_sections(metas, &p.lines).iter().any(|s| s == m))
            }),
        ),
        ("followed account", Box::new(|| followed_account(p, a))),
        (
            "reporter's outlet",
            Box::new(|| media::reporter_outlet(p.header_and_edges(a))),
        ),
        // `MEMPHIS, Tenn. (AP) —`, `新华社北京11月17日电`: the agency that
        // filed the story, over the site that runs it; the site's own name
        // over its short form (`Yonhap News Agency`, `(Yonhap) --`).
        (
            "agency dateline or og:site_name",
            Box::new(|| {
                // Not `dw.com`: a domain for a name gives way to the
                // publisher's (and is taken last).
                let site = og_site_name(metas);
                let agency = media::agency_dateline_media(p.edges.iter().copied());
                match (site, agency) {
                    (Some(s), Some(a)) if !s.to_lowercase().contains(&a.to_lowercase()) => Some(a),
                    (site, agency) => site.or(agency),
                }
            }),
        ),
        (
            "JSON-LD publisher",
            Box::new(|| publisher_name(p.ld.publisher.as_deref())),
        ),
        ("site meta", Box::new(|| site_meta(metas))),
        (
            "site part of <title>",
            Box::new(|| title_site_part(p.title_tag.as_deref(), &p.names)),
        ),
        (
            "account above the dateline",
            Box::new(|| media::account_above_dateline(a.under_title(&p.lines, 2))),
        ),
        (
            "segment after the headline in <title>",
            Box::new(move || {
                p.title_tag
                    .as_deref()
                    .zip(title)
                    .and_then(|(t, h)| title::segment_after_headline(t, h))
                    .and_then(|n| media::name_value(&n))
            }),
        ),
        (
            "og:site_name (a domain)",
            Box::new(|| meta_value(metas, "og:site_name").and_then(media::name_value)),
        ),
    ]
}

/// The media: the first of [`media_rules`] that names an outlet, then its
/// corrections, else the host.
fn decide_media(
    p: &PageView<'_>,
    a: &Around<'_>,
    title: Option<&str>,
    published: Option<Published>,
) -> MediaChoice {
    let labelled = media::labelled_media(p.header_and_edges(a));
    let mut rule = Vec::new();
    let named = decide(&media_rules(p, a, title, published, &labelled)).map(|(m, r)| {
        rule.push(r);
        m
    });
    // `来源：澎湃新闻·澎湃号·湃客`, the platform's channel (all of it in the
    // title's site part), over an account a follow button names: the
    // account published the article.
    let named = match named {
        Some(m)
            if p.title_tag
                .as_deref()
                .zip(title)
                .is_some_and(|(t, h)| title::names_the_sites_part(t, h, &m)) =>
        {
            match followed_account(p, a) {
                Some(account) => {
                    rule = vec!["followed account (the source names the site)"];
                    Some(account)
                }
                None => Some(m),
            }
        }
        other => other,
    };
    // `<meta name="source" content="bit.ly">`: a link, not an outlet.
    let named = named.filter(|m| {
        let link = media::link_shortener(m);
        if link {
            rule.clear();
        }
        !link
    });
    // `Source: Al Jazeera News` on a page whose `og:site_name` is `Al
    // Jazeera`: the outlet as it names itself on all its pages.
    let named = named.map(|m| {
        match og_site_name(p.metas).filter(|s| *s != m && media::same_outlet(&m, s)) {
            Some(site) => {
                rule.push("then the outlet's name in og:site_name");
                site
            }
            None => m,
        }
    });
    let from_host = named.is_none() && p.url.host_str().is_some();
    // `三立新聞網 SETN.COM`, `端傳媒 Initium Media`: a Chinese name with its
    // Latin form after it is the Chinese name, as source labels give it.
    let named = named.map(|m| match media::chinese_part(&m) {
        Some(chinese) => {
            rule.push("then its Chinese name");
            chinese
        }
        None => m,
    });
    if named.is_none() {
        rule = vec!["host (no source names an outlet)"];
    }
    MediaChoice {
        media: named.or_else(|| p.url.host_str().map(str::to_string)),
        from_host,
        labelled,
        rule,
    }
}

/// The author the text labels (`作者：`, `（记者 X）`, `By X`), in order.
fn text_author_rules<'r>(
    p: &'r PageView<'_>,
    a: &'r Around<'_>,
    published: Option<Published>,
) -> Vec<Rule<'r>> {
    vec![
        (
            "author label",
            Box::new(|| media::labelled_author(p.header_and_edges(a))),
        ),
        (
            "byline line of the article",
            Box::new(|| media::byline_line_author(p.article_lines.iter().copied())),
        ),
        // `澎湃新闻记者 陈思远` on a line of its own under the headline.
        (
            "byline line under the headline",
            Box::new(|| media::byline_line_author(a.header_above_end.iter().copied())),
        ),
        (
            "reporter beside the date",
            Box::new(move || {
                media::dateline_reporter(
                    a.header.iter().copied(),
                    published.map(|p| p.local.date_naive()),
                )
            }),
        ),
        (
            "poster above 'posted'",
            Box::new(|| media::poster_above_posted(a.header)),
        ),
        // `<a href="/author/kelly-ip">Kelly Ip</a>` under the headline.
        (
            "author link under the headline",
            Box::new(|| {
                p.els.author_links.iter().find_map(|e| {
                    let name = media::author_value(&element_text(e))?;
                    (name.chars().count() <= 40
                        && a.header_above_end.iter().any(|l| l.contains(&name)))
                    .then_some(name)
                })
            }),
        ),
    ]
}

/// The author and its rule. The author the markup names (JSON-LD, meta, a byline
/// element), unless it names the site or the outlet: Chinese portals put their own
/// name in `<meta name="author">` and the reporter in the text, so such a markup author
/// gives way to one the text labels. A wire agency credited as the author filed the
/// story: it becomes the media (unless a source label names one) and no person is
/// named.
fn decide_author(
    p: &PageView<'_>,
    a: &Around<'_>,
    published: Option<Published>,
    m: &mut MediaChoice,
) -> (Option<String>, Option<&'static str>) {
    let marked_rules: Vec<Rule<'_>> = vec![
        ("JSON-LD author", Box::new(|| p.ld.author.clone())),
        (
            "author meta",
            Box::new(|| {
                media::AUTHOR_META_KEYS
                    .iter()
                    .find_map(|k| meta_value(p.metas, k).and_then(media::author_value))
            }),
        ),
        ("byline element", Box::new(|| byline_author(&p.els.byline))),
    ];
    let text_rules = text_author_rules(p, a, published);
    let outlet_media = |m: &MediaChoice| m.media.clone().filter(|_| !m.from_host);
    let title_tag = p.title_tag.as_deref();
    let (author, rule) = match decide(&marked_rules) {
        Some((author, rule))
            if media::names_an_outlet(&author, outlet_media(m).as_deref(), &p.names, title_tag) =>
        {
            // Else a byline element naming someone else (`<a rel="author">`
            // beside `<meta name="author" content="中時電子報">`).
            if let Some((t, rule)) = decide(&text_rules) {
                (Some(t), Some(rule))
            } else if let Some(b) = byline_author(&p.els.byline).filter(|b| *b != author) {
                (
                    Some(b),
                    Some("byline element (the markup author names the outlet)"),
                )
            } else {
                (Some(author), Some(rule))
            }
        }
        Some((author, rule)) => (Some(author), Some(rule)),
        None => decide(&text_rules).unzip(),
    };
    // `<a href="/author/kyodo/">Kyodo</a>`, `By Reuters`: a wire agency
    // credited as the author filed the story.
    if let Some(agency) = author.as_deref().and_then(media::wire_agency) {
        if m.labelled.is_none() {
            m.media = Some(agency);
            m.from_host = false;
            m.rule = vec!["wire agency credited as the author"];
        }
        return (None, None);
    }
    let author = author.map(|author| {
        media::without_outlet_prefix(author, outlet_media(m).as_deref(), &p.names, title_tag)
    });
    (author, rule)
}

/// The attributes of a page decided by its rules, and which rule decided each.
struct Decided {
    title: Option<String>,
    published: Option<Published>,
    media: MediaChoice,
    outlet: Option<String>,
    author: Option<String>,
    decisions: Vec<Decision>,
}

/// Decides each attribute in turn: the headline first (the lines around it are where
/// bylines, datelines and source labels are read), then the publish time, the media, the
/// outlet and the author (a wire agency credited as the author may become the media).
fn decide_attributes(p: &PageView<'_>) -> Decided {
    let (title, title_rule) = decide_title(p);
    let around = Around::find(p, title.as_deref());
    let published = decide_published(p, &around);
    let mut media = decide_media(p, &around, title.as_deref(), published);
    let (outlet, outlet_rule) = site_outlet(
        p.metas,
        p.ld.publisher.as_deref(),
        p.title_tag.as_deref(),
        &p.names,
    )
    .unzip();
    let (author, author_rule) = decide_author(p, &around, published, &mut media);
    let decisions = vec![
        Decision::new("title", title_rule.map(str::to_string)),
        Decision::new(
            "published",
            published.map(|p| format!("{} (the best scored candidate)", p.from.as_str())),
        ),
        Decision::new(
            "media",
            (!media.rule.is_empty()).then(|| media.rule.join(", ")),
        ),
        Decision::new(
            "outlet",
            Some(outlet_rule.unwrap_or("host (no site name)").to_string()),
        ),
        Decision::new("author", author_rule.map(str::to_string)),
    ];
    Decided {
        title,
        published,
        media,
        outlet,
        author,
        decisions,
    }
}

/// Extracts the attributes of a parsed page (all but its links); also the
/// base URL of its links and its raw link `href`s.
fn extract_doc<'a>(doc: &'a Html, url: &Url, ctx: &TimeContext) -> (Extracted, Url, Vec<&'a str>) {
    let mut els = scan::PageElements::collect(doc, &COMMENT_DATA_ATTRS);
    let hrefs = std::mem::take(&mut els.links);
    let metas = meta_pairs(&els.meta);
    let ld = jsonld(&els.jsonld);
    let base = els
        .base_href
        .and_then(|h| url.join(h.trim()).ok())
        .unwrap_or_else(|| url.clone());
    let body_text = visible_text(doc);
    let language = detect_language(&body_text, els.html_lang);
    let (comments, participants) = extract_counts(&els, &ld, &body_text);
    let chinese = language.as_deref() == Some("zh");
    let article_text = text::article_text(doc);
    let decided = decide_attributes(&PageView::new(
        url,
        ctx,
        &els,
        &metas,
        &ld,
        language.as_deref(),
        &body_text,
        &article_text,
    ));
    let main_text = if article_text.is_empty() {
        &body_text
    } else {
        &article_text
    };
    let (keywords, tokens) = keywords_and_tokens(main_text, chinese);
    let Decided {
        title,
        published,
        media,
        outlet,
        author,
        decisions,
    } = decided;
    let extracted = Extracted {
        title,
        published: published.map(|p| p.utc),
        published_from: published.map(|p| p.from),
        published_local: published.map(|p| p.local),
        media: media.media,
        media_from_host: media.from_host,
        outlet,
        author,
        decisions,
        comments,
        participants,
        keywords,
        tokens,
        links: Vec::new(),
        embeds: resolve_embeds(&els.embeds, &base, &Limits::default()),
        language,
        body_text,
        article_text,
        limits: LimitReport::default(),
    };
    (extracted, base, hrefs)
}

#[cfg(test)]
mod large_page_tests {
    use super::*;

    fn u(s: &str) -> Url {
        Url::parse(s).unwrap_or_else(|_| Url::parse("http://x.invalid/").expect("url"))
    }

    #[test]
    fn streamed_links_match_the_dom_links() {
        let html = r#"<html><head><base href="/docs/"><link rel="next" href="p2.html">
            <link rel="stylesheet" href="s.css"><script>var s = '<a href="/not-a-link">';</script>
            <style>a[href="/nor-this"] {}</style></head>
            <body><a href="a.html">A</a> <a href='a.html#frag'>again</a> <area href="/map">
            <a href="mailto:x@y">mail</a> <a>no href</a> <A HREF="UP.html">up</A></body></html>"#;
        let base = u("http://e.com/docs/");
        let doc = Html::parse_document(html);
        let (_, dom_base, hrefs) =
            extract_doc(&doc, &u("http://e.com/index.html"), &TimeContext::default());
        assert_eq!(dom_base, base);
        let limits = Limits::default();
        let mut sink = LinkSink::new(&base, &limits);
        sink.offer_all(&hrefs);
        let dom_links = sink.finish();
        assert_eq!(stream_links(html, &base, &limits), dom_links);
        assert_eq!(dom_links.links.len(), 4, "{dom_links:?}");
        assert!(!dom_links
            .links
            .iter()
            .any(|l| l.contains("not-a-link") || l.contains("nor-this")));
    }

    /// A page like WeChat's articles: ~600 KB of inline scripts and styles
    /// in its head, then a small body with the headline and the time.
    fn script_heavy_page(script_bytes: usize) -> String {
        let mut html = String::from("<html><head><title>t</title>");
        let mut n = 0;
        while html.len() < script_bytes {
            // A `<` inside the script and a comment-looking string are not tags.
            html.push_str(&format!(
                "<script>var a{n} = 1 < 2 ? \"<div>\" : '<!--'; /* {} */</script>\n<style>.c{n} {{ color: red }}</style>\n",
                "x".repeat(400)
            ));
            n += 1;
        }
        html.push_str(
            "<!-- a comment with <a href=\"/not-a-link\"> in it --></head><body>\
             <h1 id=\"activity-name\">一个很长的新闻标题：某地发布新规</h1>\
             <div class=meta>发布时间：2019-09-07 13:43:45</div>\
             <div id=js_content><p>正文。</p><a href=\"/next.html\">next</a></div></body></html>",
        );
        html
    }

    #[test]
    fn scripts_and_styles_do_not_count_towards_the_dom_budget() {
        let html = script_heavy_page(620_000);
        assert!(html.len() > LARGE_PAGE_BYTES);
        assert_eq!(large_page_cut(&html), html.len());
        let x = extract(&html, &u("http://e.com/a"));
        assert_eq!(x.published_from, Some(PublishedFrom::Text), "{x:?}");
        assert_eq!(
            x.published_local.map(|t| t.naive_local().to_string()),
            Some("2019-09-07 13:43:45".to_string())
        );
        assert_eq!(x.links, vec!["http://e.com/next.html".to_string()]);
        // Past the prefix bound the cut is a tag outside the scripts.
        let huge = script_heavy_page(LARGE_PAGE_PREFIX_BYTES + 200_000);
        let cut = large_page_cut(&huge);
        assert!(
            (LARGE_PAGE_PREFIX_BYTES - 1_000..=LARGE_PAGE_PREFIX_BYTES).contains(&cut),
            "{cut}"
        );
        assert!(huge[cut..].starts_with("<script>") || huge[cut..].starts_with("<style>"));
        // Markup still counts: a page of markup is cut near LARGE_PAGE_BYTES.
        let mut markup = String::from("<html><body>");
        while markup.len() < LARGE_PAGE_BYTES + 50_000 {
            markup.push_str("<p><span>x</span> <b>y</b></p>");
        }
        let cut = large_page_cut(&markup);
        assert!(
            cut > LARGE_PAGE_BYTES - 100 && cut <= LARGE_PAGE_BYTES,
            "{cut}"
        );
        assert_eq!(&markup[cut..cut + 1], "<");
        // A script that never closes runs to the end: cut at the bound.
        let open = format!(
            "<html><head><script>{}",
            "y".repeat(LARGE_PAGE_PREFIX_BYTES)
        );
        assert_eq!(large_page_cut(&open), LARGE_PAGE_BYTES);
    }

    #[test]
    fn a_large_page_keeps_its_title_and_every_link() {
        let mut html = String::from("<html><head><title>Big page</title></head><body>");
        let mut n = 0;
        while html.len() <= LARGE_PAGE_BYTES + 100_000 {
            html.push_str(&format!(
                "<p><span class=k>fn</span> item {n} <a href=\"/i{n}.html\">i{n}</a></p>"
            ));
            n += 1;
        }
        html.push_str("<a href=\"/the-last.html\">last</a></body></html>");
        let x = extract(&html, &u("http://e.com/"));
        assert_eq!(x.title.as_deref(), Some("Big page"));
        assert_eq!(x.links.len(), n + 1);
        assert_eq!(
            x.links.last().map(String::as_str),
            Some("http://e.com/the-last.html")
        );
        // The DOM prefix's links and the streamed rest are the whole page's
        // links in order, wherever the prefix ends.
        let whole = stream_links(&html, &u("http://e.com/"), &Limits::default());
        assert_eq!(x.links, whole.links);
        // (One repeated unit is ~70 bytes, its `<a href>` tag ~20: some of
        // these shifts put LARGE_PAGE_BYTES inside a tag.)
        for shift in (1..72).step_by(7) {
            let padded = format!("{}{html}", " ".repeat(shift));
            let y = extract(&padded, &u("http://e.com/"));
            assert_eq!(y.links, whole.links, "shifted by {shift}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streamed_embeds_are_the_extracted_ones() {
        let page = r#"<html><head><base href="/static/"><link rel="stylesheet" href="a.css">
            <link rel="icon" href="/favicon.ico"><script src="app.js"></script>
            <script>var s = "<img src='no.png'>";</script></head><body>
            <noscript><img src="pixel.gif"></noscript>
            <img src="data:image/gif;base64,R0lGOD" data-src="lazy.png"><img src="a.png">
            <video src="v.mp4" poster="p.jpg"></video><audio><source src="s.ogg"></audio>
            <textarea><img src="not.png"></textarea><img src="a.png"></body></html>"#;
        let url = Url::parse("http://example.com/news/1.html").unwrap();
        let streamed = stream_embeds(page, &url);
        assert_eq!(streamed, extract(page, &url).embeds);
        let urls: Vec<&str> = streamed.iter().map(|e| e.url.as_str()).collect();
        assert_eq!(
            urls,
            [
                "http://example.com/static/a.css",
                "http://example.com/favicon.ico",
                "http://example.com/static/app.js",
                "http://example.com/static/lazy.png",
                "http://example.com/static/a.png",
                "http://example.com/static/v.mp4",
                "http://example.com/static/p.jpg",
                "http://example.com/static/s.ogg",
            ]
        );
        // And on the labelled real pages.
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pages");
        let mut pages = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().and_then(|e| e.to_str()) != Some("html") {
                continue;
            }
            let html = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
            let url = Url::parse("https://news.example.cn/2024/03/10/a.html").unwrap();
            assert_eq!(
                stream_embeds(&html, &url),
                extract(&html, &url).embeds,
                "{}",
                path.display()
            );
            pages += 1;
        }
        assert!(pages >= 20, "{pages} fixture pages");
    }

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap_or_else(|_| Url::parse("http://invalid.invalid/").expect("static url"))
    }

    #[test]
    fn title_prefers_og_then_cleaned_title_then_h1() {
        let u = url("http://example.com/a");
        let e = extract(
            r#"<html><head><meta property="og:title" content=" OG  title "><title>T - Site</title></head></html>"#,
            &u,
        );
        assert_eq!(e.title.as_deref(), Some("OG title"));
        let e = extract("<title>Storm passes - CNN.com</title>", &u);
        assert_eq!(e.title.as_deref(), Some("Storm passes"));
        let e = extract(
            "<title>\n短缺药品保供稳价 全力保障临床用药需求-新华网\n</title>",
            &u,
        );
        assert_eq!(
            e.title.as_deref(),
            Some("短缺药品保供稳价 全力保障临床用药需求")
        );
        let e = extract("<body><h1>Only a heading</h1></body>", &u);
        assert_eq!(e.title.as_deref(), Some("Only a heading"));
    }

    /// Wikipedia's JSON-LD is wrapped in `<![CDATA[ … ]]>`.
    #[test]
    fn jsonld_in_cdata() {
        let u = url("https://en.wikipedia.org/wiki/Hermitian_matrix");
        let e = extract(
            "<script type=\"application/ld+json\">\n<![CDATA[\n{\"@type\":\"Article\",\"datePublished\":\"2003-02-28T21:51:08Z\",\"author\":{\"@type\":\"Organization\",\"name\":\"Contributors to Wikimedia projects\"}}\n]]>\n</script><h1>Hermitian matrix</h1><p>x</p>",
            &u,
        );
        assert_eq!(
            e.published.map(|d| d.to_rfc3339()).as_deref(),
            Some("2003-02-28T21:51:08+00:00")
        );
        assert_eq!(e.published_from, Some(PublishedFrom::Jsonld));
        assert_eq!(without_cdata(" //<![CDATA[\n{}\n//]]> "), "{}");
        assert_eq!(without_cdata("/*<![CDATA[*/{\"a\":1}/*]]>*/"), "{\"a\":1}");
        assert_eq!(
            without_cdata(" {\"a\":\"<![CDATA[\"} "),
            "{\"a\":\"<![CDATA[\"}"
        );
    }

    /// news.az-style pages: the logo is the first `<h1>`; the byline date
    /// follows the article's own `<h1>`.
    #[test]
    fn the_title_line_is_the_chosen_titles() {
        let h1s = ["News.az".to_string(), "Envoy says".to_string()];
        let lines = ["News.az", "Politics", "Envoy says", "13 Oct 2020 18:29"];
        assert_eq!(title_line(&lines, Some("Envoy says"), &h1s), Some(2));
        assert_eq!(title_line(&lines, None, &h1s), Some(0));
        // A headline set on two lines: the second.
        let lines = [
            "首页",
            "长三角一体化发展再提速",
            "三省一市签署合作协议",
            "2024-05-22 14:03:11",
        ];
        assert_eq!(
            title_line(
                &lines,
                Some("长三角一体化发展再提速 三省一市签署合作协议"),
                &[]
            ),
            Some(2)
        );
    }

    #[test]
    fn json_ld_authors_are_listed_as_their_script_lists_them() {
        let page = |a: &str, b: &str| {
            format!(
                r#"<script type="application/ld+json">{{"@type":"NewsArticle","author":[{{"@type":"Person","name":"{a}"}},{{"@type":"Person","name":"{b}"}}]}}</script><h1>T</h1><p>x</p>"#
            )
        };
        let u = url("https://www.example.com/a");
        let e = extract(&page("周以寧", "郭明哲"), &u);
        assert_eq!(e.author.as_deref(), Some("周以寧、郭明哲"));
        let e = extract(&page("Jane Doe", "John Roe"), &u);
        assert_eq!(e.author.as_deref(), Some("Jane Doe, John Roe"));
    }

    #[test]
    fn a_labelled_wall_clock_takes_the_offset_of_a_meta_of_its_minute() {
        // `.com`, English: no default zone but UTC. The visible, labelled
        // time wins; the meta of the same minute says where its clock is.
        let page = r#"<html lang="en"><head>
            <meta property="article:published_time" content="2024-12-10T17:42:00+09:00">
            </head><body><h1>Shipyards bag most LNG carrier orders</h1>
            <div class="byline"><span>Published: 10 Dec. 2024, 17:42</span>
            <span>Updated: 10 Dec. 2024, 20:15</span></div>
            <p>Korean shipbuilders won 11 of the 16 carriers ordered worldwide last month.</p>
            </body></html>"#;
        let e = extract(page, &url("https://daily.example.com/news/a"));
        assert_eq!(
            e.published.map(|d| d.to_rfc3339()).as_deref(),
            Some("2024-12-10T08:42:00+00:00")
        );
        // A `Z` of the same minute says nothing of the clock: a `.cn` page
        // stays in Beijing time.
        let page = page
            .replace("+09:00", "Z")
            .replace("lang=\"en\"", "lang=\"zh\"");
        let e = extract(&page, &url("https://news.example.cn/a"));
        assert_eq!(
            e.published.map(|d| d.to_rfc3339()).as_deref(),
            Some("2024-12-10T09:42:00+00:00")
        );
    }

    #[test]
    fn published_from_meta_jsonld_time_and_url() {
        let u = url("http://example.com/a");
        let e = extract(
            r#"<meta property="article:published_time" content="2013-12-30T14:42:01-07:00">"#,
            &u,
        );
        assert_eq!(
            e.published.map(|d| d.to_rfc3339()).as_deref(),
            Some("2013-12-30T21:42:01+00:00")
        );
        let e = extract(
            r#"<script type="application/ld+json">{"@graph":[{"@type":"NewsArticle","datePublished":"2013-12-30T14:42:01-0700"}]}</script>"#,
            &u,
        );
        assert_eq!(
            e.published.map(|d| d.to_rfc3339()).as_deref(),
            Some("2013-12-30T21:42:01+00:00")
        );
        // WordPress marks a post never updated `published updated`: the
        // publish time, not an update.
        let e = extract(
            r#"<h4>am <time class="date updated published" datetime="2020-02-23T10:07:02+01:00">23. Februar 2020</time></h4><p>x</p>"#,
            &u,
        );
        assert_eq!(
            e.published.map(|d| d.to_rfc3339()).as_deref(),
            Some("2020-02-23T09:07:02+00:00")
        );
        assert_eq!(e.published_from, Some(PublishedFrom::Time));
        // A `datetime` that is no date: the visible text.
        let e = extract(
            r#"<div><time datetime="01-11-2023 10:29">1. November 2023 10:29</time></div><p>x</p>"#,
            &u,
        );
        assert_eq!(
            e.published.map(|d| d.to_rfc3339()).as_deref(),
            Some("2023-11-01T10:29:00+00:00")
        );
        assert_eq!(e.published_from, Some(PublishedFrom::Time));
        let e = extract(r#"<p><time datetime="2024-02-29">29 Feb</time></p>"#, &u);
        assert_eq!(
            e.published.map(|d| d.to_rfc3339()).as_deref(),
            Some("2024-02-29T00:00:00+00:00")
        );
        let e = extract(
            "<p>none</p>",
            &url("http://www.news.cn/fortune/2023-11/17/c_1129981476.htm"),
        );
        assert_eq!(
            e.published.map(|d| d.date_naive().to_string()).as_deref(),
            Some("2023-11-17")
        );
        assert!(extract("<p>none</p>", &u).published.is_none());
        // Sina writes this key with a space; a .cn page without an offset is
        // read in Asia/Shanghai.
        let e = extract(
            r#"<meta name="weibo: article:create_at" content="2024-03-08 10:25:44">"#,
            &url("https://news.sina.com.cn/c/2024-03-08/doc-x.shtml"),
        );
        assert_eq!(
            e.published.map(|d| d.to_rfc3339()).as_deref(),
            Some("2024-03-08T02:25:44+00:00")
        );
        assert_eq!(e.published_from, Some(PublishedFrom::Meta));
    }

    #[test]
    fn a_modified_time_stands_in_only_when_no_publish_time_is_stated() {
        let u = url("http://example.com/a");
        let at = |html: &str| {
            let e = extract(html, &u);
            (
                e.published.map(|d| d.to_rfc3339()),
                e.published_from.map(PublishedFrom::as_str),
            )
        };
        let modified = r#"<meta property="article:modified_time" content="2021-05-06T07:08:09Z">"#;
        assert_eq!(
            at(modified),
            (Some("2021-05-06T07:08:09+00:00".into()), Some("modified"))
        );
        // Beside a publish time it loses, wherever that one is stated.
        let both = format!(
            r#"{modified}<h1>Headline of the test</h1><p>Published: 2021-05-01 10:00</p><p>x</p>"#
        );
        assert_eq!(at(&both).1, Some("text"));
        // JSON-LD dateModified, `<time class="updated">`, an `Aktualisiert:` label.
        assert_eq!(
            at(r#"<script type="application/ld+json">{"@type":"NewsArticle","dateModified":"2020-01-02"}</script><p>x</p>"#).1,
            Some("modified")
        );
        assert_eq!(
            at(r#"<p><time class="updated" datetime="2019-03-04T05:06:00Z">4 March</time></p>"#).1,
            Some("modified")
        );
        assert_eq!(
            at("<p>Viel Text hier.</p><p class=info>Aktualisiert: 30.12.2016</p>"),
            (Some("2016-12-30T00:00:00+00:00".into()), Some("modified"))
        );
        // A comment's date is no stand-in.
        assert_eq!(
            at("<p>Text.</p><p>Comment 2016-12-30 by Joe</p><p>Reply: 2016-12-31</p>").1,
            None
        );
    }

    #[test]
    fn the_reporter_of_the_text_over_the_portal_in_the_markup() {
        let u = url("http://tech.example.com/19/1125/a.html");
        // `<meta name="author">` names the portal (the start of the title's
        // last segment): the reporter the text labels wins.
        let portal = "<html><head><title>亚马逊海外购登陆拼多多_网易科技</title>\
            <meta name=\"author\" content=\"网易\"></head><body><h1>亚马逊海外购登陆拼多多</h1>\
            <div>2019-11-25 11:01:53 来源: 新京报</div><div class=\"post_text\">\
            <p>新京报讯（记者 陆一夫）11月25日，新京报记者登录拼多多全球购页面发现，亚马逊海外购与拼多多达成合作。</p>\
            <p>亚马逊中国方面表示，限时快闪店将带来逾千款海外正品的优惠折扣。</p></div></body></html>";
        let x = extract(portal, &u);
        assert_eq!(x.author.as_deref(), Some("陆一夫"));
        assert_eq!(x.media.as_deref(), Some("新京报"));
        // Without a labelled reporter the markup's author stands.
        let alone = portal.replace("（记者 陆一夫）", "");
        assert_eq!(extract(&alone, &u).author.as_deref(), Some("网易"));
        // A related list's `<span class="author">黄斌汉：</span>` is no byline.
        let listed = "<html><head><title>中铁总辟谣称消息不实</title></head><body>\
            <h1>中铁总辟谣称消息不实</h1><div>2018年12月28日 19:55 新京报</div>\
            <div class=\"article\"><p>新京报快讯（记者 裴剑飞）今日有网友爆料，有60万个账号在暗网低价出售。</p>\
            <p>中国铁路总公司表示消息不实。</p></div><ul><li><a href=\"/b\">\
            <span class=\"author\">黄斌汉：</span>新年大礼 雄安总体规划批复</a></li></ul></body></html>";
        assert_eq!(extract(listed, &u).author.as_deref(), Some("裴剑飞"));
    }

    /// China Times' shape: `<meta name="author">` is the outlet, the text
    /// labels no one, a `rel=author` link names the reporter.
    #[test]
    fn a_byline_element_over_an_outlet_in_the_markup() {
        let u = url("https://www.chinatimes.com/realtimenews/20180916001767-260402");
        let page = "<html><head><title>悲慟！北市士林年邁母子 住處上吊自殺身亡 - 中時電子報</title>\
            <meta name=\"author\" content=\"中時電子報\"><meta property=\"og:site_name\" content=\"中時電子報\"></head>\
            <body><h1>悲慟！北市士林年邁母子 住處上吊自殺身亡</h1>\
            <div class=\"rp_name\"><a href=\"/reporter/899\" rel=\"author\">謝明俊</a></div>\
            <article><p>台北市士林區一處公寓今天下午傳出母子在住處身亡，警方到場後確認兩人已無生命跡象。</p>\
            <p>警方表示，詳細原因仍待調查，已報請檢察官相驗。</p></article></body></html>";
        assert_eq!(extract(page, &u).author.as_deref(), Some("謝明俊"));
        // Without it the markup's author stands.
        let alone = page.replace("rel=\"author\">謝明俊", ">謝明俊");
        assert_eq!(extract(&alone, &u).author.as_deref(), Some("中時電子報"));
    }

    /// Several authors' links side by side, microdata's name inside a byline
    /// element, a link to an author's page under the headline; a time with
    /// `GMT+8` in a `<time>` of spans.
    #[test]
    fn author_links_microdata_names_and_a_time_in_spans() {
        let u = url("https://www.example.com/world/a-2024-11-25/");
        let body = "<p>BEIJING, Nov 25 - China's manufacturing activity expanded for a second straight month in November.</p>\
            <p>The official purchasing managers' index rose to 50.3 from 50.1 in October, above the 50-point mark.</p>";
        let page = format!(
            "<html><head><title>China's factory activity returns to growth</title></head><body>\
            <h1>China's factory activity returns to growth</h1>\
            <div><span class=\"info\">By <a rel=\"author\" href=\"/authors/joe-cash/\">Joe Cash</a> and \
            <a rel=\"author\" href=\"/authors/ellen-zhang/\">Ellen Zhang</a></span>\
            <time><span>November 25, 2024</span><span>3:05 PM GMT+8</span><span>Updated 2 hours ago</span></time></div>\
            <article>{body}</article></body></html>"
        );
        let ctx = TimeContext {
            fetched: chrono::TimeZone::with_ymd_and_hms(&Utc, 2024, 11, 25, 10, 0, 0)
                .single()
                .expect("valid"),
            zone: None,
            hint: None,
        };
        let x = extract_with(&page, &u, &ctx);
        assert_eq!(x.author.as_deref(), Some("Joe Cash and Ellen Zhang"));
        assert_eq!(
            x.published.map(|d| d.to_rfc3339()).as_deref(),
            Some("2024-11-25T07:05:00+00:00")
        );
        // One link: its name.
        let one = page.replace(
            " and <a rel=\"author\" href=\"/authors/ellen-zhang/\">Ellen Zhang</a>",
            "",
        );
        assert_eq!(extract(&one, &u).author.as_deref(), Some("Joe Cash"));
        // A link to the author's page, not marked as the author's.
        let linked = one.replace("rel=\"author\" ", "");
        assert_eq!(extract(&linked, &u).author.as_deref(), Some("Joe Cash"));
        // One listed under the article is another item's.
        let listed = format!(
            "<html><head><title>China's factory activity returns to growth</title></head><body>\
            <h1>China's factory activity returns to growth</h1><article>{body}</article>\
            <ul><li><a href=\"/x\">Yuan weakens</a> <a href=\"/authors/sam-holmes/\">Sam Holmes</a></li></ul></body></html>"
        );
        assert_eq!(extract(&listed, &u).author, None);
        // Microdata's name, not the badge beside it.
        let zhihu = format!(
            "<html><head><title>如何看待国产大飞机C919开通新航线？</title></head><body>\
            <h1>如何看待国产大飞机C919开通新航线？</h1><div class=\"Post-Author\"><div itemprop=\"author\">\
            <meta itemprop=\"name\" content=\"航空观察员老李\"><a href=\"/people/laoli\">航空观察员老李</a>\
            <div>民航从业者</div></div></div><article>{body}</article></body></html>"
        );
        assert_eq!(
            extract(&zhihu, &url("https://zhuanlan.zhihu.com/p/1"))
                .author
                .as_deref(),
            Some("航空观察员老李")
        );
    }

    /// Baijiahao's `发布时间：10-08 12:00` read years later: the year of the
    /// page's modified time, not the fetch year.
    #[test]
    fn a_day_without_its_year_takes_a_modified_times_year() {
        let u = url("https://baijiahao.baidu.com/s?id=1646805345");
        let page = "<html><head><title>英国美女在殡仪馆工作太痛苦，转行当美人鱼</title>\
            <meta itemprop=\"dateUpdate\" content=\"2019-10-08 12:00:57\"></head><body>\
            <h1>英国美女在殡仪馆工作太痛苦，转行当美人鱼</h1><p>加拿大必读</p><p>发布时间：10-08 12:00</p>\
            <div class=\"article\"><p>英国汉普郡贝辛斯托克的一位女士放弃了她在殡仪馆的工作，转而从事水下生活的工作。</p>\
            <p>曾在殡仪馆任职，每天和死亡打交道，28岁的茉莉患有纤维肌痛。</p></div></body></html>";
        let ctx = TimeContext {
            fetched: chrono::TimeZone::with_ymd_and_hms(&Utc, 2026, 3, 2, 0, 0, 0)
                .single()
                .expect("valid"),
            zone: None,
            hint: None,
        };
        let x = extract_with(page, &u, &ctx);
        assert_eq!(
            x.published_local
                .map(|d| d.format("%Y-%m-%d %H:%M").to_string())
                .as_deref(),
            Some("2019-10-08 12:00")
        );
        assert_eq!(x.published_from, Some(PublishedFrom::Text));
    }

    #[test]
    fn a_byline_that_ends_at_its_date_labels_it() {
        let u = url("http://example.com/a");
        let day = |html: &str| {
            extract(html, &u)
                .published
                .map(|d| d.date_naive().to_string())
        };
        let page = |line: &str| {
            format!("<p>Some words of a menu</p><p>More text of the page, long enough.</p><div>{line}</div><p>Body text.</p>")
        };
        assert_eq!(
            day(&page("Submitted by Jane Roe on Mon, 2017-05-22 10:00")).as_deref(),
            Some("2017-05-22")
        );
        assert_eq!(
            day(&page("Author: Bo Berg am 29.12.2010, 13:36 Uhr")).as_deref(),
            Some("2010-12-29")
        );
    }

    #[test]
    fn parse_date_formats() {
        let ymd = |s: &str| parse_date(s).map(|d| d.format("%Y-%m-%d %H:%M").to_string());
        assert_eq!(
            ymd("Saturday, December 27, 2014, 12:06 PM").as_deref(),
            Some("2014-12-27 12:06")
        );
        assert_eq!(
            ymd("2023年11月17日 20:52").as_deref(),
            Some("2023-11-17 20:52")
        );
        assert_eq!(
            ymd("Wed, 27 Nov 2013 08:36:32 GMT").as_deref(),
            Some("2013-11-27 08:36")
        );
        assert_eq!(
            ymd("2013-11-27T08:36:32.123Z").as_deref(),
            Some("2013-11-27 08:36")
        );
        assert_eq!(ymd("not a date"), None);
    }

    #[test]
    fn an_outlets_short_name_before_a_chinese_reporter_is_cut() {
        let u = url("https://finance.caixin.com/2024-09-27/102240000.html");
        let page = |author: &str, site: &str| {
            format!(
                r#"<html><head><title>央行宣布降准_金融频道_{site}</title>
                <meta name="author" content="{author}"><meta property="og:site_name" content="{site}">
                </head><body><h1>央行宣布降准</h1><p>正文。</p></body></html>"#
            )
        };
        let author = |a: &str, site: &str| extract(&page(a, site), &u).author;
        assert_eq!(author("财新 吴雨俭", "财新网").as_deref(), Some("吴雨俭"));
        // Not before other words, and not when the first word is no outlet.
        assert_eq!(
            author("Reuters Staff", "Reuters").as_deref(),
            Some("Reuters Staff")
        );
        assert_eq!(author("王芳 李可", "财新网").as_deref(), Some("王芳、李可"));
    }

    #[test]
    fn media_falls_back_to_host() {
        let u = url("http://news.example.com/a");
        assert_eq!(
            extract(r#"<meta property="og:site_name" content="CNN">"#, &u)
                .media
                .as_deref(),
            Some("CNN")
        );
        assert_eq!(
            extract(r#"<meta name="source" content="新华社">"#, &u)
                .media
                .as_deref(),
            Some("新华社")
        );
        assert_eq!(
            extract("<p>x</p>", &u).media.as_deref(),
            Some("news.example.com")
        );
    }

    /// The outlet is the site, as its pages name it: the agency an article
    /// credits is its media, never its outlet; a page naming no site has none
    /// (its host stands for it).
    #[test]
    fn the_outlet_is_the_site_not_the_agency_it_credits() {
        let u = url("https://www.aljazeera.com/news/2017/03/x.html");
        let x = extract(
            r#"<meta property="og:site_name" content="Al Jazeera"><h1>Egypt</h1>
            <article><p>One paragraph of the story, long enough to be the article's text here.</p>
            <p>Source: AFP news agency</p></article>"#,
            &u,
        );
        assert_eq!(
            (x.media.as_deref(), x.outlet.as_deref()),
            (Some("AFP"), Some("Al Jazeera"))
        );
        // Each attribute names the rule that decided it.
        let rule = |a: &str| {
            x.decisions
                .iter()
                .find(|d| d.attribute == a)
                .map(|d| d.rule.clone())
        };
        assert_eq!(rule("media").as_deref(), Some("source label"));
        assert_eq!(rule("outlet").as_deref(), Some("og:site_name"));
        assert_eq!(rule("title").as_deref(), Some("first <h1>"));
        assert_eq!(rule("published").as_deref(), Some("none"));
        let hub = extract("<p>x</p>", &url("http://news.example.com/a"));
        assert_eq!(
            hub.decisions
                .iter()
                .map(|d| (d.attribute, d.rule.as_str()))
                .collect::<Vec<_>>(),
            [
                ("title", "none"),
                ("published", "none"),
                ("media", "host (no source names an outlet)"),
                ("outlet", "host (no site name)"),
                ("author", "none"),
            ]
        );
        let named = |html: &str| extract(html, &url("http://news.example.com/a")).outlet;
        assert_eq!(
            named(r#"<meta name="source" content="新华社"><p>x</p>"#),
            None
        );
        assert_eq!(
            named(r#"<meta property="og:site_name" content="example.com"><p>x</p>"#),
            None
        );
        assert_eq!(
            named(r#"<meta name="application-name" content="三立新聞網 SETN.COM"><p>x</p>"#)
                .as_deref(),
            Some("三立新聞網")
        );
        assert_eq!(
            named("<title>Storm hits the coast - The Daily Example</title><p>x</p>").as_deref(),
            Some("The Daily Example")
        );
    }

    /// Issue 42: the outlet's credit line in another form than its
    /// `og:site_name` (`Source:-Al Jazeera News` under Al Jazeera's
    /// articles) gives the site's name, so the outlet is one media; a
    /// shortener's host is none, and the page falls back to the site.
    #[test]
    fn a_credit_naming_the_site_takes_the_sites_name() {
        let u = url("https://www.aljazeera.com/news/2017/03/x.html");
        let page = |credit: &str| {
            format!(
                r#"<meta property="og:site_name" content="Al Jazeera"><h1>Egypt</h1>
                <article><p>One paragraph of the story, long enough to be the article's text here.</p>
                <p>{credit}</p></article>"#
            )
        };
        let media = |credit: &str| extract(&page(credit), &u).media;
        assert_eq!(
            media("Source:-Al Jazeera News").as_deref(),
            Some("Al Jazeera")
        );
        assert_eq!(media("Source: AFP news agency").as_deref(), Some("AFP"));
        assert_eq!(media("Source: bit.ly").as_deref(), Some("Al Jazeera"));
        let x = extract(
            r#"<meta name="source" content="bit.ly"><p>x</p>"#,
            &url("http://news.example.com/a"),
        );
        assert_eq!(
            (x.media.as_deref(), x.media_from_host),
            (Some("news.example.com"), true)
        );
    }

    #[test]
    fn counts_from_markup_and_chinese_patterns() {
        let u = url("http://example.com/");
        assert_eq!(
            extract(r#"<span class="comment-count">1,234 comments</span>"#, &u).comments,
            Some(1234)
        );
        assert_eq!(
            extract(r#"<meta itemprop="commentCount" content="56">"#, &u).comments,
            Some(56)
        );
        assert_eq!(
            extract(r#"<a data-comments="7">comments</a>"#, &u).comments,
            Some(7)
        );
        let e = extract("<div>网友评论(123)</div><div>已有4,567人参与</div>", &u);
        assert_eq!((e.comments, e.participants), (Some(123), Some(4567)));
        let e = extract("<div>89条评论</div><div>参与人数 1.2万</div>", &u);
        assert_eq!((e.comments, e.participants), (Some(89), Some(12000)));
        let e = extract(
            r#"<script type="application/ld+json">{"interactionStatistic":{"@type":"InteractionCounter","interactionType":"https://schema.org/CommentAction","userInteractionCount":"42"}}</script>"#,
            &u,
        );
        assert_eq!(e.comments, Some(42));
        assert_eq!(extract("<p>nothing here</p>", &u).comments, None);
    }

    #[test]
    fn body_text_skips_script_style_nav() {
        let e = extract(
            "<html><head><title>x</title><style>p{}</style></head><body><nav>Home About</nav><p>First  para</p><script>var a=1;</script><p>Second <b>bold</b></p></body></html>",
            &url("http://example.com/"),
        );
        assert_eq!(e.body_text, "First para\nSecond bold");
    }

    #[test]
    fn links_are_absolute_deduplicated_and_filtered() {
        let e = extract(
            r#"<base href="/root/"><a href="a.html#x">a</a><a href="a.html">again</a><a href="javascript:void(0)">j</a><a href="mailto:x@example.com">m</a><link rel="next" href="page2.html"><link rel="stylesheet" href="s.css">"#,
            &url("http://example.com/dir/page.html"),
        );
        assert_eq!(
            e.links,
            vec![
                "http://example.com/root/a.html",
                "http://example.com/root/page2.html"
            ]
        );
    }

    #[test]
    fn a_bylines_date_label_is_no_name() {
        for (v, want) in [
            ("Rajesh Kumar / TNN / Updated:", "Rajesh Kumar / TNN"),
            ("Jane Doe Last updated:", "Jane Doe"),
            ("作者：张三 发布时间：", "作者：张三"),
            ("发布时间：", ""),
            ("Jane Doe", "Jane Doe"),
            ("Jane Doe Editor:", "Jane Doe"),
        ] {
            assert_eq!(without_date_label(v), want, "{v}");
        }
        let u =
            Url::parse("https://timesofindia.indiatimes.com/india/a/articleshow/1.cms").unwrap();
        let page = r#"<html lang="en-IN"><body><h1>Winter session begins</h1>
            <div class="byline"><span><a href="/toireporter/author-rajesh-kumar-1.cms">Rajesh Kumar</a> / TNN / </span><span>Updated: Nov 25, 2024, 15:05 IST</span></div>
            <p>NEW DELHI: The session begins on Monday and will run until December 20.</p></body></html>"#;
        let x = extract(page, &u);
        assert_eq!(x.author.as_deref(), Some("Rajesh Kumar"));
    }

    #[test]
    fn language_and_keywords() {
        let zh = extract(
            "<p>短缺药品保供稳价，全力保障临床用药需求。国家卫生健康委表示，短缺药品保供稳价工作取得积极成效，药品供应保障能力不断提升。</p>",
            &url("http://example.com/"),
        );
        assert_eq!(zh.language.as_deref(), Some("zh"));
        assert!(zh.keywords.iter().any(|k| k == "短缺"), "{:?}", zh.keywords);
        let dated = extract(
            "<p>新华社北京11月17日电 2023年短缺药品保供稳价工作会商联动机制17日启动</p>",
            &url("http://example.com/"),
        );
        assert!(
            dated.keywords.iter().all(|k| k.parse::<u64>().is_err()),
            "{:?}",
            dated.keywords
        );
        assert!(zh.keywords.len() <= KEYWORD_COUNT);
        let en = extract(
            "<p>Forecasters expect the storm to clear before Thanksgiving; the storm brought snow, and forecasters warned travelers.</p>",
            &url("http://example.com/"),
        );
        assert_eq!(en.language.as_deref(), Some("en"));
        assert_eq!(en.keywords.first().map(String::as_str), Some("forecasters"));
        assert!(!en.keywords.iter().any(|k| k == "the"));
        let fr = extract(
            r#"<html lang="fr-FR"><p>Bonjour à tous</p></html>"#,
            &url("http://example.com/"),
        );
        assert_eq!(fr.language.as_deref(), Some("fr"));
    }

    #[test]
    fn malformed_html_never_panics() {
        let inputs = [
            "",
            "<",
            "<html><body><p>unclosed <b>bold <i>both</p></b>",
            "<meta content><meta name><a href>",
            "<script type=\"application/ld+json\">{not json</script>",
            "\u{0}\u{FFFD}<title>\u{0}</title>",
        ];
        for i in inputs {
            let _ = extract(i, &url("http://example.com/"));
        }
        let e = extract("<p>unclosed <b>bold", &url("http://example.com/"));
        assert_eq!(e.body_text, "unclosed bold");
    }
}

#[cfg(test)]
mod fuzz_regressions {
    use super::*;

    /// Regression (fuzz_html_extractor): a title with an unfinished entity
    /// before multi-byte characters sliced a string inside a character.
    #[test]
    fn unfinished_entity_before_multibyte_text() {
        let u = Url::parse("http://example.com/").expect("url");
        let x = extract("<title>&aA\u{10000}\u{1}\u{800}", &u);
        assert!(x.title.is_some_and(|t| t.contains('\u{800}')));
    }
}
