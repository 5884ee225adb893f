//! Prometheus text metrics of the API: requests and latency per route,
//! responses per status class, and the number of indexed pages.

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

    /// The exposition text; `pages` is the number of indexed pages if known.
    pub fn render(&self, pages: Option<u64>) -> String {
        let mut out = String::new();
        let Ok(m) = self.inner.lock() else {
            return out;
        };
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
        let text = m.render(Some(7));
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
}
