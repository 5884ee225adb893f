//! The date forms the text scan reads, as data: the regular expressions of
//! numeric, Chinese, English and day-first dates, of times set apart from
//! them, of relative phrases, of URL and script dates, and the month names
//! of the languages read.

use std::sync::LazyLock;

use regex::Regex;

use crate::lists::{self, List};

fn re(s: &str) -> Regex {
    Regex::new(s).expect("static regex is valid")
}

/// A byline ending where its date starts: `by NAME on`, `Submitted by NAME
/// on`, `Geschrieben von NAME am`, `Author: NAME am` (one to four
/// capitalised words without digits, not `by a television crew on`; the
/// date that follows is the post's).
pub(super) static RE_BYLINE_BEFORE_DATE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?:^|[\s(|])(?i:by|von|author:|autor:)\s+(?:\p{Lu}[^\s\d.,;|:]*\s+){1,4}(?i:on|am)\s*[,:]?\s*(?:\p{L}{2,10}\.?,?\s+)?$",
    )
});

/// The zone abbreviations read beside a numeric date's time (not `CST` nor
/// `IST`, which name more than one zone; [`super::zone::abbreviation_offset`] gives their
/// offsets).
const ZONE_ABBRS: &str = "UTC|GMT|HKT|SGT|MYT|JST|KST|EST|EDT|PST|PDT|BST|CET|CEST|AEST|AEDT";

/// `YYYY-MM-DD`, `YYYY/M/D`, `YYYY.MM.DD`, `YYYY年M月D日`, each with an optional
/// time `H:MM[:SS]` (also `10时20分`, `下午3:05`) and an optional offset.
pub(super) static RE_NUMERIC: LazyLock<Regex> = LazyLock::new(|| {
    re(&r"(?x)
        ((?:19|20)\d{2}) \s* (?:[-/.]|年) \s* (\d{1,2}) \s* (?:[-/.]|月) \s* (\d{1,2}) (?:\s*日|\.(?:\s|$))?
        (?: \s* (?: [(（] \s* [一二三四五六日天月火水木金土] \s* [)）] | (?:星期|周|週|礼拜|禮拜)[一二三四五六日天] ) )?
        (?: \s* (?:ZONES)\b )?
        (?:
            (?:\s+at\s+|\s*[T\s,]\s*|\s*|-)
            (上午|下午|早上|晚上|凌晨|中午|오전|오후)? \s*
            (\d{1,2}) \s* [:：时] \s* (\d{2}) (?: \s*[:：分]\s* (\d{2}) (?:\.\d+)? )? (?:\s*秒)?
            (?: \s* ([aApP]\.?[mM]\.?) )?
            (?: \s* (Z | [+-]\d{2}:?\d{2} | (?:GMT|UTC)\s*[+-]\s*\d{1,2}(?::?\d{2})? ) )?
            (?: \s* (?:ZONES)\b )?
        )?"
        .replace("ZONES", ZONE_ABBRS))
});

/// One of [`ZONE_ABBRS`], found in a [`RE_NUMERIC`] match.
pub(super) static RE_ZONE_ABBR: LazyLock<Regex> =
    LazyLock::new(|| re(&format!(r"\b(?:{ZONE_ABBRS})\b")));

/// `15:05 2024/11/25`: a time of day before a year-first date (Taiwanese
/// sites' bylines and lists).
pub(super) static RE_TIME_FIRST_NUMERIC: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(\d{1,2}):(\d{2})(?::(\d{2}))?[ \t\u{3000}]+((?:19|20)\d{2})([-/.])(\d{1,2})([-/.])(\d{1,2})",
    )
});

/// `2024 02/29 21:03:47`: the year apart from month/day (news.cn's byline
/// spans), with an optional time.
pub(super) static RE_YEAR_APART: LazyLock<Regex> = LazyLock::new(|| {
    re(r"((?:19|20)\d{2})\s+(\d{1,2})\s*/\s*(\d{1,2})(?:\s+(\d{1,2}):(\d{2})(?::(\d{2}))?)?")
});

/// `M月D日 [H:MM]` without a year (the year comes from the context).
pub(super) static RE_MONTH_DAY_ZH: LazyLock<Regex> =
    LazyLock::new(|| re(r"(\d{1,2})\s*月\s*(\d{1,2})\s*日(?:\s*(\d{1,2})\s*[:：时]\s*(\d{2}))?"));

/// `18-03-08 23:16`, `10-08 12:00`, `11/25(月) 15:05`: a two-digit year or
/// none, as Baidu's Baijiahao, many forums and Japanese portals print them
/// (the weekday in brackets); read only right after a publish label
/// ([`SHORT_DATE_LABELS`]) or standing apart with a time.
pub(super) static RE_SHORT_NUMERIC: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?:(\d{2})[-/])?(\d{1,2})[-/](\d{1,2})(?:\s*[(（][月火水木金土日一二三四五六天][)）])?(?:\s+(\d{1,2})[:：](\d{2})(?:[:：](\d{2}))?)?",
    )
});

/// The labels a short date ([`RE_SHORT_NUMERIC`]) must follow, with only a
/// colon or spaces between.
pub(super) static SHORT_DATE_LABELS: List =
    LazyLock::new(|| lists::parse(include_str!("../lists/short_date_labels.txt")));

const MONTHS: &str = r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)";

/// A time of day after an English date (groups: hour, minute, second,
/// am/pm, zone abbreviation, the offset after `GMT`/`UTC`: `3:05 PM GMT+8`).
const EN_TIME: &str = r"(?:,?\s*(?:at\s+)?(\d{1,2})[:.](\d{2})(?::(\d{2}))?\s*([ap]\.?m\.?)?(?:\s*([a-z]{2,4})\b(?:\s*([+-]\s*\d{1,2}(?::?\d{2})?))?)?)?";

/// `November 17, 2023 [8:52 PM ET]`.
pub(super) static RE_EN_MDY: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        r"(?i)\b{MONTHS}\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+((?:19|20)\d{{2}})\b{EN_TIME}"
    ))
});

/// `17 November 2023 [20:52]`, `17-Dec-2024`.
pub(super) static RE_EN_DMY: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        r"(?i)\b(\d{{1,2}})(?:st|nd|rd|th)?(?:\s+|-){MONTHS}\.?,?(?:\s+|-)((?:19|20)\d{{2}})\b{EN_TIME}"
    ))
});

/// `10:20 AM ET, Mon November 27, 2013`, `16:45, November 25, 2024` (time
/// before the date; a 24-hour time with a comma).
pub(super) static RE_EN_TIME_FIRST: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        r"(?i)\b(\d{{1,2}}):(\d{{2}})(?:\s*([ap]\.?m\.?)\s*([a-z]{{2,4}})?,?|,)\s*(?:[a-z]{{3,9}},?\s+)?{MONTHS}\.?\s+(\d{{1,2}}),?\s+((?:19|20)\d{{2}})\b"
    ))
});

/// `12:30pm, 24 Oct 2024`, `16:30 BST, Thu 24 October 2024`, `16:45,
/// 17-Dec-2024` (time before a day-first date).
pub(super) static RE_EN_TIME_FIRST_DMY: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        r"(?i)\b(\d{{1,2}}):(\d{{2}})\s*([ap]\.?m\.?)?\s*([a-z]{{2,4}})?,\s*(?:[a-z]{{3,9}},?\s+)?(\d{{1,2}})(?:st|nd|rd|th)?(?:\s+|-){MONTHS}\.?,?(?:\s+|-)((?:19|20)\d{{2}})\b"
    ))
});

/// A time of day after a day-first date: `, 19:51`, ` - 18:55`, ` | 13:10`,
/// ` um 10:29`, ` à 10h30`, ` at 8:05` (groups: hour, minute, second).
pub(super) const DAY_FIRST_TIME: &str = r"(?:(?:\s*[,|–-]\s*|\s+)(?:(?:um|à|a las|alle|om|kl\.?|at)\s+)?(\d{1,2})[:h](\d{2})(?::(\d{2}))?)?";

/// `24.12.2023`, `1.2.2024`, `24/12/2023`, `24-12-2023`: day first (Europe,
/// Latin America), each with an optional [`DAY_FIRST_TIME`]. With `/` or
/// `-` a date whose day and month could be swapped (`02/10/2020`) is not
/// taken: the US writes the month first.
pub(super) static RE_DMY_NUMERIC: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        r"(\d{{1,2}})\s*([./-])\s*(\d{{1,2}})\s*([./-])\s*((?:19|20)\d{{2}}){DAY_FIRST_TIME}"
    ))
});

/// `8.5.12`, `02.12.19, 14:30`: day first with a two-digit year (German,
/// Swiss and Austrian bylines), with an optional [`DAY_FIRST_TIME`]. The
/// century comes from the fetch time; only a dateline beside the title
/// counts (see [`super::contextual::contextual_dates`]): in running text it is as often a
/// version number or a score.
pub(super) static RE_DMY_SHORT_YEAR: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        r"(\d{{1,2}})\.(\d{{1,2}})\.(\d{{2}}){DAY_FIRST_TIME}"
    ))
});

/// Month names of German, French, Dutch, Spanish, Italian and Portuguese,
/// their usual abbreviations, and the English names (for `24. April 2020`),
/// lowercased, with their month.
pub(super) const MONTH_NAMES: [(&str, u32); 93] = [
    // German
    ("januar", 1),
    ("jänner", 1),
    ("februar", 2),
    ("feber", 2),
    ("märz", 3),
    ("mär", 3),
    ("mrz", 3),
    ("mai", 5),
    ("juni", 6),
    ("juli", 7),
    ("oktober", 10),
    ("okt", 10),
    ("dezember", 12),
    ("dez", 12),
    // French
    ("janvier", 1),
    ("janv", 1),
    ("février", 2),
    ("fevrier", 2),
    ("févr", 2),
    ("mars", 3),
    ("avril", 4),
    ("avr", 4),
    ("juin", 6),
    ("juillet", 7),
    ("juil", 7),
    ("août", 8),
    ("aout", 8),
    ("septembre", 9),
    ("octobre", 10),
    ("novembre", 11),
    ("décembre", 12),
    ("déc", 12),
    // Dutch
    ("januari", 1),
    ("februari", 2),
    ("maart", 3),
    ("mei", 5),
    ("augustus", 8),
    // Spanish
    ("enero", 1),
    ("febrero", 2),
    ("marzo", 3),
    ("abril", 4),
    ("mayo", 5),
    ("junio", 6),
    ("julio", 7),
    ("agosto", 8),
    ("septiembre", 9),
    ("setiembre", 9),
    ("octubre", 10),
    ("noviembre", 11),
    ("diciembre", 12),
    // Italian
    ("gennaio", 1),
    ("febbraio", 2),
    ("aprile", 4),
    ("maggio", 5),
    ("giugno", 6),
    ("luglio", 7),
    ("settembre", 9),
    ("ottobre", 10),
    ("dicembre", 12),
    // Portuguese
    ("janeiro", 1),
    ("fevereiro", 2),
    ("março", 3),
    ("maio", 5),
    ("junho", 6),
    ("julho", 7),
    ("setembro", 9),
    ("outubro", 10),
    ("novembro", 11),
    ("dezembro", 12),
    // English (RE_EN_DMY takes `17 April 2023` but not `24. April 2020`)
    ("january", 1),
    ("february", 2),
    ("march", 3),
    ("april", 4),
    ("may", 5),
    ("june", 6),
    ("july", 7),
    ("august", 8),
    ("september", 9),
    ("october", 10),
    ("november", 11),
    ("december", 12),
    // Abbreviations shared by English and German (`21. Jan. 2015`)
    ("jan", 1),
    ("feb", 2),
    ("mar", 3),
    ("apr", 4),
    ("jun", 6),
    ("jul", 7),
    ("aug", 8),
    ("sep", 9),
    ("sept", 9),
    ("oct", 10),
    ("nov", 11),
    ("dec", 12),
];

/// `24. April 2020`, `5. Okt. 2017, 10:39`, `27 juin 2019`, `1er mai 2020`,
/// `13 de junio de 2019`, `2 novembre 2023 alle 10:20`: a day, a month name
/// of [`MONTH_NAMES`], a year, an optional [`DAY_FIRST_TIME`].
pub(super) static RE_NAMED_DMY: LazyLock<Regex> = LazyLock::new(|| {
    let mut names: Vec<&str> = MONTH_NAMES.iter().map(|(n, _)| *n).collect();
    // Longest first: `januari` before `januar`, `juillet` before `juil`.
    names.sort_by_key(|n| std::cmp::Reverse(n.chars().count()));
    re(&format!(
        r"(?i)\b(\d{{1,2}})(?:\.\s*|er\s+|º\s+|\s+)(?:de\s+)?({})\.?,?\s+(?:de\s+|del\s+)?((?:19|20)\d{{2}})\b{DAY_FIRST_TIME}",
        names.join("|")
    ))
});

/// `3小时前`, `5 minutes ago`, `刚刚`, `昨天 10:20`, `前天`, `今天 08:00`.
pub(super) static RE_RELATIVE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(\d{1,3})\s*(秒|分钟|小时|天)前|(\d{1,3})\s+(second|minute|hour|day)s?\s+ago|(刚刚|just now)|(今天|昨天|前天)\s*(\d{1,2})[:：](\d{2})",
    )
});

/// A date in a URL path: `/2019/09/07/`, `/20190907/`, `/2023-11/17/`, `/202311/17/`.
pub(super) static RE_URL_DATE: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?:^|[^0-9])((?:19|20)\d{2})[-/_]?(0[1-9]|1[0-2])[-/_]?(0[1-9]|[12]\d|3[01])(?:[^0-9]|$)")
});

/// `二〇二四年十一月二十日`: a date in Chinese numerals (the date under an
/// official document's or a notice's signature).
pub(super) static RE_HAN_NUMERAL_DATE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"([〇○零一二三四五六七八九]{4})年([一二三四五六七八九十]{1,2})月([一二三四五六七八九十]{1,3})日",
    )
});

/// `民國113年11月25日`, `發布日期：113-11-25`: a date of the Republic of
/// China's calendar (Taiwan's government and many of its sites), the year
/// counted from 1912. Its year stands alone only after the era's name or a
/// date label (`日期`, `時間`): elsewhere `113-11-25` is as often a number.
pub(super) static RE_ROC_DATE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?:(?:中華民國|中华民国|民國|民国)[ \t\u{3000}]*(\d{2,3})[ \t\u{3000}]*年|(?:日期|時間|时间)[ \t\u{3000}]*[:：]?[ \t\u{3000}]*(1[0-4]\d)[ \t\u{3000}]*(?:年|[-/.]))[ \t\u{3000}]*(\d{1,2})[ \t\u{3000}]*(?:月|[-/.])[ \t\u{3000}]*(\d{1,2})(?:[ \t\u{3000}]*日)?(?:[ \t\u{3000}]+(\d{1,2})[:：](\d{2})(?:[:：](\d{2}))?)?",
    )
});

/// Between a date and a time of day set apart from it: spaces and
/// separators, and at most one of a weekday (`(月)`, `星期一`, `Monday,`) or
/// a word for "at" (`at`, `um`, `à`, `alle`).
const BETWEEN_DATE_AND_TIME: &str = r"[\s,，|｜·•/–—-]*(?:(?:[(（]\s*\p{L}{1,9}\.?\s*[)）]|(?:星期|周|礼拜|禮拜)[一二三四五六日天]|(?i:(?:mon|tue|wed|thu|fri|sat|sun)[a-z]{0,6}\.?|at|um|à|alle|om|kl\.?|a\s+las|às))[\s,，|｜·•/–—-]*)?";

/// A time of day right after a date that no date form took with it
/// (groups: day part, hour, minute, second, am/pm, offset or zone).
pub(super) static RE_TIME_AFTER: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        r"^{BETWEEN_DATE_AND_TIME}(上午|下午|早上|晚上|凌晨|中午|오전|오후)?\s*(\d{{1,2}})(?:\s*[:：时点]\s*|h)(\d{{2}})(?:\s*[:：分]\s*(\d{{2}}))?(?:\s*[分秒])?\s*([aApP]\.?[mM]\.?)?(?:{OFFSET_AFTER})?"
    ).replace("ZONES", ZONE_ABBRS))
});

/// An offset or a zone's abbreviation (`ZONES`: [`ZONE_ABBRS`]) right after
/// a time, bracketed or not (group: the offset).
const OFFSET_AFTER: &str =
    r"\s*[(（]?\s*((?:GMT|UTC)\s*[+-]\s*\d{1,2}(?::?\d{2})?|[+-]\d{2}:?\d{2}|(?:ZONES)\b)";

/// [`OFFSET_AFTER`] alone, for a date and time a form took without it.
pub(super) static RE_OFFSET_AFTER: LazyLock<Regex> =
    LazyLock::new(|| re(&format!("^{OFFSET_AFTER}").replace("ZONES", ZONE_ABBRS)));

/// A time of day right before a date (`15:05, 2024年11月25日`; groups:
/// hour, minute, second, am/pm).
pub(super) static RE_TIME_BEFORE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?:^|[^\d:：.])(\d{1,2})[:：](\d{2})(?:[:：](\d{2}))?\s*([aApP]\.?[mM]\.?)?[\s,，|｜·•/–—-]{1,3}$",
    )
});

/// A publish time assigned in a page's script: `var ct = "1581517074"`
/// (WeChat's articles, whose visible date their script writes),
/// `publish_time: '2019-09-08 11:42:03'`, `"newsTime":"…"`, `pubtime: '…'`.
/// Group 1: the name (WeChat's only with `var`: a bare `ct` is anything;
/// the names first, so that the search skips to them); 2: a quoted value;
/// 3: a bare number.
pub(super) static RE_SCRIPT_TIME: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"(?i)\b(publish_?time|publish_?date|pub_?time|pub_?date|ptime|news_?time|date_?published|var\s+ct)["']?\s*[:=]\s*(?:["']([^"'\n\\]{6,40})["']|(\d{10}(?:\d{3})?)\b)"#,
    )
});
