//! Attribute extraction from an HTML page: title, publish time, media source,
//! comment and participant counts, visible body text, keywords, language, links.
//!
//! Uses scraper (html5ever), which accepts any input the way browsers do, so
//! malformed markup never fails; every field is best-effort and optional.

use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

use chrono::{DateTime, NaiveDate, NaiveDateTime, TimeZone, Utc};
use jieba_rs::{Jieba, KeywordExtract, TfIdf};
use regex::Regex;
use scraper::{ElementRef, Html, Node, Selector};
use serde_json::Value;
use url::Url;

use crate::normalize::parse_normalized;

/// Number of keywords extracted per page.
pub const KEYWORD_COUNT: usize = 10;
/// Share of CJK characters above which a page is taken as Chinese.
pub const CJK_SHARE_ZH: f64 = 0.30;
/// At most this many characters of body text go to keyword extraction.
const KEYWORD_TEXT_CHARS: usize = 50_000;

/// Meta names/properties/itemprops giving the publish time, in priority order.
pub const PUBLISHED_META_KEYS: [&str; 14] = [
    "article:published_time",
    "og:published_time",
    "datepublished",
    "pubdate",
    "publishdate",
    "parsely-pub-date",
    "sailthru.date",
    "dc.date.issued",
    "dc.date",
    "dcterms.created",
    "date",
    "article_date_original",
    "publish-date",
    "pubtime",
];

/// Elements whose content is not body text. `footer` is page chrome; on the
/// LibreOffice help pages it also holds a CSS-hidden block naming the source
/// file, which is not text a reader sees.
const SKIPPED_ELEMENTS: [&str; 12] = [
    "script", "style", "nav", "noscript", "template", "svg", "iframe", "head", "object", "canvas",
    "select", "footer",
];

/// Elements that start a new line of body text.
const BLOCK_ELEMENTS: [&str; 31] = [
    "p",
    "div",
    "br",
    "li",
    "ul",
    "ol",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "tr",
    "table",
    "section",
    "article",
    "header",
    "footer",
    "aside",
    "main",
    "blockquote",
    "pre",
    "dd",
    "dt",
    "dl",
    "form",
    "hr",
    "figure",
    "figcaption",
    "address",
    "td",
];

/// Class/id fragments marking an element that holds a comment count.
const COMMENT_MARKERS: [&str; 8] = [
    "comment-count",
    "comment_count",
    "commentcount",
    "comments-count",
    "comments_count",
    "commentscount",
    "comment-num",
    "comment_num",
];

/// Class/id fragments marking an element that holds a participant count.
const PARTICIPANT_MARKERS: [&str; 4] = ["participant", "join-count", "join_num", "joincount"];

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

/// What [`extract`] finds in a page.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Extracted {
    /// `og:title`, else `<title>` without a site-name suffix, else the first `<h1>`.
    pub title: Option<String>,
    /// Publish time (meta tags, JSON-LD `datePublished`, `<time datetime>`, then a
    /// date in the URL path), in UTC; times without a zone are taken as UTC.
    pub published: Option<DateTime<Utc>>,
    /// Media source: `og:site_name`, JSON-LD publisher, meta `source` (the
    /// Chinese-press convention, e.g. 新华社), meta `author`, `application-name`,
    /// else the host.
    pub media: Option<String>,
    /// Comment count when the markup states one.
    pub comments: Option<u64>,
    /// Participant count when the markup states one.
    pub participants: Option<u64>,
    /// Visible text without script/style/nav/footer, one line per block element.
    pub body_text: String,
    /// Top keywords (jieba TF-IDF for Chinese, term frequency otherwise).
    pub keywords: Vec<String>,
    /// Absolute, normalised http(s) links (`<a href>`, `<area href>`, `<link rel=next>`),
    /// first occurrence order, no duplicates.
    pub links: Vec<String>,
    /// `zh` when CJK share is above 30 %, else the `<html lang>` primary subtag,
    /// else `en` for mostly-Latin text.
    pub language: Option<String>,
}

fn sel(s: &str) -> Selector {
    Selector::parse(s).expect("static selector is valid")
}

static SEL_META: LazyLock<Selector> = LazyLock::new(|| sel("meta"));
static SEL_TITLE: LazyLock<Selector> = LazyLock::new(|| sel("title"));
static SEL_H1: LazyLock<Selector> = LazyLock::new(|| sel("h1"));
static SEL_BASE: LazyLock<Selector> = LazyLock::new(|| sel("base[href]"));
static SEL_LINKS: LazyLock<Selector> = LazyLock::new(|| sel("a[href], area[href], link[href]"));
static SEL_JSONLD: LazyLock<Selector> =
    LazyLock::new(|| sel(r#"script[type="application/ld+json"]"#));
static SEL_TIME: LazyLock<Selector> = LazyLock::new(|| sel("time[datetime]"));
static SEL_HTML: LazyLock<Selector> = LazyLock::new(|| sel("html[lang]"));
static SEL_ITEMPROP_COMMENTS: LazyLock<Selector> =
    LazyLock::new(|| sel(r#"[itemprop="commentCount"]"#));
static SEL_ANY_MARKED: LazyLock<Selector> = LazyLock::new(|| sel("[class], [id]"));

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
static RE_URL_DATE: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?:^|[^0-9])((?:19|20)\d{2})[-/_]?(0[1-9]|1[0-2])[-/_]?(0[1-9]|[12]\d|3[01])(?:[^0-9]|$)")
});
static RE_ZH_DATE: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*日(?:\s*(\d{1,2})\s*[:：时]\s*(\d{1,2}))?")
});

/// The jieba segmenter with its default dictionary, built on first use.
static JIEBA: LazyLock<Jieba> = LazyLock::new(Jieba::new);
/// TF-IDF keyword extractor with jieba's default IDF table.
static TFIDF: LazyLock<TfIdf> = LazyLock::new(TfIdf::default);

/// Collapses runs of whitespace into one space and trims.
fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn element_text(e: &ElementRef<'_>) -> String {
    squash(&e.text().collect::<String>())
}

/// Meta tags as (lowercased key, content) in document order; the key is the
/// `property`, `name`, `itemprop` or `http-equiv` attribute.
fn meta_pairs(doc: &Html) -> Vec<(String, String)> {
    doc.select(&SEL_META)
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
            Some((key.trim().to_ascii_lowercase(), content.to_string()))
        })
        .collect()
}

fn meta_value<'a>(metas: &'a [(String, String)], key: &str) -> Option<&'a str> {
    metas
        .iter()
        .find(|(k, v)| k == key && !v.trim().is_empty())
        .map(|(_, v)| v.trim())
}

/// Parses the date formats found in news pages; zone-less times are UTC.
pub fn parse_date(input: &str) -> Option<DateTime<Utc>> {
    let s = input.trim();
    if s.is_empty() {
        return None;
    }
    if let Ok(d) = DateTime::parse_from_rfc3339(s) {
        return Some(d.with_timezone(&Utc));
    }
    if let Ok(d) = DateTime::parse_from_rfc2822(s) {
        return Some(d.with_timezone(&Utc));
    }
    const ZONED: [&str; 4] = [
        "%Y-%m-%dT%H:%M:%S%z",
        "%Y-%m-%dT%H:%M:%S%.f%z",
        "%Y-%m-%d %H:%M:%S%z",
        "%Y-%m-%dT%H:%M%z",
    ];
    for f in ZONED {
        if let Ok(d) = DateTime::parse_from_str(s, f) {
            return Some(d.with_timezone(&Utc));
        }
    }
    const NAIVE: [&str; 9] = [
        "%Y-%m-%dT%H:%M:%S",
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%d %H:%M:%S",
        "%Y-%m-%d %H:%M",
        "%Y/%m/%d %H:%M:%S",
        "%Y/%m/%d %H:%M",
        "%A, %B %d, %Y, %I:%M %p",
        "%B %d, %Y %I:%M %p",
    ];
    for f in NAIVE {
        if let Ok(d) = NaiveDateTime::parse_from_str(s, f) {
            return Some(Utc.from_utc_datetime(&d));
        }
    }
    let trimmed_z = s.trim_end_matches('Z').trim_end_matches(" UTC");
    if trimmed_z != s {
        return parse_date(trimmed_z);
    }
    const DATES: [&str; 6] = [
        "%Y-%m-%d",
        "%Y/%m/%d",
        "%Y.%m.%d",
        "%Y%m%d",
        "%B %d, %Y",
        "%d %B %Y",
    ];
    for f in DATES {
        if let Ok(d) = NaiveDate::parse_from_str(s, f) {
            return d.and_hms_opt(0, 0, 0).map(|dt| Utc.from_utc_datetime(&dt));
        }
    }
    if let Some(c) = RE_ZH_DATE.captures(s) {
        let num = |i: usize| c.get(i).and_then(|m| m.as_str().parse::<u32>().ok());
        let date = NaiveDate::from_ymd_opt(num(1)? as i32, num(2)?, num(3)?)?;
        let dt = date.and_hms_opt(num(4).unwrap_or(0), num(5).unwrap_or(0), 0)?;
        return Some(Utc.from_utc_datetime(&dt));
    }
    None
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
    published: Option<String>,
    publisher: Option<String>,
    comments: Option<u64>,
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
            if out.published.is_none() {
                if let Some(Value::String(s)) = map.get("datePublished") {
                    out.published = Some(s.clone());
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

fn jsonld(doc: &Html) -> JsonLd {
    let mut out = JsonLd::default();
    for script in doc.select(&SEL_JSONLD) {
        let text: String = script.text().collect();
        if let Ok(v) = serde_json::from_str::<Value>(text.trim()) {
            walk_jsonld(&v, &mut out, 0);
        }
    }
    out
}

fn has_cjk(s: &str) -> bool {
    s.chars().any(is_han)
}

fn is_han(c: char) -> bool {
    matches!(c as u32, 0x4E00..=0x9FFF | 0x3400..=0x4DBF | 0x20000..=0x2A6DF | 0xF900..=0xFAFF)
}

/// Removes a trailing " - Site" / "_新华网" style suffix from a `<title>`.
pub fn clean_title(title: &str, h1s: &[String]) -> String {
    let title = squash(title);
    for h in h1s {
        if h.chars().count() >= 4 && title.starts_with(h.as_str()) {
            return h.clone();
        }
    }
    const SPACED: [&str; 6] = [" | ", " - ", " – ", " — ", " :: ", " _ "];
    if let Some((pos, sep)) = SPACED
        .iter()
        .filter_map(|sep| title.rfind(sep).map(|p| (p, *sep)))
        .max_by_key(|(p, _)| *p)
    {
        let (head, tail) = (&title[..pos], &title[pos + sep.len()..]);
        if !head.trim().is_empty() && tail.chars().count() < head.chars().count() {
            return head.trim().to_string();
        }
    }
    if has_cjk(&title) {
        if let Some(pos) = title.rfind(['-', '_', '|']) {
            let (head, tail) = (&title[..pos], &title[pos + 1..]);
            let tail_len = tail.chars().count();
            if tail_len > 0
                && tail_len <= 12
                && !tail.contains(' ')
                && head.chars().count() > tail_len
            {
                return head.trim().to_string();
            }
        }
    }
    title
}

fn extract_title(doc: &Html, metas: &[(String, String)]) -> Option<String> {
    if let Some(t) = meta_value(metas, "og:title")
        .map(squash)
        .filter(|t| !t.is_empty())
    {
        return Some(t);
    }
    let h1s: Vec<String> = doc
        .select(&SEL_H1)
        .map(|e| element_text(&e))
        .filter(|t| !t.is_empty())
        .collect();
    if let Some(t) = doc
        .select(&SEL_TITLE)
        .map(|e| element_text(&e))
        .find(|t| !t.is_empty())
    {
        return Some(clean_title(&t, &h1s));
    }
    h1s.into_iter().next()
}

fn extract_published(
    doc: &Html,
    metas: &[(String, String)],
    ld: &JsonLd,
    url: &Url,
) -> Option<DateTime<Utc>> {
    for key in PUBLISHED_META_KEYS {
        if let Some(d) = metas
            .iter()
            .filter(|(k, _)| k == key)
            .find_map(|(_, v)| parse_date(v))
        {
            return Some(d);
        }
    }
    if let Some(d) = ld.published.as_deref().and_then(parse_date) {
        return Some(d);
    }
    if let Some(d) = doc
        .select(&SEL_TIME)
        .filter_map(|t| t.value().attr("datetime"))
        .find_map(parse_date)
    {
        return Some(d);
    }
    let c = RE_URL_DATE.captures(url.path())?;
    let num = |i: usize| c.get(i).and_then(|m| m.as_str().parse::<u32>().ok());
    let date = NaiveDate::from_ymd_opt(num(1)? as i32, num(2)?, num(3)?)?;
    date.and_hms_opt(0, 0, 0)
        .map(|dt| Utc.from_utc_datetime(&dt))
}

fn extract_media(metas: &[(String, String)], ld: &JsonLd, url: &Url) -> Option<String> {
    meta_value(metas, "og:site_name")
        .map(squash)
        .or_else(|| ld.publisher.as_deref().map(squash))
        .or_else(|| meta_value(metas, "source").map(squash))
        .or_else(|| meta_value(metas, "author").map(squash))
        .or_else(|| meta_value(metas, "application-name").map(squash))
        .filter(|s| !s.is_empty())
        .or_else(|| url.host_str().map(str::to_string))
}

fn marked(e: &ElementRef<'_>, markers: &[&str]) -> bool {
    let v = e.value();
    [v.attr("class"), v.attr("id")]
        .into_iter()
        .flatten()
        .map(str::to_ascii_lowercase)
        .any(|s| markers.iter().any(|m| s.contains(m)))
}

fn extract_counts(doc: &Html, ld: &JsonLd, body_text: &str) -> (Option<u64>, Option<u64>) {
    let mut comments = ld.comments;
    if comments.is_none() {
        comments = doc.select(&SEL_ITEMPROP_COMMENTS).find_map(|e| {
            e.value()
                .attr("content")
                .and_then(parse_count)
                .or_else(|| parse_count(&element_text(&e)))
        });
    }
    if comments.is_none() {
        comments = doc
            .root_element()
            .descendants()
            .filter_map(ElementRef::wrap)
            .find_map(|e| {
                COMMENT_DATA_ATTRS
                    .iter()
                    .find_map(|a| e.value().attr(a).and_then(parse_count))
            });
    }
    if comments.is_none() {
        comments = doc
            .select(&SEL_ANY_MARKED)
            .filter(|e| marked(e, &COMMENT_MARKERS))
            .find_map(|e| parse_count(&element_text(&e)));
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
            doc.select(&SEL_ANY_MARKED)
                .filter(|e| marked(e, &PARTICIPANT_MARKERS))
                .find_map(|e| parse_count(&element_text(&e)))
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
            Node::Text(t) => {
                let piece = squash(t);
                if !piece.is_empty() {
                    if !out.is_empty() && !out.ends_with('\n') {
                        out.push(' ');
                    }
                    out.push_str(&piece);
                }
            }
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
                let children: Vec<_> = node.children().collect();
                stack.extend(children.into_iter().rev().map(Step::Visit));
            }
            Node::Document | Node::Fragment => {
                let children: Vec<_> = node.children().collect();
                stack.extend(children.into_iter().rev().map(Step::Visit));
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

/// Top keywords of `text`: jieba TF-IDF for Chinese, term frequency otherwise.
pub fn keywords(text: &str, chinese: bool) -> Vec<String> {
    let text: String = text.chars().take(KEYWORD_TEXT_CHARS).collect();
    if chinese {
        // Ask for more than needed: numbers ("17", "2023") are dropped afterwards.
        return TFIDF
            .extract_keywords(&JIEBA, &text, KEYWORD_COUNT * 3, Vec::new())
            .into_iter()
            .map(|k| k.keyword)
            .filter(|k| {
                !k.chars()
                    .all(|c| c.is_ascii_digit() || c.is_ascii_punctuation())
            })
            .take(KEYWORD_COUNT)
            .collect();
    }
    let mut counts: HashMap<String, u64> = HashMap::new();
    for word in text
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .map(|w| w.trim_matches('\'').to_lowercase())
        .filter(|w| w.chars().count() >= 3 && !w.chars().all(|c| c.is_ascii_digit()))
        .filter(|w| !STOP_WORDS.contains(&w.as_str()))
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

fn extract_links(doc: &Html, base: &Url) -> Vec<String> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for e in doc.select(&SEL_LINKS) {
        let v = e.value();
        if v.name() == "link" {
            let is_next = v.attr("rel").is_some_and(|r| {
                r.split_ascii_whitespace()
                    .any(|t| t.eq_ignore_ascii_case("next"))
            });
            if !is_next {
                continue;
            }
        }
        let Some(href) = v.attr("href") else { continue };
        if let Some(u) = parse_normalized(href, Some(base)) {
            let s = u.to_string();
            if seen.insert(s.clone()) {
                out.push(s);
            }
        }
    }
    out
}

/// Pages longer than this (bytes of decoded HTML) are not parsed into one
/// DOM: their attributes come from their first [`LARGE_PAGE_BYTES`] and their
/// links from a streaming tokenizer over the whole page. A DOM of a 10 MB page
/// (rust-doc's generated sources) took ~500 MB; a crawl of rust-doc peaked
/// at 976 MB resident with whole-page DOMs, 517 MB with a 1 MiB cut.
pub const LARGE_PAGE_BYTES: usize = 512 * 1024;

/// Extracts all attributes of a decoded HTML page fetched from `url`.
pub fn extract(html: &str, url: &Url) -> Extracted {
    if html.len() <= LARGE_PAGE_BYTES {
        return extract_dom(html, url).0;
    }
    let mut cut = LARGE_PAGE_BYTES;
    while !html.is_char_boundary(cut) {
        cut -= 1;
    }
    let (mut x, base) = extract_dom(&html[..cut], url);
    x.links = stream_links(html, &base);
    x
}

/// Links of `html` (`a[href]`, `area[href]`, `link[rel~=next][href]`, in
/// order, each once) found by the HTML tokenizer alone: memory stays flat
/// whatever the page's size.
pub fn stream_links(html: &str, base: &Url) -> Vec<String> {
    use html5ever::tendril::StrTendril;
    use html5ever::tokenizer::states::RawKind;
    use html5ever::tokenizer::{
        BufferQueue, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts,
    };

    struct Links<'a> {
        base: &'a Url,
        seen: std::cell::RefCell<HashSet<String>>,
        out: std::cell::RefCell<Vec<String>>,
    }

    impl TokenSink for Links<'_> {
        type Handle = ();

        fn process_token(&self, token: Token, _line: u64) -> TokenSinkResult<()> {
            let Token::TagToken(tag) = token else {
                return TokenSinkResult::Continue;
            };
            if tag.kind != TagKind::StartTag {
                return TokenSinkResult::Continue;
            }
            let attr = |name: &str| {
                tag.attrs
                    .iter()
                    .find(|a| &*a.name.local == name)
                    .map(|a| a.value.to_string())
            };
            match &*tag.name {
                // Their content is text, not markup.
                "script" => return TokenSinkResult::RawData(RawKind::ScriptData),
                "style" | "xmp" | "iframe" | "noembed" | "noframes" => {
                    return TokenSinkResult::RawData(RawKind::Rawtext)
                }
                "textarea" | "title" => return TokenSinkResult::RawData(RawKind::Rcdata),
                "a" | "area" => {}
                "link" => {
                    let next = attr("rel").is_some_and(|r| {
                        r.split_ascii_whitespace()
                            .any(|t| t.eq_ignore_ascii_case("next"))
                    });
                    if !next {
                        return TokenSinkResult::Continue;
                    }
                }
                _ => return TokenSinkResult::Continue,
            }
            if let Some(href) = attr("href") {
                if let Some(u) = parse_normalized(&href, Some(self.base)) {
                    let s = u.to_string();
                    if self.seen.borrow_mut().insert(s.clone()) {
                        self.out.borrow_mut().push(s);
                    }
                }
            }
            TokenSinkResult::Continue
        }
    }

    let sink = Links {
        base,
        seen: Default::default(),
        out: Default::default(),
    };
    let tok = Tokenizer::new(sink, TokenizerOpts::default());
    let input = BufferQueue::default();
    input.push_back(StrTendril::from_slice(html));
    let _ = tok.feed(&input);
    tok.end();
    tok.sink.out.take()
}

/// Extracts the attributes of `html` through its DOM; also the base URL of
/// its links.
fn extract_dom(html: &str, url: &Url) -> (Extracted, Url) {
    let doc = Html::parse_document(html);
    let metas = meta_pairs(&doc);
    let ld = jsonld(&doc);
    let base = doc
        .select(&SEL_BASE)
        .next()
        .and_then(|b| b.value().attr("href"))
        .and_then(|h| url.join(h.trim()).ok())
        .unwrap_or_else(|| url.clone());
    let body_text = visible_text(&doc);
    let html_lang = doc
        .select(&SEL_HTML)
        .next()
        .and_then(|h| h.value().attr("lang"));
    let language = detect_language(&body_text, html_lang);
    let (comments, participants) = extract_counts(&doc, &ld, &body_text);
    let chinese = language.as_deref() == Some("zh");
    let extracted = Extracted {
        title: extract_title(&doc, &metas),
        published: extract_published(&doc, &metas, &ld, url),
        media: extract_media(&metas, &ld, url),
        comments,
        participants,
        keywords: keywords(&body_text, chinese),
        links: extract_links(&doc, &base),
        language,
        body_text,
    };
    (extracted, base)
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
        let (x, dom_base) = extract_dom(html, &u("http://e.com/index.html"));
        assert_eq!(dom_base, base);
        assert_eq!(stream_links(html, &base), x.links);
        assert!(!x
            .links
            .iter()
            .any(|l| l.contains("not-a-link") || l.contains("nor-this")));
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
