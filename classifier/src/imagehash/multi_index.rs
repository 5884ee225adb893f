//! The multi-index behind [`near_groups`](super::near_groups): the 64 bits cut into
//! blocks (pigeonhole, see [`near_groups_plan`](super::near_groups_plan)), the cheapest
//! block plan under a measured cost model, and the join of the hashes whose block bits
//! lie within a block's radius.

use super::hash::HASH_BITS;
use super::scan::for_each_within;

/// One block of a multi-index plan: `width` bits from bit `shift`, searched within `radius`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Block {
    pub(super) shift: u32,
    pub(super) width: u32,
    pub(super) radius: u32,
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
pub(super) const MAX_BLOCKS: u32 = 16;

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
pub(super) fn blocks(count: u32, threshold: u32) -> Vec<Block> {
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
pub(super) fn volume(width: u32, radius: u32) -> f64 {
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
pub(super) fn plan(m: usize, threshold: u32) -> Option<Vec<Block>> {
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
pub(super) fn join_block(
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
