//! Row encoding: cells as Thrift 1 columns `family:qualifier`, Thrift rows
//! as [`Row`]s, and cell filters as HBase filter-language strings.

use hbase_thrift::hbase::TRowResult;

use super::super::api::{Cell, CellFilter, FilterOp, Row};

/// Separator of family and qualifier in a Thrift 1 column name.
pub(super) const COLUMN_SEP: u8 = b':';

/// `family:qualifier` as a Thrift 1 column name.
pub(super) fn column(family: &str, qualifier: &[u8]) -> Vec<u8> {
    let mut c = Vec::with_capacity(family.len() + 1 + qualifier.len());
    c.extend_from_slice(family.as_bytes());
    c.push(COLUMN_SEP);
    c.extend_from_slice(qualifier);
    c
}

/// Splits a Thrift 1 column name at its first `:`.
pub(super) fn split_column(col: &[u8]) -> Option<(String, Vec<u8>)> {
    let at = col.iter().position(|b| *b == COLUMN_SEP)?;
    let family = std::str::from_utf8(&col[..at]).ok()?.to_owned();
    Some((family, col[at + 1..].to_vec()))
}

/// Appends `bytes` as a quoted filter-language literal (`'` doubled).
fn push_quoted(out: &mut Vec<u8>, bytes: &[u8]) {
    out.push(b'\'');
    for b in bytes {
        if *b == b'\'' {
            out.push(b'\'');
        }
        out.push(*b);
    }
    out.push(b'\'');
}

/// The HBase filter-language string for AND-ed cell filters (empty if none).
pub fn filter_string(filters: &[CellFilter]) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, f) in filters.iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(b" AND ");
        }
        let (op, value): (&[u8], &[u8]) = match f.op {
            FilterOp::Eq => (b"=", &f.value),
            FilterOp::Ge => (b">=", &f.value),
            FilterOp::Le => (b"<=", &f.value),
            FilterOp::Exists => (b">=", &[]),
        };
        out.extend_from_slice(b"SingleColumnValueFilter(");
        push_quoted(&mut out, f.family.as_bytes());
        out.push(b',');
        push_quoted(&mut out, &f.qualifier);
        out.push(b',');
        out.extend_from_slice(op);
        out.push(b',');
        push_quoted(&mut out, &[b"binary:".as_slice(), value].concat());
        out.extend_from_slice(b",true,true)");
    }
    out
}

/// Turns a Thrift row into a [`Row`] with cells sorted by (family, qualifier).
pub(super) fn to_row(r: TRowResult) -> Row {
    let mut row = Row::new(r.row.unwrap_or_default());
    for (col, cell) in r.columns.unwrap_or_default() {
        if let Some((family, qualifier)) = split_column(&col) {
            row.cells.push(Cell {
                family,
                qualifier,
                value: cell.value.unwrap_or_default(),
            });
        }
    }
    row.cells.sort();
    row
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filter_string_quotes_binary_values() {
        let f = CellFilter::new("a", b"n".to_vec(), FilterOp::Ge, vec![0, b'\'', 0xff]);
        let s = filter_string(&[f]);
        let want = [
            &b"SingleColumnValueFilter('a','n',>=,'binary:"[..],
            &[0, b'\'', b'\'', 0xff],
            b"',true,true)",
        ]
        .concat();
        assert_eq!(s, want);
        let two = filter_string(&[
            CellFilter::new("a", b"x".to_vec(), FilterOp::Exists, b"ignored".to_vec()),
            CellFilter::new("b", b"y".to_vec(), FilterOp::Le, b"9".to_vec()),
        ]);
        assert_eq!(
            two,
            b"SingleColumnValueFilter('a','x',>=,'binary:',true,true) AND \
              SingleColumnValueFilter('b','y',<=,'binary:9',true,true)"
                .to_vec()
        );
    }

    #[test]
    fn columns_split_at_first_colon() {
        assert_eq!(split_column(b"i:"), Some(("i".to_owned(), Vec::new())));
        assert_eq!(
            split_column(b"a:x:y"),
            Some(("a".to_owned(), b"x:y".to_vec()))
        );
        assert_eq!(split_column(b"nocolon"), None);
        assert_eq!(column("a", &[0, 0xff]), vec![b'a', b':', 0, 0xff]);
    }
}
