//! The facts a page's JSON-LD blocks state (publish and modified times,
//! headline, author, publisher, comment count), gathered in one walk over
//! every block.

use scraper::ElementRef;
use serde_json::Value;

use crate::counts::parse_count;
use crate::lines::is_han;
use crate::media;

/// Facts gathered from JSON-LD blocks.
#[derive(Default)]
pub(crate) struct JsonLd {
    /// `datePublished` of an article-typed object.
    pub(crate) published: Option<String>,
    /// `datePublished` of any other object (a web page, a list item).
    pub(crate) published_other: Option<String>,
    /// `dateModified` of an article-typed object.
    pub(crate) modified: Option<String>,
    pub(crate) publisher: Option<String>,
    pub(crate) headline: Option<String>,
    pub(crate) author: Option<String>,
    pub(crate) comments: Option<u64>,
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

pub(crate) fn jsonld(scripts: &[ElementRef<'_>]) -> JsonLd {
    let mut out = JsonLd::default();
    for script in scripts {
        let text: String = script.text().collect();
        if let Ok(v) = serde_json::from_str::<Value>(without_cdata(&text)) {
            walk_jsonld(&v, &mut out, 0);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract;
    use crate::tests::url;
    use crate::PublishedFrom;

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
}
