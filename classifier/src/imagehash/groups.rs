//! Groups of near-duplicate hashes: single linkage ([`near_groups`]) or around the earliest
//! hash of each group ([`leader_groups`]), with their brute-force references. Equal hashes
//! are joined first; the pairs of distinct values within the threshold come from the
//! multi-index ([`super::multi_index`]) or, when that costs more, pair by pair.

use super::hash::{hamming, HASH_BITS};
use super::multi_index::{join_block, plan, Block};
use super::scan::for_each_within;

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

/// Joins `reps[i]` and `reps[j]` for every pair of `values` within `threshold` bits.
fn all_pairs(values: &[u64], reps: &[usize], threshold: u32, link: &mut impl FnMut(usize, usize)) {
    for (i, &x) in values.iter().enumerate() {
        for_each_within(x, &values[i + 1..], threshold, |j| {
            link(reps[i], reps[i + 1 + j]);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::imagehash::multi_index::{blocks, volume, MAX_BLOCKS};
    use crate::imagehash::HashKind;

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
