//! RSS, Atom and JSON feeds, parsed by feed-rs: each entry's page link, with
//! its dates and title.

use feed_rs::model::{Entry, FeedType};

use super::ctx::{clean_title, Ctx};
use super::model::{DiscoveredUrl, Document, FeedKind};
use crate::error::DiscoverError;

// Root elements of the feed formats feed-rs reads.
pub(super) const EL_RSS: &str = "rss";
pub(super) const EL_ATOM_FEED: &str = "feed";
pub(super) const EL_RDF: &str = "RDF";
/// Atom link relation of the entry's own page (also the default relation).
const REL_ALTERNATE: &str = "alternate";

/// The link of a feed entry to its page: the first link without a relation or
/// with `alternate` (not `self`, `enclosure`, `replies`, ...).
fn entry_link(entry: &Entry) -> Option<&str> {
    entry
        .links
        .iter()
        .find(|l| l.rel.as_deref().is_none_or(|r| r == REL_ALTERNATE))
        .map(|l| l.href.as_str())
}

/// An RSS, Atom or JSON feed, parsed by feed-rs.
pub(super) fn parse_feed(data: &[u8], ctx: &mut Ctx<'_>) -> Result<Document, DiscoverError> {
    let parser = feed_rs::parser::Builder::new()
        .base_uri(Some(ctx.base.as_str()))
        .sanitize_content(false)
        .build();
    // feed-rs (through quick-xml's decoding reader) panics on some broken
    // XML declarations ("set_encoding() called after prefix buffer was
    // drained", found by fuzz_sitemaps_and_feeds): a panic is a broken feed.
    let parsed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| parser.parse(data)))
        .map_err(|_| DiscoverError::Feed("the feed parser gave up on this document".into()))?;
    let feed = parsed.map_err(|e| DiscoverError::Feed(e.to_string()))?;
    let kind = match feed.feed_type {
        FeedType::Atom => FeedKind::Atom,
        FeedType::JSON => FeedKind::Json,
        FeedType::RSS0 | FeedType::RSS1 | FeedType::RSS2 => FeedKind::Rss,
    };
    let mut entries = Vec::new();
    for entry in &feed.entries {
        let Some(url) = ctx.accept_url(entry_link(entry), entries.len()) else {
            continue;
        };
        let lastmod = ctx.plausible(entry.updated);
        let published = match entry.published {
            Some(p) => ctx.plausible(Some(p)),
            None => lastmod,
        };
        entries.push(DiscoveredUrl {
            url,
            lastmod,
            published,
            title: entry.title.as_ref().and_then(|t| clean_title(&t.content)),
        });
    }
    Ok(Document::Feed { kind, entries })
}

#[cfg(test)]
mod tests {
    use url::Url;

    use super::super::model::{DiscoveredUrl, Document, FeedKind, Limits};
    use crate::discover::parse_document_at;
    use crate::discover::test_support::{now, parse, utc};
    use crate::error::DiscoverError;

    const RSS: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom">
<channel>
  <title>Example News</title><link>https://news.example/</link><description>d</description>
  <atom:link href="https://news.example/feeds/rss.xml" rel="self" type="application/rss+xml"/>
  <item>
    <title> First story </title>
    <link>/2024/05/31/first.html</link>
    <pubDate>Fri, 31 May 2024 18:00:00 +0200</pubDate>
  </item>
  <item>
    <title>Second</title>
    <link>https://news.example/2024/05/30/second.html</link>
    <pubDate>Mon, 01 Jan 2035 00:00:00 GMT</pubDate>
  </item>
  <item><title>No link</title><description>only text</description></item>
  <item><title>Podcast</title><link>ftp://news.example/ep.mp3</link></item>
</channel>
</rss>"#;

    #[test]
    fn rss_items_give_resolved_links_pub_dates_and_titles() {
        let feed_url = Url::parse("https://news.example/feeds/rss.xml").unwrap();
        let out = parse_document_at(RSS.as_bytes(), &feed_url, &Limits::default(), now()).unwrap();
        let Document::Feed { kind, entries } = &out.document else {
            panic!("expected a feed, got {:?}", out.document);
        };
        assert_eq!(*kind, FeedKind::Rss);
        assert_eq!(
            entries[0],
            DiscoveredUrl {
                url: Url::parse("https://news.example/2024/05/31/first.html").unwrap(),
                // feed-rs copies pubDate into `updated` when an item has none.
                lastmod: Some(utc(2024, 5, 31, 16, 0, 0)),
                published: Some(utc(2024, 5, 31, 16, 0, 0)),
                title: Some("First story".to_string()),
            }
        );
        assert_eq!(
            entries[1].url.as_str(),
            "https://news.example/2024/05/30/second.html"
        );
        assert_eq!(entries[1].published, None, "a date years ahead is no hint");
        assert_eq!(entries[1].lastmod, None);
        assert_eq!(entries.len(), 2);
        assert_eq!(out.report.dropped_dates, 2);
        assert_eq!(out.report.invalid_urls, 1);
        assert_eq!(out.report.unsupported_scheme, 1);
    }

    #[test]
    fn atom_entries_use_the_alternate_link_and_fall_back_to_updated() {
        let doc = r#"<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <title>Example</title><id>urn:example:feed</id><updated>2024-05-31T12:00:00Z</updated>
  <link rel="self" href="https://news.example/atom.xml"/>
  <entry>
    <title type="text">Published one</title><id>urn:example:1</id>
    <link rel="self" href="https://api.news.example/entries/1"/>
    <link rel="alternate" type="text/html" href="articles/1.html"/>
    <published>2024-05-30T09:00:00+01:00</published>
    <updated>2024-05-31T10:00:00Z</updated>
  </entry>
  <entry>
    <title>Updated only</title><id>urn:example:2</id>
    <link href="https://news.example/articles/2.html"/>
    <updated>2024-05-29T07:00:00Z</updated>
  </entry>
</feed>"#;
        let feed_url = Url::parse("https://news.example/feeds/atom.xml").unwrap();
        let out = parse_document_at(doc.as_bytes(), &feed_url, &Limits::default(), now()).unwrap();
        let Document::Feed { kind, entries } = &out.document else {
            panic!("expected a feed, got {:?}", out.document);
        };
        assert_eq!(*kind, FeedKind::Atom);
        assert_eq!(
            entries[0],
            DiscoveredUrl {
                url: Url::parse("https://news.example/feeds/articles/1.html").unwrap(),
                lastmod: Some(utc(2024, 5, 31, 10, 0, 0)),
                published: Some(utc(2024, 5, 30, 8, 0, 0)),
                title: Some("Published one".to_string()),
            }
        );
        assert_eq!(
            entries[1].url.as_str(),
            "https://news.example/articles/2.html"
        );
        assert_eq!(entries[1].published, Some(utc(2024, 5, 29, 7, 0, 0)));
        assert_eq!(entries.len(), 2);
    }

    #[test]
    fn json_feed_is_recognised() {
        let doc = r#"{"version": "https://jsonfeed.org/version/1.1", "title": "J",
            "items": [{"id": "1", "url": "https://news.example/j/1", "title": "One",
                       "date_published": "2024-05-30T10:00:00Z"}]}"#;
        let out = parse(doc.as_bytes()).unwrap();
        let Document::Feed { kind, entries } = &out.document else {
            panic!("expected a feed, got {:?}", out.document);
        };
        assert_eq!(*kind, FeedKind::Json);
        assert_eq!(entries[0].url.as_str(), "https://news.example/j/1");
        assert_eq!(entries[0].published, Some(utc(2024, 5, 30, 10, 0, 0)));
    }

    #[test]
    fn feed_entries_over_the_limit_are_counted() {
        let feed_url = Url::parse("https://news.example/feeds/rss.xml").unwrap();
        let limits = Limits {
            max_urls: 1,
            ..Limits::default()
        };
        let out = parse_document_at(RSS.as_bytes(), &feed_url, &limits, now()).unwrap();
        assert_eq!(out.document.urls().len(), 1);
        assert_eq!(out.report.over_limit, 1);
    }

    #[test]
    fn malformed_feed_is_an_error() {
        let doc = r#"<rss version="2.0"><channel><item><title>x</item></channel></rss>"#;
        let err = parse(doc.as_bytes()).unwrap_err();
        assert!(matches!(err, DiscoverError::Feed(_)), "{err:?}");
    }
}

#[cfg(test)]
mod fuzz_regressions {
    use url::Url;

    use super::*;
    use crate::discover::{parse_document, Limits};

    /// Regression (fuzz_sitemaps_and_feeds): a second XML declaration that
    /// names an encoding made quick-xml panic ("set_encoding() called after
    /// prefix buffer was drained") inside the feed parser.
    #[test]
    fn a_second_xml_declaration_is_an_error_not_a_panic() {
        let doc = br#"<?xml version="1.0" encoding="gbk"?<?xml version="1.0" encoding="gbk"?><rss><rss version="2.0"><channel><title>t</title><item><title>x</title><link>https://news.example.com/x.html</link></item></channel></rss>"#;
        let base = Url::parse("https://news.example.com/").expect("url");
        let r = parse_document(doc, &base, &Limits::default());
        assert!(matches!(r, Err(DiscoverError::Feed(_))), "{r:?}");
    }
}
