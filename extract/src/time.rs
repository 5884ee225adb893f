//! Publish time: candidates from every source a page offers (meta tags,
//! JSON-LD, `<time>`, visible text near the title and at the head and foot of
//! the article, the URL, a feed or sitemap hint), then one decision.
//!
//! Every candidate is read in the page's time zone unless it states its own
//! offset ([`page_zone`]), checked against the fetch time (no future times, none
//! before [`EARLIEST_YEAR`]) and scored by how surely it is *this* page's
//! publish time: a labelled publish time next to the title beats a meta tag,
//! a meta tag beats an unlabelled date in the body, times of other items
//! (related links, comments) are never taken, and a modified/updated time is
//! taken only when the page states no publish time (`published_from`
//! `modified`). A day-precise winner takes the minutes of another candidate of
//! the same day.

use crate::lists::{self, List};
pub use shapes::page::{PublishedFrom, TimeContext};
use std::sync::LazyLock;

use chrono::{
    DateTime, Datelike, Duration, FixedOffset, LocalResult, NaiveDate, NaiveDateTime, NaiveTime,
    Offset, TimeZone, Timelike, Utc,
};
use chrono_tz::Tz;
use regex::Regex;

/// Times before this year are rejected (the web's news began later).
pub const EARLIEST_YEAR: i32 = 1995;

/// A candidate later than the fetch time by more than this is rejected.
const FUTURE_SLACK_MINUTES: i64 = 10;

/// Characters of text after the title line searched for the byline date.
const HEADER_ZONE_CHARS: usize = 600;
/// Lines before the title line searched (some sites put the date above).
const HEADER_ZONE_LINES_BEFORE: usize = 2;
/// Longest line taken as a dateline for dates without a year or relative ones.
const MAX_DATELINE_CHARS: usize = 30;
/// More unlabelled dates than this near the title: a list, none is taken.
const MAX_HEADER_DATES: usize = 4;
/// Characters at the head and at the foot of the article text searched.
const ARTICLE_EDGE_CHARS: usize = 300;
/// Characters before a date searched for its label.
const LABEL_WINDOW_CHARS: usize = 24;
/// A line longer than this is running prose: its dates are another event's
/// (`publiée par Les Echos (26/11/2019)`, `wurde am 18. Oktober 2021
/// eröffnet`), not a byline's, unless one opens the line (a dateline).
const MAX_BYLINE_CHARS: usize = 160;
/// Characters at the start of a prose line where a dateline's date may begin.
const DATELINE_START_CHARS: usize = 40;
/// Characters before a date searched for a byline that ends at it (`by NAME on`).
const BYLINE_WINDOW_CHARS: usize = 64;

/// The decided publish time. A page that states only a day gets 00:00 UTC
/// of that day (the day stays the stated one in UTC row keys and filters).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Published {
    /// The instant, in UTC.
    pub utc: DateTime<Utc>,
    /// The same instant at the offset the page stated or was read in.
    pub local: DateTime<FixedOffset>,
    /// Whether the page gave a time of day (else midnight of the day).
    pub has_time: bool,
    /// Where it came from.
    pub from: PublishedFrom,
}

/// Zone for times without an offset: the configured one, else by site
/// (`.cn`/`.hk`/`.tw`/`.mo` hosts: Asia/Shanghai; another country's own
/// domain: its zone, see [`country_zone`]), else by the country a page's
/// locale names (`<html lang="en-SG">`, `og:locale` `de_DE`), else by
/// language ([`LANGUAGE_ZONES`]: Chinese Asia/Shanghai, Japanese
/// Asia/Tokyo, German Europe/Berlin, ...), else UTC.
pub fn page_zone(
    configured: Option<Tz>,
    host: Option<&str>,
    language: Option<&str>,
    locales: &[&str],
) -> Tz {
    if let Some(z) = configured {
        return z;
    }
    let tld = host
        .map(|h| h.trim_end_matches('.').rsplit('.').next().unwrap_or(""))
        .unwrap_or("")
        .to_ascii_lowercase();
    let chinese_region = |c: &str| matches!(c, "cn" | "hk" | "tw" | "mo");
    if chinese_region(&tld) {
        return chrono_tz::Asia::Shanghai;
    }
    if let Some(zone) = country_zone(&tld) {
        return zone;
    }
    // The region of a language tag: `zh-Hant-TW`, `en_SG` (a script's four
    // letters and the language itself skipped). A dialect's region where
    // the site is elsewhere (`en-GB` in Sydney) is no worse than UTC.
    let region = locales.iter().find_map(|l| {
        l.split(['-', '_'])
            .skip(1)
            .find(|p| p.len() == 2 && p.chars().all(|c| c.is_ascii_alphabetic()))
            .map(str::to_ascii_lowercase)
    });
    if let Some(region) = region {
        if chinese_region(&region) {
            return chrono_tz::Asia::Shanghai;
        }
        if let Some(zone) = country_zone(&region) {
            return zone;
        }
    }
    language
        .and_then(|l| {
            let i = LANGUAGE_ZONES
                .binary_search_by(|(code, _)| (*code).cmp(l))
                .ok()?;
            LANGUAGE_ZONES[i].1.parse().ok()
        })
        .unwrap_or(chrono_tz::UTC)
}

/// Languages whose newsrooms nearly all keep one zone, sorted by code:
/// the zone of a page in one of them that neither host nor locale placed.
/// Languages of many zones (English, Spanish, Portuguese, Arabic) are left
/// out; so are those whose second country keeps another clock (Russian
/// pages of Minsk keep Moscow's, of Almaty not: Moscow is still nearer
/// than UTC).
const LANGUAGE_ZONES: [(&str, &str); 29] = [
    ("bg", "Europe/Sofia"),
    ("cs", "Europe/Prague"),
    ("da", "Europe/Copenhagen"),
    ("de", "Europe/Berlin"),
    ("el", "Europe/Athens"),
    ("fa", "Asia/Tehran"),
    ("fi", "Europe/Helsinki"),
    ("fr", "Europe/Paris"),
    ("he", "Asia/Jerusalem"),
    ("hi", "Asia/Kolkata"),
    ("hu", "Europe/Budapest"),
    ("id", "Asia/Jakarta"),
    ("it", "Europe/Rome"),
    ("ja", "Asia/Tokyo"),
    ("ko", "Asia/Seoul"),
    ("ms", "Asia/Kuala_Lumpur"),
    ("nb", "Europe/Oslo"),
    ("nl", "Europe/Amsterdam"),
    ("nn", "Europe/Oslo"),
    ("no", "Europe/Oslo"),
    ("pl", "Europe/Warsaw"),
    ("ro", "Europe/Bucharest"),
    ("ru", "Europe/Moscow"),
    ("sk", "Europe/Bratislava"),
    ("sv", "Europe/Stockholm"),
    ("th", "Asia/Bangkok"),
    ("tr", "Europe/Istanbul"),
    ("vi", "Asia/Ho_Chi_Minh"),
    ("zh", "Asia/Shanghai"),
];

/// Country code top-level domains and their zones, sorted by code.
const COUNTRY_ZONES: [(&str, &str); 44] = [
    ("ae", "Asia/Dubai"),
    ("ar", "America/Argentina/Buenos_Aires"),
    ("at", "Europe/Vienna"),
    ("bd", "Asia/Dhaka"),
    ("be", "Europe/Brussels"),
    ("bg", "Europe/Sofia"),
    ("ch", "Europe/Zurich"),
    ("cz", "Europe/Prague"),
    ("de", "Europe/Berlin"),
    ("dk", "Europe/Copenhagen"),
    ("eg", "Africa/Cairo"),
    ("es", "Europe/Madrid"),
    ("fi", "Europe/Helsinki"),
    ("fr", "Europe/Paris"),
    // The United Kingdom's code in language tags (`en-GB`); its domain is `.uk`.
    ("gb", "Europe/London"),
    ("gr", "Europe/Athens"),
    ("hu", "Europe/Budapest"),
    ("ie", "Europe/Dublin"),
    ("il", "Asia/Jerusalem"),
    ("in", "Asia/Kolkata"),
    ("it", "Europe/Rome"),
    ("jp", "Asia/Tokyo"),
    ("ke", "Africa/Nairobi"),
    ("kr", "Asia/Seoul"),
    ("my", "Asia/Kuala_Lumpur"),
    ("ng", "Africa/Lagos"),
    ("nl", "Europe/Amsterdam"),
    ("no", "Europe/Oslo"),
    ("nz", "Pacific/Auckland"),
    ("ph", "Asia/Manila"),
    ("pk", "Asia/Karachi"),
    ("pl", "Europe/Warsaw"),
    ("pt", "Europe/Lisbon"),
    ("ro", "Europe/Bucharest"),
    ("ru", "Europe/Moscow"),
    ("sa", "Asia/Riyadh"),
    ("se", "Europe/Stockholm"),
    ("sg", "Asia/Singapore"),
    ("sk", "Europe/Bratislava"),
    ("th", "Asia/Bangkok"),
    ("tr", "Europe/Istanbul"),
    ("uk", "Europe/London"),
    ("vn", "Asia/Ho_Chi_Minh"),
    ("za", "Africa/Johannesburg"),
];

/// The zone of a country with one zone (or one that nearly all its
/// newsrooms keep) by its code top-level domain: a site under `.de` or
/// `.fr` states its times in Berlin's or Paris's, in any language (RFI's
/// Chinese service too). Codes sold for other uses (`.io`, `.tv`, `.me`,
/// `.co`) and countries of several zones (`.us`, `.br`, `.au`) are left
/// out; Russia's newsrooms keep Moscow's time.
fn country_zone(tld: &str) -> Option<Tz> {
    let i = COUNTRY_ZONES
        .binary_search_by(|(t, _)| (*t).cmp(tld))
        .ok()?;
    COUNTRY_ZONES[i].1.parse().ok()
}

/// A time as a page states it: with its own offset, or wall-clock only.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stated {
    /// Explicit offset.
    Zoned(DateTime<FixedOffset>),
    /// No offset: read in the page zone.
    Local(NaiveDateTime),
}

impl Stated {
    /// The instant in `zone` (zoned times keep their own offset).
    pub fn resolve(self, zone: Tz) -> Option<DateTime<FixedOffset>> {
        match self {
            Stated::Zoned(d) => Some(d),
            Stated::Local(n) => {
                let d = match zone.from_local_datetime(&n) {
                    LocalResult::Single(d) => d,
                    LocalResult::Ambiguous(d, _) => d,
                    LocalResult::None => zone
                        .from_local_datetime(&(n + Duration::hours(1)))
                        .earliest()?,
                };
                Some(d.with_timezone(&d.offset().fix()))
            }
        }
    }
}

fn re(s: &str) -> Regex {
    Regex::new(s).expect("static regex is valid")
}

/// `YYYY-MM-DD`, `YYYY/M/D`, `YYYY.MM.DD`, `YYYY年M月D日`, each with an optional
/// time `H:MM[:SS]` (also `10时20分`, `下午3:05`) and an optional offset.
/// A byline ending where its date starts: `by NAME on`, `Submitted by NAME
/// on`, `Geschrieben von NAME am`, `Author: NAME am` (one to four
/// capitalised words without digits, not `by a television crew on`; the
/// date that follows is the post's).
static RE_BYLINE_BEFORE_DATE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?:^|[\s(|])(?i:by|von|author:|autor:)\s+(?:\p{Lu}[^\s\d.,;|:]*\s+){1,4}(?i:on|am)\s*[,:]?\s*(?:\p{L}{2,10}\.?,?\s+)?$",
    )
});

/// The zone abbreviations read beside a numeric date's time (not `CST` nor
/// `IST`, which name more than one zone; [`abbreviation_offset`] gives their
/// offsets).
const ZONE_ABBRS: &str = "UTC|GMT|HKT|SGT|MYT|JST|KST|EST|EDT|PST|PDT|BST|CET|CEST|AEST|AEDT";

static RE_NUMERIC: LazyLock<Regex> = LazyLock::new(|| {
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
static RE_ZONE_ABBR: LazyLock<Regex> = LazyLock::new(|| re(&format!(r"\b(?:{ZONE_ABBRS})\b")));

/// `15:05 2024/11/25`: a time of day before a year-first date (Taiwanese
/// sites' bylines and lists).
static RE_TIME_FIRST_NUMERIC: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(\d{1,2}):(\d{2})(?::(\d{2}))?[ \t\u{3000}]+((?:19|20)\d{2})([-/.])(\d{1,2})([-/.])(\d{1,2})",
    )
});

/// `2024 02/29 21:03:47`: the year apart from month/day (news.cn's byline
/// spans), with an optional time.
static RE_YEAR_APART: LazyLock<Regex> = LazyLock::new(|| {
    re(r"((?:19|20)\d{2})\s+(\d{1,2})\s*/\s*(\d{1,2})(?:\s+(\d{1,2}):(\d{2})(?::(\d{2}))?)?")
});

/// `M月D日 [H:MM]` without a year (the year comes from the context).
static RE_MONTH_DAY_ZH: LazyLock<Regex> =
    LazyLock::new(|| re(r"(\d{1,2})\s*月\s*(\d{1,2})\s*日(?:\s*(\d{1,2})\s*[:：时]\s*(\d{2}))?"));

/// `18-03-08 23:16`, `10-08 12:00`, `11/25(月) 15:05`: a two-digit year or
/// none, as Baidu's Baijiahao, many forums and Japanese portals print them
/// (the weekday in brackets); read only right after a publish label
/// ([`SHORT_DATE_LABELS`]) or standing apart with a time.
static RE_SHORT_NUMERIC: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?:(\d{2})[-/])?(\d{1,2})[-/](\d{1,2})(?:\s*[(（][月火水木金土日一二三四五六天][)）])?(?:\s+(\d{1,2})[:：](\d{2})(?:[:：](\d{2}))?)?",
    )
});

/// The labels a short date ([`RE_SHORT_NUMERIC`]) must follow, with only a
/// colon or spaces between.
static SHORT_DATE_LABELS: List =
    LazyLock::new(|| lists::parse(include_str!("lists/short_date_labels.txt")));

const MONTHS: &str = r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)";
/// A time of day after an English date (groups: hour, minute, second,
/// am/pm, zone abbreviation, the offset after `GMT`/`UTC`: `3:05 PM GMT+8`).
const EN_TIME: &str = r"(?:,?\s*(?:at\s+)?(\d{1,2})[:.](\d{2})(?::(\d{2}))?\s*([ap]\.?m\.?)?(?:\s*([a-z]{2,4})\b(?:\s*([+-]\s*\d{1,2}(?::?\d{2})?))?)?)?";

/// `November 17, 2023 [8:52 PM ET]`.
static RE_EN_MDY: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        r"(?i)\b{MONTHS}\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+((?:19|20)\d{{2}})\b{EN_TIME}"
    ))
});

/// `17 November 2023 [20:52]`, `17-Dec-2024`.
static RE_EN_DMY: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        r"(?i)\b(\d{{1,2}})(?:st|nd|rd|th)?(?:\s+|-){MONTHS}\.?,?(?:\s+|-)((?:19|20)\d{{2}})\b{EN_TIME}"
    ))
});

/// `10:20 AM ET, Mon November 27, 2013`, `16:45, November 25, 2024` (time
/// before the date; a 24-hour time with a comma).
static RE_EN_TIME_FIRST: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        r"(?i)\b(\d{{1,2}}):(\d{{2}})(?:\s*([ap]\.?m\.?)\s*([a-z]{{2,4}})?,?|,)\s*(?:[a-z]{{3,9}},?\s+)?{MONTHS}\.?\s+(\d{{1,2}}),?\s+((?:19|20)\d{{2}})\b"
    ))
});

/// `12:30pm, 24 Oct 2024`, `16:30 BST, Thu 24 October 2024`, `16:45,
/// 17-Dec-2024` (time before a day-first date).
static RE_EN_TIME_FIRST_DMY: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        r"(?i)\b(\d{{1,2}}):(\d{{2}})\s*([ap]\.?m\.?)?\s*([a-z]{{2,4}})?,\s*(?:[a-z]{{3,9}},?\s+)?(\d{{1,2}})(?:st|nd|rd|th)?(?:\s+|-){MONTHS}\.?,?(?:\s+|-)((?:19|20)\d{{2}})\b"
    ))
});

/// A time of day after a day-first date: `, 19:51`, ` - 18:55`, ` | 13:10`,
/// ` um 10:29`, ` à 10h30`, ` at 8:05` (groups: hour, minute, second).
const DAY_FIRST_TIME: &str = r"(?:(?:\s*[,|–-]\s*|\s+)(?:(?:um|à|a las|alle|om|kl\.?|at)\s+)?(\d{1,2})[:h](\d{2})(?::(\d{2}))?)?";

/// `24.12.2023`, `1.2.2024`, `24/12/2023`, `24-12-2023`: day first (Europe,
/// Latin America), each with an optional [`DAY_FIRST_TIME`]. With `/` or
/// `-` a date whose day and month could be swapped (`02/10/2020`) is not
/// taken: the US writes the month first.
static RE_DMY_NUMERIC: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        r"(\d{{1,2}})\s*([./-])\s*(\d{{1,2}})\s*([./-])\s*((?:19|20)\d{{2}}){DAY_FIRST_TIME}"
    ))
});

/// `8.5.12`, `02.12.19, 14:30`: day first with a two-digit year (German,
/// Swiss and Austrian bylines), with an optional [`DAY_FIRST_TIME`]. The
/// century comes from the fetch time; only a dateline beside the title
/// counts (see [`contextual_dates`]): in running text it is as often a
/// version number or a score.
static RE_DMY_SHORT_YEAR: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        r"(\d{{1,2}})\.(\d{{1,2}})\.(\d{{2}}){DAY_FIRST_TIME}"
    ))
});

/// Month names of German, French, Dutch, Spanish, Italian and Portuguese,
/// their usual abbreviations, and the English names (for `24. April 2020`),
/// lowercased, with their month.
const MONTH_NAMES: [(&str, u32); 93] = [
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
static RE_NAMED_DMY: LazyLock<Regex> = LazyLock::new(|| {
    let mut names: Vec<&str> = MONTH_NAMES.iter().map(|(n, _)| *n).collect();
    // Longest first: `januari` before `januar`, `juillet` before `juil`.
    names.sort_by_key(|n| std::cmp::Reverse(n.chars().count()));
    re(&format!(
        r"(?i)\b(\d{{1,2}})(?:\.\s*|er\s+|º\s+|\s+)(?:de\s+)?({})\.?,?\s+(?:de\s+|del\s+)?((?:19|20)\d{{2}})\b{DAY_FIRST_TIME}",
        names.join("|")
    ))
});

/// `3小时前`, `5 minutes ago`, `刚刚`, `昨天 10:20`, `前天`, `今天 08:00`.
static RE_RELATIVE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(\d{1,3})\s*(秒|分钟|小时|天)前|(\d{1,3})\s+(second|minute|hour|day)s?\s+ago|(刚刚|just now)|(今天|昨天|前天)\s*(\d{1,2})[:：](\d{2})",
    )
});

/// Whether `text` is a relative time alone (`3 天前`, `昨天 10:20`, `5
/// minutes ago`), as an element showing one holds it.
pub(crate) fn is_relative(text: &str) -> bool {
    let t = text.trim();
    t.chars().count() <= 20 && RE_RELATIVE.find(t).is_some_and(|m| m.start() == 0)
}

/// A date in a URL path: `/2019/09/07/`, `/20190907/`, `/2023-11/17/`, `/202311/17/`.
static RE_URL_DATE: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?:^|[^0-9])((?:19|20)\d{2})[-/_]?(0[1-9]|1[0-2])[-/_]?(0[1-9]|[12]\d|3[01])(?:[^0-9]|$)")
});

/// Labels that say the date after them is the publish time.
static PUBLISH_LABELS: List =
    LazyLock::new(|| lists::parse(include_str!("lists/publish_labels.txt")));

/// Labels that say the date after them is not the publish time (the first
/// [`UPDATE_LABELS`] of them: an update time; then comments', and a
/// repost's original's).
static OTHER_LABELS: List = LazyLock::new(|| lists::parse(include_str!("lists/other_labels.txt")));

/// How many of [`OTHER_LABELS`] (the first) label an update time.
const UPDATE_LABELS: usize = 24;

/// Whether the label nearest before byte `start` of `line` names an update
/// (`Updated:`, `更新时间：`), not a comment.
fn update_label_before(line: &str, start: usize) -> bool {
    let window = label_window(line, start);
    match (
        last_label(&window, &OTHER_LABELS[..UPDATE_LABELS]),
        last_label(&window, &OTHER_LABELS[UPDATE_LABELS..]),
    ) {
        (Some(u), Some(c)) => u > c,
        (Some(_), None) => true,
        _ => false,
    }
}

/// The [`LABEL_WINDOW_CHARS`] characters before byte `start` of `line`, lower-cased.
fn label_window(line: &str, start: usize) -> String {
    let from = line[..start]
        .char_indices()
        .rev()
        .nth(LABEL_WINDOW_CHARS - 1)
        .map_or(0, |(i, _)| i);
    crate::fold::fold(&line[from..start]).to_lowercase()
}

/// Where the last of `labels` in `window` ends.
fn last_label(window: &str, labels: &[&str]) -> Option<usize> {
    labels.iter().filter_map(|l| label_end(window, l)).max()
}

/// Where the last `label` in `window` ends, if it is a label there. A label
/// of two Han characters is also the end of ordinary words (`运营时间`,
/// `城市更新`: a related item's headline run together with its date): after
/// another Han character it labels only with a colon after it (`信息来源：`).
fn label_end(window: &str, label: &str) -> Option<usize> {
    let short_han = label.chars().count() == 2 && label.chars().all(is_cjk);
    // The last place it labels (an earlier one may, where a later one is
    // part of a word).
    window.rmatch_indices(label).find_map(|(p, _)| {
        let end = p + label.len();
        let in_word = short_han
            && window[..p].chars().next_back().is_some_and(is_cjk)
            && !window[end..].trim_start().starts_with([':', '：']);
        (!in_word).then_some(end)
    })
}

/// What a label before a date says about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Label {
    Publish,
    Other,
    None,
}

/// A date found in text, with its position.
#[derive(Debug, Clone, Copy)]
struct TextDate {
    start: usize,
    /// Where its match ends (after its time of day, when it has one).
    end: usize,
    stated: Stated,
    has_time: bool,
    /// A day stated without its year (`11月25日`), the year taken from the
    /// URL or the fetch time.
    year_inferred: bool,
    /// Counted back from the fetch time (`昨天`, `3小时前`).
    relative: bool,
}

impl TextDate {
    /// This date as a candidate from `from`, scored `score`.
    fn candidate(&self, from: PublishedFrom, score: i32, near_title: bool) -> Candidate {
        Candidate {
            stated: self.stated,
            has_time: self.has_time,
            from,
            score,
            near_title,
            year_inferred: self.year_inferred,
            relative: self.relative,
        }
    }
}

fn num<T: std::str::FromStr>(c: &regex::Captures<'_>, i: usize) -> Option<T> {
    c.get(i).and_then(|m| m.as_str().parse().ok())
}

/// The [`DAY_FIRST_TIME`] whose hour is group `t` of `c`: `Some(None)`
/// without one, `None` when it is no time of day.
fn day_first_time(c: &regex::Captures<'_>, t: usize) -> Option<Option<NaiveTime>> {
    match num::<u32>(c, t) {
        Some(h) => NaiveTime::from_hms_opt(h, num(c, t + 1)?, num(c, t + 2).unwrap_or(0)).map(Some),
        None => Some(None),
    }
}

fn month_number(name: &str) -> Option<u32> {
    const NAMES: [&str; 12] = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    let lower = name.to_ascii_lowercase();
    NAMES
        .iter()
        .position(|m| lower.starts_with(m))
        .map(|i| i as u32 + 1)
}

/// Offset of a zone abbreviation common in English bylines; `None` for
/// unknown or ambiguous ones (CST, IST).
fn abbreviation_offset(abbr: &str, date: NaiveDate) -> Option<FixedOffset> {
    let named = |tz: Tz| {
        tz.from_local_datetime(&date.and_hms_opt(12, 0, 0)?)
            .earliest()
            .map(|d| d.offset().fix())
    };
    let hours = match abbr.to_ascii_uppercase().as_str() {
        "ET" => return named(chrono_tz::America::New_York),
        "PT" => return named(chrono_tz::America::Los_Angeles),
        "CT" => return named(chrono_tz::America::Chicago),
        "UTC" | "GMT" | "Z" => 0,
        "EST" => -5,
        "EDT" | "CDT" => {
            if abbr.eq_ignore_ascii_case("EDT") {
                -4
            } else {
                -5
            }
        }
        "PST" => -8,
        "PDT" | "MST" => -7,
        "MDT" => -6,
        "BST" | "CET" => 1,
        "CEST" | "EET" => 2,
        "EEST" | "MSK" => 3,
        "HKT" | "SGT" | "AWST" => 8,
        "JST" | "KST" => 9,
        "AEST" => 10,
        "AEDT" => 11,
        _ => return None,
    };
    FixedOffset::east_opt(hours * 3600)
}

/// An offset as [`OFFSET_AFTER`] finds it: numeric, or a zone's
/// abbreviation on `date`.
fn stated_offset(z: &str, date: NaiveDate) -> Option<FixedOffset> {
    parse_offset(z).or_else(|| abbreviation_offset(z, date))
}

fn parse_offset(s: &str) -> Option<FixedOffset> {
    let s = s.trim();
    if s.eq_ignore_ascii_case("z") {
        return FixedOffset::east_opt(0);
    }
    let s = s
        .trim_start_matches("GMT")
        .trim_start_matches("UTC")
        .replace([' ', ':'], "");
    let (sign, digits) = match s.chars().next()? {
        '+' => (1, &s[1..]),
        '-' => (-1, &s[1..]),
        _ => return None,
    };
    let (h, m): (i32, i32) = match digits.len() {
        1 | 2 => (digits.parse().ok()?, 0),
        3 => (digits[..1].parse().ok()?, digits[1..].parse().ok()?),
        4 => (digits[..2].parse().ok()?, digits[2..].parse().ok()?),
        _ => return None,
    };
    if h > 14 || m > 59 {
        return None;
    }
    FixedOffset::east_opt(sign * (h * 3600 + m * 60))
}

/// 12-hour clock and Chinese day-part words to a 24-hour hour.
fn hour24(hour: u32, ampm: Option<&str>, part: Option<&str>) -> Option<u32> {
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

fn stated(
    date: NaiveDate,
    time: Option<NaiveTime>,
    offset: Option<FixedOffset>,
) -> Option<(Stated, bool)> {
    let has_time = time.is_some();
    let naive = date.and_time(time.unwrap_or(NaiveTime::MIN));
    let s = match offset {
        Some(o) => Stated::Zoned(o.from_local_datetime(&naive).single()?),
        None => Stated::Local(naive),
    };
    Some((s, has_time))
}

/// Whether `text` holds four digits in a row starting with 19 or 20: every
/// numeric date does (a cheap test before the regex, run on every line).
fn has_year_digits(text: &str) -> bool {
    let b = text.as_bytes();
    b.windows(4)
        .any(|w| matches!(&w[..2], b"19" | b"20") && w[2].is_ascii_digit() && w[3].is_ascii_digit())
}

/// `二〇二四年十一月二十日`: a date in Chinese numerals (the date under an
/// official document's or a notice's signature).
static RE_HAN_NUMERAL_DATE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"([〇○零一二三四五六七八九]{4})年([一二三四五六七八九十]{1,2})月([一二三四五六七八九十]{1,3})日",
    )
});

/// The value of a Chinese numeral: digits written one by one (`二〇二四`) or
/// a number up to 99 with `十` (`十一`, `二十`, `三十一`).
fn han_number(s: &str) -> Option<u32> {
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
fn han_numeral_dates(text: &str) -> Vec<TextDate> {
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

/// `民國113年11月25日`, `發布日期：113-11-25`: a date of the Republic of
/// China's calendar (Taiwan's government and many of its sites), the year
/// counted from 1912. Its year stands alone only after the era's name or a
/// date label (`日期`, `時間`): elsewhere `113-11-25` is as often a number.
static RE_ROC_DATE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?:(?:中華民國|中华民国|民國|民国)[ \t\u{3000}]*(\d{2,3})[ \t\u{3000}]*年|(?:日期|時間|时间)[ \t\u{3000}]*[:：]?[ \t\u{3000}]*(1[0-4]\d)[ \t\u{3000}]*(?:年|[-/.]))[ \t\u{3000}]*(\d{1,2})[ \t\u{3000}]*(?:月|[-/.])[ \t\u{3000}]*(\d{1,2})(?:[ \t\u{3000}]*日)?(?:[ \t\u{3000}]+(\d{1,2})[:：](\d{2})(?:[:：](\d{2}))?)?",
    )
});

/// The dates of the Republic of China's calendar in `text` ([`RE_ROC_DATE`]),
/// each starting at its year.
fn roc_dates(text: &str) -> Vec<TextDate> {
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

/// Where the first absolute date in `text` starts (a byte offset).
pub(crate) fn first_date_start(text: &str) -> Option<usize> {
    text_dates(text).first().map(|d| d.start)
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
fn with_ascii_digits(
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

/// Between a date and a time of day set apart from it: spaces and
/// separators, and at most one of a weekday (`(月)`, `星期一`, `Monday,`) or
/// a word for "at" (`at`, `um`, `à`, `alle`).
const BETWEEN_DATE_AND_TIME: &str = r"[\s,，|｜·•/–—-]*(?:(?:[(（]\s*\p{L}{1,9}\.?\s*[)）]|(?:星期|周|礼拜|禮拜)[一二三四五六日天]|(?i:(?:mon|tue|wed|thu|fri|sat|sun)[a-z]{0,6}\.?|at|um|à|alle|om|kl\.?|a\s+las|às))[\s,，|｜·•/–—-]*)?";

/// A time of day right after a date that no date form took with it
/// (groups: day part, hour, minute, second, am/pm, offset or zone).
static RE_TIME_AFTER: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        r"^{BETWEEN_DATE_AND_TIME}(上午|下午|早上|晚上|凌晨|中午|오전|오후)?\s*(\d{{1,2}})(?:\s*[:：时点]\s*|h)(\d{{2}})(?:\s*[:：分]\s*(\d{{2}}))?(?:\s*[分秒])?\s*([aApP]\.?[mM]\.?)?(?:{OFFSET_AFTER})?"
    ).replace("ZONES", ZONE_ABBRS))
});

/// An offset or a zone's abbreviation (`ZONES`: [`ZONE_ABBRS`]) right after
/// a time, bracketed or not (group: the offset).
const OFFSET_AFTER: &str =
    r"\s*[(（]?\s*((?:GMT|UTC)\s*[+-]\s*\d{1,2}(?::?\d{2})?|[+-]\d{2}:?\d{2}|(?:ZONES)\b)";

/// [`OFFSET_AFTER`] alone, for a date and time a form took without it.
static RE_OFFSET_AFTER: LazyLock<Regex> =
    LazyLock::new(|| re(&format!("^{OFFSET_AFTER}").replace("ZONES", ZONE_ABBRS)));

/// A time of day right before a date (`15:05, 2024年11月25日`; groups:
/// hour, minute, second, am/pm).
static RE_TIME_BEFORE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?:^|[^\d:：.])(\d{1,2})[:：](\d{2})(?:[:：](\d{2}))?\s*([aApP]\.?[mM]\.?)?[\s,，|｜·•/–—-]{1,3}$",
    )
});

/// Joins to each date of `dates` (in `text`, in order) without a time of day
/// the time set apart from it by a weekday, a word or separators, after it
/// or else right before it, where no other date claims that time: the forms
/// a site makes of its own (`2024-11-25 (Mon) | 15:05`, `25.11.2024 -
/// Montag - 15:05 Uhr`, `15:05 · 2024/11/25`) are too many to list one by
/// one.
fn join_times(text: &str, dates: &mut [TextDate]) {
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

/// Every absolute date in `text` (numeric year-first, Chinese, English,
/// day-first numeric and day-first with a month name), in order.
fn text_dates(text: &str) -> Vec<TextDate> {
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
    let english = |c: &regex::Captures<'_>, month: usize, day: usize, year: usize, t: usize| {
        let date = NaiveDate::from_ymd_opt(
            num(c, year)?,
            month_number(c.get(month)?.as_str())?,
            num(c, day)?,
        )?;
        let time = match num::<u32>(c, t) {
            Some(h) => hour24(h, c.get(t + 3).map(|m| m.as_str()), None).and_then(|h| {
                NaiveTime::from_hms_opt(h, num(c, t + 1)?, num(c, t + 2).unwrap_or(0))
            }),
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
    };
    for c in RE_EN_MDY.captures_iter(text) {
        if let (Some(m), Some((s, has_time))) = (c.get(0), english(&c, 1, 2, 3, 4)) {
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
        if let (Some(m), Some((s, has_time))) = (c.get(0), english(&c, 2, 1, 3, 4)) {
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
    // Day-first forms: only where no form above found a date.
    let taken = |out: &[TextDate], start: usize, end: usize| {
        out.iter().any(|d| d.start >= start && d.start < end)
    };
    // Chinese, Japanese and Korean write dates year first: a day- or
    // month-first date in their text is an example (`"22.11.1999" 无法用于
    // 自动转换`), not a dateline.
    let cjk = text.chars().any(is_cjk);
    for c in RE_DMY_NUMERIC.captures_iter(text).filter(|_| !cjk) {
        let Some(m) = c.get(0) else { continue };
        // Not part of a longer number or of a version (`1.2.3.2020`).
        if text[..m.start()].ends_with(|ch: char| ch.is_ascii_digit() || ".-/".contains(ch))
            || text[m.end()..].starts_with(|ch: char| ch.is_ascii_digit())
            || taken(&out, m.start(), m.end())
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
        if taken(&out, m.start(), m.end()) {
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
    out.sort_by_key(|d| d.start);
    join_times(text, &mut out);
    out
}

/// Dates without a year (`11月17日 20:52`) and relative times (`3小时前`,
/// `昨天 10:20`), resolved against the fetch time in `zone`; only searched
/// near the title.
fn contextual_dates(
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
    out.sort_by_key(|d| d.start);
    join_times(text, &mut out);
    out
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

/// Chinese, Japanese or Korean script.
fn is_cjk(ch: char) -> bool {
    matches!(ch as u32, 0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF)
}

/// The label nearest before byte `start` of `line`.
fn label_before(line: &str, start: usize) -> Label {
    let window = label_window(line, start);
    match (
        last_label(&window, &PUBLISH_LABELS),
        last_label(&window, &OTHER_LABELS),
    ) {
        (Some(p), Some(o)) if o >= p => Label::Other,
        (Some(_), _) => Label::Publish,
        (None, Some(_)) => Label::Other,
        (None, None) => {
            // A byline longer than the label window: `Submitted by Jane Roe on`.
            let from = line[..start]
                .char_indices()
                .rev()
                .nth(BYLINE_WINDOW_CHARS - 1)
                .map_or(0, |(i, _)| i);
            if RE_BYLINE_BEFORE_DATE.is_match(&line[from..start]) {
                Label::Publish
            } else {
                Label::None
            }
        }
    }
}

/// Whether a date at byte `start` of `line` may be a byline's: the line is
/// short, or the date opens it.
fn byline_position(line: &str, start: usize) -> bool {
    line.chars().count() <= MAX_BYLINE_CHARS
        || line[..start].chars().count() <= DATELINE_START_CHARS
}

/// The label of the date at byte `start` of `lines[i]`: the one before it on
/// its line, else, for a date that starts its line, a line before that is
/// only a label (`Datum` / `12.01.2017`, `Mise en ligne` / `23 mai 2019`:
/// the label and the date in two elements).
fn line_label(lines: &[&str], i: usize, start: usize) -> Label {
    let line = lines[i];
    match label_before(line, start) {
        Label::None if i > 0 && line[..start].trim().is_empty() => {
            let prev = crate::fold::fold(lines[i - 1])
                .trim()
                .trim_end_matches([':', '：'])
                .trim_end()
                .to_lowercase();
            if PUBLISH_LABELS.contains(&prev.as_str()) {
                Label::Publish
            } else if OTHER_LABELS.contains(&prev.as_str()) {
                Label::Other
            } else {
                Label::None
            }
        }
        l => l,
    }
}

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

/// One time found on the page.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Candidate {
    pub stated: Stated,
    pub has_time: bool,
    pub from: PublishedFrom,
    /// How surely this is the publish time (higher wins).
    pub score: i32,
    /// Found in the lines around the title.
    pub near_title: bool,
    /// Stated without its year (see [`decide`]).
    pub year_inferred: bool,
    /// Counted back from the fetch time (`昨天 10:20`, `3小时前`).
    pub relative: bool,
}

/// Scores of the sources.
pub(crate) mod score {
    pub const TEXT_LABELLED_NEAR_TITLE: i32 = 95;
    pub const META_PUBLISHED: i32 = 90;
    pub const JSONLD: i32 = 90;
    pub const TIME_MARKED: i32 = 85;
    pub const TEXT_NEAR_TITLE: i32 = 80;
    pub const FEED: i32 = 75;
    pub const TEXT_MARKED: i32 = 70;
    pub const TIME_FIRST: i32 = 65;
    pub const META_WEAK: i32 = 60;
    pub const TEXT_LABELLED: i32 = 55;
    pub const URL: i32 = 50;
    pub const TEXT_DATE_CLASS: i32 = 45;
    pub const TEXT_ARTICLE_EDGE: i32 = 40;
    pub const TIME_OTHER: i32 = 30;
    /// A publish variable of the page's script (`publish_time`, WeChat's
    /// `ct`): what a page without a visible or marked-up date has (WeChat's
    /// articles as served, their date written by the script).
    pub const SCRIPT: i32 = 25;
    /// The `title` of an element that shows a relative phrase (`<span
    /// title="2024-11-25 15:05:06">3 天前</span>`, Discuz's and timeago's
    /// markup): the time the phrase stands for. Its own score, so that
    /// [`crate::decide`] knows it: a relative winner takes it.
    pub const TITLED: i32 = 24;
    /// A modified / updated time: only when nothing else is found.
    pub const MODIFIED: i32 = 5;
}

/// Dates of the text around the title (`title_line` indexes `lines`):
/// labelled publish dates first, then the first unlabelled one; dates
/// labelled as updates or comments are dropped. `article_end` is the line
/// the article's text ends on, when known: the dated lines below it (related
/// items, comments) do not make the title's surroundings a list.
pub(crate) fn near_title_candidates(
    lines: &[&str],
    title_line: usize,
    article_end: Option<usize>,
    ctx: &TimeContext,
    zone: Tz,
    year: Option<i32>,
) -> Vec<Candidate> {
    let mut out = Vec::new();
    let first = title_line.saturating_sub(HEADER_ZONE_LINES_BEFORE);
    let mut chars = 0usize;
    // Many dates around the title: a list (an archive, related items), whose
    // unlabelled dates belong to other pages.
    let mut zone_dates = 0usize;
    let mut zone_chars = 0usize;
    for (i, line) in lines.iter().enumerate().skip(first) {
        if zone_chars > HEADER_ZONE_CHARS || article_end.is_some_and(|end| i > end) {
            break;
        }
        zone_chars += line.chars().count();
        zone_dates += text_dates(line).len();
    }
    let mut unlabelled_taken = zone_dates > MAX_HEADER_DATES;
    let today = ctx.fetched.with_timezone(&zone).date_naive();
    for (i, line) in lines.iter().enumerate().skip(first) {
        if i > title_line {
            if chars > HEADER_ZONE_CHARS {
                break;
            }
            chars += line.chars().count();
        }
        if i == title_line {
            continue;
        }
        let mut dates = text_dates(line);
        let mut contextual = false;
        if dates.is_empty() {
            dates = contextual_dates(line, ctx.fetched, zone, year);
            contextual = true;
        }
        for d in dates {
            if !byline_position(line, d.start) {
                continue;
            }
            let label = line_label(lines, i, d.start);
            // `3小时前`, `昨天 10:20`, `11月17日` in running text are not a
            // dateline: only on a short line or after a publish label.
            if contextual && label != Label::Publish && line.chars().count() > MAX_DATELINE_CHARS {
                continue;
            }
            let score = match label {
                Label::Other => {
                    // An update time first under the title (`By X |
                    // Updated: …`): the byline's only date; unlabelled
                    // dates below it are other items' (a list after a
                    // short article).
                    let update = update_label_before(line, d.start);
                    unlabelled_taken |= i > title_line && update;
                    // A short one (`修改于05-20 16:00`) is read only here: it
                    // stands in as a modified time.
                    if update && contextual {
                        out.push(d.candidate(PublishedFrom::Modified, score::MODIFIED, false));
                    }
                    continue;
                }
                Label::Publish => score::TEXT_LABELLED_NEAR_TITLE,
                Label::None if unlabelled_taken => continue,
                // Below the article's text: a related item's or a comment's.
                Label::None if article_end.is_some_and(|end| i > end) => continue,
                // A day without a time above the title that is the fetch
                // day: the site's top bar showing today, not a byline.
                Label::None
                    if i < title_line
                        && !d.has_time
                        && d.stated.resolve(zone).map(|l| l.date_naive()) == Some(today) =>
                {
                    continue
                }
                Label::None => score::TEXT_NEAR_TITLE - i32::from(i < title_line) * 5,
            };
            // A day alone above the title (a top bar's date) leaves the
            // byline under the title to be read too: its time wins on score.
            unlabelled_taken |= label == Label::None && (i > title_line || d.has_time);
            out.push(d.candidate(PublishedFrom::Text, score, true));
        }
    }
    out
}

/// Labelled publish dates anywhere in the page text (`发布时间：…`): the
/// first counts, and only when few dates are labelled so (not a list or a
/// comment thread).
pub(crate) fn labelled_candidates(lines: &[&str]) -> Vec<Candidate> {
    let mut found = Vec::new();
    let mut updates = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        for d in text_dates(line)
            .into_iter()
            .filter(|d| byline_position(line, d.start))
        {
            match line_label(lines, i, d.start) {
                Label::Publish => found.push(d),
                Label::Other if update_label_before(line, d.start) => updates.push(d),
                _ => {}
            }
        }
        if found.len() > 3 {
            found.clear();
            break;
        }
    }
    let candidate = |d: TextDate, from, score| d.candidate(from, score, false);
    let mut out: Vec<Candidate> = found
        .into_iter()
        .take(1)
        .map(|d| candidate(d, PublishedFrom::Text, score::TEXT_LABELLED))
        .collect();
    // The page's own update time (one or two stated, not a list of edits).
    if updates.len() <= 2 {
        out.extend(
            updates
                .into_iter()
                .take(1)
                .map(|d| candidate(d, PublishedFrom::Modified, score::MODIFIED)),
        );
    }
    out
}

/// The date in the first element marked as the publish time by its class
/// (`class="publish-date"`, `pubtime`, `post_time_source`, ...): `texts` in
/// document order; none when several such elements carry dates (a list).
pub(crate) fn marked_element_candidate(texts: &[String]) -> Option<Candidate> {
    let dated: Vec<TextDate> = texts
        .iter()
        .filter_map(|t| {
            let Some(d) = text_dates(t).into_iter().next() else {
                // `<textarea class="article-time">1709864700000</textarea>`.
                let (stated, has_time) =
                    parse_stated(t).filter(|_| t.trim().bytes().all(|b| b.is_ascii_digit()))?;
                return Some(TextDate {
                    year_inferred: false,
                    relative: false,
                    start: 0,
                    end: t.len(),
                    stated,
                    has_time,
                });
            };
            (label_before(t, d.start) != Label::Other).then_some(d)
        })
        .collect();
    if dated.len() > 3 {
        return None;
    }
    let d = dated.into_iter().next()?;
    Some(d.candidate(PublishedFrom::Text, score::TEXT_MARKED, false))
}

/// The date of the first element whose class names a date (`<span
/// class="date">`, `entry-date`; `texts` in document order): none when the
/// elements carry more than two different days (a list of posts).
pub(crate) fn date_class_candidate(texts: &[String]) -> Option<Candidate> {
    let dated: Vec<TextDate> = texts
        .iter()
        .filter_map(|t| {
            let d = text_dates(t).into_iter().next()?;
            (label_before(t, d.start) != Label::Other).then_some(d)
        })
        .collect();
    let mut days: Vec<_> = dated
        .iter()
        .filter_map(|d| d.stated.resolve(chrono_tz::UTC).map(|l| l.date_naive()))
        .collect();
    days.sort();
    days.dedup();
    if days.len() > 2 {
        return None;
    }
    let d = dated.into_iter().next()?;
    Some(d.candidate(PublishedFrom::Text, score::TEXT_DATE_CLASS, false))
}

/// The first unlabelled date at the head and at the foot of the article text.
pub(crate) fn article_edge_candidates(article: &str) -> Vec<Candidate> {
    let chars: Vec<(usize, char)> = article.char_indices().collect();
    if chars.is_empty() {
        return Vec::new();
    }
    let head_end = chars
        .get(ARTICLE_EDGE_CHARS)
        .map_or(article.len(), |(i, _)| *i);
    let foot_start = chars
        .len()
        .checked_sub(ARTICLE_EDGE_CHARS)
        .and_then(|i| chars.get(i))
        .map_or(0, |(i, _)| *i);
    let mut out = Vec::new();
    for part in [&article[..head_end], &article[foot_start.max(head_end)..]] {
        let dates = text_dates(part);
        // Many dates at an edge: a list, not a dateline.
        if dates.len() > 2 {
            continue;
        }
        if let Some(d) = dates.into_iter().find(|d| {
            let line_start = part[..d.start].rfind('\n').map_or(0, |p| p + 1);
            label_before(&part[line_start..], d.start - line_start) != Label::Other
        }) {
            out.push(d.candidate(PublishedFrom::Text, score::TEXT_ARTICLE_EDGE, false));
        }
    }
    out
}

/// The date in the URL path, if any (day precision).
pub(crate) fn url_candidate(path: &str) -> Option<Candidate> {
    let c = RE_URL_DATE.captures(path)?;
    let date = NaiveDate::from_ymd_opt(num(&c, 1)?, num(&c, 2)?, num(&c, 3)?)?;
    let (stated, has_time) = stated(date, None, None)?;
    Some(Candidate {
        year_inferred: false,
        relative: false,
        stated,
        has_time,
        from: PublishedFrom::Url,
        score: score::URL,
        near_title: false,
    })
}

/// The year of the URL's date, context for dates without a year.
pub(crate) fn url_year(path: &str) -> Option<i32> {
    RE_URL_DATE.captures(path).and_then(|c| num(&c, 1))
}

/// A candidate from a machine-readable value.
pub(crate) fn parsed_candidate(value: &str, from: PublishedFrom, score: i32) -> Option<Candidate> {
    let (stated, has_time) = parse_stated(value)?;
    Some(Candidate {
        year_inferred: false,
        relative: false,
        stated,
        has_time,
        from,
        score,
        near_title: false,
    })
}

/// A publish time assigned in a page's script: `var ct = "1581517074"`
/// (WeChat's articles, whose visible date their script writes),
/// `publish_time: '2019-09-08 11:42:03'`, `"newsTime":"…"`, `pubtime: '…'`.
/// Group 1: the name (WeChat's only with `var`: a bare `ct` is anything;
/// the names first, so that the search skips to them); 2: a quoted value;
/// 3: a bare number.
static RE_SCRIPT_TIME: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"(?i)\b(publish_?time|publish_?date|pub_?time|pub_?date|ptime|news_?time|date_?published|var\s+ct)["']?\s*[:=]\s*(?:["']([^"'\n\\]{6,40})["']|(\d{10}(?:\d{3})?)\b)"#,
    )
});

/// Most script assignments read per page.
const MAX_SCRIPT_TIMES: usize = 200;

/// Publish-time candidates from the page's inline scripts. A name counts
/// only when every value assigned to it on the page is the same instant (a
/// list of related items gives each its own): the publish names at
/// [`score::SCRIPT`], WeChat's `var ct` too (only with `var`: a bare `ct` is
/// anything). Not a bare `time`: on a page that shows its own date it is as
/// often the time the page was served (Baidu's ad data).
pub(crate) fn script_candidates<'s>(
    scripts: impl IntoIterator<Item = &'s str>,
    zone: Tz,
) -> Vec<Candidate> {
    // (name, candidate, its time at the page's zone, consistent so far)
    let mut seen: Vec<(String, Candidate, DateTime<FixedOffset>, bool)> = Vec::new();
    let found = scripts
        .into_iter()
        .flat_map(|s| RE_SCRIPT_TIME.captures_iter(s))
        .take(MAX_SCRIPT_TIMES);
    for c in found {
        let Some(name) = c.get(1) else { continue };
        let name: String = name
            .as_str()
            .to_ascii_lowercase()
            .split_whitespace()
            .last()
            .unwrap_or_default()
            .replace('_', "");
        let sc = score::SCRIPT;
        let value = c
            .get(2)
            .or_else(|| c.get(3))
            .map_or("", |m| m.as_str())
            .trim();
        let cand = if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
            epoch_candidate(value, zone, sc)
        } else {
            parsed_candidate(value, PublishedFrom::Script, sc)
        };
        let Some((cand, at)) = cand.and_then(|c| Some((c, c.stated.resolve(zone)?))) else {
            continue;
        };
        match seen.iter_mut().find(|(n, ..)| *n == name) {
            Some((_, first, first_at, ok)) => {
                // The same minute, or the same day where one states no time.
                *ok &= first_at.timestamp() / 60 == at.timestamp() / 60
                    || (!first.has_time || !cand.has_time)
                        && first_at.date_naive() == at.date_naive();
                // The more precise of two agreeing values.
                if *ok && cand.has_time && !first.has_time {
                    (*first, *first_at) = (cand, at);
                }
            }
            None => seen.push((name, cand, at, true)),
        }
    }
    seen.into_iter()
        .filter(|(.., ok)| *ok)
        .map(|(_, c, ..)| c)
        .collect()
}

/// Seconds (10 digits) or milliseconds (13) since the Unix epoch, at the
/// page's zone (so the day is the one the page shows).
fn epoch_candidate(digits: &str, zone: Tz, score: i32) -> Option<Candidate> {
    let n: i64 = digits.parse().ok()?;
    let secs = if digits.len() == 13 { n / 1000 } else { n };
    let t = DateTime::<Utc>::from_timestamp(secs, 0)?;
    Some(Candidate {
        year_inferred: false,
        relative: false,
        stated: Stated::Zoned(t.with_timezone(&zone).fixed_offset()),
        has_time: true,
        from: PublishedFrom::Script,
        score,
        near_title: false,
    })
}

/// The decision over all candidates.
pub(crate) fn decide(cands: &[Candidate], ctx: &TimeContext, zone: Tz) -> Option<Published> {
    let earliest = Utc
        .with_ymd_and_hms(EARLIEST_YEAR, 1, 1, 0, 0, 0)
        .single()?;
    let latest = ctx.fetched + Duration::minutes(FUTURE_SLACK_MINUTES);
    let fetched_day = ctx.fetched.with_timezone(&zone).date_naive();
    let cands = with_page_years(cands, zone);
    let mut valid: Vec<(Candidate, DateTime<FixedOffset>)> = cands
        .iter()
        .filter_map(|c| {
            let local = c.stated.resolve(zone)?;
            let utc = local.with_timezone(&Utc);
            let in_future = if c.has_time {
                utc > latest
            } else {
                local.date_naive() > fetched_day
            };
            (utc >= earliest && !in_future).then_some((*c, local))
        })
        .collect();
    // Highest score first; the first found among equals.
    valid.sort_by_key(|(c, _)| std::cmp::Reverse(c.score));
    let (mut best, mut best_local) = *valid.first()?;
    // A relative phrase (`昨天`) is what the page's script renders from the
    // time it holds (WeChat's `var ct`): that time, to the second, not the
    // phrase counted back from a fetch time that need not be the render time.
    if best.relative {
        // So is a time the phrase's element carries in its `title`, when it
        // is the phrase's day or within two hours of it.
        let titled = |(c, l): &&(Candidate, DateTime<FixedOffset>)| {
            c.score == score::TITLED
                && c.has_time
                && (l.date_naive() == best_local.date_naive()
                    || (*l - best_local).num_minutes().abs() <= 120)
        };
        if let Some(s) = valid
            .iter()
            .find(|(c, _)| c.from == PublishedFrom::Script && c.has_time)
            .or_else(|| valid.iter().find(titled))
        {
            (best, best_local) = *s;
        }
    }
    // A structured time disagreeing with the byline next to the title: the
    // byline is the visible publish time unless it is the later of the two
    // (then the structured one is the first publication, the byline an update).
    // Only a byline with a time of day counts (a bare date near the title is
    // as often a photo caption), and not against two structured sources that
    // agree with each other.
    let structured = |c: &Candidate| {
        matches!(
            c.from,
            PublishedFrom::Meta | PublishedFrom::Jsonld | PublishedFrom::Time
        )
    };
    let agreeing = valid
        .iter()
        .filter(|(c, l)| structured(c) && l.date_naive() == best_local.date_naive())
        .count();
    if structured(&best) && agreeing < 2 {
        if let Some((c, l)) = valid
            .iter()
            .find(|(c, _)| c.near_title && c.has_time && c.from == PublishedFrom::Text)
        {
            let same_day = l.date_naive() == best_local.date_naive();
            if !same_day && *l < best_local {
                (best, best_local) = (*c, *l);
            }
        }
    }
    // A day-precise winner takes the time of day from a candidate of that day.
    if !best.has_time {
        // A modified time only when no other candidate gives one (China
        // Daily's byline, `Updated: 2024-10-22 09:40`, on a page whose URL
        // names the day).
        let of_the_day = |c: &Candidate, l: &DateTime<FixedOffset>| {
            c.has_time && l.date_naive() == best_local.date_naive()
        };
        if let Some((c, l)) = valid
            .iter()
            .find(|(c, l)| of_the_day(c, l) && c.score >= score::TEXT_ARTICLE_EDGE)
            // A publish variable of the page's script that agrees on the day
            // (`"pubtime":"2024-11-25 15:05:12"` on a page whose URL names
            // the 25th).
            .or_else(|| {
                valid
                    .iter()
                    .find(|(c, l)| of_the_day(c, l) && c.from == PublishedFrom::Script)
            })
            .or_else(|| {
                valid
                    .iter()
                    .find(|(c, l)| of_the_day(c, l) && c.from == PublishedFrom::Modified)
            })
        {
            (best, best_local) = (*c, *l);
        }
    }
    // A winner stated without an offset, and a time of the same wall-clock
    // minute stated with one (`Published: 10 Dec. 2024, 17:42` over
    // `article:published_time` `2024-12-10T17:42:00+09:00`): the page's
    // clock runs at that offset, whatever the default zone. Not a zero
    // offset: CMSs stamp local times `Z` as often as they mean UTC.
    if let (Stated::Local(n), true) = (best.stated, best.has_time) {
        let minute = |d: NaiveDateTime| (d.date(), d.hour(), d.minute());
        let zoned = cands.iter().find_map(|c| match c.stated {
            Stated::Zoned(z)
                if c.has_time
                    && z.offset().local_minus_utc() != 0
                    && minute(z.naive_local()) == minute(n) =>
            {
                Some(z)
            }
            _ => None,
        });
        // Its seconds too, where the text gives none (`14:32` beside
        // `14:32:35+08:00`).
        let at = |z: DateTime<FixedOffset>| {
            if n.second() == 0 {
                Some(z)
            } else {
                n.and_local_timezone(*z.offset()).single()
            }
        };
        if let Some(l) = zoned.and_then(at) {
            best_local = l;
        } else if n.second() == 0 {
            // Without an offset: the seconds of a time of the same minute
            // (`og:time` `2024-11-14 07:12:35` under a shown `07:12`).
            let seconds = cands.iter().find_map(|c| match c.stated {
                Stated::Local(m) if c.has_time && minute(m) == minute(n) && m.second() != 0 => {
                    Some(m.second())
                }
                _ => None,
            });
            if let Some(s) = seconds {
                best_local += Duration::seconds(i64::from(s));
            }
        }
    }
    // A winner stated in UTC, and the page's wall clock: a time without an
    // offset that is the same instant hours away (the same minutes and
    // seconds, not a round quarter hour) gives the page's offset, at which
    // the publish time is stated (`2023-11-09T01:49:09Z` in the meta, `<time
    // datetime="2023-11-08 17:49:09">` on the page: 17:49:09 -08:00, the
    // 8th, the day the page shows).
    if let Stated::Zoned(z) = best.stated {
        if best.has_time && z.offset().local_minus_utc() == 0 {
            let utc = z.naive_utc();
            let wall = cands.iter().find_map(|c| match c.stated {
                Stated::Local(n) if c.has_time => {
                    let secs = (n - utc).num_seconds();
                    let round = n.second() == 0 && n.minute() % 15 == 0;
                    (secs != 0 && secs.abs() <= 14 * 3600 && secs % 900 == 0 && !round)
                        .then_some(secs)
                }
                _ => None,
            });
            if let Some(o) = wall.and_then(|s| FixedOffset::east_opt(i32::try_from(s).ok()?)) {
                best_local = best_local.with_timezone(&o);
            }
        }
    }
    if !best.has_time {
        // A day without a time: 00:00 UTC of that day, so that the day in the
        // row key and in date filters is the day the page states.
        let midnight = Utc.from_utc_datetime(&best_local.date_naive().and_time(NaiveTime::MIN));
        best_local = midnight.fixed_offset();
    }
    Some(Published {
        utc: best_local.with_timezone(&Utc),
        local: best_local,
        has_time: best.has_time,
        from: best.from,
    })
}

/// Days stated without a year (`新京报讯（记者 X）11月25日`, a dateline)
/// take their year from the page's own dated candidates, not from the fetch
/// time: the year of the best-scored candidate that states one (a modified
/// time only when no other does), or the year
/// before when the day would come after it (a page re-read years later, or a
/// crawl of an old page, otherwise files it under the wrong year).
fn with_page_years(cands: &[Candidate], zone: Tz) -> Vec<Candidate> {
    // A modified time only when the page states no other: it comes at or
    // after the publish time, so its year (or the one before) still holds.
    let best = |modified: bool| {
        cands
            .iter()
            .filter(|c| !c.year_inferred && (c.from == PublishedFrom::Modified) == modified)
            .max_by_key(|c| c.score)
    };
    let reference = best(false)
        .or_else(|| best(true))
        .and_then(|c| c.stated.resolve(zone))
        .map(|l| l.naive_local());
    cands
        .iter()
        .map(|c| {
            let (Some(r), Stated::Local(n), true) = (reference, c.stated, c.year_inferred) else {
                return *c;
            };
            let moved = [r.year(), r.year() - 1].into_iter().find_map(|y| {
                let d = n.with_year(y)?;
                (d.date() <= r.date() + Duration::days(1)).then_some(d)
            });
            match moved {
                Some(d) => Candidate {
                    stated: Stated::Local(d),
                    ..*c
                },
                None => *c,
            }
        })
        .collect()
}

/// Parses the date formats found in news pages; zone-less times are UTC.
pub fn parse_date(input: &str) -> Option<DateTime<Utc>> {
    let (s, _) = parse_stated(input)?;
    s.resolve(chrono_tz::UTC).map(|d| d.with_timezone(&Utc))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fetched() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2024, 3, 10, 4, 0, 0)
            .single()
            .expect("valid")
    }

    fn first(text: &str) -> Option<String> {
        let d = text_dates(text).into_iter().next()?;
        let local = d
            .stated
            .resolve(chrono_tz::Asia::Shanghai)?
            .with_timezone(&chrono_tz::Asia::Shanghai);
        Some(
            local
                .format(if d.has_time {
                    "%Y-%m-%d %H:%M %:z"
                } else {
                    "%Y-%m-%d"
                })
                .to_string(),
        )
    }

    #[test]
    fn a_label_is_found_before_a_later_use_of_its_word() {
        let w = "时间：地铁运营时间";
        assert_eq!(label_end(w, "时间"), Some("时间".len()));
        assert_eq!(label_end("地铁运营时间", "时间"), None);
        assert_eq!(label_end("运营时间：", "时间"), Some("运营时间".len()));
    }

    #[test]
    fn dates_in_chinese_numerals() {
        assert_eq!(han_number("二〇二四"), Some(2024));
        assert_eq!(han_number("十"), Some(10));
        assert_eq!(han_number("十一"), Some(11));
        assert_eq!(han_number("二十"), Some(20));
        assert_eq!(han_number("三十一"), Some(31));
        assert_eq!(han_number("十十"), None);
        let d = text_dates("中国软件行业协会 二〇二四年十一月二十日");
        assert_eq!(d.len(), 1);
        assert!(!d[0].has_time);
        assert_eq!(
            d[0].stated
                .resolve(chrono_tz::UTC)
                .map(|l| l.date_naive().to_string()),
            Some("2024-11-20".to_string())
        );
        assert!(text_dates("二〇二四年十三月一日").is_empty());
    }

    #[test]
    fn a_zone_abbreviation_beside_a_time_and_a_hyphenated_day() {
        let utc = |t: &str| {
            let d = text_dates(t);
            assert_eq!(d.len(), 1, "{t}");
            d[0].stated
                .resolve(chrono_tz::Asia::Shanghai)
                .map(|l| l.with_timezone(&chrono::Utc).to_rfc3339())
        };
        // RTHK's zone between the day and the time, RFA's after it.
        assert_eq!(
            utc("2024-11-25 HKT 20:31").as_deref(),
            Some("2024-11-25T12:31:00+00:00")
        );
        assert_eq!(
            utc("2024.12.02 12:31 EST").as_deref(),
            Some("2024-12-02T17:31:00+00:00")
        );
        // No abbreviation: the page's zone.
        assert_eq!(
            utc("2024-11-25 20:31").as_deref(),
            Some("2024-11-25T12:31:00+00:00")
        );
        // CST names more than one zone: the page's zone stands.
        assert_eq!(
            utc("2024-11-25 20:31 CST").as_deref(),
            Some("2024-11-25T12:31:00+00:00")
        );
        // People's Daily English: a 24-hour time, a comma, the date.
        assert_eq!(
            utc("16:45, November 25, 2024").as_deref(),
            Some("2024-11-25T08:45:00+00:00")
        );
        // CGTN's time before a hyphenated day.
        assert_eq!(
            utc("Updated 16:45, 17-Dec-2024").as_deref(),
            Some("2024-12-17T08:45:00+00:00")
        );
        let d = text_dates("Published 17-Dec-2024");
        assert!(d.len() == 1 && !d[0].has_time);
        assert_eq!(
            d[0].stated
                .resolve(chrono_tz::UTC)
                .map(|l| l.date_naive().to_string())
                .as_deref(),
            Some("2024-12-17")
        );
    }

    #[test]
    fn a_reposts_original_date_is_not_its_publish_date() {
        let line = "本文转自经济日报，原文发布于2024年11月10日。";
        let at = first_date_start(line).expect("a date");
        assert_eq!(label_before(line, at), Label::Other);
        let own = "发布于2024年11月12日";
        assert_eq!(
            label_before(own, first_date_start(own).unwrap()),
            Label::Publish
        );
    }

    #[test]
    fn text_date_forms() {
        assert_eq!(
            first("2023-11-17 20:52:15").as_deref(),
            Some("2023-11-17 20:52 +08:00")
        );
        assert_eq!(
            first("2023年11月17日 20:52").as_deref(),
            Some("2023-11-17 20:52 +08:00")
        );
        assert_eq!(
            first("2023年1月7日08:05 来源：人民网").as_deref(),
            Some("2023-01-07 08:05 +08:00")
        );
        // A time before a day-first date.
        assert_eq!(
            first("Published: 12:30pm, 24 Oct 2024").as_deref(),
            Some("2024-10-24 12:30 +08:00")
        );
        assert_eq!(
            first("16:30, Thu 24 October 2024").as_deref(),
            Some("2024-10-24 16:30 +08:00")
        );
        // A weekday between the day and the time.
        assert_eq!(
            first("2024年11月25日(一) 17:42").as_deref(),
            Some("2024-11-25 17:42 +08:00")
        );
        assert_eq!(
            first("2024年11月26日 星期二 08:55").as_deref(),
            Some("2024-11-26 08:55 +08:00")
        );
        assert_eq!(
            first("2023-1-7 8:05:09").as_deref(),
            Some("2023-01-07 08:05 +08:00")
        );
        assert_eq!(first("2019/9/7").as_deref(), Some("2019-09-07"));
        assert_eq!(
            first("2019.09.07 下午3:05").as_deref(),
            Some("2019-09-07 15:05 +08:00")
        );
        assert_eq!(
            first("2013-11-27T08:36:32Z").as_deref(),
            Some("2013-11-27 16:36 +08:00")
        );
        assert_eq!(
            first("Updated 10:20 AM ET, Wed November 27, 2013").as_deref(),
            Some("2013-11-27 23:20 +08:00")
        );
        assert_eq!(
            first("Published December 27, 2014 at 12:06 PM").as_deref(),
            Some("2014-12-27 12:06 +08:00")
        );
        assert_eq!(first("17 November 2023").as_deref(), Some("2023-11-17"));
        assert_eq!(
            first("ID 120231117093000"),
            None,
            "digits of a longer number"
        );
        assert_eq!(first("0000-00-00 00:00"), None);
        assert_eq!(first("2023-13-45"), None);
    }

    /// Held-out pages (go-htmldate's German and French news and blogs) write
    /// the day first: `15.2.2018, 19:51`, `24. Juli 2017 - 18:55`.
    #[test]
    fn day_first_numeric_dates() {
        assert_eq!(
            first("Donnerstag, 15.2.2018, 19:51").as_deref(),
            Some("2018-02-15 19:51 +08:00")
        );
        assert_eq!(
            first("Datum: 22.12.2012, Rubrik: USA").as_deref(),
            Some("2012-12-22")
        );
        assert_eq!(
            first("04.02.2022 | 13:10 Uhr | Uta Helkenberg").as_deref(),
            Some("2022-02-04 13:10 +08:00")
        );
        assert_eq!(first("26/10/2018").as_deref(), Some("2018-10-26"));
        assert_eq!(
            first("10/26/2018").as_deref(),
            Some("2018-10-26"),
            "US order"
        );
        assert_eq!(first("08/08/2017").as_deref(), Some("2017-08-08"));
        assert_eq!(
            first("21-11-2023 10:29").as_deref(),
            Some("2023-11-21 10:29 +08:00")
        );
        assert_eq!(first("02/10/2020"), None, "day and month could be swapped");
        assert_eq!(first("12.10/2020"), None, "two separators");
        assert_eq!(first("v1.2.3.2020"), None, "a version");
        assert_eq!(first("31.02.2020"), None);
        assert_eq!(
            first("已本地化的日期字符串 \"11/22/1999\" 或 \"22.11.1999\" 无法用于自动转换"),
            None,
            "CJK text writes dates year first"
        );
    }

    /// Month names of other languages: `24. April 2020`, `27 juin 2019`.
    #[test]
    fn day_first_month_name_dates() {
        assert_eq!(
            first("Gespeichert von rasos am 24. Juli 2017 - 18:55").as_deref(),
            Some("2017-07-24 18:55 +08:00")
        );
        assert_eq!(
            first("Samstag, 5. Oktober 2013").as_deref(),
            Some("2013-10-05")
        );
        assert_eq!(
            first("Georg Quaas, 21. Jan. 2015").as_deref(),
            Some("2015-01-21")
        );
        assert_eq!(first("18. März 2020").as_deref(), Some("2020-03-18"));
        assert_eq!(
            first("jeudi 27 juin 2019, par").as_deref(),
            Some("2019-06-27")
        );
        assert_eq!(
            first("le 1er mai 2020 à 10h30").as_deref(),
            Some("2020-05-01 10:30 +08:00")
        );
        assert_eq!(first("13 de junio de 2019").as_deref(), Some("2019-06-13"));
        assert_eq!(
            first("9 oktober 2020 11:12").as_deref(),
            Some("2020-10-09 11:12 +08:00")
        );
        assert_eq!(
            first("2 novembre 2023 alle 10:20").as_deref(),
            Some("2023-11-02 10:20 +08:00")
        );
        assert_eq!(first("24. April 2020").as_deref(), Some("2020-04-24"));
        assert_eq!(first("Teil 12 Mairie 2020"), None, "not a month name");
    }

    /// `GMT+8` after an English date's time (Reuters), and the dates of the
    /// Republic of China's calendar after its era or a date label.
    #[test]
    fn an_offset_after_gmt_and_the_republic_of_chinas_years() {
        assert_eq!(
            first("November 25, 2024 3:05 PM GMT+8").as_deref(),
            Some("2024-11-25 15:05 +08:00")
        );
        assert_eq!(
            first("Nov 25, 2024 3:05 PM GMT-5").as_deref(),
            Some("2024-11-26 04:05 +08:00")
        );
        // A bare GMT is UTC still.
        assert_eq!(
            first("November 25, 2024 3:05 PM GMT").as_deref(),
            Some("2024-11-25 23:05 +08:00")
        );
        assert_eq!(first("發布日期：113-11-25").as_deref(), Some("2024-11-25"));
        assert_eq!(
            first("中華民國113年12月1日 星期日").as_deref(),
            Some("2024-12-01")
        );
        assert_eq!(
            first("時間：113/11/25 15:05").as_deref(),
            Some("2024-11-25 15:05 +08:00")
        );
        // Without the era or a label, three digits are no year.
        assert_eq!(first("编号 113-11-25"), None);
        assert_eq!(first("日期：1130-11-25"), None);
        // Its label still tells an update from the publish day.
        let line = "發布日期：113-11-25 更新日期：113-11-27";
        assert_eq!(
            label_before(line, line.rfind("113").unwrap_or(0)),
            Label::Other
        );
        // Another article's date over a blog post.
        let line = "最新推荐文章于 2024-11-20 10:00:00 发布";
        assert_eq!(
            label_before(line, line.find("2024").unwrap_or(0)),
            Label::Other
        );
    }

    /// Korean bylines (`입력 2024.11.25. 오후 3:05`, `수정 …`) and a
    /// Japanese portal's `11/25(月) 15:05`.
    #[test]
    fn korean_day_parts_and_a_weekday_in_brackets() {
        assert_eq!(
            first("입력 2024.11.25. 오후 3:05").as_deref(),
            Some("2024-11-25 15:05 +08:00")
        );
        assert_eq!(
            first("2024.11.25. 오전 9:40").as_deref(),
            Some("2024-11-25 09:40 +08:00")
        );
        let line = "입력 2024.11.25. 오후 3:05 수정 2024.11.25. 오후 5:20";
        assert_eq!(
            label_before(line, line.find("2024").unwrap_or(0)),
            Label::Publish
        );
        assert_eq!(
            label_before(line, line.rfind("2024").unwrap_or(0)),
            Label::Other
        );
        let fetched = Utc.with_ymd_and_hms(2024, 11, 26, 3, 0, 0).unwrap();
        let d = contextual_dates("11/25(月) 15:05配信", fetched, chrono_tz::Asia::Tokyo, None);
        assert_eq!(d.len(), 1);
        assert_eq!(
            d[0].stated
                .resolve(chrono_tz::Asia::Tokyo)
                .map(|l| l.to_rfc3339())
                .as_deref(),
            Some("2024-11-25T15:05:00+09:00")
        );
    }

    /// A time before a year-first date, `at` between a date and its time, a
    /// Japanese weekday in brackets.
    #[test]
    fn a_time_first_an_at_and_a_japanese_weekday() {
        assert_eq!(
            first("15:05 2024/11/25").as_deref(),
            Some("2024-11-25 15:05 +08:00")
        );
        assert_eq!(
            first("記者 陳怡君／台北報導15:05 2024/11/25").as_deref(),
            Some("2024-11-25 15:05 +08:00")
        );
        // A longer number before the date: the day only.
        assert_eq!(first("115:05 2024/11/25").as_deref(), Some("2024-11-25"));
        assert_eq!(
            first("Posted on 2024-11-25 at 15:05").as_deref(),
            Some("2024-11-25 15:05 +08:00")
        );
        assert_eq!(
            first("2024年11月25日(月) 15時05分").as_deref(),
            Some("2024-11-25 15:05 +08:00")
        );
        assert_eq!(
            page_zone(None, Some("www.zaobao.com.sg"), Some("zh"), &[]),
            chrono_tz::Asia::Singapore
        );
        assert_eq!(
            page_zone(None, Some("www.sinchew.com.my"), None, &[]),
            chrono_tz::Asia::Kuala_Lumpur
        );
    }

    /// A time of day set apart from its date by a weekday, a word or
    /// separators, after or before it; not one that another date holds,
    /// nor one past a word that is no weekday.
    #[test]
    fn a_time_set_apart_from_its_date() {
        for (line, want) in [
            ("2024-11-25 (Mon) | 15:05", "2024-11-25 15:05 +08:00"),
            ("25.11.2024 - Montag - 15:05 Uhr", "2024-11-25 15:05 +08:00"),
            ("November 25, 2024 | 3:05 pm", "2024-11-25 15:05 +08:00"),
            ("2024/11/25 星期一 下午3:05", "2024-11-25 15:05 +08:00"),
            ("2024-11-25 · 07:05 (GMT+0)", "2024-11-25 15:05 +08:00"),
            ("15:05 · 2024/11/25", "2024-11-25 15:05 +08:00"),
            ("Updated 3:05 PM, 2024-11-25", "2024-11-25 15:05 +08:00"),
            ("2024-11-25 阅读 12:30", "2024-11-25"),
            ("2024-11-25 | 12:305", "2024-11-25"),
            ("2024-11-25 | 25:30", "2024-11-25"),
            // An offset after a date and time a form took without it.
            (
                "Thứ hai, 25/11/2024, 14:05 (GMT+7)",
                "2024-11-25 15:05 +08:00",
            ),
            ("25.11.2024 08:05 CET", "2024-11-25 15:05 +08:00"),
            ("25/11/2024 15:05 -12345", "2024-11-25 15:05 +08:00"),
        ] {
            assert_eq!(first(line).as_deref(), Some(want), "{line}");
        }
        // The time after the first date is its own, not the next one's.
        let d = text_dates("2024-11-24 10:30 2024-11-25");
        assert_eq!((d.len(), d[0].has_time, d[1].has_time), (2, true, false));
        let d = text_dates("2024-11-24 | 2024-11-25 10:30");
        assert_eq!((d[0].has_time, d[1].has_time), (false, true));
    }

    /// Full-width digits, and a short date after a bare `时间：`.
    #[test]
    fn full_width_digits_and_a_short_date_after_time() {
        let line = "发布时间：２０２４年１１月２５日　１５：０５　　信息来源：县水利局";
        assert_eq!(first(line).as_deref(), Some("2024-11-25 15:05 +08:00"));
        let d = text_dates(line);
        assert_eq!(label_before(line, d[0].start), Label::Publish);
        let fetched = Utc.with_ymd_and_hms(2024, 11, 28, 2, 0, 0).unwrap();
        let sh = chrono_tz::Asia::Shanghai;
        let d = contextual_dates("作者：刘洋　　时间：11-25 15:05", fetched, sh, None);
        assert_eq!(
            d.first()
                .and_then(|d| d.stated.resolve(sh))
                .map(|l| l.to_rfc3339())
                .as_deref(),
            Some("2024-11-25T15:05:00+08:00")
        );
        let d = contextual_dates("时间：１１－２５", fetched, sh, None);
        assert!(d.is_empty(), "full-width hyphen is no separator");
    }

    /// A relative phrase whose element carries the time in its `title`.
    #[test]
    fn a_relative_winner_takes_the_time_its_element_titles() {
        assert!(is_relative("3\u{a0}天前"));
        assert!(is_relative("前天 09:10"));
        assert!(!is_relative("2024-11-25 15:05"));
        assert!(!is_relative("发表于 3 天前，共 12 条回复，最后回复于昨天"));
        let ctx = TimeContext {
            fetched: Utc.with_ymd_and_hms(2024, 11, 28, 6, 0, 0).unwrap(),
            zone: None,
            hint: None,
        };
        let sh = chrono_tz::Asia::Shanghai;
        let mut phrase = cand("2024-11-25 14:00", PublishedFrom::Text, 95, true);
        phrase.relative = true;
        phrase.has_time = false;
        let titled = cand(
            "2024-11-25 15:05:06",
            PublishedFrom::Text,
            score::TITLED,
            false,
        );
        let other = cand(
            "2024-11-22 10:00:00",
            PublishedFrom::Text,
            score::TITLED,
            false,
        );
        let p = decide(&[phrase, other, titled], &ctx, sh).expect("a time");
        assert_eq!(p.local.to_rfc3339(), "2024-11-25T15:05:06+08:00");
        // Without it, the phrase's day.
        let p = decide(&[phrase, other], &ctx, sh).expect("a time");
        assert!(!p.has_time);
    }

    #[test]
    fn relative_and_yearless_dates_count_from_the_fetch_time() {
        let zone = chrono_tz::Asia::Shanghai;
        let one = |t: &str, year| {
            let d = contextual_dates(t, fetched(), zone, year)
                .into_iter()
                .next()?;
            Some(
                d.stated
                    .resolve(zone)?
                    .with_timezone(&zone)
                    .format("%Y-%m-%d %H:%M")
                    .to_string(),
            )
        };
        // Fetched 2024-03-10 12:00 in Shanghai.
        assert_eq!(one("3小时前", None).as_deref(), Some("2024-03-10 09:00"));
        assert_eq!(
            one("25 minutes ago", None).as_deref(),
            Some("2024-03-10 11:35")
        );
        assert_eq!(one("昨天 10:20", None).as_deref(), Some("2024-03-09 10:20"));
        assert_eq!(
            one("3月8日 07:15", None).as_deref(),
            Some("2024-03-08 07:15")
        );
        assert_eq!(
            one("12月31日 07:15", None).as_deref(),
            Some("2023-12-31 07:15"),
            "a later month is last year"
        );
        assert_eq!(
            one("12月31日", Some(2019)).as_deref(),
            Some("2019-12-31 00:00")
        );
    }

    #[test]
    fn two_digit_years_beside_the_title_take_the_century_of_the_fetch_time() {
        let zone = chrono_tz::Europe::Berlin;
        let one = |t: &str| {
            let d = contextual_dates(t, fetched(), zone, None)
                .into_iter()
                .next()?;
            Some(
                d.stated
                    .resolve(zone)?
                    .with_timezone(&zone)
                    .format("%Y-%m-%d %H:%M")
                    .to_string(),
            )
        };
        // Fetched in 2024.
        assert_eq!(
            one("Klaus-Peter Schöppner, 8.5.12").as_deref(),
            Some("2012-05-08 00:00")
        );
        assert_eq!(one("02.12.19").as_deref(), Some("2019-12-02 00:00"));
        assert_eq!(
            one("29.12.10, 13:36 Uhr").as_deref(),
            Some("2010-12-29 13:36")
        );
        assert_eq!(one("1.3.24").as_deref(), Some("2024-03-01 00:00"));
        assert_eq!(
            one("1.3.25").as_deref(),
            Some("1925-03-01 00:00"),
            "later than the fetch year"
        );
        assert_eq!(one("Version 1.2.10.4"), None, "a version");
        assert_eq!(one("v1.2.10"), None);
        assert_eq!(one("release 10.2.10b"), None);
        assert_eq!(one("32.1.12"), None, "no such day");
        assert_eq!(one("13.13.12"), None, "no such month");
        assert_eq!(one("发布于 8.5.12"), None, "not in CJK text");
    }

    #[test]
    fn labels_before_a_date() {
        assert_eq!(
            label_before("发布时间：2023-11-17", "发布时间：".len()),
            Label::Publish
        );
        assert_eq!(
            label_before("更新时间：2023-11-17", "更新时间：".len()),
            Label::Other
        );
        let line = "发布时间：2023-11-17 10:00 更新时间：2023-11-18";
        let second = line.rfind("2023").unwrap_or(0);
        assert_eq!(label_before(line, second), Label::Other);
        assert_eq!(label_before("Updated: Nov 18, 2023", 9), Label::Other);
        // A related item's headline run together with its date: a word that
        // ends like a short label is no label; with a colon it is one.
        let at = |line: &str| label_before(line, line.find("20").unwrap_or(0));
        assert_eq!(at("北京地铁延长运营时间2024-12-10 18:02"), Label::None);
        assert_eq!(at("城市更新项目启动 2024-05-01"), Label::None);
        assert_eq!(at("时间：2024-12-10 18:02"), Label::Publish);
        assert_eq!(at("信息来源：市发改委 2024-12-10"), Label::Publish);
        assert_eq!(at("本文发布时间 2024-12-10"), Label::Publish);
        assert_eq!(at("最后更新 2024-12-10"), Label::Other);
        // A byline that ends at the date, longer than the label window.
        let at = |line: &str| label_before(line, line.find("2020").unwrap_or(0));
        assert_eq!(
            at("Submitted by Maria Antonia Rossi on Tue, 2020-01-07"),
            Label::Publish
        );
        assert_eq!(at("Geschrieben von Bo Berg am 2020-01-07"), Label::Publish);
        // A caption's agent is not a byline; nor is a sentence's `by`.
        assert_eq!(
            at("interviewed by a television crew on 2020-09-28 in Manchester"),
            Label::None
        );
        assert_eq!(at("shares fell by 3% on 2020-09-28"), Label::None);
        assert_eq!(
            label_before("严玉洁 2023-11-17", "严玉洁 ".len()),
            Label::None
        );
        // German, French, Italian, Dutch labels.
        assert_eq!(
            label_before("Erschienen am: 01.11.2023", 15),
            Label::Publish
        );
        assert_eq!(
            label_before("veröffentlicht 28.01.2022", 16),
            Label::Publish
        );
        let line = "Letzte Änderung: 31.10.2023 - 14:49:39";
        assert_eq!(
            label_before(line, line.find("31").unwrap_or(0)),
            Label::Other
        );
        assert_eq!(label_before("Aktualisiert: 30.12.2016", 14), Label::Other);
        assert_eq!(label_before("mis à jour le 3 mai 2020", 14), Label::Other);
    }

    /// The label in an element of its own before the date's.
    #[test]
    fn a_label_on_the_line_before() {
        let day = |lines: &[&str]| {
            labelled_candidates(lines)
                .first()
                .and_then(|c| c.stated.resolve(chrono_tz::UTC))
                .map(|d| d.date_naive().to_string())
        };
        assert_eq!(
            day(&["Mise en ligne", "23 mai 2019"]).as_deref(),
            Some("2019-05-23")
        );
        assert_eq!(
            day(&["Datum:", "12.01.2017"]).as_deref(),
            Some("2017-01-12")
        );
        assert_eq!(day(&["Updated", "12.01.2017"]), None);
        assert_eq!(day(&["Mise en ligne par Alice", "23 mai 2019"]), None);
        assert_eq!(day(&["Datum", "Seite 3, 12.01.2017"]), None);
    }

    #[test]
    fn zones_by_configuration_site_and_language() {
        let tz = |c, h, l| page_zone(c, h, l, &[]).name().to_string();
        assert_eq!(
            tz(None, Some("news.sina.com.cn"), Some("zh")),
            "Asia/Shanghai"
        );
        assert_eq!(tz(None, Some("www.bbc.com"), Some("zh")), "Asia/Shanghai");
        assert_eq!(tz(None, Some("www.cnn.com"), Some("en")), "UTC");
        // A country's own domain, in any language.
        assert_eq!(tz(None, Some("www.lemonde.fr"), Some("fr")), "Europe/Paris");
        assert_eq!(tz(None, Some("www.rfi.fr"), Some("zh")), "Europe/Paris");
        assert_eq!(tz(None, Some("www.tagesschau.de"), None), "Europe/Berlin");
        assert_eq!(tz(None, Some("www.bbc.co.uk"), Some("en")), "Europe/London");
        assert_eq!(tz(None, Some("example.io"), Some("en")), "UTC");
        // A locale's region where the host names no country.
        let at = |host, locales: &[&str]| page_zone(None, Some(host), Some("en"), locales);
        assert_eq!(
            at("www.straitstimes.com", &["en-SG"]),
            chrono_tz::Asia::Singapore
        );
        assert_eq!(
            at("www.scmp.com", &["", "en_HK"]),
            chrono_tz::Asia::Shanghai
        );
        assert_eq!(
            at("news.example.com", &["zh-Hant-TW"]),
            chrono_tz::Asia::Shanghai
        );
        assert_eq!(
            at("www.thetimes.com", &["en-GB"]),
            chrono_tz::Europe::London
        );
        assert_eq!(at("www.cnn.com", &["en-US", "en_US"]), chrono_tz::UTC);
        assert_eq!(at("www.cnn.com", &["en"]), chrono_tz::UTC);
        // The host's country first.
        assert_eq!(at("www.lemonde.fr", &["en-GB"]), chrono_tz::Europe::Paris);
        assert_eq!(tz(None, Some("example.tv"), Some("zh")), "Asia/Shanghai");
        assert!(COUNTRY_ZONES.windows(2).all(|w| w[0].0 < w[1].0), "sorted");
        assert!(LANGUAGE_ZONES.windows(2).all(|w| w[0].0 < w[1].0), "sorted");
        for (lang, name) in LANGUAGE_ZONES {
            assert_eq!(tz(None, Some("example.com"), Some(lang)), name, "{lang}");
        }
        assert_eq!(tz(None, Some("example.com"), Some("es")), "UTC");
        for (tld, name) in COUNTRY_ZONES {
            assert_eq!(country_zone(tld).map(|z| z.name()), Some(name), "{tld}");
        }
        assert_eq!(tz(None, Some("www.nikkei.com"), Some("ja")), "Asia/Tokyo");
        assert_eq!(
            tz(
                Some(chrono_tz::Europe::Berlin),
                Some("news.sina.com.cn"),
                Some("zh")
            ),
            "Europe/Berlin"
        );
    }

    #[test]
    fn a_days_url_takes_its_time_from_the_scripts_publish_variable() {
        let sh = chrono_tz::Asia::Shanghai;
        let ctx = TimeContext {
            fetched: fetched(),
            zone: None,
            hint: None,
        };
        let mut cands: Vec<Candidate> = url_candidate("/a/20240225/x.html").into_iter().collect();
        cands.extend(script_candidates(
            [r#"window.DATA = {"pubtime":"2024-02-25 15:05:12"};"#],
            sh,
        ));
        let p = decide(&cands, &ctx, sh).expect("a time");
        assert_eq!(p.local.to_rfc3339(), "2024-02-25T15:05:12+08:00");
        assert_eq!(p.from, PublishedFrom::Script);
        // Another day's variable leaves the URL's day alone.
        let mut cands: Vec<Candidate> = url_candidate("/a/20240225/x.html").into_iter().collect();
        cands.extend(script_candidates(
            [r#"{"pubtime":"2024-02-20 15:05:12"}"#],
            sh,
        ));
        let p = decide(&cands, &ctx, sh).expect("a time");
        assert_eq!(p.from, PublishedFrom::Url);
    }

    /// Script variables: the publish names and WeChat's `var ct` (seconds
    /// since the epoch, shown at the page's zone); a name assigned different
    /// times on one page (a list of items) names none; a bare `ct` or `time`
    /// is not read.
    #[test]
    fn script_variables_give_a_publish_time_when_the_page_agrees_with_itself() {
        let sh = chrono_tz::Asia::Shanghai;
        let shown = |scripts: &[&str]| -> Vec<String> {
            script_candidates(scripts.iter().copied(), sh)
                .iter()
                .map(|c| {
                    assert_eq!(c.from, PublishedFrom::Script);
                    let t = c.stated.resolve(sh).expect("resolves");
                    if c.has_time {
                        t.format("%Y-%m-%d %H:%M:%S").to_string()
                    } else {
                        t.format("%Y-%m-%d").to_string()
                    }
                })
                .collect()
        };
        assert_eq!(
            shown(&[
                r#"var nickname = "x"; var ct = "1581517074"; var svr_time = "1581604666" * 1;"#
            ]),
            ["2020-02-12 22:17:54"]
        );
        assert_eq!(
            shown(&["var BASE_DATA = { articleInfo: { publish_time: '2019-09-08 11:42:03' } };"]),
            ["2019-09-08 11:42:03"]
        );
        // The same time twice (a day and its time, seconds and milliseconds): one.
        assert_eq!(
            shown(&[r#"{"pubtime":"2019-09-08","pub_time":"2019-09-08 11:42"}"#]),
            ["2019-09-08 11:42:00"]
        );
        assert_eq!(
            shown(&[
                r#"window.__d = {"newsTime":"2019-09-09 18:13:22"};"#,
                r#"x={"newsTime":"1568024002000"}"#
            ]),
            ["2019-09-09 18:13:22"]
        );
        // Related items, each with its own time; not a publish name; not WeChat's `var ct`.
        assert!(
            shown(&[r#"[{"ptime":"2019-09-06 09:10:56"},{"ptime":"2019-09-07 14:34:58"}]"#])
                .is_empty()
        );
        assert!(shown(&[r#"var s_advert = { "time": "2019-12-29 22:31:02" };"#]).is_empty());
        assert!(shown(&[r#"{"ct": "1581517074"}"#]).is_empty());
        assert!(shown(&[r#"var publish_time = "0000-00-00";"#]).is_empty());
    }

    /// A relative phrase the page shows (`昨天 22:17`, rendered by its script) gives
    /// way to the time the script holds: counted back from a fetch time long
    /// after the render it would be days off.
    #[test]
    fn a_script_time_beats_a_relative_phrase() {
        let sh = chrono_tz::Asia::Shanghai;
        let ctx = TimeContext {
            fetched: fetched(),
            zone: None,
            hint: None,
        };
        let lines = ["三星 Galaxy S20 系列手机正式发布", "爱否科技 昨天 22:17"];
        let mut cands = near_title_candidates(&lines, 0, None, &ctx, sh, None);
        assert!(cands.iter().any(|c| c.relative), "{cands:?}");
        let relative_only = decide(&cands, &ctx, sh).expect("a time");
        assert_eq!(relative_only.local.date_naive().to_string(), "2024-03-09");
        cands.extend(script_candidates([r#"var ct = "1581517074";"#], sh));
        let p = decide(&cands, &ctx, sh).expect("a time");
        assert_eq!(p.from, PublishedFrom::Script);
        assert_eq!(p.local.to_rfc3339(), "2020-02-12T22:17:54+08:00");
    }

    fn cand(value: &str, from: PublishedFrom, score: i32, near_title: bool) -> Candidate {
        let (stated, has_time) = parse_stated(value).expect("parses");
        Candidate {
            year_inferred: false,
            relative: false,
            stated,
            has_time,
            from,
            score,
            near_title,
        }
    }

    /// A date inside running prose near the title is another event's; a
    /// dateline that opens a long line is the byline's.
    #[test]
    fn prose_dates_are_not_bylines() {
        let ctx = TimeContext {
            fetched: fetched(),
            zone: None,
            hint: None,
        };
        let prose = format!(
            "{} wurde das Zentrum am 18. Oktober 2021 am Erzberg eröffnet, {}",
            "Im Beisein zahlreicher Ehrengäste aus Wissenschaft, Politik und Wirtschaft",
            "und mit mehr als vier Kilometern an Tunneln ist es das größte seiner Art in Europa."
        );
        let days = |lines: &[&str]| -> Vec<String> {
            near_title_candidates(lines, 0, None, &ctx, chrono_tz::UTC, None)
                .iter()
                .chain(labelled_candidates(lines).iter())
                .filter_map(|c| c.stated.resolve(chrono_tz::UTC))
                .map(|d| d.date_naive().to_string())
                .collect()
        };
        assert!(days(&["Zentrum eröffnet", &prose]).is_empty());
        let dateline = format!("20.10.2021 - 10:24 {prose}");
        assert_eq!(days(&["Zentrum eröffnet", &dateline]), ["2021-10-20"]);
        let published = format!("Veröffentlicht: 20.10.2021 {prose}");
        assert_eq!(
            days(&["Zentrum eröffnet", &published]),
            ["2021-10-20", "2021-10-20"]
        );
    }

    /// mercurynews.com: the meta and JSON-LD state UTC, the page's `<time>`
    /// its Pacific wall clock.
    #[test]
    fn a_utc_time_is_stated_at_the_pages_wall_clock() {
        let ctx = TimeContext {
            fetched: fetched(),
            zone: None,
            hint: None,
        };
        let got = |c: &[Candidate]| {
            decide(c, &ctx, chrono_tz::UTC).map(|p| (p.local.to_rfc3339(), p.utc.to_rfc3339()))
        };
        let meta = cand("2023-11-09T01:49:09+00:00", PublishedFrom::Meta, 90, false);
        let wall = cand("2023-11-08 17:49:09", PublishedFrom::Time, 65, false);
        assert_eq!(
            got(&[meta, wall]),
            Some((
                "2023-11-08T17:49:09-08:00".to_string(),
                "2023-11-09T01:49:09+00:00".to_string()
            ))
        );
        // A round hour elsewhere on the page is no wall clock.
        let meta = cand("2023-11-09T02:00:00+00:00", PublishedFrom::Meta, 90, false);
        let other = cand("2023-11-08 18:00", PublishedFrom::Text, 40, false);
        assert_eq!(
            got(&[meta, other]).map(|(l, _)| l),
            Some("2023-11-09T02:00:00+00:00".to_string())
        );
    }

    #[test]
    fn a_day_without_its_year_takes_the_year_the_page_states() {
        // Read years after publication (a re-extraction, an old page): the
        // dateline's `11月25日` is the page's 2019, not the fetch year's.
        let ctx = TimeContext {
            fetched: Utc.with_ymd_and_hms(2026, 3, 2, 0, 0, 0).unwrap(),
            zone: None,
            hint: None,
        };
        let z = chrono_tz::Asia::Shanghai;
        let lines = [
            "多地项目连环爆雷",
            "2019-11-25 11:01:53 来源: 新京报",
            "发稿时间：11月25日",
        ];
        let mut cands = near_title_candidates(&lines, 0, None, &ctx, z, None);
        assert!(cands.iter().any(|c| c.year_inferred), "{cands:?}");
        cands.push(cand(
            "2019-11-25T11:01:53+08:00",
            PublishedFrom::Meta,
            90,
            false,
        ));
        let p = decide(&cands, &ctx, z).expect("a time");
        assert_eq!(p.local.to_rfc3339(), "2019-11-25T11:01:53+08:00");
        // A day after the page's own date is the year before's.
        let dec = near_title_candidates(&["标题", "发稿时间：12月30日"], 0, None, &ctx, z, None);
        let mut c = dec.clone();
        c.push(cand("2020-01-02 10:00", PublishedFrom::Text, 60, false));
        let p = decide(&c, &ctx, z).expect("a time");
        assert_eq!(p.local.format("%Y-%m-%d").to_string(), "2019-12-30");
        // Without a year anywhere on the page, the fetch time's (the last
        // 11月25日 before it).
        let alone = near_title_candidates(
            &lines[..1]
                .iter()
                .chain(&lines[2..])
                .copied()
                .collect::<Vec<_>>(),
            0,
            None,
            &ctx,
            z,
            None,
        );
        let p = decide(&alone, &ctx, z).expect("a time");
        assert_eq!(p.local.format("%Y-%m-%d").to_string(), "2025-11-25");
    }

    #[test]
    fn decision_rejects_future_and_ancient_and_refines_the_day() {
        let ctx = TimeContext {
            fetched: fetched(),
            zone: None,
            hint: None,
        };
        let z = chrono_tz::Asia::Shanghai;
        let got = |c: &[Candidate]| {
            decide(c, &ctx, z).map(|p| (p.local.format("%Y-%m-%d %H:%M").to_string(), p.from))
        };
        assert_eq!(
            got(&[cand("2099-01-01", PublishedFrom::Meta, 90, false)]),
            None
        );
        assert_eq!(
            got(&[cand("1990-05-01", PublishedFrom::Meta, 90, false)]),
            None
        );
        assert!(parse_stated("0000-00-00").is_none());
        assert_eq!(
            got(&[
                cand("2024-03-01", PublishedFrom::Meta, 90, false),
                cand("2024-03-01 15:13", PublishedFrom::Text, 80, true),
            ]),
            Some(("2024-03-01 15:13".into(), PublishedFrom::Text))
        );
        // An update time in a meta tag later than the visible byline loses.
        assert_eq!(
            got(&[
                cand("2024-03-05T10:00:00+08:00", PublishedFrom::Meta, 90, false),
                cand("2024-03-01 15:13", PublishedFrom::Text, 80, true),
            ]),
            Some(("2024-03-01 15:13".into(), PublishedFrom::Text))
        );
        // The same day: the zoned meta time stands.
        assert_eq!(
            got(&[
                cand("2024-03-01T15:13:00+08:00", PublishedFrom::Meta, 90, false),
                cand("2024-03-01 15:13", PublishedFrom::Text, 80, true),
            ]),
            Some(("2024-03-01 15:13".into(), PublishedFrom::Meta))
        );
    }

    #[test]
    fn elements_marked_as_the_publish_time() {
        let texts = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let at = |c: Option<Candidate>| {
            c.and_then(|c| c.stated.resolve(chrono_tz::UTC))
                .map(|d| d.with_timezone(&Utc).to_rfc3339())
        };
        assert_eq!(
            at(marked_element_candidate(&texts(&["1709864700000"]))).as_deref(),
            Some("2024-03-08T02:25:00+00:00")
        );
        assert_eq!(
            at(marked_element_candidate(&texts(&[
                "更新于 2024-03-09",
                "2024/6/19 5:50"
            ])))
            .as_deref(),
            Some("2024-06-19T05:50:00+00:00")
        );
        let list = texts(&["2024-01-01", "2024-01-02", "2024-01-03", "2024-01-04"]);
        assert!(marked_element_candidate(&list).is_none(), "a list of posts");
        assert!(marked_element_candidate(&texts(&["12345"])).is_none());
    }

    /// `<span class="date">` and kin: a weak source, none for a list.
    #[test]
    fn elements_with_a_date_class() {
        let texts = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let c = date_class_candidate(&texts(&["Blog entry by A. R. | 28 April, 2017"]));
        assert_eq!(
            c.and_then(|c| c.stated.resolve(chrono_tz::UTC))
                .map(|d| d.date_naive().to_string())
                .as_deref(),
            Some("2017-04-28")
        );
        assert!(c.is_some_and(|c| c.score < score::URL), "below the URL's");
        let same_day = texts(&["28.04.2017", "28.04.2017 10:00", "Freitag, 28. April 2017"]);
        assert!(date_class_candidate(&same_day).is_some());
        let list = texts(&["2024-01-01", "2024-01-02", "2024-01-03"]);
        assert!(date_class_candidate(&list).is_none(), "a list of posts");
        assert!(date_class_candidate(&texts(&["Updated 2024-01-01"])).is_none());
    }

    /// Baijiahao's `发布时间：18-03-08 23:16` and `发布时间：10-08 12:00`.
    #[test]
    fn short_dates_after_a_publish_label() {
        let lines = [
            "英国美女在殡仪馆工作太痛苦，转行当美人鱼",
            "加拿大必读",
            "发布时间：18-03-08 23:16",
        ];
        let ctx = TimeContext {
            fetched: fetched(),
            zone: None,
            hint: None,
        };
        let zone = chrono_tz::Asia::Shanghai;
        let got = |lines: &[&str]| {
            let c = near_title_candidates(lines, 0, None, &ctx, zone, None);
            decide(&c, &ctx, zone).map(|p| p.local.format("%Y-%m-%d %H:%M").to_string())
        };
        assert_eq!(got(&lines).as_deref(), Some("2018-03-08 23:16"));
        // No year: the fetch year (2024-03-10), else the year before.
        let lines = ["英国美女在殡仪馆工作太痛苦", "发布时间：02-08 12:00"];
        assert_eq!(got(&lines).as_deref(), Some("2024-02-08 12:00"));
        let lines = ["英国美女在殡仪馆工作太痛苦", "发布时间：10-08 12:00"];
        assert_eq!(got(&lines).as_deref(), Some("2023-10-08 12:00"));
        // Without the label: a score, a code, a phone number.
        let lines = ["英国美女在殡仪馆工作太痛苦", "比分 10-08 全场"];
        assert_eq!(got(&lines), None);
        // Unlabelled with a time of day, standing apart on a dateline.
        let lines = ["北方多地迎来降雪", "央视新闻 02-08 12:00 发布于北京"];
        assert_eq!(got(&lines).as_deref(), Some("2024-02-08 12:00"));
        let lines = ["北方多地迎来降雪", "编号A02-08 12:00"];
        assert_eq!(got(&lines), None, "not standing apart");
        let lines = ["英国美女在殡仪馆工作太痛苦", "发布时间：10-08-2023"];
        assert_eq!(
            got(&lines),
            None,
            "a day-first date is not read as year-first"
        );
    }

    #[test]
    fn traditional_chinese_labels() {
        assert_eq!(label_before("發佈時間：2019-03-18", 15), Label::Publish);
        assert_eq!(label_before("最後更新：2019-03-18", 15), Label::Other);
        // Japanese kanji are not folded (`更新日時` is an update either way).
        assert_eq!(label_before("配信日：2019-03-18", 12), Label::None);
        let d = text_dates("2019年3月18日 23時59分");
        assert!(d.first().is_some_and(|d| d.has_time), "時 as 时");
    }

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
