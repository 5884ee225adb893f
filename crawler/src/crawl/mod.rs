//! The crawl loop: a scheduler that hands frontier URLs to at most `concurrency`
//! tasks; each task checks robots.txt, waits for its host's politeness slot,
//! fetches, follows redirects hop by hop, decodes, extracts and reports.
//!
//! [`run`] holds the entry points, [`schedule`] the loop that spawns the fetch
//! and analysis tasks, [`fetch_one`] a fetch task (one URL through its
//! redirects), [`analyse`] the reading of a fetched page on the blocking pool,
//! [`stored`] the 304 and stored-copy path, [`discovery`] the sitemaps and feeds
//! read before the loop starts; they share [`shared::Shared`] and hand each
//! other [`fetched::Fetched`].

mod analyse;
mod discovery;
mod fetch_one;
mod fetched;
mod run;
mod schedule;
mod shared;
mod stored;

pub use run::{crawl, crawl_with_cancel, crawl_with_queue};
pub use schedule::SCHEDULER_SCAN_LIMIT;
