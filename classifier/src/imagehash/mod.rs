//! Perceptual hashes of images: near-duplicate photos across sites (photo reuse).
//!
//! Three 64-bit hashes of the grey image, computed by the `image_hasher` crate on an image
//! decoded by the `image` crate:
//!
//! - **aHash** ([`HashKind::Average`], the seed's "aHash 8x8"): the grey image scaled to 8x8
//!   (Lanczos3), one bit per pixel (row-major, first pixel = most significant bit): at least
//!   the integer mean of the 64.
//! - **dHash** ([`HashKind::Difference`]): scaled to 9x8, one bit per horizontal neighbour
//!   pair: the right pixel brighter than the left one.
//! - **pHash** ([`HashKind::Perceptual`]): scaled to 16x16, 2-D DCT, the 8x8 lowest
//!   frequencies, one bit per coefficient: above their median.
//!
//! Two images are near-duplicates under a hash when the Hamming distance of their hashes is
//! at most that hash's threshold ([`HashKind::threshold`]). The thresholds are the ones
//! at which `classifier/tests/imagehash.rs` measures precision and recall on real images
//! (scikit-image's sample images re-encoded, resized, recompressed and cropped, against every
//! other image); see ARCHITECTURE.md for the figures. Stored hashes carry
//! [`HASH_VERSION`]: a change of filter, size or bit order changes every hash.
//!
//! Decoding is bounded ([`decode`]: at most [`MAX_PIXELS`] pixels and [`MAX_DECODE_BYTES`]
//! of decoder memory), so a hostile file from a crawl fails instead of exhausting memory.

mod decode;
mod groups;
mod hash;
mod multi_index;
mod scan;

pub use decode::{decode, MAX_DECODE_BYTES, MAX_PIXELS, MAX_SIDE};
pub use groups::{
    leader_groups, leader_groups_brute_force, near_groups, near_groups_brute_force,
    near_groups_plan,
};
pub use hash::{hamming, HashKind, ImageHasher, ImageHashes, HASH_BITS, HASH_VERSION};
