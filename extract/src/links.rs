//! A page's links and embeds: the sink that keeps links distinct, in order and
//! under the page's budgets, the resolving of embeds, and the HTML tokenizer
//! walk that finds both without a DOM (the part of a very large page past its
//! DOM prefix, a stored page read only for its requisites).

use std::collections::HashSet;

use shapes::normalize::parse_normalized;
use shapes::page::{Embed, EmbedKind};
use url::Url;

use crate::budget::Limits;
use crate::parse::chunks;
use crate::scan;

/// The embeds of a page: resolved against `base`, http(s) only (no `data:`),
/// each URL once.
pub(crate) fn resolve_embeds(raw: &[(EmbedKind, &str)], base: &Url, limits: &Limits) -> Vec<Embed> {
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
pub(crate) struct LinkSink<'a> {
    base: &'a Url,
    limits: &'a Limits,
    seen: HashSet<String>,
    out: Vec<String>,
    dropped: u64,
    long: u64,
}

impl<'a> LinkSink<'a> {
    pub(crate) fn new(base: &'a Url, limits: &'a Limits) -> Self {
        LinkSink {
            base,
            limits,
            seen: HashSet::new(),
            out: Vec::new(),
            dropped: 0,
            long: 0,
        }
    }

    pub(crate) fn offer(&mut self, href: &str) {
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

    pub(crate) fn offer_all(&mut self, hrefs: &[&str]) {
        for href in hrefs {
            self.offer(href);
        }
    }

    pub(crate) fn finish(self) -> Links {
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

/// Links of `html` (`a[href]`, `area[href]`, `link[rel~=next][href]`, in
/// order, each once, under `limits`) found by the HTML tokenizer alone:
/// linear time, and memory stays flat whatever the page's size or nesting.
pub fn stream_links(html: &str, base: &Url, limits: &Limits) -> Links {
    stream_into(LinkSink::new(base, limits), html).finish()
}

/// Offers the links of `html`, found by the tokenizer alone, to `sink`.
pub(crate) fn stream_into<'a>(mut sink: LinkSink<'a>, html: &str) -> LinkSink<'a> {
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

/// What `html` embeds ([`crate::Extracted::embeds`]: the same rule, base URL and
/// budgets), found by the HTML tokenizer alone: a fraction of the cost of
/// [`crate::extract`] for a reader that wants only the requisites of a stored page.
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::url;
    use crate::{extract, extract_doc, TimeContext};
    use scraper::Html;

    #[test]
    fn streamed_links_match_the_dom_links() {
        let html = r#"<html><head><base href="/docs/"><link rel="next" href="p2.html">
            <link rel="stylesheet" href="s.css"><script>var s = '<a href="/not-a-link">';</script>
            <style>a[href="/nor-this"] {}</style></head>
            <body><a href="a.html">A</a> <a href='a.html#frag'>again</a> <area href="/map">
            <a href="mailto:x@y">mail</a> <a>no href</a> <A HREF="UP.html">up</A></body></html>"#;
        let base = url("http://e.com/docs/");
        let doc = Html::parse_document(html);
        let (_, dom_base, hrefs) = extract_doc(
            &doc,
            &url("http://e.com/index.html"),
            &TimeContext::default(),
        );
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
}
