//! What a [`Packer`](super::Packer)'s callers hand it and get back: its settings
//! ([`PackerOptions`], [`AppendNote`]), the family a record is written under ([`PackKey`]),
//! where the record landed ([`PackLocation`], from `shapes`) and its counters ([`PackerStats`]). A leaf that
//! the packer and its opener share.

use std::sync::Arc;

use chrono::NaiveDate;

use crate::error::Result;

/// Default [`PackerOptions::max_pack_bytes`]: 1 GiB.
pub const DEFAULT_MAX_PACK_BYTES: u64 = 1 << 30;
/// Default [`PackerOptions::max_open_packs`].
pub const DEFAULT_MAX_OPEN_PACKS: usize = 64;

/// Settings of a [`Packer`](super::Packer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackerOptions {
    /// A pack is closed and the next part started when appending a record would make it
    /// larger than this (a pack always takes at least one record). Default: 1 GiB.
    pub max_pack_bytes: u64,
    /// At most this many packs are open for writing at once (file handles; leases and write
    /// pipelines on HDFS). Opening one more first closes the least recently written one,
    /// durably, exactly as at the end of a run; a later record of that (topic, day, cluster)
    /// starts its next part. 0 counts as 1. Default: 64.
    pub max_open_packs: usize,
    /// Extra `name: value` fields for the warcinfo record at the start of every pack
    /// (after `software`, `format` and `conformsTo`). Default: none.
    pub warcinfo_fields: Vec<(String, String)>,
    /// The first write of a family in this packer appends to the family's highest part in
    /// the store instead of starting a new one, when that part is smaller than
    /// `max_pack_bytes`, ends with a whole record and the store lets this packer own it
    /// ([`PackStore::append`]); its records follow a warcinfo record of their own. So the
    /// runs of a day fill its packs instead of adding small ones. Default: false.
    pub append_to_existing: bool,
}

impl Default for PackerOptions {
    fn default() -> Self {
        Self {
            max_pack_bytes: DEFAULT_MAX_PACK_BYTES,
            max_open_packs: DEFAULT_MAX_OPEN_PACKS,
            warcinfo_fields: Vec::new(),
            append_to_existing: false,
        }
    }
}

/// Told `(path, offset)` before a [`Packer`](super::Packer) appends the first byte to a pack it did
/// not create: from `offset` on, the pack holds this packer's records. A run records it so that
/// taking up a crashed run reads those records too (its own packs are found by the writer token in
/// their names). An error stops the append (the pack is not written to).
pub type AppendNote = Arc<dyn Fn(&str, u64) -> Result<()> + Send + Sync>;

/// Which pack family a record goes to.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PackKey {
    /// Topic label (sanitised into a path segment by [`sanitize_topic`]).
    pub topic: String,
    /// Day of the page.
    pub date: NaiveDate,
    /// Cluster number within (topic, day).
    pub cluster: u32,
}

/// Counters of a [`Packer`](super::Packer) since it was made.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PackerStats {
    /// Packs created.
    pub opened: u64,
    /// Packs closed because they were full (rollover).
    pub rolled_over: u64,
    /// Packs closed to make room ([`PackerOptions::max_open_packs`]).
    pub closed_for_room: u64,
    /// Most packs open at once.
    pub peak_open: usize,
    /// Packs of earlier writers appended to ([`PackerOptions::append_to_existing`]).
    pub appended: u64,
}
