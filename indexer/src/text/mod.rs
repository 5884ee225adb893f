//! The text index: which pages hold which words, for "pages that mention K".
//!
//! The page tables answer every attribute condition; the text index answers
//! the words of a page's headline and text ([`TextQuery`]) and ranks them
//! (BM25). A text search gives the pages it matches as (source, key time, URL
//! hash, score): exactly what names a page's data row in its table, so the
//! query engine takes the hits of a (table, bucket) as one more sorted stream
//! beside the posting rows (`query::exec`).
//!
//! The index holds no text: the words come pre-segmented from the pipeline
//! (the page's [`tokens::Tokens`], made once for the classifier and the
//! near-duplicate fingerprint), and snippets are cut from the text kept in the
//! packs. A page is written to the text index before its rows go to the page
//! table (`Index::index_texts` then `Index::index_pages`), under a mark that the
//! rows' batch removes ([`crate::tables::textmark`]): a hit without a mark has its rows,
//! so counts of mentions need not read them; a process killed in between leaves
//! its mark, and the next writer to open the index removes the words of the
//! pages whose rows never came. The index keeps each page's revisit flag, so
//! that it leaves revisits out as the rows do.
//!
//! [`TextStore`] is the storage role; [`embedded::EmbeddedText`] (tantivy in
//! the data folder) is the embedded backend, [`split::SplitText`] (immutable
//! tantivy splits in a shared file store, listed in a manifest table) the
//! cluster's.

pub mod embedded;
pub mod query;
pub mod split;

use std::sync::Arc;

use chrono::{DateTime, Utc};

pub use query::{indexed_forms, Clause, FieldText, Term, TextField, TextQuery, MAX_QUERY_TOKENS};

use crate::error::Result;

/// Most tokens of a page's text that are indexed: the rest of a longer text
/// is left out (counted in [`TextDoc::dropped`]).
pub const MAX_TEXT_TOKENS: usize = 100_000;
/// Most Chinese characters of a page's text whose pairs are indexed
/// ([`TextDoc::body_han`]).
pub const MAX_TEXT_HAN_CHARS: usize = 200_000;

/// One page's words, as the pipeline hands them to the text index.
#[derive(Debug, Clone, PartialEq)]
pub struct TextDoc {
    /// Source (as in the page's table name).
    pub source: String,
    /// Key time of the page (publish time, else fetch time).
    pub time: DateTime<Utc>,
    /// The page's URL: its hash names the page ([`crate::keys::url_hash`]).
    pub url: String,
    /// Tokens of the headline, in order.
    pub title: Vec<String>,
    /// Tokens of the text (article text, else the body text), in order, at
    /// most [`MAX_TEXT_TOKENS`].
    pub body: tokens::Tokens,
    /// Tokens of the text beyond [`MAX_TEXT_TOKENS`], not indexed.
    pub dropped: usize,
    /// Whether the page is a revisit (its payload was seen before): the text index keeps
    /// the flag, so that a text search leaves revisits out as the rows would.
    pub revisit: bool,
    /// The runs of Chinese characters of the headline ([`tokens::han_runs`]).
    pub title_han: String,
    /// The runs of Chinese characters of the text, at most [`MAX_TEXT_HAN_CHARS`]: a
    /// Chinese word or phrase is looked for as the characters written, in these runs.
    pub body_han: String,
}

impl TextDoc {
    /// The words of a stored page (its source, key time, URL, headline and revisit flag
    /// from its record), with its text's tokens and Chinese runs as in [`TextDoc::new`].
    pub fn of(page: &crate::PageRecord, body: tokens::Tokens, body_han: String) -> TextDoc {
        TextDoc {
            revisit: page.revisit,
            ..TextDoc::new(
                &page.source,
                page.key_time(),
                &page.url,
                &page.title,
                body,
                body_han,
            )
        }
    }

    /// The words of a page that is not a revisit: its headline is segmented here, its
    /// text's tokens come segmented, with the text's Chinese runs (`body_han`:
    /// [`TextDoc::han_of`] of the same text, taken before the text was let go).
    pub fn new(
        source: &str,
        time: DateTime<Utc>,
        url: &str,
        title: &str,
        body: tokens::Tokens,
        body_han: String,
    ) -> TextDoc {
        let dropped = body.len().saturating_sub(MAX_TEXT_TOKENS);
        TextDoc {
            source: source.to_owned(),
            time,
            url: url.to_owned(),
            title: tokens::tokenize(title),
            body,
            dropped,
            revisit: false,
            title_han: tokens::han_runs(title, MAX_TEXT_HAN_CHARS),
            body_han,
        }
    }

    /// What the text index keeps of a text's Chinese characters: its runs, at most
    /// [`MAX_TEXT_HAN_CHARS`].
    pub fn han_of(text: &str) -> String {
        tokens::han_runs(text, MAX_TEXT_HAN_CHARS)
    }
}

/// Names a page in the text index: what its row key is made of.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TextPage {
    /// Source.
    pub source: Arc<str>,
    /// Key time, whole seconds.
    pub time: i64,
    /// URL hash ([`crate::keys::url_hash`]).
    pub hash: [u8; crate::keys::URL_HASH_LEN],
}

impl TextPage {
    /// The page a text document names.
    pub fn of_doc(d: &TextDoc) -> TextPage {
        TextPage {
            source: Arc::from(d.source.as_str()),
            time: d.time.timestamp(),
            hash: crate::keys::url_hash(&d.url),
        }
    }

    /// The bytes that name the page in the text index (what replaces and deletes it):
    /// source, a zero byte, key time (8 bytes, big-endian), URL hash.
    pub fn key(&self) -> Vec<u8> {
        let mut k = Vec::with_capacity(self.source.len() + 1 + 8 + crate::keys::URL_HASH_LEN);
        k.extend_from_slice(self.source.as_bytes());
        k.push(0);
        k.extend_from_slice(&self.time.to_be_bytes());
        k.extend_from_slice(&self.hash);
        k
    }

    /// The page [`TextPage::key`] names.
    pub fn from_key(key: &[u8]) -> Option<TextPage> {
        let zero = key.iter().position(|&b| b == 0)?;
        let source = std::str::from_utf8(&key[..zero]).ok()?;
        let rest = &key[zero + 1..];
        if rest.len() != 8 + crate::keys::URL_HASH_LEN {
            return None;
        }
        Some(TextPage {
            source: Arc::from(source),
            time: i64::from_be_bytes(rest[..8].try_into().ok()?),
            hash: rest[8..].try_into().ok()?,
        })
    }

    /// How the text index names `page`.
    pub fn of(page: &crate::PageRecord) -> TextPage {
        TextPage {
            source: Arc::from(page.source.as_str()),
            time: page.key_time().timestamp(),
            hash: crate::keys::url_hash(&page.url),
        }
    }
}

/// A page a text search matched, with its relevance.
#[derive(Debug, Clone, PartialEq)]
pub struct TextHit {
    /// The page.
    pub page: TextPage,
    /// BM25 score of the text query (higher: more relevant).
    pub score: f32,
    /// Whether the page is a revisit ([`TextDoc::revisit`]); `None` where the index was
    /// made before it kept the flag.
    pub revisit: Option<bool>,
}

/// Where a text search looks: sources (empty = all) and `[from, to)` of the
/// key time in whole seconds.
#[derive(Debug, Clone, PartialEq)]
pub struct TextScope {
    /// Sources, empty = every source.
    pub sources: Vec<String>,
    /// Inclusive lower bound (seconds since the epoch).
    pub from: i64,
    /// Exclusive upper bound (seconds since the epoch).
    pub to: i64,
}

/// The storage role of the text index.
pub trait TextStore: Send + Sync {
    /// Adds (or replaces: a page with the same source, key time and URL) the
    /// pages' words and makes them durable before returning.
    fn write(&self, docs: &[TextDoc]) -> Result<()>;

    /// Removes pages (when their rows are deleted).
    fn delete(&self, pages: &[TextPage]) -> Result<()>;

    /// Every page of the scope that holds the query, unordered.
    fn search(&self, query: &TextQuery, scope: &TextScope) -> Result<Vec<TextHit>>;

    /// Every page the index holds (for `fsck`: pages without rows, rows
    /// without text).
    fn pages(&self, visit: &mut dyn FnMut(TextPage)) -> Result<()>;

    /// Pages held.
    fn len(&self) -> Result<u64>;

    /// Whether it holds no page.
    fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }

    /// Files of the store that nothing names any more and no write is still making
    /// (for `fsck`): a writer killed half-way leaves them. None for a store that keeps
    /// no such files.
    fn unlisted_files(&self) -> Result<Vec<String>> {
        Ok(Vec::new())
    }

    /// Removes files [`TextStore::unlisted_files`] gave.
    fn remove_files(&self, files: &[String]) -> Result<()> {
        let _ = files;
        Ok(())
    }
}
