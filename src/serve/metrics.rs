//! Prometheus text metrics of the API: requests and latency per route,
//! responses per status class, the number of indexed pages, and per job
//! what its runs in this process did ([`crate::job_metrics`]): whether it
//! runs, runs by outcome, the end of its last run, pages and bytes stored,
//! fetch failures and the length of its queue.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Mutex;
use std::time::Duration;

/// Upper bounds (seconds) of the latency histogram buckets.
const BUCKETS: [f64; 12] = [
    0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0,
];

#[derive(Debug, Default, Clone)]
struct Histogram {
    counts: [u64; BUCKETS.len()],
    count: u64,
    sum: f64,
}

#[derive(Debug, Default)]
struct Inner {
    latency: BTreeMap<&'static str, Histogram>,
    responses: BTreeMap<(&'static str, u16), u64>,
    hits_returned: u64,
    raw_served: u64,
}

/// Names of the job metrics (the `job` label names the job).
pub const JOB_RUNNING: &str = "harvest_job_running";
pub const JOB_RUNS: &str = "harvest_job_runs_total";
pub const JOB_LAST_END: &str = "harvest_job_last_run_end_timestamp_seconds";
pub const CRAWL_PAGES: &str = "harvest_crawl_pages_stored_total";
pub const CRAWL_NOT_MODIFIED: &str = "harvest_crawl_not_modified_total";
pub const CRAWL_FETCHED_BYTES: &str = "harvest_crawl_fetched_bytes_total";
pub const CRAWL_STORED_BYTES: &str = "harvest_crawl_stored_bytes_total";
pub const CRAWL_FAILURES: &str = "harvest_crawl_fetch_failures_total";
pub const CRAWL_FRONTIER: &str = "harvest_crawl_frontier_urls";

/// One job's line of figures in the exposition.
#[derive(Debug, Clone, Default)]
pub struct JobFigures {
    pub job: String,
    /// A run of it is going on in this process.
    pub running: bool,
    /// What its runs in this process did.
    pub counters: crate::job_metrics::JobCounters,
    /// End of its last run that ended (the `runs` table, or this process).
    pub last_end: Option<chrono::DateTime<chrono::Utc>>,
}

/// The job metrics: HELP and TYPE once, then a sample per job.
fn render_jobs(out: &mut String, jobs: &[JobFigures]) {
    type Figure = fn(&JobFigures) -> Option<f64>;
    let per_job: [(&str, &str, &str, Figure); 8] = [
        (
            JOB_RUNNING,
            "gauge",
            "1 while a run of the job goes on in this process, else 0.",
            |j| Some(if j.running { 1.0 } else { 0.0 }),
        ),
        (
            JOB_LAST_END,
            "gauge",
            "End of the job's last run that ended (Unix time, seconds).",
            |j| j.last_end.map(|t| t.timestamp_millis() as f64 / 1e3),
        ),
        (
            CRAWL_PAGES,
            "counter",
            "Pages fetched (2xx HTML) and stored by the job's runs in this process.",
            |j| Some(j.counters.pages as f64),
        ),
        (
            CRAWL_NOT_MODIFIED,
            "counter",
            "Answers 304 Not Modified to the job's runs in this process.",
            |j| Some(j.counters.not_modified as f64),
        ),
        (
            CRAWL_FETCHED_BYTES,
            "counter",
            "Payload bytes fetched by the job's runs in this process.",
            |j| Some(j.counters.fetched_bytes as f64),
        ),
        (
            CRAWL_STORED_BYTES,
            "counter",
            "Bytes written into packs by the job's runs in this process.",
            |j| Some(j.counters.stored_bytes as f64),
        ),
        (
            CRAWL_FAILURES,
            "counter",
            "Fetches of the job's runs in this process that failed (every kind).",
            |j| Some(j.counters.fetch_failures as f64),
        ),
        (
            CRAWL_FRONTIER,
            "gauge",
            "URLs in the job's queue at the last report of its running (or last) run in this process.",
            |j| Some(j.counters.queued as f64),
        ),
    ];
    for (name, kind, help, figure) in per_job {
        let _ = writeln!(out, "# HELP {name} {help}");
        let _ = writeln!(out, "# TYPE {name} {kind}");
        for j in jobs {
            if let Some(v) = figure(j) {
                let _ = writeln!(out, "{name}{{job=\"{}\"}} {v}", label(&j.job));
            }
        }
    }
    let _ = writeln!(
        out,
        "# HELP {JOB_RUNS} Runs of the job that ended in this process, by outcome."
    );
    let _ = writeln!(out, "# TYPE {JOB_RUNS} counter");
    for j in jobs {
        for outcome in crate::job_metrics::OUTCOMES {
            let n = j.counters.runs.get(outcome).copied().unwrap_or(0);
            let _ = writeln!(
                out,
                "{JOB_RUNS}{{job=\"{}\",outcome=\"{outcome}\"}} {n}",
                label(&j.job)
            );
        }
    }
}

/// A label value escaped as the text format wants it.
fn label(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// Counters shared by the handlers.
#[derive(Debug, Default)]
pub struct Metrics {
    inner: Mutex<Inner>,
}

impl Metrics {
    /// One request to `route` answered with `status` after `took`.
    pub fn observe(&self, route: &'static str, status: u16, took: Duration) {
        let Ok(mut m) = self.inner.lock() else {
            return;
        };
        let secs = took.as_secs_f64();
        let h = m.latency.entry(route).or_default();
        h.count += 1;
        h.sum += secs;
        for (i, b) in BUCKETS.iter().enumerate() {
            if secs <= *b {
                h.counts[i] += 1;
            }
        }
        *m.responses.entry((route, status / 100 * 100)).or_default() += 1;
    }

    pub fn hits_returned(&self, n: usize) {
        if let Ok(mut m) = self.inner.lock() {
            m.hits_returned += n as u64;
        }
    }

    pub fn raw_served(&self) {
        if let Ok(mut m) = self.inner.lock() {
            m.raw_served += 1;
        }
    }

    /// The exposition text; `pages` is the number of indexed pages if
    /// known, `jobs` the figures of every job.
    pub fn render(&self, pages: Option<u64>, jobs: &[JobFigures]) -> String {
        let mut out = String::new();
        let Ok(m) = self.inner.lock() else {
            return out;
        };
        render_jobs(&mut out, jobs);
        if let Some(p) = pages {
            let _ = writeln!(
                out,
                "# HELP harvest_pages Pages in the index (revisits not counted)."
            );
            let _ = writeln!(out, "# TYPE harvest_pages gauge");
            let _ = writeln!(out, "harvest_pages {p}");
        }
        let _ = writeln!(
            out,
            "# HELP harvest_search_hits_total Hits returned by /api/search."
        );
        let _ = writeln!(out, "# TYPE harvest_search_hits_total counter");
        let _ = writeln!(out, "harvest_search_hits_total {}", m.hits_returned);
        let _ = writeln!(
            out,
            "# HELP harvest_raw_pages_total Archived pages served by /api/pages/{{id}}/raw."
        );
        let _ = writeln!(out, "# TYPE harvest_raw_pages_total counter");
        let _ = writeln!(out, "harvest_raw_pages_total {}", m.raw_served);
        let _ = writeln!(
            out,
            "# HELP harvest_http_responses_total Responses by route and status class."
        );
        let _ = writeln!(out, "# TYPE harvest_http_responses_total counter");
        for ((route, class), n) in &m.responses {
            let _ = writeln!(
                out,
                "harvest_http_responses_total{{route=\"{route}\",status=\"{}xx\"}} {n}",
                class / 100
            );
        }
        let _ = writeln!(
            out,
            "# HELP harvest_http_request_duration_seconds Request latency by route."
        );
        let _ = writeln!(
            out,
            "# TYPE harvest_http_request_duration_seconds histogram"
        );
        for (route, h) in &m.latency {
            for (i, b) in BUCKETS.iter().enumerate() {
                let _ = writeln!(
                    out,
                    "harvest_http_request_duration_seconds_bucket{{route=\"{route}\",le=\"{b}\"}} {}",
                    h.counts[i]
                );
            }
            let _ = writeln!(
                out,
                "harvest_http_request_duration_seconds_bucket{{route=\"{route}\",le=\"+Inf\"}} {}",
                h.count
            );
            let _ = writeln!(
                out,
                "harvest_http_request_duration_seconds_sum{{route=\"{route}\"}} {}",
                h.sum
            );
            let _ = writeln!(
                out,
                "harvest_http_request_duration_seconds_count{{route=\"{route}\"}} {}",
                h.count
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_is_cumulative_and_counts_match() {
        let m = Metrics::default();
        m.observe("search", 200, Duration::from_millis(3));
        m.observe("search", 400, Duration::from_millis(30));
        let text = m.render(Some(7), &[]);
        assert!(text.contains("harvest_pages 7"));
        assert!(text.contains(
            "harvest_http_request_duration_seconds_bucket{route=\"search\",le=\"0.005\"} 1"
        ));
        assert!(text.contains(
            "harvest_http_request_duration_seconds_bucket{route=\"search\",le=\"0.05\"} 2"
        ));
        assert!(text.contains("harvest_http_request_duration_seconds_count{route=\"search\"} 2"));
        assert!(text.contains("harvest_http_responses_total{route=\"search\",status=\"4xx\"} 1"));
    }

    #[test]
    fn job_figures_are_one_sample_per_job_and_outcome() {
        let mut counters = crate::job_metrics::JobCounters {
            pages: 12,
            queued: 3,
            ..Default::default()
        };
        counters.runs.insert("finished", 2);
        let text = Metrics::default().render(
            None,
            &[JobFigures {
                job: "news".into(),
                running: true,
                counters,
                last_end: Some("2026-12-01T00:00:01.5Z".parse().unwrap()),
            }],
        );
        for want in [
            "harvest_job_running{job=\"news\"} 1",
            "harvest_crawl_pages_stored_total{job=\"news\"} 12",
            "harvest_crawl_frontier_urls{job=\"news\"} 3",
            "harvest_job_runs_total{job=\"news\",outcome=\"finished\"} 2",
            "harvest_job_runs_total{job=\"news\",outcome=\"failed\"} 0",
            "harvest_job_last_run_end_timestamp_seconds{job=\"news\"} 1796083201.5",
        ] {
            assert!(text.contains(want), "{want} in {text}");
        }
        assert_eq!(label("a\"b\\"), "a\\\"b\\\\");
    }
}
