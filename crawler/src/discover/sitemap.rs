//! The sitemaps.org 0.9 parser, for `<urlset>` sitemaps (with the Google News
//! extension) and `<sitemapindex>` indexes: a streaming reader that collects
//! the texts of each entry and keeps the entries [`Ctx`] accepts.

use quick_xml::events::{BytesRef, Event};
use quick_xml::name::{QName, ResolveResult};
use quick_xml::NsReader;

use super::ctx::{clean_title, Ctx};
use super::decode::xml_error;
use super::model::DiscoveredUrl;
use crate::error::DiscoverError;

/// Namespace of sitemaps.org 0.9 sitemaps and sitemap indexes.
pub const SITEMAP_NS: &str = "http://www.sitemaps.org/schemas/sitemap/0.9";

/// Namespace of the Google News sitemap extension.
pub const NEWS_NS: &str = "http://www.google.com/schemas/sitemap-news/0.9";

// Element names (local parts) of the sitemap and news vocabularies.
pub(super) const EL_URLSET: &str = "urlset";
pub(super) const EL_SITEMAPINDEX: &str = "sitemapindex";
const EL_URL: &str = "url";
const EL_SITEMAP: &str = "sitemap";
const EL_LOC: &str = "loc";
const EL_LASTMOD: &str = "lastmod";
const EL_NEWS: &str = "news";
const EL_PUBLICATION_DATE: &str = "publication_date";
const EL_TITLE: &str = "title";
/// The prefix that news sitemaps use; accepted even when it is not declared.
const NEWS_PREFIX: &str = "news";

/// Elements of the sitemap vocabulary, by position; everything else is `Other`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tag {
    UrlSet,
    SitemapIndex,
    Url,
    Sitemap,
    Loc,
    Lastmod,
    News,
    NewsPublicationDate,
    NewsTitle,
    Other,
}

impl Tag {
    /// Elements whose text is collected.
    fn has_text(self) -> bool {
        matches!(
            self,
            Self::Loc | Self::Lastmod | Self::NewsPublicationDate | Self::NewsTitle
        )
    }

    /// Classifies an element from its parent, namespace and name.
    fn of(parent: Option<Tag>, ns: &ResolveResult<'_>, name: QName<'_>) -> Self {
        let prefix = name.prefix();
        // Sitemaps in the wild often lack or misspell the default namespace:
        // any unprefixed element counts as sitemap vocabulary.
        let core =
            prefix.is_none() || matches!(ns, ResolveResult::Bound(n) if n.as_ref() == SITEMAP_NS);
        // The news prefix is often used without being declared.
        let news = matches!(ns, ResolveResult::Bound(n) if n.as_ref() == NEWS_NS)
            || prefix.is_some_and(|p| p.as_ref() == NEWS_PREFIX);
        let local = name.local_name();
        match (parent, local.as_ref()) {
            (None, EL_URLSET) if core => Self::UrlSet,
            (None, EL_SITEMAPINDEX) if core => Self::SitemapIndex,
            (Some(Self::UrlSet), EL_URL) if core => Self::Url,
            (Some(Self::SitemapIndex), EL_SITEMAP) if core => Self::Sitemap,
            (Some(Self::Url | Self::Sitemap), EL_LOC) if core => Self::Loc,
            (Some(Self::Url | Self::Sitemap), EL_LASTMOD) if core => Self::Lastmod,
            (Some(Self::Url), EL_NEWS) if news => Self::News,
            (Some(Self::News), EL_PUBLICATION_DATE) if news => Self::NewsPublicationDate,
            (Some(Self::News), EL_TITLE) if news => Self::NewsTitle,
            _ => Self::Other,
        }
    }
}

/// Texts of one `<url>` or `<sitemap>` entry, as written.
#[derive(Debug, Default)]
struct RawEntry {
    loc: Option<String>,
    lastmod: Option<String>,
    published: Option<String>,
    title: Option<String>,
}

/// Appends the replacement of an entity or character reference to `out`;
/// an unknown entity is kept as written.
fn push_reference(out: &mut String, r: &BytesRef<'_>) {
    if r.is_char_ref() {
        if let Ok(Some(c)) = r.resolve_char_ref() {
            out.push(c);
            return;
        }
    } else if let Some(s) = quick_xml::escape::resolve_predefined_entity(r) {
        out.push_str(s);
        return;
    }
    out.push('&');
    out.push_str(r);
    out.push(';');
}

/// The entries of a `<urlset>` or `<sitemapindex>` (the caller has sniffed the root).
pub(super) fn parse_sitemap(
    text: &str,
    ctx: &mut Ctx<'_>,
) -> Result<Vec<DiscoveredUrl>, DiscoverError> {
    let mut reader = NsReader::from_str(text);
    let mut stack: Vec<Tag> = Vec::new();
    let mut entry: Option<RawEntry> = None;
    let mut buf = String::new();
    let mut out = Vec::new();
    loop {
        let event = reader
            .read_event()
            .map_err(|e| xml_error(text, reader.error_position(), e))?;
        match event {
            Event::Start(e) => {
                let (ns, _) = reader.resolver().resolve_element(e.name());
                let tag = Tag::of(stack.last().copied(), &ns, e.name());
                match tag {
                    Tag::Url | Tag::Sitemap => entry = Some(RawEntry::default()),
                    t if t.has_text() => buf.clear(),
                    _ => {}
                }
                stack.push(tag);
            }
            Event::Empty(e) => {
                let (ns, _) = reader.resolver().resolve_element(e.name());
                let tag = Tag::of(stack.last().copied(), &ns, e.name());
                if matches!(tag, Tag::Url | Tag::Sitemap) {
                    finish_entry(RawEntry::default(), ctx, &mut out);
                }
            }
            Event::End(_) => match (stack.pop(), entry.as_mut()) {
                (Some(Tag::Url | Tag::Sitemap), Some(_)) => {
                    if let Some(raw) = entry.take() {
                        finish_entry(raw, ctx, &mut out);
                    }
                }
                (Some(Tag::Loc), Some(raw)) => raw.loc = Some(std::mem::take(&mut buf)),
                (Some(Tag::Lastmod), Some(raw)) => raw.lastmod = Some(std::mem::take(&mut buf)),
                (Some(Tag::NewsPublicationDate), Some(raw)) => {
                    raw.published = Some(std::mem::take(&mut buf));
                }
                (Some(Tag::NewsTitle), Some(raw)) => raw.title = Some(std::mem::take(&mut buf)),
                _ => {}
            },
            Event::Text(t) if in_text(&stack) => buf.push_str(&t.xml10_content()),
            Event::CData(c) if in_text(&stack) => buf.push_str(&c.xml10_content()),
            Event::GeneralRef(r) if in_text(&stack) => {
                push_reference(&mut buf, &r);
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if !stack.is_empty() {
        return Err(xml_error(
            text,
            u64::try_from(text.len()).unwrap_or(u64::MAX),
            format!(
                "document ends inside {} unclosed element(s) (truncated?)",
                stack.len()
            ),
        ));
    }
    Ok(out)
}

/// True when the innermost open element is one whose text is collected.
fn in_text(stack: &[Tag]) -> bool {
    stack.last().is_some_and(|tag| tag.has_text())
}

/// Turns a raw sitemap entry into a [`DiscoveredUrl`], or counts why not.
fn finish_entry(raw: RawEntry, ctx: &mut Ctx<'_>, out: &mut Vec<DiscoveredUrl>) {
    let Some(url) = ctx.accept_url(raw.loc.as_deref(), out.len()) else {
        return;
    };
    let lastmod = ctx.sitemap_date(raw.lastmod.as_deref());
    let published = ctx.sitemap_date(raw.published.as_deref());
    out.push(DiscoveredUrl {
        url,
        lastmod,
        published,
        title: raw.title.as_deref().and_then(clean_title),
    });
}

#[cfg(test)]
mod tests {
    use chrono::TimeDelta;
    use url::Url;

    use super::super::model::{DiscoveredUrl, Document, ParseReport};
    use crate::discover::test_support::{parse, urls, urlset, utc};
    use crate::error::DiscoverError;

    #[test]
    fn urlset_entries_with_w3c_lastmod_forms_and_escaped_locs() {
        let doc = urlset(
            r#"
  <url><loc> https://news.example/a?x=1&amp;y=2 </loc><lastmod>2024-05-02</lastmod></url>
  <url><loc><![CDATA[https://news.example/b?p=1&q=2]]></loc>
       <lastmod>2024-05-02T10:30:00+02:00</lastmod><changefreq>daily</changefreq></url>
  <url><loc>https://news.example/c&#x2F;d</loc><lastmod>2024-05-03T08:00Z</lastmod></url>
  <url><loc>https://news.example/e</loc><lastmod>2024-05-03T08:00:00.500Z</lastmod></url>
  <url><loc>https://news.example/f</loc></url>"#,
        );
        let out = parse(doc.as_bytes()).unwrap();
        assert!(matches!(out.document, Document::UrlSet(_)));
        assert_eq!(
            urls(&out.document),
            [
                "https://news.example/a?x=1&y=2",
                "https://news.example/b?p=1&q=2",
                "https://news.example/c/d",
                "https://news.example/e",
                "https://news.example/f",
            ]
        );
        let lastmods: Vec<_> = out.document.urls().iter().map(|u| u.lastmod).collect();
        assert_eq!(
            lastmods,
            [
                Some(utc(2024, 5, 2, 0, 0, 0)),
                Some(utc(2024, 5, 2, 8, 30, 0)),
                Some(utc(2024, 5, 3, 8, 0, 0)),
                Some(utc(2024, 5, 3, 8, 0, 0) + TimeDelta::milliseconds(500)),
                None,
            ]
        );
        assert_eq!(out.report, ParseReport::default());
    }

    #[test]
    fn news_extension_gives_publication_date_and_title_and_image_locs_are_not_pages() {
        let doc = urlset(
            r#"
  <url>
    <loc>https://news.example/2024/05/31/story.html</loc>
    <image:image><image:loc>https://img.example/pic.jpg</image:loc></image:image>
    <news:news>
      <news:publication><news:name>The Example</news:name><news:language>en</news:language></news:publication>
      <news:publication_date>2024-05-31T18:15:00-04:00</news:publication_date>
      <news:title>  Council votes &lt;yes&gt; on budget </news:title>
    </news:news>
  </url>"#,
        );
        let out = parse(doc.as_bytes()).unwrap();
        assert_eq!(
            out.document.urls(),
            [DiscoveredUrl {
                url: Url::parse("https://news.example/2024/05/31/story.html").unwrap(),
                lastmod: None,
                published: Some(utc(2024, 5, 31, 22, 15, 0)),
                title: Some("Council votes <yes> on budget".to_string()),
            }]
        );
    }

    #[test]
    fn news_prefix_is_accepted_when_undeclared_and_sitemap_namespace_may_be_missing() {
        let doc = r#"<urlset><url><loc>https://news.example/x</loc>
            <news:news><news:publication_date>2024-05-01</news:publication_date>
            <news:title>T</news:title></news:news></url></urlset>"#;
        let out = parse(doc.as_bytes()).unwrap();
        let u = &out.document.urls()[0];
        assert_eq!(u.published, Some(utc(2024, 5, 1, 0, 0, 0)));
        assert_eq!(u.title.as_deref(), Some("T"));
    }

    #[test]
    fn sitemap_index_lists_child_sitemaps_with_lastmod() {
        let doc = r#"<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <sitemap><loc>https://news.example/sitemap-2024-05.xml.gz</loc><lastmod>2024-05-31T23:00:00Z</lastmod></sitemap>
  <sitemap><loc>sitemap-news.xml</loc></sitemap>
</sitemapindex>"#;
        let out = parse(doc.as_bytes()).unwrap();
        let Document::SitemapIndex(children) = &out.document else {
            panic!("expected a sitemap index, got {:?}", out.document);
        };
        assert_eq!(
            urls(&out.document),
            [
                "https://news.example/sitemap-2024-05.xml.gz",
                "https://news.example/sitemaps/sitemap-news.xml",
            ]
        );
        assert_eq!(children[0].lastmod, Some(utc(2024, 5, 31, 23, 0, 0)));
        assert_eq!(children[1].lastmod, None);
    }

    #[test]
    fn truncated_sitemap_is_an_error_not_a_short_list() {
        let doc = urlset("<url><loc>https://news.example/a</loc></url><url><loc>https://news.ex");
        let doc = &doc[..doc.find("news.ex\n").unwrap() + "news.ex".len()];
        let err = parse(doc.as_bytes()).unwrap_err();
        assert!(
            matches!(&err, DiscoverError::Xml { message, .. } if message.contains("truncated")),
            "{err:?}"
        );
    }
}
