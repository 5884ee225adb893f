//! Text marks: the pages whose words are in the text index while their rows may not be.
//!
//! A page's words go to the text index before its rows go to the page table
//! ([`Index::index_texts`] then [`Index::index_pages`]), and the two stores cannot share one
//! atomic write. So that a text hit can be trusted without reading the page's rows (a
//! count of mentions per day is then the text index's answer alone), every write of words
//! first files a mark naming its pages in the `text_marks` table, at once; the mark is
//! removed in the same batch as the pages' rows ([`Index::atomically`]: one atomic write
//! embedded, the journal on HBase). So:
//! - a page found by its words has its rows, or is named by a mark;
//! - readers search the text first and read the marks after, and check the rows of the
//!   marked pages they found (a batch in flight: a few hundred pages at most);
//! - a writer killed between the two leaves its mark: the next writer to open the index
//!   ([`Index::recover`]) removes the words of the pages whose rows never came, then the
//!   mark. A mark of a process still alive is left alone (the rule of the journal).

use std::collections::HashSet;

use chrono::{DateTime, Utc};

use crate::error::Result;
use crate::index::{text_page_of, Index, PageKey};
use crate::keys;
use crate::record::FAMILY_ATTRS;
use crate::store::{Row, Scan};
use crate::text::{TextDoc, TextPage};

pub use super::TEXT_MARKS_TABLE;

impl Index {
    /// Writes pages' words to the text index (nothing without one), under a mark that the
    /// batch of their rows removes. Call it before [`Index::index_pages`] of the same pages,
    /// inside the same [`Index::atomically`] batch: outside one, the mark is removed at
    /// once, and a crash before the rows leaves words of pages that have none (which
    /// `fsck --repair` removes).
    pub fn index_texts(&self, docs: &[TextDoc]) -> Result<()> {
        let Some(text) = &self.text else {
            return Ok(());
        };
        if docs.is_empty() {
            return Ok(());
        }
        let key = crate::batch::journal_key();
        let mut row = Row::new(key.clone());
        for d in docs {
            row = row.with(FAMILY_ATTRS, TextPage::of_doc(d).key(), Vec::new());
        }
        self.direct.put(TEXT_MARKS_TABLE, &[row])?;
        text.write(docs)?;
        self.store.delete(TEXT_MARKS_TABLE, &[key])
    }

    /// The pages named by text marks ([`TextPage::key`]): read after a text search, they
    /// are the hits whose rows may not exist yet.
    pub fn marked_text_pages(&self) -> Result<HashSet<Vec<u8>>> {
        Ok(self.text_marks()?.1)
    }

    /// Text marks present (writes of words whose rows are not yet durable) and the pages
    /// they name, in one scan.
    pub fn text_marks(&self) -> Result<(u64, HashSet<Vec<u8>>)> {
        let mut marks = 0;
        let mut pages = HashSet::new();
        self.store
            .scan_each(TEXT_MARKS_TABLE, &Scan::prefix(b""), &mut |row| {
                marks += 1;
                pages.extend(row.family(FAMILY_ATTRS).map(|c| c.qualifier.clone()));
                true
            })?;
        Ok((marks, pages))
    }

    /// The page table and row key a text page names.
    pub(crate) fn page_key_of(&self, page: &TextPage) -> Result<PageKey> {
        let t = DateTime::<Utc>::from_timestamp(page.time, 0)
            .ok_or_else(|| crate::Error::Invalid(format!("text page time {}", page.time)))?;
        let table = keys::table_name(&page.source, chrono::Datelike::year(&t))?;
        let salt = keys::salt(&page.hash, self.options.buckets);
        Ok(PageKey {
            table,
            row_key: keys::data_key(salt, &keys::suffix(t, &page.hash)),
        })
    }

    /// Clears the marks of writers no longer at work: the words of their pages without
    /// rows are removed first. Returns (marks cleared, pages whose words were removed).
    pub(crate) fn recover_text_marks(&self, now: DateTime<Utc>) -> Result<(usize, usize)> {
        let rows = self.direct.scan(
            TEXT_MARKS_TABLE,
            &Scan::prefix(b"").families(&[FAMILY_ATTRS]),
        )?;
        let (mut marks, mut removed) = (0, 0);
        let tables: HashSet<String> = self.direct.list_tables()?.into_iter().collect();
        for row in rows {
            if crate::batch::writer_at_work(&row.key, now) {
                continue;
            }
            let pages: Vec<TextPage> = row
                .family(FAMILY_ATTRS)
                .filter_map(|c| TextPage::from_key(&c.qualifier))
                .collect();
            let mut orphans = Vec::new();
            for page in pages {
                let key = self.page_key_of(&page)?;
                let exists = tables.contains(&key.table)
                    && self
                        .direct
                        .get(
                            &key.table,
                            std::slice::from_ref(&key.row_key),
                            &[FAMILY_ATTRS],
                        )?
                        .into_iter()
                        .next()
                        .flatten()
                        .is_some();
                if !exists {
                    // The page the words name is the page the key names.
                    debug_assert_eq!(text_page_of(&key).ok().as_ref(), Some(&page));
                    orphans.push(page);
                }
            }
            if let (Some(text), false) = (&self.text, orphans.is_empty()) {
                tracing::warn!(
                    writer = %String::from_utf8_lossy(&row.key),
                    pages = orphans.len(),
                    "removing the words of pages a killed writer never gave rows"
                );
                text.delete(&orphans)?;
                removed += orphans.len();
            }
            self.direct
                .delete(TEXT_MARKS_TABLE, std::slice::from_ref(&row.key))?;
            marks += 1;
        }
        Ok((marks, removed))
    }
}
