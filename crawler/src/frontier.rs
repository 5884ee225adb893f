//! The crawl frontier: breadth-first (lowest depth first, FIFO within a depth),
//! never admits the same normalised URL twice in a run, applies scope, depth and
//! page limits. The queue itself is a [`UrlQueue`] (in memory or durable); the
//! frontier keeps a window of [`WINDOW`] URLs of it in memory.

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::sync::Arc;

use url::Url;

use crate::config::Scope;
use crate::guard::{Refusal, TrapFilter};
use crate::normalize::normalize;
use crate::queue::{MemoryQueue, QueueError, QueuedUrl, UrlQueue};

/// Second-level labels that are generic under a two-letter country TLD
/// (`com.cn`, `co.uk`, ...), used by [`Scope::SameDomain`].
const GENERIC_SECOND_LEVEL: [&str; 8] = ["com", "net", "org", "gov", "edu", "co", "ac", "or"];

/// Approximate registrable domain of `host` (see [`Scope::SameDomain`]).
pub fn registrable_domain(host: &str) -> String {
    let host = host.trim_end_matches('.');
    if host.parse::<std::net::IpAddr>().is_ok() || host.starts_with('[') {
        return host.to_string();
    }
    let labels: Vec<&str> = host.split('.').collect();
    let n = labels.len();
    if n <= 2 {
        return host.to_string();
    }
    let tld = labels[n - 1];
    let second = labels[n - 2];
    let take = if tld.len() == 2 && GENERIC_SECOND_LEVEL.contains(&second) {
        3
    } else {
        2
    };
    labels[n - take..].join(".")
}

/// Decides whether a URL is inside the crawl scope.
#[derive(Debug, Clone)]
pub struct ScopeMatcher {
    scope: Scope,
    hosts: HashSet<String>,
    domains: HashSet<String>,
}

impl ScopeMatcher {
    /// Builds the matcher for `scope` from the seed URLs.
    pub fn new(scope: Scope, seeds: &[Url]) -> Self {
        let hosts = seeds.iter().map(crate::normalize::host_key).collect();
        let domains = seeds
            .iter()
            .filter_map(|u| u.host_str())
            .map(registrable_domain)
            .collect();
        Self {
            scope,
            hosts,
            domains,
        }
    }

    /// True when `url` (already normalised) may be crawled.
    pub fn allows(&self, url: &Url) -> bool {
        if !crate::normalize::CRAWLABLE_SCHEMES.contains(&url.scheme()) {
            return false;
        }
        match &self.scope {
            Scope::Any => true,
            Scope::SameHost => self.hosts.contains(&crate::normalize::host_key(url)),
            Scope::SameDomain => match url.host_str() {
                Some(host) => {
                    let host = host.trim_end_matches('.');
                    self.domains.iter().any(|d| {
                        host == d
                            || (host.len() > d.len()
                                && host.ends_with(d.as_str())
                                && host.as_bytes()[host.len() - d.len() - 1] == b'.')
                    })
                }
                None => false,
            },
            Scope::Prefixes(prefixes) => {
                let s = url.as_str();
                prefixes.iter().any(|p| s.starts_with(p.as_str()))
            }
        }
    }
}

/// Why [`Frontier::push`] did not queue a URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rejected {
    /// Already queued or fetched in this run (after normalisation).
    Seen,
    /// Outside the crawl scope.
    OutOfScope,
    /// Deeper than `max_depth`.
    TooDeep,
    /// The queue's store failed.
    Queue(QueueError),
    /// A crawler-trap limit or the private-address guard.
    Refused(Refusal),
}

/// URLs the frontier keeps in memory; more are taken from the queue when
/// fewer than half are left.
pub const WINDOW: usize = 2048;

/// Scope, depth and page limits over a [`UrlQueue`], with a small in-memory
/// window of queued URLs (lowest depth first, FIFO within a depth).
pub struct Frontier {
    queue: Arc<dyn UrlQueue>,
    window: BTreeMap<u32, VecDeque<(Url, bool)>>,
    in_window: usize,
    /// The queue answered with fewer URLs than asked and nothing was pushed since.
    drained: bool,
    scope: ScopeMatcher,
    max_depth: Option<u32>,
    max_pages: Option<u64>,
    dispatched: u64,
    traps: TrapFilter,
    refused: BTreeMap<&'static str, u64>,
}

impl std::fmt::Debug for Frontier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Frontier")
            .field("in_window", &self.in_window)
            .field("dispatched", &self.dispatched)
            .finish_non_exhaustive()
    }
}

impl Frontier {
    /// A frontier over an empty in-memory queue.
    pub fn new(scope: ScopeMatcher, max_depth: Option<u32>, max_pages: Option<u64>) -> Self {
        Self::with_queue(Arc::new(MemoryQueue::new()), scope, max_depth, max_pages)
    }

    /// A frontier over `queue` (which may already hold URLs of this run).
    pub fn with_queue(
        queue: Arc<dyn UrlQueue>,
        scope: ScopeMatcher,
        max_depth: Option<u32>,
        max_pages: Option<u64>,
    ) -> Self {
        Self {
            queue,
            window: BTreeMap::new(),
            in_window: 0,
            drained: false,
            scope,
            max_depth,
            max_pages,
            dispatched: 0,
            traps: TrapFilter::default(),
            refused: BTreeMap::new(),
        }
    }

    /// Applies crawler-trap limits and the private-address guard (without
    /// this call: none, private addresses allowed).
    pub fn with_traps(mut self, traps: TrapFilter) -> Self {
        self.traps = traps;
        self
    }

    /// URLs refused by the trap limits and the address guard, by reason.
    pub fn refused(&self) -> &BTreeMap<&'static str, u64> {
        &self.refused
    }

    fn refuse(&mut self, r: Refusal) {
        *self.refused.entry(r.label()).or_default() += 1;
    }

    /// The queue under this frontier.
    pub fn queue(&self) -> &Arc<dyn UrlQueue> {
        &self.queue
    }

    /// Queues a seed: no scope check, depth 0. False when the run has seen it.
    pub fn push_seed(&mut self, url: &Url) -> Result<bool, QueueError> {
        let url = normalize(url);
        self.drained = false;
        Ok(self.queue.push(vec![QueuedUrl::new(url, 0)])? == 1)
    }

    /// Queues a discovered URL at `depth` if it is new, in scope and not too deep.
    pub fn push(&mut self, url: &Url, depth: u32) -> Result<(), Rejected> {
        let url = match self.admit(url, depth) {
            Err(Rejected::Refused(r)) => {
                self.refuse(r);
                return Err(Rejected::Refused(r));
            }
            other => other?,
        };
        self.traps.note_link(&url);
        self.drained = false;
        match self.queue.push(vec![QueuedUrl::new(url, depth)]) {
            Ok(0) => Err(Rejected::Seen),
            Ok(_) => Ok(()),
            Err(e) => Err(Rejected::Queue(e)),
        }
    }

    /// Queues the admissible URLs of `urls` at `depth` in one call to the
    /// queue; returns how many were new.
    pub fn push_all<'a>(
        &mut self,
        urls: impl IntoIterator<Item = &'a Url>,
        depth: u32,
    ) -> Result<usize, QueueError> {
        let mut batch: Vec<QueuedUrl> = Vec::new();
        for u in urls {
            match self.admit(u, depth) {
                Ok(url) => {
                    self.traps.note_link(&url);
                    batch.push(QueuedUrl::new(url, depth));
                }
                Err(Rejected::Refused(r)) => self.refuse(r),
                Err(_) => {}
            }
        }
        if batch.is_empty() {
            return Ok(0);
        }
        self.drained = false;
        self.queue.push(batch)
    }

    /// Scope and depth check; the normalised URL when admissible.
    fn admit(&self, url: &Url, depth: u32) -> Result<Url, Rejected> {
        if self.max_depth.is_some_and(|max| depth > max) {
            return Err(Rejected::TooDeep);
        }
        let url = normalize(url);
        if !self.scope.allows(&url) {
            return Err(Rejected::OutOfScope);
        }
        self.traps.check(&url).map_err(Rejected::Refused)?;
        Ok(url)
    }

    /// Records `url` as seen without queueing it (redirect targets).
    /// Returns false when it had been seen before.
    pub fn mark_seen(&mut self, url: &Url) -> Result<bool, QueueError> {
        self.queue.mark_seen(&normalize(url))
    }

    /// True when `url` is inside the crawl scope.
    pub fn in_scope(&self, url: &Url) -> bool {
        self.scope.allows(&normalize(url))
    }

    /// Tops the window up from the queue when it is less than half full.
    fn refill(&mut self) -> Result<(), QueueError> {
        if self.drained || self.in_window >= WINDOW / 2 {
            return Ok(());
        }
        let want = WINDOW - self.in_window;
        let got = self.queue.take(want)?;
        if got.len() < want {
            self.drained = true;
        }
        self.in_window += got.len();
        for q in got {
            self.window
                .entry(q.depth)
                .or_default()
                .push_back((q.url, q.uncaptured));
        }
        Ok(())
    }

    fn limit_reached(&self) -> bool {
        self.max_pages.is_some_and(|max| self.dispatched >= max)
    }

    /// Next URL to fetch (lowest depth first), or `None` when empty or when
    /// `max_pages` URLs have been handed out.
    pub fn pop(&mut self) -> Result<Option<QueuedUrl>, QueueError> {
        self.pop_ready(usize::MAX, |_| true)
    }

    /// Like [`Frontier::pop`], but takes the first URL (lowest depth first, FIFO
    /// within a depth) for which `ready` is true, looking at no more than
    /// `max_scan` queued URLs. Used to skip hosts that already have a request in
    /// flight, so one busy host cannot occupy every fetch slot.
    pub fn pop_ready(
        &mut self,
        max_scan: usize,
        ready: impl Fn(&Url) -> bool,
    ) -> Result<Option<QueuedUrl>, QueueError> {
        loop {
            if self.limit_reached() {
                return Ok(None);
            }
            self.refill()?;
            let mut scanned = 0usize;
            let mut found = None;
            'outer: for (&depth, queue) in self.window.iter() {
                for (i, (url, _)) in queue.iter().enumerate() {
                    if scanned >= max_scan {
                        break 'outer;
                    }
                    scanned += 1;
                    if ready(url) {
                        found = Some((depth, i));
                        break 'outer;
                    }
                }
            }
            let Some((depth, i)) = found else {
                return Ok(None);
            };
            let Some(queue) = self.window.get_mut(&depth) else {
                return Ok(None);
            };
            let url = queue.remove(i);
            if queue.is_empty() {
                self.window.remove(&depth);
            }
            let Some((url, uncaptured)) = url else {
                return Ok(None);
            };
            self.in_window -= 1;
            // Per-run counters (pages per host, query strings per path): a
            // URL over a limit leaves the queue unfetched.
            if let Err(r) = self.traps.dispatch(&url) {
                self.refuse(r);
                self.queue.finish(&[url.to_string()])?;
                continue;
            }
            self.dispatched += 1;
            return Ok(Some(QueuedUrl {
                url,
                depth,
                uncaptured,
            }));
        }
    }

    /// URLs waiting in the in-memory window.
    pub fn queued(&self) -> usize {
        self.in_window
    }

    /// URLs queued and not finished, as the queue counts them.
    pub fn pending(&self) -> u64 {
        self.queue.pending()
    }

    /// URLs handed out by [`Frontier::pop`] so far.
    pub fn dispatched(&self) -> u64 {
        self.dispatched
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Url {
        Url::parse(s).unwrap_or_else(|_| Url::parse("http://invalid.invalid/").expect("static url"))
    }

    #[test]
    fn registrable_domain_handles_country_second_levels() {
        assert_eq!(registrable_domain("news.sina.com.cn"), "sina.com.cn");
        assert_eq!(registrable_domain("www.bbc.co.uk"), "bbc.co.uk");
        assert_eq!(registrable_domain("edition.cnn.com"), "cnn.com");
        assert_eq!(registrable_domain("127.0.0.1"), "127.0.0.1");
    }

    #[test]
    fn never_queues_a_normalised_url_twice() {
        let seeds = [u("http://example.com/")];
        let mut f = Frontier::new(ScopeMatcher::new(Scope::SameHost, &seeds), None, None);
        assert_eq!(f.push_seed(&seeds[0]), Ok(true));
        assert_eq!(
            f.push(&u("http://EXAMPLE.com:80/#top"), 1),
            Err(Rejected::Seen)
        );
        assert_eq!(f.push(&u("http://example.com/a"), 1), Ok(()));
        assert_eq!(f.push(&u("http://example.com/a#x"), 1), Err(Rejected::Seen));
        assert_eq!(f.pending(), 2);
    }

    #[test]
    fn pops_lowest_depth_first() {
        let seeds = [u("http://example.com/")];
        let mut f = Frontier::new(ScopeMatcher::new(Scope::SameHost, &seeds), None, None);
        assert_eq!(f.push_seed(&seeds[0]), Ok(true));
        assert!(f.push(&u("http://example.com/deep"), 2).is_ok());
        assert!(f.push(&u("http://example.com/shallow"), 1).is_ok());
        let order: Vec<u32> = std::iter::from_fn(|| f.pop().ok().flatten())
            .map(|q| q.depth)
            .collect();
        assert_eq!(order, vec![0, 1, 2]);
    }

    #[test]
    fn applies_scope_depth_and_page_limits() {
        let seeds = [u("http://www.example.com/")];
        let mut f = Frontier::new(
            ScopeMatcher::new(Scope::SameDomain, &seeds),
            Some(1),
            Some(2),
        );
        assert_eq!(f.push_seed(&seeds[0]), Ok(true));
        assert_eq!(f.push(&u("http://news.example.com/x"), 1), Ok(()));
        assert_eq!(
            f.push(&u("http://notexample.com/x"), 1),
            Err(Rejected::OutOfScope)
        );
        assert_eq!(
            f.push(&u("http://www.example.com/y"), 2),
            Err(Rejected::TooDeep)
        );
        assert_eq!(f.push(&u("http://www.example.com/z"), 1), Ok(()));
        assert!(matches!(f.pop(), Ok(Some(_))));
        assert!(matches!(f.pop(), Ok(Some(_))));
        assert_eq!(f.pop(), Ok(None), "max_pages = 2");
        assert_eq!(f.dispatched(), 2);
    }

    #[test]
    fn pop_ready_skips_busy_hosts_but_keeps_order() {
        let seeds = [u("http://a.example/")];
        let mut f = Frontier::new(ScopeMatcher::new(Scope::Any, &seeds), None, None);
        assert_eq!(f.push_seed(&seeds[0]), Ok(true));
        assert!(f.push(&u("http://a.example/2"), 1).is_ok());
        assert!(f.push(&u("http://b.example/1"), 1).is_ok());
        assert!(f.push(&u("http://b.example/2"), 1).is_ok());
        let not_a = |u: &Url| u.host_str() != Some("a.example");
        assert_eq!(
            f.pop_ready(10, not_a)
                .ok()
                .flatten()
                .map(|q| q.url.to_string())
                .as_deref(),
            Some("http://b.example/1")
        );
        assert_eq!(
            f.pop_ready(1, not_a),
            Ok(None),
            "scan limit reached on a.example/"
        );
        assert_eq!(
            f.pop().ok().flatten().map(|q| (q.url.to_string(), q.depth)),
            Some(("http://a.example/".into(), 0))
        );
        assert_eq!(f.queued(), 2);
        assert_eq!(f.dispatched(), 2);
    }

    #[test]
    fn prefix_scope() {
        let m = ScopeMatcher::new(
            Scope::Prefixes(vec!["http://example.com/news/".into()]),
            &[u("http://example.com/news/")],
        );
        assert!(m.allows(&u("http://example.com/news/a.html")));
        assert!(!m.allows(&u("http://example.com/sport/a.html")));
    }
}
