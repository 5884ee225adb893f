//! The `captures` table: every capture of every URL (a response, an
//! identical-payload revisit, a 304), so that the capture history lists each
//! version and any one can be read back from its pack.
//!
//! Row key: `[url-hash 8B][capture time, 8B ordered (record::encode_time)]`
//! (one URL is one key prefix, in time order); family `a`, cell `c` = JSON
//! of [`Capture`].

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::index::Index;
use crate::keys::url_hash;
use crate::record::{encode_time, PackLocation, FAMILY_ATTRS};
use crate::store::{Cell, Row, Scan};

pub use super::CAPTURES_TABLE;

/// Qualifier of the capture cell.
const Q_CAPTURE: &[u8] = b"c";

/// What a capture's WARC record is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CaptureKind {
    /// A `response` record holding the payload.
    Response,
    /// A `revisit` record: the same payload as an earlier capture (digest).
    Revisit,
    /// A `revisit` record for a 304 Not Modified: the payload of the
    /// capture before it.
    NotModified,
}

/// One capture of a URL.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Capture {
    /// Normalised URL.
    pub url: String,
    /// When the answer arrived.
    pub time: DateTime<Utc>,
    /// Record kind.
    pub kind: CaptureKind,
    /// HTTP status.
    pub status: u16,
    /// Payload digest (for a 304: the unchanged payload's).
    pub digest: Option<String>,
    /// WARC-Record-ID of the record.
    pub record_id: String,
    /// Where the record is.
    pub location: PackLocation,
    /// The Content-Type of the record's HTTP head as written: `Some(None)`
    /// when it has none, `None` for captures recorded before harvest kept
    /// it (read it from the record). For `harvest export cdxj`.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub content_type: Option<Option<String>>,
}

/// A field that is present (even as `null`) is `Some`; a missing one is
/// `None` (through `default`).
fn present<'de, D, T>(d: D) -> std::result::Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(d).map(Some)
}

fn key(url: &str, time: DateTime<Utc>) -> Vec<u8> {
    let mut k = url_hash(url).to_vec();
    k.extend_from_slice(&encode_time(time));
    k
}

impl Index {
    /// Records captures (after their records are durable).
    pub fn put_captures(&self, captures: &[Capture]) -> Result<()> {
        if captures.is_empty() {
            return Ok(());
        }
        let rows = captures
            .iter()
            .map(|c| {
                Ok(Row {
                    key: key(&c.url, c.time),
                    cells: vec![Cell::new(FAMILY_ATTRS, Q_CAPTURE, serde_json::to_vec(c)?)],
                })
            })
            .collect::<Result<Vec<_>>>()?;
        self.store.put(CAPTURES_TABLE, &rows)
    }

    /// Removes the rows of these captures (`harvest fsck --repair`: rows
    /// whose record is gone). Missing rows are ignored.
    pub fn delete_captures(&self, captures: &[Capture]) -> Result<()> {
        let keys: Vec<Vec<u8>> = captures.iter().map(|c| key(&c.url, c.time)).collect();
        if keys.is_empty() {
            return Ok(());
        }
        self.store.delete(CAPTURES_TABLE, &keys)
    }

    /// Whether a capture of each (URL, time) is recorded, in one call per
    /// 1,000 (a crashed run's records are checked against the index so).
    pub fn has_captures(&self, captures: &[(&str, DateTime<Utc>)]) -> Result<Vec<bool>> {
        let mut out = Vec::with_capacity(captures.len());
        for chunk in captures.chunks(1000) {
            let keys: Vec<Vec<u8>> = chunk.iter().map(|(u, t)| key(u, *t)).collect();
            let rows = self.store.get(CAPTURES_TABLE, &keys, &[FAMILY_ATTRS])?;
            for ((url, _), row) in chunk.iter().zip(rows) {
                // A hash shared by two URLs: the row must be this URL's.
                let ours = row
                    .as_ref()
                    .and_then(|r| r.cell(FAMILY_ATTRS, Q_CAPTURE))
                    .and_then(|v| serde_json::from_slice::<Capture>(v).ok())
                    .is_some_and(|c| c.url == *url);
                out.push(ours);
            }
        }
        Ok(out)
    }

    /// Every recorded capture of `url`, oldest first.
    pub fn captures_of(&self, url: &str) -> Result<Vec<Capture>> {
        let prefix = url_hash(url);
        let rows = self.store.scan(
            CAPTURES_TABLE,
            &Scan::prefix(&prefix).families(&[FAMILY_ATTRS]),
        )?;
        let mut out = Vec::with_capacity(rows.len());
        for r in rows {
            if let Some(v) = r.cell(FAMILY_ATTRS, Q_CAPTURE) {
                let c: Capture = serde_json::from_slice(v)?;
                // A hash shared by two URLs: keep this URL's rows only.
                if c.url == url {
                    out.push(c);
                }
            }
        }
        Ok(out)
    }

    /// Every recorded capture of the archive in key order (URL hash, then
    /// time), for reports over the whole archive (`harvest dedup`): one scan
    /// of the `captures` table, streamed. `visit` returns `false` to stop.
    pub fn each_capture(&self, visit: &mut dyn FnMut(Capture) -> bool) -> Result<()> {
        self.each_json(CAPTURES_TABLE, Q_CAPTURE, visit)
    }

    /// Every row of `table` whose `a:{qualifier}` cell holds a JSON `T`, in
    /// key order, streamed; `visit` returns `false` to stop. A cell that
    /// does not parse stops the scan with its error.
    pub(crate) fn each_json<T: serde::de::DeserializeOwned>(
        &self,
        table: &str,
        qualifier: &[u8],
        visit: &mut dyn FnMut(T) -> bool,
    ) -> Result<()> {
        let mut failed = None;
        self.store.scan_each(
            table,
            &Scan::prefix(&[]).families(&[FAMILY_ATTRS]),
            &mut |row| match row.cell(FAMILY_ATTRS, qualifier) {
                Some(v) => match serde_json::from_slice::<T>(v) {
                    Ok(c) => visit(c),
                    Err(e) => {
                        failed = Some(e);
                        false
                    }
                },
                None => true,
            },
        )?;
        match failed {
            Some(e) => Err(e.into()),
            None => Ok(()),
        }
    }

    /// The capture of `url` in force at `at`: the last one at or before it.
    pub fn capture_at(&self, url: &str, at: DateTime<Utc>) -> Result<Option<Capture>> {
        Ok(self
            .captures_of(url)?
            .into_iter()
            .rev()
            .find(|c| c.time <= at))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn has_captures_finds_recorded_times_of_the_url_only() -> Result<()> {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = std::sync::Arc::new(crate::embedded::EmbeddedStore::open(dir.path())?);
        let index = Index::new(store, crate::IndexOptions { buckets: 2 })?;
        let t0 = DateTime::from_timestamp(1_800_000_000, 123_456_000).unwrap_or_default();
        let capture = |url: &str, time| Capture {
            url: url.into(),
            time,
            kind: CaptureKind::Response,
            status: 200,
            digest: None,
            record_id: "<urn:uuid:y>".into(),
            location: PackLocation {
                path: "p".into(),
                offset: 0,
                length: 1,
            },
            content_type: None,
        };
        index.put_captures(&[capture("http://a/", t0), capture("http://b/", t0)])?;
        let later = t0 + chrono::Duration::microseconds(1);
        let found = index.has_captures(&[
            ("http://a/", t0),
            ("http://a/", later),
            ("http://b/", t0),
            ("http://c/", t0),
        ])?;
        assert_eq!(found, [true, false, true, false]);
        Ok(())
    }

    #[test]
    fn content_type_tells_unknown_from_absent() {
        let mut c = Capture {
            url: "http://example.com/".into(),
            time: Utc::now(),
            kind: CaptureKind::Response,
            status: 200,
            digest: None,
            record_id: "<urn:uuid:x>".into(),
            location: PackLocation {
                path: "p".into(),
                offset: 0,
                length: 1,
            },
            content_type: None,
        };
        for ct in [None, Some(None), Some(Some("text/html".to_string()))] {
            c.content_type = ct;
            let json = serde_json::to_string(&c).unwrap();
            let back: Capture = serde_json::from_str(&json).unwrap();
            assert_eq!(back, c, "{json}");
        }
        // A row written before the field.
        c.content_type = None;
        let mut old = serde_json::to_value(&c).unwrap();
        old.as_object_mut().unwrap().remove("content_type");
        let back: Capture = serde_json::from_value(old).unwrap();
        assert_eq!(back.content_type, None);
    }
}
