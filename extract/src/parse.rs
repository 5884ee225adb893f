//! Parsing a page into its DOM under the budgets: where a large page's DOM
//! prefix ends (the rest of it is only streamed for its links), and the
//! parse a chunk at a time until its CPU budget is spent.

use scraper::Html;

use crate::budget;

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

/// Where a page's DOM prefix ends: the whole page when it has at most
/// [`LARGE_PAGE_BYTES`] of markup (bytes outside the contents of `<script>`,
/// `<style>` and comments) and at most [`LARGE_PAGE_PREFIX_BYTES`] in all;
/// else the start of the last tag (a `<` outside scripts, styles and
/// comments) before either bound is passed, so no tag is cut in two between
/// the DOM and the streamed rest; a character boundary when there is none in
/// the prefix's second half.
pub(crate) fn large_page_cut(html: &str) -> usize {
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
pub(crate) fn chunks(html: &str) -> impl Iterator<Item = &str> {
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
pub(crate) fn parse_budgeted(html: &str, cpu: &budget::CpuBudget) -> (Html, bool) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{extract, stream_links, Limits, PublishedFrom};
    use url::Url;

    fn u(s: &str) -> Url {
        Url::parse(s).unwrap_or_else(|_| Url::parse("http://x.invalid/").expect("url"))
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
