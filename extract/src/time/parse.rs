//! Parsing a machine-readable date (meta content, JSON-LD, `<time datetime>`)
//! or, failing its formats, the first date the text scan finds in it.

use chrono::{DateTime, NaiveDate, Utc};

use super::scan::text_dates;
use super::stated::{stated, Stated};

/// Parses a machine-readable date (meta content, JSON-LD, `<time datetime>`):
/// RFC 3339 / ISO 8601 with or without offset, RFC 2822, Unix seconds or
/// milliseconds, and the text forms of [`text_dates`].
pub fn parse_stated(input: &str) -> Option<(Stated, bool)> {
    let s = input.trim();
    if s.is_empty() || s.len() > 200 {
        return None;
    }
    if let Ok(d) = DateTime::parse_from_rfc3339(s) {
        return Some((Stated::Zoned(d), true));
    }
    if let Ok(d) = DateTime::parse_from_rfc2822(s) {
        return Some((Stated::Zoned(d), true));
    }
    const ZONED: [&str; 6] = [
        "%Y-%m-%dT%H:%M:%S%z",
        "%Y-%m-%dT%H:%M:%S%.f%z",
        "%Y-%m-%d %H:%M:%S%z",
        "%Y-%m-%d %H:%M:%S %z",
        "%Y-%m-%dT%H:%M%z",
        "%Y-%m-%dT%H:%M%:z",
    ];
    for f in ZONED {
        if let Ok(d) = DateTime::parse_from_str(s, f) {
            return Some((Stated::Zoned(d), true));
        }
    }
    if s.len() >= 9 && s.len() <= 13 && s.bytes().all(|b| b.is_ascii_digit()) {
        let n: i64 = s.parse().ok()?;
        let d = if s.len() == 13 {
            DateTime::from_timestamp_millis(n)
        } else if s.len() == 10 {
            DateTime::from_timestamp(n, 0)
        } else {
            None
        };
        if let Some(d) = d {
            return Some((Stated::Zoned(d.fixed_offset()), true));
        }
    }
    if let Ok(d) = NaiveDate::parse_from_str(s, "%Y%m%d") {
        return stated(d, None, None);
    }
    let first = text_dates(s).into_iter().next()?;
    Some((first.stated, first.has_time))
}

/// Parses the date formats found in news pages; zone-less times are UTC.
pub fn parse_date(input: &str) -> Option<DateTime<Utc>> {
    let (s, _) = parse_stated(input)?;
    s.resolve(chrono_tz::UTC).map(|d| d.with_timezone(&Utc))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_stated_forms() {
        let p = |s: &str| parse_date(s).map(|d| d.format("%Y-%m-%d %H:%M").to_string());
        assert_eq!(p("1700000000").as_deref(), Some("2023-11-14 22:13"));
        assert_eq!(p("1700000000000").as_deref(), Some("2023-11-14 22:13"));
        assert_eq!(p("20231117").as_deref(), Some("2023-11-17 00:00"));
        assert_eq!(
            p("2023-11-17 20:52:00 +0800").as_deref(),
            Some("2023-11-17 12:52")
        );
        assert_eq!(
            p("Saturday, December 27, 2014, 12:06 PM").as_deref(),
            Some("2014-12-27 12:06")
        );
        // Chinese government CMS meta values (`firstpublishedtime`): a dash
        // between the day and the time; a dash before anything else is none.
        assert_eq!(
            p("2007-08-20-23:59:59").as_deref(),
            Some("2007-08-20 23:59")
        );
        assert_eq!(p("2007-08-20-3").as_deref(), Some("2007-08-20 00:00"));
        assert_eq!(p("nonsense"), None);
    }
}
