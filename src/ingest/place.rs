//! Placement of a batch's pages into packs: K-means clusters per (topic, day) or
//! arrival order.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::{Context, Result};
use packer::{BatchAssignment, Centre};

use crate::config::PackingMode;

use super::batch::Prepared;
use super::index::READ_THREADS;
use super::store::Ingest;

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

impl Ingest {
    /// The stored cluster centres of each (topic, day), read side by side
    /// on a remote store (a scan each).
    fn read_centres(
        &self,
        groups: &[&(String, chrono::NaiveDate)],
    ) -> Result<Vec<Vec<indexer::ClusterRow>>> {
        let index = self.reader();
        let read = |(topic, day): &(String, chrono::NaiveDate)| {
            index
                .clusters(topic, *day)
                .with_context(|| format!("reading the cluster centres of {topic} {day}"))
        };
        if groups.len() < 2 || !index.store().remote() {
            return groups.iter().map(|g| read(g)).collect();
        }
        let mut out = Vec::with_capacity(groups.len());
        for chunk in groups.chunks(READ_THREADS) {
            let read = &read;
            let answers: Vec<Result<Vec<indexer::ClusterRow>>> = std::thread::scope(|scope| {
                let handles: Vec<_> = chunk.iter().map(|g| scope.spawn(move || read(g))).collect();
                handles
                    .into_iter()
                    .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                    .collect()
            });
            for a in answers {
                out.push(a?);
            }
        }
        Ok(out)
    }

    /// The cluster (pack) of every page: per (topic, day), K-means against the
    /// stored centres of that topic/day, or arrival order.
    pub(super) fn place(&self, prepared: &[Prepared]) -> Result<Placement> {
        let mut groups: BTreeMap<(String, chrono::NaiveDate), Vec<usize>> = BTreeMap::new();
        for (i, p) in prepared.iter().enumerate() {
            groups.entry((p.topic.clone(), p.day)).or_default().push(i);
        }
        let opts = &self.cfg.packing.kmeans;
        let mut clusters = vec![0u32; prepared.len()];
        let mut centres = Vec::new();
        let group_keys: Vec<&(String, chrono::NaiveDate)> = groups.keys().collect();
        let mut stored_of = self.read_centres(&group_keys)?.into_iter();
        for ((topic, day), members) in groups {
            let (kept, members): (Vec<usize>, Vec<usize>) = members
                .into_iter()
                .partition(|&i| prepared[i].stored.is_some());
            let mut stored: Vec<Centre> = stored_of
                .next()
                .unwrap_or_default()
                .into_iter()
                .map(|r| Centre {
                    cluster: r.cluster,
                    centre: r.centre,
                    size: r.size,
                })
                .collect();
            // Pages already in a pack stay in its cluster; its centre moves
            // to take them in, as it did when they were placed.
            let mut moved_centres: BTreeSet<u32> = BTreeSet::new();
            for &i in &kept {
                let cluster = prepared[i].stored.as_ref().map_or(0, |s| s.cluster);
                clusters[i] = cluster;
                fold_into_centre(&mut stored, cluster, &prepared[i].vector);
                moved_centres.insert(cluster);
            }
            centres.extend(
                stored
                    .iter()
                    .filter(|c| moved_centres.contains(&c.cluster))
                    .map(|c| (topic.clone(), day, c.clone())),
            );
            if members.is_empty() {
                continue;
            }
            let vectors: Vec<Vec<f32>> = members
                .iter()
                .map(|&i| prepared[i].vector.clone())
                .collect();
            let assignment = match self.cfg.packing.mode {
                PackingMode::Kmeans => packer::assign_batch(&vectors, &stored, opts)
                    .with_context(|| format!("clustering the pages of {topic} {day}"))?,
                PackingMode::Arrival => arrival_batch(&vectors, &stored, opts.pages_per_cluster),
            };
            for (&i, &c) in members.iter().zip(&assignment.clusters) {
                clusters[i] = c;
            }
            centres.extend(
                assignment
                    .centres
                    .into_iter()
                    .map(|c| (topic.clone(), day, c)),
            );
        }
        Ok(Placement { clusters, centres })
    }
}
