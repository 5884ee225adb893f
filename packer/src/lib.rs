//! packer stage of harvest: stores pages as WARC/1.1 records in large packs.
//!
//! - [`PackStore`] / [`PackWriter`]: where packs live (local folder, or HDFS with feature
//!   `hdfs`: `hdfs::HdfsPackStore`), opened from a URL with [`open_store`].
//! - [`warc`]: one gzip member per record; encode `warcinfo`, `response`, `revisit`; read a
//!   record back from `(path, offset, length)` or walk a whole pack with [`warc::RecordIter`].
//! - [`Packer`]: pack layout `{topic}/{yyyy}/{mm}/{dd}/{topic}-{yyyymmdd}-c{cluster}-{created}-{part}-{writer}.warc.gz`
//!   ([`PackName`]: file names unique across folders, writers and restarts), rollover at
//!   [`PackerOptions::max_pack_bytes`], at most [`PackerOptions::max_open_packs`] open (least
//!   recently used closed first), sync before indexing.
//! - [`placement`]: K-means cluster packing (which `c{cluster}` pack of a (topic, day) a
//!   page goes to) with [`assign_batch`].
//! - A run's first record of a family may go to the end of the family's last pack
//!   ([`PackerOptions::append_to_existing`], [`PackStore::append`]).
//! - `conformance` (tests, or feature `conformance`): checks every `PackStore` backend must pass.

pub mod arc;
pub mod error;
pub mod layout;
pub mod placement;
pub mod store;
#[cfg(any(test, feature = "conformance"))]
pub use store::conformance;
#[cfg(feature = "hdfs")]
pub use store::hdfs;
pub use store::local;
pub mod warc;

pub use error::{Error, Result};
#[cfg(feature = "hdfs")]
pub use hdfs::{HdfsOptions, HdfsPackStore, HdfsPackWriter};
pub use layout::{
    legacy_pack_path, new_writer_token, pack_path, sanitize_topic, AppendNote, MonthPackName,
    PackKey, PackName, PackOrigin, Packer, PackerOptions, PackerStats, DEFAULT_MAX_OPEN_PACKS,
    DEFAULT_MAX_PACK_BYTES, PACK_EXTENSION,
};
pub use local::{LocalPackStore, LocalPackWriter};
pub use placement::{
    assign_batch, AttributeEncoder, BatchAssignment, Centre, ClusterError, ClusterOptions,
    PageAttributes,
};
/// Where a record was stored ([`Packer::write`]); the type the indexer keeps too.
pub use shapes::PackLocation;
pub use store::{
    open_store, open_store_with, validate_path, OpenOptions, PackEntry, PackStore, PackWriter,
};
pub use warc::{
    encode_request, encode_response, encode_revisit, encode_warcinfo, payload_digest, read_record,
    EncodedRecord, HttpResponse, RecordIter, RequestInput, ResponseInput, RevisitInput, WarcRecord,
};
