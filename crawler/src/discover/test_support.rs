//! Helpers shared by the tests of the discovery parsers: the time they parse
//! at, the document URL, and small sitemap documents.

use chrono::{DateTime, TimeZone, Utc};
use url::Url;

use super::model::{Document, Limits, ParseOutcome};
use super::parse::parse_document_at;
use crate::error::DiscoverError;

/// The time the tests parse at.
pub(super) fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2024, 6, 1, 0, 0, 0).unwrap()
}

pub(super) fn utc(y: i32, mo: u32, d: u32, h: u32, mi: u32, s: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, mo, d, h, mi, s).unwrap()
}

pub(super) fn base() -> Url {
    Url::parse("https://news.example/sitemaps/sitemap.xml").unwrap()
}

pub(super) fn parse(doc: &[u8]) -> Result<ParseOutcome, DiscoverError> {
    parse_document_at(doc, &base(), &Limits::default(), now())
}

pub(super) fn urls(doc: &Document) -> Vec<&str> {
    doc.urls().iter().map(|u| u.url.as_str()).collect()
}

pub(super) fn urlset(body: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
        xmlns:news="http://www.google.com/schemas/sitemap-news/0.9"
        xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
{body}
</urlset>"#
    )
}
