//! The shapes a batch takes between the storage steps: a page decided and not yet
//! written ([`Prepared`]), written and not yet indexed ([`Pending`]), the whole batch
//! after the write step ([`Written`]) and as the rows it adds to the index
//! ([`BatchRows`]), and a batch whose index rows are being applied ([`Applying`]).

use std::collections::HashMap;

use indexer::{ClusterRow, DigestEntry, Index, PageRecord, UrlState};
use packer::warc::EncodedRecord;
use packer::{Centre, PackKey};

use super::analyse::{Page, Stored};

/// A batch's index rows being applied on their own thread.
pub(super) struct Applying {
    /// The index as it will be once they are in: what the next batch reads.
    pub(super) view: Index,
    /// The batch's number ([`Ingest::batches_taken`]).
    pub(super) batch: u64,
    /// Seconds the application took.
    pub(super) thread: std::thread::JoinHandle<indexer::Result<f64>>,
}

/// Where a stored page's record went.
#[derive(Debug, Clone)]
pub(super) struct PagePlace {
    pub(super) key: PackKey,
    pub(super) record_id: String,
    pub(super) source: String,
}

/// Pages remembered for their embeds (then forgotten: a late embed goes to
/// the pack its page's index row names).
pub(super) const MAX_PAGE_PLACES: usize = 100_000;

/// What [`Ingest::write_embeds`] leaves to index.
#[derive(Default)]
pub(super) struct WrittenEmbeds {
    pub(super) captures: Vec<indexer::Capture>,
    pub(super) digests: Vec<DigestEntry>,
    pub(super) images: Vec<indexer::ImageEntry>,
}

/// A page of a batch, decided but not yet written.
pub(super) struct Prepared {
    pub(super) page: Page,
    pub(super) source: String,
    pub(super) topic: String,
    pub(super) topic_score: f32,
    pub(super) digest: String,
    pub(super) vector: Vec<f32>,
    pub(super) simhash: Option<u64>,
    /// Runs of Chinese characters of the main text (the text index's).
    pub(super) han: String,
    /// Day of the key time (published, else fetched), UTC.
    pub(super) day: chrono::NaiveDate,
    pub(super) previous: Option<UrlState>,
    pub(super) recapture: bool,
    pub(super) encoded: EncodedRecord,
    /// The capture's `request` record (written right after `encoded`).
    pub(super) request: Option<EncodedRecord>,
    pub(super) digest_update: DigestEntry,
    pub(super) revisit: bool,
    pub(super) stored: Option<Stored>,
    pub(super) body_bytes: u64,
}

/// One page on its way into a pack and the index.
pub(super) struct Pending {
    /// None for a re-capture of an unchanged page: no new index row.
    pub(super) record: Option<PageRecord>,
    /// The words of the page for the text index (with `record`).
    pub(super) text: Option<indexer::TextDoc>,
    pub(super) capture: indexer::Capture,
    pub(super) digest_update: DigestEntry,
    pub(super) url_state: UrlState,
}

/// A batch after its write step: every record is in a pack (not yet synced), and what
/// the index step needs to index it.
#[derive(Default)]
pub(super) struct Written {
    /// The batch's pages, in the order they were written.
    pub(super) pending: Vec<Pending>,
    /// Where the first capture of a digest new in this batch was written.
    pub(super) first_locations: HashMap<String, indexer::PackLocation>,
    /// The pack each (topic, day, cluster) of the batch went to.
    pub(super) cluster_packs: HashMap<(String, chrono::NaiveDate, u32), String>,
    /// Old rows of pages whose key time changed (a publish time appeared).
    pub(super) moved: Vec<indexer::PageKey>,
    /// The cluster centres the placement moved or made.
    pub(super) centres: Vec<(String, chrono::NaiveDate, Centre)>,
    /// The URL states and captures of the batch's 304s.
    pub(super) not_modified_states: Vec<UrlState>,
    pub(super) not_modified_captures: Vec<indexer::Capture>,
    /// The batch's embeds.
    pub(super) embeds: WrittenEmbeds,
}

/// The rows a written batch adds to the index, gathered for [`Ingest::index_batch`].
pub(super) struct BatchRows {
    pub(super) pending: Vec<Pending>,
    pub(super) records: Vec<PageRecord>,
    pub(super) texts: Vec<indexer::TextDoc>,
    pub(super) digests: Vec<DigestEntry>,
    pub(super) rows: Vec<ClusterRow>,
    pub(super) moved: Vec<indexer::PageKey>,
    pub(super) not_modified_states: Vec<UrlState>,
    pub(super) not_modified_captures: Vec<indexer::Capture>,
    pub(super) embed_captures: Vec<indexer::Capture>,
    pub(super) images: Vec<indexer::ImageEntry>,
}

impl BatchRows {
    /// The number of cluster centres the batch updates.
    pub(super) fn clusters(&self) -> u64 {
        self.rows.len() as u64
    }

    pub(super) fn of(written: Written) -> BatchRows {
        let Written {
            mut pending,
            first_locations,
            cluster_packs,
            moved,
            centres,
            not_modified_states,
            not_modified_captures,
            embeds: written,
        } = written;
        let mut records: Vec<PageRecord> =
            pending.iter().filter_map(|p| p.record.clone()).collect();
        let texts: Vec<indexer::TextDoc> =
            pending.iter_mut().filter_map(|p| p.text.take()).collect();
        // Pages arrive in the order their analysis ends; the earliest fetch
        // of a story is its first page (and a reindex, which replays the
        // records by time, links them the same way).
        records.sort_by(|a, b| (a.fetched, &a.url).cmp(&(b.fetched, &b.url)));
        // The last update of a digest in this batch carries the final count.
        let mut digests: HashMap<String, DigestEntry> = HashMap::new();
        for p in &pending {
            let mut d = p.digest_update.clone();
            if d.first_location.path.is_empty() {
                if let Some(first) = first_locations.get(&d.digest) {
                    d.first_location = first.clone();
                }
            }
            digests.insert(d.digest.clone(), d);
        }
        for d in written.digests {
            digests.insert(d.digest.clone(), d);
        }
        let digests: Vec<DigestEntry> = digests.into_values().collect();
        let (embed_captures, images) = (written.captures, written.images);
        let rows: Vec<ClusterRow> = centres
            .into_iter()
            .map(|(topic, day, c)| ClusterRow {
                pack: cluster_packs
                    .get(&(topic.clone(), day, c.cluster))
                    .cloned()
                    .unwrap_or_default(),
                topic,
                day,
                cluster: c.cluster,
                centre: c.centre,
                size: c.size,
            })
            .collect();
        BatchRows {
            pending,
            records,
            texts,
            digests,
            rows,
            moved,
            not_modified_states,
            not_modified_captures,
            embed_captures,
            images,
        }
    }
}
