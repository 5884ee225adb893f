//! The lines beside a page's date and under its headline: the outlet or the
//! reporter named beside the date, the account a follow button names, the
//! account or poster above a short dateline.

use chrono::{Datelike, NaiveDate};

use crate::fold::fold;

use super::names::{chinese_names, ip_place, name_value, outlet_like, plain_account};
use super::patterns::{RE_DATELINE_DATE, RE_DATELINE_REPORTER, RE_SHORT_DATELINE};
use super::words::{FOLLOW_BUTTONS, NOT_OUTLETS};

/// The outlet printed beside the publish date with no label, the line's only
/// other words (`2019-09-26 10:56:28 证券时报网`, `中国网 2019-11-25 10:37:31`):
/// a Chinese name of 2-12 characters on a short line of `lines` (the lines
/// around the title) that holds one date, the page's publish day `day` (a
/// related item's line, `商务部发布上半年外贸数据 2024-07-12 10:05`, holds
/// another). Words that name no outlet (`原创`, `阅读 12`) may stand beside it.
pub fn dateline_media<'a>(
    lines: impl IntoIterator<Item = &'a str>,
    day: Option<NaiveDate>,
) -> Option<String> {
    let day = day?;
    lines.into_iter().find_map(|l| {
        if l.chars().count() > 48 {
            return None;
        }
        if !dateline_on(l, day) {
            return None;
        }
        let whole = RE_DATELINE_DATE.find(l)?;
        let words: Vec<&str> = [&l[..whole.start()], &l[whole.end()..]]
            .into_iter()
            .flat_map(|part| part.split(|c: char| c.is_whitespace() || "|｜/·".contains(c)))
            .filter(|w| !w.is_empty())
            .collect();
        // `新民晚报 记者 顾泉雄 2024.11.20 14:05`: the reporter is no outlet.
        let reporter = |i: usize| {
            let after_title = i > 0 && fold(words[i - 1]).ends_with("记者");
            fold(words[i]).ends_with("记者") || after_title
        };
        let rest: Vec<&str> = (0..words.len())
            .filter(|&i| !reporter(i))
            .map(|i| words[i])
            .filter(|w| {
                let folded = fold(w);
                let label = NOT_OUTLETS
                    .iter()
                    .any(|n| folded.starts_with(n) || folded.ends_with(n));
                // `15時05分`: the rest of the date's time.
                let number = w.chars().all(|c| {
                    c.is_ascii_digit() || c.is_ascii_punctuation() || "时時分秒".contains(c)
                });
                !label && !number
            })
            .collect();
        let [name] = rest.as_slice() else {
            return None;
        };
        if ip_place(name) {
            return None;
        }
        let n = name.chars().count();
        ((2..=12).contains(&n) && outlet_like(name)).then(|| name.to_string())
    })
}

/// `记者 顾泉雄` on the publish day's line under the headline (`新民晚报 记者
/// 顾泉雄 2024.11.20 14:05`): the reporter, on a short line of `lines` that
/// holds one date, the day `day`.
pub fn dateline_reporter<'a>(
    lines: impl IntoIterator<Item = &'a str>,
    day: Option<NaiveDate>,
) -> Option<String> {
    let day = day?;
    lines.into_iter().find_map(|l| {
        if l.chars().count() > 48 || !dateline_on(l, day) {
            return None;
        }
        let f = fold(l);
        let c = RE_DATELINE_REPORTER.captures(&f)?;
        name_value(&chinese_names(&l[c.get(1)?.range()])?)
    })
}

/// Whether `line` holds one numeric date and it is `day`.
fn dateline_on(line: &str, day: NaiveDate) -> bool {
    let mut dates = RE_DATELINE_DATE.captures_iter(line);
    let (Some(date), None) = (dates.next(), dates.next()) else {
        return false;
    };
    let num = |i: usize| date.get(i).and_then(|m| m.as_str().parse::<u32>().ok());
    match num(1).and_then(|y| i32::try_from(y).ok()) {
        Some(y) => num(2)
            .zip(num(3))
            .and_then(|(m, d)| NaiveDate::from_ymd_opt(y, m, d))
            .is_some_and(|d| d == day),
        // `11-25 15:05`, `11月25日 15:05`: the day without its year.
        None => num(4) == Some(day.month()) && num(5) == Some(day.day()),
    }
}

/// The account a follow button names right under the headline (`去驴行` /
/// `关注`, or `去驴行 关注` on one line): on a self-media platform the
/// account is the article's publisher, where `og:site_name` names the
/// platform. `after`: the few lines after the title's.
pub fn followed_account(after: &[&str]) -> Option<String> {
    let button = |l: &str| FOLLOW_BUTTONS.contains(&fold(l.trim()).as_ref());
    // `北京青年报` / `2024年10月30日 16:05 北京` / `关注`: the post's time and
    // IP location may stand between the account and its button.
    let between = |l: &str| {
        let rest = RE_DATELINE_DATE.replace(l.trim(), "");
        rest.len() < l.trim().len() && rest.split_whitespace().all(ip_place) || ip_place(l)
    };
    after.iter().enumerate().find_map(|(i, l)| {
        let l = l.trim();
        let next = after[i + 1..].iter().find(|n| !between(n));
        let name = if next.is_some_and(|n| button(n)) {
            l
        } else {
            let f = fold(l);
            FOLLOW_BUTTONS
                .iter()
                .find_map(|b| f.ends_with(b).then(|| l[..l.len() - b.len()].trim_end()))
                .filter(|n| n.len() < l.len() && l[n.len()..].starts_with(char::is_whitespace))?
        };
        (plain_account(name) && !button(name)).then(|| name.to_string())
    })
}

/// The account named alone on the line between the headline and its
/// dateline (Baijiahao: `加拿大必读` over `发布时间：10-08 12:00`): on a page
/// that names no outlet, its publisher. `after`: the lines after the
/// title's.
pub fn account_above_dateline(after: &[&str]) -> Option<String> {
    let [name, next, ..] = after else {
        return None;
    };
    let (name, next) = (name.trim(), next.trim());
    (next.chars().count() <= 40 && RE_SHORT_DATELINE.is_match(&fold(next)) && plain_account(name))
        .then(|| name.to_string())
}

/// The user named alone on the line above a post's `发表于 <date>` line
/// (Eastmoney's Guba, forums and blogs: `价投老王` over `发表于 2024-11-25
/// 15:05:32 东方财富Android版`): the poster. `lines`: the lines around the
/// title.
pub fn poster_above_posted(lines: &[&str]) -> Option<String> {
    lines.windows(2).find_map(|w| {
        let (name, next) = (w[0].trim(), fold(w[1].trim()));
        let posted = next
            .strip_prefix("发表于")
            .is_some_and(|rest| RE_SHORT_DATELINE.is_match(rest.trim_start()));
        (posted && plain_account(name) && !name.contains(char::is_whitespace))
            .then(|| name.to_string())
    })
}
