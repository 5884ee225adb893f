//! The shapes a time takes on its way to the decision: as a page states it
//! ([`Stated`]), as a date found in text ([`TextDate`]), as a candidate of a
//! source ([`Candidate`]), and as decided ([`Published`]).

use chrono::{
    DateTime, Duration, FixedOffset, LocalResult, NaiveDate, NaiveDateTime, NaiveTime, Offset,
    TimeZone, Utc,
};
use chrono_tz::Tz;
use shapes::page::PublishedFrom;

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

/// A date found in text, with its position.
#[derive(Debug, Clone, Copy)]
pub(super) struct TextDate {
    pub(super) start: usize,
    /// Where its match ends (after its time of day, when it has one).
    pub(super) end: usize,
    pub(super) stated: Stated,
    pub(super) has_time: bool,
    /// A day stated without its year (`11月25日`), the year taken from the
    /// URL or the fetch time.
    pub(super) year_inferred: bool,
    /// Counted back from the fetch time (`昨天`, `3小时前`).
    pub(super) relative: bool,
}

impl TextDate {
    /// This date as a candidate from `from`, scored `score`.
    pub(super) fn candidate(&self, from: PublishedFrom, score: i32, near_title: bool) -> Candidate {
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

pub(super) fn stated(
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
    /// Stated without its year (see [`super::decide::decide`]).
    pub year_inferred: bool,
    /// Counted back from the fetch time (`昨天 10:20`, `3小时前`).
    pub relative: bool,
}
