//! TF-IDF vectorizer producing l2-normalised sparse vectors.
//!
//! The weighting follows scikit-learn's `TfidfVectorizer(sublinear_tf=True, smooth_idf=True,
//! norm="l2")`: `tf = 1 + ln(count)`, `idf = ln((1 + n) / (1 + df)) + 1`, then the vector is
//! divided by its euclidean norm. The vocabulary keeps terms with `df >= min_df` and
//! `df <= max_df * n`, then the `max_features` terms of highest document frequency.

use rustc_hash::FxHashMap as HashMap;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use sprs::CsMat;

use crate::error::{Error, Result};
use crate::tokenize::for_each_token;

/// Vocabulary limits for [`Vectorizer::fit`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VocabOptions {
    /// Minimum number of documents a term must appear in. Default 1 (as scikit-learn; on
    /// 20 Newsgroups, R8 and THUCNews titles 1 scores 0.2 to 2 points better than 2).
    pub min_df: usize,
    /// Maximum fraction (0..=1) of documents a term may appear in. Default 0.95.
    pub max_df: f64,
    /// Keep at most this many terms (those with the highest document frequency; ties by
    /// term). `None` keeps all. Default `Some(200_000)`.
    pub max_features: Option<usize>,
    /// Also use pairs of adjacent kept tokens (`"stock market"`) as terms. Default false:
    /// measured (no calibration, release) 20 Newsgroups 0.8557 -> 0.8626 accuracy, Reuters R8
    /// 0.9749 -> 0.9749 (macro-F1 0.942 -> 0.930), THUCNews titles 0.8249 -> 0.8175, with
    /// 2.2x to 4.5x the training time and the 200 000-term cap reached on the English corpora.
    #[serde(default)]
    pub bigrams: bool,
}

impl Default for VocabOptions {
    fn default() -> Self {
        Self {
            min_df: 1,
            max_df: 0.95,
            max_features: Some(200_000),
            bigrams: false,
        }
    }
}

/// Joins the two tokens of a bigram term.
const BIGRAM_SEPARATOR: char = ' ';

/// The tokens of a document followed by its bigrams (`"a b"` for adjacent `a`, `b`).
fn with_bigrams<S: AsRef<str>>(tokens: &[S]) -> Vec<String> {
    let mut out: Vec<String> = tokens.iter().map(|t| t.as_ref().to_owned()).collect();
    for w in tokens.windows(2) {
        out.push(format!(
            "{}{BIGRAM_SEPARATOR}{}",
            w[0].as_ref(),
            w[1].as_ref()
        ));
    }
    out
}

/// A sparse vector: strictly increasing feature indices and their values.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SparseVec {
    /// Feature indices, strictly increasing.
    pub indices: Vec<u32>,
    /// Values, same length as `indices`.
    pub values: Vec<f32>,
}

impl SparseVec {
    /// Number of stored (non-zero) entries.
    pub fn nnz(&self) -> usize {
        self.indices.len()
    }

    /// True if the vector has no non-zero entry.
    pub fn is_empty(&self) -> bool {
        self.indices.is_empty()
    }
}

/// The feature matrix: one l2-normalised TF-IDF row per document, in sprs's compressed sparse
/// row layout (`indptr` / `indices` / `data`).
pub type CsrMatrix = CsMat<f32>;

/// Stacks sparse rows into a [`CsrMatrix`] with `cols` columns.
pub fn csr_from_rows(rows: &[SparseVec], cols: usize) -> Result<CsrMatrix> {
    let nnz = rows.iter().map(SparseVec::nnz).sum();
    let mut indptr = Vec::with_capacity(rows.len() + 1);
    let mut indices = Vec::with_capacity(nnz);
    let mut data = Vec::with_capacity(nnz);
    indptr.push(0);
    for r in rows {
        indices.extend(r.indices.iter().map(|&j| j as usize));
        data.extend_from_slice(&r.values);
        indptr.push(indices.len());
    }
    CsMat::try_new((rows.len(), cols), indptr, indices, data)
        .map_err(|(.., e)| Error::Training(format!("bad feature matrix: {e}")))
}

/// Row `r` of a CSR matrix as (column indices, values), straight from its storage.
/// `indptr` is `x.proper_indptr()`, taken once by callers that loop over rows.
pub fn csr_row<'a>(x: &'a CsrMatrix, indptr: &[usize], r: usize) -> (&'a [usize], &'a [f32]) {
    let span = indptr[r]..indptr[r + 1];
    (&x.indices()[span.clone()], &x.data()[span])
}

/// A fitted TF-IDF vocabulary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "VectorizerRepr", into = "VectorizerRepr")]
pub struct Vectorizer {
    terms: Vec<String>,
    idf: Vec<f32>,
    index: HashMap<String, u32>,
    options: VocabOptions,
}

/// On-disk form of a [`Vectorizer`]: the lookup table is rebuilt on load.
#[derive(Serialize, Deserialize)]
struct VectorizerRepr {
    options: VocabOptions,
    terms: Vec<String>,
    idf: Vec<f32>,
}

impl From<VectorizerRepr> for Vectorizer {
    fn from(r: VectorizerRepr) -> Self {
        Self::from_parts(r.terms, r.idf, r.options)
    }
}

impl From<Vectorizer> for VectorizerRepr {
    fn from(v: Vectorizer) -> Self {
        Self {
            options: v.options,
            terms: v.terms,
            idf: v.idf,
        }
    }
}

impl Vectorizer {
    fn from_parts(terms: Vec<String>, idf: Vec<f32>, options: VocabOptions) -> Self {
        let index = terms
            .iter()
            .enumerate()
            .map(|(i, t)| (t.clone(), i as u32))
            .collect();
        Self {
            terms,
            idf,
            index,
            options,
        }
    }

    /// Learns the vocabulary and idf weights from tokenized documents.
    pub fn fit<S: AsRef<str> + Sync>(docs: &[Vec<S>], options: &VocabOptions) -> Result<Self> {
        if !(0.0..=1.0).contains(&options.max_df) {
            return Err(Error::Training(format!(
                "max_df must be a fraction in 0..=1, got {}",
                options.max_df
            )));
        }
        if options.bigrams {
            let expanded: Vec<Vec<String>> = docs.par_iter().map(|d| with_bigrams(d)).collect();
            let unigram_only = VocabOptions {
                bigrams: false,
                ..options.clone()
            };
            let fitted = Self::fit(&expanded, &unigram_only)?;
            return Ok(Self::from_parts(fitted.terms, fitted.idf, options.clone()));
        }
        let n = docs.len();
        // document frequencies: one map per thread's share of the documents, then merged
        let chunk = n.div_ceil(rayon::current_num_threads()).max(1);
        let df: HashMap<&str, usize> = docs
            .par_chunks(chunk)
            .map(|part| {
                // (document frequency, last document counted): one hash per token, no sort
                let mut df: HashMap<&str, (usize, usize)> = HashMap::default();
                for (d, doc) in part.iter().enumerate() {
                    for t in doc {
                        let e = df.entry(t.as_ref()).or_insert((0, usize::MAX));
                        if e.1 != d {
                            *e = (e.0 + 1, d);
                        }
                    }
                }
                df.into_iter()
                    .map(|(t, (n, _))| (t, n))
                    .collect::<HashMap<&str, usize>>()
            })
            .reduce(HashMap::default, |a, b| {
                let (mut big, small) = if a.len() >= b.len() { (a, b) } else { (b, a) };
                for (t, n) in small {
                    *big.entry(t).or_insert(0) += n;
                }
                big
            });
        let max_count = options.max_df * n as f64;
        let mut kept: Vec<(&str, usize)> = df
            .into_iter()
            .filter(|&(_, d)| d >= options.min_df && d as f64 <= max_count)
            .collect();
        if let Some(cap) = options.max_features {
            if kept.len() > cap {
                kept.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
                kept.truncate(cap);
            }
        }
        if kept.is_empty() {
            return Err(Error::Training(format!(
                "empty vocabulary after min_df={} / max_df={} over {n} documents",
                options.min_df, options.max_df
            )));
        }
        kept.sort_unstable_by(|a, b| a.0.cmp(b.0));
        let idf = kept
            .iter()
            .map(|&(_, d)| (((1 + n) as f64 / (1 + d) as f64).ln() + 1.0) as f32)
            .collect();
        let terms = kept.into_iter().map(|(t, _)| t.to_owned()).collect();
        Ok(Self::from_parts(terms, idf, options.clone()))
    }

    /// Number of features (vocabulary size).
    pub fn len(&self) -> usize {
        self.terms.len()
    }

    /// True if the vocabulary is empty.
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// The vocabulary, in feature-index order.
    pub fn terms(&self) -> &[String] {
        &self.terms
    }

    /// The idf weight of each feature.
    pub fn idf(&self) -> &[f32] {
        &self.idf
    }

    /// The options the vocabulary was fitted with.
    pub fn options(&self) -> &VocabOptions {
        &self.options
    }

    /// Feature index of a term.
    pub fn feature(&self, term: &str) -> Option<u32> {
        self.index.get(term).copied()
    }

    /// Vectorizes already tokenized text.
    pub fn transform_tokens<S: AsRef<str>>(&self, tokens: &[S]) -> SparseVec {
        self.build(|push| {
            for t in tokens {
                push(t.as_ref());
            }
        })
    }

    /// Tokenizes and vectorizes raw text.
    pub fn transform(&self, text: &str) -> SparseVec {
        self.build(|push| for_each_token(text, push))
    }

    /// Vectorizes the tokens `feed` hands to its argument, in order: what
    /// [`Vectorizer::transform`] gives for a text whose tokens they are (tokens already
    /// segmented, e.g. a page's `tokens::Tokens`, are not segmented again).
    pub fn transform_with(&self, feed: impl FnOnce(&mut dyn FnMut(&str))) -> SparseVec {
        self.build(feed)
    }

    fn build(&self, feed: impl FnOnce(&mut dyn FnMut(&str))) -> SparseVec {
        let mut ids: Vec<u32> = Vec::new();
        if self.options.bigrams {
            let mut prev = String::new();
            let mut pair = String::new();
            feed(&mut |t| {
                if let Some(&i) = self.index.get(t) {
                    ids.push(i);
                }
                if !prev.is_empty() {
                    pair.clear();
                    pair.push_str(&prev);
                    pair.push(BIGRAM_SEPARATOR);
                    pair.push_str(t);
                    if let Some(&i) = self.index.get(pair.as_str()) {
                        ids.push(i);
                    }
                }
                prev.clear();
                prev.push_str(t);
            });
        } else {
            feed(&mut |t| {
                if let Some(&i) = self.index.get(t) {
                    ids.push(i);
                }
            });
        }
        ids.sort_unstable();
        let mut out = SparseVec::default();
        let mut k = 0;
        while k < ids.len() {
            let id = ids[k];
            let run = ids[k..].iter().take_while(|&&x| x == id).count();
            out.indices.push(id);
            out.values
                .push((1.0 + (run as f32).ln()) * self.idf[id as usize]);
            k += run;
        }
        let norm = out.values.iter().map(|v| v * v).sum::<f32>().sqrt();
        if norm > 0.0 {
            out.values.iter_mut().for_each(|v| *v /= norm);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn docs() -> Vec<Vec<&'static str>> {
        vec![
            vec!["rocket", "launch", "orbit", "launch"],
            vec!["rocket", "engine", "orbit"],
            vec!["hockey", "goal", "season", "goal"],
            vec!["hockey", "season", "playoff"],
        ]
    }

    #[test]
    fn vocabulary_respects_min_df_max_df_and_cap() {
        let opts = VocabOptions {
            min_df: 2,
            max_df: 1.0,
            max_features: None,
            bigrams: false,
        };
        let v = Vectorizer::fit(&docs(), &opts).expect("fit");
        assert_eq!(v.terms(), ["hockey", "orbit", "rocket", "season"]);
        let capped = VocabOptions {
            min_df: 1,
            max_df: 1.0,
            max_features: Some(2),
            bigrams: false,
        };
        let v = Vectorizer::fit(&docs(), &capped).expect("fit");
        // df 2 for hockey/orbit/rocket/season: ties broken by term
        assert_eq!(v.terms(), ["hockey", "orbit"]);
        let strict = VocabOptions {
            min_df: 1,
            max_df: 0.4, // at most 1.6 of 4 documents -> only df == 1 terms
            max_features: None,
            bigrams: false,
        };
        let v = Vectorizer::fit(&docs(), &strict).expect("fit");
        assert!(v.feature("rocket").is_none());
        assert!(v.feature("playoff").is_some());
    }

    #[test]
    fn sublinear_tf_smooth_idf_and_l2_norm() {
        let opts = VocabOptions {
            min_df: 1,
            max_df: 1.0,
            max_features: None,
            bigrams: false,
        };
        let v = Vectorizer::fit(&docs(), &opts).expect("fit");
        let x = v.transform_tokens(&["launch", "launch", "rocket", "unknown"]);
        assert_eq!(x.nnz(), 2);
        let launch_idf = ((5.0f32 / 2.0).ln()) + 1.0;
        let rocket_idf = ((5.0f32 / 3.0).ln()) + 1.0;
        let a = (1.0 + 2.0f32.ln()) * launch_idf;
        let b = rocket_idf;
        let norm = (a * a + b * b).sqrt();
        let li = v.feature("launch").expect("launch") as usize;
        let pos = x
            .indices
            .iter()
            .position(|&i| i as usize == li)
            .expect("in x");
        assert!((x.values[pos] - a / norm).abs() < 1e-6);
        let len: f32 = x.values.iter().map(|v| v * v).sum();
        assert!((len - 1.0).abs() < 1e-6);
        assert!(x.indices.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn bigrams_are_terms_when_enabled() {
        let opts = VocabOptions {
            min_df: 1,
            max_df: 1.0,
            max_features: None,
            bigrams: true,
        };
        let v = Vectorizer::fit(&docs(), &opts).expect("fit");
        let pair = v.feature("rocket launch").expect("bigram in vocabulary");
        assert!(v.feature("hockey goal").is_some());
        assert!(
            v.feature("launch rocket").is_none(),
            "never adjacent in that order"
        );
        let x = v.transform_tokens(&["rocket", "launch"]);
        assert_eq!(x.nnz(), 3, "two unigrams and one bigram: {x:?}");
        assert!(x.indices.contains(&pair));
        let plain = Vectorizer::fit(&docs(), &VocabOptions::default()).expect("fit");
        assert!(plain.feature("rocket launch").is_none());
        assert_eq!(plain.transform_tokens(&["rocket", "launch"]).nnz(), 2);
    }

    #[test]
    fn csr_rows_round_trip() {
        let rows = vec![
            SparseVec {
                indices: vec![0, 3],
                values: vec![0.6, 0.8],
            },
            SparseVec::default(),
            SparseVec {
                indices: vec![2],
                values: vec![1.0],
            },
        ];
        let x = csr_from_rows(&rows, 4).expect("csr");
        assert_eq!((x.rows(), x.cols(), x.nnz()), (3, 4, 3));
        let indptr = x.proper_indptr();
        assert_eq!(
            csr_row(&x, &indptr, 0),
            (&[0usize, 3][..], &[0.6f32, 0.8][..])
        );
        assert!(csr_row(&x, &indptr, 1).0.is_empty());
        assert_eq!(x.get(2, 2), Some(&1.0));
        let unsorted = [SparseVec {
            indices: vec![3, 1],
            values: vec![1.0, 1.0],
        }];
        assert!(matches!(
            csr_from_rows(&unsorted, 4),
            Err(Error::Training(_))
        ));
    }

    #[test]
    fn unknown_words_give_empty_vector() {
        let v = Vectorizer::fit(&docs(), &VocabOptions::default()).expect("fit");
        assert!(v.transform_tokens(&["zebra"]).is_empty());
    }

    #[test]
    fn serde_round_trip_rebuilds_index() {
        let v = Vectorizer::fit(&docs(), &VocabOptions::default()).expect("fit");
        let json = serde_json::to_string(&v).expect("ser");
        let back: Vectorizer = serde_json::from_str(&json).expect("de");
        assert_eq!(back, v);
        assert_eq!(back.feature("orbit"), v.feature("orbit"));
    }
}
