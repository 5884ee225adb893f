//! Article text: the main content of a page without navigation, comments and
//! boilerplate, found as readability-style extractors do it.
//!
//! Every paragraph-like element (`p`, `pre`, `blockquote`, `td`, a `div`
//! holding text directly) with enough text scores `1 + punctuation +
//! min(chars / 100, 3)`; the score goes to five ancestors (all of it to the
//! parent, then a half, a sixth, a ninth, a twelfth), whose base score comes
//! from their tag and from class/id words (`content`, `article`, `正文` up;
//! `comment`, `share`, `related`, `footer` down). Each container's score is
//! scaled by `1 - link density`. The best one becomes the article, moved up
//! as Readability.js moves it for an article in several blocks: to the
//! ancestor it shares with three of the next four candidates when those
//! score at least 3/4 of it, to a parent within a few steps that scores more,
//! to the parent of an only child. The article is that node and its siblings
//! that score close to it (a sibling of the same class counts a fifth of the
//! best score more) or hold plain prose. Its text is rendered one line per
//! block, leaving out sub-blocks that are mostly links or named as
//! boilerplate, unless they hold the candidates the article was found by.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::sync::LazyLock;

use ego_tree::{NodeId, NodeRef};
use regex::Regex;
use scraper::{ElementRef, Html, Node};

use crate::lines::{push_squashed, BLOCK_ELEMENTS, SKIPPED_ELEMENTS};

/// Paragraphs with fewer characters than this do not vote.
const MIN_PARAGRAPH_CHARS: usize = 20;
/// An article shorter than this (characters) is no article (a hub page).
const MIN_ARTICLE_CHARS: usize = 50;
/// A block with a larger share of link text is navigation.
const MAX_BLOCK_LINK_DENSITY: f64 = 0.5;

/// How many ancestors of a paragraph its score goes to.
const ANCESTOR_LEVELS: usize = 5;
/// The best candidates looked at for an article in several blocks.
const TOP_CANDIDATES: usize = 5;
/// Of those, how many must share an ancestor with the best for it to be
/// the article.
const MIN_SHARED_CANDIDATES: usize = 3;

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

/// `n`, then its parent, grandparent... up to the document.
fn self_and_ancestors(n: NodeRef<'_, Node>) -> impl Iterator<Item = NodeRef<'_, Node>> {
    std::iter::once(n).chain(n.ancestors())
}

fn is_body(n: NodeRef<'_, Node>) -> bool {
    match n.value() {
        Node::Element(e) => matches!(e.name(), "body" | "html"),
        _ => true,
    }
}

/// The main text of `doc`, one line per block; empty when the page has no
/// article (a hub, an index, a form).
pub fn article_text(doc: &Html) -> String {
    let stats = stats(doc);
    let get = |id: NodeId| stats.get(&id).copied().unwrap_or_default();
    let scores = paragraph_scores(doc, &get);
    let fin = |id: NodeId, raw: f64| raw * (1.0 - get(id).link_density());
    let mut ranked: Vec<(NodeId, f64)> = scores.iter().map(|(id, s)| (*id, fin(*id, *s))).collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let Some(&(top, top_score)) = ranked.first() else {
        return String::new();
    };
    let Some(mut top_node) = doc.tree.get(top) else {
        return String::new();
    };
    // The best candidate, and later the others that moved the article up to
    // their shared ancestor, with their ancestors: a block holding them is
    // never left out as boilerplate (a `widget` wrapper of a blog post).
    let mut keep: HashSet<NodeId> = self_and_ancestors(top_node).map(|n| n.id()).collect();
    let mut top_score = top_score;
    let score_of = |n: NodeRef<'_, Node>| scores.get(&n.id()).map(|r| fin(n.id(), *r));
    (top_node, top_score) =
        shared_ancestor(doc, &ranked, (top_node, top_score), &mut keep, &score_of);
    (top_node, top_score) = better_parent(top_node, top_score, &score_of);
    // An only child stands for its parent.
    while let Some(parent) = top_node.parent() {
        if is_body(parent) || parent.children().filter(|c| c.value().is_element()).count() != 1 {
            break;
        }
        top_node = parent;
    }
    let parts = article_parts(top_node, top_score, &get, &score_of);
    let mut out = String::new();
    for p in parts {
        render(p, &stats, &keep, &mut out);
    }
    let text = out.trim().to_string();
    if text.chars().filter(|c| !c.is_whitespace()).count() < MIN_ARTICLE_CHARS {
        return String::new();
    }
    text
}

/// The score of each block: every paragraph's (its text, punctuation and
/// length) given to its container and up to [`ANCESTOR_LEVELS`] ancestors,
/// less the farther up, over each ancestor's own tag and class weight.
fn paragraph_scores(doc: &Html, get: &impl Fn(NodeId) -> Stats) -> HashMap<NodeId, f64> {
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
        // Text directly in a container: the container is the paragraph's
        // parent. The score goes to five ancestors, less the farther up:
        // all of it, a half, then a sixth, a ninth, a twelfth.
        let first = if matches!(e.name(), "div" | "section" | "article") {
            Some(node)
        } else {
            node.parent()
        };
        let chain = first.into_iter().flat_map(self_and_ancestors);
        for (level, t) in chain.take(ANCESTOR_LEVELS).enumerate() {
            if !t.value().is_element() {
                break;
            }
            let divider = match level {
                0 => 1.0,
                1 => 2.0,
                l => l as f64 * 3.0,
            };
            *scores.entry(t.id()).or_insert_with(|| base(t)) += score / divider;
        }
    }
    scores
}

/// An article in several blocks (sections, one block per paragraph
/// group): when three of the next best candidates, each nearly as good,
/// sit under one ancestor of the best, that ancestor is the article.
fn shared_ancestor<'a>(
    doc: &'a Html,
    ranked: &[(NodeId, f64)],
    (mut top_node, mut top_score): (NodeRef<'a, Node>, f64),
    keep: &mut HashSet<NodeId>,
    score_of: &impl Fn(NodeRef<'a, Node>) -> Option<f64>,
) -> (NodeRef<'a, Node>, f64) {
    let alternatives: Vec<NodeRef<'_, Node>> = ranked
        .iter()
        .skip(1)
        .take(TOP_CANDIDATES - 1)
        .filter(|(_, sc)| *sc >= top_score * 0.75)
        .filter_map(|(id, _)| doc.tree.get(*id))
        .collect();
    if alternatives.len() >= MIN_SHARED_CANDIDATES {
        // How many alternatives each node is an ancestor of (one walk up
        // each: linear in the depth, however deep the markup nests).
        let mut under: HashMap<NodeId, usize> = HashMap::default();
        for alt in &alternatives {
            for a in alt.ancestors() {
                *under.entry(a.id()).or_insert(0) += 1;
            }
        }
        let common = top_node
            .ancestors()
            .take_while(|a| !is_body(*a))
            .find(|a| under.get(&a.id()).copied().unwrap_or(0) >= MIN_SHARED_CANDIDATES);
        if let Some(c) = common {
            for alt in &alternatives {
                keep.extend(self_and_ancestors(*alt).map(|n| n.id()));
            }
            top_node = c;
            top_score = score_of(c).unwrap_or(top_score);
        }
    }
    (top_node, top_score)
}

/// A parent scoring more than the best, within a few steps up, holds
/// more of the article.
fn better_parent<'a>(
    mut top_node: NodeRef<'a, Node>,
    mut top_score: f64,
    score_of: &impl Fn(NodeRef<'a, Node>) -> Option<f64>,
) -> (NodeRef<'a, Node>, f64) {
    let mut last = top_score;
    for parent in top_node.ancestors().take_while(|a| !is_body(*a)) {
        let Some(ps) = score_of(parent) else {
            continue;
        };
        if ps < top_score / 3.0 {
            break;
        }
        if ps > last {
            top_node = parent;
            top_score = ps;
            break;
        }
        last = ps;
    }
    (top_node, top_score)
}

/// The article's blocks: the best block and those of its siblings that score
/// near it (more so with its class) or are prose paragraphs; the best block
/// alone at the document's top.
fn article_parts<'a>(
    top_node: NodeRef<'a, Node>,
    top_score: f64,
    get: &impl Fn(NodeId) -> Stats,
    score_of: &impl Fn(NodeRef<'a, Node>) -> Option<f64>,
) -> Vec<NodeRef<'a, Node>> {
    let top = top_node.id();
    let top_class = match top_node.value() {
        Node::Element(e) => e.attr("class").unwrap_or_default(),
        _ => "",
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
                // A sibling of the same class (the next block of the article).
                let bonus = if !top_class.is_empty() && e.attr("class") == Some(top_class) {
                    top_score * 0.2
                } else {
                    0.0
                };
                let scored = score_of(sib).is_some_and(|sc| sc + bonus >= threshold);
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
    parts
}

/// Appends the text of `node` to `out`, one line per block, without
/// boilerplate sub-blocks.
fn render(
    node: NodeRef<'_, Node>,
    stats: &HashMap<NodeId, Stats>,
    keep: &HashSet<NodeId>,
    out: &mut String,
) {
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
            if block && name != "p" && !keep.contains(&node.id()) {
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
                render(c, stats, keep, out);
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

    /// A story in several blocks, each deep in its own wrappers (a block
    /// per paragraph group, ads between): all of them, not the best one.
    #[test]
    fn an_article_in_several_blocks_is_one_article() {
        let para = |i: usize| {
            format!(
                "<p>Paragraph {i} of the story, with a clause, another clause, and enough words to count as prose in any reader.</p>"
            )
        };
        let block = |from: usize| {
            let ps: String = (from..from + 3).map(para).collect();
            format!(
                "<div class=grid><div class=cell><div class=article-text>{ps}</div></div></div>"
            )
        };
        let html = format!(
            "<body><div id=menu><a href=/>Home</a> <a href=/x>World</a></div><div class=story>{}<div class=promo><a href=/ad>Buy now</a></div>{}<div class=promo><a href=/ad2>Subscribe today</a></div>{}</div><div id=footer>About us, contact, terms of use and the privacy policy.</div></body>",
            block(1),
            block(4),
            block(7)
        );
        let text = article_text(&Html::parse_document(&html));
        for i in 1..=9 {
            assert!(text.contains(&format!("Paragraph {i} of")), "{i}: {text}");
        }
        for boiler in ["Home", "Buy now", "privacy"] {
            assert!(!text.contains(boiler), "{boiler} in {text}");
        }
    }

    /// A blog post inside a wrapper named like boilerplate (`widget`), each
    /// wrapper an only child (the article moves up past it): the wrapper
    /// holds the post and is not left out.
    #[test]
    fn a_wrapper_named_like_boilerplate_keeps_the_post_it_holds() {
        let ps: String = (1..=4)
            .map(|i| format!("<p>Sentence {i} of the post, which talks about the actress, her photos, and the colours of the flag.</p>"))
            .collect();
        let html = format!(
            "<body><div id=main-wrapper><div class=section><div class='widget Blog'><div class=posts><div class=post-body>{ps}</div></div></div></div></div><div id=sidebar><a href=/a>Archive</a></div></body>"
        );
        let text = article_text(&Html::parse_document(&html));
        assert!(text.contains("Sentence 1 of the post"), "{text}");
        assert!(text.contains("Sentence 4 of the post"), "{text}");
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
