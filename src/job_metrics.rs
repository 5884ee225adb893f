//! What the job runs of this process did, for `/metrics` (issue 42): per
//! job, counters since the process started (pages stored, bytes, fetch
//! failures, runs by outcome) and the length of a running run's queue.
//!
//! The pipeline reports a run's [`IngestSummary`] as it goes ([`progress`],
//! with each progress report) and once at its end ([`ended`]). A counter
//! grows by what the run added since its last report, so a run that takes
//! up an interrupted one (its summary starts from that run's counters) adds
//! only what it did itself, and a counter never goes down.

use std::collections::BTreeMap;
use std::sync::Mutex;

use chrono::{DateTime, Utc};

use crate::summary::IngestSummary;

/// The counters of one job in this process.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JobCounters {
    /// Pages fetched with a 2xx HTML answer and stored.
    pub pages: u64,
    /// Answers 304 Not Modified.
    pub not_modified: u64,
    /// Payload bytes fetched.
    pub fetched_bytes: u64,
    /// Bytes written into packs.
    pub stored_bytes: u64,
    /// Fetches that failed (every kind).
    pub fetch_failures: u64,
    /// URLs in the queue at the last report of the running (or last) run.
    pub queued: u64,
    /// Runs ended, by outcome ([`OUTCOMES`]).
    pub runs: BTreeMap<&'static str, u64>,
    /// End of the last run that ended in this process.
    pub last_end: Option<DateTime<Utc>>,
}

/// The outcomes of a run, as the `runs` table names its end states.
pub const OUTCOMES: [&str; 3] = ["finished", "cancelled", "failed"];

/// The figures of a summary the counters follow.
#[derive(Debug, Clone, Copy, Default)]
struct Seen {
    pages: u64,
    not_modified: u64,
    fetched_bytes: u64,
    stored_bytes: u64,
    fetch_failures: u64,
}

impl Seen {
    fn of(s: &IngestSummary) -> Seen {
        Seen {
            pages: s.pages,
            not_modified: s.not_modified,
            fetched_bytes: s.bytes,
            stored_bytes: s.pack_bytes,
            fetch_failures: s.failures_total(),
        }
    }
}

#[derive(Debug, Default)]
struct Job {
    counters: JobCounters,
    /// The running run's summary at its last report.
    seen: Option<Seen>,
}

static JOBS: Mutex<BTreeMap<String, Job>> = Mutex::new(BTreeMap::new());

fn with_job<T>(job: &str, f: impl FnOnce(&mut Job) -> T) -> T {
    // The map is consistent between statements: a panic elsewhere while it
    // was locked leaves nothing half-done.
    let mut jobs = JOBS.lock().unwrap_or_else(|e| e.into_inner());
    f(jobs.entry(job.to_owned()).or_default())
}

/// A run of `job` starts from `baseline` (the counters of the run it takes
/// up, or zeros).
pub fn started(job: &str, baseline: &IngestSummary) {
    with_job(job, |j| j.seen = Some(Seen::of(baseline)));
}

/// A run of `job` has reached `summary`, with `queued` URLs left.
pub fn progress(job: &str, summary: &IngestSummary, queued: u64) {
    with_job(job, |j| add(j, summary, queued));
}

fn add(j: &mut Job, summary: &IngestSummary, queued: u64) {
    let now = Seen::of(summary);
    let before = j.seen.unwrap_or(now);
    let c = &mut j.counters;
    c.pages += now.pages.saturating_sub(before.pages);
    c.not_modified += now.not_modified.saturating_sub(before.not_modified);
    c.fetched_bytes += now.fetched_bytes.saturating_sub(before.fetched_bytes);
    c.stored_bytes += now.stored_bytes.saturating_sub(before.stored_bytes);
    c.fetch_failures += now.fetch_failures.saturating_sub(before.fetch_failures);
    c.queued = queued;
    // A figure that went down (a failed run's summary is its last
    // heartbeat's) is followed from where it is.
    j.seen = Some(Seen {
        pages: now.pages.max(before.pages),
        not_modified: now.not_modified.max(before.not_modified),
        fetched_bytes: now.fetched_bytes.max(before.fetched_bytes),
        stored_bytes: now.stored_bytes.max(before.stored_bytes),
        fetch_failures: now.fetch_failures.max(before.fetch_failures),
    });
}

/// A run of `job` ended with `outcome` (one of [`OUTCOMES`]) at `at`, its
/// final summary (none when it failed) and `queued` URLs left.
pub fn ended(
    job: &str,
    outcome: &'static str,
    summary: Option<&IngestSummary>,
    queued: u64,
    at: DateTime<Utc>,
) {
    with_job(job, |j| {
        if let Some(s) = summary {
            add(j, s, queued);
        }
        j.counters.queued = queued;
        *j.counters.runs.entry(outcome).or_default() += 1;
        j.counters.last_end = Some(at);
        j.seen = None;
    });
}

/// The counters of every job that ran in this process.
pub fn snapshot() -> BTreeMap<String, JobCounters> {
    JOBS.lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .map(|(k, j)| (k.clone(), j.counters.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(pages: u64, failures: u64) -> IngestSummary {
        let mut s = IngestSummary {
            pages,
            pack_bytes: pages * 100,
            ..Default::default()
        };
        s.failures.insert("timeout".into(), failures);
        s
    }

    #[test]
    fn a_taken_up_run_adds_only_what_it_did() {
        let job = "job_metrics_unit_test";
        started(job, &IngestSummary::default());
        progress(job, &summary(3, 1), 7);
        ended(job, "cancelled", Some(&summary(4, 1)), 5, Utc::now());
        // Taken up: its summary starts from the cancelled run's.
        started(job, &summary(4, 1));
        progress(job, &summary(6, 1), 2);
        ended(job, "finished", Some(&summary(9, 2)), 0, Utc::now());
        let c = &snapshot()[job];
        assert_eq!((c.pages, c.stored_bytes, c.fetch_failures), (9, 900, 2));
        assert_eq!(c.queued, 0);
        assert_eq!(c.runs["cancelled"], 1);
        assert_eq!(c.runs["finished"], 1);
    }
}
