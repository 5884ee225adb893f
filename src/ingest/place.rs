//! Placement of a batch's pages into packs: K-means clusters per (topic, day) or
//! arrival order.

use packer::{BatchAssignment, Centre};

/// Adds one member to `cluster`'s centre (a running mean), or starts it.
pub(crate) fn fold_into_centre(centres: &mut Vec<Centre>, cluster: u32, vector: &[f32]) {
    match centres.iter_mut().find(|c| c.cluster == cluster) {
        Some(c) if c.centre.len() == vector.len() => {
            let n = c.size as f32;
            for (x, v) in c.centre.iter_mut().zip(vector) {
                *x = (*x * n + v) / (n + 1.0);
            }
            c.size += 1;
        }
        Some(c) => {
            c.centre = vector.to_vec();
            c.size += 1;
        }
        None => centres.push(Centre {
            cluster,
            centre: vector.to_vec(),
            size: 1,
        }),
    }
}

/// Where the pages of a batch go.
pub(crate) struct Placement {
    /// Cluster of each prepared page, in order.
    pub(crate) clusters: Vec<u32>,
    /// New or moved centres, per (topic, day).
    pub(crate) centres: Vec<(String, chrono::NaiveDate, Centre)>,
}

/// Arrival-order packing (the baseline): the newest cluster of the topic/day
/// is filled up to `per_pack` pages, then a new one is started. Centres are
/// kept as size-weighted means all the same, so the modes can be switched.
pub(crate) fn arrival_batch(
    vectors: &[Vec<f32>],
    stored: &[Centre],
    per_pack: usize,
) -> BatchAssignment {
    let per_pack = per_pack.max(1) as u64;
    let mut current = stored
        .iter()
        .max_by_key(|c| c.cluster)
        .cloned()
        .unwrap_or(Centre {
            cluster: 0,
            centre: Vec::new(),
            size: 0,
        });
    let mut clusters = Vec::with_capacity(vectors.len());
    let mut changed: Vec<Centre> = Vec::new();
    for v in vectors {
        if current.size >= per_pack {
            changed.push(current.clone());
            current = Centre {
                cluster: current.cluster + 1,
                centre: Vec::new(),
                size: 0,
            };
        }
        if current.centre.len() != v.len() {
            current.centre = vec![0.0; v.len()];
        }
        let n = current.size as f32;
        for (c, x) in current.centre.iter_mut().zip(v) {
            *c = (*c * n + x) / (n + 1.0);
        }
        current.size += 1;
        clusters.push(current.cluster);
    }
    if !vectors.is_empty() {
        changed.push(current);
    }
    changed.dedup_by_key(|c| c.cluster);
    BatchAssignment {
        clusters,
        centres: changed,
        inertia: 0.0,
        k: 0,
    }
}
