//! What a reader knows: the splits it has open, the newest write sequence of
//! each page and the deleted pages (which versions are current), and the BM25
//! statistics of every open split together.

use std::collections::{BTreeMap, HashMap};

use tantivy::query::Bm25StatisticsProvider;
use tantivy::schema::Field;
use tantivy::{Index as TIndex, Searcher, Term as TTerm};

use super::super::embedded::PageColumns;
use super::super::TextPage;
use super::manifest::SplitMeta;

/// A split opened from the local cache.
pub(super) struct OpenSplit {
    pub(super) meta: SplitMeta,
    pub(super) index: TIndex,
    pub(super) searcher: Searcher,
}

/// What a reader knows of the manifest.
#[derive(Default)]
pub(super) struct State {
    pub(super) splits: BTreeMap<String, OpenSplit>,
    /// The newest write sequence of each page in any split.
    pub(super) latest: HashMap<TextPage, u64>,
    /// Deleted pages, with the sequence of their deletion.
    pub(super) tombs: HashMap<TextPage, u64>,
    /// `latest` may name pages of splits no longer open (a refresh failed part-way):
    /// it is made anew at the next refresh.
    pub(super) stale: bool,
}

impl State {
    /// Whether the version of `page` written at `seq` is the one that counts.
    pub(super) fn current(&self, page: &TextPage, seq: u64) -> bool {
        self.latest.get(page) == Some(&seq) && self.tombs.get(page).is_none_or(|&t| t < seq)
    }

    pub(super) fn rebuild_latest(&mut self) -> tantivy::Result<()> {
        let mut latest = HashMap::new();
        for s in self.splits.values() {
            visit_docs(&s.searcher, |page, seq, _| {
                note_latest(&mut latest, page, seq)
            })?;
        }
        self.latest = latest;
        Ok(())
    }
}

pub(super) fn note_latest(latest: &mut HashMap<TextPage, u64>, page: TextPage, seq: u64) {
    let slot = latest.entry(page).or_insert(seq);
    if *slot < seq {
        *slot = seq;
    }
}

/// Every document of a split: its page, write sequence and (segment, doc id).
pub(super) fn visit_docs(
    searcher: &Searcher,
    mut visit: impl FnMut(TextPage, u64, (usize, u32)),
) -> tantivy::Result<()> {
    for (i, reader) in searcher.segment_readers().iter().enumerate() {
        let mut cols = PageColumns::open(reader)?;
        for doc in reader.doc_ids_alive() {
            if let Some(page) = cols.page(doc) {
                visit(page, cols.seq(doc), (i, doc));
            }
        }
    }
    Ok(())
}

/// BM25 statistics of every split together.
pub(super) struct AllSplits<'a>(pub(super) Vec<&'a Searcher>);

impl Bm25StatisticsProvider for AllSplits<'_> {
    fn total_num_tokens(&self, field: Field) -> tantivy::Result<u64> {
        let mut n = 0;
        for s in &self.0 {
            n += s.total_num_tokens(field)?;
        }
        Ok(n)
    }

    fn total_num_docs(&self) -> tantivy::Result<u64> {
        let mut n = 0;
        for s in &self.0 {
            n += Bm25StatisticsProvider::total_num_docs(*s)?;
        }
        Ok(n)
    }

    fn doc_freq(&self, term: &TTerm) -> tantivy::Result<u64> {
        let mut n = 0;
        for s in &self.0 {
            n += s.doc_freq(term)?;
        }
        Ok(n)
    }
}
