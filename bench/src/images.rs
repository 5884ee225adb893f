//! `harvest bench images`: the seed's duplicate-finder workload (issue 12) —
//! 10,000 image files with 1% duplicates, exact and perceptual — beside the
//! issue's figure for the seed (112 s) and beside Python `imagehash` (PyPI,
//! pinned in `deploy/data/setup-peers.sh`) on the same files in the same run.
//!
//! The files are made from real images (scikit-image 0.25.2's sample
//! images, `deploy/data/fetch-images.sh`): every image at six scales cut
//! into 64x64 tiles, flat tiles (grey standard deviation under 16: blank
//! paper, sky, chessboard squares, the same picture as each other) left
//! out, each tile in four orientations (as is, mirrored,
//! flipped, turned half way: different pictures to a perceptual hash), in
//! a seeded random order; two thirds PNG, one third JPEG q85. Then 1% of the
//! files are duplicates of others: half byte-for-byte copies, half
//! re-encoded copies (JPEG q75, resized to 150% or 75%). Files are made
//! before the clock starts.
//!
//! Timed, on one thread (the peer is one Python process): list and read
//! every file; exact duplicates (files grouped by size, then the WARC
//! payload digest, SHA-1, of every file whose size is shared); decode and
//! hash every file (aHash, dHash, pHash: `classifier::imagehash`); all
//! near-duplicate groups per hash at its default threshold
//! (`imagehash::near_groups`). Printed: time per step, files/s, the planted
//! duplicates each hash finds, and pairs of different tiles it joins.
//!
//! Then grouping at scale (pHash, threshold 14, as `harvest dedup` groups):
//! `near_groups` (multi-index) beside `near_groups_brute_force` (every pair)
//! on the real pHashes of the run, and on 10,000 and 1,000,000
//! (`HARVEST_BENCH_PHASHES`) synthetic pHashes: values with 32 of 64 bits
//! set, as pHash's median threshold gives, 1% of them near copies of an
//! earlier one (0 to 14 bits flipped). The pair-by-pair pass runs on a
//! sample of at most 40,000 and is extrapolated by n²; the groups of both
//! are compared on that sample.

use std::collections::{BTreeMap, HashMap};
use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use classifier::imagehash::{self, HashKind, ImageHasher, ImageHashes};
use image::codecs::jpeg::JpegEncoder;
use image::imageops::FilterType;
use image::{DynamicImage, ImageFormat};

use crate::cli::BenchArgs;
use crate::reposts::Rng;

/// Files of the workload (env overrides the seed's 10,000).
const FILES_ENV: &str = "HARVEST_BENCH_IMAGES";
/// Synthetic pHashes of the large grouping run (env overrides the million).
const PHASHES_ENV: &str = "HARVEST_BENCH_PHASHES";
/// Largest pair-by-pair grouping run (larger inputs are sampled, extrapolated by n²).
const BRUTE_SAMPLE: usize = 40_000;
/// The issue's figure for the seed's duplicate finder on this workload.
const SEED_SECONDS: f64 = 112.0;
const TILE: u32 = 64;
const SCALES: [f32; 6] = [1.0, 0.8, 0.64, 0.5, 0.4, 0.32];

/// The peer: argv[1] = folder, argv[2] = JSON manifest {"planted": [[dup,
/// original], ...], "origin": {file: id}, "thresholds": {...}}; prints one
/// JSON line.
const PEER_SCRIPT: &str = r#"
import hashlib, json, os, sys, time
import numpy as np
from PIL import Image
import imagehash
try:
    from importlib.metadata import version
    peer_version = version("imagehash")
except Exception:
    peer_version = "?"
folder, manifest = sys.argv[1], json.load(open(sys.argv[2]))
out = {"version": peer_version}
t0 = time.perf_counter()
names = sorted(os.listdir(folder))
data = {}
for n in names:
    with open(os.path.join(folder, n), "rb") as f:
        data[n] = f.read()
t1 = time.perf_counter()
by_size = {}
for n in names:
    by_size.setdefault(len(data[n]), []).append(n)
groups = {}
for size, members in by_size.items():
    if len(members) > 1:
        for n in members:
            groups.setdefault(hashlib.sha1(data[n]).digest(), []).append(n)
exact = [g for g in groups.values() if len(g) > 1]
t2 = time.perf_counter()
hashes = {"ahash": [], "dhash": [], "phash": []}
import io
for n in names:
    img = Image.open(io.BytesIO(data[n]))
    img.load()
    hashes["ahash"].append(int(str(imagehash.average_hash(img)), 16))
    hashes["dhash"].append(int(str(imagehash.dhash(img)), 16))
    hashes["phash"].append(int(str(imagehash.phash(img)), 16))
t3 = time.perf_counter()
index = {n: i for i, n in enumerate(names)}
pairs = {}
for kind, hs in hashes.items():
    arr = np.array(hs, dtype=np.uint64)
    k = manifest["thresholds"][kind]
    found = []
    for i in range(len(arr) - 1):
        d = np.bitwise_count(arr[i + 1:] ^ arr[i])
        for j in np.nonzero(d <= k)[0]:
            found.append((i, i + 1 + int(j)))
    pairs[kind] = found
t4 = time.perf_counter()
origin = manifest["origin"]
out.update({"read_s": t1 - t0, "exact_s": t2 - t1, "hash_s": t3 - t2, "near_s": t4 - t3,
            "total_s": t4 - t0, "exact_groups": len(exact),
            "exact_files": sum(len(g) for g in exact)})
exact_sets = [set(g) for g in exact]
out["planted_exact_found"] = sum(
    1 for d, o, kind in manifest["planted"] if kind == "exact" and any(d in g and o in g for g in exact_sets))
for kind, found in pairs.items():
    s = set(found)
    hit = 0
    for d, o, pk in manifest["planted"]:
        if pk != "near":
            continue
        a, b = sorted((index[d], index[o]))
        hit += (a, b) in s
    out[kind + "_near_found"] = hit
    out[kind + "_pairs"] = len(found)
    out[kind + "_false_pairs"] = sum(1 for a, b in found if origin[names[a]] != origin[names[b]])
print(json.dumps(out))
"#;

/// A file of the workload: its name and the id of the tile it shows.
struct Planted {
    /// (duplicate, original, "exact" | "near").
    pairs: Vec<(String, String, &'static str)>,
    /// File -> id of the tile it shows (a duplicate has its original's).
    origin: BTreeMap<String, usize>,
}

fn jpeg(img: &DynamicImage, quality: u8) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    JpegEncoder::new_with_quality(&mut out, quality)
        .encode_image(&DynamicImage::ImageRgb8(img.to_rgb8()))?;
    Ok(out)
}

fn png(img: &DynamicImage) -> Result<Vec<u8>> {
    let mut out = Cursor::new(Vec::new());
    img.write_to(&mut out, ImageFormat::Png)?;
    Ok(out.into_inner())
}

/// Minimum standard deviation of a tile's grey levels: flatter tiles (blank
/// page, sky, the chessboard's squares) are the same picture as each other.
const MIN_TILE_STDDEV: f64 = 16.0;

fn flat(grey: &image::GrayImage, x: u32, y: u32) -> bool {
    let (mut sum, mut sq) = (0f64, 0f64);
    for yy in y..y + TILE {
        for xx in x..x + TILE {
            let v = f64::from(grey.get_pixel(xx, yy).0[0]);
            sum += v;
            sq += v * v;
        }
    }
    let n = f64::from(TILE * TILE);
    let mean = sum / n;
    (sq / n - mean * mean).max(0.0).sqrt() < MIN_TILE_STDDEV
}

/// Writes the workload's files into `dir`.
fn make_files(sources: &Path, dir: &Path, n: usize) -> Result<Planted> {
    let mut names: Vec<PathBuf> = std::fs::read_dir(sources)
        .with_context(|| format!("{}: run deploy/data/fetch-images.sh", sources.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "png" || e == "jpg"))
        .collect();
    names.sort();
    if names.is_empty() {
        bail!(
            "no images in {}: run deploy/data/fetch-images.sh",
            sources.display()
        );
    }
    // Every image at every scale, and the tiles they hold.
    let mut scaled: Vec<DynamicImage> = Vec::new();
    let mut tiles: Vec<(usize, u32, u32, u8)> = Vec::new();
    for p in &names {
        let img = imagehash::decode(&std::fs::read(p)?)
            .with_context(|| format!("decoding {}", p.display()))?;
        for s in SCALES {
            let w = (img.width() as f32 * s) as u32;
            let h = (img.height() as f32 * s) as u32;
            if w < TILE || h < TILE {
                continue;
            }
            let im = img.resize_exact(w, h, FilterType::Triangle);
            let grey = im.to_luma8();
            for ty in 0..h / TILE {
                for tx in 0..w / TILE {
                    if flat(&grey, tx * TILE, ty * TILE) {
                        continue;
                    }
                    for orient in 0..4 {
                        tiles.push((scaled.len(), tx * TILE, ty * TILE, orient));
                    }
                }
            }
            scaled.push(im);
        }
    }
    let dups = n / 100;
    let distinct = n - dups;
    if tiles.len() < distinct {
        bail!(
            "{} tiles from {} images, {distinct} needed",
            tiles.len(),
            names.len()
        );
    }
    let mut rng = Rng(112);
    for i in (1..tiles.len()).rev() {
        tiles.swap(i, rng.below(i + 1));
    }
    let mut origin = BTreeMap::new();
    let mut files: Vec<String> = Vec::with_capacity(distinct);
    for (id, &(si, x, y, orient)) in tiles.iter().take(distinct).enumerate() {
        let t = scaled[si].crop_imm(x, y, TILE, TILE);
        let t = match orient {
            0 => t,
            1 => t.fliph(),
            2 => t.flipv(),
            _ => t.rotate180(),
        };
        let (name, bytes) = if id % 3 == 2 {
            (format!("img{id:05}.jpg"), jpeg(&t, 85)?)
        } else {
            (format!("img{id:05}.png"), png(&t)?)
        };
        std::fs::write(dir.join(&name), bytes)?;
        origin.insert(name.clone(), id);
        files.push(name);
    }
    let mut pairs = Vec::new();
    for d in 0..dups {
        let o = rng.below(distinct);
        let original = &files[o];
        let bytes = std::fs::read(dir.join(original))?;
        let (name, kind, out) = if d % 2 == 0 {
            let ext = original.rsplit('.').next().unwrap_or("png");
            (format!("dup{d:04}.{ext}"), "exact", bytes)
        } else {
            let img = imagehash::decode(&bytes)?;
            let f = if d % 4 == 1 { 1.5 } else { 0.75 };
            let s = (TILE as f32 * f) as u32;
            let img = img.resize_exact(s, s, FilterType::Triangle);
            (format!("dup{d:04}.jpg"), "near", jpeg(&img, 75)?)
        };
        std::fs::write(dir.join(&name), out)?;
        origin.insert(name.clone(), o);
        pairs.push((name, original.clone(), kind));
    }
    Ok(Planted { pairs, origin })
}

/// Our run's figures.
struct Ours {
    read_s: f64,
    exact_s: f64,
    hash_s: f64,
    near_s: f64,
    exact_groups: Vec<Vec<usize>>,
    near: Vec<(HashKind, Vec<Vec<usize>>)>,
    hashes: Vec<ImageHashes>,
    names: Vec<String>,
}

fn run_ours(dir: &Path) -> Result<Ours> {
    let t0 = Instant::now();
    let mut names: Vec<String> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    names.sort();
    let data: Vec<Vec<u8>> = names
        .iter()
        .map(|n| std::fs::read(dir.join(n)))
        .collect::<std::io::Result<_>>()?;
    let read_s = t0.elapsed().as_secs_f64();

    let t1 = Instant::now();
    let mut by_size: HashMap<usize, Vec<usize>> = HashMap::new();
    for (i, d) in data.iter().enumerate() {
        by_size.entry(d.len()).or_default().push(i);
    }
    let mut by_digest: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for members in by_size.values().filter(|m| m.len() > 1) {
        for &i in members {
            by_digest
                .entry(packer::warc::payload_digest(&data[i]))
                .or_default()
                .push(i);
        }
    }
    let exact_groups: Vec<Vec<usize>> = by_digest.into_values().filter(|g| g.len() > 1).collect();
    let exact_s = t1.elapsed().as_secs_f64();

    let t2 = Instant::now();
    let hasher = ImageHasher::new();
    let hashes: Vec<ImageHashes> = data
        .iter()
        .zip(&names)
        .map(|(d, n)| hasher.hash_bytes(d).with_context(|| format!("hashing {n}")))
        .collect::<Result<_>>()?;
    let hash_s = t2.elapsed().as_secs_f64();

    let t3 = Instant::now();
    let near = HashKind::ALL
        .iter()
        .map(|&k| {
            let hs: Vec<u64> = hashes.iter().map(|h| h.get(k)).collect();
            (k, imagehash::near_groups(&hs, k.threshold()))
        })
        .collect();
    let near_s = t3.elapsed().as_secs_f64();
    Ok(Ours {
        read_s,
        exact_s,
        hash_s,
        near_s,
        exact_groups,
        near,
        hashes,
        names,
    })
}

fn run_peer(python: &Path, dir: &Path, manifest: &Path) -> Result<Option<serde_json::Value>> {
    if !python.exists() {
        eprintln!(
            "harvest: {} missing: the Python imagehash peer is skipped (deploy/data/setup-peers.sh sets it up)",
            python.display()
        );
        return Ok(None);
    }
    crate::run_python_peer(python, PEER_SCRIPT, &[dir, manifest], "imagehash").map(Some)
}

pub fn run(args: &BenchArgs) -> Result<()> {
    let n: usize = std::env::var(FILES_ENV)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    if args.dir.exists() {
        std::fs::remove_dir_all(&args.dir)
            .with_context(|| format!("cannot wipe {}", args.dir.display()))?;
    }
    let files_dir = args.dir.join("files");
    std::fs::create_dir_all(&files_dir)
        .with_context(|| format!("cannot create {}", files_dir.display()))?;
    eprintln!("harvest: making {n} image files in {}", files_dir.display());
    let planted = make_files(&args.images, &files_dir, n)?;
    let bytes: u64 = std::fs::read_dir(&files_dir)?
        .filter_map(|e| e.ok()?.metadata().ok())
        .map(|m| m.len())
        .sum();
    let manifest = args.dir.join("manifest.json");
    let thresholds: BTreeMap<&str, u32> = HashKind::ALL
        .iter()
        .map(|k| (k.name(), k.threshold()))
        .collect();
    std::fs::write(
        &manifest,
        serde_json::to_vec(&serde_json::json!({
            "planted": planted.pairs.iter().map(|(d, o, k)| serde_json::json!([d, o, k])).collect::<Vec<_>>(),
            "origin": planted.origin,
            "thresholds": thresholds,
        }))?,
    )?;

    let ours = run_ours(&files_dir)?;
    let peer = run_peer(&args.python, &files_dir, &manifest)?;

    // Planted duplicates found, and pairs of different tiles joined.
    let index: HashMap<&str, usize> = ours
        .names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    let origin_of = |i: usize| planted.origin[&ours.names[i]];
    let exact_found = planted
        .pairs
        .iter()
        .filter(|(_, _, k)| *k == "exact")
        .filter(|(d, o, _)| {
            ours.exact_groups
                .iter()
                .any(|g| g.contains(&index[d.as_str()]) && g.contains(&index[o.as_str()]))
        })
        .count();
    let exact_planted = planted.pairs.iter().filter(|p| p.2 == "exact").count();
    let near_planted = planted.pairs.iter().filter(|p| p.2 == "near").count();
    let total = ours.read_s + ours.exact_s + ours.hash_s + ours.near_s;
    let pf = |key: &str| peer.as_ref().and_then(|p| p[key].as_f64());

    println!(
        "duplicate finder: {} files ({:.1} MB; {} exact + {} re-encoded duplicates planted), one thread",
        ours.names.len(),
        bytes as f64 / 1e6,
        exact_planted,
        near_planted
    );
    println!(
        "harvest (classifier::imagehash) vs Python imagehash {} (PyPI) in the same run; the seed's figure is the issue's",
        peer.as_ref()
            .and_then(|p| p["version"].as_str())
            .unwrap_or("(missing)")
    );
    println!();
    let secs = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.2} s"));
    println!(
        "{:<44} {:>12} {:>12} {:>8}",
        "", "harvest", "imagehash", "ratio"
    );
    for (label, ours_s, key) in [
        ("read every file", ours.read_s, "read_s"),
        ("exact: size groups + SHA-1", ours.exact_s, "exact_s"),
        ("decode + aHash + dHash + pHash", ours.hash_s, "hash_s"),
        ("near-duplicate pairs, 3 hashes", ours.near_s, "near_s"),
        ("total", total, "total_s"),
    ] {
        let ratio = pf(key).map_or("-".into(), |p| format!("{:.1}x", p / ours_s));
        println!(
            "{label:<44} {:>12} {:>12} {:>8}",
            format!("{ours_s:.2} s"),
            secs(pf(key)),
            ratio
        );
    }
    println!(
        "{:<44} {:>12} {:>12} {:>8}",
        "files/s",
        format!("{:.0}", ours.names.len() as f64 / total),
        pf("total_s").map_or("-".into(), |t| format!(
            "{:.0}",
            ours.names.len() as f64 / t
        )),
        ""
    );
    println!(
        "{:<44} {:>12} {:>12} {:>8}",
        "seed's duplicate finder (issue 12's figure)",
        format!("{SEED_SECONDS:.0} s"),
        "",
        format!("{:.0}x", SEED_SECONDS / total)
    );
    println!();
    println!(
        "exact duplicates found: harvest {exact_found}/{exact_planted} ({} groups), imagehash {}/{exact_planted}",
        ours.exact_groups.len(),
        pf("planted_exact_found").map_or("-".into(), |v| format!("{v:.0}"))
    );
    println!(
        "{:<7} {:>9} {:>22} {:>28} {:>22}",
        "hash",
        "threshold",
        "re-encoded found",
        "pairs of different tiles",
        "imagehash found / diff"
    );
    for (kind, groups) in &ours.near {
        let mut group_of = vec![usize::MAX; ours.names.len()];
        for (g, members) in groups.iter().enumerate() {
            for &m in members {
                group_of[m] = g;
            }
        }
        let found = planted
            .pairs
            .iter()
            .filter(|(_, _, k)| *k == "near")
            .filter(|(d, o, _)| {
                let (a, b) = (index[d.as_str()], index[o.as_str()]);
                group_of[a] != usize::MAX && group_of[a] == group_of[b]
            })
            .count();
        // Direct pairs of different tiles within the threshold.
        let hs: Vec<u64> = ours.hashes.iter().map(|h| h.get(*kind)).collect();
        let mut false_pairs = 0u64;
        for i in 0..hs.len() {
            for j in i + 1..hs.len() {
                if imagehash::hamming(hs[i], hs[j]) <= kind.threshold()
                    && origin_of(i) != origin_of(j)
                {
                    false_pairs += 1;
                }
            }
        }
        let peer_cell = match (
            pf(&format!("{}_near_found", kind.name())),
            pf(&format!("{}_false_pairs", kind.name())),
        ) {
            (Some(f), Some(fp)) => format!("{f:.0}/{near_planted} / {fp:.0}"),
            _ => "-".into(),
        };
        println!(
            "{:<7} {:>9} {:>22} {:>28} {:>22}",
            kind.name(),
            kind.threshold(),
            format!("{found}/{near_planted}"),
            false_pairs,
            peer_cell
        );
    }
    println!();
    println!(
        "(pairs of different tiles: two 64x64 cuts of real images within the threshold; low-contrast textures — grass, gravel, cells — look alike at 8x8)"
    );
    println!();
    let real: Vec<u64> = ours
        .hashes
        .iter()
        .map(|h| h.get(HashKind::Perceptual))
        .collect();
    let large: usize = std::env::var(PHASHES_ENV)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    grouping_at_scale(&real, &[10_000, large])
}

/// `n` synthetic pHashes: 32 of 64 bits set (pHash's median threshold), 1% of them near copies
/// of an earlier one with 0 to `threshold` bits flipped.
fn synthetic_phashes(n: usize, threshold: u32, seed: u64) -> Vec<u64> {
    let mut rng = Rng(seed);
    let mut out: Vec<u64> = Vec::with_capacity(n);
    while out.len() < n {
        if !out.is_empty() && rng.below(100) == 0 {
            let mut h = out[rng.below(out.len())];
            for _ in 0..rng.below(threshold as usize + 1) {
                h ^= 1 << rng.below(64);
            }
            out.push(h);
        } else {
            let mut h = rng.next_u64();
            while h.count_ones() != 32 {
                let bit = 1u64 << rng.below(64);
                if (h.count_ones() > 32) == (h & bit != 0) {
                    h ^= bit;
                }
            }
            out.push(h);
        }
    }
    out
}

/// One grouping run: the index on every hash, every pair on a sample (extrapolated by n²).
struct Grouping {
    n: usize,
    plan: String,
    index_s: f64,
    groups: usize,
    /// Members of the largest group.
    largest: usize,
    sample: usize,
    sample_brute_s: f64,
    /// The index's groups of the sample equal the brute force's.
    agree: bool,
    /// Leader groups (what `harvest dedup` reports): time, count, largest.
    leader_s: f64,
    leader_groups: usize,
    leader_largest: usize,
    /// The leader groups of the sample equal the reference's.
    leader_agree: bool,
}

impl Grouping {
    fn brute_s(&self) -> f64 {
        let scale = self.n as f64 / self.sample as f64;
        self.sample_brute_s * scale * scale
    }
}

fn group(hashes: &[u64], threshold: u32) -> Grouping {
    let mut distinct = hashes.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    let plan = imagehash::near_groups_plan(distinct.len(), threshold).map_or_else(
        || "every pair".to_string(),
        |blocks| {
            let cut: Vec<String> = blocks.iter().map(|(w, r)| format!("{w}/{r}")).collect();
            format!("{} blocks (bits/radius {})", blocks.len(), cut.join(" "))
        },
    );
    let t0 = Instant::now();
    let found = imagehash::near_groups(hashes, threshold);
    let index_s = t0.elapsed().as_secs_f64();
    let sample = &hashes[..hashes.len().min(BRUTE_SAMPLE)];
    let t1 = Instant::now();
    let brute = imagehash::near_groups_brute_force(sample, threshold);
    let sample_brute_s = t1.elapsed().as_secs_f64();
    let agree = imagehash::near_groups(sample, threshold) == brute;
    let t2 = Instant::now();
    let leaders = imagehash::leader_groups(hashes, threshold);
    let leader_s = t2.elapsed().as_secs_f64();
    // The reference compares each hash with every leader: a smaller sample.
    let small = &sample[..sample.len().min(BRUTE_SAMPLE / 4)];
    let leader_agree = imagehash::leader_groups(small, threshold)
        == imagehash::leader_groups_brute_force(small, threshold);
    Grouping {
        leader_s,
        leader_groups: leaders.len(),
        leader_largest: leaders.iter().map(Vec::len).max().unwrap_or(0),
        leader_agree,
        n: hashes.len(),
        plan,
        index_s,
        groups: found.len(),
        largest: found.iter().map(Vec::len).max().unwrap_or(0),
        sample: sample.len(),
        sample_brute_s,
        agree,
    }
}

/// Grouping time of `near_groups` beside every pair, pHash at its threshold.
fn grouping_at_scale(real: &[u64], sizes: &[usize]) -> Result<()> {
    let t = HashKind::Perceptual.threshold();
    println!("near-duplicate groups, pHash within {t} bits, one thread: multi-index vs every pair (same run)");
    println!(
        "{:<28} {:>8} {:>8} {:>10} {:>12} {:>7}  plan",
        "hashes", "groups", "largest", "index", "every pair", "ratio"
    );
    let mut runs = vec![(format!("{} real pHashes", real.len()), group(real, t))];
    for (i, &n) in sizes.iter().enumerate() {
        eprintln!("harvest: grouping {n} synthetic pHashes");
        let hashes = synthetic_phashes(n, t, 1_000 + i as u64);
        runs.push((format!("{n} synthetic pHashes"), group(&hashes, t)));
    }
    for (name, g) in &runs {
        let brute = if g.sample == g.n {
            format!("{:.3} s", g.brute_s())
        } else {
            format!("~{:.0} s", g.brute_s())
        };
        println!(
            "{name:<28} {:>8} {:>8} {:>10} {:>12} {:>6.0}x  {}",
            g.groups,
            g.largest,
            format!("{:.3} s", g.index_s),
            brute,
            g.brute_s() / g.index_s.max(1e-9),
            g.plan
        );
        if g.sample < g.n {
            println!(
                "{:<28} every pair on {} of them: {:.2} s, x{:.0} for {}",
                "",
                g.sample,
                g.sample_brute_s,
                (g.n as f64 / g.sample as f64).powi(2),
                g.n
            );
        }
    }
    println!(
        "leader groups (harvest dedup: each image within {t} bits of its group's first, no chains)"
    );
    println!(
        "{:<28} {:>8} {:>8} {:>10}",
        "hashes", "groups", "largest", "time"
    );
    for (name, g) in &runs {
        println!(
            "{name:<28} {:>8} {:>8} {:>10}",
            g.leader_groups,
            g.leader_largest,
            format!("{:.3} s", g.leader_s)
        );
    }
    let disagree: Vec<&str> = runs
        .iter()
        .filter(|(_, g)| !g.agree || !g.leader_agree)
        .map(|(name, _)| name.as_str())
        .collect();
    if !disagree.is_empty() {
        bail!("the index's groups differ from the reference's on: {disagree:?}");
    }
    println!(
        "(groups of the index = groups of every pair on each sample; largest: members of the largest group — unrelated hashes within {t} bits chain into one)"
    );
    Ok(())
}
