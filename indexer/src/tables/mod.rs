//! The table modules, below the [`Index`](crate::Index) facade. A table module is one
//! table of the index (or two kept together): its key layout (its `//!`), its rows (types
//! and cells) and the `impl Index` methods that read and write them (the crawl state's
//! tables are types of their own over a `TableStore`). The modules import `index.rs`;
//! `index.rs` imports none of them, only the names below: this file imports nothing, so
//! the index creates every table ([`SHARED_TABLES`]) without knowing their modules.
//! `urls` and `digests` are written by `index.rs` with the page tables (one per source
//! and year: [`crate::keys::table_name`]), which [`pages`] reads back.

pub mod captures;
pub mod clusters;
pub mod crawlstate;
pub mod images;
pub mod neardup;
pub mod pages;
pub mod textmark;

/// The table of batches being applied on backends without atomic batches.
pub const JOURNAL_TABLE: &str = "journal";
/// Table of the captures.
pub const CAPTURES_TABLE: &str = "captures";
/// Table of the job runs' queues.
pub const FRONTIER_TABLE: &str = "frontier";
/// Table of the job runs.
pub const RUNS_TABLE: &str = "runs";
/// Table of the image hashes.
pub const IMAGES_TABLE: &str = "images";
/// Table of the fingerprint multi-index.
pub const SIMHASH_TABLE: &str = "simhash";
/// Table of the copies of each story.
pub const STORIES_TABLE: &str = "stories";
/// Blocks a fingerprint is filed under (16 bits each).
pub const BLOCKS: usize = 4;
/// The table of text marks: one row per write of words, keyed as journal rows
/// (`{time}/{host}/{pid}/{seq}`), one empty cell per page ([`crate::text::TextPage::key`]).
pub const TEXT_MARKS_TABLE: &str = "text_marks";
/// Table of URL states.
pub const URLS_TABLE: &str = "urls";
/// Table of payload digests.
pub const DIGESTS_TABLE: &str = "digests";
/// Table of K-means cluster centres (see [`clusters`]).
pub const CLUSTERS_TABLE: &str = "clusters";

/// Every shared table with its buckets.
pub const SHARED_TABLES: [(&str, u8); 11] = [
    (URLS_TABLE, 1),
    (DIGESTS_TABLE, 1),
    (CLUSTERS_TABLE, 1),
    (CAPTURES_TABLE, 1),
    (IMAGES_TABLE, 1),
    (SIMHASH_TABLE, BLOCKS as u8),
    (STORIES_TABLE, 1),
    (JOURNAL_TABLE, 1),
    (TEXT_MARKS_TABLE, 1),
    (FRONTIER_TABLE, 1),
    (RUNS_TABLE, 1),
];
