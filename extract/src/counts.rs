//! Comment and participant counts: the count a page's markup states
//! (JSON-LD, microdata, data attributes, marked elements) or its Chinese
//! labels give (`评论(12)`, `1.2万人参与`), and the reading of a count.

use std::sync::LazyLock;

use regex::Regex;

use crate::dom::element_text;
use crate::scan;

/// Attributes holding a comment count directly.
pub(crate) const COMMENT_DATA_ATTRS: [&str; 3] =
    ["data-comments", "data-comment-count", "data-comments-count"];

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

pub(crate) fn extract_counts(
    els: &scan::PageElements<'_>,
    ld_comments: Option<u64>,
    body_text: &str,
) -> (Option<u64>, Option<u64>) {
    let mut comments = ld_comments;
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

#[cfg(test)]
mod tests {
    use crate::extract;
    use crate::tests::url;

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
}
