//! Durability of the embedded store: a `put` that returned `Ok` survives the
//! process being killed right after it, and the cost of each durability level.

use std::process::Command;
use std::time::Instant;

use indexer::{Durability, EmbeddedOptions, EmbeddedStore, Row, Scan, TableStore};

const CHILD_ENV: &str = "INDEXER_CRASH_CHILD_DIR";
const TABLE: &str = "crash_2017";
const ROWS: u32 = 1_000;

fn rows(n: u32) -> Vec<Row> {
    (0..n)
        .map(|i| {
            Row::new([&[(i % 16) as u8][..], &i.to_be_bytes()].concat())
                .with(
                    "a",
                    b"url".to_vec(),
                    format!("http://tass.com/world/{i}").into_bytes(),
                )
                .with("i", b"".to_vec(), vec![0])
        })
        .collect()
}

/// Runs only inside the child process: writes, then aborts without any
/// shutdown (no destructors, no final persist).
#[test]
fn crash_child() {
    let Ok(dir) = std::env::var(CHILD_ENV) else {
        return;
    };
    let store = EmbeddedStore::open(&dir).expect("open");
    store.create_table(TABLE, &["a", "i"], 16).expect("create");
    store.put(TABLE, &rows(ROWS)).expect("put");
    println!("PUT-ACKNOWLEDGED");
    std::process::abort();
}

#[test]
fn acknowledged_put_survives_process_abort() {
    let dir = tempfile::tempdir().expect("tempdir");
    let exe = std::env::current_exe().expect("test binary");
    let out = Command::new(exe)
        .args(["--exact", "crash_child", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, dir.path())
        .output()
        .expect("spawn child");
    assert!(!out.status.success(), "child must die by abort");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("PUT-ACKNOWLEDGED"),
        "child acknowledged the put before aborting: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let store = EmbeddedStore::open(dir.path()).expect("recover");
    assert_eq!(store.list_tables().expect("tables"), vec![TABLE.to_owned()]);
    let got = store.scan(TABLE, &Scan::default()).expect("scan");
    assert_eq!(got.len(), ROWS as usize, "every acknowledged row recovered");
    assert_eq!(got, {
        let mut want = rows(ROWS);
        want.sort_by(|a, b| a.key.cmp(&b.key));
        for r in &mut want {
            r.cells.sort();
        }
        want
    });
}

/// 100k rows x 2 families in one batch; prints the cost of each durability
/// level and of many small batches (each persisted).
#[test]
fn bulk_put_throughput_and_sync_cost() {
    const BULK: u32 = 100_000;
    const SMALL_BATCHES: u32 = 200;
    for durability in [Durability::Process, Durability::PowerLoss] {
        let dir = tempfile::tempdir().expect("tempdir");
        let store =
            EmbeddedStore::open_with(dir.path(), EmbeddedOptions { durability }).expect("open");
        store.create_table(TABLE, &["a", "i"], 16).expect("create");
        let data = rows(BULK);
        let t = Instant::now();
        store.put(TABLE, &data).expect("bulk put");
        let bulk = t.elapsed();
        let t = Instant::now();
        for b in 0..SMALL_BATCHES {
            let r = Row::new([&[0xfe][..], &b.to_be_bytes()].concat()).with(
                "a",
                b"n".to_vec(),
                b.to_be_bytes(),
            );
            store.put(TABLE, &[r]).expect("small put");
        }
        let small = t.elapsed();
        eprintln!(
            "durability={durability:?}: {BULK} rows x 2 families in one put: {bulk:?} ({:.0} rows/s); \
             {SMALL_BATCHES} single-row puts: {small:?} ({:?} per put)",
            f64::from(BULK) / bulk.as_secs_f64(),
            small / SMALL_BATCHES
        );
        assert_eq!(
            store.scan(TABLE, &Scan::prefix(&[3])).expect("scan").len(),
            (BULK / 16) as usize
        );
        assert!(bulk.as_secs() < 30, "bulk put took {bulk:?}");
    }
}
