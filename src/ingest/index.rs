//! The index step: a batch's rows (pages and their words, digests, URL states,
//! captures, images, cluster centres) recorded once its packs are synced, and applied
//! here or on their own thread while the next batch is decided, placed and written.

use std::time::Instant;

use anyhow::{Context, Result};
use indexer::{Index, LinkSummary};

use super::batch::{Applying, BatchRows};
use super::store::{Ingest, CRASH_AFTER_TEXT};

impl Ingest {
    /// Waits until the last batch's index rows are applied; their error,
    /// if applying them failed.
    pub fn wait_applied(&mut self) -> Result<()> {
        if let Some(a) = self.applying.take() {
            let secs = a
                .thread
                .join()
                .map_err(|_| anyhow::anyhow!("the index thread panicked"))?
                .context("indexing a batch")?;
            self.summary.storage.apply_secs += secs;
            self.batches_indexed = a.batch;
        }
        Ok(())
    }

    /// The index as the next batch must read it: with the rows of a batch
    /// still being applied.
    pub(super) fn reader(&self) -> &Index {
        match &self.applying {
            Some(a) => &a.view,
            None => &self.index,
        }
    }

    /// Applies a batch's recorded index rows: here, or on their own thread
    /// ([`Ingest::apply_behind`]).
    pub(super) fn apply(&mut self, mutations: Vec<indexer::Mutation>) -> Result<()> {
        if !self.apply_behind {
            let t0 = Instant::now();
            self.index
                .commit(&mutations)
                .context("indexing the batch")?;
            self.summary.storage.apply_secs += t0.elapsed().as_secs_f64();
            self.batches_indexed = self.batches_taken;
            return Ok(());
        }
        let flight = indexer::InFlight::new(mutations);
        let view = self.index.overlaid(&flight);
        let index = self.index.clone();
        // A plain thread: a remote store's client may refuse a runtime's.
        let thread = std::thread::Builder::new()
            .name("harvest-index".into())
            .spawn(move || {
                let t0 = Instant::now();
                let applied = index.commit(flight.mutations());
                flight.ended();
                applied.map(|()| t0.elapsed().as_secs_f64())
            })
            .context("cannot start the index thread")?;
        self.applying = Some(Applying {
            view,
            batch: self.batches_taken,
            thread,
        });
        Ok(())
    }

    /// The index step: records every row the batch adds or replaces (text first, then
    /// page rows, digests, URL states, captures, images and cluster centres), once the
    /// last batch's rows are in; the rows are applied after ([`Ingest::apply`]).
    pub(super) fn index_batch(
        &mut self,
        read: indexer::ReadRows,
        rows: BatchRows,
    ) -> Result<(Option<LinkSummary>, Vec<indexer::Mutation>)> {
        let BatchRows {
            pending,
            mut records,
            texts,
            digests,
            rows,
            moved,
            not_modified_states,
            not_modified_captures,
            embed_captures,
            images,
        } = rows;
        let near = self
            .cfg
            .dedup
            .near_duplicates
            .then_some(self.cfg.dedup.distance);
        // Every row of the batch becomes visible at once (issue 13): page
        // rows and postings, the rows they replace, digests, URL states,
        // captures, cluster centres, fingerprints.
        let remote = self.index.store().remote();
        let crash_after_text = self.crash_after_text == Some(self.packed_batches);
        // The last batch's rows are in before this one's are read and decided.
        self.wait_applied()?;
        self.index.record_knowing(read, |ix| {
                let mut urls = Vec::with_capacity(pending.len() + not_modified_states.len());
                let mut captures = Vec::with_capacity(pending.len() + not_modified_captures.len());
                for p in pending {
                    let mut state = p.url_state;
                    if let Some(record) = &p.record {
                        let key = ix.page_key(record)?;
                        state.table = key.table;
                        state.row_key = key.row_key;
                    }
                    urls.push(state);
                    captures.push(p.capture);
                }
                urls.extend(not_modified_states);
                captures.extend(not_modified_captures);
                captures.extend(embed_captures);
                // Two groups of tables no write of the other touches, each
                // reading before it writes: side by side on a remote store
                // (each read a round trip).
                let (linked, rest) = both(
                    remote,
                    || -> indexer::Result<_> {
                        // The rows the pages replace are read beside the
                        // fingerprints (a link keeps a page's key).
                        let keys = records
                            .iter()
                            .map(|r| ix.page_key(r))
                            .collect::<indexer::Result<Vec<_>>>()?;
                        let (linked, stored) = both(
                            remote,
                            || match near {
                                Some(distance) => {
                                    ix.link_near_duplicates(&mut records, distance).map(Some)
                                }
                                None => Ok(None),
                            },
                            || ix.stored_page_entries(&keys),
                        );
                        let linked = linked?;
                        // Text first: text without rows is never returned, rows
                        // without text would be missed by text queries.
                        ix.index_texts(&texts)?;
                        if crash_after_text {
                            tracing::warn!(
                                "{CRASH_AFTER_TEXT}: killing this process between a batch's words and its rows"
                            );
                            crate::crash::kill_this_process();
                        }
                        ix.index_pages_over(&records, stored?)?;
                        if !moved.is_empty() {
                            ix.delete_pages(&moved)?;
                        }
                        Ok(linked)
                    },
                    || -> indexer::Result<()> {
                        ix.put_digests(&digests)?;
                        ix.put_urls(&urls)?;
                        ix.put_captures(&captures)?;
                        ix.put_images(&images)?;
                        ix.put_clusters(&rows)
                    },
                );
                rest?;
                linked
            })
            .context("indexing the batch")
    }
}

/// Reads of a remote store sent side by side at most.
pub(super) const READ_THREADS: usize = 8;

/// Runs `a` and `b`, side by side when `parallel` (two reads of a remote
/// store, each a round trip), else one after the other.
pub(super) fn both<A: Send, B: Send>(
    parallel: bool,
    a: impl FnOnce() -> A + Send,
    b: impl FnOnce() -> B + Send,
) -> (A, B) {
    if !parallel {
        return (a(), b());
    }
    std::thread::scope(|scope| {
        let b = scope.spawn(b);
        let a = a();
        let b = b
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (a, b)
    })
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use super::*;
    use crate::config::Config;
    use crate::ingest::{Page, PART_OF_CRAWL};
    use crate::stores::Stores;

    /// An embedded store whose first batch apply waits until a read of
    /// `digests` arrives while it is held (or 10 s), and whose reads of
    /// `digests`, once armed, wait for that hold: the next batch's lookup
    /// runs while the first batch's rows are not in the store.
    struct HeldApplies {
        inner: indexer::EmbeddedStore,
        armed: std::sync::atomic::AtomicBool,
        holding: Mutex<bool>,
        read_while_held: std::sync::Condvar,
        reads_while_held: std::sync::atomic::AtomicUsize,
    }

    impl indexer::TableStore for HeldApplies {
        fn create_table(&self, name: &str, families: &[&str], buckets: u8) -> indexer::Result<()> {
            self.inner.create_table(name, families, buckets)
        }
        fn list_tables(&self) -> indexer::Result<Vec<String>> {
            self.inner.list_tables()
        }
        fn put(&self, table: &str, rows: &[indexer::Row]) -> indexer::Result<()> {
            self.inner.put(table, rows)
        }
        fn get(
            &self,
            table: &str,
            keys: &[Vec<u8>],
            families: &[&str],
        ) -> indexer::Result<Vec<Option<indexer::Row>>> {
            if table == indexer::DIGESTS_TABLE
                && self.armed.swap(false, std::sync::atomic::Ordering::SeqCst)
            {
                let mut holding = self.holding.lock().expect("lock");
                let deadline = Instant::now() + Duration::from_secs(10);
                while !*holding && Instant::now() < deadline {
                    holding = self
                        .read_while_held
                        .wait_timeout(holding, Duration::from_millis(20))
                        .expect("wait")
                        .0;
                }
                if *holding {
                    self.reads_while_held
                        .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                }
                // The answer is read while the apply is still held.
                let rows = self.inner.get(table, keys, families);
                drop(holding);
                self.read_while_held.notify_all();
                return rows;
            }
            self.inner.get(table, keys, families)
        }
        fn scan(&self, table: &str, scan: &indexer::Scan) -> indexer::Result<Vec<indexer::Row>> {
            self.inner.scan(table, scan)
        }
        fn delete(&self, table: &str, keys: &[Vec<u8>]) -> indexer::Result<()> {
            self.inner.delete(table, keys)
        }
        fn delete_cells(&self, table: &str, rows: &[indexer::Row]) -> indexer::Result<()> {
            self.inner.delete_cells(table, rows)
        }
        fn regions(&self, table: &str) -> indexer::Result<Vec<indexer::Region>> {
            self.inner.regions(table)
        }
        fn apply(&self, mutations: &[indexer::Mutation]) -> indexer::Result<()> {
            // Only the first batch is held.
            if self
                .reads_while_held
                .load(std::sync::atomic::Ordering::SeqCst)
                > 0
            {
                return self.inner.apply(mutations);
            }
            let mut holding = self.holding.lock().expect("lock");
            *holding = true;
            self.read_while_held.notify_all();
            let before = self
                .reads_while_held
                .load(std::sync::atomic::Ordering::SeqCst);
            let deadline = Instant::now() + Duration::from_secs(10);
            while self
                .reads_while_held
                .load(std::sync::atomic::Ordering::SeqCst)
                == before
                && Instant::now() < deadline
            {
                holding = self
                    .read_while_held
                    .wait_timeout(holding, Duration::from_millis(50))
                    .expect("wait")
                    .0;
            }
            *holding = false;
            drop(holding);
            self.inner.apply(mutations)
        }
        fn atomic_apply(&self) -> bool {
            self.inner.atomic_apply()
        }
    }

    fn page(url: &str, body: &str) -> Page {
        let parsed = url::Url::parse(url).expect("url");
        crawler::FetchedPage {
            requested_url: url.to_string(),
            url: url.to_string(),
            fetched_at: chrono::Utc::now(),
            status: 200,
            status_line: "HTTP/1.1 200 OK".into(),
            headers: vec![("Content-Type".into(), "text/html; charset=utf-8".into())],
            body: body.as_bytes().to_vec(),
            content_type: "text/html".into(),
            charset: "utf-8".into(),
            charset_source: crawler::charset::CharsetSource::Header,
            ip_address: None,
            depth: 1,
            extract: extract::extract(body, &parsed),
            request: None,
        }
    }

    /// With a batch's index rows applied behind, the next batch reads them
    /// before they are in the store: the same payload under another URL one
    /// batch later is a revisit of the first capture, as when batches were
    /// indexed one after another.
    #[test]
    fn the_next_batch_sees_the_rows_still_being_applied() {
        let dir = tempfile::tempdir().expect("temp dir");
        let held = Arc::new(HeldApplies {
            inner: indexer::EmbeddedStore::open(dir.path().join("index")).expect("open"),
            armed: Default::default(),
            holding: Mutex::new(false),
            read_while_held: std::sync::Condvar::new(),
            reads_while_held: Default::default(),
        });
        let store: Arc<dyn indexer::TableStore> = held.clone();
        let index = Arc::new(Index::new(store, indexer::IndexOptions::default()).expect("index"));
        let stores = Stores {
            packs: Arc::new(packer::LocalPackStore::open(dir.path().join("packs")).expect("packs")),
            index,
            read_only_copy: None,
        };
        let raw = crate::config::RawConfig {
            data_dir: Some(dir.path().to_path_buf()),
            ..Default::default()
        };
        let cfg = Config::from_raw(raw).expect("config");
        let mut ingest = Ingest::new(&cfg, &stores, None, PART_OF_CRAWL).expect("ingest");
        ingest.apply_behind(true);
        let body = "<html><head><title>One story</title></head><body><p>The same story, \
                    served under two addresses.</p></body></html>";
        for (i, url) in ["http://example.com/a.html", "http://example.com/b.html"]
            .into_iter()
            .enumerate()
        {
            let analysed = ingest.analyser().analyse(page(url, body));
            ingest
                .store_batch(vec![analysed], Vec::new())
                .expect("store");
            held.armed
                .store(i == 0, std::sync::atomic::Ordering::SeqCst);
        }
        assert_eq!(ingest.batches_taken(), 2);
        assert_eq!(
            ingest.batches_indexed(),
            1,
            "the second batch is being applied"
        );
        let summary = ingest.finish(Duration::from_secs(1)).expect("finish");
        assert!(
            held.reads_while_held
                .load(std::sync::atomic::Ordering::SeqCst)
                >= 1,
            "the second batch looked its digests up while the first batch was held"
        );
        assert_eq!(summary.new, 2, "{summary:?}");
        assert_eq!(
            summary.duplicates, 1,
            "the second capture is a revisit: {summary:?}"
        );
        let entry = stores
            .index
            .known_digests(std::iter::once(
                stores
                    .index
                    .get_url("http://example.com/b.html")
                    .expect("read")
                    .and_then(|s| s.digest)
                    .expect("digest")
                    .as_str(),
            ))
            .expect("digests");
        let first = entry.values().next().expect("digest entry");
        assert_eq!(first.captures, 2, "{first:?}");
        assert_eq!(first.first_url, "http://example.com/a.html");
    }
}
