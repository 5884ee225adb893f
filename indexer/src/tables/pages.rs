//! Page ids, page details and the lists behind `/api/pages/{id}`,
//! `/api/sources` and `/api/topics`.
//!
//! A [`PageId`] is `{table}.{base64url(row key)}` (e.g.
//! `anglo_news_2017.AwACCBMAAJ7LZ2tUgPg`): only `[a-z0-9_.A-Z-]`, stable for
//! as long as the row exists.

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::index::Index;
use crate::keys::{self, ATTR_MEDIA, ATTR_TOPIC};
use crate::query::PageHit;
use crate::record::PageRecord;
use crate::record::{DigestEntry, PackLocation, UrlState};

/// Separator between the table and the encoded row key of a [`PageId`].
const ID_SEP: char = '.';

/// Stable identifier of a page (table + data-row key).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PageId {
    /// Table `{source}_{yyyy}`.
    pub table: String,
    /// Data-row key.
    pub row_key: Vec<u8>,
}

impl PageId {
    /// Parses the text form; [`Error::BadPageId`] if it is not a page id.
    pub fn parse(id: &str) -> Result<PageId> {
        let bad = |reason| Error::BadPageId {
            id: id.to_owned(),
            reason,
        };
        let (table, key) = id.split_once(ID_SEP).ok_or_else(|| bad("missing '.'"))?;
        if keys::parse_table_name(table).is_none() {
            return Err(bad("not a page table"));
        }
        let row_key = URL_SAFE_NO_PAD
            .decode(key)
            .map_err(|_| bad("row key is not base64url"))?;
        keys::split_data_key(&row_key).map_err(|_| bad("not a data-row key"))?;
        Ok(PageId {
            table: table.to_owned(),
            row_key,
        })
    }
}

impl fmt::Display for PageId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}{ID_SEP}{}",
            self.table,
            URL_SAFE_NO_PAD.encode(&self.row_key)
        )
    }
}

impl FromStr for PageId {
    type Err = Error;
    fn from_str(s: &str) -> Result<PageId> {
        PageId::parse(s)
    }
}

impl PageHit {
    /// The hit's [`PageId`] in text form.
    pub fn id(&self) -> String {
        PageId {
            table: self.table.clone(),
            row_key: self.row_key.clone(),
        }
        .to_string()
    }
}

/// Everything known about one page: its attributes, where its record is,
/// and its capture history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PageDetail {
    /// Page id (text form).
    pub id: String,
    /// The page and its row.
    pub hit: PageHit,
    /// Pack location of this capture's WARC record.
    pub location: PackLocation,
    /// Number of captures of the URL (1 when the `urls` table has no row).
    pub captures: u64,
    /// First capture of the URL, when recorded.
    pub first_seen: Option<chrono::DateTime<chrono::Utc>>,
    /// Last capture of the URL (this page's fetch time when not recorded).
    pub last_seen: chrono::DateTime<chrono::Utc>,
    /// The URL's row in `urls` (ETag, Last-Modified, last capture's row).
    pub url_state: Option<UrlState>,
    /// The payload digest's first capture and capture count, when recorded.
    pub digest: Option<DigestEntry>,
}

impl Index {
    /// Reads the page with this id (`None` if the row does not exist).
    pub fn get_by_id(&self, id: &str) -> Result<Option<PageHit>> {
        let pid = PageId::parse(id)?;
        if !self.store.list_tables()?.contains(&pid.table) {
            return Ok(None);
        }
        Ok(self
            .get_page(&pid.table, &pid.row_key)?
            .map(|page| PageHit {
                table: pid.table,
                row_key: pid.row_key,
                page,
                score: None,
            }))
    }

    /// The page with this id, its pack location and capture history.
    pub fn page_detail(&self, id: &str) -> Result<Option<PageDetail>> {
        let Some(hit) = self.get_by_id(id)? else {
            return Ok(None);
        };
        let url_state = self.get_url(&hit.page.url)?;
        let digest = self.get_digest(&hit.page.digest)?;
        Ok(Some(PageDetail {
            id: hit.id(),
            location: hit.page.location(),
            captures: url_state.as_ref().map_or(1, |u| u.captures),
            first_seen: url_state.as_ref().and_then(|u| u.first_capture),
            last_seen: url_state
                .as_ref()
                .map_or(hit.page.fetched, |u| u.last_capture),
            url_state,
            digest,
            hit,
        }))
    }

    /// Hands every page (data row) of every page table to `visit` with its
    /// table and row key (for checks over the whole archive: `harvest fsck`).
    pub fn each_page(&self, visit: &mut dyn FnMut(&str, &[u8], PageRecord)) -> Result<()> {
        for table in self.store().list_tables()? {
            if crate::keys::parse_table_name(&table).is_none() {
                continue;
            }
            let mut bad = None;
            self.store().scan_each(
                &table,
                &crate::store::Scan::default().families(&[crate::record::FAMILY_ATTRS]),
                &mut |row| {
                    if row.key.get(1) != Some(&crate::keys::DATA_TAG) {
                        return true;
                    }
                    match PageRecord::from_row(row) {
                        Ok(p) => visit(&table, &row.key, p),
                        Err(e) => {
                            bad = Some(e);
                            return false;
                        }
                    }
                    true
                },
            )?;
            if let Some(e) = bad {
                return Err(e);
            }
        }
        Ok(())
    }

    /// Whether any page table holds a page (stops at the first one).
    pub fn has_pages(&self) -> Result<bool> {
        for table in self.store().list_tables()? {
            if crate::keys::parse_table_name(&table).is_none() {
                continue;
            }
            let mut found = false;
            self.store().scan_each(
                &table,
                &crate::store::Scan::default().families(&[crate::record::FAMILY_ATTRS]),
                &mut |row| {
                    found = row.key.get(1) == Some(&crate::keys::DATA_TAG);
                    !found
                },
            )?;
            if found {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Sources that have page tables, sorted.
    pub fn sources(&self) -> Result<Vec<String>> {
        let set: BTreeSet<String> = self
            .store
            .list_tables()?
            .iter()
            .filter_map(|t| keys::parse_table_name(t).map(|(s, _)| s.to_owned()))
            .collect();
        Ok(set.into_iter().collect())
    }

    /// Topics present in the page tables of `sources` (empty = all), sorted.
    /// A skip scan over the topic index rows: one short scan per (bucket,
    /// topic), no data rows.
    pub fn topics(&self, sources: &[String]) -> Result<Vec<String>> {
        self.attr_list(sources, ATTR_TOPIC)
    }

    /// Media present in the page tables of `sources` (empty = all), sorted;
    /// the same skip scan as [`Index::topics`] over the media index rows.
    pub fn media(&self, sources: &[String]) -> Result<Vec<String>> {
        self.attr_list(sources, ATTR_MEDIA)
    }

    /// Distinct values of one index attribute in the tables of `sources`.
    fn attr_list(&self, sources: &[String], attr: u8) -> Result<Vec<String>> {
        let mut units = Vec::new();
        for table in self.store.list_tables()? {
            let Some((source, _)) = keys::parse_table_name(&table) else {
                continue;
            };
            if !sources.is_empty() && !sources.iter().any(|s| s == source) {
                continue;
            }
            let regions = self.store.regions(&table)?.len();
            for salt in 0..regions {
                let salt = u8::try_from(salt)
                    .map_err(|_| Error::Invalid(format!("table {table} has over 255 regions")))?;
                units.push((table.clone(), salt));
            }
        }
        let lists = units
            .par_iter()
            .map(|(t, s)| self.attr_values(t, *s, attr))
            .collect::<Result<Vec<_>>>()?;
        let set: BTreeSet<String> = lists.into_iter().flatten().collect();
        Ok(set.into_iter().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_ids_round_trip_and_reject_garbage() {
        let key = keys::data_key(3, &[1, 31, 23, 59, 59, 0, 0xff, 2, 3, 4, 5, 6, 7]);
        let id = PageId {
            table: "anglo_news_2017".into(),
            row_key: key,
        };
        let s = id.to_string();
        assert!(s.starts_with("anglo_news_2017."));
        assert!(s
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b)));
        assert_eq!(PageId::parse(&s).ok(), Some(id));
        for bad in [
            "",
            "anglo_news_2017",
            "urls.AAAA",
            "anglo_news_2017.!!",
            "anglo_news_2017.AAAA",
        ] {
            assert!(
                matches!(PageId::parse(bad), Err(Error::BadPageId { .. })),
                "{bad:?} accepted"
            );
        }
    }
}
