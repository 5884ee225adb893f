//! Dates in Chinese numerals (`二〇二四年十一月二十日`) and of the Republic of
//! China's calendar (`民國113年11月25日`): forms apart from the Arabic-digit
//! dates of the text scan, each with its own reading of the year.

use chrono::{NaiveDate, NaiveTime};

use super::fields::num;
use super::patterns::{RE_HAN_NUMERAL_DATE, RE_ROC_DATE};
use super::stated::{stated, TextDate};

/// The value of a Chinese numeral: digits written one by one (`二〇二四`) or
/// a number up to 99 with `十` (`十一`, `二十`, `三十一`).
pub(super) fn han_number(s: &str) -> Option<u32> {
    let digit = |c: char| match c {
        '〇' | '○' | '零' => Some(0),
        '一' => Some(1),
        '二' => Some(2),
        '三' => Some(3),
        '四' => Some(4),
        '五' => Some(5),
        '六' => Some(6),
        '七' => Some(7),
        '八' => Some(8),
        '九' => Some(9),
        _ => None,
    };
    match s.split_once('十') {
        Some((tens, ones)) => {
            let tens = if tens.is_empty() {
                1
            } else {
                digit(tens.chars().next()?).filter(|_| tens.chars().count() == 1)?
            };
            let ones = if ones.is_empty() {
                0
            } else {
                digit(ones.chars().next()?).filter(|_| ones.chars().count() == 1)?
            };
            Some(tens * 10 + ones)
        }
        None => s.chars().try_fold(0u32, |n, c| Some(n * 10 + digit(c)?)),
    }
}

/// The dates in Chinese numerals in `text` (a day, no time).
pub(super) fn han_numeral_dates(text: &str) -> Vec<TextDate> {
    if !text.contains('年') {
        return Vec::new();
    }
    RE_HAN_NUMERAL_DATE
        .captures_iter(text)
        .filter_map(|c| {
            let year = i32::try_from(han_number(c.get(1)?.as_str())?).ok()?;
            let date = NaiveDate::from_ymd_opt(
                year,
                han_number(c.get(2)?.as_str())?,
                han_number(c.get(3)?.as_str())?,
            )?;
            let (stated, has_time) = stated(date, None, None)?;
            Some(TextDate {
                year_inferred: false,
                relative: false,
                start: c.get(0)?.start(),
                end: c.get(0)?.end(),
                stated,
                has_time,
            })
        })
        .collect()
}

/// The dates of the Republic of China's calendar in `text` ([`RE_ROC_DATE`]),
/// each starting at its year.
pub(super) fn roc_dates(text: &str) -> Vec<TextDate> {
    if !["民國", "民国", "日期", "時間", "时间"]
        .iter()
        .any(|k| text.contains(k))
    {
        return Vec::new();
    }
    RE_ROC_DATE
        .captures_iter(text)
        .filter_map(|c| {
            let year = c.get(1).or_else(|| c.get(2))?;
            // Not part of a longer number.
            if text[c.get(0)?.end()..].starts_with(|ch: char| ch.is_ascii_digit()) {
                return None;
            }
            let date = NaiveDate::from_ymd_opt(
                year.as_str().parse::<i32>().ok()? + 1911,
                num(&c, 3)?,
                num(&c, 4)?,
            )?;
            let time = match num::<u32>(&c, 5) {
                Some(h) => Some(NaiveTime::from_hms_opt(
                    h,
                    num(&c, 6)?,
                    num(&c, 7).unwrap_or(0),
                )?),
                None => None,
            };
            let (stated, has_time) = stated(date, time, None)?;
            Some(TextDate {
                year_inferred: false,
                relative: false,
                start: year.start(),
                end: c.get(0)?.end(),
                stated,
                has_time,
            })
        })
        .collect()
}
