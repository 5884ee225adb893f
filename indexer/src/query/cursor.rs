//! The orders of a paged search ([`Sort`]) and the opaque position in one
//! ([`Cursor`]) with the sort key it holds.

use std::fmt;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::{Error, Result};
use crate::keys;

/// Order of the hits of [`Index::search_page`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Sort {
    /// Newest first (default).
    #[default]
    TimeDesc,
    /// Oldest first.
    TimeAsc,
    /// Most comments first (pages without a count last), then newest first.
    Comments,
    /// Most matched query keywords (`keywords` and `keywords_any`) first, then newest first.
    Relevance,
}

impl Sort {
    /// Parses `time` / `time_desc`, `time_asc`, `comments`, `relevance`.
    pub fn parse(s: &str) -> Result<Sort> {
        match s {
            "time" | "time_desc" => Ok(Sort::TimeDesc),
            "time_asc" => Ok(Sort::TimeAsc),
            "comments" => Ok(Sort::Comments),
            "relevance" => Ok(Sort::Relevance),
            _ => Err(Error::Invalid(format!(
                "sort {s:?}: expected time, time_asc, comments or relevance"
            ))),
        }
    }

    /// The name [`Sort::parse`] accepts.
    pub fn as_str(self) -> &'static str {
        match self {
            Sort::TimeDesc => "time",
            Sort::TimeAsc => "time_asc",
            Sort::Comments => "comments",
            Sort::Relevance => "relevance",
        }
    }

    pub(crate) fn code(self) -> u8 {
        match self {
            Sort::TimeDesc => 0,
            Sort::TimeAsc => 1,
            Sort::Comments => 2,
            Sort::Relevance => 3,
        }
    }

    pub(crate) fn from_code(c: u8) -> Option<Sort> {
        [
            Sort::TimeDesc,
            Sort::TimeAsc,
            Sort::Comments,
            Sort::Relevance,
        ]
        .into_iter()
        .find(|s| s.code() == c)
    }
}

/// Cursor format version (first byte).
const CURSOR_VERSION: u8 = 1;

/// Position of a hit in a sort order: the hits are ordered by
/// `(primary, time, url hash, table)`, descending for every sort but
/// [`Sort::TimeAsc`].
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct SortKey {
    /// Comment count (-1 = none), relevance, or 0 for time sorts.
    pub(crate) primary: i64,
    /// Key time, seconds since the epoch.
    pub(crate) time: i64,
    /// URL hash of the row key.
    pub(crate) hash: [u8; 8],
    /// Table.
    pub(crate) table: String,
}

/// Opaque position in a paged search: pass [`SearchPage::next_cursor`] back
/// as `Query::cursor` (via [`Cursor::decode`]) with the same query.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Cursor {
    pub(crate) sort: Sort,
    pub(crate) query: u64,
    pub(crate) key: SortKey,
}

impl Cursor {
    /// The sort the cursor was made for.
    pub fn sort(&self) -> Sort {
        self.sort
    }

    /// URL-safe text (base64url without padding).
    pub fn encode(&self) -> String {
        let mut b = Vec::with_capacity(40 + self.key.table.len());
        b.push(CURSOR_VERSION);
        b.push(self.sort.code());
        b.extend_from_slice(&self.query.to_be_bytes());
        b.extend_from_slice(&self.key.primary.to_be_bytes());
        b.extend_from_slice(&self.key.time.to_be_bytes());
        b.extend_from_slice(&self.key.hash);
        b.extend_from_slice(self.key.table.as_bytes());
        URL_SAFE_NO_PAD.encode(b)
    }

    /// Parses [`Cursor::encode`]'s text; [`Error::BadCursor`] if it is not one.
    pub fn decode(s: &str) -> Result<Cursor> {
        let bad = |why: &str| Error::BadCursor(why.to_owned());
        let b = URL_SAFE_NO_PAD
            .decode(s.trim())
            .map_err(|_| bad("not base64url text"))?;
        let [version, sort, rest @ ..] = b.as_slice() else {
            return Err(bad("too short"));
        };
        if *version != CURSOR_VERSION {
            return Err(bad("unknown cursor version"));
        }
        let sort = Sort::from_code(*sort).ok_or_else(|| bad("unknown sort"))?;
        let (query, rest) = rest
            .split_first_chunk::<8>()
            .ok_or_else(|| bad("too short"))?;
        let (primary, rest) = rest
            .split_first_chunk::<8>()
            .ok_or_else(|| bad("too short"))?;
        let (time, rest) = rest
            .split_first_chunk::<8>()
            .ok_or_else(|| bad("too short"))?;
        let (hash, table) = rest
            .split_first_chunk::<8>()
            .ok_or_else(|| bad("too short"))?;
        let table = std::str::from_utf8(table).map_err(|_| bad("table is not UTF-8"))?;
        if keys::parse_table_name(table).is_none() {
            return Err(bad("not a page table"));
        }
        Ok(Cursor {
            sort,
            query: u64::from_be_bytes(*query),
            key: SortKey {
                primary: i64::from_be_bytes(*primary),
                time: i64::from_be_bytes(*time),
                hash: *hash,
                table: table.to_owned(),
            },
        })
    }
}

impl fmt::Display for Cursor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.encode())
    }
}

impl std::str::FromStr for Cursor {
    type Err = Error;
    fn from_str(s: &str) -> Result<Cursor> {
        Cursor::decode(s)
    }
}

impl Serialize for Cursor {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(&self.encode())
    }
}

impl<'de> Deserialize<'de> for Cursor {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Cursor, D::Error> {
        let s = String::deserialize(d)?;
        Cursor::decode(&s).map_err(serde::de::Error::custom)
    }
}
