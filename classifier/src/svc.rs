//! The one-vs-rest linear SVM as a linfa model.
//!
//! [`LinearSvcParams`] implements [`linfa::traits::Fit`] on a [`linfa::DatasetBase`] of
//! [`SparseRecords`] (the TF-IDF CSR matrix) and single targets of any [`Label`] type (class
//! indices, `String` topics...). The fitted [`LinearSvc`] implements
//! [`linfa::traits::PredictInplace`], so linfa's blanket `Predict` impls apply
//! (`model.predict(&dataset)` returns an `Array1` of labels) and so do its metrics:
//!
//! ```
//! use classifier::svc::{LinearSvcParams, SparseRecords};
//! use classifier::tfidf::{csr_from_rows, SparseVec};
//! use linfa::prelude::*;
//! use ndarray::array;
//! # fn main() -> classifier::Result<()> {
//! let row = |j: u32| SparseVec { indices: vec![j], values: vec![1.0] };
//! let x = csr_from_rows(&[row(0), row(0), row(1), row(1), row(2)], 3)?;
//! let data = DatasetBase::new(SparseRecords(x), array!["space", "space", "hockey", "hockey", "space"]);
//! let svc = LinearSvcParams::default().fit(&data)?;
//! let predicted = svc.predict(&data);
//! let cm = predicted.confusion_matrix(&data)?;
//! assert_eq!(cm.accuracy(), 1.0);
//! # Ok(()) }
//! ```

use linfa::dataset::{AsSingleTargets, DatasetBase, Label, Records};
use linfa::traits::{Fit, PredictInplace};
use ndarray::Array1;
use sprs::SpIndex;

use crate::error::{Error, Result};
use crate::svm::{train_one_vs_rest_rows, BinaryModel, SvmOptions};
use crate::tfidf::{csr_row, CsrMatrix};

/// A CSR feature matrix usable as linfa records.
///
/// linfa 0.8 implements its `Records` trait for ndarray arrays only, and both `Records` and
/// `sprs::CsMat` belong to other crates, so the orphan rule forbids implementing one for the
/// other here: this newtype carries the matrix instead (`Elem = f32`, one row per sample).
#[derive(Debug, Clone, PartialEq)]
pub struct SparseRecords(pub CsrMatrix);

impl Records for SparseRecords {
    type Elem = f32;

    fn nsamples(&self) -> usize {
        self.0.rows()
    }

    fn nfeatures(&self) -> usize {
        self.0.cols()
    }
}

/// Hyper-parameters of the one-vs-rest linear SVM (liblinear's dual coordinate descent).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LinearSvcParams {
    /// Solver options.
    pub svm: SvmOptions,
}

impl LinearSvcParams {
    /// Trains on the rows `rows` of `x`, `labels[s]` being the class index of row `rows[s]`,
    /// one binary problem per class of `classes`, in parallel.
    pub fn fit_rows<L: Label>(
        &self,
        x: &CsrMatrix,
        rows: &[usize],
        labels: &[usize],
        classes: Vec<L>,
    ) -> Result<LinearSvc<L>> {
        let binaries = train_one_vs_rest_rows(x, rows, labels, classes.len(), &self.svm)?;
        Ok(LinearSvc::from_binaries(classes, x.cols(), &binaries))
    }
}

impl<L: Label, T: AsSingleTargets<Elem = L>> Fit<SparseRecords, T, Error> for LinearSvcParams {
    type Object = LinearSvc<L>;

    /// Trains one binary SVM per distinct label (at least 2), in parallel.
    fn fit(&self, dataset: &DatasetBase<SparseRecords, T>) -> Result<LinearSvc<L>> {
        let targets = dataset.targets().as_single_targets();
        let x = &dataset.records().0;
        if targets.len() != x.rows() {
            return Err(Error::Training(format!(
                "{} rows but {} targets",
                x.rows(),
                targets.len()
            )));
        }
        let mut classes: Vec<L> = targets.iter().cloned().collect();
        classes.sort_unstable();
        classes.dedup();
        let labels: Vec<usize> = targets
            .iter()
            .map(|t| classes.binary_search(t).unwrap_or_default())
            .collect();
        let rows: Vec<usize> = (0..x.rows()).collect();
        self.fit_rows(x, &rows, &labels, classes)
    }
}

/// A fitted one-vs-rest linear SVM: one weight vector and bias per class; predicts the class
/// of the largest margin.
#[derive(Debug, Clone, PartialEq)]
pub struct LinearSvc<L> {
    classes: Vec<L>,
    features: usize,
    /// Feature-major: `weights[j * classes + c]`; the row `j == features` holds the biases.
    weights: Vec<f32>,
    iterations: Vec<usize>,
}

impl<L: Label> LinearSvc<L> {
    fn from_binaries(classes: Vec<L>, features: usize, binaries: &[BinaryModel]) -> Self {
        let k = classes.len();
        let mut weights = vec![0.0f32; (features + 1) * k];
        for (c, m) in binaries.iter().enumerate() {
            for (j, &w) in m.w.iter().enumerate() {
                weights[j * k + c] = w as f32;
            }
            weights[features * k + c] = m.b as f32;
        }
        Self {
            classes,
            features,
            weights,
            iterations: binaries.iter().map(|m| m.iterations).collect(),
        }
    }

    /// The classes, sorted; margins and predictions refer to them by position.
    pub fn classes(&self) -> &[L] {
        &self.classes
    }

    /// Solver passes of each class's binary problem.
    pub fn iterations(&self) -> &[usize] {
        &self.iterations
    }

    /// The class margins of one sparse row (features beyond the trained ones are ignored).
    pub fn margins<I: SpIndex>(&self, indices: &[I], values: &[f32]) -> Vec<f32> {
        margins(
            &self.weights,
            self.classes.len(),
            self.features,
            indices,
            values,
        )
    }

    /// Takes the weight table apart: `(classes, features, weights)`, weights feature-major
    /// (`weights[j * classes.len() + c]`, last row = biases).
    pub fn into_parts(self) -> (Vec<L>, usize, Vec<f32>) {
        (self.classes, self.features, self.weights)
    }
}

/// Class margins `w_c·x + b_c` of a sparse row over a feature-major weight table of
/// `features + 1` rows of `k` weights (last row = biases).
pub fn margins<I: SpIndex>(
    weights: &[f32],
    k: usize,
    features: usize,
    indices: &[I],
    values: &[f32],
) -> Vec<f32> {
    let bias_row = features * k;
    let mut m = weights[bias_row..bias_row + k].to_vec();
    for (&j, &v) in indices.iter().zip(values) {
        let j = j.index();
        if j >= features {
            continue;
        }
        for (acc, w) in m.iter_mut().zip(&weights[j * k..(j + 1) * k]) {
            *acc += w * v;
        }
    }
    m
}

/// Index of the largest value (the first on ties); 0 for an empty slice.
pub(crate) fn argmax(values: &[f32]) -> usize {
    values
        .iter()
        .enumerate()
        .fold((0, f32::NEG_INFINITY), |best, (i, &v)| {
            if v > best.1 {
                (i, v)
            } else {
                best
            }
        })
        .0
}

impl<L: Label> PredictInplace<SparseRecords, Array1<L>> for LinearSvc<L> {
    fn predict_inplace(&self, x: &SparseRecords, y: &mut Array1<L>) {
        assert_eq!(
            x.nsamples(),
            y.len(),
            "the number of targets must equal the number of samples"
        );
        let indptr = x.0.proper_indptr();
        for (r, target) in y.iter_mut().enumerate() {
            let (idx, vals) = csr_row(&x.0, &indptr, r);
            *target = self.classes[argmax(&self.margins(idx, vals))].clone();
        }
    }

    fn default_target(&self, x: &SparseRecords) -> Array1<L> {
        Array1::from_elem(x.nsamples(), L::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tfidf::{csr_from_rows, SparseVec};
    use linfa::prelude::*;

    fn onehot(j: u32) -> SparseVec {
        SparseVec {
            indices: vec![j],
            values: vec![1.0],
        }
    }

    #[test]
    fn fit_and_predict_through_linfa_traits() {
        let x = csr_from_rows(
            &[
                onehot(0),
                onehot(0),
                onehot(1),
                onehot(1),
                onehot(2),
                onehot(2),
            ],
            3,
        )
        .expect("csr");
        let y = ndarray::array![2usize, 2, 0, 0, 1, 1];
        let data = DatasetBase::new(SparseRecords(x), y.clone());
        let svc = LinearSvcParams::default().fit(&data).expect("fit");
        assert_eq!(svc.classes(), [0, 1, 2]);
        let predicted: Array1<usize> = svc.predict(&data);
        assert_eq!(predicted, y);
        let cm = predicted.confusion_matrix(&data).expect("confusion");
        assert_eq!(cm.accuracy(), 1.0);
        // a dataset in, a dataset with predicted targets out
        let out = svc.predict(data);
        assert_eq!(out.targets(), &y);
    }

    #[test]
    fn fit_needs_two_classes_and_matching_targets() {
        let x = csr_from_rows(&[onehot(0), onehot(1)], 2).expect("csr");
        let one_class = DatasetBase::new(SparseRecords(x), ndarray::array![true, true]);
        let err = LinearSvcParams::default()
            .fit(&one_class)
            .expect_err("one class");
        assert!(matches!(err, crate::Error::Training(_)), "{err}");
    }

    #[test]
    fn margins_ignore_unknown_features() {
        let x = csr_from_rows(&[onehot(0), onehot(1)], 2).expect("csr");
        let data = DatasetBase::new(SparseRecords(x), ndarray::array!["a", "b"]);
        let svc = LinearSvcParams::default().fit(&data).expect("fit");
        let with_extra = svc.margins(&[0usize, 9], &[1.0, 5.0]);
        assert_eq!(with_extra, svc.margins(&[0usize], &[1.0]));
        assert!(with_extra[0] > with_extra[1]);
    }
}
