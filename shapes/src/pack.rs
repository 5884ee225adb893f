//! Where a WARC record lives: the packer returns a [`PackLocation`] for every record it
//! writes, the indexer keeps it in the rows that point at the record, and the binary
//! hands the one to the other as it is.

use serde::{Deserialize, Serialize};

/// Where a record was stored: enough to read it back alone.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PackLocation {
    /// Store-relative pack path.
    pub path: String,
    /// Offset of the record's gzip member in the pack.
    pub offset: u64,
    /// Length of the gzip member.
    pub length: u64,
}
