//! Topic classifier of harvest.
//!
//! Text is tokenized ([`tokenize`]: jieba for Chinese, Unicode words otherwise), weighted by
//! TF-IDF ([`tfidf`]), and classified by one-vs-rest linear SVMs trained with dual coordinate
//! descent ([`svm`]). A [`Model`] bundles vocabulary and weights, is saved to and loaded from a
//! versioned file, predicts a topic with a score in `0..=1`, and evaluates itself on labelled
//! documents. [`corpus`] reads the labelled corpora used for training and tests.
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

pub mod corpus;
pub mod error;
pub mod model;
pub mod svm;
pub mod tfidf;
pub mod tokenize;

pub use corpus::{read_tab, read_thucnews, read_tsv, CorpusKind, CorpusSpec, Split, SplitPart};
pub use error::{Error, Result};
pub use model::{
    ClassReport, Doc, Evaluation, Model, Prediction, TrainOptions, FORMAT_VERSION, UNKNOWN_TOPIC,
};
pub use svm::SvmOptions;
pub use tfidf::{SparseVec, Vectorizer, VocabOptions};
