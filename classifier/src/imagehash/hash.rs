//! The three hashes of an image ([`HashKind`], [`ImageHashes`]), computed by
//! [`ImageHasher`] on the grey image, and the Hamming distance they are compared by.

use image::imageops::FilterType;
use image::{DynamicImage, GrayImage};
use image_hasher::{BitOrder, HashAlg, Hasher, HasherConfig};
use serde::{Deserialize, Serialize};

use crate::error::Result;

use super::decode::decode;

/// Version of the hashes: bumped whenever the same image would hash differently.
pub const HASH_VERSION: u32 = 1;

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

/// Hamming distance of two 64-bit hashes.
pub fn hamming(a: u64, b: u64) -> u32 {
    (a ^ b).count_ones()
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use super::*;
    use crate::error::Error;

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
}
