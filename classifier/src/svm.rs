//! Linear SVM trained by dual coordinate descent.
//!
//! This is the solver of liblinear's `L2R_L2LOSS_SVC_DUAL` (Hsieh et al., "A Dual Coordinate
//! Descent Method for Large-scale Linear SVM", ICML 2008): minimise
//! `0.5 w·w + C Σ max(0, 1 - y_i w·x_i)²` through its dual, one coordinate `alpha_i` at a
//! time, in a random order each pass, with liblinear's shrinking heuristic. The bias is learnt
//! as the weight of an extra constant feature of value [`SvmOptions::bias`].
//!
//! Multi-class problems are solved one-vs-rest ([`train_one_vs_rest`]); the binary problems are
//! independent and run in parallel on the rayon pool. The functions here work on an
//! [`sprs`] CSR matrix ([`CsrMatrix`]), optionally on a subset of its rows (cross-validation
//! folds without copying); [`crate::svc`] wraps them in linfa's `Fit` / `Predict` traits.

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use sprs::SpIndex;

use crate::tfidf::{csr_row, CsrMatrix};

/// Solver options (liblinear defaults).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SvmOptions {
    /// Penalty `C` of the squared hinge loss. Default 1.0.
    pub c: f64,
    /// Stopping tolerance on the projected-gradient spread. Default 0.1.
    pub eps: f64,
    /// Maximum number of passes over the data. Default 1000.
    pub max_iter: usize,
    /// Value of the constant bias feature; 0 disables the bias. Default 1.0.
    pub bias: f64,
    /// liblinear's shrinking of bounded coordinates. Default true.
    pub shrinking: bool,
    /// Seed of the permutation order, for reproducible models. Default 1.
    pub seed: u64,
}

impl Default for SvmOptions {
    fn default() -> Self {
        Self {
            c: 1.0,
            eps: 0.1,
            max_iter: 1000,
            bias: 1.0,
            shrinking: true,
            seed: 1,
        }
    }
}

/// A trained binary linear classifier: `margin(x) = w·x + bias_weight * bias`.
#[derive(Debug, Clone, PartialEq)]
pub struct BinaryModel {
    /// Feature weights (one per column of the training matrix).
    pub w: Vec<f64>,
    /// Weight of the bias feature, already multiplied by the bias value.
    pub b: f64,
    /// Passes over the data the solver ran.
    pub iterations: usize,
}

impl BinaryModel {
    /// The signed margin of a sparse row.
    pub fn margin<I: SpIndex>(&self, indices: &[I], values: &[f32]) -> f64 {
        indices
            .iter()
            .zip(values)
            .map(|(&j, &v)| self.w[j.index()] * f64::from(v))
            .sum::<f64>()
            + self.b
    }
}

/// SplitMix64: a tiny deterministic generator for the permutation (no external RNG needed).
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0); the modulo bias is irrelevant for a shuffle order.
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Trains one binary L2-regularised L2-loss SVM. `y[i]` is `true` for the positive class.
pub fn train_binary(x: &CsrMatrix, y: &[bool], opts: &SvmOptions) -> Result<BinaryModel> {
    let rows: Vec<usize> = (0..x.rows()).collect();
    train_binary_rows(x, &rows, y, opts)
}

/// Trains one binary SVM on the rows `rows` of `x` only; `y[s]` is the label of row `rows[s]`.
pub fn train_binary_rows(
    x: &CsrMatrix,
    rows: &[usize],
    y: &[bool],
    opts: &SvmOptions,
) -> Result<BinaryModel> {
    let l = rows.len();
    if rows.iter().any(|&r| r >= x.rows()) {
        return Err(Error::Training(format!(
            "row index out of range ({} rows)",
            x.rows()
        )));
    }
    if l != y.len() {
        return Err(Error::Training(format!("{l} rows but {} labels", y.len())));
    }
    if l == 0 {
        return Err(Error::Training("no training rows".into()));
    }
    if !(opts.c > 0.0 && opts.eps > 0.0) {
        return Err(Error::Training(format!(
            "C and eps must be positive (C={}, eps={})",
            opts.c, opts.eps
        )));
    }
    let diag = 0.5 / opts.c; // D_ii of the L2-loss dual
    let bias = opts.bias;
    let yv: Vec<f64> = y.iter().map(|&p| if p { 1.0 } else { -1.0 }).collect();
    let indptr = x.proper_indptr();
    let qd: Vec<f64> = rows
        .iter()
        .map(|&r| {
            let (_, vals) = csr_row(x, &indptr, r);
            diag + bias * bias + vals.iter().map(|&v| f64::from(v).powi(2)).sum::<f64>()
        })
        .collect();
    let mut w = vec![0.0f64; x.cols()];
    let mut wb = 0.0f64; // weight of the bias feature
    let mut alpha = vec![0.0f64; l];
    let mut index: Vec<usize> = (0..l).collect();
    let mut active = l;
    // Only the lower bound alpha == 0 can shrink: the L2-loss dual has no upper bound.
    let mut pg_max_old = f64::INFINITY;
    let mut rng = SplitMix64(opts.seed);
    let mut iter = 0;
    while iter < opts.max_iter {
        let mut pg_max_new = f64::NEG_INFINITY;
        let mut pg_min_new = f64::INFINITY;
        for i in 0..active {
            let j = i + rng.below(active - i);
            index.swap(i, j);
        }
        let mut s = 0;
        while s < active {
            let i = index[s];
            let (idx, vals) = csr_row(x, &indptr, rows[i]);
            let yi = yv[i];
            let dot: f64 = idx
                .iter()
                .zip(vals)
                .map(|(&j, &v)| w[j] * f64::from(v))
                .sum::<f64>()
                + wb * bias;
            let g = yi * dot - 1.0 + alpha[i] * diag;
            let mut pg = 0.0;
            if alpha[i] == 0.0 {
                if opts.shrinking && g > pg_max_old {
                    active -= 1;
                    index.swap(s, active);
                    continue;
                } else if g < 0.0 {
                    pg = g;
                }
            } else {
                pg = g; // no upper bound for the L2 loss
            }
            pg_max_new = pg_max_new.max(pg);
            pg_min_new = pg_min_new.min(pg);
            if pg.abs() > 1e-12 {
                let old = alpha[i];
                alpha[i] = (old - g / qd[i]).max(0.0);
                let d = (alpha[i] - old) * yi;
                for (&j, &v) in idx.iter().zip(vals) {
                    w[j] += d * f64::from(v);
                }
                wb += d * bias;
            }
            s += 1;
        }
        iter += 1;
        if pg_max_new - pg_min_new <= opts.eps {
            if active == l {
                break;
            }
            // converged on the active set: check again on the full set
            active = l;
            pg_max_old = f64::INFINITY;
            continue;
        }
        pg_max_old = if pg_max_new <= 0.0 {
            f64::INFINITY
        } else {
            pg_max_new
        };
    }
    if iter >= opts.max_iter {
        tracing::warn!(max_iter = opts.max_iter, "svm: reached max_iter before eps");
    }
    Ok(BinaryModel {
        w,
        b: wb * bias,
        iterations: iter,
    })
}

/// Trains one binary model per class (`labels[i]` is the class index of row `i`), in parallel.
pub fn train_one_vs_rest(
    x: &CsrMatrix,
    labels: &[usize],
    classes: usize,
    opts: &SvmOptions,
) -> Result<Vec<BinaryModel>> {
    let rows: Vec<usize> = (0..x.rows()).collect();
    train_one_vs_rest_rows(x, &rows, labels, classes, opts)
}

/// [`train_one_vs_rest`] on the rows `rows` of `x` only; `labels[s]` is the class of row
/// `rows[s]`.
pub fn train_one_vs_rest_rows(
    x: &CsrMatrix,
    rows: &[usize],
    labels: &[usize],
    classes: usize,
    opts: &SvmOptions,
) -> Result<Vec<BinaryModel>> {
    if classes < 2 {
        return Err(Error::Training(format!(
            "need at least 2 classes, got {classes}"
        )));
    }
    (0..classes)
        .into_par_iter()
        .map(|c| {
            let y: Vec<bool> = labels.iter().map(|&l| l == c).collect();
            let class_opts = SvmOptions {
                seed: opts.seed.wrapping_add(c as u64),
                ..opts.clone()
            };
            let m = train_binary_rows(x, rows, &y, &class_opts)?;
            tracing::debug!(class = c, iterations = m.iterations, "svm: class trained");
            Ok(m)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tfidf::{csr_from_rows, SparseVec};

    fn matrix(rows: &[&[(u32, f32)]], cols: usize) -> CsrMatrix {
        let rows: Vec<SparseVec> = rows
            .iter()
            .map(|r| SparseVec {
                indices: r.iter().map(|p| p.0).collect(),
                values: r.iter().map(|p| p.1).collect(),
            })
            .collect();
        csr_from_rows(&rows, cols).expect("csr")
    }

    fn row(x: &CsrMatrix, i: usize) -> (&[usize], &[f32]) {
        let span = x.indptr().outer_inds_sz(i);
        (&x.indices()[span.clone()], &x.data()[span])
    }

    #[test]
    fn separates_a_tiny_linearly_separable_set() {
        // positives use feature 0, negatives feature 1; feature 2 is shared noise
        let x = matrix(
            &[
                &[(0, 1.0), (2, 0.3)],
                &[(0, 0.8)],
                &[(0, 0.9), (2, 0.5)],
                &[(1, 1.0), (2, 0.3)],
                &[(1, 0.7)],
                &[(1, 0.9), (2, 0.5)],
            ],
            3,
        );
        let y = [true, true, true, false, false, false];
        let m = train_binary(&x, &y, &SvmOptions::default()).expect("train");
        for (i, &label) in y.iter().enumerate() {
            let (idx, val) = row(&x, i);
            let margin = m.margin(idx, val);
            assert_eq!(margin > 0.0, label, "row {i} margin {margin}");
        }
        assert!(m.w[0] > 0.5 && m.w[1] < -0.5, "w = {:?}", m.w);
        assert!(m.iterations < SvmOptions::default().max_iter);
    }

    #[test]
    fn same_seed_same_model_without_shrinking_too() {
        let x = matrix(&[&[(0, 1.0)], &[(1, 1.0)], &[(0, 0.5), (1, 0.5)]], 2);
        let y = [true, false, true];
        let opts = SvmOptions {
            shrinking: false,
            ..SvmOptions::default()
        };
        let a = train_binary(&x, &y, &opts).expect("a");
        let b = train_binary(&x, &y, &opts).expect("b");
        assert_eq!(a, b);
        assert!(a.margin(&[0u32], &[1.0]) > 0.0);
        assert!(a.margin(&[1u32], &[1.0]) < 0.0);
    }

    #[test]
    fn one_vs_rest_three_classes() {
        let x = matrix(
            &[
                &[(0, 1.0)],
                &[(0, 0.9)],
                &[(1, 1.0)],
                &[(1, 0.8)],
                &[(2, 1.0)],
                &[(2, 0.7)],
            ],
            3,
        );
        let labels = [0, 0, 1, 1, 2, 2];
        let models = train_one_vs_rest(&x, &labels, 3, &SvmOptions::default()).expect("ovr");
        for (i, &label) in labels.iter().enumerate() {
            let (idx, val) = row(&x, i);
            let best = (0..3)
                .max_by(|&a, &b| {
                    models[a]
                        .margin(idx, val)
                        .total_cmp(&models[b].margin(idx, val))
                })
                .expect("3 classes");
            assert_eq!(best, label);
        }
    }

    #[test]
    fn row_subset_trains_on_those_rows_only() {
        // rows 0-1 say feature 0 is positive; rows 2-3 (left out) say the opposite
        let x = matrix(&[&[(0, 1.0)], &[(1, 1.0)], &[(0, 1.0)], &[(1, 1.0)]], 2);
        let m =
            train_binary_rows(&x, &[0, 1], &[true, false], &SvmOptions::default()).expect("subset");
        assert!(m.margin(&[0usize], &[1.0]) > 0.0 && m.margin(&[1usize], &[1.0]) < 0.0);
        let flipped =
            train_binary_rows(&x, &[2, 3], &[false, true], &SvmOptions::default()).expect("subset");
        assert!(flipped.margin(&[0usize], &[1.0]) < 0.0);
        assert!(matches!(
            train_binary_rows(&x, &[7], &[true], &SvmOptions::default()),
            Err(Error::Training(_))
        ));
    }

    #[test]
    fn rejects_bad_input() {
        let x = matrix(&[&[(0, 1.0)]], 1);
        assert!(matches!(
            train_binary(&x, &[true, false], &SvmOptions::default()),
            Err(Error::Training(_))
        ));
        assert!(matches!(
            train_one_vs_rest(&x, &[0], 1, &SvmOptions::default()),
            Err(Error::Training(_))
        ));
    }
}
