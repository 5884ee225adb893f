//! K-means cluster packing: which pack (`c{cluster}`) of a (topic, day) a page goes to.
//!
//! 1. [`AttributeEncoder::encode`] turns a page's attributes ([`PageAttributes`]: media,
//!    comment and participant counts, keywords) into a fixed-width vector: a hashed one-hot of
//!    the media, `ln(1 + count)` scaled, and the keywords hashed into `keyword_width` slots with
//!    rank weights (L2-normalised).
//! 2. [`assign_batch`] runs K-means (linfa-clustering, seeded) over one (topic, day) batch, and
//!    maps each batch centre onto the nearest stored centre of that topic/day when it is closer
//!    than [`ClusterOptions::t1`] (the pages are appended to that cluster's pack, the stored
//!    centre moves to the size-weighted mean); otherwise the centre starts a new cluster id
//!    (a new pack). The caller persists the returned [`Centre`]s (the `clusters` table) and
//!    passes them back for the next batch of the same topic/day, also after a restart.
//!
//! Measured on the real news corpus by the bench crate (`harvest_bench::news`: the pipeline
//! replay; `harvest bench kmeans`: beside scikit-learn's KMeans).
//!
//! Errors of this module are [`ClusterError`] (alias [`Result`]).

use std::collections::{BTreeMap, HashMap, HashSet};

use linfa::prelude::{Fit, Predict};
use linfa::DatasetBase;
use linfa_clustering::KMeans;
use ndarray::Array2;
use rand_xoshiro::rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256Plus;
use serde::{Deserialize, Serialize};

/// Result alias of the placement module.
pub type Result<T, E = ClusterError> = std::result::Result<T, E>;

/// Everything that can go wrong while encoding, clustering or measuring.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// A [`ClusterOptions`] field has an unusable value.
    #[error("invalid cluster option {name}: {reason}")]
    InvalidOption {
        /// Field name.
        name: &'static str,
        /// Why it was rejected.
        reason: String,
    },
    /// The vectors of one batch do not all have the same width.
    #[error("attribute vector {index} of the batch has width {got}, the first one has {expected}")]
    RaggedBatch {
        /// Index of the offending vector.
        index: usize,
        /// Width of the first vector.
        expected: usize,
        /// Width of this vector.
        got: usize,
    },
    /// A stored centre has another width than the batch: it was written with other encoder
    /// widths (`keyword_width` / `media_width` changed). Clear the `clusters` rows of that
    /// topic/day or restore the old widths.
    #[error("stored centre of cluster {cluster} has width {got} but the batch vectors have width {expected}; the encoder widths (keyword_width, media_width) changed since it was stored")]
    WidthMismatch {
        /// Cluster id of the stored centre.
        cluster: u32,
        /// Width of the batch vectors.
        expected: usize,
        /// Width of the stored centre.
        got: usize,
    },
    /// An input value is NaN or infinite.
    #[error("{what} {index} contains a NaN or infinite value")]
    NonFinite {
        /// `attribute vector` or `stored centre`.
        what: &'static str,
        /// Index of the vector (or cluster id of the centre).
        index: usize,
    },
    /// linfa-clustering failed.
    #[error("k-means failed: {0}")]
    KMeans(String),
}

/// Default [`ClusterOptions::pages_per_cluster`].
pub const DEFAULT_PAGES_PER_CLUSTER: usize = 25;
/// Default [`ClusterOptions::max_k`].
pub const DEFAULT_MAX_K: usize = 32;
/// Default [`ClusterOptions::t1`].
pub const DEFAULT_T1: f32 = 0.7;
/// Default [`ClusterOptions::n_runs`].
pub const DEFAULT_N_RUNS: usize = 3;
/// Default [`ClusterOptions::max_iter`].
pub const DEFAULT_MAX_ITER: u64 = 100;
/// Default [`ClusterOptions::tolerance`].
pub const DEFAULT_TOLERANCE: f32 = 1e-4;
/// Default [`ClusterOptions::seed`].
pub const DEFAULT_SEED: u64 = 42;
/// Default [`ClusterOptions::keyword_width`].
pub const DEFAULT_KEYWORD_WIDTH: usize = 128;
/// Default [`ClusterOptions::media_width`].
pub const DEFAULT_MEDIA_WIDTH: usize = 64;
/// Default [`ClusterOptions::media_weight`].
pub const DEFAULT_MEDIA_WEIGHT: f32 = 0.5;
/// Counts (comments, participants) are encoded as `ln(1 + c) / ln(1 + COUNT_SCALE)`, so a
/// page with 10,000 comments gets 1.0.
pub const COUNT_SCALE: f64 = 10_000.0;
/// Number of count slots (comments, participants) between the media and keyword blocks.
const COUNT_SLOTS: usize = 2;

/// Settings of cluster packing; `Default` = the documented defaults (justified by the
/// measurements in ARCHITECTURE.md, packer section).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ClusterOptions {
    /// Fixed number of clusters per batch. Default `None`: `ceil(n / pages_per_cluster)`
    /// clamped to `1..=max_k`. Never more than the number of distinct vectors.
    pub k: Option<usize>,
    /// Target pages per cluster when `k` is `None`. Default 25.
    pub pages_per_cluster: usize,
    /// Upper bound of the derived `k`. Default 32.
    pub max_k: usize,
    /// A batch centre closer (Euclidean) than `t1` to a stored centre of the same topic/day
    /// joins that cluster; otherwise it starts a new cluster. Default 0.7.
    pub t1: f32,
    /// K-means restarts (k-means++ init each); the run with the lowest inertia wins. Default 3.
    pub n_runs: usize,
    /// Lloyd iterations per run at most. Default 100.
    pub max_iter: u64,
    /// Convergence: stop when the centres move less than this (linfa's absolute criterion).
    /// Default 1e-4.
    pub tolerance: f32,
    /// RNG seed; the same seed and input give the same clusters. Default 42.
    pub seed: u64,
    /// Slots of the hashed keyword block. Default 128.
    pub keyword_width: usize,
    /// Slots of the hashed media block (each media sets [`MEDIA_PROBES`] slots). Default 64.
    pub media_width: usize,
    /// Value of the media one-hot slot (the keyword block has norm 1). Default 0.5.
    pub media_weight: f32,
    /// Pack budget: a (topic, day) gets at most `ceil(pages / pages_per_cluster)` clusters
    /// (pages stored so far plus the batch). Past it, a batch centre farther than `t1` from
    /// every stored centre joins the nearest one instead of starting a pack, so small
    /// topic-days are not scattered over many tiny packs. Default true (measured by
    /// `harvest bench locality`: without it the news site got 3.6 pages per pack).
    pub budget: bool,
}

impl Default for ClusterOptions {
    fn default() -> Self {
        Self {
            k: None,
            pages_per_cluster: DEFAULT_PAGES_PER_CLUSTER,
            max_k: DEFAULT_MAX_K,
            t1: DEFAULT_T1,
            n_runs: DEFAULT_N_RUNS,
            max_iter: DEFAULT_MAX_ITER,
            tolerance: DEFAULT_TOLERANCE,
            seed: DEFAULT_SEED,
            keyword_width: DEFAULT_KEYWORD_WIDTH,
            media_width: DEFAULT_MEDIA_WIDTH,
            media_weight: DEFAULT_MEDIA_WEIGHT,
            budget: true,
        }
    }
}

fn invalid(name: &'static str, reason: impl Into<String>) -> ClusterError {
    ClusterError::InvalidOption {
        name,
        reason: reason.into(),
    }
}

impl ClusterOptions {
    /// Checks every field; [`assign_batch`] calls it.
    pub fn validate(&self) -> Result<()> {
        if self.k == Some(0) {
            return Err(invalid("k", "must be at least 1"));
        }
        if self.pages_per_cluster == 0 {
            return Err(invalid("pages_per_cluster", "must be at least 1"));
        }
        if self.max_k == 0 {
            return Err(invalid("max_k", "must be at least 1"));
        }
        if !self.t1.is_finite() || self.t1 < 0.0 {
            return Err(invalid(
                "t1",
                format!("must be finite and >= 0, got {}", self.t1),
            ));
        }
        if self.n_runs == 0 {
            return Err(invalid("n_runs", "must be at least 1"));
        }
        if self.max_iter == 0 {
            return Err(invalid("max_iter", "must be at least 1"));
        }
        if !self.tolerance.is_finite() || self.tolerance <= 0.0 {
            return Err(invalid("tolerance", "must be finite and > 0"));
        }
        if !self.media_weight.is_finite() || self.media_weight < 0.0 {
            return Err(invalid("media_weight", "must be finite and >= 0"));
        }
        Ok(())
    }

    /// The number of clusters for a batch of `n` vectors (before capping at the number of
    /// distinct vectors): `k`, or `ceil(n / pages_per_cluster)` clamped to `1..=max_k`.
    pub fn k_for(&self, n: usize) -> usize {
        match self.k {
            Some(k) => k.max(1),
            None => n
                .div_ceil(self.pages_per_cluster.max(1))
                .clamp(1, self.max_k.max(1)),
        }
    }
}

/// The attributes of one page that its vector is built from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PageAttributes<'a> {
    /// Media / outlet (e.g. the host); empty = unknown.
    pub media: &'a str,
    /// Comment count, if the page shows one.
    pub comments: Option<u64>,
    /// Participant count, if the page shows one.
    pub participants: Option<u64>,
    /// Keywords ordered by weight, most important first.
    pub keywords: &'a [String],
}

/// Builds fixed-width attribute vectors: `[media one-hot (media_width)] [ln comments]
/// [ln participants] [keywords (keyword_width)]`.
#[derive(Debug, Clone, PartialEq)]
pub struct AttributeEncoder {
    media_width: usize,
    keyword_width: usize,
    media_weight: f32,
}

/// FNV-1a 64: a stable hash (the slots must not change between builds or runs, since
/// centres are persisted).
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    // splitmix64 finalizer: FNV's low bits are weak, and slots are taken modulo small widths.
    h ^= h >> 30;
    h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h ^= h >> 27;
    h = h.wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

/// Slots a media name is hashed into; two independent probes make a full collision of two
/// outlets (same slots for both) rare: measured on the news corpus, one probe in 64 slots
/// put its 9 outlets on 7 slots.
pub const MEDIA_PROBES: usize = 2;

fn log_count(c: Option<u64>) -> f32 {
    c.map_or(0.0, |c| ((c as f64).ln_1p() / COUNT_SCALE.ln_1p()) as f32)
}

impl AttributeEncoder {
    /// An encoder with the widths and media weight of `opts` (a width of 0 drops that block).
    pub fn new(opts: &ClusterOptions) -> Self {
        Self {
            media_width: opts.media_width,
            keyword_width: opts.keyword_width,
            media_weight: opts.media_weight,
        }
    }

    /// Width of every vector this encoder builds.
    pub fn width(&self) -> usize {
        self.media_width + COUNT_SLOTS + self.keyword_width
    }

    /// The [`MEDIA_PROBES`] media slots of `media` (lowercased; probe `i` hashes `i` and
    /// the name), or `None` for an empty media name or media block.
    pub fn media_slots(&self, media: &str) -> Option<[usize; MEDIA_PROBES]> {
        if self.media_width == 0 || media.is_empty() {
            return None;
        }
        let name = media.to_lowercase();
        let mut slots = [0; MEDIA_PROBES];
        for (i, slot) in slots.iter_mut().enumerate() {
            let mut bytes = Vec::with_capacity(name.len() + 1);
            bytes.push(i as u8);
            bytes.extend_from_slice(name.as_bytes());
            *slot = (fnv1a(&bytes) % self.media_width as u64) as usize;
        }
        Some(slots)
    }

    /// Encodes one page. Keyword `i` (0 = most important) weighs `1 / sqrt(i + 1)`; keywords
    /// are lowercased and hashed into the keyword block, which is then L2-normalised (an empty
    /// list gives zeros). Always finite.
    pub fn encode(&self, p: &PageAttributes<'_>) -> Vec<f32> {
        let mut v = vec![0.0f32; self.width()];
        if let Some(slots) = self.media_slots(p.media) {
            // Each probe adds weight / sqrt(probes): the media block has norm media_weight.
            let w = self.media_weight / (MEDIA_PROBES as f32).sqrt();
            for slot in slots {
                v[slot] += w;
            }
        }
        v[self.media_width] = log_count(p.comments);
        v[self.media_width + 1] = log_count(p.participants);
        if self.keyword_width > 0 {
            let start = self.media_width + COUNT_SLOTS;
            let block = &mut v[start..];
            for (rank, kw) in p.keywords.iter().enumerate() {
                let kw = kw.trim().to_lowercase();
                if kw.is_empty() {
                    continue;
                }
                let slot = (fnv1a(kw.as_bytes()) % self.keyword_width as u64) as usize;
                block[slot] += 1.0 / ((rank + 1) as f32).sqrt();
            }
            let norm = block.iter().map(|x| x * x).sum::<f32>().sqrt();
            if norm > 0.0 {
                block.iter_mut().for_each(|x| *x /= norm);
            }
        }
        v
    }
}

/// A stored cluster centre of one topic/day (one row of the `clusters` table).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Centre {
    /// Cluster id, the `c{cluster}` of the pack path.
    pub cluster: u32,
    /// Centre (mean attribute vector of its pages).
    pub centre: Vec<f32>,
    /// Pages in the cluster so far.
    pub size: u64,
}

/// Outcome of [`assign_batch`].
#[derive(Clone, Debug, PartialEq)]
pub struct BatchAssignment {
    /// Cluster id of every input vector, in input order.
    pub clusters: Vec<u32>,
    /// The centres that are new or changed by this batch (persist them, replacing rows with
    /// the same cluster id), sorted by cluster id.
    pub centres: Vec<Centre>,
    /// Sum of squared distances of the batch vectors to their batch K-means centres.
    pub inertia: f64,
    /// Number of clusters the batch K-means produced (after dropping empty ones).
    pub k: usize,
}

fn sq_dist(a: &[f32], b: &[f32]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| {
            let d = f64::from(*x) - f64::from(*y);
            d * d
        })
        .sum()
}

/// Plain K-means of one batch: `(labels, centres)`, centres = true means of their members,
/// numbered by first member. `k` is capped at the number of distinct vectors. Public for the
/// K-means benchmark (`harvest bench kmeans`, `bench/src/kmeans.rs`).
pub fn kmeans(vectors: &[Vec<f32>], width: usize, opts: &ClusterOptions) -> Result<KmeansFit> {
    let n = vectors.len();
    let distinct = vectors
        .iter()
        .map(|v| v.iter().map(|x| x.to_bits()).collect::<Vec<u32>>())
        .collect::<HashSet<_>>()
        .len();
    let k = opts.k_for(n).min(distinct).max(1);
    let raw_labels: Vec<usize> = if k == 1 || width == 0 {
        vec![0; n]
    } else {
        let mut data = Array2::<f32>::zeros((n, width));
        for (i, v) in vectors.iter().enumerate() {
            for (j, x) in v.iter().enumerate() {
                data[[i, j]] = *x;
            }
        }
        let dataset = DatasetBase::from(data);
        let rng = Xoshiro256Plus::seed_from_u64(opts.seed);
        let model = KMeans::params_with_rng(k, rng)
            .n_runs(opts.n_runs)
            .max_n_iterations(opts.max_iter)
            .tolerance(opts.tolerance)
            .fit(&dataset)
            .map_err(|e| ClusterError::KMeans(e.to_string()))?;
        model.predict(dataset.records()).to_vec()
    };
    // Renumber by first appearance and compute the true means (linfa's m_k-means centres
    // include the previous centre as a pseudo-point).
    let mut renumber: HashMap<usize, usize> = HashMap::new();
    let mut labels = Vec::with_capacity(n);
    for raw in raw_labels {
        let next = renumber.len();
        labels.push(*renumber.entry(raw).or_insert(next));
    }
    let k = renumber.len();
    let mut sums = vec![vec![0.0f64; width]; k];
    let mut sizes = vec![0u64; k];
    for (v, &l) in vectors.iter().zip(&labels) {
        sizes[l] += 1;
        for (s, x) in sums[l].iter_mut().zip(v) {
            *s += f64::from(*x);
        }
    }
    let centres: Vec<Vec<f32>> = sums
        .iter()
        .zip(&sizes)
        .map(|(s, &c)| s.iter().map(|x| (x / c as f64) as f32).collect())
        .collect();
    let inertia = vectors
        .iter()
        .zip(&labels)
        .map(|(v, &l)| sq_dist(v, &centres[l]))
        .sum();
    Ok(KmeansFit {
        labels,
        centres,
        sizes,
        inertia,
    })
}

/// What [`kmeans`] found.
#[derive(Debug, Clone)]
pub struct KmeansFit {
    /// Cluster of each vector.
    pub labels: Vec<usize>,
    /// The centres (true means of their members), numbered by first member.
    pub centres: Vec<Vec<f32>>,
    /// Members per cluster.
    pub sizes: Vec<u64>,
    /// Sum of squared distances to the centres.
    pub inertia: f64,
}

/// Clusters one (topic, day) batch and places it relative to the stored centres of that
/// topic/day (see the module docs). `stored` may be empty (first batch of the day). An empty
/// batch gives an empty assignment. Deterministic for a given `opts.seed`.
///
/// Errors: invalid options, vectors of different widths, NaN/inf values, or a stored centre of
/// another width ([`ClusterError::WidthMismatch`]).
pub fn assign_batch(
    vectors: &[Vec<f32>],
    stored: &[Centre],
    opts: &ClusterOptions,
) -> Result<BatchAssignment> {
    opts.validate()?;
    let Some(first) = vectors.first() else {
        return Ok(BatchAssignment {
            clusters: Vec::new(),
            centres: Vec::new(),
            inertia: 0.0,
            k: 0,
        });
    };
    let width = first.len();
    for (index, v) in vectors.iter().enumerate() {
        if v.len() != width {
            return Err(ClusterError::RaggedBatch {
                index,
                expected: width,
                got: v.len(),
            });
        }
        if v.iter().any(|x| !x.is_finite()) {
            return Err(ClusterError::NonFinite {
                what: "attribute vector",
                index,
            });
        }
    }
    for c in stored {
        if c.centre.len() != width {
            return Err(ClusterError::WidthMismatch {
                cluster: c.cluster,
                expected: width,
                got: c.centre.len(),
            });
        }
        if c.centre.iter().any(|x| !x.is_finite()) {
            return Err(ClusterError::NonFinite {
                what: "stored centre",
                index: c.cluster as usize,
            });
        }
    }

    let fit = kmeans(vectors, width, opts)?;
    let t1 = f64::from(opts.t1);
    // Working copy of the stored centres (index into `stored`), updated as batch centres join.
    let mut current: Vec<Centre> = stored.to_vec();
    let mut changed: BTreeMap<u32, Centre> = BTreeMap::new();
    let mut next_id = stored
        .iter()
        .map(|c| c.cluster.saturating_add(1))
        .max()
        .unwrap_or(0);
    let mut batch_to_cluster = Vec::with_capacity(fit.centres.len());
    let mut joined = 0usize;
    let stored_pages: u64 = stored.iter().map(|c| c.size).sum();
    let budget = (stored_pages as usize + vectors.len())
        .div_ceil(opts.pages_per_cluster.max(1))
        .max(1);
    for (centre, &size) in fit.centres.iter().zip(&fit.sizes) {
        let over_budget = opts.budget && current.len() >= budget;
        // Nearest among the centres stored *before* this batch (a batch's own clusters were
        // already separated by its K-means).
        let nearest = current
            .iter_mut()
            .take(stored.len())
            .map(|c| (sq_dist(&c.centre, centre), c))
            .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cluster.cmp(&b.1.cluster)));
        match nearest {
            Some((d2, c)) if d2.sqrt() < t1 || over_budget => {
                let total = c.size + size;
                let (wa, wb) = (c.size as f64 / total as f64, size as f64 / total as f64);
                for (x, y) in c.centre.iter_mut().zip(centre) {
                    *x = (f64::from(*x) * wa + f64::from(*y) * wb) as f32;
                }
                c.size = total;
                joined += 1;
                changed.insert(c.cluster, c.clone());
                batch_to_cluster.push(c.cluster);
            }
            _ => {
                let id = next_id;
                next_id = next_id.saturating_add(1);
                let c = Centre {
                    cluster: id,
                    centre: centre.clone(),
                    size,
                };
                changed.insert(id, c.clone());
                current.push(c);
                batch_to_cluster.push(id);
            }
        }
    }
    tracing::debug!(
        pages = vectors.len(),
        k = fit.centres.len(),
        joined,
        new = fit.centres.len() - joined,
        inertia = fit.inertia,
        "cluster batch assigned"
    );
    Ok(BatchAssignment {
        clusters: fit.labels.iter().map(|&l| batch_to_cluster[l]).collect(),
        centres: changed.into_values().collect(),
        inertia: fit.inertia,
        k: fit.centres.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kws(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn encoder_width_and_blocks() {
        let opts = ClusterOptions::default();
        let enc = AttributeEncoder::new(&opts);
        assert_eq!(enc.width(), 64 + 2 + 128);
        let k = kws(&["trump", "senate", "vote"]);
        let v = enc.encode(&PageAttributes {
            media: "www.cnn.com",
            comments: Some(10_000),
            participants: Some(0),
            keywords: &k,
        });
        assert_eq!(v.len(), enc.width());
        let slots = enc.media_slots("WWW.CNN.COM").expect("slots");
        let media_norm: f32 = v[..64].iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((media_norm - DEFAULT_MEDIA_WEIGHT).abs() < 1e-6 || slots[0] == slots[1]);
        for s in slots {
            assert!(v[s] > 0.0);
        }
        assert!(v[..64].iter().filter(|x| **x != 0.0).count() <= MEDIA_PROBES);
        assert!(
            (v[64] - 1.0).abs() < 1e-6,
            "10k comments -> 1.0, got {}",
            v[64]
        );
        assert_eq!(v[65], 0.0);
        let norm: f32 = v[66..].iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5);
    }

    #[test]
    fn empty_keywords_and_media_give_zeros() {
        let enc = AttributeEncoder::new(&ClusterOptions::default());
        let v = enc.encode(&PageAttributes {
            media: "",
            comments: None,
            participants: None,
            keywords: &[],
        });
        assert!(v.iter().all(|x| *x == 0.0));
    }

    #[test]
    fn keyword_rank_matters() {
        let enc = AttributeEncoder::new(&ClusterOptions::default());
        let a = kws(&["trump", "senate"]);
        let b = kws(&["senate", "trump"]);
        let enc_kw = |k: &[String]| {
            enc.encode(&PageAttributes {
                media: "x",
                comments: None,
                participants: None,
                keywords: k,
            })
        };
        assert_ne!(enc_kw(&a), enc_kw(&b));
    }

    #[test]
    fn k_rule() {
        let o = ClusterOptions::default();
        assert_eq!(o.k_for(1), 1);
        assert_eq!(o.k_for(25), 1);
        assert_eq!(o.k_for(26), 2);
        assert_eq!(o.k_for(10_000), DEFAULT_MAX_K);
        let fixed = ClusterOptions {
            k: Some(7),
            ..o.clone()
        };
        assert_eq!(fixed.k_for(3), 7);
    }

    #[test]
    fn options_validate() {
        let bad = [
            ClusterOptions {
                k: Some(0),
                ..Default::default()
            },
            ClusterOptions {
                t1: f32::NAN,
                ..Default::default()
            },
            ClusterOptions {
                n_runs: 0,
                ..Default::default()
            },
            ClusterOptions {
                pages_per_cluster: 0,
                ..Default::default()
            },
        ];
        for o in bad {
            assert!(
                matches!(o.validate(), Err(ClusterError::InvalidOption { .. })),
                "{o:?}"
            );
        }
        assert!(ClusterOptions::default().validate().is_ok());
    }

    #[test]
    fn options_toml_like_roundtrip_via_json() {
        let o = ClusterOptions {
            k: Some(4),
            t1: 0.5,
            ..Default::default()
        };
        let s = serde_json::to_string(&o).expect("serialize");
        let back: ClusterOptions = serde_json::from_str(&s).expect("deserialize");
        assert_eq!(back, o);
        let partial: ClusterOptions = serde_json::from_str(r#"{"t1": 0.25}"#).expect("partial");
        assert_eq!(partial.t1, 0.25);
        assert_eq!(partial.max_k, DEFAULT_MAX_K);
        assert!(serde_json::from_str::<ClusterOptions>(r#"{"t2": 1}"#).is_err());
    }
}
