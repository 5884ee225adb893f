//! What the index says is in the packs: each page row's and capture row's record,
//! checked against the record found there ([`verify`]), and the rows of records that are
//! gone removed by a repair ([`drop_dangling`]).

use anyhow::{Context, Result};
use packer::warc::header;

use crate::stores::Stores;

/// What the index says is at one pack offset.
#[derive(Debug, Clone)]
pub(super) struct Expected {
    pub(super) length: u64,
    pub(super) url: String,
    pub(super) record_id: String,
    pub(super) digest: Option<String>,
    /// Which rows point here (for the report): `page`, `capture` or both.
    pub(super) from: &'static str,
    /// The page row pointing here, if one does.
    pub(super) page: Option<indexer::PageKey>,
    /// The capture row pointing here, if one does.
    pub(super) capture: Option<indexer::Capture>,
    /// Where the record should be.
    pub(super) location: indexer::PackLocation,
}

/// Removes the rows of records that are gone: page rows (with their index
/// entries), captures, the URL states of those pages and the digest entries
/// whose first capture was one of them, so that the next crawl fetches and
/// stores them as new; all in one atomic batch.
pub(super) fn drop_dangling(stores: &Stores, dangling: &[Expected]) -> Result<()> {
    let mut digests: Vec<Vec<u8>> = Vec::new();
    for e in dangling {
        let Some(d) = &e.digest else { continue };
        if let Some(entry) = stores.index.get_digest(d)? {
            let first = &entry.first_location;
            if first.path == e.location.path && first.offset == e.location.offset {
                digests.push(d.as_bytes().to_vec());
            }
        }
    }
    digests.sort();
    digests.dedup();
    let pages: Vec<indexer::PageKey> = dangling.iter().filter_map(|e| e.page.clone()).collect();
    let captures: Vec<indexer::Capture> =
        dangling.iter().filter_map(|e| e.capture.clone()).collect();
    let urls: Vec<Vec<u8>> = dangling
        .iter()
        .filter(|e| e.page.is_some())
        .map(|e| e.url.as_bytes().to_vec())
        .collect();
    stores
        .index
        .atomically(|ix| {
            ix.delete_pages(&pages)?;
            ix.delete_captures(&captures)?;
            ix.store().delete(indexer::DIGESTS_TABLE, &digests)?;
            ix.store().delete(indexer::URLS_TABLE, &urls)
        })
        .context("removing the rows of missing records")
}

/// Why `record` is not what `exp` says, if it is not.
pub(super) fn verify(
    record: &packer::warc::WarcRecord,
    length: u64,
    exp: &Expected,
) -> std::result::Result<(), String> {
    if length != exp.length {
        return Err(format!(
            "record is {length} bytes, the index says {}",
            exp.length
        ));
    }
    let uri = record.header(header::TARGET_URI).unwrap_or_default();
    if uri != exp.url {
        return Err(format!("record is of {uri:?}"));
    }
    let id = record.header(header::RECORD_ID).unwrap_or_default();
    if id != exp.record_id {
        return Err(format!(
            "record id {id} is not the index's {}",
            exp.record_id
        ));
    }
    let stated = record.payload_digest().unwrap_or_default();
    if stated.is_empty() && record.header(header::WARC_TYPE) == Some("revisit") {
        // A revisit need not state the digest of the payload it stands for.
        return Ok(());
    }
    if record.header(header::WARC_TYPE) == Some("response") {
        let body = record
            .http_response()
            .map_err(|e| format!("no HTTP response in the record: {e}"))?
            .body;
        let actual = packer::warc::payload_digest(&body);
        if actual != stated {
            return Err(format!(
                "payload hashes to {actual}, the record states {stated}"
            ));
        }
    }
    if let Some(d) = &exp.digest {
        if d != stated {
            return Err(format!("record digest {stated} is not the index's {d}"));
        }
    }
    Ok(())
}
