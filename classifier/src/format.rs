//! The model file's header: what the model reads and writes, and what its errors
//! name.

/// First word of every model file.
pub const MAGIC: &str = "harvest-classifier-model";
/// Body encoding named in the header line.
pub(crate) const ENCODING: &str = "json+gzip";
/// The model format version this build writes and the highest one it reads.
pub const FORMAT_VERSION: u32 = 2;
/// The oldest model format version this build reads (its scores are softmax, not calibrated).
pub const OLDEST_FORMAT_VERSION: u32 = 1;
