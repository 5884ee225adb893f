//! The scheduling loop of a crawl ([`Scheduler`]): frontier URLs go to at most
//! `concurrency` fetch tasks, a host with a politeness delay gets one task at a
//! time, and what a fetch task leaves goes to an analysis task; the loop ends
//! when the frontier is drained, or stops when the crawl is cancelled or its
//! event receiver dropped.

use std::collections::HashMap;
use std::sync::Arc;

use tokio::task::{Id, JoinError, JoinSet};

use super::analyse::analyse_page;
use super::fetch_one::process;
use super::fetched::Fetched;
use super::shared::Shared;
use super::stored::analyse_not_modified;
use crate::event::FailureKind;
use crate::normalize::host_key;
use crate::reader::PageReader;

/// How many queued URLs the scheduler looks at to find one whose host is idle.
pub const SCHEDULER_SCAN_LIMIT: usize = 1024;

/// The running tasks of a crawl and the hosts they hold.
///
/// Fetch tasks hold their host until the body is read; the page is then
/// decoded, parsed and reported by an analysis task that holds no host,
/// so a page that is slow to parse never delays its host's next request.
pub(super) struct Scheduler<'a, R: PageReader> {
    shared: &'a Arc<Shared<R>>,
    concurrency: usize,
    tasks: JoinSet<Fetched>,
    analyses: JoinSet<()>,
    /// Host of every running task; with a politeness delay a host gets one task.
    task_hosts: HashMap<Id, String>,
    busy_hosts: HashMap<String, usize>,
}

impl<'a, R: PageReader> Scheduler<'a, R> {
    pub(super) fn new(shared: &'a Arc<Shared<R>>, concurrency: usize) -> Self {
        Self {
            shared,
            concurrency,
            tasks: JoinSet::new(),
            analyses: JoinSet::new(),
            task_hosts: HashMap::new(),
            busy_hosts: HashMap::new(),
        }
    }

    /// Runs tasks until there are none left (false), or until the crawl is
    /// cancelled or its event receiver dropped (true: stopped).
    pub(super) async fn run(&mut self) -> bool {
        let shared = self.shared;
        loop {
            if shared.cancel.is_cancelled() || shared.events.is_closed() {
                return true;
            }
            self.spawn_ready();
            if self.tasks.is_empty() && self.analyses.is_empty() {
                return false;
            }
            tokio::select! {
                _ = shared.cancel.cancelled() => { return true; }
                _ = shared.events.closed() => { return true; }
                Some(joined) = self.analyses.join_next(), if !self.analyses.is_empty() => {
                    self.analysis_joined(joined);
                }
                Some(joined) = self.tasks.join_next_with_id(), if !self.tasks.is_empty() => {
                    self.fetch_joined(joined);
                }
            }
        }
    }

    /// Starts fetch tasks for ready URLs, while fewer than `concurrency`
    /// fetches run and fewer than `concurrency` pages wait for analysis.
    fn spawn_ready(&mut self) {
        let shared = self.shared;
        // Bodies waiting for analysis are bounded too: no new fetch while
        // `concurrency` pages are being analysed.
        while self.tasks.len() < self.concurrency && self.analyses.len() < self.concurrency {
            let busy_hosts = &self.busy_hosts;
            let next = shared.frontier().pop_ready(SCHEDULER_SCAN_LIMIT, |u| {
                let host = host_key(u);
                !busy_hosts.contains_key(&host) || shared.politeness.delay(&host).is_zero()
            });
            let next = match next {
                Ok(Some(next)) => next,
                Ok(None) => break,
                Err(e) => {
                    shared.queue_failed(e);
                    break;
                }
            };
            let host = host_key(&next.url);
            let s = shared.clone();
            let handle = self.tasks.spawn(async move { process(s, next).await });
            *self.busy_hosts.entry(host.clone()).or_default() += 1;
            self.task_hosts.insert(handle.id(), host);
        }
    }

    /// Counts an analysis task that panicked as a failure.
    fn analysis_joined(&self, joined: Result<(), JoinError>) {
        if let Err(e) = joined {
            if e.is_panic() {
                tracing::error!(error = %e, "analysis task panicked");
                *self
                    .shared
                    .summary()
                    .failures
                    .entry(FailureKind::Other.label())
                    .or_default() += 1;
            }
        }
    }

    /// Hands what a fetch task left to an analysis task (a panic counts as a
    /// failure) and frees the task's host.
    fn fetch_joined(&mut self, joined: Result<(Id, Fetched), JoinError>) {
        let shared = self.shared;
        let id = match joined {
            Ok((id, fetched)) => {
                let s = shared.clone();
                match fetched {
                    Fetched::Done => {}
                    Fetched::Page(page) => {
                        self.analyses
                            .spawn(async move { analyse_page(s, *page).await });
                    }
                    Fetched::NotModified(nm) => {
                        self.analyses
                            .spawn(async move { analyse_not_modified(s, *nm).await });
                    }
                }
                id
            }
            Err(e) => {
                if e.is_panic() {
                    tracing::error!(error = %e, "fetch task panicked");
                    *shared
                        .summary()
                        .failures
                        .entry(FailureKind::Other.label())
                        .or_default() += 1;
                }
                e.id()
            }
        };
        if let Some(host) = self.task_hosts.remove(&id) {
            if let Some(n) = self.busy_hosts.get_mut(&host) {
                *n -= 1;
                if *n == 0 {
                    self.busy_hosts.remove(&host);
                }
            }
        }
    }

    /// Aborts the tasks still running and waits for them to end.
    pub(super) async fn shutdown(mut self) {
        self.tasks.abort_all();
        self.analyses.abort_all();
        while self.tasks.join_next().await.is_some() {}
        while self.analyses.join_next().await.is_some() {}
    }
}
