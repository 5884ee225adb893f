//! Time zones of statistics and the time buckets (day, ISO week, month, year)
//! laid out in a zone.

use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, Datelike, Duration, FixedOffset, NaiveDate, NaiveDateTime, TimeZone, Utc};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::{Error, Result};

/// Most buckets one statistics answer may lay out (guards `fill_empty` over
/// absurd ranges).
pub const MAX_BUCKETS: usize = 100_000;
/// How far past a non-existent local midnight (DST gap) a bucket start is searched.
const GAP_STEP_MINUTES: i64 = 15;
/// Steps of [`GAP_STEP_MINUTES`] tried across a DST gap.
const GAP_STEPS: i64 = 4 * 24;

/// The zone in which statistics buckets are laid out and labelled: UTC, a
/// fixed offset (`+08:00`, `-0530`) or an IANA name (`Asia/Shanghai`).
/// Parses from / displays as that text; serialises as a string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Zone {
    /// UTC (default; also `Z`, `utc`).
    #[default]
    Utc,
    /// A fixed offset from UTC.
    Fixed(FixedOffset),
    /// An IANA zone with its daylight-saving rules.
    Named(chrono_tz::Tz),
}

impl Zone {
    /// Parses `UTC`/`Z`, `+08:00`/`+0800`/`-05`, or an IANA name.
    pub fn parse(s: &str) -> Result<Zone> {
        let t = s.trim();
        if t.eq_ignore_ascii_case("utc") || t == "Z" || t.is_empty() {
            return Ok(Zone::Utc);
        }
        if t.starts_with('+') || t.starts_with('-') {
            return parse_offset(t).map(Zone::Fixed).ok_or_else(|| {
                Error::Invalid(format!(
                    "time zone {s:?}: expected an offset such as +08:00, -0530 or -05"
                ))
            });
        }
        t.parse::<chrono_tz::Tz>().map(Zone::Named).map_err(|_| {
            Error::Invalid(format!(
                "time zone {s:?}: not an IANA name (e.g. Asia/Shanghai) nor an offset (+08:00)"
            ))
        })
    }

    /// Local wall-clock time of an instant in this zone.
    pub fn local(&self, t: DateTime<Utc>) -> NaiveDateTime {
        match self {
            Zone::Utc => t.naive_utc(),
            Zone::Fixed(o) => t.with_timezone(o).naive_local(),
            Zone::Named(z) => t.with_timezone(z).naive_local(),
        }
    }

    /// The instant at which local date `d` begins (local midnight; in a DST
    /// gap, the first existing local time after it; when ambiguous, the earlier).
    pub fn start_of_day(&self, d: NaiveDate) -> Result<DateTime<Utc>> {
        let midnight = d.and_hms_opt(0, 0, 0).ok_or_else(|| bad_date(d))?;
        for step in 0..GAP_STEPS {
            let naive = midnight + Duration::minutes(step * GAP_STEP_MINUTES);
            let found = match self {
                Zone::Utc => Some(naive.and_utc()),
                Zone::Fixed(o) => o
                    .from_local_datetime(&naive)
                    .earliest()
                    .map(|x| x.with_timezone(&Utc)),
                Zone::Named(z) => z
                    .from_local_datetime(&naive)
                    .earliest()
                    .map(|x| x.with_timezone(&Utc)),
            };
            if let Some(t) = found {
                return Ok(t);
            }
        }
        Err(bad_date(d))
    }
}

fn bad_date(d: NaiveDate) -> Error {
    Error::Invalid(format!("no local start of day for {d}"))
}

/// `+08:00`, `+0800`, `+08`, `-05:30`.
fn parse_offset(t: &str) -> Option<FixedOffset> {
    let (sign, rest) = t.split_at(1);
    let digits: String = rest.chars().filter(|c| *c != ':').collect();
    if !digits.bytes().all(|b| b.is_ascii_digit()) || !(digits.len() == 2 || digits.len() == 4) {
        return None;
    }
    let h: i32 = digits.get(..2)?.parse().ok()?;
    let m: i32 = digits
        .get(2..)
        .filter(|s| !s.is_empty())
        .map_or(Some(0), |s| s.parse().ok())?;
    if m >= 60 {
        return None;
    }
    let secs = (h * 3600 + m * 60) * if sign == "-" { -1 } else { 1 };
    FixedOffset::east_opt(secs)
}

impl FromStr for Zone {
    type Err = Error;
    fn from_str(s: &str) -> Result<Zone> {
        Zone::parse(s)
    }
}

impl fmt::Display for Zone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Zone::Utc => f.write_str("UTC"),
            Zone::Fixed(o) => write!(f, "{o}"),
            Zone::Named(z) => f.write_str(z.name()),
        }
    }
}

impl Serialize for Zone {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Zone {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Zone, D::Error> {
        let s = String::deserialize(d)?;
        Zone::parse(&s).map_err(serde::de::Error::custom)
    }
}

/// Time bucket of statistics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Interval {
    /// `2017-01-31`
    Day,
    /// ISO week, `2017-W05`
    Week,
    /// `2017-01`
    Month,
    /// `2017`
    Year,
}

impl Interval {
    /// The bucket label of a time.
    pub fn label(self, t: DateTime<Utc>) -> String {
        match self {
            Interval::Day => t.format("%Y-%m-%d").to_string(),
            Interval::Week => {
                let w = t.iso_week();
                format!("{:04}-W{:02}", w.year(), w.week())
            }
            Interval::Month => t.format("%Y-%m").to_string(),
            Interval::Year => t.format("%Y").to_string(),
        }
    }
}

impl Interval {
    /// The bucket label of an instant, read in `zone` (`2017-01-31`,
    /// `2017-W05` (ISO week), `2017-01`, `2017`).
    pub fn label_in(self, t: DateTime<Utc>, zone: &Zone) -> String {
        label_of_date(self, zone.local(t).date())
    }

    /// First local date of the bucket holding local date `d`.
    fn floor(self, d: NaiveDate) -> NaiveDate {
        match self {
            Interval::Day => d,
            Interval::Week => d - Duration::days(i64::from(d.weekday().num_days_from_monday())),
            Interval::Month => d.with_day(1).unwrap_or(d),
            Interval::Year => NaiveDate::from_ymd_opt(d.year(), 1, 1).unwrap_or(d),
        }
    }

    /// First local date of the bucket after the one starting at `d`.
    fn next(self, d: NaiveDate) -> Option<NaiveDate> {
        match self {
            Interval::Day => d.succ_opt(),
            Interval::Week => d.checked_add_signed(Duration::days(7)),
            Interval::Month => {
                let (y, m) = if d.month() == 12 {
                    (d.year() + 1, 1)
                } else {
                    (d.year(), d.month() + 1)
                };
                NaiveDate::from_ymd_opt(y, m, 1)
            }
            Interval::Year => NaiveDate::from_ymd_opt(d.year() + 1, 1, 1),
        }
    }
}

fn label_of_date(interval: Interval, d: NaiveDate) -> String {
    match interval {
        Interval::Day => d.format("%Y-%m-%d").to_string(),
        Interval::Week => {
            let w = d.iso_week();
            format!("{:04}-W{:02}", w.year(), w.week())
        }
        Interval::Month => d.format("%Y-%m").to_string(),
        Interval::Year => d.format("%Y").to_string(),
    }
}

/// The buckets covering `[from, to)` in a zone: their start instants (UTC,
/// increasing) and labels. Bucket `i` holds the instants in
/// `[starts[i], starts[i + 1])`; the first bucket starts at or before `from`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BucketPlan {
    /// Start instant of each bucket.
    pub starts: Vec<DateTime<Utc>>,
    /// Label of each bucket.
    pub labels: Vec<String>,
}

impl BucketPlan {
    /// Lays out the buckets of `interval` in `zone` covering `[from, to)`
    /// (empty when `from >= to`); at most [`MAX_BUCKETS`].
    pub fn new(
        interval: Interval,
        zone: &Zone,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
    ) -> Result<BucketPlan> {
        let mut plan = BucketPlan {
            starts: Vec::new(),
            labels: Vec::new(),
        };
        if from >= to {
            return Ok(plan);
        }
        let mut d = interval.floor(zone.local(from).date());
        loop {
            let start = zone.start_of_day(d)?;
            if start >= to {
                break;
            }
            if plan.starts.len() >= MAX_BUCKETS {
                return Err(Error::TooManyBuckets { limit: MAX_BUCKETS });
            }
            plan.starts.push(start);
            plan.labels.push(label_of_date(interval, d));
            d = interval
                .next(d)
                .ok_or_else(|| Error::Invalid(format!("date {d} out of range")))?;
        }
        Ok(plan)
    }

    /// Index of the bucket holding `t` (`None` before the first bucket).
    pub fn bucket_of(&self, t: DateTime<Utc>) -> Option<usize> {
        self.starts.partition_point(|s| *s <= t).checked_sub(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> DateTime<Utc> {
        s.parse().unwrap_or_default()
    }

    #[test]
    fn zones_parse_and_display() {
        assert_eq!(Zone::parse("utc").ok(), Some(Zone::Utc));
        assert_eq!(
            Zone::parse("+08:00").ok().map(|z| z.to_string()),
            Some("+08:00".to_owned())
        );
        assert_eq!(
            Zone::parse("-0530").ok().map(|z| z.to_string()),
            Some("-05:30".to_owned())
        );
        assert_eq!(
            Zone::parse("Asia/Shanghai").ok().map(|z| z.to_string()),
            Some("Asia/Shanghai".to_owned())
        );
        assert!(Zone::parse("Mars/Olympus").is_err());
        assert!(Zone::parse("+8:0").is_err());
        assert!(Zone::parse("+25:00").is_err());
    }

    #[test]
    fn labels_follow_the_zone() {
        let x = t("2017-01-31T20:00:00Z");
        let sh = Zone::parse("Asia/Shanghai").unwrap_or_default();
        assert_eq!(Interval::Day.label_in(x, &Zone::Utc), "2017-01-31");
        assert_eq!(Interval::Day.label_in(x, &sh), "2017-02-01");
        assert_eq!(Interval::Month.label_in(x, &sh), "2017-02");
        // Sunday 1 Jan 2017 in New York is Monday 2 Jan in Shanghai: ISO weeks differ.
        let ny = t("2017-01-02T03:00:00Z");
        let nyz = Zone::parse("America/New_York").unwrap_or_default();
        assert_eq!(Interval::Week.label_in(ny, &nyz), "2016-W52");
        assert_eq!(Interval::Week.label_in(ny, &sh), "2017-W01");
    }

    #[test]
    fn plan_covers_dst_changes_and_fills_every_day() {
        let berlin = Zone::parse("Europe/Berlin").unwrap_or_default();
        // March 2017: DST began on 26 March (day of 23 hours).
        let plan = BucketPlan::new(
            Interval::Day,
            &berlin,
            t("2017-02-28T23:00:00Z"),
            t("2017-03-31T22:00:00Z"),
        )
        .expect("plan");
        assert_eq!(plan.labels.len(), 31);
        assert_eq!(plan.labels[0], "2017-03-01");
        assert_eq!(plan.labels[30], "2017-03-31");
        assert_eq!(plan.starts[25], t("2017-03-25T23:00:00Z"));
        assert_eq!(plan.starts[26], t("2017-03-26T22:00:00Z"));
        assert_eq!(plan.bucket_of(t("2017-03-26T21:59:59Z")), Some(25));
        assert_eq!(plan.bucket_of(t("2017-02-28T22:59:59Z")), None);
        let weeks = BucketPlan::new(
            Interval::Week,
            &Zone::Utc,
            t("2017-01-01T00:00:00Z"),
            t("2017-02-01T00:00:00Z"),
        )
        .expect("weeks");
        assert_eq!(
            weeks.labels,
            ["2016-W52", "2017-W01", "2017-W02", "2017-W03", "2017-W04", "2017-W05"]
        );
        assert_eq!(weeks.starts[0], t("2016-12-26T00:00:00Z"));
    }

    #[test]
    fn absurd_plans_are_refused() {
        let r = BucketPlan::new(
            Interval::Day,
            &Zone::Utc,
            t("1000-01-01T00:00:00Z"),
            t("9000-01-01T00:00:00Z"),
        );
        assert!(
            matches!(r, Err(Error::TooManyBuckets { limit: MAX_BUCKETS })),
            "{r:?}"
        );
        // The same range by year is small.
        let r = BucketPlan::new(
            Interval::Year,
            &Zone::Utc,
            t("1000-01-01T00:00:00Z"),
            t("9000-01-01T00:00:00Z"),
        );
        assert_eq!(r.map(|p| p.starts.len()).ok(), Some(8000));
    }
}
