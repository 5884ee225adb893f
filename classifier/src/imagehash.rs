//! Perceptual hashes of images (issue 12): near-duplicate photos across sites (photo reuse).
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

use std::io::Cursor;

use image::imageops::FilterType;
use image::{DynamicImage, GrayImage, ImageReader, Limits};
use image_hasher::{BitOrder, HashAlg, Hasher, HasherConfig};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Version of the hashes: bumped whenever the same image would hash differently.
pub const HASH_VERSION: u32 = 1;

/// Largest image decoded (width x height): 40 megapixels.
pub const MAX_PIXELS: u64 = 40_000_000;

/// Most memory the decoder may allocate for one image.
pub const MAX_DECODE_BYTES: u64 = 256 * 1024 * 1024;

/// Largest side accepted by the decoder.
pub const MAX_SIDE: u32 = 20_000;

/// Bits in each hash.
pub const HASH_BITS: u32 = 64;

/// One of the three perceptual hashes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HashKind {
    /// aHash: 8x8 grey, mean threshold.
    Average,
    /// dHash: 9x8 grey, horizontal gradient signs.
    Difference,
    /// pHash: 16x16 grey, DCT, 8x8 low frequencies, median threshold.
    Perceptual,
}

impl HashKind {
    /// The three, in the order reports print them.
    pub const ALL: [HashKind; 3] = [
        HashKind::Average,
        HashKind::Difference,
        HashKind::Perceptual,
    ];

    /// Short name: `ahash`, `dhash`, `phash`.
    pub fn name(self) -> &'static str {
        match self {
            HashKind::Average => "ahash",
            HashKind::Difference => "dhash",
            HashKind::Perceptual => "phash",
        }
    }

    /// The kind named `ahash`, `dhash` or `phash`.
    pub fn from_name(name: &str) -> Option<HashKind> {
        HashKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Default near-duplicate threshold: the largest Hamming distance (of 64 bits) at which
    /// two images count as the same picture. aHash 10, dHash 12, pHash 14: on the real images
    /// of `classifier/tests/imagehash.rs` the largest even distances with no pair of
    /// different photos within them (the next even step joins different photos: aHash 12
    /// 63 pairs, dHash 14 1, pHash 16 6); a larger threshold finds more crops but joins
    /// unrelated flat or textured images.
    pub fn threshold(self) -> u32 {
        match self {
            HashKind::Average => 10,
            HashKind::Difference => 12,
            HashKind::Perceptual => 14,
        }
    }
}

impl std::fmt::Display for HashKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The three hashes of one image and its size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ImageHashes {
    /// Width of the decoded image in pixels.
    pub width: u32,
    /// Height of the decoded image in pixels.
    pub height: u32,
    /// aHash.
    pub ahash: u64,
    /// dHash.
    pub dhash: u64,
    /// pHash.
    pub phash: u64,
}

impl ImageHashes {
    /// The hash of one kind.
    pub fn get(&self, kind: HashKind) -> u64 {
        match kind {
            HashKind::Average => self.ahash,
            HashKind::Difference => self.dhash,
            HashKind::Perceptual => self.phash,
        }
    }

    /// Hamming distance to `other` under `kind`.
    pub fn distance(&self, other: &ImageHashes, kind: HashKind) -> u32 {
        (self.get(kind) ^ other.get(kind)).count_ones()
    }

    /// Whether `other` is a near-duplicate under `kind` at its default threshold.
    pub fn is_near(&self, other: &ImageHashes, kind: HashKind) -> bool {
        self.distance(other, kind) <= kind.threshold()
    }
}

/// Computes [`ImageHashes`]; build once, use from any thread.
pub struct ImageHasher {
    average: Hasher<[u8; 8]>,
    difference: Hasher<[u8; 8]>,
    perceptual: Hasher<[u8; 8]>,
}

impl Default for ImageHasher {
    fn default() -> Self {
        ImageHasher::new()
    }
}

impl ImageHasher {
    /// The hashers of the module docs.
    pub fn new() -> ImageHasher {
        let config = || {
            HasherConfig::with_bytes_type::<[u8; 8]>()
                .hash_size(8, 8)
                .resize_filter(FilterType::Lanczos3)
                .bit_order(BitOrder::MsbFirst)
        };
        ImageHasher {
            average: config().hash_alg(HashAlg::Mean).to_hasher(),
            difference: config().hash_alg(HashAlg::Gradient).to_hasher(),
            perceptual: config().hash_alg(HashAlg::Median).preproc_dct().to_hasher(),
        }
    }

    /// Hashes of a decoded image (converted to grey once).
    pub fn hash_image(&self, image: &DynamicImage) -> ImageHashes {
        match image.as_luma8() {
            Some(grey) => self.hash_grey(grey),
            None => self.hash_grey(&image.to_luma8()),
        }
    }

    /// Hashes of a grey image.
    pub fn hash_grey(&self, grey: &GrayImage) -> ImageHashes {
        let bits = |h: &Hasher<[u8; 8]>| {
            let hash = h.hash_image(grey);
            let mut b = [0u8; 8];
            b.copy_from_slice(hash.as_bytes());
            u64::from_be_bytes(b)
        };
        ImageHashes {
            width: grey.width(),
            height: grey.height(),
            ahash: bits(&self.average),
            dhash: bits(&self.difference),
            phash: bits(&self.perceptual),
        }
    }

    /// Decodes an encoded image (PNG, JPEG, GIF, WebP, BMP; the format from the bytes) and
    /// hashes it.
    pub fn hash_bytes(&self, bytes: &[u8]) -> Result<ImageHashes> {
        Ok(self.hash_image(&decode(bytes)?))
    }
}

/// Decodes an image whose format is guessed from its first bytes, within the limits of the
/// module docs.
pub fn decode(bytes: &[u8]) -> Result<DynamicImage> {
    let mut reader = ImageReader::new(Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| Error::Image(e.to_string()))?;
    if reader.format().is_none() {
        return Err(Error::Image("unknown image format".into()));
    }
    let mut limits = Limits::default();
    limits.max_alloc = Some(MAX_DECODE_BYTES);
    limits.max_image_width = Some(MAX_SIDE);
    limits.max_image_height = Some(MAX_SIDE);
    reader.limits(limits);
    let (w, h) = reader
        .into_dimensions()
        .map_err(|e| Error::Image(e.to_string()))?;
    if u64::from(w) * u64::from(h) > MAX_PIXELS {
        return Err(Error::Image(format!("{w}x{h} is over {MAX_PIXELS} pixels")));
    }
    let mut reader = ImageReader::new(Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| Error::Image(e.to_string()))?;
    let mut limits = Limits::default();
    limits.max_alloc = Some(MAX_DECODE_BYTES);
    reader.limits(limits);
    reader.decode().map_err(|e| Error::Image(e.to_string()))
}

/// Hamming distance of two 64-bit hashes.
pub fn hamming(a: u64, b: u64) -> u32 {
    (a ^ b).count_ones()
}

/// Groups of near-duplicates: indexes into `hashes` joined when some chain of pairs lies
/// within `threshold` bits (single linkage, union-find). Only groups of two or more are
/// returned, each sorted, the groups in order of their first member. Every pair is compared
/// (n²/2 XOR + popcount: ~50 million for 10,000 images, well under a second).
pub fn near_groups(hashes: &[u64], threshold: u32) -> Vec<Vec<usize>> {
    let mut parent: Vec<usize> = (0..hashes.len()).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    for i in 0..hashes.len() {
        let a = hashes[i];
        for (j, &b) in hashes.iter().enumerate().skip(i + 1) {
            if (a ^ b).count_ones() <= threshold {
                let (ri, rj) = (root(&mut parent, i), root(&mut parent, j));
                if ri != rj {
                    parent[ri.max(rj)] = ri.min(rj);
                }
            }
        }
    }
    let mut groups: std::collections::BTreeMap<usize, Vec<usize>> = Default::default();
    for i in 0..hashes.len() {
        let r = root(&mut parent, i);
        groups.entry(r).or_default().push(i);
    }
    groups.into_values().filter(|g| g.len() > 1).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::{ImageFormat, Luma, Rgb, RgbImage};

    /// A picture with structure at every scale (blocks, rings, a ramp): a smooth ramp alone
    /// has no low-frequency detail for pHash's DCT.
    fn picture(w: u32, h: u32) -> RgbImage {
        RgbImage::from_fn(w, h, |x, y| {
            let (fx, fy) = (x as f32 / w as f32, y as f32 / h as f32);
            let block = if (x * 5 / w + y * 3 / h).is_multiple_of(2) {
                90.0
            } else {
                0.0
            };
            let ring = ((fx - 0.3).hypot(fy - 0.6) * 25.0).sin() * 60.0;
            let v = (40.0 + block + ring + fx * 80.0).clamp(0.0, 255.0) as u8;
            Rgb([v, v.saturating_add((fy * 40.0) as u8), 255 - v])
        })
    }

    fn encode(img: &DynamicImage, format: ImageFormat) -> Vec<u8> {
        let mut out = Cursor::new(Vec::new());
        img.write_to(&mut out, format).expect("encode");
        out.into_inner()
    }

    #[test]
    fn ahash_is_the_mean_threshold_of_the_8x8_grey_image() {
        // An 8x8 grey image is not resized: bit i (MSB first, row-major) = pixel i >= mean.
        let pixels: Vec<u8> = (0..64u32).map(|i| ((i * 37) % 251) as u8).collect();
        let grey = GrayImage::from_fn(8, 8, |x, y| Luma([pixels[(y * 8 + x) as usize]]));
        let mean = pixels.iter().map(|&p| u32::from(p)).sum::<u32>() / 64;
        let mut want = 0u64;
        for &p in &pixels {
            want = (want << 1) | u64::from(u32::from(p) >= mean);
        }
        let got = ImageHasher::new().hash_grey(&grey).ahash;
        assert!(
            hamming(got, want) <= 1,
            "ahash {got:016x} vs mean threshold {want:016x}"
        );
    }

    #[test]
    fn dhash_bits_are_right_brighter_than_left() {
        // Brightness rising left to right: every comparison is "brighter", all 64 bits set.
        let rising = GrayImage::from_fn(90, 80, |x, _| Luma([10 + (x as u8) * 2]));
        assert_eq!(ImageHasher::new().hash_grey(&rising).dhash, u64::MAX);
        let falling = GrayImage::from_fn(90, 80, |x, _| Luma([250 - (x as u8) * 2]));
        assert_eq!(ImageHasher::new().hash_grey(&falling).dhash, 0);
    }

    #[test]
    fn same_picture_in_other_formats_hashes_close() {
        let img = DynamicImage::ImageRgb8(picture(300, 200));
        let hasher = ImageHasher::new();
        let png = hasher.hash_bytes(&encode(&img, ImageFormat::Png)).unwrap();
        let jpg = hasher.hash_bytes(&encode(&img, ImageFormat::Jpeg)).unwrap();
        assert_eq!((png.width, png.height), (300, 200));
        for kind in HashKind::ALL {
            assert!(
                png.is_near(&jpg, kind),
                "{kind}: {}",
                png.distance(&jpg, kind)
            );
        }
        let flipped = hasher.hash_image(&img.fliph());
        let d = png.distance(&flipped, HashKind::Difference);
        assert!(d > HashKind::Difference.threshold(), "mirror image at {d}");
    }

    #[test]
    fn bad_and_oversized_input_is_an_error() {
        let hasher = ImageHasher::new();
        assert!(matches!(
            hasher.hash_bytes(b"<html>not an image</html>"),
            Err(Error::Image(_))
        ));
        let png = encode(&DynamicImage::ImageRgb8(picture(64, 64)), ImageFormat::Png);
        assert!(matches!(
            hasher.hash_bytes(&png[..png.len() / 2]),
            Err(Error::Image(_))
        ));
        // A PNG header claiming 30000 x 30000 pixels is refused before decoding.
        let mut huge = png.clone();
        huge[16..20].copy_from_slice(&30_000u32.to_be_bytes());
        huge[20..24].copy_from_slice(&30_000u32.to_be_bytes());
        assert!(matches!(hasher.hash_bytes(&huge), Err(Error::Image(_))));
    }

    #[test]
    fn near_groups_join_chains_and_skip_singletons() {
        let hashes = [
            0u64,
            0b111,
            0xffff_0000_0000_0000,
            0b1111_1111,
            0xffff_0000_0000_0001,
        ];
        assert_eq!(near_groups(&hashes, 3), vec![vec![0, 1], vec![2, 4]]);
        // 0 -> 0b111 (3) -> 0b1111_1111 (5): a chain at 5.
        assert_eq!(near_groups(&hashes, 5), vec![vec![0, 1, 3], vec![2, 4]]);
        assert!(near_groups(&hashes, 0).is_empty());
    }
}
