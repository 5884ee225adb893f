//! The text index against the page rows: words of pages that have no row (a crash
//! between a batch's words and its rows) and rows whose words are missing.

use std::collections::HashMap;
use std::io::Write;

use anyhow::{Context, Result};
use rayon::prelude::*;

use crate::stores::Stores;

use super::report::{FsckReport, Problem, LISTED};

/// Pages of a batch of text repairs.
const TEXT_REPAIR_BATCH: usize = 256;

/// The text index against the page rows (after the repairs above, which write text as they
/// index): rows without text are a problem (text queries miss them), and so is text without
/// a row that no text mark names (counts of mentions alone would count it; a marked page's
/// rows are in flight, or its writer was killed and the next writer removes its words).
/// `repair` writes the missing pages' words, read again from their records, and removes the
/// entries without a row.
pub(super) fn check_text(
    stores: &Stores,
    report: &mut FsckReport,
    repair: bool,
    progress: &mut dyn Write,
) -> Result<()> {
    let Some(text) = stores.index.text() else {
        return Ok(());
    };
    let mut rows: HashMap<indexer::text::TextPage, indexer::PageRecord> = HashMap::new();
    stores
        .index
        .each_page(&mut |_, _, page| {
            rows.insert(indexer::text::TextPage::of(&page), page);
        })
        .context("reading the page rows")?;
    let mut orphans = Vec::new();
    text.pages(&mut |p| {
        report.text_pages += 1;
        if rows.remove(&p).is_none() {
            orphans.push(p);
        }
    })
    .context("reading the text index")?;
    // Read after the text: a page whose mark is gone by now has its rows, or had them.
    let (marks, marked) = stores
        .index
        .text_marks()
        .context("reading the text marks")?;
    report.text_marks = marks;
    orphans.retain(|p| !marked.contains(&p.key()));
    report.text_orphans = orphans.len() as u64;
    for p in orphans
        .iter()
        .take(LISTED.saturating_sub(report.problems.len()))
    {
        report.problems.push(Problem {
            kind: "no row",
            pack: String::new(),
            offset: 0,
            detail: format!(
                "the text index holds words of a page of {} at {} (URL hash {}) without a page row",
                p.source,
                chrono::DateTime::from_timestamp(p.time, 0).unwrap_or_default(),
                p.hash
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect::<String>()
            ),
        });
    }
    report.text_missing = rows.len() as u64;
    let unlisted = text
        .unlisted_files()
        .context("listing the text index's files")?;
    report.text_files_unlisted = unlisted.len() as u64;
    for page in rows
        .values()
        .take(LISTED.saturating_sub(report.problems.len()))
    {
        report.problems.push(Problem {
            kind: "no text",
            pack: page.pack_path.clone(),
            offset: page.offset,
            detail: format!("{} is not in the text index", page.url),
        });
    }
    if !repair {
        return Ok(());
    }
    if !orphans.is_empty() {
        text.delete(&orphans)
            .context("removing text entries without a row")?;
        report.removed_text_orphans = orphans.len() as u64;
    }
    if !unlisted.is_empty() {
        text.remove_files(&unlisted)
            .context("removing the text index's unlisted files")?;
        report.removed_text_files = unlisted.len() as u64;
    }
    let missing: Vec<indexer::PageRecord> = rows.into_values().collect();
    for batch in missing.chunks(TEXT_REPAIR_BATCH) {
        let docs: Vec<indexer::TextDoc> = batch
            .par_iter()
            .filter_map(|page| crate::read::page_words(stores, page).ok())
            .collect();
        text.write(&docs).context("writing the text index")?;
        report.repaired_text += docs.len() as u64;
        writeln!(
            progress,
            "text index: {} of {} pages written",
            report.repaired_text,
            missing.len()
        )?;
    }
    Ok(())
}
