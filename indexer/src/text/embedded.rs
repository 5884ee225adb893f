//! The embedded text index: tantivy in a folder of the data dir.
//!
//! One document a page: `pk` (source, key time, URL hash: what replaces and
//! deletes it), `source` (the scope's term), `time` (key time in seconds, a
//! fast field for the scope's range), `hash` (URL hash, fast), and `title` and
//! `body`, indexed with frequencies and positions (phrases, BM25) from the
//! pipeline's tokens, and `title_han` and `body_han`: the pairs of Chinese
//! characters side by side in the runs of the text ([`TextDoc::body_han`]),
//! one position a pair, where a Chinese term is a phrase of its pairs (as the
//! CJK bigram analysis of Elasticsearch and Solr). Nothing is stored. The
//! writer is opened on the first write, so a process that only reads takes no
//! writer lock.

use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tantivy::collector::{Collector, SegmentCollector};
use tantivy::query::{
    BooleanQuery, ConstScoreQuery, EmptyQuery, Occur, PhraseQuery, Query as TQuery, RangeQuery,
    TermQuery,
};
use tantivy::schema::{
    BytesOptions, Field, IndexRecordOption, NumericOptions, Schema, TextFieldIndexing, TextOptions,
    FAST, STRING,
};
use tantivy::tokenizer::{PreTokenizedString, Token};
use tantivy::{
    DocId, Index as TIndex, IndexReader, IndexWriter, ReloadPolicy, Score, SegmentOrdinal,
    SegmentReader, TantivyDocument, Term as TTerm,
};

use super::query::{Clause, Term, TextField, TextQuery};
use super::{TextDoc, TextHit, TextPage, TextScope, TextStore, MAX_TEXT_TOKENS};
use crate::error::{DiskCondition, Error, Result};

/// Memory of the writer's indexing arena (tantivy flushes a segment when full).
const WRITER_ARENA_BYTES: usize = 64 << 20;

/// The fields of the schema.
#[derive(Debug, Clone, Copy)]
pub(super) struct Fields {
    pk: Field,
    /// The write sequence of a page's words, in the splits of [`super::split`] (which
    /// version of a page is current); absent in the embedded index.
    pub(super) seq: Option<Field>,
    source: Field,
    time: Field,
    hash: Field,
    title: Field,
    body: Field,
    title_han: Field,
    body_han: Field,
    /// 1 for a revisit ([`TextDoc::revisit`]); absent in an index made before the flag
    /// was kept (its hits say nothing of it).
    pub(super) revisit: Option<Field>,
}

/// The schema of the text index; with `seq`, of a split ([`super::split`]). The revisit
/// flag is the last field, so that an index made before it ([`legacy_schema`]) numbers
/// its other fields the same way.
pub(super) fn schema(seq: bool) -> (Schema, Fields) {
    schema_of(seq, true)
}

/// The schema of a text index made before the revisit flag was kept: still read.
pub(super) fn legacy_schema(seq: bool) -> (Schema, Fields) {
    schema_of(seq, false)
}

fn schema_of(seq: bool, revisit: bool) -> (Schema, Fields) {
    let mut b = Schema::builder();
    let words = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer("raw")
            .set_index_option(IndexRecordOption::WithFreqsAndPositions),
    );
    let fields = Fields {
        pk: b.add_bytes_field("pk", BytesOptions::default().set_indexed()),
        seq: seq.then(|| b.add_u64_field("seq", FAST)),
        source: b.add_text_field("source", STRING | FAST),
        time: b.add_i64_field("time", NumericOptions::default().set_indexed().set_fast()),
        hash: b.add_u64_field("hash", FAST),
        title: b.add_text_field("title", words.clone()),
        body: b.add_text_field("body", words.clone()),
        title_han: b.add_text_field("title_han", words.clone()),
        body_han: b.add_text_field("body_han", words),
        revisit: revisit.then(|| b.add_u64_field("revisit", FAST)),
    };
    (b.build(), fields)
}

/// The text index of the embedded backend.
pub struct EmbeddedText {
    path: PathBuf,
    index: TIndex,
    reader: IndexReader,
    writer: Mutex<Option<IndexWriter>>,
    fields: Fields,
}

impl std::fmt::Debug for EmbeddedText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddedText")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// A text index error; a write the disk refused (full, read-only, over quota) is
/// [`Error::Disk`] naming the index folder the text index lives in, as the embedded store's.
pub(super) fn text_err(
    path: &Path,
    what: &str,
    e: impl std::error::Error + Send + Sync + 'static,
) -> Error {
    let message = e.to_string();
    let condition = [
        ("os error 28", DiskCondition::NoSpace),
        ("os error 30", DiskCondition::ReadOnly),
        ("os error 122", DiskCondition::QuotaExceeded),
    ]
    .into_iter()
    .find(|(code, _)| message.contains(code))
    .map(|(_, c)| c);
    match condition {
        Some(condition) => Error::Disk {
            path: path.parent().unwrap_or(path).display().to_string(),
            condition,
            context: format!("text index: {what}"),
            source: Box::new(e),
        },
        None => Error::backend(format!("text index {}: {what}", path.display()), e),
    }
}

impl EmbeddedText {
    /// Opens the text index in `path`, creating it (and the folder) when absent.
    pub fn open(path: &Path) -> Result<EmbeddedText> {
        std::fs::create_dir_all(path).map_err(|e| text_err(path, "create folder", e))?;
        let (schema, mut fields) = schema(false);
        let (legacy, legacy_fields) = legacy_schema(false);
        let existing = if path.join("meta.json").exists() {
            let index = TIndex::open_in_dir(path).map_err(|e| text_err(path, "open", e))?;
            if index.schema() == schema {
                Some(index)
            } else if index.schema() == legacy {
                // Made before the revisit flag was kept: searched as it is, its hits
                // checked against the rows (a rebuild makes it the current kind).
                fields = legacy_fields;
                Some(index)
            } else {
                // Made by an earlier version (another schema). The index is derived from
                // the packs: it is set aside whole as `text.old` and made anew, and a query
                // then says the index is empty and `harvest fsck --repair` fills it.
                drop(index);
                let old = path.with_extension("old");
                if old.exists() {
                    std::fs::remove_dir_all(&old).map_err(|e| text_err(&old, "remove", e))?;
                }
                std::fs::rename(path, &old).map_err(|e| text_err(path, "set aside", e))?;
                std::fs::create_dir_all(path).map_err(|e| text_err(path, "create folder", e))?;
                None
            }
        } else {
            None
        };
        let index = match existing {
            Some(index) => index,
            None => TIndex::create_in_dir(path, schema).map_err(|e| text_err(path, "create", e))?,
        };
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(|e| text_err(path, "open reader", e))?;
        Ok(EmbeddedText {
            path: path.to_owned(),
            index,
            reader,
            writer: Mutex::new(None),
            fields,
        })
    }

    /// The folder it lives in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs `f` with the writer, opening it first if needed, then commits and
    /// makes the change visible to searches.
    fn with_writer(&self, f: impl FnOnce(&IndexWriter, &Fields) -> Result<()>) -> Result<()> {
        let mut guard = self
            .writer
            .lock()
            .map_err(|_| Error::Invalid("text index writer lock poisoned".into()))?;
        if guard.is_none() {
            let w = self
                .index
                .writer_with_num_threads(1, WRITER_ARENA_BYTES)
                .map_err(|e| text_err(&self.path, "open writer", e))?;
            *guard = Some(w);
        }
        let Some(writer) = guard.as_mut() else {
            return Err(Error::Invalid("text index writer missing".into()));
        };
        if let Err(e) = f(writer, &self.fields) {
            // Leave nothing of a failed batch for the next commit.
            let _ = writer.rollback();
            return Err(e);
        }
        if let Err(e) = writer.commit() {
            *guard = None;
            return Err(text_err(&self.path, "commit", e));
        }
        self.reader
            .reload()
            .map_err(|e| text_err(&self.path, "reload", e))
    }
}

impl Fields {
    /// A page's document, with its key; `seq` is written where the schema has it.
    pub(super) fn document(&self, d: &TextDoc, seq: u64) -> (Vec<u8>, TantivyDocument) {
        let f = self;
        let page = TextPage::of_doc(d);
        let pk = Fields::pk(&page);
        let mut doc = TantivyDocument::default();
        doc.add_bytes(f.pk, &pk);
        if let Some(field) = f.seq {
            doc.add_u64(field, seq);
        }
        doc.add_text(f.source, &d.source);
        doc.add_i64(f.time, page.time);
        doc.add_u64(f.hash, u64::from_be_bytes(page.hash));
        doc.add_pre_tokenized_text(f.title, pre_tokenized(d.title.iter().map(String::as_str)));
        doc.add_pre_tokenized_text(f.body, pre_tokenized(d.body.iter()));
        doc.add_pre_tokenized_text(f.title_han, pre_tokenized_han(&d.title_han));
        doc.add_pre_tokenized_text(f.body_han, pre_tokenized_han(&d.body_han));
        if let Some(field) = f.revisit {
            doc.add_u64(field, u64::from(d.revisit));
        }
        (pk, doc)
    }

    /// The key that names `page` in the index (what replaces and deletes it).
    pub(super) fn pk(page: &TextPage) -> Vec<u8> {
        page.key()
    }

    fn scope_query(&self, scope: &TextScope) -> Box<dyn TQuery> {
        let f = self;
        let mut parts: Vec<(Occur, Box<dyn TQuery>)> = vec![(
            Occur::Must,
            Box::new(RangeQuery::new(
                Bound::Included(TTerm::from_field_i64(f.time, scope.from)),
                Bound::Excluded(TTerm::from_field_i64(f.time, scope.to)),
            )),
        )];
        if !scope.sources.is_empty() {
            let any: Vec<(Occur, Box<dyn TQuery>)> = scope
                .sources
                .iter()
                .map(|s| {
                    let q: Box<dyn TQuery> = Box::new(TermQuery::new(
                        TTerm::from_field_text(f.source, s),
                        IndexRecordOption::Basic,
                    ));
                    (Occur::Should, q)
                })
                .collect();
            parts.push((Occur::Must, Box::new(BooleanQuery::new(any))));
        }
        Box::new(ConstScoreQuery::new(
            Box::new(BooleanQuery::new(parts)),
            0.0,
        ))
    }

    fn term_query(&self, term: &Term) -> Box<dyn TQuery> {
        let f = self;
        let (fields, run): (Vec<Field>, Vec<String>) = match &term.han {
            Some(chars) => (
                match term.field {
                    TextField::Title => vec![f.title_han],
                    TextField::Any => vec![f.title_han, f.body_han],
                },
                han_pairs(chars).map(str::to_owned).collect(),
            ),
            None => (
                match term.field {
                    TextField::Title => vec![f.title],
                    TextField::Any => vec![f.title, f.body],
                },
                term.tokens.clone(),
            ),
        };
        let in_field = |field: Field| -> Box<dyn TQuery> {
            let terms: Vec<TTerm> = run
                .iter()
                .map(|t| TTerm::from_field_text(field, t))
                .collect();
            match terms.len() {
                0 => Box::new(EmptyQuery),
                1 => Box::new(TermQuery::new(
                    terms[0].clone(),
                    IndexRecordOption::WithFreqs,
                )),
                _ => Box::new(PhraseQuery::new(terms)),
            }
        };
        Box::new(BooleanQuery::new(
            fields
                .into_iter()
                .map(|field| (Occur::Should, in_field(field)))
                .collect(),
        ))
    }

    /// The tantivy query of a text query within a scope.
    pub(super) fn query(&self, q: &TextQuery, scope: &TextScope) -> Box<dyn TQuery> {
        let mut parts: Vec<(Occur, Box<dyn TQuery>)> = vec![(Occur::Must, self.scope_query(scope))];
        for clause in &q.clauses {
            match clause {
                Clause::AnyOf(terms) => {
                    let any = terms
                        .iter()
                        .map(|t| (Occur::Should, self.term_query(t)))
                        .collect();
                    parts.push((Occur::Must, Box::new(BooleanQuery::new(any))));
                }
                Clause::Not(t) => parts.push((Occur::MustNot, self.term_query(t))),
            }
        }
        Box::new(BooleanQuery::new(parts))
    }
}

/// The tokens of a text for tantivy, one position each, with their other indexed forms
/// ([`super::query::indexed_forms`]) at the same position.
fn pre_tokenized<'a>(words: impl Iterator<Item = &'a str>) -> PreTokenizedString {
    let tokens = words
        .take(MAX_TEXT_TOKENS)
        .enumerate()
        .flat_map(|(position, w)| super::query::indexed_forms(w).map(move |f| token(position, f)))
        .collect();
    PreTokenizedString {
        text: String::new(),
        tokens,
    }
}

fn token(position: usize, text: &str) -> Token {
    Token {
        offset_from: 0,
        offset_to: 0,
        position,
        text: text.to_owned(),
        position_length: 1,
    }
}

/// The pairs of characters side by side in a run of Chinese characters, in order.
fn han_pairs(run: &str) -> impl Iterator<Item = &str> + '_ {
    let starts: Vec<usize> = run.char_indices().map(|(i, _)| i).collect();
    (0..starts.len().saturating_sub(1)).map(move |k| {
        let end = starts.get(k + 2).copied().unwrap_or(run.len());
        &run[starts[k]..end]
    })
}

/// The character pairs of runs of Chinese characters ([`tokens::han_runs`]) for tantivy,
/// one position each; the next run starts two positions on, so no phrase spans two runs.
fn pre_tokenized_han(runs: &str) -> PreTokenizedString {
    let mut tokens = Vec::new();
    let mut position = 0;
    for run in runs.split('\n').filter(|r| !r.is_empty()) {
        for pair in han_pairs(run) {
            tokens.push(token(position, pair));
            position += 1;
        }
        position += 1;
    }
    PreTokenizedString {
        text: String::new(),
        tokens,
    }
}

impl TextStore for EmbeddedText {
    fn write(&self, docs: &[TextDoc]) -> Result<()> {
        if docs.is_empty() {
            return Ok(());
        }
        self.with_writer(|w, f| {
            for d in docs {
                let (pk, doc) = f.document(d, 0);
                w.delete_term(TTerm::from_field_bytes(f.pk, &pk));
                w.add_document(doc)
                    .map_err(|e| text_err(&self.path, "add page", e))?;
            }
            Ok(())
        })
    }

    fn delete(&self, pages: &[TextPage]) -> Result<()> {
        if pages.is_empty() {
            return Ok(());
        }
        self.with_writer(|w, f| {
            for p in pages {
                w.delete_term(TTerm::from_field_bytes(f.pk, &Fields::pk(p)));
            }
            Ok(())
        })
    }

    fn search(&self, query: &TextQuery, scope: &TextScope) -> Result<Vec<TextHit>> {
        if scope.from >= scope.to {
            return Ok(Vec::new());
        }
        let searcher = self.reader.searcher();
        let q = self.fields.query(query, scope);
        let hits = searcher
            .search(q.as_ref(), &AllHits { scored: true })
            .map_err(|e| text_err(&self.path, "search", e))?;
        Ok(hits.into_iter().map(|(hit, _)| hit).collect())
    }

    fn pages(&self, visit: &mut dyn FnMut(TextPage)) -> Result<()> {
        let searcher = self.reader.searcher();
        for reader in searcher.segment_readers() {
            let mut seg = PageColumns::open(reader).map_err(|e| text_err(&self.path, "read", e))?;
            for doc in reader.doc_ids_alive() {
                if let Some(p) = seg.page(doc) {
                    visit(p);
                }
            }
        }
        Ok(())
    }

    fn len(&self) -> Result<u64> {
        Ok(self.reader.searcher().num_docs())
    }
}

/// A segment's columns that name a page.
pub(super) struct PageColumns {
    time: tantivy::columnar::Column<i64>,
    /// The write sequence, in a split.
    seq: Option<tantivy::columnar::Column<u64>>,
    hash: tantivy::columnar::Column<u64>,
    /// The revisit flag, where the index keeps it.
    revisit: Option<tantivy::columnar::Column<u64>>,
    source: Option<tantivy::columnar::StrColumn>,
    /// Source names by term ordinal, read once per segment.
    names: Vec<Option<Arc<str>>>,
}

impl PageColumns {
    pub(super) fn open(reader: &SegmentReader) -> tantivy::Result<PageColumns> {
        let ff = reader.fast_fields();
        let seq = match reader.schema().get_field("seq") {
            Ok(_) => Some(ff.u64("seq")?),
            Err(_) => None,
        };
        let revisit = match reader.schema().get_field("revisit") {
            Ok(_) => Some(ff.u64("revisit")?),
            Err(_) => None,
        };
        Ok(PageColumns {
            time: ff.i64("time")?,
            seq,
            hash: ff.u64("hash")?,
            revisit,
            source: ff.str("source")?,
            names: Vec::new(),
        })
    }

    /// Whether `doc` is a revisit; `None` where the index keeps no flag.
    pub(super) fn revisit(&self, doc: DocId) -> Option<bool> {
        self.revisit.as_ref()?.first(doc).map(|v| v != 0)
    }

    /// The write sequence of `doc` (0 where the index keeps none).
    pub(super) fn seq(&self, doc: DocId) -> u64 {
        self.seq.as_ref().and_then(|c| c.first(doc)).unwrap_or(0)
    }

    pub(super) fn page(&mut self, doc: DocId) -> Option<TextPage> {
        let time = self.time.first(doc)?;
        let hash = self.hash.first(doc)?.to_be_bytes();
        let col = self.source.as_ref()?;
        let ord = col.term_ords(doc).next()?;
        let slot = usize::try_from(ord).ok()?;
        if self.names.len() <= slot {
            self.names.resize(slot + 1, None);
        }
        let source = match &self.names[slot] {
            Some(s) => s.clone(),
            None => {
                let mut s = String::new();
                col.ord_to_str(ord, &mut s).ok()?;
                let s: Arc<str> = Arc::from(s.as_str());
                self.names[slot] = Some(s.clone());
                s
            }
        };
        Some(TextPage { source, time, hash })
    }
}

/// Collects every matching page with its score and write sequence.
pub(super) struct AllHits {
    pub(super) scored: bool,
}

pub(super) struct SegmentHits {
    cols: PageColumns,
    hits: Vec<(TextHit, u64)>,
}

impl Collector for AllHits {
    type Fruit = Vec<(TextHit, u64)>;
    type Child = SegmentHits;

    fn for_segment(
        &self,
        _ord: SegmentOrdinal,
        reader: &SegmentReader,
    ) -> tantivy::Result<SegmentHits> {
        Ok(SegmentHits {
            cols: PageColumns::open(reader)?,
            hits: Vec::new(),
        })
    }

    fn requires_scoring(&self) -> bool {
        self.scored
    }

    fn merge_fruits(
        &self,
        fruits: Vec<Vec<(TextHit, u64)>>,
    ) -> tantivy::Result<Vec<(TextHit, u64)>> {
        Ok(fruits.into_iter().flatten().collect())
    }
}

impl SegmentCollector for SegmentHits {
    type Fruit = Vec<(TextHit, u64)>;

    fn collect(&mut self, doc: DocId, score: Score) {
        if let Some(page) = self.cols.page(doc) {
            let seq = self.cols.seq(doc);
            let revisit = self.cols.revisit(doc);
            self.hits.push((
                TextHit {
                    page,
                    score,
                    revisit,
                },
                seq,
            ));
        }
    }

    fn harvest(self) -> Vec<(TextHit, u64)> {
        self.hits
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::keys::{url_hash, URL_HASH_LEN};

    pub(in crate::text) fn doc(
        source: &str,
        secs: i64,
        url: &str,
        title: &str,
        body: &str,
    ) -> TextDoc {
        let t = chrono::DateTime::from_timestamp(secs, 0).unwrap_or_default();
        TextDoc::new(
            source,
            t,
            url,
            title,
            tokens::Tokens::new(body),
            TextDoc::han_of(body),
        )
    }

    pub(in crate::text) fn scope(from: i64, to: i64) -> TextScope {
        TextScope {
            sources: Vec::new(),
            from,
            to,
        }
    }

    pub(in crate::text) fn urls(
        store: &dyn TextStore,
        q: &str,
        s: &TextScope,
    ) -> Vec<[u8; URL_HASH_LEN]> {
        let mut v: Vec<_> = store
            .search(&TextQuery::parse(q).unwrap(), s)
            .unwrap()
            .into_iter()
            .map(|h| h.page.hash)
            .collect();
        v.sort();
        v
    }

    /// Hits carry the revisit flag of their pages, in the text store `store`.
    pub(in crate::text) fn revisit_flags_on(store: &dyn TextStore) {
        let mut again = doc("a", 200, "http://x/2", "Talks", "Trade talks again.");
        again.revisit = true;
        store
            .write(&[doc("a", 100, "http://x/1", "Talks", "Trade talks."), again])
            .unwrap();
        let mut flags: Vec<(i64, Option<bool>)> = store
            .search(&TextQuery::parse("trade").unwrap(), &scope(0, 1_000))
            .unwrap()
            .into_iter()
            .map(|h| (h.page.time, h.revisit))
            .collect();
        flags.sort();
        assert_eq!(flags, vec![(100, Some(false)), (200, Some(true))]);
    }

    #[test]
    fn hits_carry_the_revisit_flag_and_an_index_made_before_it_is_read_as_it_is() {
        let dir = tempfile::tempdir().unwrap();
        revisit_flags_on(&EmbeddedText::open(&dir.path().join("now")).unwrap());

        // An index made before the flag: opened as it is (not set aside), written to
        // and searched; its hits say nothing of revisits.
        let old = dir.path().join("old");
        std::fs::create_dir_all(&old).unwrap();
        TIndex::create_in_dir(&old, legacy_schema(false).0).unwrap();
        let store = EmbeddedText::open(&old).unwrap();
        store
            .write(&[doc("a", 100, "http://x/1", "Talks", "Trade talks.")])
            .unwrap();
        drop(store);
        let store = EmbeddedText::open(&old).unwrap();
        let hits = store
            .search(&TextQuery::parse("trade").unwrap(), &scope(0, 1_000))
            .unwrap();
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].revisit, None);
        assert!(!old.with_extension("old").exists());
    }

    #[test]
    fn words_phrases_scope_replace_and_delete() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().to_owned();
        words_phrases_scope_replace_and_delete_on(&move || {
            Box::new(EmbeddedText::open(&path).unwrap())
        });
    }

    /// Words, phrases, scopes, replacing and deleting pages, on the text store `open`
    /// opens (again, after a drop: what was written is still there).
    pub(in crate::text) fn words_phrases_scope_replace_and_delete_on(
        open: &dyn Fn() -> Box<dyn TextStore>,
    ) {
        let opened = open();
        let store = opened.as_ref();
        store
            .write(&[
                doc(
                    "a",
                    100,
                    "http://x/1",
                    "Trade war",
                    "Tariffs rose again as the talks failed.",
                ),
                doc(
                    "a",
                    200,
                    "http://x/2",
                    "Talks",
                    "The war on trade is over, said the minister's aide.",
                ),
                doc(
                    "b",
                    300,
                    "http://x/3",
                    "中美贸易谈判",
                    "中美两国就贸易问题举行新一轮磋商。",
                ),
            ])
            .unwrap();
        let all = scope(0, 1_000);
        let h = |u: &str| url_hash(u);
        assert_eq!(urls(store, "trade", &all), {
            let mut v = vec![h("http://x/1"), h("http://x/2")];
            v.sort();
            v
        });
        assert_eq!(urls(store, "\"trade war\"", &all), vec![h("http://x/1")]);
        assert_eq!(urls(store, "title:talks", &all), vec![h("http://x/2")]);
        assert_eq!(urls(store, "minister", &all), vec![h("http://x/2")]);
        assert_eq!(urls(store, "trade -tariffs", &all), vec![h("http://x/2")]);
        assert_eq!(urls(store, "磋商", &all), vec![h("http://x/3")]);
        // Chinese as written, across the words of the sentence, not across punctuation.
        assert_eq!(urls(store, "国就贸", &all), vec![h("http://x/3")]);
        assert_eq!(urls(store, "title:美贸", &all), vec![h("http://x/3")]);
        assert!(urls(store, "title:两国", &all).is_empty());
        assert!(urls(store, "磋商中美", &all).is_empty());
        assert_eq!(
            urls(store, "trade", &scope(150, 1_000)),
            vec![h("http://x/2")]
        );
        let only_b = TextScope {
            sources: vec!["b".into()],
            ..all.clone()
        };
        assert!(urls(store, "trade", &only_b).is_empty());
        // Re-written: replaced, not added.
        store
            .write(&[doc("a", 100, "http://x/1", "Peace", "Nothing to see.")])
            .unwrap();
        assert_eq!(store.len().unwrap(), 3);
        assert_eq!(urls(store, "\"trade war\"", &all), Vec::<[u8; 8]>::new());
        assert_eq!(urls(store, "peace", &all), vec![h("http://x/1")]);
        let mut pages = Vec::new();
        store.pages(&mut |p| pages.push(p)).unwrap();
        assert_eq!(pages.len(), 3);
        let gone: Vec<TextPage> = pages.into_iter().filter(|p| &*p.source == "b").collect();
        store.delete(&gone).unwrap();
        assert_eq!(store.len().unwrap(), 2);
        // Reopened: still there.
        drop(opened);
        let store = open();
        assert_eq!(urls(store.as_ref(), "peace", &all), vec![h("http://x/1")]);
        assert_eq!(store.len().unwrap(), 2);
    }

    #[test]
    fn an_index_of_another_schema_is_set_aside_and_made_anew() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("text");
        std::fs::create_dir_all(&path).unwrap();
        let mut b = Schema::builder();
        b.add_text_field("body", STRING);
        TIndex::create_in_dir(&path, b.build()).unwrap();
        let store = EmbeddedText::open(&path).unwrap();
        assert!(store.is_empty().unwrap());
        assert!(dir.path().join("text.old/meta.json").exists());
        store
            .write(&[doc("a", 1, "http://x/1", "", "war")])
            .unwrap();
        drop(store);
        let store = EmbeddedText::open(&path).unwrap();
        assert_eq!(
            store.len().unwrap(),
            1,
            "a current index is opened, not set aside"
        );
    }

    #[test]
    fn more_mentions_rank_higher() {
        let dir = tempfile::tempdir().unwrap();
        let store = EmbeddedText::open(dir.path()).unwrap();
        store
            .write(&[
                doc(
                    "a",
                    1,
                    "http://x/1",
                    "",
                    "syria talks weather sport markets",
                ),
                doc("a", 2, "http://x/2", "Syria", "syria syria ceasefire syria"),
            ])
            .unwrap();
        let mut hits = store
            .search(&TextQuery::parse("syria").unwrap(), &scope(0, 10))
            .unwrap();
        hits.sort_by(|a, b| b.score.total_cmp(&a.score));
        assert_eq!(hits[0].page.hash, url_hash("http://x/2"));
        assert!(hits[0].score > hits[1].score);
    }
}
