//! The distance scan every near-pair search ends in: one hash against a run of hashes,
//! counted a chunk at a time. Shared by the pair-by-pair pass and the multi-index.

/// Hashes [`for_each_within`] counts at a time.
const CHUNK: usize = 64;

/// Calls `hit(j)` for every `ys[j]` within `threshold` bits of `x`. Most hashes have no
/// neighbour: each chunk of [`CHUNK`] is counted first (a loop the compiler vectorises) and
/// only chunks with a hit are scanned.
#[inline]
pub(super) fn for_each_within(x: u64, ys: &[u64], threshold: u32, mut hit: impl FnMut(usize)) {
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
