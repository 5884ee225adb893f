//! The names of the index's shared tables (page tables are one per source and
//! year: [`crate::keys::table_name`]), and the bucket counts that differ from one:
//! a leaf, so the index can create every table without knowing their modules.

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
/// (`{time}/{host}/{pid}/{seq}`), one empty cell per page ([`crate::textmark::TextPage::key`]).
pub const TEXT_MARKS_TABLE: &str = "text_marks";
/// Table of URL states.
pub const URLS_TABLE: &str = "urls";
/// Table of payload digests.
pub const DIGESTS_TABLE: &str = "digests";
/// Table of K-means cluster centres (see [`crate::clusters`]).
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
