//! The `clusters` table: K-means cluster centres of the packer, per (topic,
//! day), so that a later run appends a group to the pack of the nearest
//! existing cluster.
//!
//! Row key: `[escaped topic][0x00][yyyymmdd (ASCII)][cluster u32 BE]`
//! (so one (topic, day) is one key prefix); family `a`: `centre` (f32
//! big-endian, concatenated), `size` (u64 BE), `pack` (UTF-8 path).

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::index::{Index, CLUSTERS_TABLE};
use crate::keys::{escape_value, VALUE_END};
use crate::record::FAMILY_ATTRS;
use crate::store::{Row, Scan};

/// Qualifier of the centre cell.
const Q_CENTRE: &[u8] = b"centre";
/// Qualifier of the size cell.
const Q_SIZE: &[u8] = b"size";
/// Qualifier of the pack cell.
const Q_PACK: &[u8] = b"pack";
/// Date format inside the key.
const KEY_DATE: &str = "%Y%m%d";

/// One K-means cluster of a (topic, day) group.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClusterRow {
    /// Topic of the group.
    pub topic: String,
    /// Day of the group.
    pub day: NaiveDate,
    /// Cluster number within the group.
    pub cluster: u32,
    /// Centre of the cluster in attribute space.
    pub centre: Vec<f32>,
    /// Pages in the cluster.
    pub size: u64,
    /// Path of the cluster's current pack.
    pub pack: String,
}

fn prefix(topic: &str, day: NaiveDate) -> Vec<u8> {
    let mut k = escape_value(topic);
    k.push(VALUE_END);
    k.extend_from_slice(day.format(KEY_DATE).to_string().as_bytes());
    k
}

fn corrupt(key: &[u8], q: &[u8], reason: &str) -> Error {
    Error::Corrupt {
        key: key.to_vec(),
        qualifier: String::from_utf8_lossy(q).into_owned(),
        reason: reason.to_owned(),
    }
}

impl ClusterRow {
    fn to_row(&self) -> Row {
        let mut key = prefix(&self.topic, self.day);
        key.extend_from_slice(&self.cluster.to_be_bytes());
        let centre: Vec<u8> = self.centre.iter().flat_map(|x| x.to_be_bytes()).collect();
        Row::new(key)
            .with(FAMILY_ATTRS, Q_CENTRE, centre)
            .with(FAMILY_ATTRS, Q_SIZE, self.size.to_be_bytes().to_vec())
            .with(FAMILY_ATTRS, Q_PACK, self.pack.as_bytes().to_vec())
    }

    fn from_row(topic: &str, day: NaiveDate, row: &Row) -> Result<ClusterRow> {
        let k = &row.key;
        let cluster = k
            .len()
            .checked_sub(4)
            .and_then(|at| k.get(at..))
            .and_then(|b| <[u8; 4]>::try_from(b).ok())
            .map(u32::from_be_bytes)
            .ok_or_else(|| corrupt(k, b"", "cluster key too short"))?;
        let cell = |q: &[u8]| {
            row.cell(FAMILY_ATTRS, q)
                .ok_or_else(|| corrupt(k, q, "missing"))
        };
        let c = cell(Q_CENTRE)?;
        if c.len() % 4 != 0 {
            return Err(corrupt(k, Q_CENTRE, "length not a multiple of 4"));
        }
        let centre = c
            .chunks_exact(4)
            .map(|b| f32::from_be_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        let size = <[u8; 8]>::try_from(cell(Q_SIZE)?)
            .map(u64::from_be_bytes)
            .map_err(|_| corrupt(k, Q_SIZE, "wrong length"))?;
        let pack = String::from_utf8(cell(Q_PACK)?.to_vec())
            .map_err(|_| corrupt(k, Q_PACK, "not UTF-8"))?;
        Ok(ClusterRow {
            topic: topic.to_owned(),
            day,
            cluster,
            centre,
            size,
            pack,
        })
    }
}

impl Index {
    /// Writes (replaces) cluster rows.
    pub fn put_clusters(&self, rows: &[ClusterRow]) -> Result<()> {
        let rows: Vec<Row> = rows.iter().map(ClusterRow::to_row).collect();
        self.store.put(CLUSTERS_TABLE, &rows)
    }

    /// The clusters of one (topic, day), by cluster number.
    pub fn clusters(&self, topic: &str, day: NaiveDate) -> Result<Vec<ClusterRow>> {
        let p = prefix(topic, day);
        let rows = self
            .store
            .scan(CLUSTERS_TABLE, &Scan::prefix(&p).families(&[FAMILY_ATTRS]))?;
        rows.iter()
            .filter(|r| r.key.len() == p.len() + 4)
            .map(|r| ClusterRow::from_row(topic, day, r))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn date_in_key_has_fixed_width() {
        let d = NaiveDate::from_ymd_opt(2017, 3, 9).unwrap_or_default();
        let p = prefix("military", d);
        assert_eq!(&p[p.len() - 8..], b"20170309");
        assert_eq!(&p[..9], b"military\0");
    }
}
