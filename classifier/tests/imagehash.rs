//! Issue 12: perceptual image hashes on real images.
//!
//! scikit-image 0.25.2's sample images (`deploy/data/fetch-images.sh`: photographs, micrographs,
//! scans, drawings) are the originals. The test makes the copies a news site makes of a photo it
//! reuses: re-encoded (JPEG q90; PNG -> BMP, lossless), recompressed (JPEG q40), resized (50%,
//! a 30% thumbnail as JPEG, 150% up), and slightly cropped (5% off every side; 8% off the top
//! and left). Every pair of versions of one original is a positive, every pair across
//! originals a negative. For each hash and threshold it prints precision and recall over all
//! pairs, and per transformation the distances of (original, copy); the floors below hold at
//! each hash's default threshold.
//!
//! Two pairs are left out of the scoring and printed only: `chessboard_RGB` (the same board
//! as `chessboard_GRAY` in 16-bit colour: a true duplicate among the originals) and
//! `motorcycle_right` (the other half of `motorcycle_left`'s stereo pair: another photo of
//! the same scene, a duplicate to some users and not to others).

use std::collections::BTreeMap;
use std::io::Cursor;
use std::path::PathBuf;

use classifier::imagehash::{self, HashKind, ImageHasher, ImageHashes};
use image::codecs::jpeg::JpegEncoder;
use image::imageops::FilterType;
use image::{DynamicImage, ImageFormat};

const ORIGINALS: &[&str] = &[
    "astronaut.png",
    "brick.png",
    "camera.png",
    "cell.png",
    "chelsea.png",
    "chessboard_GRAY.png",
    "clock_motion.png",
    "coffee.png",
    "coins.png",
    "color.png",
    "grass.png",
    "gravel.png",
    "horse.png",
    "hubble_deep_field.jpg",
    "ihc.png",
    "logo.png",
    "microaneurysms.png",
    "moon.png",
    "motorcycle_left.png",
    "page.png",
    "phantom.png",
    "retina.jpg",
    "rocket.jpg",
    "text.png",
];

fn data_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../deploy/cache/skimage-data");
    for f in ORIGINALS {
        assert!(
            dir.join(f).exists(),
            "{} is missing: run deploy/data/fetch-images.sh",
            dir.join(f).display()
        );
    }
    dir
}

fn jpeg(img: &DynamicImage, quality: u8) -> Vec<u8> {
    let mut out = Vec::new();
    // JPEG has no alpha: flatten RGBA (horse, logo) to RGB first, as a site's re-encoder does.
    let rgb = DynamicImage::ImageRgb8(img.to_rgb8());
    JpegEncoder::new_with_quality(&mut out, quality)
        .encode_image(&rgb)
        .expect("jpeg encode");
    out
}

fn encoded(img: &DynamicImage, format: ImageFormat) -> Vec<u8> {
    let mut out = Cursor::new(Vec::new());
    img.write_to(&mut out, format).expect("encode");
    out.into_inner()
}

fn scaled(img: &DynamicImage, factor: f32) -> DynamicImage {
    let w = ((img.width() as f32 * factor).round() as u32).max(1);
    let h = ((img.height() as f32 * factor).round() as u32).max(1);
    img.resize_exact(w, h, FilterType::Triangle)
}

fn cropped(img: &DynamicImage, left: f32, top: f32, right: f32, bottom: f32) -> DynamicImage {
    let (w, h) = (img.width() as f32, img.height() as f32);
    let (x0, y0) = ((w * left) as u32, (h * top) as u32);
    let (x1, y1) = ((w * (1.0 - right)) as u32, (h * (1.0 - bottom)) as u32);
    img.crop_imm(x0, y0, x1 - x0, y1 - y0)
}

/// The copies of one original, as encoded files (what a crawler would fetch).
fn copies(img: &DynamicImage) -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("jpeg q90", jpeg(img, 90)),
        ("bmp (lossless)", encoded(img, ImageFormat::Bmp)),
        ("jpeg q40", jpeg(img, 40)),
        ("50% png", encoded(&scaled(img, 0.5), ImageFormat::Png)),
        ("30% jpeg q75", jpeg(&scaled(img, 0.3), 75)),
        ("150% jpeg q85", jpeg(&scaled(img, 1.5), 85)),
        (
            "crop 5% each side",
            encoded(&cropped(img, 0.05, 0.05, 0.05, 0.05), ImageFormat::Png),
        ),
        (
            "crop 8% top+left, jpeg",
            jpeg(&cropped(img, 0.08, 0.08, 0.0, 0.0), 85),
        ),
    ]
}

struct Item {
    original: usize,
    transform: &'static str,
    hashes: ImageHashes,
}

#[derive(Default, Clone, Copy)]
struct Score {
    tp: u64,
    fp: u64,
    fn_: u64,
}

impl Score {
    fn precision(&self) -> f64 {
        if self.tp + self.fp == 0 {
            1.0
        } else {
            self.tp as f64 / (self.tp + self.fp) as f64
        }
    }
    fn recall(&self) -> f64 {
        if self.tp + self.fn_ == 0 {
            1.0
        } else {
            self.tp as f64 / (self.tp + self.fn_) as f64
        }
    }
    fn f1(&self) -> f64 {
        let (p, r) = (self.precision(), self.recall());
        if p + r == 0.0 {
            0.0
        } else {
            2.0 * p * r / (p + r)
        }
    }
}

fn score(items: &[Item], kind: HashKind, k: u32) -> Score {
    let mut s = Score::default();
    for (i, a) in items.iter().enumerate() {
        for b in &items[i + 1..] {
            let near = a.hashes.distance(&b.hashes, kind) <= k;
            match (a.original == b.original, near) {
                (true, true) => s.tp += 1,
                (true, false) => s.fn_ += 1,
                (false, true) => s.fp += 1,
                (false, false) => {}
            }
        }
    }
    s
}

#[test]
fn perceptual_hashes_find_reused_real_photos() {
    let dir = data_dir();
    let hasher = ImageHasher::new();
    let mut items = Vec::new();
    for (o, name) in ORIGINALS.iter().enumerate() {
        let bytes = std::fs::read(dir.join(name)).expect("read image");
        let original = imagehash::decode(&bytes).expect("decode original");
        items.push(Item {
            original: o,
            transform: "original",
            hashes: hasher.hash_image(&original),
        });
        for (transform, file) in copies(&original) {
            let hashes = hasher
                .hash_bytes(&file)
                .unwrap_or_else(|e| panic!("{name} {transform}: {e}"));
            items.push(Item {
                original: o,
                transform,
                hashes,
            });
        }
    }
    let per_original = items.len() / ORIGINALS.len();
    let positives = ORIGINALS.len() * per_original * (per_original - 1) / 2;
    let negatives = items.len() * (items.len() - 1) / 2 - positives;
    println!(
        "{} originals x {} versions = {} images; {positives} same-photo pairs, {negatives} different-photo pairs",
        ORIGINALS.len(),
        per_original,
        items.len()
    );

    // A lossless re-encode decodes to the same pixels: distance 0 under every hash.
    for item in items.iter().filter(|i| i.transform == "bmp (lossless)") {
        let original = &items[item.original * per_original].hashes;
        assert_eq!(
            &item.hashes, original,
            "{}: lossless copy hashes differently",
            ORIGINALS[item.original]
        );
    }

    // Which hash finds which copy: distance (original, copy) per transformation.
    println!("\ndistance original -> copy (median / max over originals; found = within the default threshold)");
    print!("{:<24}", "transformation");
    for kind in HashKind::ALL {
        print!("  {:>5} med/max found", kind.name());
    }
    println!();
    let mut by_transform: BTreeMap<&str, Vec<&Item>> = BTreeMap::new();
    for item in items.iter().filter(|i| i.transform != "original") {
        by_transform.entry(item.transform).or_default().push(item);
    }
    for (transform, copies) in &by_transform {
        print!("{transform:<24}");
        for kind in HashKind::ALL {
            let mut d: Vec<u32> = copies
                .iter()
                .map(|c| {
                    items[c.original * per_original]
                        .hashes
                        .distance(&c.hashes, kind)
                })
                .collect();
            d.sort_unstable();
            let found = d.iter().filter(|&&x| x <= kind.threshold()).count();
            print!(
                "  {:>9}/{:<3} {:>2}/{:<2}",
                d[d.len() / 2],
                d[d.len() - 1],
                found,
                d.len()
            );
        }
        println!();
    }

    // Closest different photos under each hash: the false positives to expect.
    println!("\nclosest different photos (originals only)");
    for kind in HashKind::ALL {
        let mut best = (u32::MAX, 0, 0);
        for a in 0..ORIGINALS.len() {
            for b in a + 1..ORIGINALS.len() {
                let d = items[a * per_original]
                    .hashes
                    .distance(&items[b * per_original].hashes, kind);
                best = best.min((d, a, b));
            }
        }
        println!(
            "  {}: {} bits, {} / {}",
            kind.name(),
            best.0,
            ORIGINALS[best.1],
            ORIGINALS[best.2]
        );
    }

    println!("\nprecision / recall over all pairs");
    println!("hash    k     TP     FP     FN  precision  recall     F1");
    let mut at_default = BTreeMap::new();
    for kind in HashKind::ALL {
        for k in [0, 2, 4, 6, 8, 10, 12, 14, 16, 20] {
            let s = score(&items, kind, k);
            let default = k == kind.threshold();
            println!(
                "{:<5} {:>3} {:>6} {:>6} {:>6}  {:>9.3}  {:>6.3}  {:>5.3}{}",
                kind.name(),
                k,
                s.tp,
                s.fp,
                s.fn_,
                s.precision(),
                s.recall(),
                s.f1(),
                if default { "  <- default" } else { "" }
            );
            if default {
                at_default.insert(kind, s);
            }
        }
    }

    // Printed only (see the module docs): a duplicate among the originals, a stereo pair.
    for (a, b) in [
        ("chessboard_GRAY.png", "chessboard_RGB.png"),
        ("motorcycle_left.png", "motorcycle_right.png"),
    ] {
        let ha = hasher
            .hash_bytes(&std::fs::read(dir.join(a)).expect("read"))
            .expect("hash");
        let hb = hasher
            .hash_bytes(&std::fs::read(dir.join(b)).expect("read"))
            .expect("hash");
        let d: Vec<String> = HashKind::ALL
            .iter()
            .map(|&k| format!("{} {}", k.name(), ha.distance(&hb, k)))
            .collect();
        println!("{a} / {b}: {}", d.join(", "));
    }

    // Floors at the default thresholds (measured: see ARCHITECTURE.md).
    for kind in HashKind::ALL {
        let s = at_default[&kind];
        assert!(
            s.precision() >= 0.95,
            "{kind} precision {:.3} under 0.95",
            s.precision()
        );
    }
    let recall = |k: HashKind| at_default[&k].recall();
    for (kind, floor) in [
        (HashKind::Average, 0.80),
        (HashKind::Difference, 0.75),
        (HashKind::Perceptual, 0.72),
    ] {
        assert!(
            recall(kind) >= floor,
            "{kind} recall {:.3} under {floor}",
            recall(kind)
        );
    }
    // Re-encoded, recompressed and resized copies are found (crops are what the hashes
    // disagree on): at most 2 of the 144 missed by any hash, each printed.
    for kind in HashKind::ALL {
        let missed: Vec<String> = items
            .iter()
            .filter(|i| i.transform != "original" && !i.transform.starts_with("crop"))
            .filter(|i| {
                !items[i.original * per_original]
                    .hashes
                    .is_near(&i.hashes, kind)
            })
            .map(|i| {
                format!(
                    "{} {} ({} bits)",
                    ORIGINALS[i.original],
                    i.transform,
                    items[i.original * per_original]
                        .hashes
                        .distance(&i.hashes, kind)
                )
            })
            .collect();
        println!("{kind}: re-encoded/resized copies missed: {missed:?}");
        assert!(missed.len() <= 2, "{kind} misses {missed:?}");
    }
}
