//! Query engine and statistics.
//!
//! A [`Query`] picks the page tables of its sources whose year overlaps
//! `[from, to)` and, in each table, one key range per bucket (region). Buckets
//! are evaluated in parallel (rayon):
//! * without topic/media/keyword conditions, every topic's posting rows are
//!   the stream (see below);
//! * with conditions, each condition scans its posting rows
//!   `[salt][0x02][attr][value][0x00][month]` over `[from, to)`, whose cells
//!   yield suffixes (time + URL hash) in time order; "any of" lists are
//!   unions, conditions are intersected by merging the sorted streams; then
//!   the data rows are read and the comment conditions checked.
//!
//! With no topic/media/keyword condition the topic index rows (every page has
//! exactly one) are the stream: the distinct topics of a bucket are found by a
//! skip scan (one `limit 1` scan per value) and each is scanned over the time
//! range only. "Any keyword" lists are unions that count how many of the
//! keywords each page has (relevance).
//!
//! Every index row carries the page's revisit and near-duplicate flags and its
//! comment count ([`crate::index::index_row_value`]), so revisit, near-duplicate
//! and comment-range conditions, relevance and the comment sort are decided
//! from index keys alone; data rows are read only for the hits returned (and
//! for entries whose value lacks that information, see
//! [`crate::index::FLAG_EXT`]).
//! Statistics therefore count from index keys alone; grouping by media labels
//! the stream with a left merge-join against the media index rows (pages
//! without media fall in the `None` group).
//!
//! Time bounds have whole-second resolution: `from` and `to` are truncated to
//! the second, and a page matches when its key time (publish time, else fetch
//! time, truncated to the second) is in `[from, to)`.
//! [`Index::full_scan_search`] / [`Index::full_scan_stats`] are the naive
//! reference: read every data row of the tables and filter in memory.
//!
//! The work is split by job:
//! * this module: the public query types ([`Query`], [`StatsQuery`], ...);
//! * `entries`: what an index entry says about its page (labels, the
//!   prefilter, verdicts) and the merges of sorted entry streams;
//! * `exec`: tasks, index scans, candidate streams and [`Index::search`];
//! * `stats`: [`Index::stats`];
//! * `reference`: the full-scan reference.

mod cursor;
mod entries;
mod exec;
mod reference;
mod spec;
mod stats;

pub use crate::zone::Interval;
pub(crate) use cursor::SortKey;
pub use cursor::{Cursor, Sort};
pub(crate) use entries::{Entry, RANK_SCALE};
pub(crate) use exec::Task;
pub use spec::*;

#[cfg(test)]
mod tests {
    use chrono::{DateTime, Utc};

    use super::*;

    #[test]
    fn interval_labels() {
        let t: DateTime<Utc> = "2017-01-31T10:00:00Z".parse().unwrap_or_default();
        assert_eq!(Interval::Day.label(t), "2017-01-31");
        assert_eq!(Interval::Week.label(t), "2017-W05");
        assert_eq!(Interval::Month.label(t), "2017-01");
        assert_eq!(Interval::Year.label(t), "2017");
        // ISO week of 1 Jan 2017 belongs to 2016
        let ny: DateTime<Utc> = "2017-01-01T00:00:00Z".parse().unwrap_or_default();
        assert_eq!(Interval::Week.label(ny), "2016-W52");
    }
}
