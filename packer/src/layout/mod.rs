//! Pack layout and the `Packer`, which keeps one open pack per (topic, day, cluster), rolls
//! over to a new part when a pack is full, closes the least recently used pack when too many
//! are open, and never appends to a pack written by an earlier process or closed earlier.

//!
//! The naming scheme is [`PackName`]'s (`name`); a [`Packer`]'s settings and the types of
//! its interface are in `options`; the packer itself in `packer`, which opens packs through
//! `opener` (a family's next part, or its last part appended to) and syncs and closes them
//! side by side (`parallel`).

mod name;
mod opener;
mod options;
mod packer;
mod parallel;
#[cfg(test)]
mod tests;

pub use name::{
    legacy_pack_path, new_writer_token, pack_path, sanitize_topic, MonthPackName, PackName,
    PackOrigin, PACK_EXTENSION, WRITER_TOKEN_CHARS,
};
pub use options::{
    AppendNote, PackKey, PackerOptions, PackerStats, DEFAULT_MAX_OPEN_PACKS, DEFAULT_MAX_PACK_BYTES,
};
pub use packer::Packer;
