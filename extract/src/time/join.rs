//! Joining to a date the time of day a page sets apart from it (after it or
//! right before it), and the offset stated after a date and time.

use chrono::{NaiveTime, TimeZone};

use super::fields::{hour24, num};
use super::patterns::{RE_OFFSET_AFTER, RE_TIME_AFTER, RE_TIME_BEFORE};
use super::stated::{stated, Stated, TextDate};
use super::zone::stated_offset;

/// Joins to each date of `dates` (in `text`, in order) without a time of day
/// the time set apart from it by a weekday, a word or separators, after it
/// or else right before it, where no other date claims that time: the forms
/// a site makes of its own (`2024-11-25 (Mon) | 15:05`, `25.11.2024 -
/// Montag - 15:05 Uhr`, `15:05 · 2024/11/25`) are too many to list one by
/// one.
pub(super) fn join_times(text: &str, dates: &mut [TextDate]) {
    for i in 0..dates.len() {
        let d = dates[i];
        let next = dates.get(i + 1).map_or(text.len(), |n| n.start);
        // `25/11/2024, 15:05 (GMT+7)`: an offset after a date and time that
        // no form took with them.
        if let (true, Stated::Local(n)) = (d.has_time, d.stated) {
            let zoned = text.get(d.end..next).and_then(|rest| {
                let c = RE_OFFSET_AFTER.captures(rest)?;
                let m = c.get(0)?;
                if rest[m.end()..].starts_with(|ch: char| ch.is_ascii_digit()) {
                    return None;
                }
                let z = c.get(1)?.as_str();
                let offset = stated_offset(z, n.date())?;
                Some((offset.from_local_datetime(&n).single()?, m.end()))
            });
            if let Some((z, len)) = zoned {
                dates[i].stated = Stated::Zoned(z);
                dates[i].end += len;
            }
            continue;
        }
        if d.has_time || d.relative {
            continue;
        }
        let prev = if i == 0 {
            0
        } else {
            dates[i - 1].end.min(d.start)
        };
        let date = match d.stated {
            Stated::Local(n) => n.date(),
            Stated::Zoned(z) => z.naive_local().date(),
        };
        let after = text.get(d.end..next).and_then(|rest| {
            let c = RE_TIME_AFTER.captures(rest)?;
            let m = c.get(0)?;
            if rest[m.end()..].starts_with(|ch: char| ch.is_ascii_digit()) {
                return None;
            }
            let h = hour24(
                num(&c, 2)?,
                c.get(5).map(|m| m.as_str()),
                c.get(1).map(|m| m.as_str()),
            )?;
            let time = NaiveTime::from_hms_opt(h, num(&c, 3)?, num(&c, 4).unwrap_or(0))?;
            let offset = c.get(6).and_then(|z| stated_offset(z.as_str(), date));
            Some((time, offset, d.end + m.end()))
        });
        let before = || {
            let mut from = d.start.saturating_sub(24).max(prev);
            while !text.is_char_boundary(from) {
                from += 1;
            }
            let c = RE_TIME_BEFORE.captures(text.get(from..d.start)?)?;
            let h = hour24(num(&c, 1)?, c.get(4).map(|m| m.as_str()), None)?;
            let time = NaiveTime::from_hms_opt(h, num(&c, 2)?, num(&c, 3).unwrap_or(0))?;
            Some((time, None, d.end))
        };
        let Some((time, offset, end)) = after.or_else(before) else {
            continue;
        };
        let offset = offset.or(match d.stated {
            Stated::Zoned(z) => Some(*z.offset()),
            Stated::Local(_) => None,
        });
        if let Some((s, has_time)) = stated(date, Some(time), offset) {
            dates[i].stated = s;
            dates[i].has_time = has_time;
            dates[i].end = end;
        }
    }
}
