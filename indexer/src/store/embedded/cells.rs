//! Row encoding: all cells of one row in one family as one fjall value
//! (`[u32 qlen][q][u32 vlen][v]...`, sorted by qualifier), and merging new
//! cells into a stored value without decoding it into owned cells.

use std::collections::BTreeMap;

use super::super::api::{Cell, Row};
use crate::error::{Error, Result};

/// Cells of one family of one row, by qualifier.
pub(super) type CellMap = BTreeMap<Vec<u8>, Vec<u8>>;
/// New cells of one row, borrowed from the caller's rows (qualifier -> value).
pub(super) type NewCells<'r> = BTreeMap<&'r [u8], &'r [u8]>;

/// Encodes a family's cells (sorted by qualifier) into one value.
pub(super) fn encode_cells(cells: &BTreeMap<Vec<u8>, Vec<u8>>) -> Vec<u8> {
    let size: usize = cells.iter().map(|(q, v)| 8 + q.len() + v.len()).sum();
    let mut out = Vec::with_capacity(size);
    for (q, v) in cells {
        // Lengths fit: fjall values are < 2^32 bytes.
        out.extend_from_slice(&(q.len() as u32).to_be_bytes());
        out.extend_from_slice(q);
        out.extend_from_slice(&(v.len() as u32).to_be_bytes());
        out.extend_from_slice(v);
    }
    out
}

fn take<'a>(buf: &mut &'a [u8], key: &[u8]) -> Result<&'a [u8]> {
    let corrupt = || Error::Corrupt {
        key: key.to_vec(),
        qualifier: String::new(),
        reason: "truncated cell block".into(),
    };
    let (len, rest) = buf.split_first_chunk::<4>().ok_or_else(corrupt)?;
    let len = u32::from_be_bytes(*len) as usize;
    if rest.len() < len {
        return Err(corrupt());
    }
    let (head, tail) = rest.split_at(len);
    *buf = tail;
    Ok(head)
}

/// Decodes a value written by [`encode_cells`] straight into cells of
/// `family` (the block is already sorted by qualifier).
pub(super) fn decode_cells_into(
    key: &[u8],
    mut buf: &[u8],
    family: &str,
    out: &mut Vec<Cell>,
) -> Result<()> {
    while !buf.is_empty() {
        let q = take(&mut buf, key)?;
        let v = take(&mut buf, key)?;
        out.push(Cell {
            family: family.to_owned(),
            qualifier: q.to_vec(),
            value: v.to_vec(),
        });
    }
    Ok(())
}

/// Decodes a value written by [`encode_cells`] into `row`, reusing the
/// buffers of the cells it already holds (no allocation once they are big
/// enough): the cells of `row` become exactly the block's cells.
pub(super) fn decode_cells_reuse(buf: &[u8], family: &str, row: &mut Row) -> Result<()> {
    let mut buf = buf;
    let mut n = 0usize;
    while !buf.is_empty() {
        let q = take(&mut buf, &row.key)?;
        let v = take(&mut buf, &row.key)?;
        if let Some(cell) = row.cells.get_mut(n) {
            if cell.family != family {
                cell.family.clear();
                cell.family.push_str(family);
            }
            cell.qualifier.clear();
            cell.qualifier.extend_from_slice(q);
            cell.value.clear();
            cell.value.extend_from_slice(v);
        } else {
            row.cells.push(Cell {
                family: family.to_owned(),
                qualifier: q.to_vec(),
                value: v.to_vec(),
            });
        }
        n += 1;
    }
    row.cells.truncate(n);
    Ok(())
}

/// A block written by [`encode_cells`] with `new` cells merged in (a new
/// cell replaces a stored one with the same qualifier), streamed without
/// decoding the stored block into owned cells.
pub(super) fn merge_cells(key: &[u8], stored: &[u8], new: &NewCells<'_>) -> Result<Vec<u8>> {
    let extra: usize = new.iter().map(|(q, v)| 8 + q.len() + v.len()).sum();
    let mut out = Vec::with_capacity(stored.len() + extra);
    let push = |out: &mut Vec<u8>, q: &[u8], v: &[u8]| {
        // Lengths fit: fjall values are < 2^32 bytes.
        out.extend_from_slice(&(q.len() as u32).to_be_bytes());
        out.extend_from_slice(q);
        out.extend_from_slice(&(v.len() as u32).to_be_bytes());
        out.extend_from_slice(v);
    };
    let mut rest = stored;
    let mut fresh = new.iter().peekable();
    while !rest.is_empty() {
        let q = take(&mut rest, key)?;
        let v = take(&mut rest, key)?;
        while let Some((nq, nv)) = fresh.next_if(|(nq, _)| **nq < q) {
            push(&mut out, nq, nv);
        }
        match fresh.next_if(|(nq, _)| **nq == q) {
            Some((nq, nv)) => push(&mut out, nq, nv),
            None => push(&mut out, q, v),
        }
    }
    for (nq, nv) in fresh {
        push(&mut out, nq, nv);
    }
    Ok(out)
}

/// Decodes a value written by [`encode_cells`].
pub(super) fn decode_cells(key: &[u8], mut buf: &[u8]) -> Result<BTreeMap<Vec<u8>, Vec<u8>>> {
    let mut cells = BTreeMap::new();
    while !buf.is_empty() {
        let q = take(&mut buf, key)?;
        let v = take(&mut buf, key)?;
        cells.insert(q.to_vec(), v.to_vec());
    }
    Ok(cells)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cell_block_round_trips_binary() {
        let mut cells = BTreeMap::new();
        cells.insert(vec![0u8, 0xff], vec![]);
        cells.insert(b"title".to_vec(), "Berlin – Brüssel".as_bytes().to_vec());
        let enc = encode_cells(&cells);
        assert_eq!(decode_cells(b"k", &enc).ok(), Some(cells));
        assert!(decode_cells(b"k", &enc[..enc.len() - 1]).is_err());
    }

    #[test]
    fn merged_blocks_equal_merged_maps() -> Result<()> {
        let stored: CellMap = [
            (b"b".to_vec(), b"1".to_vec()),
            (b"d".to_vec(), b"2".to_vec()),
            (vec![0xff], vec![]),
        ]
        .into_iter()
        .collect();
        let block = encode_cells(&stored);
        let new: BTreeMap<&[u8], &[u8]> = [(&b"a"[..], &b"x"[..]), (b"d", b"y"), (b"e", b"")]
            .into_iter()
            .collect();
        let mut want = stored.clone();
        want.extend(new.iter().map(|(q, v)| (q.to_vec(), v.to_vec())));
        assert_eq!(merge_cells(b"k", &block, &new)?, encode_cells(&want));
        assert_eq!(
            merge_cells(b"k", &[], &new)?,
            encode_cells(&new.iter().map(|(q, v)| (q.to_vec(), v.to_vec())).collect())
        );
        assert_eq!(merge_cells(b"k", &block, &BTreeMap::new())?, block);
        assert!(
            merge_cells(b"k", &block[..block.len() - 2], &new).is_err(),
            "truncated block"
        );
        Ok(())
    }
}
