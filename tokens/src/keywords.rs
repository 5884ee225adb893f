//! jieba's TF-IDF keyword ranking (`jieba_rs::TfIdf::default()` with `extract_keywords`, no
//! part-of-speech filter) over words segmented once elsewhere: the words of jieba's cut
//! without HMM, counted when they are keywords (2 characters or more, not one of jieba's
//! stop words), weighted `tf · idf / total` with jieba's IDF table (a word missing from it
//! gets the table's median), the `top_k` best by weight, ties by word.
//!
//! `data/jieba-idf.txt.gz` is jieba-rs 0.11.0's `src/data/idf.txt` (MIT, from jieba), gzipped:
//! sha256 of the text 501b70ec56c34d90f3f590f1918ca4b1bd617d5b46cd99bd6d17c7de6e4f80ed.
//! jieba-rs keeps its table private, so ranking words segmented once needs a copy; the tests
//! compare this ranking with `jieba_rs::TfIdf` on real pages.

use std::io::Read;
use std::sync::LazyLock;

use rustc_hash::FxHashMap;

/// jieba-rs 0.11.0's IDF table (word, space, idf a line), gzipped.
const IDF_GZ: &[u8] = include_bytes!("../data/jieba-idf.txt.gz");

/// jieba-rs's `DEFAULT_STOP_WORDS` (its keyword extractors' stop words).
pub(crate) const STOP_WORDS: [&str; 31] = [
    "the", "of", "is", "and", "to", "in", "that", "we", "for", "an", "are", "by", "be", "as", "on",
    "with", "can", "if", "from", "which", "you", "it", "this", "then", "at", "have", "all", "not",
    "one", "has", "or",
];

/// Fewest characters of a keyword (jieba-rs's default `min_keyword_length`).
const MIN_KEYWORD_CHARS: usize = 2;

/// The IDF table and its median (the idf of a word it does not hold).
struct Idf {
    idf: FxHashMap<String, f64>,
    median: f64,
}

/// Loaded on first use, as jieba-rs's `TfIdf::default()` loads its own.
static IDF: LazyLock<Idf> = LazyLock::new(|| {
    let mut text = String::new();
    flate2::read::GzDecoder::new(IDF_GZ)
        .read_to_string(&mut text)
        .expect("the bundled IDF table is gzipped UTF-8");
    let mut idf = FxHashMap::with_capacity_and_hasher(text.lines().count(), Default::default());
    let mut values = Vec::with_capacity(idf.capacity());
    for line in text.lines() {
        let mut parts = line.split_whitespace();
        if let (Some(word), Some(Ok(v))) = (parts.next(), parts.next().map(str::parse::<f64>)) {
            idf.insert(word.to_owned(), v);
            values.push(v);
        }
    }
    // jieba-rs's median: the lower median of every value read, duplicates included.
    let mid = values.len().saturating_sub(1) / 2;
    let median = if values.is_empty() {
        0.0
    } else {
        *values.select_nth_unstable_by(mid, f64::total_cmp).1
    };
    Idf { idf, median }
});

/// Loads the IDF table now (e.g. at start-up, so the first page is not slow).
pub fn warm_up() {
    LazyLock::force(&IDF);
}

/// Whether `word` is one of [`STOP_WORDS`] (all short and ASCII: a Chinese word is
/// answered without comparing).
fn is_stop_word(word: &str) -> bool {
    word.len() <= 5 && word.is_ascii() && STOP_WORDS.contains(&word)
}

/// Whether jieba's TF-IDF counts `word` (its `KeywordExtractConfig::is_keyword`).
fn is_keyword(word: &str) -> bool {
    let mut chars = 0;
    let mut upper = false;
    for c in word.chars() {
        chars += 1;
        upper |= c.is_uppercase();
    }
    if chars < MIN_KEYWORD_CHARS || is_stop_word(word) {
        return false;
    }
    !upper || !is_stop_word(&word.to_lowercase())
}

/// Term frequencies of the words of one text, as jieba's TF-IDF counts them.
#[derive(Debug, Default)]
pub(crate) struct TermCounts<'a> {
    tf: FxHashMap<&'a str, u64>,
}

impl<'a> TermCounts<'a> {
    /// Counts one word of jieba's cut (without HMM), if it is a keyword.
    pub(crate) fn add(&mut self, word: &'a str) {
        if is_keyword(word) {
            *self.tf.entry(word).or_insert(0) += 1;
        }
    }

    /// Counts `n` occurrences of `word`, if it is a keyword.
    pub(crate) fn add_n(&mut self, word: &'a str, n: u64) {
        if n > 0 && is_keyword(word) {
            *self.tf.entry(word).or_insert(0) += n;
        }
    }

    /// The `top_k` words by `tf · idf / total`, best first, ties by word.
    pub(crate) fn top(&self, top_k: usize) -> Vec<String> {
        if top_k == 0 {
            return Vec::new();
        }
        let idf = &*IDF;
        let total: u64 = self.tf.values().sum();
        let mut ranked: Vec<(f64, &str)> = self
            .tf
            .iter()
            .map(|(&w, &tf)| {
                let v = idf.idf.get(w).copied().unwrap_or(idf.median);
                (tf as f64 * v / total as f64, w)
            })
            .collect();
        let by_rank = |a: &(f64, &str), b: &(f64, &str)| b.0.total_cmp(&a.0).then(a.1.cmp(b.1));
        if ranked.len() > top_k {
            ranked.select_nth_unstable_by(top_k - 1, by_rank);
            ranked.truncate(top_k);
        }
        ranked.sort_unstable_by(by_rank);
        ranked.into_iter().map(|(_, w)| w.to_owned()).collect()
    }
}

/// jieba's TF-IDF keywords of the first `max_chars` characters of `text`: the `top_k` best,
/// best first (`jieba_rs::TfIdf::default().extract_keywords(jieba, prefix, top_k, vec![])`).
pub fn tfidf_keywords(text: &str, max_chars: usize, top_k: usize) -> Vec<String> {
    let cut = text
        .char_indices()
        .nth(max_chars)
        .map_or(text.len(), |(i, _)| i);
    let mut counts = TermCounts::default();
    for w in crate::jieba().cut(&text[..cut], false) {
        counts.add(w.word);
    }
    counts.top(top_k)
}
