//! Where a crawl keeps the URLs it has discovered and not fetched yet.
//!
//! The crawl loop holds a small window of URLs in memory ([`crate::frontier::Frontier`])
//! and asks a [`UrlQueue`] for more when the window runs low. [`MemoryQueue`]
//! keeps everything in memory (a one-shot crawl); a caller that must survive a
//! crash provides a queue backed by durable storage (the harvest binary keeps
//! it in a table), so a restarted run continues where it stopped.
//!
//! Contract of a [`UrlQueue`]:
//! * a URL (normalised) is queued at most once per run: [`UrlQueue::push`] and
//!   [`UrlQueue::mark_seen`] drop URLs the run has seen before;
//! * [`UrlQueue::take`] hands out queued URLs lowest depth first, FIFO within a
//!   depth, each at most once per process;
//! * a URL stays queued until [`UrlQueue::finish`] is called for it: the crawl
//!   calls it for URLs that produced no page (failures, skips), and the caller
//!   calls it for pages once they are stored. A durable queue that is reopened
//!   after a crash hands out again the URLs that were taken but not finished.

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::sync::Mutex;

use url::Url;

/// A URL waiting in the queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueuedUrl {
    /// Normalised URL.
    pub url: Url,
    /// Link depth from a seed (seeds are 0).
    pub depth: u32,
    /// The queue knew of no earlier capture of the URL when it queued it: the
    /// fetch asks the [`crate::UrlHistory`] for no validators (a round trip
    /// to the index a page when that is remote). False when the queue cannot
    /// tell; set by a queue in [`UrlQueue::take`], ignored in `push`.
    pub uncaptured: bool,
}

impl QueuedUrl {
    /// A URL at `depth` whose history is not known to the queue.
    pub fn new(url: Url, depth: u32) -> QueuedUrl {
        QueuedUrl {
            url,
            depth,
            uncaptured: false,
        }
    }
}

/// Error of a queue's backing store (the crawl stops: a URL must not be lost).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("crawl queue: {0}")]
pub struct QueueError(pub String);

/// The crawl's queue of discovered URLs (see the module docs for the contract).
/// Calls may block (a table store over the network); the crawl calls them from
/// its scheduler and fetch tasks.
pub trait UrlQueue: Send + Sync {
    /// Queues the URLs this run has not seen yet; returns how many were queued.
    fn push(&self, urls: Vec<QueuedUrl>) -> Result<usize, QueueError>;
    /// Records `url` as seen without queueing it (a redirect target that is
    /// fetched right away); true when it had not been seen.
    fn mark_seen(&self, url: &Url) -> Result<bool, QueueError>;
    /// Up to `max` queued URLs not handed out before by this process.
    fn take(&self, max: usize) -> Result<Vec<QueuedUrl>, QueueError>;
    /// The URLs are done: they leave the queue.
    fn finish(&self, urls: &[String]) -> Result<(), QueueError>;
    /// URLs queued and not finished (an estimate is fine).
    fn pending(&self) -> u64;
}

/// A queue in memory: everything is lost with the process.
#[derive(Debug, Default)]
pub struct MemoryQueue {
    inner: Mutex<MemoryInner>,
}

#[derive(Debug, Default)]
struct MemoryInner {
    seen: HashSet<String>,
    queues: BTreeMap<u32, VecDeque<Url>>,
    /// Taken, not finished.
    taken: u64,
}

impl MemoryQueue {
    /// An empty queue.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, MemoryInner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl UrlQueue for MemoryQueue {
    fn push(&self, urls: Vec<QueuedUrl>) -> Result<usize, QueueError> {
        let mut inner = self.lock();
        let mut added = 0;
        for q in urls {
            if inner.seen.insert(q.url.as_str().to_string()) {
                inner.queues.entry(q.depth).or_default().push_back(q.url);
                added += 1;
            }
        }
        Ok(added)
    }

    fn mark_seen(&self, url: &Url) -> Result<bool, QueueError> {
        Ok(self.lock().seen.insert(url.as_str().to_string()))
    }

    fn take(&self, max: usize) -> Result<Vec<QueuedUrl>, QueueError> {
        let mut inner = self.lock();
        let mut out = Vec::new();
        while out.len() < max {
            let Some((&depth, queue)) = inner.queues.iter_mut().next() else {
                break;
            };
            match queue.pop_front() {
                Some(url) => out.push(QueuedUrl::new(url, depth)),
                None => {
                    inner.queues.remove(&depth);
                }
            }
        }
        inner.taken += out.len() as u64;
        Ok(out)
    }

    fn finish(&self, urls: &[String]) -> Result<(), QueueError> {
        let mut inner = self.lock();
        inner.taken = inner.taken.saturating_sub(urls.len() as u64);
        Ok(())
    }

    fn pending(&self) -> u64 {
        let inner = self.lock();
        inner.queues.values().map(|q| q.len() as u64).sum::<u64>() + inner.taken
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(s: &str, depth: u32) -> QueuedUrl {
        QueuedUrl::new(
            Url::parse(s).unwrap_or_else(|_| Url::parse("http://x.invalid/").expect("url")),
            depth,
        )
    }

    #[test]
    fn memory_queue_dedups_and_orders_by_depth() {
        let m = MemoryQueue::new();
        assert_eq!(
            m.push(vec![
                q("http://a/2", 2),
                q("http://a/1", 1),
                q("http://a/1", 1)
            ]),
            Ok(2)
        );
        assert_eq!(m.mark_seen(&q("http://a/1", 0).url), Ok(false));
        assert_eq!(m.mark_seen(&q("http://a/3", 0).url), Ok(true));
        let got: Vec<u32> = m
            .take(10)
            .unwrap_or_default()
            .iter()
            .map(|u| u.depth)
            .collect();
        assert_eq!(got, vec![1, 2]);
        assert_eq!(m.pending(), 2);
        assert_eq!(m.finish(&["http://a/1".into()]), Ok(()));
        assert_eq!(m.pending(), 1);
        assert!(m.take(10).unwrap_or_default().is_empty());
    }
}
