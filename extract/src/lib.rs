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
//! [`text`] (article text, readability-style). The page is parsed under its
//! budgets (`parse`, [`budget`]), read through `dom`, `jsonld`, `byline`,
//! `sections` and `page`, and its attributes decided by the rule tables of
//! `attributes` (the shape of a rule in `rules`); `links` streams links and
//! embeds, `visible`, `language`, `keywords` and `counts` give the rest. This
//! file is the facade: [`Extracted`] and the `extract` functions.

mod attributes;
pub mod budget;
mod byline;
mod counts;
mod dom;
mod fold;
mod jsonld;
mod keywords;
mod language;
mod lines;
mod links;
mod lists;
pub mod media;
mod page;
mod parse;
mod rules;
mod scan;
mod sections;
pub mod text;
pub mod time;
pub mod title;
mod visible;

use chrono::{DateTime, FixedOffset, Utc};
use scraper::Html;
use tokens::Tokens;
use url::Url;

use attributes::{decide_attributes, Decided};
use counts::{extract_counts, COMMENT_DATA_ATTRS};
use dom::meta_pairs;
use jsonld::jsonld;
use language::detect_language;
use links::{resolve_embeds, stream_into, LinkSink};
use page::PageView;
use parse::{large_page_cut, parse_budgeted};

pub use attributes::{DATE_META_KEYS, MODIFIED_META_KEYS, PUBLISHED_META_KEYS};
pub use budget::{LimitReport, Limits};
pub use counts::parse_count;
pub use keywords::{keywords, keywords_and_tokens, KEYWORD_COUNT};
pub use language::CJK_SHARE_ZH;
pub use links::{stream_embeds, stream_links, Links};
pub use parse::{LARGE_PAGE_BYTES, LARGE_PAGE_PREFIX_BYTES};
pub use rules::Decision;
pub use scan::EmbedKind;
pub use shapes::page::Embed;
pub use time::{page_zone, parse_date, Published, PublishedFrom, TimeContext};
pub use visible::visible_text;

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
    /// (the outlet rule of `attributes`): unlike [`Extracted::media`], never the agency or
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
    let (comments, participants) = extract_counts(&els, ld.comments, &body_text);
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
mod tests {
    use super::*;

    pub(crate) fn url(s: &str) -> Url {
        Url::parse(s).unwrap_or_else(|_| Url::parse("http://invalid.invalid/").expect("static url"))
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
