//! Which entries and dates a document keeps: the parsing state that the
//! sitemap and feed parsers share ([`Ctx`]), with the URL, URL-count and date
//! plausibility rules and the counts of what they dropped.

use chrono::{DateTime, Datelike, TimeDelta, Utc};
use url::Url;

use super::dates::parse_w3c_datetime;
use super::model::{Limits, ParseReport};
use crate::normalize::CRAWLABLE_SCHEMES;

/// Dates before this year are dropped as implausible (there was no web).
pub const MIN_PLAUSIBLE_YEAR: i32 = 1990;

/// Dates later than this after the time of parsing are dropped: clocks and time
/// zones are sometimes wrong by hours, a date days ahead is not a hint.
pub const MAX_FUTURE_SKEW: TimeDelta = TimeDelta::days(1);

/// Parsing state shared by the sitemap and feed parsers.
pub(super) struct Ctx<'a> {
    pub(super) base: &'a Url,
    pub(super) limits: &'a Limits,
    pub(super) now: DateTime<Utc>,
    pub(super) report: ParseReport,
}

impl Ctx<'_> {
    /// The URL of an entry, or `None` (counted) when it is missing, unparsable,
    /// not http(s), or over the limit of `kept` URLs.
    pub(super) fn accept_url(&mut self, raw: Option<&str>, kept: usize) -> Option<Url> {
        let Some(raw) = raw.map(str::trim).filter(|s| !s.is_empty()) else {
            self.report.invalid_urls += 1;
            return None;
        };
        let Ok(url) = self.base.join(raw) else {
            self.report.invalid_urls += 1;
            return None;
        };
        if !CRAWLABLE_SCHEMES.contains(&url.scheme()) {
            self.report.unsupported_scheme += 1;
            return None;
        }
        if kept >= self.limits.max_urls {
            self.report.over_limit += 1;
            return None;
        }
        Some(url)
    }

    /// `dt` if plausible, else `None` (counted).
    pub(super) fn plausible(&mut self, dt: Option<DateTime<Utc>>) -> Option<DateTime<Utc>> {
        let dt = dt?;
        if dt.year() >= MIN_PLAUSIBLE_YEAR && dt <= self.now + MAX_FUTURE_SKEW {
            Some(dt)
        } else {
            self.report.dropped_dates += 1;
            None
        }
    }

    /// A sitemap date: parsed, then checked; an empty element is no date.
    pub(super) fn sitemap_date(&mut self, raw: Option<&str>) -> Option<DateTime<Utc>> {
        let raw = raw.map(str::trim).filter(|s| !s.is_empty())?;
        match parse_w3c_datetime(raw) {
            Some(dt) => self.plausible(Some(dt)),
            None => {
                self.report.dropped_dates += 1;
                None
            }
        }
    }
}

/// Trimmed, non-empty title.
pub(super) fn clean_title(raw: &str) -> Option<String> {
    let t = raw.trim();
    (!t.is_empty()).then(|| t.to_string())
}

#[cfg(test)]
mod tests {
    use crate::discover::test_support::{parse, urls, urlset, utc};
    use crate::discover::{DEFAULT_MAX_BYTES, DEFAULT_MAX_URLS};

    #[test]
    fn hundred_thousand_urls_keep_the_first_fifty_thousand_and_count_the_rest() {
        const TOTAL: usize = 100_000;
        let mut body = String::with_capacity(TOTAL * 80);
        for i in 0..TOTAL {
            body.push_str(&format!(
                "<url><loc>https://news.example/a/{i}</loc><lastmod>2024-05-01</lastmod></url>\n"
            ));
        }
        let doc = urlset(&body);
        assert!((doc.len() as u64) < DEFAULT_MAX_BYTES);
        let out = parse(doc.as_bytes()).unwrap();
        let kept = out.document.urls();
        assert_eq!(kept.len(), DEFAULT_MAX_URLS);
        assert_eq!(kept[0].url.as_str(), "https://news.example/a/0");
        assert_eq!(
            kept[DEFAULT_MAX_URLS - 1].url.as_str(),
            format!("https://news.example/a/{}", DEFAULT_MAX_URLS - 1)
        );
        assert_eq!(out.report.over_limit, TOTAL - DEFAULT_MAX_URLS);
        assert!(out.report.truncated());
        assert_eq!(out.report.invalid_urls, 0);
    }

    #[test]
    fn implausible_dates_become_none_and_are_counted() {
        let doc = urlset(
            r#"
  <url><loc>https://news.example/ok</loc><lastmod>2024-05-31T12:00:00Z</lastmod>
    <news:news><news:publication_date>2024-06-01T12:00:00Z</news:publication_date></news:news></url>
  <url><loc>https://news.example/future</loc><lastmod>2024-05-31</lastmod>
    <news:news><news:publication_date>2024-06-03T00:00:00Z</news:publication_date></news:news></url>
  <url><loc>https://news.example/year0</loc><lastmod>0000-01-01</lastmod></url>
  <url><loc>https://news.example/year9999</loc><lastmod>9999-12-31T23:59:59Z</lastmod></url>
  <url><loc>https://news.example/garbage</loc><lastmod>yesterday</lastmod>
    <news:news><news:publication_date>2024-02-30</news:publication_date></news:news></url>"#,
        );
        let out = parse(doc.as_bytes()).unwrap();
        let dates: Vec<_> = out
            .document
            .urls()
            .iter()
            .map(|u| (u.lastmod, u.published))
            .collect();
        assert_eq!(
            dates,
            [
                // 12 hours ahead of `now`: within the allowed skew.
                (
                    Some(utc(2024, 5, 31, 12, 0, 0)),
                    Some(utc(2024, 6, 1, 12, 0, 0))
                ),
                (Some(utc(2024, 5, 31, 0, 0, 0)), None),
                (None, None),
                (None, None),
                (None, None),
            ]
        );
        assert_eq!(out.report.dropped_dates, 5);
        assert_eq!(
            out.document.urls().len(),
            5,
            "entries are kept without dates"
        );
    }

    #[test]
    fn bad_and_non_http_locs_are_skipped_and_counted() {
        let doc = urlset(
            r#"
  <url><loc>ftp://news.example/file</loc></url>
  <url><loc>mailto:desk@news.example</loc></url>
  <url><loc>http://exa mple.com/</loc></url>
  <url><loc>https://[::1</loc></url>
  <url><loc>   </loc></url>
  <url><lastmod>2024-05-01</lastmod></url>
  <url/>
  <url><loc>/relative/page.html</loc></url>
  <url><loc>https://news.example/good</loc></url>"#,
        );
        let out = parse(doc.as_bytes()).unwrap();
        assert_eq!(
            urls(&out.document),
            [
                "https://news.example/relative/page.html",
                "https://news.example/good"
            ]
        );
        assert_eq!(out.report.unsupported_scheme, 2);
        assert_eq!(out.report.invalid_urls, 5);
    }
}
