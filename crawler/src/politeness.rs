//! Per-host politeness: one request at a time per host, and a minimum delay
//! between the end of one request and the start of the next.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::OwnedMutexGuard;
use tokio::time::Instant;

/// Per-host slot: the next instant a request may start, behind an async lock.
#[derive(Debug, Clone)]
struct HostSlot {
    next_allowed: Arc<tokio::sync::Mutex<Option<Instant>>>,
    delay: Duration,
}

/// Consecutive connection failures after which a host is backed off.
pub const FAILURES_BEFORE_BACKOFF: u32 = 3;
/// Longest back-off after connection failures.
pub const MAX_FAILURE_BACKOFF: Duration = Duration::from_secs(300);

/// Tracks the next allowed request time of every host, and hosts that asked
/// for a pause (429/503) or keep failing to connect.
#[derive(Debug)]
pub struct Politeness {
    base_delay: Duration,
    hosts: Mutex<HashMap<String, HostSlot>>,
    /// Host -> no request before this instant.
    paused: Mutex<HashMap<String, Instant>>,
    /// Host -> consecutive connection failures.
    failures: Mutex<HashMap<String, u32>>,
}

/// Held while a request to a host is in flight; dropping it starts the host's delay.
#[derive(Debug)]
pub struct HostPermit {
    guard: Option<OwnedMutexGuard<Option<Instant>>>,
    delay: Duration,
}

impl Drop for HostPermit {
    fn drop(&mut self) {
        if let Some(g) = self.guard.as_mut() {
            **g = Some(Instant::now() + self.delay);
        }
    }
}

impl Politeness {
    /// `base_delay` applies to every host; zero means no per-host limit.
    pub fn new(base_delay: Duration) -> Self {
        Self {
            base_delay,
            hosts: Mutex::new(HashMap::new()),
            paused: Mutex::new(HashMap::new()),
            failures: Mutex::new(HashMap::new()),
        }
    }

    /// No request to `host` for `wait` (a 429/503, maybe with Retry-After).
    pub fn pause(&self, host: &str, wait: Duration) {
        let until = Instant::now() + wait;
        let mut paused = self.paused.lock().unwrap_or_else(|p| p.into_inner());
        let e = paused.entry(host.to_string()).or_insert(until);
        if *e < until {
            *e = until;
        }
    }

    /// A connection to `host` failed; after [`FAILURES_BEFORE_BACKOFF`] in a
    /// row the host is paused, 1 s doubling per further failure up to
    /// [`MAX_FAILURE_BACKOFF`]. Returns the pause, if any.
    pub fn connect_failed(&self, host: &str) -> Option<Duration> {
        let n = {
            let mut f = self.failures.lock().unwrap_or_else(|p| p.into_inner());
            let n = f.entry(host.to_string()).or_default();
            *n += 1;
            *n
        };
        if n < FAILURES_BEFORE_BACKOFF {
            return None;
        }
        let wait = Duration::from_secs(1u64 << (n - FAILURES_BEFORE_BACKOFF).min(16))
            .min(MAX_FAILURE_BACKOFF);
        self.pause(host, wait);
        Some(wait)
    }

    /// A request to `host` got an answer: its failure count starts over.
    pub fn answered(&self, host: &str) {
        self.failures
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(host);
    }

    /// The instant before which `host` is paused, if it is.
    pub fn paused_until(&self, host: &str) -> Option<Instant> {
        let paused = self.paused.lock().unwrap_or_else(|p| p.into_inner());
        paused.get(host).copied().filter(|t| *t > Instant::now())
    }

    fn slot(&self, host: &str) -> HostSlot {
        let mut hosts = self.hosts.lock().unwrap_or_else(|p| p.into_inner());
        hosts
            .entry(host.to_string())
            .or_insert_with(|| HostSlot {
                next_allowed: Arc::new(tokio::sync::Mutex::new(None)),
                delay: self.base_delay,
            })
            .clone()
    }

    /// Raises the delay of `host` to `delay` when it is larger than the current one
    /// (robots.txt `Crawl-delay`). The next request to the host then waits `delay`
    /// from now, since the caller has just talked to it (fetched its robots.txt).
    pub fn raise_delay(&self, host: &str, delay: Duration) {
        let mut hosts = self.hosts.lock().unwrap_or_else(|p| p.into_inner());
        let slot = hosts.entry(host.to_string()).or_insert_with(|| HostSlot {
            next_allowed: Arc::new(tokio::sync::Mutex::new(None)),
            delay: self.base_delay,
        });
        if delay > slot.delay {
            slot.delay = delay;
            if let Ok(mut next) = slot.next_allowed.try_lock() {
                let at = Instant::now() + delay;
                if next.is_none_or(|n| n < at) {
                    *next = Some(at);
                }
            }
        }
    }

    /// The delay currently applied to `host`.
    pub fn delay(&self, host: &str) -> Duration {
        self.slot(host).delay
    }

    /// Waits until a request to `host` may start. With a zero delay this returns
    /// at once and does not serialise requests.
    pub async fn acquire(&self, host: &str) -> HostPermit {
        if let Some(until) = self.paused_until(host) {
            tokio::time::sleep_until(until).await;
        }
        let slot = self.slot(host);
        if slot.delay.is_zero() {
            return HostPermit {
                guard: None,
                delay: slot.delay,
            };
        }
        let guard = slot.next_allowed.lock_owned().await;
        if let Some(next) = *guard {
            tokio::time::sleep_until(next).await;
        }
        HostPermit {
            guard: Some(guard),
            delay: slot.delay,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn second_request_waits_for_the_delay() {
        let p = Politeness::new(Duration::from_secs(2));
        let start = Instant::now();
        drop(p.acquire("http://a.example").await);
        drop(p.acquire("http://a.example").await);
        assert!(start.elapsed() >= Duration::from_secs(2));
        let before_other = Instant::now();
        drop(p.acquire("http://b.example").await);
        assert!(
            before_other.elapsed() < Duration::from_millis(10),
            "other hosts are independent"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn crawl_delay_only_raises() {
        let p = Politeness::new(Duration::from_secs(1));
        p.raise_delay("h", Duration::from_millis(10));
        assert_eq!(p.delay("h"), Duration::from_secs(1));
        p.raise_delay("h", Duration::from_secs(5));
        assert_eq!(p.delay("h"), Duration::from_secs(5));
    }

    #[tokio::test(start_paused = true)]
    async fn paused_hosts_wait_and_failures_back_off() {
        let p = Politeness::new(Duration::ZERO);
        p.pause("h", Duration::from_secs(30));
        let start = Instant::now();
        drop(p.acquire("h").await);
        assert!(start.elapsed() >= Duration::from_secs(30));
        assert_eq!(p.connect_failed("x"), None);
        assert_eq!(p.connect_failed("x"), None);
        assert_eq!(p.connect_failed("x"), Some(Duration::from_secs(1)));
        assert_eq!(p.connect_failed("x"), Some(Duration::from_secs(2)));
        p.answered("x");
        assert_eq!(
            p.connect_failed("x"),
            None,
            "counts start over after an answer"
        );
        for _ in 0..30 {
            p.connect_failed("y");
        }
        assert_eq!(p.connect_failed("y"), Some(MAX_FAILURE_BACKOFF));
    }

    #[tokio::test(start_paused = true)]
    async fn zero_delay_does_not_serialise() {
        let p = Politeness::new(Duration::ZERO);
        let a = p.acquire("h").await;
        let b = p.acquire("h").await;
        drop((a, b));
    }
}
