//! Reading the parsed page: an element's text as the page shows it, and the
//! meta tags as (key, content) pairs. Every attribute rule reads the page
//! through these, so they sit apart from the rules.

use scraper::ElementRef;

use crate::lines::squash;

/// An element's text, a `<br>` in it a space (`<h1>长三角一体化发展再提速<br>三省一市签署
/// 合作协议</h1>`: a headline of two clauses the page sets on two lines; `作者：郭轩<br>
/// 责任编辑：王小琳`: a byline's two labels).
pub(crate) fn element_text(e: &ElementRef<'_>) -> String {
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
pub(crate) fn meta_pairs(metas: &[ElementRef<'_>]) -> Vec<(String, String)> {
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

pub(crate) fn meta_value<'a>(metas: &'a [(String, String)], key: &str) -> Option<&'a str> {
    metas
        .iter()
        .find(|(k, v)| k == key && !v.trim().is_empty())
        .map(|(_, v)| v.trim())
}
