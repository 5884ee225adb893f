//! Platt scaling: turns SVM margins into probabilities.
//!
//! For each class a sigmoid `P(class | margin) = 1 / (1 + exp(a * margin + b))` is fitted to
//! margins of documents the SVM did not see in training (cross-validation folds, see
//! [`crate::Model::train`]), by the Newton method with backtracking line search of Lin, Lin and
//! Weng, "A note on Platt's probabilistic outputs for support vector machines" (2007), with
//! Platt's smoothed targets `(n₊ + 1) / (n₊ + 2)` and `1 / (n₋ + 2)` against over-fitting.

use serde::{Deserialize, Serialize};

/// Newton iterations at most.
const MAX_ITER: usize = 100;
/// Smallest line-search step before giving up.
const MIN_STEP: f64 = 1e-10;
/// Ridge added to the Hessian diagonal.
const SIGMA: f64 = 1e-12;
/// Gradient size at which the fit has converged.
const GRAD_EPS: f64 = 1e-5;

/// One fitted sigmoid (fitted in f64, stored as f32 like the weights, so a model file
/// round-trips exactly).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Platt {
    /// Slope (negative when larger margins mean the class).
    pub a: f32,
    /// Offset.
    pub b: f32,
}

/// `1 / (1 + exp(z))`, without overflow for large `|z|`.
fn sigmoid_neg(z: f64) -> f64 {
    if z >= 0.0 {
        let e = (-z).exp();
        e / (1.0 + e)
    } else {
        1.0 / (1.0 + z.exp())
    }
}

impl Platt {
    /// Fits the sigmoid to held-out `margins` and whether each document is of the class.
    /// With no positive or no negative example the smoothed targets still give a finite fit.
    pub fn fit(margins: &[f64], positive: &[bool]) -> Platt {
        let pos = positive.iter().filter(|&&p| p).count() as f64;
        let neg = positive.len() as f64 - pos;
        let hi = (pos + 1.0) / (pos + 2.0);
        let lo = 1.0 / (neg + 2.0);
        let t: Vec<f64> = positive.iter().map(|&p| if p { hi } else { lo }).collect();
        let objective = |a: f64, b: f64| -> f64 {
            margins
                .iter()
                .zip(&t)
                .map(|(&f, &ti)| {
                    let z = f * a + b;
                    if z >= 0.0 {
                        ti * z + (-z).exp().ln_1p()
                    } else {
                        (ti - 1.0) * z + z.exp().ln_1p()
                    }
                })
                .sum()
        };
        let mut a = 0.0;
        let mut b = ((neg + 1.0) / (pos + 1.0)).ln();
        let mut fval = objective(a, b);
        for _ in 0..MAX_ITER {
            let (mut h11, mut h22, mut h21, mut g1, mut g2) = (SIGMA, SIGMA, 0.0, 0.0, 0.0);
            for (&f, &ti) in margins.iter().zip(&t) {
                let p = sigmoid_neg(f * a + b);
                let d2 = p * (1.0 - p);
                h11 += f * f * d2;
                h22 += d2;
                h21 += f * d2;
                let d1 = ti - p;
                g1 += f * d1;
                g2 += d1;
            }
            if g1.abs() < GRAD_EPS && g2.abs() < GRAD_EPS {
                break;
            }
            let det = h11 * h22 - h21 * h21;
            let da = -(h22 * g1 - h21 * g2) / det;
            let db = -(-h21 * g1 + h11 * g2) / det;
            let gd = g1 * da + g2 * db;
            let mut step = 1.0;
            while step >= MIN_STEP {
                let (na, nb) = (a + step * da, b + step * db);
                let nf = objective(na, nb);
                if nf < fval + 1e-4 * step * gd {
                    (a, b, fval) = (na, nb, nf);
                    break;
                }
                step /= 2.0;
            }
            if step < MIN_STEP {
                break;
            }
        }
        Platt {
            a: a as f32,
            b: b as f32,
        }
    }

    /// The probability of the class for a margin.
    pub fn probability(&self, margin: f64) -> f64 {
        sigmoid_neg(f64::from(self.a) * margin + f64::from(self.b))
    }
}

/// The calibration stored in a model (format version 2 and later).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    /// Number of cross-validation folds the held-out margins came from.
    pub folds: usize,
    /// One sigmoid per class, in class order.
    pub classes: Vec<Platt>,
}

impl Calibration {
    /// Calibrated probabilities of all classes from their margins, normalised to sum to 1
    /// (as scikit-learn's `CalibratedClassifierCV` does for one-vs-rest).
    pub fn probabilities(&self, margins: &[f32]) -> Vec<f32> {
        let p: Vec<f64> = self
            .classes
            .iter()
            .zip(margins)
            .map(|(s, &m)| s.probability(f64::from(m)))
            .collect();
        let sum: f64 = p.iter().sum();
        p.iter()
            .map(|&v| if sum > 0.0 { (v / sum) as f32 } else { 0.0 })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separable_margins_give_a_steep_increasing_sigmoid() {
        let margins = [-2.0, -1.5, -1.2, -0.8, 0.9, 1.1, 1.4, 2.0];
        let labels = [false, false, false, false, true, true, true, true];
        let s = Platt::fit(&margins, &labels);
        assert!(s.a < 0.0, "{s:?}");
        assert!(s.probability(2.0) > 0.8, "{s:?}");
        assert!(s.probability(-2.0) < 0.2, "{s:?}");
        assert!(s.probability(0.5) > s.probability(0.0));
    }

    #[test]
    fn matches_empirical_frequency_of_noisy_labels() {
        // at margin 1.0 the class holds 3 times in 4, at -1.0 once in 4
        let mut margins = Vec::new();
        let mut labels = Vec::new();
        for i in 0..400 {
            margins.push(1.0);
            labels.push(i % 4 != 0);
            margins.push(-1.0);
            labels.push(i % 4 == 0);
        }
        let s = Platt::fit(&margins, &labels);
        assert!((s.probability(1.0) - 0.75).abs() < 0.01, "{s:?}");
        assert!((s.probability(-1.0) - 0.25).abs() < 0.01, "{s:?}");
    }

    #[test]
    fn one_sided_data_and_extreme_margins_stay_finite() {
        let s = Platt::fit(&[0.5, 1.0, 2.0], &[true, true, true]);
        assert!(s.a.is_finite() && s.b.is_finite(), "{s:?}");
        for m in [-1e6, 0.0, 1e6] {
            let p = s.probability(m);
            assert!((0.0..=1.0).contains(&p), "{m} -> {p}");
        }
        let c = Calibration {
            folds: 3,
            classes: vec![Platt { a: -2.0, b: 0.0 }, Platt { a: -2.0, b: 0.0 }],
        };
        let p = c.probabilities(&[1.0, -1.0]);
        assert!((p[0] + p[1] - 1.0).abs() < 1e-6 && p[0] > p[1], "{p:?}");
    }
}
