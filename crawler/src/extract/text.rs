//! Article text: the main content of a page without navigation, comments and
//! boilerplate, found as readability-style extractors do it.
//!
//! Every paragraph-like element (`p`, `pre`, `blockquote`, `td`, a `div`
//! holding text directly) with enough text scores `1 + punctuation +
//! min(chars / 100, 3)`; the score goes to its parent and half of it to its
//! grandparent, whose base score comes from their tag and from class/id words
//! (`content`, `article`, `正文` up; `comment`, `share`, `related`, `footer`
//! down). Each container's score is scaled by `1 - link density`; the best
//! one and its siblings that score close to it or hold plain prose are the
//! article. Its text is rendered one line per block, leaving out sub-blocks
//! that are mostly links or named as boilerplate.

use rustc_hash::FxHashMap as HashMap;
use std::sync::LazyLock;

use ego_tree::{NodeId, NodeRef};
use regex::Regex;
use scraper::{ElementRef, Html, Node};

use super::{push_squashed, BLOCK_ELEMENTS, SKIPPED_ELEMENTS};

/// Paragraphs with fewer characters than this do not vote.
const MIN_PARAGRAPH_CHARS: usize = 20;
/// An article shorter than this (characters) is no article (a hub page).
const MIN_ARTICLE_CHARS: usize = 50;
/// A block with a larger share of link text is navigation.
const MAX_BLOCK_LINK_DENSITY: f64 = 0.5;

/// Elements never part of an article besides [`SKIPPED_ELEMENTS`].
const NOT_ARTICLE: [&str; 4] = ["aside", "form", "button", "textarea"];

fn re(s: &str) -> Regex {
    Regex::new(s).expect("static regex is valid")
}

static RE_POSITIVE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)article|body|content|entry|main|post|text|story|detail|正文|editor|artic|cont\b|news_txt|txt",
    )
});
static RE_NEGATIVE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)comment|reply|replies|footer|foot\b|nav|menu|sidebar|side\b|sponsor|share|social|related|recommend|promo|banner|breadcrumb|crumb|copyright|masthead|outbrain|popup|shopping|widget|subscribe|newsletter|toolbar|tags?\b|hot|rank|\bad\b|ads\b|advert|-ad-|_ad_|login|modal|cookie|评论|相关|推荐",
    )
});

#[derive(Debug, Clone, Copy, Default)]
struct Stats {
    chars: usize,
    link_chars: usize,
    punct: usize,
    /// Characters of text nodes that are direct children.
    own_chars: usize,
}

impl Stats {
    fn link_density(&self) -> f64 {
        if self.chars == 0 {
            0.0
        } else {
            self.link_chars as f64 / self.chars as f64
        }
    }
}

fn excluded(name: &str) -> bool {
    SKIPPED_ELEMENTS.contains(&name) || NOT_ARTICLE.contains(&name)
}

fn class_id(e: &scraper::node::Element) -> String {
    let mut s = String::new();
    for a in ["class", "id"] {
        if let Some(v) = e.attr(a) {
            s.push_str(v);
            s.push(' ');
        }
    }
    s
}

fn class_weight(e: &scraper::node::Element) -> f64 {
    let s = class_id(e);
    if s.is_empty() {
        return 0.0;
    }
    let mut w = 0.0;
    if RE_NEGATIVE.is_match(&s) {
        w -= 25.0;
    }
    if RE_POSITIVE.is_match(&s) {
        w += 25.0;
    }
    w
}

fn tag_weight(name: &str) -> f64 {
    match name {
        "article" => 10.0,
        "div" | "section" | "main" => 5.0,
        "pre" | "td" | "blockquote" => 3.0,
        "address" | "ol" | "ul" | "dl" | "dd" | "dt" | "li" => -3.0,
        "h1" | "h2" | "h3" | "h4" | "h5" | "h6" | "th" | "header" => -5.0,
        _ => 0.0,
    }
}

fn is_punct(c: char) -> bool {
    matches!(c, ',' | '，' | '。' | '、' | '；' | ';' | '！' | '？')
}

/// Text, link text and punctuation counts of every node, children first.
fn stats(doc: &Html) -> HashMap<NodeId, Stats> {
    let nodes: Vec<NodeRef<'_, Node>> = doc.tree.root().descendants().collect();
    let mut out: HashMap<NodeId, Stats> =
        HashMap::with_capacity_and_hasher(nodes.len(), Default::default());
    for node in nodes.iter().rev() {
        let s = match node.value() {
            Node::Text(t) => {
                let mut s = Stats::default();
                for c in t.chars() {
                    s.chars += usize::from(!c.is_whitespace());
                    s.punct += usize::from(is_punct(c));
                }
                s
            }
            Node::Element(e) if excluded(e.name()) => Stats::default(),
            Node::Element(e) => {
                let mut s = Stats::default();
                for c in node.children() {
                    let cs = out.get(&c.id()).copied().unwrap_or_default();
                    s.chars += cs.chars;
                    s.link_chars += cs.link_chars;
                    s.punct += cs.punct;
                    if c.value().is_text() {
                        s.own_chars += cs.chars;
                    }
                }
                if e.name() == "a" {
                    s.link_chars = s.chars;
                }
                s
            }
            _ => continue,
        };
        out.insert(node.id(), s);
    }
    out
}

/// The main text of `doc`, one line per block; empty when the page has no
/// article (a hub, an index, a form).
pub fn article_text(doc: &Html) -> String {
    let stats = stats(doc);
    let get = |id: NodeId| stats.get(&id).copied().unwrap_or_default();
    let mut scores: HashMap<NodeId, f64> = HashMap::default();
    let base = |n: NodeRef<'_, Node>| match n.value() {
        Node::Element(e) => tag_weight(e.name()) + class_weight(e),
        _ => 0.0,
    };
    for node in doc.tree.root().descendants() {
        let Node::Element(e) = node.value() else {
            continue;
        };
        let s = get(node.id());
        let chars = match e.name() {
            "p" | "pre" | "blockquote" | "td" => s.chars - s.link_chars.min(s.chars),
            "div" | "section" | "article" | "span" | "font" => s.own_chars,
            _ => continue,
        };
        if chars < MIN_PARAGRAPH_CHARS {
            continue;
        }
        let score = 1.0 + s.punct as f64 + (chars as f64 / 100.0).min(3.0);
        let targets: Vec<(NodeRef<'_, Node>, f64)> =
            if e.name() == "div" || e.name() == "section" || e.name() == "article" {
                // Text directly in a container: the container is the paragraph's parent.
                [Some((node, score)), node.parent().map(|p| (p, score / 2.0))]
                    .into_iter()
                    .flatten()
                    .collect()
            } else {
                [
                    node.parent().map(|p| (p, score)),
                    node.parent()
                        .and_then(|p| p.parent())
                        .map(|g| (g, score / 2.0)),
                ]
                .into_iter()
                .flatten()
                .collect()
            };
        for (t, add) in targets {
            if !t.value().is_element() {
                continue;
            }
            *scores.entry(t.id()).or_insert_with(|| base(t)) += add;
        }
    }
    let fin = |id: NodeId, raw: f64| raw * (1.0 - get(id).link_density());
    let Some((top, top_score)) = scores
        .iter()
        .map(|(id, s)| (*id, fin(*id, *s)))
        .max_by(|a, b| a.1.total_cmp(&b.1).then_with(|| b.0.cmp(&a.0)))
    else {
        return String::new();
    };
    let Some(top_node) = doc.tree.get(top) else {
        return String::new();
    };
    let threshold = (top_score * 0.2).max(10.0);
    let mut parts: Vec<NodeRef<'_, Node>> = Vec::new();
    match top_node.parent() {
        Some(parent) => {
            for sib in parent.children() {
                if sib.id() == top {
                    parts.push(sib);
                    continue;
                }
                let Node::Element(e) = sib.value() else {
                    continue;
                };
                if excluded(e.name()) {
                    continue;
                }
                let s = get(sib.id());
                let scored = scores
                    .get(&sib.id())
                    .is_some_and(|r| fin(sib.id(), *r) >= threshold);
                let prose = e.name() == "p"
                    && s.link_density() < 0.25
                    && s.chars >= 80
                    && class_weight(e) >= 0.0;
                if scored || prose {
                    parts.push(sib);
                }
            }
        }
        None => parts.push(top_node),
    }
    let mut out = String::new();
    for p in parts {
        render(p, &stats, &mut out);
    }
    let text = out.trim().to_string();
    if text.chars().filter(|c| !c.is_whitespace()).count() < MIN_ARTICLE_CHARS {
        return String::new();
    }
    text
}

/// Appends the text of `node` to `out`, one line per block, without
/// boilerplate sub-blocks.
fn render(node: NodeRef<'_, Node>, stats: &HashMap<NodeId, Stats>, out: &mut String) {
    let newline = |out: &mut String| {
        if !out.is_empty() && !out.ends_with('\n') {
            while out.ends_with(' ') {
                out.pop();
            }
            out.push('\n');
        }
    };
    match node.value() {
        Node::Text(t) => push_squashed(out, t, &[' ']),
        Node::Element(e) => {
            let name = e.name();
            if excluded(name) {
                return;
            }
            let block = BLOCK_ELEMENTS.contains(&name);
            if block && name != "p" {
                let s = stats.get(&node.id()).copied().unwrap_or_default();
                let boilerplate =
                    ElementRef::wrap(node).is_some_and(|el| class_weight(el.value()) < 0.0);
                if boilerplate || (s.chars >= 10 && s.link_density() > MAX_BLOCK_LINK_DENSITY) {
                    return;
                }
            }
            if block {
                newline(out);
            }
            for c in node.children() {
                render(c, stats, out);
            }
            if block {
                newline(out);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn main_content_without_navigation_comments_and_related_links() {
        let html = r#"<html><body>
          <div class="nav"><a href="/">首页</a> <a href="/a">新闻</a> <a href="/b">财经</a> <a href="/c">体育</a></div>
          <div class="main">
            <h1>央行宣布降准</h1>
            <div class="article-content" id="artibody">
              <p>中国人民银行决定于2024年2月5日下调金融机构存款准备金率0.5个百分点，释放长期资金约1万亿元。</p>
              <p>此次降准是全面降准，除已执行5%存款准备金率的部分法人金融机构外，对其他金融机构普遍下调。</p>
              <p>央行有关负责人表示，货币政策将继续保持稳健，精准有力，为经济回升向好营造良好的货币金融环境。</p>
              <div class="related"><a href="/x">相关新闻一：降准释放资金一万亿元的影响分析报道</a><a href="/y">相关新闻二</a></div>
            </div>
            <div class="comment-list"><p>网友甲：这是好消息，支持央行的决定，希望经济越来越好。</p></div>
          </div>
          <div class="footer">版权所有 © 新浪网</div>
        </body></html>"#;
        let text = article_text(&Html::parse_document(html));
        assert!(text.starts_with("中国人民银行决定"), "{text}");
        assert!(text.contains("营造良好的货币金融环境"), "{text}");
        for boiler in ["首页", "相关新闻", "网友甲", "版权所有"] {
            assert!(!text.contains(boiler), "{boiler} in {text}");
        }
    }

    #[test]
    fn text_between_line_breaks_counts() {
        let html = "<body><div id=menu><a href=/>Home</a></div><div class=post>First line of a story, with words and more words in it.<br>Second line of the same story, long enough to count as prose.<br>Third line.</div></body>";
        let text = article_text(&Html::parse_document(html));
        assert!(text.starts_with("First line"), "{text}");
        assert!(text.ends_with("Third line."), "{text}");
        assert!(!text.contains("Home"));
    }

    #[test]
    fn a_page_of_links_has_no_article() {
        let links: String = (0..50)
            .map(|i| format!("<li><a href=/{i}>Headline number {i} of today</a></li>"))
            .collect();
        let html = format!("<body><ul>{links}</ul></body>");
        assert_eq!(article_text(&Html::parse_document(&html)), "");
    }
}
