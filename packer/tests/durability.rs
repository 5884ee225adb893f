//! Durability, crash recovery, restart and rollover behaviour of `Packer` on a local store.

mod util;

use std::io;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use packer::{
    Error, LocalPackStore, PackEntry, PackStore, PackWriter, Packer, PackerOptions, RecordIter,
    Result,
};

fn pack_bytes(dir: &tempfile::TempDir, path: &str) -> Vec<u8> {
    std::fs::read(dir.path().join(path)).expect("read pack file")
}

#[test]
fn synced_records_survive_a_drop_without_close() {
    let (dir, store) = util::local_store();
    let mut packer = util::packer(&store, packer::DEFAULT_MAX_PACK_BYTES);
    let mut written = Vec::new();
    for i in 0..util::PAGES.len() {
        let (rec, body) = util::page_record(i);
        written.push((packer.write(&util::key(1), &rec).expect("write"), body));
    }
    packer.sync_all().expect("sync");
    drop(packer); // simulated crash: no close_all

    let reopened = LocalPackStore::open(dir.path()).expect("reopen");
    let reader = Packer::new(Arc::new(reopened), PackerOptions::default());
    for (loc, body) in &written {
        let rec = reader.read(loc).expect("read back");
        assert_eq!(&rec.http_response().expect("http").body, body);
    }
    let data = pack_bytes(&dir, &written[0].0.path);
    let all: Vec<_> = RecordIter::new(&data)
        .collect::<Result<_>>()
        .expect("whole pack readable");
    assert_eq!(all.len(), 1 + util::PAGES.len());
    assert_eq!(all[0].2.record_type(), Some("warcinfo"));
}

#[test]
fn dropped_writer_logs_a_warning() {
    #[derive(Clone, Default)]
    struct Buf(Arc<Mutex<Vec<u8>>>);
    impl io::Write for Buf {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.0.lock().expect("lock").extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let buf = Buf::default();
    let sink = buf.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || sink.clone())
        .with_ansi(false)
        .finish();
    let (_dir, store) = util::local_store();
    tracing::subscriber::with_default(subscriber, || {
        let mut closed = store.create("closed").expect("create");
        closed.append(b"x").expect("append");
        closed.close().expect("close");
        let mut dropped = store.create("dropped").expect("create");
        dropped.append(b"x").expect("append");
        drop(dropped);
    });
    let log = String::from_utf8(buf.0.lock().expect("lock").clone()).expect("utf-8 log");
    let warnings: Vec<_> = log.lines().filter(|l| l.contains("WARN")).collect();
    assert_eq!(warnings.len(), 1, "log: {log}");
    assert!(warnings[0].contains("without close") && warnings[0].contains("path=dropped"));
}

#[test]
fn torn_tail_keeps_good_records_and_restart_starts_a_new_part() {
    let (dir, store) = util::local_store();
    let mut packer = util::packer(&store, packer::DEFAULT_MAX_PACK_BYTES);
    let mut locs = Vec::new();
    for i in 0..3 {
        locs.push(
            packer
                .write(&util::key(4), &util::page_record(i).0)
                .expect("write"),
        );
    }
    packer.close_all().expect("close");
    let path = locs[0].path.clone();

    // Crash in the middle of the last record: cut the file inside it.
    let last = &locs[2];
    let cut = last.offset + last.length / 2;
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(dir.path().join(&path))
        .expect("open pack");
    file.set_len(cut).expect("truncate");
    drop(file);

    let data = pack_bytes(&dir, &path);
    let items: Vec<_> = RecordIter::new(&data).collect();
    assert_eq!(items.len(), 4, "warcinfo, 2 good records, 1 error");
    for (item, loc) in items[1..3].iter().zip(&locs) {
        let (offset, length, _) = item.as_ref().expect("good record");
        assert_eq!((*offset, *length), (loc.offset, loc.length));
    }
    match &items[3] {
        Err(Error::CorruptRecord { offset, .. }) => assert_eq!(*offset, last.offset),
        other => panic!("expected CorruptRecord, got {other:?}"),
    }
    assert!(matches!(
        store.read_range(&path, last.offset, last.length),
        Err(Error::OutOfRange { .. })
    ));

    // A new process never appends after the torn tail.
    let mut restarted = util::packer(&store, packer::DEFAULT_MAX_PACK_BYTES);
    let loc = restarted
        .write(&util::key(4), &util::page_record(3).0)
        .expect("write");
    assert_eq!(
        util::pack_name(&loc.path),
        (4, 1, restarted.writer().to_string())
    );
    restarted.close_all().expect("close");
    assert_eq!(
        pack_bytes(&dir, &path).len() as u64,
        cut,
        "old part untouched"
    );
    // Half a gzip member read through Packer::read is an error, not a panic.
    let bogus = packer::PackLocation {
        length: last.length / 2,
        ..last.clone()
    };
    assert!(matches!(
        restarted.read(&bogus),
        Err(Error::CorruptRecord { .. })
    ));
}

#[test]
fn restart_continues_after_the_highest_existing_part() {
    let (_dir, store) = util::local_store();
    // Part 0 named the old way, part 5 the current way by another writer.
    let old = packer::legacy_pack_path("technology", util::key(7).date, 7, 0);
    let other = packer::pack_path(
        "technology",
        util::key(7).date,
        7,
        5,
        packer::PackOrigin {
            created: util::key(7).date.and_hms_opt(1, 2, 3).expect("time"),
            writer: "otherwr1".into(),
        },
    );
    for path in [old, other] {
        store.create(&path).expect("create").close().expect("close");
    }
    // Noise that must not count: another cluster and a foreign file.
    store
        .create("technology/2024/05/01/c70-9.warc.gz")
        .expect("create")
        .close()
        .expect("close");
    store
        .create("technology/2024/05/01/c7-8.warc.gz.tmp")
        .expect("create")
        .close()
        .expect("close");
    let mut packer = util::packer(&store, packer::DEFAULT_MAX_PACK_BYTES);
    let loc = packer
        .write(&util::key(7), &util::page_record(0).0)
        .expect("write");
    assert_eq!(
        util::pack_name(&loc.path),
        (7, 6, packer.writer().to_string())
    );
    packer.close_all().expect("close");
}

#[test]
fn rollover_starts_new_parts_each_with_warcinfo() {
    let (dir, store) = util::local_store();
    let records: Vec<_> = (0..util::PAGES.len())
        .map(|i| util::page_record(i).0)
        .collect();
    let biggest = records
        .iter()
        .map(|r| r.member_len(Some("<urn:uuid:00000000-0000-0000-0000-000000000000>")))
        .max()
        .expect("records");
    // Room for warcinfo plus roughly two pages.
    let max = 2 * biggest + 1200;
    let mut packer = util::packer(&store, max);
    let mut locs = Vec::new();
    for round in 0..3 {
        for rec in &records {
            locs.push(packer.write(&util::key(0), rec).expect("write"));
        }
        assert!(packer.open_paths().len() == 1, "round {round}");
    }
    packer.sync_all().expect("sync");
    packer.close_all().expect("close");

    let parts: Vec<PackEntry> = store
        .list("technology/2024/05/01/")
        .expect("list")
        .into_iter()
        .filter(|e| util::pack_name(&e.path).0 == 0)
        .collect();
    assert!(parts.len() >= 4, "expected several parts, got {parts:?}");
    for entry in &parts {
        assert!(
            entry.len <= max,
            "{} is {} bytes > {max}",
            entry.path,
            entry.len
        );
        let data = pack_bytes(&dir, &entry.path);
        let items: Vec<_> = RecordIter::new(&data)
            .collect::<Result<_>>()
            .expect("readable");
        assert_eq!(items[0].2.record_type(), Some("warcinfo"));
        assert_eq!(
            items[0].2.header("WARC-Filename"),
            entry.path.rsplit('/').next()
        );
        assert!(items.len() >= 2, "every part holds a record");
    }
    let mut numbers: Vec<u32> = parts.iter().map(|e| part_number(&e.path)).collect();
    numbers.sort();
    assert_eq!(numbers, (0..parts.len() as u32).collect::<Vec<_>>());
    for (loc, rec) in locs.iter().zip(records.iter().cycle()) {
        let read = packer.read(loc).expect("read back");
        assert_eq!(read.record_id(), Some(rec.record_id.as_str()));
    }
}

fn part_number(path: &str) -> u32 {
    util::pack_name(path).1
}

#[test]
fn oversized_record_gets_a_pack_of_its_own() {
    let (_dir, store) = util::local_store();
    let mut packer = util::packer(&store, 100);
    let a = packer
        .write(&util::key(3), &util::page_record(1).0)
        .expect("write");
    let b = packer
        .write(&util::key(3), &util::page_record(2).0)
        .expect("write");
    assert_ne!(a.path, b.path);
    assert!(a.offset > 0, "warcinfo comes first");
    packer.close_all().expect("close");
    assert!(packer.read(&a).is_ok() && packer.read(&b).is_ok());
}

/// Wraps a new writer of a [`WrappedStore`]: its store path and the local writer.
type Wrap = Box<dyn Fn(&str, Box<dyn PackWriter>) -> Box<dyn PackWriter> + Send + Sync>;

/// A local store whose writers are wrapped (to fail, count or slow them down).
struct WrappedStore {
    inner: LocalPackStore,
    wrap: Wrap,
}

impl WrappedStore {
    fn open(dir: &std::path::Path, wrap: Wrap) -> Arc<dyn PackStore> {
        Arc::new(WrappedStore {
            inner: LocalPackStore::open(dir).expect("open"),
            wrap,
        })
    }
}

impl PackStore for WrappedStore {
    fn create(&self, path: &str) -> Result<Box<dyn PackWriter>> {
        Ok((self.wrap)(path, self.inner.create(path)?))
    }
    fn read_range(&self, path: &str, offset: u64, len: u64) -> Result<Vec<u8>> {
        self.inner.read_range(path, offset, len)
    }
    fn list(&self, prefix: &str) -> Result<Vec<PackEntry>> {
        self.inner.list(prefix)
    }
    fn len(&self, path: &str) -> Result<u64> {
        self.inner.len(path)
    }
    fn delete(&self, path: &str) -> Result<()> {
        self.inner.delete(path)
    }
    fn rename(&self, from: &str, to: &str) -> Result<()> {
        self.inner.rename(from, to)
    }
}

/// A store whose writers start failing (append writes half, sync/close fail) on demand.
fn flaky_store(dir: &std::path::Path, broken: &Arc<AtomicBool>) -> Arc<dyn PackStore> {
    let broken = Arc::clone(broken);
    WrappedStore::open(
        dir,
        Box::new(move |_, inner| {
            Box::new(FlakyWriter {
                inner,
                broken: Arc::clone(&broken),
            })
        }),
    )
}

struct FlakyWriter {
    inner: Box<dyn PackWriter>,
    broken: Arc<AtomicBool>,
}

fn disk_full() -> Error {
    Error::Io {
        path: "flaky".into(),
        source: io::Error::other("simulated disk failure"),
    }
}

impl PackWriter for FlakyWriter {
    fn append(&mut self, bytes: &[u8]) -> Result<u64> {
        if self.broken.load(Ordering::SeqCst) {
            self.inner.append(&bytes[..bytes.len() / 2])?;
            return Err(disk_full());
        }
        self.inner.append(bytes)
    }
    fn position(&self) -> u64 {
        self.inner.position()
    }
    fn sync(&mut self) -> Result<()> {
        if self.broken.load(Ordering::SeqCst) {
            return Err(disk_full());
        }
        self.inner.sync()
    }
    fn close(self: Box<Self>) -> Result<()> {
        let broken = self.broken.load(Ordering::SeqCst);
        self.inner.close()?;
        if broken {
            return Err(disk_full());
        }
        Ok(())
    }
}

#[test]
fn failed_writer_with_unsynced_records_fails_the_next_sync() {
    let dir = tempfile::tempdir().expect("tempdir");
    let broken = Arc::new(AtomicBool::new(false));
    let store: Arc<dyn PackStore> = flaky_store(dir.path(), &broken);
    let mut packer = util::packer(&store, packer::DEFAULT_MAX_PACK_BYTES);
    let first = packer
        .write(&util::key(9), &util::page_record(0).0)
        .expect("write");
    broken.store(true, Ordering::SeqCst);
    assert!(packer
        .write(&util::key(9), &util::page_record(1).0)
        .is_err());
    // `first` was never synced and its pack could not be closed cleanly: must not be indexed.
    match packer.sync_all() {
        Err(Error::UnsyncedLoss { path, .. }) => assert_eq!(path, first.path),
        other => panic!("expected UnsyncedLoss, got {other:?}"),
    }
    // The failure is reported once; after recovery the next write goes to a fresh part.
    broken.store(false, Ordering::SeqCst);
    packer.sync_all().expect("nothing left to sync");
    let next = packer
        .write(&util::key(9), &util::page_record(2).0)
        .expect("write");
    assert_eq!(
        util::pack_name(&next.path),
        (9, 1, packer.writer().to_string())
    );
    packer.sync_all().expect("sync");
    packer.close_all().expect("close");
}

/// Live writers of a store, counted at the store: created minus closed (or dropped).
#[derive(Default)]
struct WriterCounts {
    open: AtomicUsize,
    peak: AtomicUsize,
    /// Writers dropped without `close` (not closed durably).
    dropped: AtomicUsize,
}

struct CountingWriter {
    inner: Option<Box<dyn PackWriter>>,
    counts: Arc<WriterCounts>,
}

impl CountingWriter {
    fn inner(&mut self) -> &mut Box<dyn PackWriter> {
        self.inner.as_mut().expect("writer used after close")
    }
}

impl PackWriter for CountingWriter {
    fn append(&mut self, bytes: &[u8]) -> Result<u64> {
        self.inner().append(bytes)
    }
    fn position(&self) -> u64 {
        self.inner.as_ref().map_or(0, |w| w.position())
    }
    fn sync(&mut self) -> Result<()> {
        self.inner().sync()
    }
    fn close(mut self: Box<Self>) -> Result<()> {
        let inner = self.inner.take().expect("closed twice");
        self.counts.open.fetch_sub(1, Ordering::SeqCst);
        inner.close()
    }
}

impl Drop for CountingWriter {
    fn drop(&mut self) {
        if self.inner.is_some() {
            self.counts.open.fetch_sub(1, Ordering::SeqCst);
            self.counts.dropped.fetch_add(1, Ordering::SeqCst);
        }
    }
}

fn counting_store() -> (tempfile::TempDir, Arc<dyn PackStore>, Arc<WriterCounts>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let counts = Arc::new(WriterCounts::default());
    let live = Arc::clone(&counts);
    let store = WrappedStore::open(
        dir.path(),
        Box::new(move |_, inner| {
            let open = live.open.fetch_add(1, Ordering::SeqCst) + 1;
            live.peak.fetch_max(open, Ordering::SeqCst);
            Box::new(CountingWriter {
                inner: Some(inner),
                counts: Arc::clone(&live),
            })
        }),
    );
    (dir, store, counts)
}

fn capped_packer(store: &Arc<dyn PackStore>, max_open_packs: usize) -> Packer {
    Packer::new(
        Arc::clone(store),
        PackerOptions {
            max_open_packs,
            ..PackerOptions::default()
        },
    )
}

/// The record ids of a pack file read whole from disk, record by record (warcinfo first,
/// every gzip member complete).
fn record_ids_on_disk(dir: &tempfile::TempDir, path: &str) -> Vec<String> {
    let data = pack_bytes(dir, path);
    let items: Vec<_> = RecordIter::new(&data)
        .collect::<Result<_>>()
        .unwrap_or_else(|e| panic!("{path} is not a complete WARC file: {e}"));
    assert_eq!(items[0].2.record_type(), Some("warcinfo"), "{path}");
    assert_eq!(
        items[0].2.header("WARC-Filename"),
        path.rsplit('/').next(),
        "{path}"
    );
    items[1..]
        .iter()
        .map(|(_, _, r)| r.record_id().expect("record id").to_string())
        .collect()
}

/// Issue 15 item 5: every (topic, day, cluster) writer stayed open until the run ended.
#[test]
fn at_most_max_open_packs_are_open_and_closed_packs_are_complete() {
    let (dir, store, counts) = counting_store();
    let mut packer = capped_packer(&store, 2);
    // Record ids written to each pack, in order.
    let mut written: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    let mut locs = Vec::new();
    for round in 0..4u32 {
        for cluster in 0..3u32 {
            let rec = util::page_record((round * 3 + cluster) as usize % util::PAGES.len()).0;
            let loc = packer.write(&util::key(cluster), &rec).expect("write");
            written
                .entry(loc.path.clone())
                .or_default()
                .push(rec.record_id.clone());
            assert!(
                counts.open.load(Ordering::SeqCst) <= 2,
                "round {round} cluster {cluster}"
            );
            let open = packer.open_paths();
            assert!(open.len() <= 2 && open.contains(&loc.path), "{open:?}");
            // A pack closed for room is complete before any sync_all: readable record by
            // record by another process, holding exactly what was written to it.
            for (path, ids) in written.iter().filter(|(p, _)| !open.contains(p)) {
                assert_eq!(&record_ids_on_disk(&dir, path), ids, "{path}");
            }
            locs.push((round, cluster, loc, rec));
        }
        // As the pipeline does after each batch.
        packer.sync_all().expect("sync");
    }
    // With a cap of 2 and 3 clusters taking turns, every family comes back after its pack was
    // closed: each page starts the next part of its family, e.g. the third cluster's second
    // page its part 1.
    for (round, cluster, loc, _) in &locs {
        assert_eq!(
            util::pack_name(&loc.path),
            (*cluster, *round, packer.writer().to_string()),
            "{loc:?}"
        );
    }
    assert_ne!(locs[2].2.path, locs[5].2.path);
    assert_eq!(
        packer.stats(),
        packer::PackerStats {
            opened: 12,
            rolled_over: 0,
            closed_for_room: 10,
            peak_open: 2,
            appended: 0,
        }
    );
    packer.close_all().expect("close");
    assert_eq!(counts.peak.load(Ordering::SeqCst), 2);
    assert_eq!(counts.open.load(Ordering::SeqCst), 0);
    assert_eq!(
        counts.dropped.load(Ordering::SeqCst),
        0,
        "every pack closed, none dropped"
    );
    // No record lost, none in two places, names unique.
    let listed = store.list("").expect("list");
    assert_eq!(listed.len(), 12);
    let file_names: std::collections::HashSet<&str> = listed
        .iter()
        .map(|e| e.path.rsplit('/').next().expect("file name"))
        .collect();
    assert_eq!(file_names.len(), listed.len());
    let mut total = 0;
    for entry in &listed {
        let ids = record_ids_on_disk(&dir, &entry.path);
        assert_eq!(Some(&ids), written.get(&entry.path), "{}", entry.path);
        total += ids.len();
    }
    assert_eq!(total, locs.len());
    for (_, _, loc, rec) in &locs {
        let read = packer.read(loc).expect("read back");
        assert_eq!(read.record_id(), Some(rec.record_id.as_str()));
    }
}

#[test]
fn the_least_recently_written_pack_is_closed_first() {
    let (_dir, store, counts) = counting_store();
    let mut packer = capped_packer(&store, 2);
    let rec = |i| util::page_record(i).0;
    let a = packer.write(&util::key(0), &rec(0)).expect("write");
    let b = packer.write(&util::key(1), &rec(1)).expect("write");
    let a2 = packer.write(&util::key(0), &rec(2)).expect("write");
    // Cluster 1 was written least recently (not first opened): it is the one closed.
    let c = packer.write(&util::key(2), &rec(3)).expect("write");
    assert_eq!(packer.open_paths(), {
        let mut open = vec![a.path.clone(), c.path.clone()];
        open.sort();
        open
    });
    assert_eq!(a2.path, a.path);
    let a3 = packer.write(&util::key(0), &rec(0)).expect("write");
    assert_eq!(a3.path, a.path, "an open pack keeps taking records");
    assert_eq!(a3.offset, a2.offset + a2.length);
    let b2 = packer.write(&util::key(1), &rec(1)).expect("write");
    assert_ne!(b2.path, b.path, "a closed pack is never appended to");
    assert_eq!(
        util::pack_name(&b2.path),
        (1, 1, packer.writer().to_string())
    );
    assert_eq!(counts.open.load(Ordering::SeqCst), 2);
    packer.close_all().expect("close");
    assert_eq!(counts.dropped.load(Ordering::SeqCst), 0);
}

#[test]
fn a_failed_close_for_room_with_unsynced_records_fails_the_next_sync() {
    let dir = tempfile::tempdir().expect("tempdir");
    let broken = Arc::new(AtomicBool::new(false));
    let store: Arc<dyn PackStore> = flaky_store(dir.path(), &broken);
    let mut packer = capped_packer(&store, 1);
    let first = packer
        .write(&util::key(9), &util::page_record(0).0)
        .expect("write");
    broken.store(true, Ordering::SeqCst);
    // Cluster 8 needs room: closing cluster 9's pack fails.
    assert!(packer
        .write(&util::key(8), &util::page_record(1).0)
        .is_err());
    match packer.sync_all() {
        Err(Error::UnsyncedLoss { path, .. }) => assert_eq!(path, first.path),
        other => panic!("expected UnsyncedLoss, got {other:?}"),
    }
    broken.store(false, Ordering::SeqCst);
    let next = packer
        .write(&util::key(8), &util::page_record(1).0)
        .expect("write");
    assert_eq!(
        util::pack_name(&next.path),
        (8, 0, packer.writer().to_string())
    );
    packer.sync_all().expect("sync");
    packer.close_all().expect("close");
}

/// What the writers of a slow-sync store ([`slow_sync_store`]) saw.
#[derive(Default)]
struct SyncState {
    running: AtomicUsize,
    peak: AtomicUsize,
    synced: Mutex<Vec<String>>,
    fail_on: Mutex<Option<String>>,
}

struct SlowSyncWriter {
    inner: Box<dyn PackWriter>,
    path: String,
    state: Arc<SyncState>,
}

impl PackWriter for SlowSyncWriter {
    fn append(&mut self, bytes: &[u8]) -> Result<u64> {
        self.inner.append(bytes)
    }
    fn position(&self) -> u64 {
        self.inner.position()
    }
    fn sync(&mut self) -> Result<()> {
        let now = self.state.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.state.peak.fetch_max(now, Ordering::SeqCst);
        std::thread::sleep(std::time::Duration::from_millis(40));
        self.state.running.fetch_sub(1, Ordering::SeqCst);
        let fail = self
            .state
            .fail_on
            .lock()
            .expect("lock")
            .as_ref()
            .is_some_and(|f| self.path.contains(f.as_str()));
        if fail {
            return Err(disk_full());
        }
        self.inner.sync()?;
        self.state
            .synced
            .lock()
            .expect("lock")
            .push(self.path.clone());
        Ok(())
    }
    fn close(self: Box<Self>) -> Result<()> {
        self.inner.close()
    }
}

/// A store whose syncs take a while (as an fsync or an HDFS hsync does), counting how many
/// run at once, and failing for paths that contain `fail_on` while it is set.
fn slow_sync_store(dir: &std::path::Path, state: &Arc<SyncState>) -> Arc<dyn PackStore> {
    let state = Arc::clone(state);
    WrappedStore::open(
        dir,
        Box::new(move |path, inner| {
            Box::new(SlowSyncWriter {
                inner,
                path: path.to_string(),
                state: Arc::clone(&state),
            })
        }),
    )
}

#[test]
fn the_dirty_packs_of_a_batch_are_synced_side_by_side_and_a_failed_one_again_next_time() {
    let dir = tempfile::tempdir().expect("tempdir");
    let state = Arc::new(SyncState::default());
    let store = slow_sync_store(dir.path(), &state);
    let mut packer = util::packer(&store, packer::DEFAULT_MAX_PACK_BYTES);
    let write_all = |packer: &mut Packer| -> Vec<String> {
        (0..12u32)
            .map(|c| {
                packer
                    .write(&util::key(c), &util::page_record(c as usize % 3).0)
                    .expect("write")
                    .path
            })
            .collect()
    };
    let paths = write_all(&mut packer);
    let started = std::time::Instant::now();
    packer.sync_all().expect("sync");
    let took = started.elapsed();
    let mut synced = std::mem::take(&mut *state.synced.lock().expect("lock"));
    synced.sort();
    let mut want = paths.clone();
    want.sort();
    assert_eq!(synced, want, "every dirty pack synced once");
    assert!(
        state.peak.load(Ordering::SeqCst) > 1,
        "syncs ran one after another"
    );
    // 12 syncs of 40 ms one after another take 480 ms.
    assert!(took.as_millis() < 400, "sync_all took {took:?}");
    packer.sync_all().expect("nothing dirty");
    assert!(
        state.synced.lock().expect("lock").is_empty(),
        "clean packs are not synced again"
    );

    // One pack's sync fails: the error is reported, the others are synced, and the failed
    // one is still dirty, so the next sync_all syncs it (and only it).
    write_all(&mut packer);
    let failing = paths[5].clone();
    *state.fail_on.lock().expect("lock") = Some(failing.clone());
    assert!(packer.sync_all().is_err(), "a failed sync is reported");
    assert_eq!(state.synced.lock().expect("lock").len(), paths.len() - 1);
    *state.fail_on.lock().expect("lock") = None;
    state.synced.lock().expect("lock").clear();
    packer.sync_all().expect("sync after recovery");
    assert_eq!(*state.synced.lock().expect("lock"), vec![failing]);
    packer.close_all().expect("close");
}
