//! How tables are laid out in fjall: a keyspace per (table, family) named
//! `{table}.{family}`, the `_meta` keyspace of table layouts, the rules for
//! table and family names (shared with the HBase backend) and the handle of an
//! open table. Kept apart from the store so every part of it reads the same
//! names.

use std::collections::BTreeMap;

use fjall::{Keyspace, KeyspaceCreateOptions};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Memtable size at which a keyspace is flushed to disk.
pub const MAX_MEMTABLE_BYTES: u64 = 8 * 1024 * 1024;

pub(super) fn keyspace_options() -> KeyspaceCreateOptions {
    KeyspaceCreateOptions::default().max_memtable_size(MAX_MEMTABLE_BYTES)
}

/// Keyspace holding table layouts.
pub(super) const META_KEYSPACE: &str = "_meta";
/// Separator between table and family in a keyspace name.
const KEYSPACE_SEP: char = '.';
/// Longest table or family name (a keyspace name must fit in 255 bytes).
const MAX_NAME_LEN: usize = 120;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct TableMeta {
    pub(super) families: Vec<String>,
    pub(super) buckets: u8,
}

pub(super) struct TableHandle {
    pub(super) meta: TableMeta,
    pub(super) families: BTreeMap<String, Keyspace>,
}

impl TableHandle {
    /// A family's stored name and keyspace (`table` names the error).
    pub(super) fn family(&self, table: &str, family: &str) -> Result<(&String, &Keyspace)> {
        self.families
            .get_key_value(family)
            .ok_or_else(|| Error::NoSuchFamily {
                table: table.to_owned(),
                family: family.to_owned(),
            })
    }
}

/// Check a table layout given to `create_table` (the same rules for every
/// backend) and return its families sorted and deduplicated.
pub(crate) fn checked_layout(name: &str, families: &[&str], buckets: u8) -> Result<Vec<String>> {
    valid_name(name).map_err(|reason| Error::BadTableName {
        name: name.to_owned(),
        reason,
    })?;
    if families.is_empty() {
        return Err(Error::BadFamily {
            name: String::new(),
            reason: "a table needs at least one family",
        });
    }
    if buckets == 0 {
        return Err(Error::Invalid(format!(
            "table {name:?}: bucket count must be at least 1"
        )));
    }
    let mut fams: Vec<String> = Vec::new();
    for f in families {
        valid_name(f).map_err(|reason| Error::BadFamily {
            name: (*f).to_owned(),
            reason,
        })?;
        fams.push((*f).to_owned());
    }
    fams.sort();
    fams.dedup();
    Ok(fams)
}

/// Checks a table or family name: `[a-z0-9_]+`, at most [`MAX_NAME_LEN`] bytes.
pub(crate) fn valid_name(name: &str) -> std::result::Result<(), &'static str> {
    if name.is_empty() {
        return Err("empty");
    }
    if name.len() > MAX_NAME_LEN {
        return Err("too long");
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
    {
        return Err("must match [a-z0-9_]+");
    }
    Ok(())
}

pub(super) fn keyspace_name(table: &str, family: &str) -> String {
    format!("{table}{KEYSPACE_SEP}{family}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked() {
        assert!(valid_name("sina_news_2017").is_ok());
        assert!(valid_name("Sina").is_err());
        assert!(valid_name("a.b").is_err());
        assert!(valid_name("").is_err());
    }
}
