//! `HdfsPackStore` against a real MiniDFS (deploy/testcluster), feature `cluster`.
//!
//! The cluster is started once per test process by `testcluster::TestCluster::shared()`;
//! if it cannot start, these tests FAIL. Every test works below its own root folder.

#![cfg(feature = "cluster")]

mod util;

use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use packer::{
    open_store, Error, HdfsOptions, HdfsPackStore, PackLocation, PackStore, Packer, RecordIter,
    Result,
};
use testcluster::TestCluster;

/// Env var that turns `dead_writer_child` into the child process of `dead_writer_*`.
const CHILD_URL_ENV: &str = "PACKER_HDFS_DEAD_WRITER_URL";
/// Line prefix the child prints for each synced record location.
const SYNCED_PREFIX: &str = "SYNCED ";

/// A fresh store root on the shared cluster: `{hdfs}/packer-tests/{name}-{uuid}`.
fn fresh_url(name: &str) -> String {
    let cluster = TestCluster::shared();
    format!(
        "{}/packer-tests/{name}-{}",
        cluster.hdfs_url.trim_end_matches('/'),
        uuid::Uuid::new_v4().simple()
    )
}

fn connect(url: &str) -> HdfsPackStore {
    HdfsPackStore::connect(url).unwrap_or_else(|e| panic!("connect {url}: {e}"))
}

#[test]
fn conformance_suite_passes_on_hdfs() {
    let store = connect(&fresh_url("conformance"));
    packer::conformance::run_all(&store);
    // Rerunnable on the same (now non-empty) store.
    packer::conformance::run_all(&store);
}

#[test]
fn open_store_selects_hdfs_for_hdfs_urls() {
    let url = fresh_url("open-store");
    let store = open_store(&url).expect("open_store hdfs://");
    let mut w = store.create("a/b.warc.gz").expect("create");
    w.append(b"HDFS").expect("append");
    w.close().expect("close");
    // A second client (as another process would) sees the file.
    let other = connect(&url);
    assert_eq!(
        other.read_range("a/b.warc.gz", 0, 4).expect("read"),
        b"HDFS"
    );
    assert_eq!(other.list("").expect("list")[0].path, "a/b.warc.gz");
}

#[test]
fn packer_end_to_end_with_rollover() {
    let url = fresh_url("packer");
    let store: Arc<dyn PackStore> = Arc::new(connect(&url));
    // Small packs: every page record is ~5-10 KB gzipped, so several parts are made.
    let mut packer = util::packer(&store, 12_000);
    let mut written: Vec<(PackLocation, Vec<u8>)> = Vec::new();
    for round in 0..3 {
        for i in 0..util::PAGES.len() {
            let (rec, body) = util::page_record(i);
            let loc = packer.write(&util::key(7), &rec).expect("write");
            written.push((loc, body));
        }
        packer.sync_all().expect("sync");
        // The writing process reads its own synced records back, open pack included.
        for (loc, body) in &written {
            let rec = packer
                .read(loc)
                .unwrap_or_else(|e| panic!("round {round}: read {loc:?}: {e}"));
            assert_eq!(&rec.http_response().expect("http").body, body);
        }
    }
    let open = packer.open_paths();
    assert_eq!(open.len(), 1);
    packer.close_all().expect("close");

    let parts = store.list("technology/2024/05/01/").expect("list");
    assert!(parts.len() >= 3, "expected rollover, got {parts:?}");
    // Another client reads everything back by location, and every part starts with warcinfo.
    let reader = Packer::new(
        Arc::new(connect(&url)) as Arc<dyn PackStore>,
        Default::default(),
    );
    for (loc, body) in &written {
        let rec = reader.read(loc).expect("read from another client");
        assert_eq!(&rec.http_response().expect("http").body, body);
    }
    let mut records = 0;
    for part in &parts {
        let data = store
            .read_range(&part.path, 0, part.len)
            .expect("read pack");
        let all: Vec<_> = RecordIter::new(&data)
            .collect::<Result<_>>()
            .expect("whole pack parses");
        assert_eq!(all[0].2.record_type(), Some("warcinfo"), "{}", part.path);
        assert!(
            part.len <= 12_000 || all.len() == 2,
            "{} too big",
            part.path
        );
        records += all.len() - 1;
    }
    assert_eq!(records, written.len());
}

#[test]
fn synced_bytes_of_an_open_pack_count_for_other_clients() {
    let url = fresh_url("visibility");
    let writer_store = connect(&url);
    let other = connect(&url);
    let mut w = writer_store.create("open.warc.gz").expect("create");
    let (rec, _) = util::page_record(0);
    let member = rec.member(None);
    w.append(&member).expect("append");
    w.sync().expect("hsync");
    let n = member.len() as u64;
    // hsync records the length at the NameNode ...
    assert_eq!(other.len("open.warc.gz").expect("len"), n);
    // ... the writing client reads its bytes ...
    assert_eq!(
        writer_store
            .read_range("open.warc.gz", 0, n)
            .expect("own read"),
        member
    );
    // ... another client cannot read the block under construction yet (hdfs-native 0.14).
    match other.read_range("open.warc.gz", 0, n) {
        Err(Error::NotYetReadable { readable, .. }) => assert_eq!(readable, 0),
        Ok(bytes) => assert_eq!(bytes, member, "if readable, then correct"),
        Err(e) => panic!("unexpected error: {e}"),
    }
    w.close().expect("close");
    assert_eq!(
        other.read_range("open.warc.gz", 0, n).expect("read"),
        member
    );
}

#[test]
fn pack_copied_out_of_hdfs_passes_warcio_check() {
    let url = fresh_url("warcio");
    let store: Arc<dyn PackStore> = Arc::new(connect(&url));
    let mut packer = util::packer(&store, packer::DEFAULT_MAX_PACK_BYTES);
    let mut locs = Vec::new();
    for i in 0..util::PAGES.len() {
        let (rec, body) = util::page_record(i);
        locs.push((packer.write(&util::key(3), &rec).expect("write"), body));
    }
    packer.close_all().expect("close");
    let path = &locs[0].0.path;
    let len = store.len(path).expect("len");
    let data = store.read_range(path, 0, len).expect("copy out");
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("copied.warc.gz");
    std::fs::write(&file, &data).expect("write copy");
    let file = file.to_str().expect("utf-8 path");

    let out = util::warcio(&["check", "-v", file]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "warcio check failed: {stdout}");
    assert_eq!(
        stdout.matches("digest pass").count(),
        util::PAGES.len() + 1, // warcinfo's block digest too
        "{stdout}"
    );
    for (loc, body) in &locs {
        let out = util::warcio(&["extract", "--payload", file, &loc.offset.to_string()]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(&out.stdout, body);
    }
}

#[test]
fn unreachable_namenode_fails_within_seconds() {
    let started = Instant::now();
    let err = open_store("hdfs://127.0.0.1:1/packs")
        .map(|_| ())
        .expect_err("no NameNode");
    assert!(matches!(err, Error::Unavailable { .. }), "got {err}");
    assert!(started.elapsed() < Duration::from_secs(15));
}

/// Child half of `dead_writer_lease_is_recovered_and_a_new_part_follows`: writes and syncs
/// three records, appends a fourth without sync, then aborts (no close, no lease release).
#[test]
fn dead_writer_child() {
    let Ok(url) = std::env::var(CHILD_URL_ENV) else {
        return; // Only meaningful as the child process.
    };
    let store: Arc<dyn PackStore> = Arc::new(connect(&url));
    let mut packer = util::packer(&store, packer::DEFAULT_MAX_PACK_BYTES);
    for i in 0..3 {
        let (rec, _) = util::page_record(i);
        let loc = packer.write(&util::key(5), &rec).expect("write");
        println!(
            "{SYNCED_PREFIX}{} {} {} {i}",
            loc.path, loc.offset, loc.length
        );
    }
    packer.sync_all().expect("sync");
    let (rec, _) = util::page_record(3);
    packer.write(&util::key(5), &rec).expect("write unsynced");
    std::process::abort();
}

#[test]
fn dead_writer_lease_is_recovered_and_a_new_part_follows() {
    let url = fresh_url("dead-writer");
    let exe = std::env::current_exe().expect("test binary");
    let out = Command::new(exe)
        .args([
            "--exact",
            "dead_writer_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_URL_ENV, &url)
        .output()
        .expect("run child");
    assert!(!out.status.success(), "the child must die by abort");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let synced: Vec<(PackLocation, usize)> = stdout
        .lines()
        .filter_map(|l| l.find(SYNCED_PREFIX).map(|i| &l[i + SYNCED_PREFIX.len()..]))
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            (
                PackLocation {
                    path: f[0].to_string(),
                    offset: f[1].parse().expect("offset"),
                    length: f[2].parse().expect("length"),
                },
                f[3].parse().expect("page index"),
            )
        })
        .collect();
    assert_eq!(
        synced.len(),
        3,
        "child output: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let pack = synced[0].0.path.clone();
    assert_eq!((util::pack_name(&pack).0, util::pack_name(&pack).1), (5, 0));

    // The NameNode counts the synced bytes while the dead writer still holds the lease.
    let store = connect(&url);
    let synced_end = synced[2].0.offset + synced[2].0.length;
    assert!(store.len(&pack).expect("len") >= synced_end);

    // A new Packer on the same store: its restart path recovers the lease of part 0 and
    // continues in part 1.
    let started = Instant::now();
    let shared: Arc<dyn PackStore> = Arc::new(store.clone());
    let mut packer = util::packer(&shared, packer::DEFAULT_MAX_PACK_BYTES);
    let (rec, body) = util::page_record(3);
    let loc = packer
        .write(&util::key(5), &rec)
        .expect("write after restart");
    assert_eq!(
        util::pack_name(&loc.path),
        (5, 1, packer.writer().to_string())
    );
    packer.close_all().expect("close");
    eprintln!("restart with lease recovery took {:?}", started.elapsed());
    assert!(
        started.elapsed() < store.options().lease_recovery_timeout,
        "recovery took {:?}",
        started.elapsed()
    );
    assert!(
        store.recover_lease(&pack).expect("already recovered"),
        "part 0 must be closed now"
    );
    assert_eq!(
        packer
            .read(&loc)
            .expect("new part")
            .http_response()
            .expect("http")
            .body,
        body
    );

    // Every synced record of the dead writer's part is readable by location ...
    for (loc, page) in &synced {
        let rec = packer.read(loc).expect("synced record after recovery");
        assert_eq!(
            rec.http_response().expect("http").body,
            util::fixture(util::PAGES[*page].0)
        );
    }
    // ... and the part parses up to them (an unsynced tail may or may not be there, whole).
    let len = store.len(&pack).expect("len");
    assert!(len >= synced_end);
    let data = store.read_range(&pack, 0, len).expect("read part");
    let records: Vec<_> = RecordIter::new(&data).map_while(|r| r.ok()).collect();
    assert!(records.len() >= 4, "warcinfo + 3 synced records");
}

/// A fresh root written through a store of 1 MiB blocks (MiniDFS's minimum), a second
/// client of the same root (another process's view), and the fixture pages to write.
fn small_blocks(name: &str) -> (HdfsPackStore, HdfsPackStore, Vec<Vec<u8>>) {
    let url = fresh_url(name);
    let options = HdfsOptions {
        block_size: 1 << 20,
        write_buffer_bytes: 64 << 10,
        ..HdfsOptions::default()
    };
    let store = HdfsPackStore::connect_with(&url, options).expect("connect");
    let other = connect(&url);
    let pages = util::PAGES.iter().map(|(n, _)| util::fixture(n)).collect();
    (store, other, pages)
}

#[test]
fn reads_across_block_boundaries_of_an_open_pack() {
    // ~3 MiB of pages span several blocks.
    let (store, other, pages) = small_blocks("blocks");
    let mut w = store.create("big.warc").expect("create");
    let mut chunks: Vec<(u64, usize)> = Vec::new(); // (offset, page index)
    while w.position() < 3 << 20 {
        let i = chunks.len() % pages.len();
        chunks.push((w.append(&pages[i]).expect("append"), i));
    }
    w.sync().expect("hsync");
    let total = w.position();
    assert_eq!(other.len("big.warc").expect("len"), total);
    let mut other_ok = 0;
    let mut other_pending = 0;
    for (offset, i) in &chunks {
        let len = pages[*i].len() as u64;
        let own = store
            .read_range("big.warc", *offset, len)
            .expect("own read");
        assert_eq!(&own, &pages[*i], "own read at {offset}");
        match other.read_range("big.warc", *offset, len) {
            Ok(bytes) => {
                assert_eq!(&bytes, &pages[*i], "other read at {offset}");
                other_ok += 1;
            }
            Err(Error::NotYetReadable { readable, .. }) => {
                assert!(offset + len > readable && readable % (1 << 20) == 0);
                other_pending += 1;
            }
            Err(e) => panic!("other read at {offset}: {e}"),
        }
    }
    // Completed blocks are readable by everyone, the block under construction only here.
    assert!(
        other_ok > 0 && other_pending > 0,
        "{other_ok} / {other_pending}"
    );
    w.close().expect("close");
    let all = other.read_range("big.warc", 0, total).expect("read all");
    for (offset, i) in &chunks {
        let start = *offset as usize;
        assert_eq!(&all[start..start + pages[*i].len()], &pages[*i][..]);
    }
}

/// A pack appended to by a later writer (a second run of the day): the new bytes go into new
/// blocks after the old last one, which was half full. The appending writer reads what it
/// wrote while it writes (across its own block boundaries, which no longer fall on multiples
/// of the block size), the old bytes stay readable by everyone throughout, and after close
/// the whole file reads back. A second writer's append meanwhile is `Busy`.
#[test]
fn appending_writer_writes_new_blocks_after_a_partial_one() {
    let (store, other, pages) = small_blocks("append-blocks");
    let mut chunks: Vec<(u64, usize)> = Vec::new(); // (offset, page index)
    let mut w = store.create("grown.warc").expect("create");
    while w.position() < (1 << 20) + (1 << 19) {
        let i = chunks.len() % pages.len();
        chunks.push((w.append(&pages[i]).expect("append"), i));
    }
    w.close().expect("close");
    let first = chunks.len();
    let before = store.len("grown.warc").expect("len");

    let mut w = store.append("grown.warc").expect("append");
    assert_eq!(w.position(), before);
    assert!(
        matches!(other.append("grown.warc"), Err(Error::Busy { .. })),
        "a second appender"
    );
    while w.position() < before + (5 << 19) {
        let i = chunks.len() % pages.len();
        chunks.push((w.append(&pages[i]).expect("append"), i));
        if chunks.len().is_multiple_of(7) {
            w.sync().expect("hsync");
        }
    }
    w.sync().expect("hsync");
    for (offset, i) in &chunks {
        let len = pages[*i].len() as u64;
        let own = store
            .read_range("grown.warc", *offset, len)
            .expect("own read");
        assert_eq!(&own, &pages[*i], "own read at {offset}");
    }
    for (offset, i) in &chunks[..first] {
        let len = pages[*i].len() as u64;
        let theirs = other
            .read_range("grown.warc", *offset, len)
            .expect("old bytes");
        assert_eq!(
            &theirs, &pages[*i],
            "other read of the old bytes at {offset}"
        );
    }
    let total = w.position();
    w.close().expect("close");
    assert_eq!(other.len("grown.warc").expect("len"), total);
    let all = other.read_range("grown.warc", 0, total).expect("read all");
    for (offset, i) in &chunks {
        let start = *offset as usize;
        assert_eq!(&all[start..start + pages[*i].len()], &pages[*i][..]);
    }
}
