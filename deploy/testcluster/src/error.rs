//! Error type of the testcluster crate.

use std::io;

/// Result alias used throughout the testcluster crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why the test cluster could not be built, started or controlled.
///
/// Variants about the JVM carry `tail`, the last lines of its output, so that a failing test shows the cause.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An I/O operation of the guard itself failed (temp dir, log file, pipes).
    #[error("{what}: {source}")]
    Io {
        /// What the guard was doing.
        what: String,
        /// Underlying error.
        #[source]
        source: io::Error,
    },

    /// `build.sh` (Maven) could not be run or failed.
    #[error("building the test cluster failed ({status}); build output:\n{tail}")]
    Build {
        /// Exit status or spawn error.
        status: String,
        /// Last lines of the build output.
        tail: String,
    },

    /// The JVM exited before it printed the ready line (or before it answered a command).
    #[error("test cluster JVM exited ({status}); last output:\n{tail}")]
    Exited {
        /// Exit status.
        status: String,
        /// Last lines of the JVM's output.
        tail: String,
    },

    /// The JVM did not answer in time.
    #[error("test cluster did not {what} within {secs} s; last output:\n{tail}")]
    Timeout {
        /// What was awaited ("become ready", "restart the Thrift server").
        what: String,
        /// The time limit.
        secs: u64,
        /// Last lines of the JVM's output.
        tail: String,
    },

    /// A control command failed in the JVM (or it did not know it).
    #[error("test cluster command `{command}` failed: {answer}; last output:\n{tail}")]
    Command {
        /// The command as sent.
        command: String,
        /// The JVM's answer (`COMMAND-FAILED ...`, `UNKNOWN-COMMAND ...`).
        answer: String,
        /// Last lines of the JVM's output.
        tail: String,
    },

    /// The ready line lacked an endpoint.
    #[error("malformed ready line (missing {missing}): {line}")]
    ReadyLine {
        /// The key that was missing.
        missing: String,
        /// The line as printed.
        line: String,
    },
}

impl Error {
    pub(crate) fn io(what: impl Into<String>, source: io::Error) -> Self {
        Error::Io {
            what: what.into(),
            source,
        }
    }
}
