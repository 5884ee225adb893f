//! The date syntax of sitemaps: W3C datetimes, read leniently.

use std::borrow::Cow;

use chrono::{DateTime, NaiveDate, NaiveDateTime, Utc};

/// Parses a W3C datetime (the profile of ISO 8601 that sitemaps use): `YYYY`,
/// `YYYY-MM`, `YYYY-MM-DD`, `YYYY-MM-DDThh:mmTZD`, `YYYY-MM-DDThh:mm:ss[.s]TZD`
/// with `TZD` `Z` or `+hh:mm`. Leniently also a missing `TZD` (taken as UTC), a
/// space instead of `T`, `+hhmm`, and RFC 2822 (`Tue, 10 Jun 2003 04:00:00 GMT`).
///
/// No plausibility check: see [`parse_document`](super::parse_document) for that.
pub fn parse_w3c_datetime(text: &str) -> Option<DateTime<Utc>> {
    const WITH_OFFSET: [&str; 3] = [
        "%Y-%m-%dT%H:%M%:z",
        "%Y-%m-%dT%H:%M:%S%.f%z",
        "%Y-%m-%d %H:%M:%S%.f%:z",
    ];
    const WITHOUT_OFFSET: [&str; 3] = [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%d %H:%M:%S%.f",
    ];
    const DATE: &str = "%Y-%m-%d";
    const YEAR_DIGITS: usize = 4;
    const YEAR_MONTH_LEN: usize = 7;

    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    if let Ok(dt) = DateTime::parse_from_rfc3339(text) {
        return Some(dt.to_utc());
    }
    // chrono's %z does not take "Z": spell UTC as an offset for the formats below.
    let zulu = text
        .strip_suffix(['Z', 'z'])
        .map(|t| Cow::Owned(format!("{t}+00:00")))
        .unwrap_or(Cow::Borrowed(text));
    if let Some(dt) = WITH_OFFSET
        .iter()
        .find_map(|f| DateTime::parse_from_str(&zulu, f).ok())
    {
        return Some(dt.to_utc());
    }
    if let Some(dt) = WITHOUT_OFFSET
        .iter()
        .find_map(|f| NaiveDateTime::parse_from_str(text, f).ok())
    {
        return Some(dt.and_utc());
    }
    let date = match text.len() {
        YEAR_DIGITS => NaiveDate::parse_from_str(&format!("{text}-01-01"), DATE).ok(),
        YEAR_MONTH_LEN => NaiveDate::parse_from_str(&format!("{text}-01"), DATE).ok(),
        _ => NaiveDate::parse_from_str(text, DATE).ok(),
    };
    if let Some(d) = date {
        return d.and_hms_opt(0, 0, 0).map(|dt| dt.and_utc());
    }
    DateTime::parse_from_rfc2822(text)
        .ok()
        .map(|dt| dt.to_utc())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discover::test_support::utc;

    #[test]
    fn w3c_datetime_forms() {
        let cases = [
            ("1997", Some(utc(1997, 1, 1, 0, 0, 0))),
            ("1997-07", Some(utc(1997, 7, 1, 0, 0, 0))),
            ("1997-07-16", Some(utc(1997, 7, 16, 0, 0, 0))),
            ("1997-07-16T19:20+01:00", Some(utc(1997, 7, 16, 18, 20, 0))),
            ("1997-07-16T19:20Z", Some(utc(1997, 7, 16, 19, 20, 0))),
            (
                "1997-07-16T19:20:30+01:00",
                Some(utc(1997, 7, 16, 18, 20, 30)),
            ),
            (
                "1997-07-16T19:20:30+0100",
                Some(utc(1997, 7, 16, 18, 20, 30)),
            ),
            ("1997-07-16T19:20:30", Some(utc(1997, 7, 16, 19, 20, 30))),
            ("1997-07-16 19:20:30", Some(utc(1997, 7, 16, 19, 20, 30))),
            (
                "Wed, 16 Jul 1997 19:20:30 GMT",
                Some(utc(1997, 7, 16, 19, 20, 30)),
            ),
            ("", None),
            ("1997-13-01", None),
            ("16/07/1997", None),
            ("soon", None),
        ];
        for (text, want) in cases {
            assert_eq!(parse_w3c_datetime(text), want, "{text:?}");
        }
    }
}
