//! The entry point of document parsing: the bytes are decompressed and
//! decoded, their format is sniffed from the content, and the sitemap or feed
//! parser reads them.

use chrono::{DateTime, Utc};
use url::Url;

use super::ctx::Ctx;
use super::decode::{gunzip, looks_like_json, root_name, xml_text};
use super::feed::{parse_feed, EL_ATOM_FEED, EL_RDF, EL_RSS};
use super::model::{Document, Limits, ParseOutcome, ParseReport};
use super::sitemap::{parse_sitemap, EL_SITEMAPINDEX, EL_URLSET};
use crate::error::DiscoverError;

/// Parses a sitemap, sitemap index or feed fetched from `base` (the URL it was
/// fetched from, used to resolve relative URLs), judging dates against the
/// current time. See the [module docs](super) for what is accepted.
///
/// # Errors
///
/// [`DiscoverError`] when the document as a whole is unusable: too large (also
/// after decompression), corrupt gzip, undecodable text, malformed XML (with its
/// line and column), a feed that feed-rs rejects, no root element, or a root
/// element that is neither a sitemap nor a feed.
pub fn parse_document(
    bytes: &[u8],
    base: &Url,
    limits: &Limits,
) -> Result<ParseOutcome, DiscoverError> {
    parse_document_at(bytes, base, limits, Utc::now())
}

/// [`parse_document`] with the time against which dates in the future are
/// judged given explicitly (for tests and replays of old fetches).
///
/// # Errors
///
/// As [`parse_document`].
pub fn parse_document_at(
    bytes: &[u8],
    base: &Url,
    limits: &Limits,
    now: DateTime<Utc>,
) -> Result<ParseOutcome, DiscoverError> {
    let (data, gzipped) = gunzip(bytes, limits)?;
    let mut ctx = Ctx {
        base,
        limits,
        now,
        report: ParseReport {
            gzipped,
            ..ParseReport::default()
        },
    };
    let document = if looks_like_json(&data) {
        parse_feed(&data, &mut ctx)?
    } else {
        let text = xml_text(&data)?;
        match root_name(&text)?.as_str() {
            EL_URLSET => Document::UrlSet(parse_sitemap(&text, &mut ctx)?),
            EL_SITEMAPINDEX => Document::SitemapIndex(parse_sitemap(&text, &mut ctx)?),
            EL_RSS | EL_ATOM_FEED | EL_RDF => parse_feed(&data, &mut ctx)?,
            other => {
                return Err(DiscoverError::UnknownFormat {
                    root: other.to_string(),
                })
            }
        }
    };
    let report = ctx.report;
    tracing::debug!(
        base = %base,
        urls = document.urls().len(),
        gzipped = report.gzipped,
        over_limit = report.over_limit,
        invalid_urls = report.invalid_urls,
        unsupported_scheme = report.unsupported_scheme,
        dropped_dates = report.dropped_dates,
        "discovery document parsed"
    );
    Ok(ParseOutcome { document, report })
}

#[cfg(test)]
mod tests {
    use super::super::test_support::parse;
    use crate::error::DiscoverError;

    #[test]
    fn html_or_empty_documents_are_not_sitemaps() {
        assert_eq!(
            parse(b"<!DOCTYPE html><html><body>404</body></html>").unwrap_err(),
            DiscoverError::UnknownFormat {
                root: "html".to_string()
            }
        );
        assert_eq!(
            parse(b"<?xml version=\"1.0\"?>\n  ").unwrap_err(),
            DiscoverError::Empty
        );
        assert_eq!(parse(b"").unwrap_err(), DiscoverError::Empty);
    }
}
