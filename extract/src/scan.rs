//! One walk over a parsed page that collects every element the attribute
//! extraction looks at (meta tags, JSON-LD scripts, headings, `<time>`,
//! elements whose class or id marks a date, a source, a byline or a count).
//!
//! Each `doc.select(...)` walks the whole tree and tests every element
//! against its selector; the extraction needs fifteen of them, and on a
//! 20 KB page those walks cost more than parsing the page. Here each
//! element is looked at once, its `class` and `id` read once, and the
//! marker tests are substring tests without allocation. The elements come
//! in document order.

use std::sync::LazyLock;

use aho_corasick::AhoCorasick;
use scraper::{ElementRef, Html};
pub use shapes::page::EmbedKind;

/// Class fragments (case-sensitive, as the CSS `[class*=...]` they replace)
/// that mark the publish time.
const DATE_CLASS: [&str; 15] = [
    "publish",
    "pubdate",
    "pub-date",
    "pub_date",
    "pubtime",
    "pub-time",
    "pub_time",
    "post-date",
    "post_date",
    "post_time",
    "post-time",
    "article-date",
    "article-time",
    "date-source",
    "time-source",
];
/// Id fragments that mark the publish time.
const DATE_ID: [&str; 3] = ["pubtime", "publish", "pub_date"];
/// Class fragments (case-sensitive) of an element naming the page's source:
/// `source`, the media account that published a page on a platform
/// (`<a class="media-name">`, NetEase's `post_wemedia_name`), and the outlet
/// an aggregator names as a story's provider or publisher (Yahoo's
/// `caas-attr-provider-name`, LINE TODAY's `entityPublishInfo-publisher`).
const SOURCE_CLASS: [&str; 7] = [
    "source",
    "Source",
    "media-name",
    "media_name",
    "mediaName",
    "provider",
    "publisher",
];
/// Class tokens of a byline.
const BYLINE_CLASSES: [&str; 5] = [
    "byline",
    "author",
    "article-author",
    "author-name",
    // Discuz!'s author cell of a post (the thread's first is its poster's).
    "authi",
];

/// Class/id fragments (any ASCII case) marking an element that holds a
/// comment count.
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
/// Class/id fragments (any ASCII case) marking an element that holds a
/// participant count.
const PARTICIPANT_MARKERS: [&str; 4] = ["participant", "join-count", "join_num", "joincount"];

/// One automaton per marker list: a class value is scanned once per list
/// instead of once per fragment (most elements of a page have a class, and
/// those substring tests were 3% of a crawl's CPU).
struct Markers {
    date_class: AhoCorasick,
    date_id: AhoCorasick,
    comment: AhoCorasick,
    participant: AhoCorasick,
    source_class: AhoCorasick,
}

static MARKERS: LazyLock<Markers> = LazyLock::new(|| {
    let exact = |p: &[&str]| AhoCorasick::new(p).expect("marker automaton");
    let any_case = |p: &[&str]| {
        AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(p)
            .expect("marker automaton")
    };
    Markers {
        date_class: exact(&DATE_CLASS),
        date_id: exact(&DATE_ID),
        comment: any_case(&COMMENT_MARKERS),
        participant: any_case(&PARTICIPANT_MARKERS),
        source_class: exact(&SOURCE_CLASS),
    }
});

/// At most this many `<time>` elements are kept.
const MAX_TIMES: usize = 200;
/// At most this many byline elements are kept.
const MAX_BYLINES: usize = 20;
/// At most this many elements with a date class are kept.
const MAX_DATE_CLASSED: usize = 50;
/// At most this many links to authors' pages are kept.
const MAX_AUTHOR_LINKS: usize = 10;
/// At most this many elements with a date-like `title` are kept.
const MAX_TITLED: usize = 20;
/// At most this many headings are kept.
const MAX_H1: usize = 8;
/// At most this many inline scripts are kept.
const MAX_SCRIPTS: usize = 100;

/// The elements of a page the extraction uses, by role, in document order.
#[derive(Default)]
pub(crate) struct PageElements<'a> {
    pub meta: Vec<ElementRef<'a>>,
    pub jsonld: Vec<ElementRef<'a>>,
    /// The account that published a WeChat article (`<a id="js_name">`
    /// beside the date: the outlet, where `og:site_name` is the platform).
    pub account: Option<ElementRef<'a>>,
    /// Inline JavaScript (`<script>` without `src`, no type or a JavaScript
    /// one; at most [`MAX_SCRIPTS`]).
    pub scripts: Vec<ElementRef<'a>>,
    /// The first `<base href>`.
    pub base_href: Option<&'a str>,
    /// The first `<html lang>`.
    pub html_lang: Option<&'a str>,
    pub h1: Vec<ElementRef<'a>>,
    /// `<founder-title>`: the headline of an article in the e-paper system
    /// many Chinese newspapers publish their print editions with (its
    /// `<title>` names only the paper).
    pub founder_title: Option<ElementRef<'a>>,
    pub title: Vec<ElementRef<'a>>,
    /// `<time>` elements (at most [`MAX_TIMES`]).
    pub time: Vec<ElementRef<'a>>,
    /// `[itemprop=datePublished]` other than `<meta>`.
    pub itemprop_published: Vec<ElementRef<'a>>,
    /// Class or id marks a publish time.
    pub date_marked: Vec<ElementRef<'a>>,
    /// Class names a date (`date`, `entry-date`, `news-list-date`, any ASCII
    /// case) and does not mark a publish time (at most [`MAX_DATE_CLASSED`]).
    pub date_classed: Vec<ElementRef<'a>>,
    /// Class or id names a source.
    pub source: Vec<ElementRef<'a>>,
    /// `rel=author`, `itemprop=author`, byline classes (at most [`MAX_BYLINES`]).
    pub byline: Vec<ElementRef<'a>>,
    /// Elements whose `title` looks like a date (starts with a digit, 8-40
    /// bytes; at most [`MAX_TITLED`]).
    pub titled: Vec<ElementRef<'a>>,
    /// Links to an author's or a user's page (`/author/…`, `/authors/…`,
    /// `/people/…`, `/user/…`, `/users/…`, `/member/…`, `/u/…`, Discuz!'s
    /// `space-uid-…`; at most
    /// [`MAX_AUTHOR_LINKS`]).
    pub author_links: Vec<ElementRef<'a>>,
    /// `[itemprop=commentCount]`.
    pub itemprop_comments: Vec<ElementRef<'a>>,
    /// Class or id marks a comment count (any ASCII case).
    pub comment_marked: Vec<ElementRef<'a>>,
    /// Class or id marks a participant count (any ASCII case).
    pub participant_marked: Vec<ElementRef<'a>>,
    /// Elements with one of the given count attributes (`data-comments`...).
    pub count_attr: Vec<ElementRef<'a>>,
    /// Raw `href`s of `<a>`, `<area>` and `<link rel~=next>`, in document
    /// order (the page's links before they are resolved and capped).
    pub links: Vec<&'a str>,
    /// What the page embeds (images, stylesheets, scripts, icons, media),
    /// raw `src`/`href` values in document order (at most [`MAX_EMBEDS`]).
    pub embeds: Vec<(EmbedKind, &'a str)>,
}

/// At most this many embedded resources are kept per page.
pub const MAX_EMBEDS: usize = 500;

/// The attributes an element's embeds are read from.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct EmbedAttrs<'a> {
    pub src: Option<&'a str>,
    /// `data-src` or `data-original` (lazy loading).
    pub lazy_src: Option<&'a str>,
    pub poster: Option<&'a str>,
    pub rel: Option<&'a str>,
    pub href: Option<&'a str>,
}

/// What an element `name` with `a` embeds, in document order: the one rule
/// of the page scan and of [`crate::stream_embeds`].
pub(crate) fn element_embeds<'a>(
    name: &str,
    a: &EmbedAttrs<'a>,
    mut push: impl FnMut((EmbedKind, &'a str)),
) {
    let embed = match name {
        "img" => a
            .lazy_src
            .filter(|_| a.src.is_none_or(|s| s.starts_with("data:")))
            .or(a.src)
            .map(|s| (EmbedKind::Image, s)),
        "script" => a.src.map(|s| (EmbedKind::Script, s)),
        "link" => match (a.rel, a.href) {
            (Some(r), Some(h)) if has_token_ci(r, "stylesheet") => Some((EmbedKind::Stylesheet, h)),
            (Some(r), Some(h))
                if has_token_ci(r, "icon") || has_token_ci(r, "apple-touch-icon") =>
            {
                Some((EmbedKind::Icon, h))
            }
            _ => None,
        },
        "video" | "audio" | "source" | "embed" => a.src.map(|s| (EmbedKind::Media, s)),
        _ => None,
    };
    if let Some(e) = embed {
        push(e);
    }
    if name == "video" {
        if let Some(p) = a.poster {
            push((EmbedKind::Image, p));
        }
    }
}

/// Whether a class list marks a byline: one of [`BYLINE_CLASSES`], or a
/// token naming the author of something (`info_author`, `post-author`,
/// `article__author`) that is not a comment's, a reply's or a listed item's.
fn byline_class(list: &str) -> bool {
    const OTHERS: [&str; 7] = [
        "comment",
        "reply",
        "review",
        "related",
        "recommend",
        "list",
        "item",
    ];
    // Most elements of a page have a class: the suffix is tested without
    // allocating, the token lowered only when it ends so.
    let ends = |t: &str, suffix: &str| {
        t.len() >= suffix.len()
            && t.is_char_boundary(t.len() - suffix.len())
            && t[t.len() - suffix.len()..].eq_ignore_ascii_case(suffix)
    };
    // `info_author`, `post-author`; `Author-authorName`, `p_author_name`.
    let authors = |t: &str| {
        (t.len() >= 7
            && t.is_char_boundary(t.len() - 7)
            && [b'_', b'-'].contains(&t.as_bytes()[t.len() - 7])
            && ends(t, "author"))
            || ends(t, "authorname")
            || ends(t, "author_name")
    };
    list.split_ascii_whitespace().any(|t| {
        BYLINE_CLASSES.contains(&t)
            || (authors(t) && {
                let l = t.to_ascii_lowercase();
                !OTHERS.iter().any(|o| l.contains(o))
            })
    })
}

fn has_token_ci(list: &str, token: &str) -> bool {
    list.split_ascii_whitespace()
        .any(|t| t.eq_ignore_ascii_case(token))
}

impl<'a> PageElements<'a> {
    /// Walks `doc` once; `count_attrs` names attributes that hold a count.
    pub fn collect(doc: &'a Html, count_attrs: &[&str]) -> PageElements<'a> {
        let mut out = PageElements::default();
        for node in doc.tree.root().descendants() {
            let Some(e) = ElementRef::wrap(node) else {
                continue;
            };
            let v = e.value();
            // One pass over the attributes: `attr(name)` interns `name`
            // on every call, which costs more than the tests below.
            let (mut class, mut id, mut itemprop, mut rel, mut kind, mut href, mut lang) =
                (None, None, None, None, None, None, None);
            let (mut src, mut lazy_src, mut poster, mut title) = (None, None, None, None);
            let mut counted = false;
            for (name, value) in v.attrs() {
                match name {
                    "class" => class = Some(value),
                    "id" => id = Some(value),
                    "itemprop" => itemprop = Some(value),
                    "rel" => rel = Some(value),
                    "type" => kind = Some(value),
                    "href" => href = Some(value),
                    "lang" => lang = Some(value),
                    "src" => src = Some(value),
                    "data-src" | "data-original" => lazy_src = Some(value),
                    "poster" => poster = Some(value),
                    "title" => title = Some(value),
                    other => counted |= count_attrs.contains(&other),
                }
            }
            let name = v.name();
            if out.embeds.len() < MAX_EMBEDS {
                let attrs = EmbedAttrs {
                    src,
                    lazy_src,
                    poster,
                    rel,
                    href,
                };
                element_embeds(name, &attrs, |e| out.embeds.push(e));
            }
            match (name, href) {
                ("a", Some(h)) => {
                    out.links.push(h);
                    if out.author_links.len() < MAX_AUTHOR_LINKS
                        && [
                            "/author/",
                            "/authors/",
                            "/people/",
                            "/user/",
                            "/users/",
                            "/member/",
                            "/u/",
                            // Discuz!: `space-uid-418273.html`,
                            // `home.php?mod=space&uid=418273`.
                            "space-uid-",
                            "mod=space&uid=",
                        ]
                        .iter()
                        .any(|p| h.contains(p))
                    {
                        out.author_links.push(e);
                    }
                }
                ("area", Some(h)) => out.links.push(h),
                ("link", Some(h)) if rel.is_some_and(|r| has_token_ci(r, "next")) => {
                    out.links.push(h)
                }
                _ => {}
            }
            match name {
                "meta" => out.meta.push(e),
                "script" if kind == Some("application/ld+json") => out.jsonld.push(e),
                "script"
                    if src.is_none()
                        && out.scripts.len() < MAX_SCRIPTS
                        && kind.is_none_or(|k| k.to_ascii_lowercase().contains("javascript")) =>
                {
                    out.scripts.push(e)
                }
                "base" if out.base_href.is_none() => out.base_href = href,
                "html" if out.html_lang.is_none() => out.html_lang = lang,
                "h1" if out.h1.len() < MAX_H1 => out.h1.push(e),
                "founder-title" if out.founder_title.is_none() => out.founder_title = Some(e),
                "title" => out.title.push(e),
                "time" if out.time.len() < MAX_TIMES => out.time.push(e),
                _ => {}
            }
            if let Some(p) = itemprop {
                if p == "datePublished" && name != "meta" {
                    out.itemprop_published.push(e);
                }
                if p == "commentCount" {
                    out.itemprop_comments.push(e);
                }
            }
            if counted {
                out.count_attr.push(e);
            }
            if let Some(t) = title {
                if out.titled.len() < MAX_TITLED
                    && (8..=40).contains(&t.len())
                    && t.starts_with(|c: char| c.is_ascii_digit())
                {
                    out.titled.push(e);
                }
            }
            if class.is_none() && id.is_none() && itemprop.is_none() && rel.is_none() {
                continue;
            }
            let class_s = class.unwrap_or_default();
            let id_s = id.unwrap_or_default();
            if class.is_some() || id.is_some() {
                let m = &*MARKERS;
                let either = |a: &AhoCorasick| a.is_match(class_s) || a.is_match(id_s);
                if m.date_class.is_match(class_s) || m.date_id.is_match(id_s) {
                    out.date_marked.push(e);
                } else if out.date_classed.len() < MAX_DATE_CLASSED
                    && (class_s.contains("date") || class_s.contains("Date"))
                {
                    out.date_classed.push(e);
                }
                if m.source_class.is_match(class_s) || id_s.contains("source") {
                    out.source.push(e);
                }
                if either(&m.comment) {
                    out.comment_marked.push(e);
                }
                if id_s == "js_name" && out.account.is_none() {
                    out.account = Some(e);
                }
                if either(&m.participant) {
                    out.participant_marked.push(e);
                }
            }
            if out.byline.len() < MAX_BYLINES
                && (rel == Some("author") || itemprop == Some("author") || byline_class(class_s))
            {
                out.byline.push(e);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scraper::Selector;

    #[test]
    fn an_authors_class_marks_a_byline_but_not_a_comments() {
        assert!(byline_class("author"));
        assert!(byline_class("x info_author"));
        assert!(byline_class("article__author"));
        assert!(byline_class("post-author"));
        assert!(!byline_class("comment-author"));
        assert!(!byline_class("related_item-author"));
        assert!(!byline_class("author_avatar"));
        assert!(!byline_class("authors"));
        assert!(byline_class("Author-authorName"));
        assert!(byline_class("p_author_name j_user_card"));
        assert!(!byline_class("comment-authorName"));
        assert!(byline_class("authi"));
    }

    /// The walk finds what the selectors it replaces find, in the same order.
    #[test]
    fn the_walk_agrees_with_the_selectors() {
        let html = r#"<!doctype html><html lang="zh-CN"><head>
            <title>T</title><base href="/b/"><meta name="a" content="1">
            <script type="application/ld+json">{}</script><script>x</script></head>
            <body><h1>H</h1><div class="post-date x" id="q">d</div><span id="pubtime_1">t</span>
            <p class="Source-name">s</p><p id="sourcebox">s2</p><a class="media-name">m</a><i class="post_wemedia_name">w</i>
            <a rel="author" href="/me">me</a><span class="byline">by</span><span class="bylines">no</span>
            <span itemprop="datePublished">2020</span><meta itemprop="datePublished" content="x">
            <span itemprop="commentCount">3</span><i data-comments="5">c</i>
            <time>1</time><time class="updated">2</time>
            <span class="x Comment-Count">12</span><b id="news_comment_num">4</b><em id="joinCount">3</em>
            <a href="/a">a</a><a name="n">no href</a><link rel="Next prefetch" href="/p2"><link rel="prev" href="/p0">
            <map><area href="/m"></map></body></html>"#;
        let doc = Html::parse_document(html);
        let found = PageElements::collect(&doc, &["data-comments"]);
        let ids = |v: &[ElementRef<'_>]| v.iter().map(|e| e.id()).collect::<Vec<_>>();
        let select = |s: &str| {
            let sel = Selector::parse(s).expect("selector");
            doc.select(&sel).map(|e| e.id()).collect::<Vec<_>>()
        };
        assert_eq!(ids(&found.meta), select("meta"));
        assert_eq!(
            ids(&found.jsonld),
            select(r#"script[type="application/ld+json"]"#)
        );
        assert_eq!(found.base_href, Some("/b/"));
        assert_eq!(found.html_lang, Some("zh-CN"));
        assert_eq!(ids(&found.h1), select("h1"));
        assert_eq!(ids(&found.title), select("title"));
        assert_eq!(ids(&found.time), select("time"));
        assert_eq!(
            ids(&found.itemprop_published),
            select(r#"[itemprop="datePublished"]:not(meta)"#)
        );
        assert_eq!(
            ids(&found.date_marked),
            select(r#"[class*="post-date"], [id*="pubtime"]"#)
        );
        assert_eq!(
            ids(&found.source),
            select(
                r#"[class*="source"], [id*="source"], [class*="Source"], [class*="media-name"], [class*="media_name"]"#
            )
        );
        assert_eq!(
            ids(&found.byline),
            select(
                r#"[rel="author"], [itemprop="author"], .byline, .author, .article-author, .author-name"#
            )
        );
        assert_eq!(
            ids(&found.itemprop_comments),
            select(r#"[itemprop="commentCount"]"#)
        );
        assert_eq!(
            ids(&found.comment_marked),
            select(r#"[class*="comment-count" i], [id*="comment_num" i]"#)
        );
        assert_eq!(found.comment_marked.len(), 2);
        assert_eq!(
            ids(&found.participant_marked),
            select(r#"[id*="joincount" i]"#)
        );
        assert_eq!(found.links, ["/me", "/a", "/p2", "/m"]);
        assert_eq!(ids(&found.count_attr), select("[data-comments]"));
    }
}
