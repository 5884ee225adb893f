//! The server's defaults that the command line shows in `harvest serve --help`:
//! a leaf module, so the command line's definitions need nothing else of the
//! server.

/// Default of `harvest serve --max-connections` (lowered to what the
/// open-files limit allows).
pub const DEFAULT_MAX_CONNECTIONS: usize = 10_000;
/// Default of `harvest serve --header-timeout` (seconds).
pub const DEFAULT_HEADER_TIMEOUT_SECS: u64 = 10;
/// Default of `harvest serve --max-idle-per-client`: connections from one
/// address that have not sent a whole request (a browser opens at most six).
pub const DEFAULT_MAX_IDLE_PER_CLIENT: usize = 64;
/// Default of `harvest serve --queue-wait-ms`.
pub const DEFAULT_QUEUE_WAIT_MS: u64 = 100;
