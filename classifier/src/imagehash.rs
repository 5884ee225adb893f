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
/// within `threshold` bits (single linkage). Only groups of two or more are returned, each
/// sorted, the groups in order of their first member.
///
/// Equal hashes are joined first; the distinct values are then searched with a
/// multi-index (see [`near_groups_plan`]) when it costs less than comparing every pair, and
/// pair by pair otherwise (small inputs, thresholds where no block plan helps). The groups are
/// exactly [`near_groups_brute_force`]'s: the index finds every pair within `threshold`.
pub fn near_groups(hashes: &[u64], threshold: u32) -> Vec<Vec<usize>> {
    near_groups_by(hashes, threshold, plan)
}

/// [`near_groups`] with the block plan chosen by `choose(distinct hashes, threshold)`.
fn near_groups_by(
    hashes: &[u64],
    threshold: u32,
    choose: impl FnOnce(usize, u32) -> Option<Vec<Block>>,
) -> Vec<Vec<usize>> {
    let mut sets = DisjointSets::new(hashes.len());
    let (values, reps) = distinct_values(hashes, &mut sets);
    for_each_near_pair(&values, &reps, threshold, choose, &mut |a, b| {
        sets.union(a, b)
    });
    sets.groups()
}

/// Calls `link(a, b)` for pairs of the distinct `values` (representatives `reps`) within
/// `threshold` bits: enough pairs to connect every two values within the threshold, found
/// with the block plan `choose(values, threshold)` gives or, without one, pair by pair. At
/// 64 bits or more every value is near every other: each is linked to the earliest
/// representative only.
fn for_each_near_pair(
    values: &[u64],
    reps: &[usize],
    threshold: u32,
    choose: impl FnOnce(usize, u32) -> Option<Vec<Block>>,
    link: &mut impl FnMut(usize, usize),
) {
    if threshold >= HASH_BITS {
        if let Some(&first) = reps.iter().min() {
            for &r in reps.iter().filter(|&&r| r != first) {
                link(first, r);
            }
        }
    } else if threshold > 0 {
        match choose(values.len(), threshold) {
            Some(blocks) => {
                for block in blocks {
                    join_block(values, reps, block, threshold, link);
                }
            }
            None => all_pairs(values, reps, threshold, link),
        }
    }
}

/// Groups of near-duplicates without chaining: hashes are taken in index order (oldest
/// first), and each joins the group of the earliest group leader within `threshold` bits,
/// else leads a group of its own. Every member is then within `threshold` of its group's
/// first member (single linkage, [`near_groups`], joins unrelated hashes through chains of
/// near ones: a million random 64-bit hashes at 14 bits make one group). Equal hashes share
/// a group. Only groups of two or more are returned, each sorted (its leader first), the
/// groups in order of their leader. Pairs within `threshold` are found as [`near_groups`]
/// finds them; they are held in memory (a few per hash for photos).
pub fn leader_groups(hashes: &[u64], threshold: u32) -> Vec<Vec<usize>> {
    let mut same = DisjointSets::new(hashes.len());
    let (values, reps) = distinct_values(hashes, &mut same);
    // Pairs of distinct values within the threshold, as (later, earlier) representatives.
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    for_each_near_pair(&values, &reps, threshold, plan, &mut |a, b| {
        pairs.push((a.max(b), a.min(b)))
    });
    pairs.sort_unstable();
    pairs.dedup();
    leaders(hashes.len(), &reps, &pairs, same)
}

/// [`leader_groups`] by comparing each hash with every earlier leader, in order: the
/// reference it is tested against.
pub fn leader_groups_brute_force(hashes: &[u64], threshold: u32) -> Vec<Vec<usize>> {
    let mut leaders: Vec<usize> = Vec::new();
    let mut groups: std::collections::BTreeMap<usize, Vec<usize>> = Default::default();
    for (i, &h) in hashes.iter().enumerate() {
        let l = match leaders
            .iter()
            .find(|&&l| hamming(hashes[l], h) <= threshold)
        {
            Some(&l) => l,
            None => {
                leaders.push(i);
                i
            }
        };
        groups.entry(l).or_default().push(i);
    }
    groups.into_values().filter(|g| g.len() > 1).collect()
}

/// The groups of `n` hashes given their distinct values' representatives `reps` (the first
/// index of each value, joined with its equals in `same`) and the `pairs` of
/// representatives within the threshold as (later, earlier), sorted.
fn leaders(
    n: usize,
    reps: &[usize],
    pairs: &[(usize, usize)],
    same: DisjointSets,
) -> Vec<Vec<usize>> {
    let mut order = reps.to_vec();
    order.sort_unstable();
    // leader[r]: the representative leading r's group (r itself for a leader).
    let mut leader: Vec<usize> = (0..n).collect();
    let mut p = 0;
    for &r in &order {
        while p < pairs.len() && pairs[p].0 < r {
            p += 1;
        }
        let start = p;
        while p < pairs.len() && pairs[p].0 == r {
            p += 1;
        }
        // The earliest earlier representative that leads a group.
        if let Some(&(_, l)) = pairs[start..p].iter().find(|&&(_, e)| leader[e] == e) {
            leader[r] = l;
        }
    }
    let mut same = same;
    let mut groups: std::collections::BTreeMap<usize, Vec<usize>> = Default::default();
    for i in 0..n {
        let rep = same.root(i);
        groups.entry(leader[rep]).or_default().push(i);
    }
    groups.into_values().filter(|g| g.len() > 1).collect()
}

/// [`near_groups`] by comparing every pair of hashes (n²/2 XOR + popcount): the reference
/// the index is tested against, and the benchmark's peer.
pub fn near_groups_brute_force(hashes: &[u64], threshold: u32) -> Vec<Vec<usize>> {
    let mut sets = DisjointSets::new(hashes.len());
    let ids: Vec<usize> = (0..hashes.len()).collect();
    all_pairs(hashes, &ids, threshold, &mut |a, b| sets.union(a, b));
    sets.groups()
}

/// The blocks [`near_groups`] would search `distinct` distinct hashes with at `threshold`:
/// (bits, radius) per block, low bits first; `None` when it compares every pair.
///
/// Pigeonhole: the 64 bits are cut into `b` blocks of `w_i` bits with radii `r_i` such that
/// the `r_i + 1` add up to `threshold + 1`; two hashes within `threshold` bits then lie within
/// `r_i` bits of each other on some block `i` (were every block `r_i + 1` or more apart,
/// the whole would be `threshold + 1` or more). Per block, the hashes are sorted into buckets
/// by the block's bits, and every bucket is joined with itself and with the buckets within
/// `r_i` bits of its key (enumerated: `sum(C(w_i, j), j <= r_i)` keys); candidates are
/// verified with the full distance. The plan (2 to 16 blocks) is the cheapest under a cost
/// model measured on this code: table cells, bucket probes, gathered buckets and candidate
/// pairs (a uniform spread of hashes over the block values), against `n²/2` pairs for the
/// pair-by-pair pass. pHash at 14 bits is 4 blocks of 16 bits with radii 3, 3, 3, 2 for
/// 1,000,000 hashes (~3.4% of the pairs become candidates) and 7 blocks of 10 and 9 bits
/// with radii 2, 1, ..., 1 for 10,000.
pub fn near_groups_plan(distinct: usize, threshold: u32) -> Option<Vec<(u32, u32)>> {
    if threshold == 0 || threshold >= HASH_BITS {
        return None;
    }
    plan(distinct, threshold).map(|blocks| blocks.iter().map(|b| (b.width, b.radius)).collect())
}

/// Union-find over indexes; a root is always the smallest index of its set.
struct DisjointSets {
    parent: Vec<usize>,
}

impl DisjointSets {
    fn new(n: usize) -> DisjointSets {
        DisjointSets {
            parent: (0..n).collect(),
        }
    }

    fn root(&mut self, mut i: usize) -> usize {
        while self.parent[i] != i {
            self.parent[i] = self.parent[self.parent[i]];
            i = self.parent[i];
        }
        i
    }

    fn union(&mut self, a: usize, b: usize) {
        let (ra, rb) = (self.root(a), self.root(b));
        if ra != rb {
            self.parent[ra.max(rb)] = ra.min(rb);
        }
    }

    /// Sets of two or more, each sorted, in order of their smallest member.
    fn groups(mut self) -> Vec<Vec<usize>> {
        let mut groups: std::collections::BTreeMap<usize, Vec<usize>> = Default::default();
        for i in 0..self.parent.len() {
            let r = self.root(i);
            groups.entry(r).or_default().push(i);
        }
        groups.into_values().filter(|g| g.len() > 1).collect()
    }
}

/// The distinct values of `hashes` (ascending) and, for each, one index holding it; every
/// other index holding it is joined to that one.
fn distinct_values(hashes: &[u64], sets: &mut DisjointSets) -> (Vec<u64>, Vec<usize>) {
    let mut order: Vec<usize> = (0..hashes.len()).collect();
    order.sort_unstable_by_key(|&i| (hashes[i], i));
    let mut values: Vec<u64> = Vec::new();
    let mut reps: Vec<usize> = Vec::new();
    for i in order {
        match (values.last(), reps.last()) {
            (Some(&v), Some(&r)) if v == hashes[i] => sets.union(r, i),
            _ => {
                values.push(hashes[i]);
                reps.push(i);
            }
        }
    }
    (values, reps)
}

/// Hashes [`for_each_within`] counts at a time.
const CHUNK: usize = 64;

/// Calls `hit(j)` for every `ys[j]` within `threshold` bits of `x`. Most hashes have no
/// neighbour: each chunk of [`CHUNK`] is counted first (a loop the compiler vectorises) and
/// only chunks with a hit are scanned.
#[inline]
fn for_each_within(x: u64, ys: &[u64], threshold: u32, mut hit: impl FnMut(usize)) {
    for (c, chunk) in ys.chunks(CHUNK).enumerate() {
        let hits = chunk
            .iter()
            .filter(|&&y| (x ^ y).count_ones() <= threshold)
            .count();
        if hits == 0 {
            continue;
        }
        for (k, &y) in chunk.iter().enumerate() {
            if (x ^ y).count_ones() <= threshold {
                hit(c * CHUNK + k);
            }
        }
    }
}

/// Joins `reps[i]` and `reps[j]` for every pair of `values` within `threshold` bits.
fn all_pairs(values: &[u64], reps: &[usize], threshold: u32, link: &mut impl FnMut(usize, usize)) {
    for (i, &x) in values.iter().enumerate() {
        for_each_within(x, &values[i + 1..], threshold, |j| {
            link(reps[i], reps[i + 1 + j]);
        });
    }
}

/// One block of a multi-index plan: `width` bits from bit `shift`, searched within `radius`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Block {
    shift: u32,
    width: u32,
    radius: u32,
}

impl Block {
    fn key(&self, h: u64) -> u64 {
        (h >> self.shift) & ((1u64 << self.width) - 1)
    }

    /// Whether the buckets of `m` hashes are a direct table (else a hash map of the keys
    /// present): blocks of up to 16 bits always, wider ones up to [`MAX_DIRECT_BITS`] when
    /// the table is not mostly empty.
    fn direct(&self, m: usize) -> bool {
        self.width <= 16 || (self.width <= MAX_DIRECT_BITS && (m << 4) >> self.width > 0)
    }
}

/// Widest block whose buckets may be a direct table (2^22 offsets, 16 MiB); wider blocks
/// (only in 2-block plans) use a hash map of the keys present.
const MAX_DIRECT_BITS: u32 = 22;
/// Most blocks a plan has.
const MAX_BLOCKS: u32 = 16;

/// Cost of the plan's steps, in units of one distance check (~1 ns), measured on this code
/// (release build, 2,000 to 100,000 uniform hashes, thresholds 6 to 14).
mod cost {
    /// One pair compared.
    pub const PAIR: f64 = 1.0;
    /// One cell of a direct bucket table (zeroed, summed).
    pub const CELL: f64 = 2.0;
    /// One hash sorted into a block's buckets.
    pub const ITEM: f64 = 10.0;
    /// One neighbouring key looked up in a table of at most 2^16 cells (in cache).
    pub const PROBE_SMALL: f64 = 5.0;
    /// The same in a larger direct table.
    pub const PROBE_LARGE: f64 = 7.0;
    /// The same in a hash map.
    pub const PROBE_MAP: f64 = 20.0;
    /// One non-empty neighbouring bucket gathered.
    pub const GATHER: f64 = 12.0;
}

/// The blocks of a `count`-block plan at `threshold`: widths as even as 64 allows, radii
/// `r_i` with `sum(r_i + 1) = threshold + 1`, the larger radii on the wider blocks.
/// `count` is at most `threshold + 1`.
fn blocks(count: u32, threshold: u32) -> Vec<Block> {
    let (width, wider) = (HASH_BITS / count, HASH_BITS % count);
    let (slots, more) = ((threshold + 1) / count, (threshold + 1) % count);
    let mut shift = 0;
    (0..count)
        .map(|i| {
            let b = Block {
                shift,
                width: width + u32::from(i < wider),
                radius: slots + u32::from(i < more) - 1,
            };
            shift += b.width;
            b
        })
        .collect()
}

/// Keys within `radius` bits of 0 in `width` bits: `sum(C(width, j), j <= radius)`.
fn volume(width: u32, radius: u32) -> f64 {
    let (mut sum, mut term) = (0.0, 1.0);
    for j in 0..=radius.min(width) {
        sum += term;
        term *= f64::from(width - j) / f64::from(j + 1);
    }
    sum
}

/// Estimated cost of searching `m` distinct hashes with `blocks`.
fn plan_cost(blocks: &[Block], m: f64) -> f64 {
    blocks
        .iter()
        .map(|b| {
            let cells = f64::from(b.width).exp2();
            let keys = volume(b.width, b.radius);
            // Buckets holding a hash, and the share of cells they are.
            let occupied = cells * (1.0 - (-m / cells).exp());
            let (probe, table) = if b.width <= 16 {
                (cost::PROBE_SMALL, cells * cost::CELL)
            } else if b.direct(m as usize) {
                (cost::PROBE_LARGE, cells * cost::CELL)
            } else {
                (cost::PROBE_MAP, 0.0)
            };
            // Each bucket looks up the half of its neighbours with smaller keys.
            let probes = occupied * (keys - 1.0) / 2.0;
            let gathered = probes * occupied / cells;
            let candidates = m * (m - 1.0) / 2.0 * keys / cells;
            table
                + m * cost::ITEM
                + probes * probe
                + gathered * cost::GATHER
                + candidates * cost::PAIR
        })
        .sum()
}

/// The cheapest block plan for `m` distinct hashes, or `None` when comparing every pair
/// costs less.
fn plan(m: usize, threshold: u32) -> Option<Vec<Block>> {
    if m < 2 || u32::try_from(m).is_err() {
        return None;
    }
    let n = m as f64;
    let mut best = (n * (n - 1.0) / 2.0 * cost::PAIR, None);
    for count in 2..=(threshold + 1).min(MAX_BLOCKS) {
        let plan = blocks(count, threshold);
        let c = plan_cost(&plan, n);
        if c < best.0 {
            best = (c, Some(plan));
        }
    }
    best.1
}

/// Where the hashes of each key of a block lie in the block's sorted arrays.
enum Buckets {
    /// Offsets by key: bucket `k` is `start[k]..start[k + 1]`.
    Direct(Vec<u32>),
    /// Key -> range, for keys present only.
    Sparse(rustc_hash::FxHashMap<u64, (u32, u32)>),
}

impl Buckets {
    fn get(&self, key: u64) -> std::ops::Range<usize> {
        match self {
            Buckets::Direct(start) => {
                // Keys are below 2^MAX_DIRECT_BITS here: the cast is lossless.
                let k = key as usize;
                start[k] as usize..start[k + 1] as usize
            }
            Buckets::Sparse(map) => map.get(&key).map_or(0..0, |&(s, e)| s as usize..e as usize),
        }
    }
}

/// Every pair of `values` within `threshold` bits whose `block` bits lie within the block's
/// radius, joined (as `reps`).
fn join_block(
    values: &[u64],
    reps: &[usize],
    block: Block,
    threshold: u32,
    link: &mut impl FnMut(usize, usize),
) {
    let m = values.len();
    // The hashes sorted by key (ids into `values` beside them).
    let mut hashes = vec![0u64; m];
    let mut ids = vec![0u32; m];
    let buckets = if block.direct(m) {
        let cells = 1usize << block.width;
        let mut start = vec![0u32; cells + 1];
        for &h in values {
            start[block.key(h) as usize + 1] += 1;
        }
        for k in 0..cells {
            start[k + 1] += start[k];
        }
        let mut next = start.clone();
        for (id, &h) in values.iter().enumerate() {
            let slot = &mut next[block.key(h) as usize];
            hashes[*slot as usize] = h;
            ids[*slot as usize] = id as u32;
            *slot += 1;
        }
        Buckets::Direct(start)
    } else {
        let mut order: Vec<u32> = (0..m as u32).collect();
        order.sort_unstable_by_key(|&id| block.key(values[id as usize]));
        let mut map = rustc_hash::FxHashMap::default();
        for (pos, &id) in order.iter().enumerate() {
            let h = values[id as usize];
            hashes[pos] = h;
            ids[pos] = id;
            map.entry(block.key(h))
                .or_insert((pos as u32, pos as u32))
                .1 = pos as u32 + 1;
        }
        Buckets::Sparse(map)
    };
    // Neighbour masks by their highest bit: `k ^ mask < k` exactly when that bit is set in
    // `k`, so each pair of buckets is joined once, from the larger key.
    let mut by_top: Vec<Vec<u64>> = vec![Vec::new(); block.width as usize];
    let mut masks = vec![(0u64, 0u32)];
    for _ in 0..block.radius {
        let mut longer = Vec::new();
        for &(mask, from) in &masks {
            for bit in from..block.width {
                by_top[bit as usize].push(mask | 1 << bit);
                longer.push((mask | 1 << bit, bit + 1));
            }
        }
        masks = longer;
    }
    // One bucket's neighbours gathered into one run, so the distance loop is long.
    let mut near_h: Vec<u64> = Vec::new();
    let mut near_i: Vec<u32> = Vec::new();
    let mut join = |key: u64, own: std::ops::Range<usize>, link: &mut dyn FnMut(usize, usize)| {
        near_h.clear();
        near_i.clear();
        let mut bits = key;
        while bits != 0 {
            let top = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            for &mask in &by_top[top] {
                let other = buckets.get(key ^ mask);
                near_h.extend_from_slice(&hashes[other.clone()]);
                near_i.extend_from_slice(&ids[other]);
            }
        }
        let theirs = near_h.len();
        near_h.extend_from_slice(&hashes[own.clone()]);
        near_i.extend_from_slice(&ids[own]);
        for a in theirs..near_h.len() {
            let (x, xi) = (near_h[a], reps[near_i[a] as usize]);
            // Candidates: the gathered buckets and the later hashes of its own bucket.
            for_each_within(x, &near_h[..theirs], threshold, |b| {
                link(xi, reps[near_i[b] as usize]);
            });
            for_each_within(x, &near_h[a + 1..], threshold, |b| {
                link(xi, reps[near_i[a + 1 + b] as usize]);
            });
        }
    };
    match &buckets {
        Buckets::Direct(start) => {
            for (key, w) in start.windows(2).enumerate() {
                if w[0] < w[1] {
                    join(key as u64, w[0] as usize..w[1] as usize, link);
                }
            }
        }
        Buckets::Sparse(map) => {
            for (&key, &(s, e)) in map {
                join(key, s as usize..e as usize, link);
            }
        }
    }
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

    /// Two pictures, a copy of the first, and hashes that chain from it.
    const CHAIN: [u64; 7] = [
        0,
        0b111,
        0xffff_0000_0000_0000,
        0b1111_1111,
        0xffff_0000_0000_0001,
        0b111,
        0b1111_1111_1111,
    ];

    #[test]
    fn near_groups_join_chains_and_skip_singletons() {
        let hashes = &CHAIN[..6];
        for groups in [near_groups, near_groups_brute_force] {
            assert_eq!(groups(hashes, 3), vec![vec![0, 1, 5], vec![2, 4]]);
            // 0 -> 0b111 (3) -> 0b1111_1111 (5): a chain at 5.
            assert_eq!(groups(hashes, 5), vec![vec![0, 1, 3, 5], vec![2, 4]]);
            // Equal hashes are near at threshold 0 too.
            assert_eq!(groups(hashes, 0), vec![vec![1, 5]]);
            assert_eq!(groups(hashes, 64), vec![vec![0, 1, 2, 3, 4, 5]]);
        }
    }

    #[test]
    fn leader_groups_do_not_chain() {
        let hashes = CHAIN;
        for groups in [leader_groups, leader_groups_brute_force] {
            assert_eq!(groups(&hashes, 3), vec![vec![0, 1, 5], vec![2, 4]]);
            // 0b1111_1111 is 5 from 0b111 but 8 from its leader 0: it leads a group of its
            // own, which 0b1111_1111_1111 (4 from it, 12 from 0) joins; single linkage
            // chains all four.
            assert_eq!(
                groups(&hashes, 5),
                vec![vec![0, 1, 5], vec![2, 4], vec![3, 6]]
            );
            assert_eq!(
                near_groups(&hashes, 5),
                vec![vec![0, 1, 3, 5, 6], vec![2, 4]]
            );
            assert_eq!(groups(&hashes, 0), vec![vec![1, 5]]);
            assert_eq!(groups(&hashes, 64), vec![vec![0, 1, 2, 3, 4, 5, 6]]);
        }
    }

    #[test]
    fn leader_groups_on_thousands_of_hashes_equal_the_reference() {
        for kind in HashKind::ALL {
            let t = kind.threshold();
            let hashes = planted(6_000, t, u64::from(t) + 7);
            let want = leader_groups_brute_force(&hashes, t);
            assert!(want.len() > 100, "{kind}: {} groups", want.len());
            let got = leader_groups(&hashes, t);
            assert_eq!(got, want, "{kind}");
            // Every member within the threshold of its group's first.
            for g in &got {
                assert!(g.iter().all(|&m| hamming(hashes[g[0]], hashes[m]) <= t));
            }
        }
    }

    #[test]
    fn block_plans_cover_the_threshold() {
        for threshold in 1..HASH_BITS {
            for count in 2..=(threshold + 1).min(MAX_BLOCKS) {
                let plan = blocks(count, threshold);
                assert_eq!(plan.iter().map(|b| b.width).sum::<u32>(), HASH_BITS);
                assert_eq!(
                    plan.iter().map(|b| b.radius + 1).sum::<u32>(),
                    threshold + 1,
                    "{count} blocks at {threshold}: {plan:?}"
                );
                assert!(plan
                    .windows(2)
                    .all(|w| w[1].shift == w[0].shift + w[0].width));
            }
        }
        // Small inputs compare every pair; large ones use the index.
        assert_eq!(near_groups_plan(50, 14), None);
        assert!(near_groups_plan(10_000, 14).is_some());
        assert!(near_groups_plan(1_000_000, 14).is_some());
        assert!(near_groups_plan(1_000_000, 3).is_some());
    }

    /// Hashes spread like real ones: distinct pictures ~32 bits apart, and near copies of
    /// some of them (a chain may run from a copy of a copy) from 0 up to a few bits past the
    /// threshold.
    fn planted(n: usize, threshold: u32, seed: u64) -> Vec<u64> {
        let mut state = seed;
        let mut next = move || {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        let mut out: Vec<u64> = Vec::with_capacity(n);
        while out.len() < n {
            if out.is_empty() || next() % 4 != 0 {
                out.push(next());
            } else {
                let mut h = out[(next() % out.len() as u64) as usize];
                for _ in 0..next() % u64::from(threshold + 4) {
                    h ^= 1 << (next() % 64);
                }
                out.push(h);
            }
        }
        out
    }

    #[test]
    fn near_groups_on_thousands_of_hashes_equal_all_pairs() {
        // Large enough that the plan is an index at every default threshold.
        for kind in HashKind::ALL {
            let t = kind.threshold();
            let hashes = planted(6_000, t, u64::from(t));
            assert!(near_groups_plan(6_000, t).is_some(), "{kind}: an index");
            let want = near_groups_brute_force(&hashes, t);
            assert!(want.len() > 100, "{kind}: {} groups", want.len());
            assert_eq!(near_groups(&hashes, t), want, "{kind}");
        }
    }

    use proptest::prelude::*;

    fn hash_sets() -> impl Strategy<Value = (Vec<u64>, u32)> {
        // Random hashes, hashes of few distinct block values (full buckets), and near copies
        // of earlier ones at up to 20 bits, under a threshold of 0 to 20 bits.
        let base = prop::collection::vec(
            prop_oneof![
                any::<u64>(),
                any::<u16>().prop_map(|v| u64::from(v) * 0x0001_0001_0001_0001)
            ],
            1..100,
        );
        let copies = prop::collection::vec(
            (
                any::<prop::sample::Index>(),
                prop::collection::vec(0u32..64, 0..=20),
            ),
            0..100,
        );
        (base, copies, 0u32..=20).prop_map(|(mut hashes, copies, threshold)| {
            for (from, flips) in copies {
                let mut h = hashes[from.index(hashes.len())];
                for bit in flips {
                    h ^= 1 << bit;
                }
                hashes.push(h);
            }
            (hashes, threshold)
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 128,
            failure_persistence: None,
            ..ProptestConfig::default()
        })]

        /// Every block plan finds the groups of the pair-by-pair pass.
        #[test]
        fn index_groups_equal_all_pairs_groups((hashes, threshold) in hash_sets()) {
            let want = near_groups_brute_force(&hashes, threshold);
            prop_assert_eq!(&near_groups(&hashes, threshold), &want);
            prop_assert_eq!(
                leader_groups(&hashes, threshold),
                leader_groups_brute_force(&hashes, threshold)
            );
            for count in 2..=(threshold + 1).min(MAX_BLOCKS) {
                let plan = blocks(count, threshold);
                // Plans that enumerate millions of keys a block are never chosen.
                if plan.iter().any(|b| volume(b.width, b.radius) > 1e4) {
                    continue;
                }
                let got = near_groups_by(&hashes, threshold, |_, _| Some(plan));
                prop_assert_eq!(&got, &want, "{} blocks", count);
            }
        }
    }
}
