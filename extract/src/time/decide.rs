//! The decision over all candidates: the valid ones (not in the future, not
//! before [`EARLIEST_YEAR`]) by score, then the refinements of the winner (a
//! relative phrase's script time, a byline over a disagreeing structured
//! time, the time of day of a day-precise winner, the page's offset and
//! seconds).

use chrono::{
    DateTime, Datelike, Duration, FixedOffset, NaiveDateTime, NaiveTime, TimeZone, Timelike, Utc,
};
use chrono_tz::Tz;
use shapes::page::{PublishedFrom, TimeContext};

use super::score;
use super::stated::{Candidate, Published, Stated};

/// Times before this year are rejected (the web's news began later).
pub const EARLIEST_YEAR: i32 = 1995;

/// A candidate later than the fetch time by more than this is rejected.
const FUTURE_SLACK_MINUTES: i64 = 10;

/// A candidate and its time at the page's zone (or its own offset).
type Valid = (Candidate, DateTime<FixedOffset>);

/// The decision over all candidates.
pub(crate) fn decide(cands: &[Candidate], ctx: &TimeContext, zone: Tz) -> Option<Published> {
    let earliest = Utc
        .with_ymd_and_hms(EARLIEST_YEAR, 1, 1, 0, 0, 0)
        .single()?;
    let latest = ctx.fetched + Duration::minutes(FUTURE_SLACK_MINUTES);
    let fetched_day = ctx.fetched.with_timezone(&zone).date_naive();
    let cands = with_page_years(cands, zone);
    let mut valid: Vec<Valid> = cands
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
    let best = *valid.first()?;
    let best = relative_script_time(&valid, best);
    let best = byline_over_structured(&valid, best);
    let best = time_of_the_day(&valid, best);
    let best = offset_of_the_same_minute(&cands, best);
    let (best, mut best_local) = at_the_wall_clock(&cands, best);
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

/// A relative phrase (`昨天`) is what the page's script renders from the
/// time it holds (WeChat's `var ct`): that time, to the second, not the
/// phrase counted back from a fetch time that need not be the render time.
fn relative_script_time(valid: &[Valid], (mut best, mut best_local): Valid) -> Valid {
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
    (best, best_local)
}

/// A structured time disagreeing with the byline next to the title: the
/// byline is the visible publish time unless it is the later of the two
/// (then the structured one is the first publication, the byline an update).
/// Only a byline with a time of day counts (a bare date near the title is
/// as often a photo caption), and not against two structured sources that
/// agree with each other.
fn byline_over_structured(valid: &[Valid], (mut best, mut best_local): Valid) -> Valid {
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
    (best, best_local)
}

/// A day-precise winner takes the time of day from a candidate of that day.
fn time_of_the_day(valid: &[Valid], (mut best, mut best_local): Valid) -> Valid {
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
    (best, best_local)
}

/// A winner stated without an offset, and a time of the same wall-clock
/// minute stated with one (`Published: 10 Dec. 2024, 17:42` over
/// `article:published_time` `2024-12-10T17:42:00+09:00`): the page's
/// clock runs at that offset, whatever the default zone. Not a zero
/// offset: CMSs stamp local times `Z` as often as they mean UTC.
fn offset_of_the_same_minute(cands: &[Candidate], (best, mut best_local): Valid) -> Valid {
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
    (best, best_local)
}

/// A winner stated in UTC, and the page's wall clock: a time without an
/// offset that is the same instant hours away (the same minutes and
/// seconds, not a round quarter hour) gives the page's offset, at which
/// the publish time is stated (`2023-11-09T01:49:09Z` in the meta, `<time
/// datetime="2023-11-08 17:49:09">` on the page: 17:49:09 -08:00, the
/// 8th, the day the page shows).
fn at_the_wall_clock(cands: &[Candidate], (best, mut best_local): Valid) -> Valid {
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
    (best, best_local)
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
