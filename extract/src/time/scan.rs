//! The text scan: every absolute date in a text, in each form the page may
//! write it (numeric year-first, Chinese, English, day-first), in order, each
//! with the time of day set apart from it joined.

use chrono::{NaiveDate, NaiveTime};

use super::fields::{
    day_first_time, has_year_digits, hour24, month_number, num, with_ascii_digits,
};
use super::join::join_times;
use super::labels::is_cjk;
use super::numerals::{han_numeral_dates, roc_dates};
use super::patterns::{
    MONTH_NAMES, RE_DMY_NUMERIC, RE_EN_DMY, RE_EN_MDY, RE_EN_TIME_FIRST, RE_EN_TIME_FIRST_DMY,
    RE_NAMED_DMY, RE_NUMERIC, RE_TIME_FIRST_NUMERIC, RE_YEAR_APART, RE_ZONE_ABBR,
};
use super::stated::{stated, Stated, TextDate};
use super::zone::{abbreviation_offset, parse_offset};

/// Where the first absolute date in `text` starts (a byte offset).
pub(crate) fn first_date_start(text: &str) -> Option<usize> {
    text_dates(text).first().map(|d| d.start)
}

/// Every absolute date in `text` (numeric year-first, Chinese, English,
/// day-first numeric and day-first with a month name), in order.
pub(super) fn text_dates(text: &str) -> Vec<TextDate> {
    if let Some(out) = with_ascii_digits(text, text_dates) {
        return out;
    }
    let mut out: Vec<TextDate> = han_numeral_dates(text);
    out.extend(roc_dates(text));
    if !has_year_digits(text) {
        out.sort_by_key(|d| d.start);
        return out;
    }
    // `10時30分`: the same offsets in the folded text.
    let folded = crate::fold::fold(text);
    let text = folded.as_ref();
    numeric_dates(text, &mut out);
    time_first_numeric_dates(text, &mut out);
    year_apart_dates(text, &mut out);
    english_dates(text, &mut out);
    day_first_dates(text, &mut out);
    out.sort_by_key(|d| d.start);
    join_times(text, &mut out);
    out
}

/// Year-first numeric and Chinese dates (`2024-11-25 15:05`, `2024年11月25日`),
/// with their time of day and offset or zone.
fn numeric_dates(text: &str, out: &mut Vec<TextDate>) {
    for c in RE_NUMERIC.captures_iter(text) {
        let Some(m) = c.get(0) else { continue };
        // Not part of a longer number (an ID, a phone number).
        if text[..m.start()].ends_with(|ch: char| ch.is_ascii_digit())
            || text[m.end()..].starts_with(|ch: char| ch.is_ascii_digit())
        {
            continue;
        }
        let Some(date) = NaiveDate::from_ymd_opt(
            num(&c, 1).unwrap_or(0),
            num(&c, 2).unwrap_or(0),
            num(&c, 3).unwrap_or(0),
        ) else {
            continue;
        };
        let time = match num::<u32>(&c, 5) {
            Some(h) => hour24(
                h,
                c.get(8).map(|m| m.as_str()),
                c.get(4).map(|m| m.as_str()),
            )
            .and_then(|h| NaiveTime::from_hms_opt(h, num(&c, 6)?, num(&c, 7).unwrap_or(0))),
            None => None,
        };
        // `2024-11-25 HKT 20:31`, `2024.12.02 12:31 EST`: a zone's
        // abbreviation before or after the time.
        let offset = c.get(9).and_then(|m| parse_offset(m.as_str())).or_else(|| {
            time.and(RE_ZONE_ABBR.find(m.as_str()))
                .and_then(|z| abbreviation_offset(z.as_str(), date))
        });
        if let Some((s, has_time)) = stated(date, time, offset) {
            out.push(TextDate {
                year_inferred: false,
                relative: false,
                start: m.start(),
                end: m.end(),
                stated: s,
                has_time,
            });
        }
    }
}

/// A time of day before a year-first date (`10:30 2024-11-25`): over the
/// same date found without its time.
fn time_first_numeric_dates(text: &str, out: &mut Vec<TextDate>) {
    for c in RE_TIME_FIRST_NUMERIC.captures_iter(text) {
        let Some(m) = c.get(0) else { continue };
        if text[..m.start()].ends_with(|ch: char| ch.is_ascii_digit() || ch == ':')
            || text[m.end()..].starts_with(|ch: char| ch.is_ascii_digit())
            || c.get(5).map(|s| s.as_str()) != c.get(7).map(|s| s.as_str())
            // The time of the date before it (`2024-11-24 10:30 2024-11-25`).
            || out.iter().any(|d| d.start < m.start() && m.start() < d.end)
        {
            continue;
        }
        let parsed = (|| {
            let date = NaiveDate::from_ymd_opt(num(&c, 4)?, num(&c, 6)?, num(&c, 8)?)?;
            let time = NaiveTime::from_hms_opt(num(&c, 1)?, num(&c, 2)?, num(&c, 3).unwrap_or(0))?;
            stated(date, Some(time), None)
        })();
        if let Some((s, has_time)) = parsed {
            // The date RE_NUMERIC found without its time: this one instead.
            out.retain(|d| !(d.start > m.start() && d.start < m.end()));
            out.push(TextDate {
                year_inferred: false,
                relative: false,
                start: m.start(),
                end: m.end(),
                stated: s,
                has_time,
            });
        }
    }
}

/// Year-first dates whose year stands apart from the month and day.
fn year_apart_dates(text: &str, out: &mut Vec<TextDate>) {
    for c in RE_YEAR_APART.captures_iter(text) {
        let Some(m) = c.get(0) else { continue };
        if text[..m.start()].ends_with(|ch: char| ch.is_ascii_digit())
            || text[m.end()..].starts_with(|ch: char| ch.is_ascii_digit())
        {
            continue;
        }
        let Some(date) = NaiveDate::from_ymd_opt(
            num(&c, 1).unwrap_or(0),
            num(&c, 2).unwrap_or(0),
            num(&c, 3).unwrap_or(0),
        ) else {
            continue;
        };
        let time = num::<u32>(&c, 4)
            .and_then(|h| NaiveTime::from_hms_opt(h, num(&c, 5)?, num(&c, 6).unwrap_or(0)));
        if let Some((s, has_time)) = stated(date, time, None) {
            out.push(TextDate {
                year_inferred: false,
                relative: false,
                start: m.start(),
                end: m.end(),
                stated: s,
                has_time,
            });
        }
    }
}

/// An English date of `c` (a month name; groups `month`, `day`, `year`, and
/// the time's hour at `t`, then its minute, second, am/pm, zone and offset).
fn english_date(
    c: &regex::Captures<'_>,
    month: usize,
    day: usize,
    year: usize,
    t: usize,
) -> Option<(Stated, bool)> {
    let date = NaiveDate::from_ymd_opt(
        num(c, year)?,
        month_number(c.get(month)?.as_str())?,
        num(c, day)?,
    )?;
    let time = match num::<u32>(c, t) {
        Some(h) => hour24(h, c.get(t + 3).map(|m| m.as_str()), None)
            .and_then(|h| NaiveTime::from_hms_opt(h, num(c, t + 1)?, num(c, t + 2).unwrap_or(0))),
        None => None,
    };
    // `GMT+8`: the offset; a bare abbreviation: its zone's.
    let offset = time.and(c.get(t + 4)).and_then(|m| {
        let abbr = m.as_str();
        match c.get(t + 5) {
            Some(o) if ["gmt", "utc"].contains(&abbr.to_ascii_lowercase().as_str()) => {
                parse_offset(o.as_str())
            }
            _ => abbreviation_offset(abbr, date),
        }
    });
    stated(date, time, offset)
}

/// English dates with a month name, month or day first, and those after a
/// time of day (over the same date found without it).
fn english_dates(text: &str, out: &mut Vec<TextDate>) {
    for c in RE_EN_MDY.captures_iter(text) {
        if let (Some(m), Some((s, has_time))) = (c.get(0), english_date(&c, 1, 2, 3, 4)) {
            out.push(TextDate {
                year_inferred: false,
                relative: false,
                start: m.start(),
                end: m.end(),
                stated: s,
                has_time,
            });
        }
    }
    for c in RE_EN_DMY.captures_iter(text) {
        if let (Some(m), Some((s, has_time))) = (c.get(0), english_date(&c, 2, 1, 3, 4)) {
            out.push(TextDate {
                year_inferred: false,
                relative: false,
                start: m.start(),
                end: m.end(),
                stated: s,
                has_time,
            });
        }
    }
    let time_first = RE_EN_TIME_FIRST
        .captures_iter(text)
        .map(|c| (c, 5, 6))
        .chain(RE_EN_TIME_FIRST_DMY.captures_iter(text).map(|c| (c, 6, 5)));
    for (c, month_at, day_at) in time_first {
        let parsed = (|| {
            let date = NaiveDate::from_ymd_opt(
                num(&c, 7)?,
                month_number(c.get(month_at)?.as_str())?,
                num(&c, day_at)?,
            )?;
            let h = hour24(num(&c, 1)?, c.get(3).map(|m| m.as_str()), None)?;
            let time = NaiveTime::from_hms_opt(h, num(&c, 2)?, 0)?;
            let offset = c.get(4).and_then(|m| abbreviation_offset(m.as_str(), date));
            stated(date, Some(time), offset)
        })();
        if let (Some(m), Some((s, has_time))) = (c.get(0), parsed) {
            // The same date matched without its time by RE_EN_MDY or
            // RE_EN_DMY: keep this one.
            out.retain(|d| !(d.start > m.start() && d.start < m.end()));
            out.push(TextDate {
                year_inferred: false,
                relative: false,
                start: m.start(),
                end: m.end(),
                stated: s,
                has_time,
            });
        }
    }
}

/// Whether a date of `out` starts in `start..end`.
fn taken(out: &[TextDate], start: usize, end: usize) -> bool {
    out.iter().any(|d| d.start >= start && d.start < end)
}

/// Day-first forms: only where no form above found a date.
fn day_first_dates(text: &str, out: &mut Vec<TextDate>) {
    // Chinese, Japanese and Korean write dates year first: a day- or
    // month-first date in their text is an example (`"22.11.1999" 无法用于
    // 自动转换`), not a dateline.
    let cjk = text.chars().any(is_cjk);
    for c in RE_DMY_NUMERIC.captures_iter(text).filter(|_| !cjk) {
        let Some(m) = c.get(0) else { continue };
        // Not part of a longer number or of a version (`1.2.3.2020`).
        if text[..m.start()].ends_with(|ch: char| ch.is_ascii_digit() || ".-/".contains(ch))
            || text[m.end()..].starts_with(|ch: char| ch.is_ascii_digit())
            || taken(out, m.start(), m.end())
        {
            continue;
        }
        let (Some(a), Some(b)) = (num::<u32>(&c, 1), num::<u32>(&c, 3)) else {
            continue;
        };
        let sep = c.get(2).map(|m| m.as_str());
        if sep != c.get(4).map(|m| m.as_str()) {
            continue;
        }
        let (day, month) = match sep {
            Some(".") => (a, b),
            _ if a == b || (a > 12 && b <= 12) => (a, b),
            _ if b > 12 && a <= 12 => (b, a),
            _ => continue,
        };
        let parsed = (|| {
            let date = NaiveDate::from_ymd_opt(num(&c, 5)?, month, day)?;
            stated(date, day_first_time(&c, 6)?, None)
        })();
        if let Some((s, has_time)) = parsed {
            out.push(TextDate {
                year_inferred: false,
                relative: false,
                start: m.start(),
                end: m.end(),
                stated: s,
                has_time,
            });
        }
    }
    for c in RE_NAMED_DMY.captures_iter(text) {
        let Some(m) = c.get(0) else { continue };
        if taken(out, m.start(), m.end()) {
            continue;
        }
        let parsed = (|| {
            let name = c.get(2)?.as_str().to_lowercase();
            let month = MONTH_NAMES.iter().find(|(n, _)| *n == name)?.1;
            let date = NaiveDate::from_ymd_opt(num(&c, 3)?, month, num(&c, 1)?)?;
            stated(date, day_first_time(&c, 4)?, None)
        })();
        if let Some((s, has_time)) = parsed {
            out.push(TextDate {
                year_inferred: false,
                relative: false,
                start: m.start(),
                end: m.end(),
                stated: s,
                has_time,
            });
        }
    }
}
