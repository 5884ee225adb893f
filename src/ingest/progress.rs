//! How a run shows its progress: a spinner, plain lines, or lines handed to a sink.

use std::sync::Arc;
use std::time::Duration;

use crate::summary::IngestSummary;

/// How a run shows its progress on stderr.
#[derive(Debug, Clone, Default)]
pub enum Progress {
    /// Nothing until the summary.
    #[default]
    Quiet,
    /// A spinner line (stderr is a terminal).
    Bar,
    /// A plain line every [`PROGRESS_EVERY`] (cron, systemd, log files).
    Lines,
    /// The plain lines, handed to a sink (a command run for another
    /// process: `harvest crawl` forwarded to `harvest serve`).
    To(LineSink),
}

/// Where [`Progress::To`] sends its lines.
#[derive(Clone)]
pub struct LineSink(Arc<dyn Fn(&str) + Send + Sync>);

impl LineSink {
    pub fn new(f: impl Fn(&str) + Send + Sync + 'static) -> LineSink {
        LineSink(Arc::new(f))
    }

    pub(crate) fn send(&self, line: &str) {
        (self.0)(line)
    }
}

impl std::fmt::Debug for LineSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LineSink")
    }
}

/// Sinks are told apart by identity.
impl Progress {
    /// A bar on a terminal, plain lines otherwise; nothing when `quiet`.
    pub fn for_stderr(quiet: bool) -> Progress {
        use std::io::IsTerminal;
        if quiet {
            Progress::Quiet
        } else if std::io::stderr().is_terminal() {
            Progress::Bar
        } else {
            Progress::Lines
        }
    }
}

/// Interval of the plain progress lines and of the run heartbeat.
pub const PROGRESS_EVERY: Duration = Duration::from_secs(5);

/// One progress line: pages, queue, rate, failures.
pub(crate) fn progress_line(s: &IngestSummary, queued: u64, elapsed: Duration) -> String {
    let secs = elapsed.as_secs_f64().max(1e-9);
    format!(
        "{:>7.0} s  pages {} (new {}, changed {}, unchanged {}), not modified {}, queue {}, {:.1} pages/s, failures {}",
        elapsed.as_secs_f64(),
        s.pages,
        s.new,
        s.changed,
        s.unchanged,
        s.not_modified,
        queued,
        (s.pages + s.not_modified) as f64 / secs,
        s.failures_total()
    )
}
