//! The publish-time candidates of each source a page offers: the lines around
//! the title, labelled dates anywhere, marked and classed elements, the
//! article's edges, the URL, machine-readable values and the page's scripts,
//! each scored by how surely it is this page's publish time.

use chrono::{DateTime, FixedOffset, NaiveDate, Utc};
use chrono_tz::Tz;
use shapes::page::{PublishedFrom, TimeContext};

use super::contextual::contextual_dates;
use super::fields::num;
use super::labels::{byline_position, label_before, line_label, update_label_before, Label};
use super::parse::parse_stated;
use super::patterns::{RE_SCRIPT_TIME, RE_URL_DATE};
use super::scan::text_dates;
use super::score;
use super::stated::{stated, Candidate, Stated, TextDate};

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
