//! The shapes that cross harvest's stage crates. The crawler and the extraction crate
//! both decode pages and read URLs out of them, and must do both alike; neither depends
//! on the other, both depend on this crate. The packer and the indexer name a record's
//! place in its pack alike ([`PackLocation`]).

pub mod charset;
pub mod normalize;
pub mod pack;
pub mod page;

pub use pack::PackLocation;

/// Default longest URL queued or kept as a page's link (characters).
pub const DEFAULT_MAX_URL_LENGTH: usize = 2048;
