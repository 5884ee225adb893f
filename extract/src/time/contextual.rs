//! Contextual dates: days without a year (`11月17日 20:52`), short dates
//! after a label and relative times (`3小时前`, `昨天 10:20`), resolved
//! against the fetch time and the page's year; only searched near the title.

use chrono::{DateTime, Datelike, Duration, NaiveDate, NaiveDateTime, NaiveTime, Utc};
use chrono_tz::Tz;

use super::fields::{day_first_time, num, with_ascii_digits};
use super::join::join_times;
use super::labels::is_cjk;
use super::patterns::{
    RE_DMY_SHORT_YEAR, RE_MONTH_DAY_ZH, RE_RELATIVE, RE_SHORT_NUMERIC, SHORT_DATE_LABELS,
};
use super::stated::{stated, Stated, TextDate};

/// Whether `text` is a relative time alone (`3 天前`, `昨天 10:20`, `5
/// minutes ago`), as an element showing one holds it.
pub(crate) fn is_relative(text: &str) -> bool {
    let t = text.trim();
    t.chars().count() <= 20 && RE_RELATIVE.find(t).is_some_and(|m| m.start() == 0)
}

/// Dates without a year (`11月17日 20:52`) and relative times (`3小时前`,
/// `昨天 10:20`), resolved against the fetch time in `zone`; only searched
/// near the title.
pub(super) fn contextual_dates(
    text: &str,
    fetched: DateTime<Utc>,
    zone: Tz,
    year: Option<i32>,
) -> Vec<TextDate> {
    if let Some(out) = with_ascii_digits(text, |t| contextual_dates(t, fetched, zone, year)) {
        return out;
    }
    let now_local = fetched.with_timezone(&zone).naive_local();
    let mut out = Vec::new();
    // `3小時前`, `剛剛`: the same offsets in the folded text.
    let folded = crate::fold::fold(text);
    let text = folded.as_ref();
    month_day_dates(text, now_local, year, &mut out);
    relative_dates(text, fetched, now_local, &mut out);
    short_numeric_dates(text, now_local, year, &mut out);
    short_year_dates(text, now_local, &mut out);
    out.sort_by_key(|d| d.start);
    join_times(text, &mut out);
    out
}

/// Chinese days without a year (`11月17日 20:52`), not part of a full date.
fn month_day_dates(
    text: &str,
    now_local: NaiveDateTime,
    year: Option<i32>,
    out: &mut Vec<TextDate>,
) {
    for c in RE_MONTH_DAY_ZH.captures_iter(text) {
        let Some(m) = c.get(0) else { continue };
        // Part of a full date (`2023年11月17日`): found by text_dates already.
        if text[..m.start()].trim_end().ends_with('年') {
            continue;
        }
        let (Some(month), Some(day)) = (num::<u32>(&c, 1), num::<u32>(&c, 2)) else {
            continue;
        };
        let time = match num::<u32>(&c, 3) {
            Some(h) => NaiveTime::from_hms_opt(h, num(&c, 4).unwrap_or(0), 0),
            None => None,
        };
        let date = yearless_date(month, day, year, now_local.date());
        if let Some((s, has_time)) = date.and_then(|d| stated(d, time, None)) {
            out.push(TextDate {
                year_inferred: true,
                relative: false,
                start: m.start(),
                end: m.end(),
                stated: s,
                has_time,
            });
        }
    }
}

/// Relative times (`3小时前`, `5 minutes ago`, `刚刚`, `昨天 10:20`), counted
/// back from the fetch time.
fn relative_dates(
    text: &str,
    fetched: DateTime<Utc>,
    now_local: NaiveDateTime,
    out: &mut Vec<TextDate>,
) {
    for c in RE_RELATIVE.captures_iter(text) {
        let Some(m) = c.get(0) else { continue };
        let ago = |n: i64, unit: &str| -> Option<Duration> {
            Some(match unit {
                "秒" | "second" => Duration::seconds(n),
                "分钟" | "minute" => Duration::minutes(n),
                "小时" | "hour" => Duration::hours(n),
                "天" | "day" => Duration::days(n),
                _ => return None,
            })
        };
        let resolved: Option<(Stated, bool)> =
            if let (Some(n), Some(u)) = (num::<i64>(&c, 1), c.get(2)) {
                ago(n, u.as_str()).map(|d| {
                    (
                        Stated::Zoned((fetched - d).fixed_offset()),
                        u.as_str() != "天",
                    )
                })
            } else if let (Some(n), Some(u)) = (num::<i64>(&c, 3), c.get(4)) {
                let unit = u.as_str().to_ascii_lowercase();
                ago(n, &unit).map(|d| (Stated::Zoned((fetched - d).fixed_offset()), unit != "day"))
            } else if c.get(5).is_some() {
                Some((Stated::Zoned(fetched.fixed_offset()), true))
            } else if let Some(word) = c.get(6) {
                let back = match word.as_str() {
                    "今天" => 0,
                    "昨天" => 1,
                    _ => 2,
                };
                let date = now_local.date() - Duration::days(back);
                let time = match num::<u32>(&c, 7) {
                    Some(h) => NaiveTime::from_hms_opt(h, num(&c, 8).unwrap_or(0), 0),
                    None => None,
                };
                stated(date, time, None)
            } else {
                None
            };
        if let Some((s, has_time)) = resolved {
            out.push(TextDate {
                year_inferred: false,
                relative: true,
                start: m.start(),
                end: m.end(),
                stated: s,
                has_time,
            });
        }
    }
}

/// Short numeric dates (`11-25 15:05`, `18-03-08`) after a short-date label,
/// or a month and day with a time standing apart on a dateline.
fn short_numeric_dates(
    text: &str,
    now_local: NaiveDateTime,
    year: Option<i32>,
    out: &mut Vec<TextDate>,
) {
    for c in RE_SHORT_NUMERIC.captures_iter(text) {
        let Some(m) = c.get(0) else { continue };
        let before = text[..m.start()].trim_end_matches([' ', '\u{3000}', ':', '：']);
        // Unlabelled, a month and day with a time of day standing apart on
        // a dateline (`央视新闻 11-25 15:05 发布于北京`, an app page's byline;
        // the caller takes it only on a short line near the title).
        let apart = c.get(1).is_none()
            && c.get(4).is_some()
            && text[..m.start()]
                .chars()
                .next_back()
                .is_none_or(char::is_whitespace);
        if !(apart || SHORT_DATE_LABELS.iter().any(|l| before.ends_with(l)))
            || text[m.end()..].starts_with(|ch: char| ch.is_ascii_digit() || "-/.:".contains(ch))
        {
            continue;
        }
        let parsed = (|| {
            let (month, day) = (num::<u32>(&c, 2)?, num::<u32>(&c, 3)?);
            let time = match num::<u32>(&c, 4) {
                Some(h) => Some(NaiveTime::from_hms_opt(
                    h,
                    num(&c, 5)?,
                    num(&c, 6).unwrap_or(0),
                )?),
                None => None,
            };
            let date = match num::<i32>(&c, 1) {
                Some(yy) => NaiveDate::from_ymd_opt(full_year(yy, now_local.date()), month, day)?,
                None => yearless_date(month, day, year, now_local.date())?,
            };
            Some((stated(date, time, None)?, c.get(1).is_none()))
        })();
        if let Some(((s, has_time), year_inferred)) = parsed {
            out.push(TextDate {
                year_inferred,
                relative: false,
                start: m.start(),
                end: m.end(),
                stated: s,
                has_time,
            });
        }
    }
}

/// Day-first dates with a two-digit year (`25.11.24`), outside CJK text.
fn short_year_dates(text: &str, now_local: NaiveDateTime, out: &mut Vec<TextDate>) {
    let cjk = text.chars().any(is_cjk);
    for c in RE_DMY_SHORT_YEAR.captures_iter(text).filter(|_| !cjk) {
        let Some(m) = c.get(0) else { continue };
        // Not part of a longer number, a version (`v1.2.10`, `1.2.10.4`) or a
        // full date.
        let before = text[..m.start()].chars().next_back();
        let after = &text[c.get(3).map_or(m.end(), |y| y.end())..];
        if before.is_some_and(|ch| ch.is_alphanumeric() || ".-/".contains(ch))
            || after.starts_with(|ch: char| ch.is_alphanumeric())
            || (after.starts_with('.') && after[1..].starts_with(|ch: char| ch.is_ascii_digit()))
        {
            continue;
        }
        let parsed = (|| {
            let year = full_year(num(&c, 3)?, now_local.date());
            let date = NaiveDate::from_ymd_opt(year, num(&c, 2)?, num(&c, 1)?)?;
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

/// A day stated without its year (`11月17日`, `10-08`): in `year` (the
/// page's, when known), else in the fetch year, or the year before when it
/// would come after the fetch day.
fn yearless_date(month: u32, day: u32, year: Option<i32>, today: NaiveDate) -> Option<NaiveDate> {
    if let Some(y) = year {
        return NaiveDate::from_ymd_opt(y, month, day);
    }
    let date = NaiveDate::from_ymd_opt(today.year(), month, day)?;
    if date > today {
        NaiveDate::from_ymd_opt(today.year() - 1, month, day)
    } else {
        Some(date)
    }
}

/// A two-digit year (`18-03-08`, `8.5.12`): in the fetch year's century
/// unless that puts it after the fetch year, then in the century before.
fn full_year(yy: i32, today: NaiveDate) -> i32 {
    if 2000 + yy <= today.year() {
        2000 + yy
    } else {
        1900 + yy
    }
}
