//! Topic classifier of harvest.
//!
//! Text is tokenized ([`tokenize`]: jieba for Chinese, Unicode words otherwise), weighted by
//! TF-IDF ([`tfidf`], on an `sprs` CSR matrix), and classified by one-vs-rest linear SVMs
//! trained with dual coordinate descent ([`svm`]), available as a linfa model ([`svc`]).
//! Margins become probabilities by Platt scaling fitted on cross-validation folds
//! ([`calibrate`]). A [`Model`] bundles vocabulary, weights and calibration, is saved to and
//! loaded from a versioned file, predicts a topic with a calibrated score in `0..=1`, and
//! evaluates itself on labelled documents (metrics through linfa's confusion matrix).
//! [`corpus`] reads the labelled corpora used for training and tests (the comparison with
//! scikit-learn on them is `harvest-bench model`, in `bench/`).
//!
//! ```no_run
//! use classifier::{CorpusSpec, Model, TrainOptions};
//! # fn main() -> classifier::Result<()> {
//! let spec: CorpusSpec = "thucnews:deploy/cache/thucnews_train_1w.txt#train80".parse()?;
//! let opts = TrainOptions { trained_on: spec.to_string(), ..TrainOptions::default() };
//! let model = Model::train(&spec.load()?, &opts)?;
//! model.save("topics.model")?;
//! let model = Model::load("topics.model")?;
//! let p = model.predict("央行下调存款准备金率");
//! println!("{} {:.3}", p.topic, p.score);
//! # Ok(()) }
//! ```

pub mod calibrate;
pub mod corpus;
pub mod error;
mod format;
pub mod imagehash;
pub mod model;
pub mod simhash;
pub mod svc;
pub mod svm;
pub mod tfidf;
pub mod tokenize;

pub use calibrate::{Calibration, Platt};
pub use corpus::{read_tab, read_thucnews, read_tsv, CorpusKind, CorpusSpec, Split, SplitPart};
pub use error::{Error, Result};
pub use model::{
    ClassReport, Doc, Evaluation, Model, Prediction, TrainOptions, FORMAT_VERSION, UNKNOWN_TOPIC,
};
pub use svc::{LinearSvc, LinearSvcParams, SparseRecords};
pub use svm::SvmOptions;
pub use tfidf::{SparseVec, Vectorizer, VocabOptions};
