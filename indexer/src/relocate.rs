//! Moving rows to records that moved: `harvest compact` copies whole packs byte for byte into
//! a larger one, so a record at `offset` of an old pack is at `base + offset` of the new one.
//! [`Index::relocate`] points every row that holds a pack location in a moved pack at the new
//! place: page data rows (`pack_path`, `offset`), `captures`, `digests` (first capture) and
//! `images` rows. (The `pack` cell of a `clusters` row, the pack a cluster was last written
//! to, is left as it is: nothing reads a record through it.) Rows are rewritten in batches of at
//! most a given number of rows, each applied as one unit ([`Index::atomically`]); every write
//! is absolute, so relocating again after a crash moves only what is left and rewrites nothing
//! twice wrongly.

use std::collections::HashMap;

use serde::Serialize;

use crate::error::Result;
use crate::index::{Index, DIGESTS_TABLE};
use crate::record::{q, DigestEntry, PackLocation, PageRecord, FAMILY_ATTRS};
use crate::store::{Cell, Row, Scan};
use crate::tables::captures::Capture;
use crate::tables::images::ImageEntry;
use crate::{CAPTURES_TABLE, IMAGES_TABLE};

/// Rows rewritten in one atomic batch by [`Index::relocate`].
pub const RELOCATE_BATCH: usize = 2_000;

/// Where the records of one old pack are now: the new pack and the offset the old pack's
/// first byte has in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Moved {
    /// The pack the old one was copied into.
    pub path: String,
    /// Offset of the old pack's byte 0 in the new pack.
    pub base: u64,
}

/// Rows [`Index::relocate`] rewrote, by table.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Relocated {
    pub pages: u64,
    pub captures: u64,
    pub digests: u64,
    pub images: u64,
    /// Atomic batches applied.
    pub batches: u64,
}

impl Relocated {
    /// Rows rewritten in all.
    pub fn rows(&self) -> u64 {
        self.pages + self.captures + self.digests + self.images
    }
}

/// One row to rewrite.
enum Change {
    Page { table: String, row: Row },
    Capture(Capture),
    Digest(DigestEntry),
    Image(ImageEntry),
}

fn moved_to(moves: &HashMap<String, Moved>, loc: &PackLocation) -> Option<PackLocation> {
    moves.get(&loc.path).map(|m| PackLocation {
        path: m.path.clone(),
        offset: m.base + loc.offset,
        length: loc.length,
    })
}

impl Index {
    /// Points every row holding a location in one of the packs of `moves` (old path -> new
    /// pack and base offset) at the same bytes in the new pack, in atomic batches of at most
    /// `batch_rows` rows ([`RELOCATE_BATCH`] is a good size).
    /// `after_batch` is called after each applied batch with the rows moved so far (crash
    /// tests stop there).
    pub fn relocate(
        &self,
        moves: &HashMap<String, Moved>,
        batch_rows: usize,
        after_batch: &mut dyn FnMut(&Relocated),
    ) -> Result<Relocated> {
        let mut done = Relocated::default();
        if moves.is_empty() {
            return Ok(done);
        }
        let tables = self.store().list_tables()?;
        let mut changes: Vec<Change> = Vec::new();
        for table in &tables {
            if crate::keys::parse_table_name(table).is_none() {
                continue;
            }
            let mut bad = None;
            self.store().scan_each(
                table,
                &Scan::default().families(&[FAMILY_ATTRS]),
                &mut |row| {
                    if row.key.get(1) != Some(&crate::keys::DATA_TAG) {
                        return true;
                    }
                    let page = match PageRecord::from_row(row) {
                        Ok(p) => p,
                        Err(e) => {
                            bad = Some(e);
                            return false;
                        }
                    };
                    if let Some(to) = moved_to(moves, &page.location()) {
                        changes.push(Change::Page {
                            table: table.clone(),
                            row: Row {
                                key: row.key.clone(),
                                cells: vec![
                                    Cell::new(FAMILY_ATTRS, q::PACK_PATH, to.path.into_bytes()),
                                    Cell::new(
                                        FAMILY_ATTRS,
                                        q::OFFSET,
                                        to.offset.to_be_bytes().to_vec(),
                                    ),
                                ],
                            },
                        });
                    }
                    true
                },
            )?;
            if let Some(e) = bad {
                return Err(e);
            }
        }
        if tables.iter().any(|t| t == CAPTURES_TABLE) {
            self.each_capture(&mut |mut c| {
                if let Some(to) = moved_to(moves, &c.location) {
                    c.location = to;
                    changes.push(Change::Capture(c));
                }
                true
            })?;
        }
        if tables.iter().any(|t| t == IMAGES_TABLE) {
            self.each_image(&mut |mut i| {
                if let Some(to) = moved_to(moves, &i.location) {
                    i.location = to;
                    changes.push(Change::Image(i));
                }
                true
            })?;
        }
        if tables.iter().any(|t| t == DIGESTS_TABLE) {
            let mut bad = None;
            self.store().scan_each(
                DIGESTS_TABLE,
                &Scan::prefix(&[]).families(&[FAMILY_ATTRS]),
                &mut |row| match DigestEntry::from_row(row) {
                    Ok(mut d) => {
                        if let Some(to) = moved_to(moves, &d.first_location) {
                            d.first_location = to;
                            changes.push(Change::Digest(d));
                        }
                        true
                    }
                    Err(e) => {
                        bad = Some(e);
                        false
                    }
                },
            )?;
            if let Some(e) = bad {
                return Err(e);
            }
        }
        for batch in changes.chunks(batch_rows.max(1)) {
            let mut counts = Relocated::default();
            self.atomically(|ix| {
                let mut captures = Vec::new();
                let mut digests = Vec::new();
                let mut images = Vec::new();
                let mut pages: HashMap<&str, Vec<Row>> = HashMap::new();
                for change in batch {
                    match change {
                        Change::Page { table, row } => {
                            pages.entry(table).or_default().push(row.clone())
                        }
                        Change::Capture(c) => captures.push(c.clone()),
                        Change::Digest(d) => digests.push(d.clone()),
                        Change::Image(i) => images.push(i.clone()),
                    }
                }
                for (table, rows) in &pages {
                    counts.pages += rows.len() as u64;
                    ix.store().put(table, rows)?;
                }
                counts.captures = captures.len() as u64;
                counts.digests = digests.len() as u64;
                counts.images = images.len() as u64;
                ix.put_captures(&captures)?;
                if !digests.is_empty() {
                    ix.put_digests(&digests)?;
                }
                ix.put_images(&images)?;
                Ok(())
            })?;
            done.pages += counts.pages;
            done.captures += counts.captures;
            done.digests += counts.digests;
            done.images += counts.images;
            done.batches += 1;
            after_batch(&done);
        }
        Ok(done)
    }
}
