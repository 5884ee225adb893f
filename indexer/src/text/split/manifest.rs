//! The manifest table: a row per published split ([`SplitMeta`]), a row per
//! deleted page (a tombstone), and their row keys.

use super::super::TextPage;
use crate::store::{Cell, Row};

/// The manifest table: a row per published split, a row per deleted page.
pub const SPLITS_TABLE: &str = "textsplits";
/// Its one column family.
pub(super) const FAMILY: &str = "s";
/// Key prefix of a split's row (then its file path).
pub(super) const SPLIT_ROW: u8 = b's';
/// Key prefix of a deleted page's row (then the page's key).
pub(super) const TOMBSTONE_ROW: u8 = b'd';

/// A split as its manifest row names it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct SplitMeta {
    /// Path of its file in the file store.
    pub(super) path: String,
    /// `{source}/{yyyy-mm}`: the splits merged together.
    pub(super) group: String,
    pub(super) source: String,
    /// Key times of its pages: `[from, to)`.
    pub(super) from: i64,
    pub(super) to: i64,
    pub(super) docs: u64,
}

impl SplitMeta {
    pub(super) fn row(&self) -> Row {
        let mut row = Row::new(split_key(&self.path));
        for (q, v) in [
            ("group", self.group.as_bytes().to_vec()),
            ("source", self.source.as_bytes().to_vec()),
            ("from", self.from.to_be_bytes().to_vec()),
            ("to", self.to.to_be_bytes().to_vec()),
            ("docs", self.docs.to_be_bytes().to_vec()),
        ] {
            row.cells.push(Cell::new(FAMILY, q, v));
        }
        row
    }

    pub(super) fn of_row(row: &Row) -> Option<SplitMeta> {
        let text = |q: &str| String::from_utf8(row.cell(FAMILY, q.as_bytes())?.to_vec()).ok();
        let int = |q: &str| -> Option<[u8; 8]> { row.cell(FAMILY, q.as_bytes())?.try_into().ok() };
        Some(SplitMeta {
            path: String::from_utf8(row.key.get(1..)?.to_vec()).ok()?,
            group: text("group")?,
            source: text("source")?,
            from: i64::from_be_bytes(int("from")?),
            to: i64::from_be_bytes(int("to")?),
            docs: u64::from_be_bytes(int("docs")?),
        })
    }

    /// Its folder in the local cache.
    pub(super) fn cache_name(&self) -> String {
        self.path
            .trim_end_matches(".split")
            .replace('/', "~")
            .to_string()
    }
}

/// The manifest row key of the split file at `path`.
pub(super) fn split_key(path: &str) -> Vec<u8> {
    let mut key = vec![SPLIT_ROW];
    key.extend_from_slice(path.as_bytes());
    key
}

/// The page a page key names ([`Fields::pk`]).
pub(super) fn page_of_key(key: &[u8]) -> Option<TextPage> {
    TextPage::from_key(key)
}
