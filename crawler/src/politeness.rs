//! Per-host politeness: one request at a time per host, and a minimum delay
//! between the end of one request and the start of the next.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use tokio::sync::OwnedMutexGuard;
use tokio::time::Instant;

/// Per-host slot: when the last request to the host ended, behind an async
/// lock (one request at a time), and the host's own delay.
#[derive(Debug, Clone)]
struct HostSlot {
    last_end: Arc<tokio::sync::Mutex<Option<Instant>>>,
    /// robots.txt `Crawl-delay`, raised only; zero when the host set none.
    host_delay: Duration,
}

impl HostSlot {
    fn new() -> HostSlot {
        HostSlot {
            last_end: Arc::new(tokio::sync::Mutex::new(None)),
            host_delay: Duration::ZERO,
        }
    }
}

/// Consecutive connection failures after which a host is backed off.
pub const FAILURES_BEFORE_BACKOFF: u32 = 3;
/// Longest back-off after connection failures.
pub const MAX_FAILURE_BACKOFF: Duration = Duration::from_secs(300);

/// Hosts kept before idle ones are forgotten (a server runs jobs for months).
const HOSTS_KEPT: usize = 10_000;
/// A host whose last request ended this long ago is idle.
const IDLE_AFTER: Duration = Duration::from_secs(600);

/// What is known of every host: shared by the crawls that use one
/// [`Politeness`] family.
#[derive(Debug, Default)]
struct Hosts {
    slots: Mutex<HashMap<String, HostSlot>>,
    /// Host -> no request before this instant.
    paused: Mutex<HashMap<String, Instant>>,
    /// Host -> consecutive connection failures.
    failures: Mutex<HashMap<String, u32>>,
}

impl Hosts {
    fn slot(&self, host: &str) -> HostSlot {
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        if !slots.contains_key(host) && slots.len() >= HOSTS_KEPT {
            forget_idle(&mut slots);
        }
        slots
            .entry(host.to_string())
            .or_insert_with(HostSlot::new)
            .clone()
    }
}

/// Drops hosts nobody waits for, that set no delay of their own and whose
/// last request ended [`IDLE_AFTER`] ago.
fn forget_idle(slots: &mut HashMap<String, HostSlot>) {
    let now = Instant::now();
    slots.retain(|_, slot| {
        if Arc::strong_count(&slot.last_end) > 1 || !slot.host_delay.is_zero() {
            return true;
        }
        match slot.last_end.try_lock() {
            Ok(last) => last.is_some_and(|t| now.duration_since(t) < IDLE_AFTER),
            Err(_) => true,
        }
    });
}

/// Tracks when every host may get its next request, and hosts that asked
/// for a pause (429/503) or keep failing to connect.
///
/// A crawl has its own delay; the hosts may be shared with other crawls of
/// the process ([`Politeness::process_wide`]): two jobs of one server that
/// reach one host then take turns, each waiting its own delay after the
/// other's requests too, and a pause asked by the host holds for both.
#[derive(Debug)]
pub struct Politeness {
    base_delay: Duration,
    hosts: Arc<Hosts>,
}

/// Held while a request to a host is in flight; dropping it starts the host's delay.
#[derive(Debug)]
pub struct HostPermit {
    guard: Option<OwnedMutexGuard<Option<Instant>>>,
}

impl Drop for HostPermit {
    fn drop(&mut self) {
        if let Some(g) = self.guard.as_mut() {
            **g = Some(Instant::now());
        }
    }
}

impl Politeness {
    /// `base_delay` applies to every host; zero means no per-host limit.
    /// The hosts are this crawl's own.
    pub fn new(base_delay: Duration) -> Self {
        Self {
            base_delay,
            hosts: Arc::new(Hosts::default()),
        }
    }

    /// Like [`Politeness::new`], with the hosts every other process-wide
    /// politeness of this process sees.
    pub fn process_wide(base_delay: Duration) -> Self {
        static HOSTS: OnceLock<Arc<Hosts>> = OnceLock::new();
        Self {
            base_delay,
            hosts: HOSTS.get_or_init(Default::default).clone(),
        }
    }

    /// Another crawl's view of the same hosts, with its own delay.
    pub fn sharing(&self, base_delay: Duration) -> Self {
        Self {
            base_delay,
            hosts: self.hosts.clone(),
        }
    }

    /// No request to `host` for `wait` (a 429/503, maybe with Retry-After).
    pub fn pause(&self, host: &str, wait: Duration) {
        let until = Instant::now() + wait;
        let mut paused = self.hosts.paused.lock().unwrap_or_else(|p| p.into_inner());
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
            let mut f = self
                .hosts
                .failures
                .lock()
                .unwrap_or_else(|p| p.into_inner());
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
        self.hosts
            .failures
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(host);
    }

    /// The instant before which `host` is paused, if it is.
    pub fn paused_until(&self, host: &str) -> Option<Instant> {
        let mut paused = self.hosts.paused.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        match paused.get(host).copied() {
            Some(t) if t > now => Some(t),
            Some(_) => {
                paused.remove(host);
                None
            }
            None => None,
        }
    }

    /// Raises the delay of `host` to `delay` when it is larger than the current one
    /// (robots.txt `Crawl-delay`). The next request to the host then waits `delay`
    /// from now, since the caller has just talked to it (fetched its robots.txt).
    pub fn raise_delay(&self, host: &str, delay: Duration) {
        let mut slots = self.hosts.slots.lock().unwrap_or_else(|p| p.into_inner());
        let slot = slots.entry(host.to_string()).or_insert_with(HostSlot::new);
        if delay > slot.host_delay {
            slot.host_delay = delay;
            if delay > self.base_delay {
                if let Ok(mut last) = slot.last_end.try_lock() {
                    *last = Some(Instant::now());
                }
            }
        }
    }

    /// The delay this crawl applies to `host`: its own, or the host's
    /// `Crawl-delay` when longer.
    pub fn delay(&self, host: &str) -> Duration {
        self.hosts.slot(host).host_delay.max(self.base_delay)
    }

    /// Waits until a request to `host` may start. With a zero delay this returns
    /// at once and does not serialise requests.
    pub async fn acquire(&self, host: &str) -> HostPermit {
        if let Some(until) = self.paused_until(host) {
            tokio::time::sleep_until(until).await;
        }
        let slot = self.hosts.slot(host);
        let delay = slot.host_delay.max(self.base_delay);
        if delay.is_zero() {
            return HostPermit { guard: None };
        }
        let guard = slot.last_end.lock_owned().await;
        if let Some(last) = *guard {
            tokio::time::sleep_until(last + delay).await;
        }
        HostPermit { guard: Some(guard) }
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
    async fn crawls_sharing_hosts_take_turns_each_with_its_own_delay() {
        let slow = Politeness::new(Duration::from_secs(3));
        let fast = slow.sharing(Duration::from_secs(1));
        let start = Instant::now();
        drop(slow.acquire("h").await);
        drop(fast.acquire("h").await);
        assert!(start.elapsed() >= Duration::from_secs(1));
        assert!(
            start.elapsed() < Duration::from_secs(3),
            "the fast crawl waits its own delay"
        );
        let t = Instant::now();
        drop(slow.acquire("h").await);
        assert!(
            t.elapsed() >= Duration::from_secs(3),
            "the slow crawl waits after the fast one's request"
        );
        fast.pause("h", Duration::from_secs(60));
        let t = Instant::now();
        drop(slow.acquire("h").await);
        assert!(
            t.elapsed() >= Duration::from_secs(60),
            "a pause holds for every crawl"
        );
        let own = Politeness::new(Duration::from_secs(3));
        let t = Instant::now();
        drop(own.acquire("h").await);
        assert!(
            t.elapsed() < Duration::from_millis(10),
            "separate families are independent"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn idle_hosts_are_forgotten_beyond_the_cap() {
        let p = Politeness::new(Duration::from_millis(1));
        for i in 0..HOSTS_KEPT {
            drop(p.acquire(&format!("h{i}")).await);
        }
        p.raise_delay("h0", Duration::from_secs(5));
        tokio::time::advance(IDLE_AFTER + Duration::from_secs(1)).await;
        drop(p.acquire("new").await);
        let kept = p.hosts.slots.lock().unwrap().len();
        assert_eq!(kept, 2, "the host with its own delay and the new one");
    }

    #[tokio::test(start_paused = true)]
    async fn zero_delay_does_not_serialise() {
        let p = Politeness::new(Duration::ZERO);
        let a = p.acquire("h").await;
        let b = p.acquire("h").await;
        drop((a, b));
    }
}
