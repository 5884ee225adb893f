//! What `harvest fsck` found: the counts, the problems it lists, the damaged regions,
//! and how the report reads as text and JSON.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::damage::DAMAGE_SUFFIX;

/// Problems listed in the report (all are counted).
pub(super) const LISTED: usize = 50;

/// One inconsistency.
#[derive(Debug, Clone, Serialize)]
pub struct Problem {
    /// `missing`, `mismatch`, `torn`, `damaged`.
    pub kind: &'static str,
    pub pack: String,
    pub offset: u64,
    pub detail: String,
}

/// A stretch in the middle of a pack that holds no readable record, with
/// readable records after it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DamagedRegion {
    pub pack: String,
    /// Where the first unreadable record starts.
    pub offset: u64,
    /// Bytes up to the next readable record.
    pub length: u64,
    /// Why the record at `offset` is unreadable.
    pub reason: String,
    /// Recorded in `PACK.damaged` by an earlier `fsck --repair`: skipped,
    /// no problem (a row that still points into it is reported as missing).
    pub recorded: bool,
}

/// What `harvest fsck` found.
#[derive(Debug, Clone, Default, Serialize)]
pub struct FsckReport {
    /// Page rows read.
    pub pages: u64,
    /// Capture rows read.
    pub captures: u64,
    /// Packs read.
    pub packs: u64,
    /// Records read from the packs.
    pub records: u64,
    /// Bytes read from the packs.
    pub bytes: u64,
    /// Referenced records checked and found right.
    pub verified: u64,
    /// References to a record that is not there.
    pub missing: u64,
    /// Records whose URL, id, length or digest disagree with the index.
    pub mismatched: u64,
    /// Packs whose end is not a whole record.
    pub torn: u64,
    /// Damaged regions in the middle of packs not recorded by a repair
    /// (readable records follow them; see [`DamagedRegion`]).
    pub damaged: u64,
    /// Damaged regions recorded in `PACK.damaged` by an earlier repair:
    /// skipped, no problem.
    pub skipped_damaged: u64,
    /// Bytes of all damaged regions (recorded or not).
    pub damaged_bytes: u64,
    /// The damaged regions found (the first ones), recorded or not.
    pub damaged_regions: Vec<DamagedRegion>,
    /// Response and revisit records no row points at.
    pub unindexed: u64,
    /// Revisit captures checked for replay (their original listed).
    pub revisits: u64,
    /// Revisit captures whose original no listed capture holds: replay
    /// tools cannot load their content.
    pub unresolved_revisits: u64,
    /// Response and revisit records that a page row points at but no
    /// capture row: `export cdxj` does not list them.
    pub unlisted: u64,
    /// With `--repair`: capture rows recorded for the unlisted records.
    pub listed_captures: u64,
    /// With `--repair`: torn packs cut back to their last whole record
    /// (the original kept as `PACK.torn-TIME`).
    pub repaired_torn: u64,
    /// With `--repair`: damaged regions recorded in `PACK.damaged` (the rows
    /// of their records removed with the missing ones; the pack unchanged).
    pub repaired_damaged: u64,
    /// With `--repair`: references to missing records whose rows were
    /// removed (page rows, captures, and the URL's state, so that the next
    /// crawl fetches the page again).
    pub dropped_missing: u64,
    /// With `--repair`: unindexed records now indexed as the crawl would
    /// have (pages and 304s).
    pub reindexed: u64,
    /// With `--repair`: unindexed records of pages fetched again since,
    /// added to their capture history only.
    pub history_added: u64,
    /// Fingerprinted pages by the recipe of their fingerprint
    /// (`classifier::simhash::FINGERPRINT_VERSION`). Not a problem: fingerprints
    /// of an older recipe are only never compared with newer ones, and
    /// `harvest reindex --replace` makes them again.
    pub fingerprints: BTreeMap<u32, u64>,
    /// Fingerprinted pages whose recipe is not on record (rows written
    /// before harvest kept it).
    pub fingerprints_unrecorded: u64,
    /// Pages the text index holds (none without a text index).
    pub text_pages: u64,
    /// Page rows the text index lacks: text queries miss them. `--repair`
    /// writes their words, read again from their records.
    pub text_missing: u64,
    /// Text index entries without a page row and without a text mark (left by a
    /// version of harvest before marks, or by a writer outside a batch): searches
    /// never return them, but counts of mentions alone trust the text index and
    /// count them. `--repair` removes them.
    pub text_orphans: u64,
    /// Text marks present: writes of words whose rows are not yet durable (a
    /// writer at work, or one killed, whose marks the next writer clears).
    pub text_marks: u64,
    /// With `--repair`: pages whose words were written to the text index.
    pub repaired_text: u64,
    /// With `--repair`: text index entries without a row removed.
    pub removed_text_orphans: u64,
    /// Files of the cluster's text index that no manifest row names, begun over an hour
    /// ago (a writer killed between a split's file and its row): never read, only space
    /// (not a problem). `--repair` removes them.
    pub text_files_unlisted: u64,
    /// With `--repair`: those files removed.
    pub removed_text_files: u64,
    /// Compactions a killed `harvest compact` left half done, finished before the check
    /// (`crate::compact::finish_interrupted`).
    pub compactions_finished: u64,
    /// Wall time.
    pub secs: f64,
    /// The first problems found.
    pub problems: Vec<Problem>,
}

impl FsckReport {
    /// True when the archive is consistent (unindexed records are not an
    /// error: they are what a crash between pack and index leaves).
    pub fn clean(&self) -> bool {
        self.missing <= self.dropped_missing
            && self.mismatched == 0
            && self.torn <= self.repaired_torn
            && self.damaged <= self.repaired_damaged
            && self.text_missing <= self.repaired_text
            && self.text_orphans <= self.removed_text_orphans
            && self.unresolved_revisits == 0
            && self.unlisted <= self.listed_captures
    }

    pub(super) fn problem(&mut self, kind: &'static str, pack: &str, offset: u64, detail: String) {
        match kind {
            "missing" => self.missing += 1,
            "torn" => self.torn += 1,
            "damaged" => self.damaged += 1,
            "unresolved" => self.unresolved_revisits += 1,
            "unlisted" => self.unlisted += 1,
            _ => self.mismatched += 1,
        }
        if self.problems.len() < LISTED {
            self.problems.push(Problem {
                kind,
                pack: pack.to_string(),
                offset,
                detail,
            });
        }
    }

    /// The fingerprint line: pages by recipe, and what to do about older ones.
    fn render_fingerprints(&self) -> String {
        let current = classifier::simhash::FINGERPRINT_VERSION;
        let mut parts = Vec::new();
        let mut older = 0u64;
        for (&recipe, &n) in &self.fingerprints {
            if recipe == current {
                parts.push(format!("{n} of recipe {recipe} (current)"));
            } else {
                older += n;
                parts.push(format!("{n} of recipe {recipe}"));
            }
        }
        if self.fingerprints_unrecorded > 0 {
            parts.push(format!(
                "{} of an unrecorded recipe (rows written before recipes were kept)",
                self.fingerprints_unrecorded
            ));
        }
        let mut s = format!("fingerprints: {}\n", parts.join(", "));
        if older > 0 {
            s.push_str(&format!(
                "  {older} fingerprints of another recipe are not compared with those of recipe {current}: `harvest reindex --replace` fingerprints the archive again\n"
            ));
        }
        s
    }

    /// The report as text.
    pub fn render(&self) -> String {
        let mut s = format!(
            "checked {} page rows and {} captures against {} records in {} packs ({:.1} MB) in {:.1} s ({:.0} records/s)\n",
            self.pages,
            self.captures,
            self.records,
            self.packs,
            self.bytes as f64 / 1e6,
            self.secs,
            self.records as f64 / self.secs.max(1e-9)
        );
        s.push_str(&format!(
            "verified {}  missing {}  mismatched {}  torn packs {}  damaged regions {}  unindexed records {}\n",
            self.verified, self.missing, self.mismatched, self.torn, self.damaged, self.unindexed
        ));
        if self.skipped_damaged > 0 {
            s.push_str(&format!(
                "skipped {} damaged regions recorded by an earlier --repair (nothing points into them; the bytes are kept):\n",
                self.skipped_damaged
            ));
            for r in self.damaged_regions.iter().filter(|r| r.recorded) {
                s.push_str(&format!(
                    "  skipped  {} @ {}: {} bytes up to the next record: {}\n",
                    r.pack, r.offset, r.length, r.reason
                ));
            }
        }
        s.push_str(&format!(
            "replay: {} revisits, {} without a listed original; export cdxj lists {}\n",
            self.revisits,
            self.unresolved_revisits,
            match (self.unlisted.saturating_sub(self.listed_captures), self.unindexed) {
                (0, 0) => "every capture record".to_string(),
                (0, u) => format!("every indexed capture record ({u} unindexed: `--repair` indexes them)"),
                (n, _) => format!(
                    "not {n} records with page rows but no capture rows (`--repair` records them){}",
                    if self.unindexed > 0 {
                        format!(" nor {} unindexed ones", self.unindexed)
                    } else {
                        String::new()
                    }
                ),
            }
        ));
        if self.listed_captures > 0 {
            s.push_str(&format!(
                "repaired: {} capture rows recorded for records only page rows named\n",
                self.listed_captures
            ));
        }
        if !self.fingerprints.is_empty() || self.fingerprints_unrecorded > 0 {
            s.push_str(&self.render_fingerprints());
        }
        if self.repaired_torn + self.dropped_missing > 0 {
            s.push_str(&format!(
                "repaired: {} torn packs cut to their last whole record (originals kept as *.torn-*), {} rows of missing records removed\n",
                self.repaired_torn, self.dropped_missing
            ));
        }
        if self.repaired_damaged > 0 {
            s.push_str(&format!(
                "repaired: {} damaged regions recorded in PACK{DAMAGE_SUFFIX} (packs unchanged: the records after them stay where the index points)\n",
                self.repaired_damaged
            ));
        }
        if self.reindexed + self.history_added > 0 {
            s.push_str(&format!(
                "repaired: {} unindexed records indexed, {} added to the capture history of pages fetched again since\n",
                self.reindexed, self.history_added
            ));
        }
        if self.text_pages + self.text_missing + self.text_orphans > 0 {
            s.push_str(&format!(
                "text index: {} pages, {} page rows without text (text queries miss them), {} entries without a row (counts of mentions count them), {} writes in flight\n",
                self.text_pages, self.text_missing, self.text_orphans, self.text_marks
            ));
        }
        if self.repaired_text + self.removed_text_orphans > 0 {
            s.push_str(&format!(
                "repaired: words of {} pages written to the text index, {} text entries without a row removed\n",
                self.repaired_text, self.removed_text_orphans
            ));
        }
        if self.text_files_unlisted > 0 {
            s.push_str(&format!(
                "text index: {} split files no manifest row names (left by writers killed over an hour ago; only space){}\n",
                self.text_files_unlisted,
                if self.removed_text_files > 0 {
                    format!(", {} removed", self.removed_text_files)
                } else {
                    String::new()
                }
            ));
        }
        for p in &self.problems {
            s.push_str(&format!(
                "  {:<8} {} @ {}: {}\n",
                p.kind, p.pack, p.offset, p.detail
            ));
        }
        let listed = self.problems.len() as u64;
        let total = self.missing
            + self.mismatched
            + self.torn
            + self.damaged
            + self.text_missing
            + self.text_orphans
            + self.unresolved_revisits
            + self.unlisted;
        if total > listed {
            s.push_str(&format!("  ... and {} more\n", total - listed));
        }
        s.push_str(if self.clean() {
            "archive consistent\n"
        } else {
            "archive NOT consistent\n"
        });
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_report_counts_fingerprints_by_recipe_and_says_what_to_do_about_older_ones() {
        let current = classifier::simhash::FINGERPRINT_VERSION;
        let mut r = FsckReport {
            fingerprints: [(current, 7)].into(),
            ..Default::default()
        };
        let text = r.render();
        assert!(
            text.contains(&format!("fingerprints: 7 of recipe {current} (current)\n")),
            "{text}"
        );
        assert!(!text.contains("reindex --replace"), "{text}");
        r.fingerprints.insert(current - 1, 2);
        r.fingerprints_unrecorded = 3;
        let text = r.render();
        assert!(
            text.contains(&format!("2 of recipe {}", current - 1)),
            "{text}"
        );
        assert!(text.contains("3 of an unrecorded recipe"), "{text}");
        assert!(text.contains("2 fingerprints of another recipe"), "{text}");
        assert!(text.contains("`harvest reindex --replace`"), "{text}");
        assert!(r.clean(), "older fingerprints are no inconsistency");
    }
}
