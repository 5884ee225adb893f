//! Reading the fields of a date's match: numbers, month names, a 12-hour
//! clock's hour, a day-first form's time; and the full-width digits a date
//! may be written in, read as ASCII.

use chrono::NaiveTime;

use super::stated::TextDate;

pub(super) fn num<T: std::str::FromStr>(c: &regex::Captures<'_>, i: usize) -> Option<T> {
    c.get(i).and_then(|m| m.as_str().parse().ok())
}

/// The [`super::patterns::DAY_FIRST_TIME`] whose hour is group `t` of `c`: `Some(None)`
/// without one, `None` when it is no time of day.
pub(super) fn day_first_time(c: &regex::Captures<'_>, t: usize) -> Option<Option<NaiveTime>> {
    match num::<u32>(c, t) {
        Some(h) => NaiveTime::from_hms_opt(h, num(c, t + 1)?, num(c, t + 2).unwrap_or(0)).map(Some),
        None => Some(None),
    }
}

pub(super) fn month_number(name: &str) -> Option<u32> {
    const NAMES: [&str; 12] = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    let lower = name.to_ascii_lowercase();
    NAMES
        .iter()
        .position(|m| lower.starts_with(m))
        .map(|i| i as u32 + 1)
}

/// 12-hour clock and Chinese day-part words to a 24-hour hour.
pub(super) fn hour24(hour: u32, ampm: Option<&str>, part: Option<&str>) -> Option<u32> {
    let pm = match (ampm.map(|s| s.to_ascii_lowercase()), part) {
        (Some(a), _) => Some(a.starts_with('p')),
        (None, Some("下午" | "晚上" | "오후")) => Some(true),
        (None, Some("上午" | "早上" | "凌晨" | "오전")) => Some(false),
        (None, Some("中午")) => Some(hour < 11),
        _ => None,
    };
    match pm {
        None => (hour < 24).then_some(hour),
        Some(_) if hour == 0 || hour > 12 => (hour < 24).then_some(hour),
        Some(true) => Some(if hour == 12 { 12 } else { hour + 12 }),
        Some(false) => Some(if hour == 12 { 0 } else { hour }),
    }
}

/// Whether `text` holds four digits in a row starting with 19 or 20: every
/// numeric date does (a cheap test before the regex, run on every line).
pub(super) fn has_year_digits(text: &str) -> bool {
    let b = text.as_bytes();
    b.windows(4)
        .any(|w| matches!(&w[..2], b"19" | b"20") && w[2].is_ascii_digit() && w[3].is_ascii_digit())
}

/// `text` with its full-width digits ASCII (`２０２４年１１月２５日`, some
/// government sites' and Japanese pages' dates), and the byte in `text` of
/// each byte of it; `None` when it has none.
fn ascii_digits(text: &str) -> Option<(String, Vec<usize>)> {
    if !text.contains(|c: char| ('０'..='９').contains(&c)) {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut at = Vec::with_capacity(text.len() + 1);
    for (i, c) in text.char_indices() {
        let c = match c {
            '０'..='９' => char::from_u32(c as u32 - '０' as u32 + '0' as u32).unwrap_or(c),
            c => c,
        };
        at.extend(std::iter::repeat_n(i, c.len_utf8()));
        out.push(c);
    }
    at.push(text.len());
    Some((out, at))
}

/// The dates `find` finds in `text` with its full-width digits ASCII, at
/// their places in `text` ([`ascii_digits`]).
pub(super) fn with_ascii_digits(
    text: &str,
    find: impl FnOnce(&str) -> Vec<TextDate>,
) -> Option<Vec<TextDate>> {
    let (ascii, at) = ascii_digits(text)?;
    let mut out = find(&ascii);
    for d in &mut out {
        d.start = at[d.start];
        d.end = at[d.end];
    }
    Some(out)
}
