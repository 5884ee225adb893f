//! The HBase backend against the real test cluster (MiniDFS + HBase + Thrift 1
//! server started by `deploy/testcluster`): the TableStore conformance suite,
//! the Index facade answering exactly as on the embedded store for the real
//! news corpus, a Thrift restart in the middle of a series of puts, batches
//! over the server's message cap, and an unreachable server.
//!
//! Run with `cargo test -p harvest-indexer --features cluster`. If the cluster cannot
//! start, every test here fails (`TestCluster::shared` panics).
#![cfg(feature = "cluster")]

mod util;

use util::Lcg;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::{DateTime, TimeZone, Utc};
use indexer::{
    EmbeddedStore, Error, GroupBy, HbaseOptions, HbaseStore, Index, IndexOptions, Interval,
    PageRecord, Query, Row, Scan, StatsQuery, TableStore,
};
use testcluster::TestCluster;
use util::{news_pages, SOURCE_ANGLO, SOURCE_INTL};

const TOPICS: [&str; 5] = [
    "military",
    "economy",
    "politics",
    util::TOPIC_OTHER,
    "sports",
];
/// Buckets of the page tables in the comparison (fewer scans per query).
const BUCKETS: u8 = 8;

/// A store on the cluster's Thrift 1 server; tables are created pre-split
/// through its Thrift 2 server unless `options.admin` names another.
fn store_with(mut options: HbaseOptions) -> HbaseStore {
    let cluster = TestCluster::shared();
    options.admin.get_or_insert_with(|| cluster.thrift2.clone());
    connect(&cluster.thrift, options).expect("connect to the cluster's Thrift server")
}

/// `HbaseStore::connect`, waiting out a Thrift restart: the fault tests of this
/// process restart the shared server while other tests run, and a connect does
/// not retry (an operator's unreachable server fails at once). Calls on an open
/// store retry by themselves; only the first connection needs this.
fn connect(addr: &str, options: HbaseOptions) -> indexer::Result<HbaseStore> {
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        match HbaseStore::connect(addr, options.clone()) {
            Err(Error::Unavailable { .. }) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(200))
            }
            other => return other,
        }
    }
}

fn store() -> HbaseStore {
    store_with(HbaseOptions::default())
}

fn utc(y: i32, mo: u32, d: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, mo, d, 0, 0, 0)
        .single()
        .expect("valid date")
}

fn frequent_keywords(pages: &[PageRecord], n: usize) -> Vec<String> {
    let mut df: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for p in pages {
        for k in &p.keywords {
            *df.entry(k.as_str()).or_insert(0) += 1;
        }
    }
    let mut v: Vec<(&str, usize)> = df.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    v.into_iter().take(n).map(|(k, _)| k.to_owned()).collect()
}

fn random_query(rng: &mut Lcg, keywords: &[String], media: &[String]) -> Query {
    let (from, to) = match rng.below(3) {
        0 => (utc(2016, 1, 1), utc(2018, 1, 1)),
        1 => (utc(2016, 12, 20), utc(2017, 1, 15)),
        _ => (utc(2017, 2, 1), utc(2017, 3, 1)),
    };
    let sources: Vec<&str> = match rng.below(3) {
        0 => vec![],
        1 => vec![SOURCE_INTL],
        _ => vec![SOURCE_ANGLO],
    };
    let mut q = Query::new(&sources, from, to);
    for _ in 0..rng.below(2) {
        q.topics.push(TOPICS[rng.below(TOPICS.len())].to_owned());
    }
    if rng.below(3) == 0 {
        q.media.push(media[rng.below(media.len())].clone());
    }
    for _ in 0..rng.below(3) {
        q.keywords.push(keywords[rng.below(keywords.len())].clone());
    }
    q.min_comments = [None, Some(20), Some(60)][rng.below(3)];
    q.max_comments = [None, None, Some(150)][rng.below(3)];
    q.include_revisits = rng.below(3) == 0;
    q.limit = [None, None, Some(7)][rng.below(3)];
    q
}

#[test]
fn conformance_suite_passes_on_hbase() {
    let store = store();
    indexer::conformance::run_all(&store, "hb_conf").expect("conformance suite on HBase");
}

/// Issue 13: index batches on HBase (no cross-table atomicity): applied in
/// order, and a batch cut by a failing writer is completed from its
/// journal row.
#[test]
fn index_batches_are_completed_from_the_journal_on_hbase() {
    let tag = format!("hb_{}", Utc::now().timestamp_micros());
    indexer::conformance::batches(Arc::new(store()), &tag).expect("batches on HBase");
}

/// The crawl queue and the runs table on HBase (issue 10: the frontier test
/// also on HBase): same semantics as on the embedded store.
#[test]
fn crawl_state_survives_a_reopen_on_hbase() {
    let job = format!("hb-{}", Utc::now().timestamp_micros());
    indexer::conformance::crawl_state(Arc::new(store()), &job).expect("crawl state on HBase");
}

/// Issue 12: near-duplicate linking (the `simhash` multi-index and the
/// `stories` table) on HBase: same checks as on the embedded store.
#[test]
fn near_duplicates_are_linked_on_hbase() {
    let tag = format!("hb-{}", Utc::now().timestamp_micros());
    indexer::conformance::near_duplicates(Arc::new(store()), &tag)
        .expect("near-duplicates on HBase");
    // The multi-index table is pre-split into one region per block.
    let hb = store();
    assert_eq!(
        hb.server_regions(indexer::SIMHASH_TABLE)
            .expect("regions of simhash")
            .len(),
        indexer::neardup::BLOCKS,
        "one region per fingerprint block"
    );
}

#[test]
fn index_on_hbase_answers_like_the_embedded_store() {
    let pages = news_pages();
    let dir = tempfile::tempdir().expect("tempdir");
    let embedded = Index::new(
        Arc::new(EmbeddedStore::open(dir.path()).expect("open embedded")),
        IndexOptions { buckets: BUCKETS },
    )
    .expect("embedded index");
    let hbase = Index::new(Arc::new(store()), IndexOptions { buckets: BUCKETS }).expect("index");
    for chunk in pages.chunks(1000) {
        embedded.index_pages(chunk).expect("index embedded");
        hbase.index_pages(chunk).expect("index on hbase");
    }
    let keywords = frequent_keywords(&pages, 30);
    let mut media: Vec<String> = pages.iter().filter_map(|p| p.media.clone()).collect();
    media.sort();
    media.dedup();

    let everything = Query {
        include_revisits: true,
        ..Query::new(&[], utc(2000, 1, 1), utc(2100, 1, 1))
    };
    let all = hbase.search(&everything).expect("search all");
    assert_eq!(all.len(), util::ARTICLES, "every article indexed once");
    assert_eq!(all, embedded.search(&everything).expect("embedded search"));
    for h in all.iter().step_by(97) {
        assert_eq!(
            hbase.get_page(&h.table, &h.row_key).expect("get_page"),
            Some(h.page.clone())
        );
    }

    let mut rng = Lcg(0xbee5);
    let mut non_empty = 0;
    const QUERIES: usize = 60;
    for i in 0..QUERIES {
        let q = random_query(&mut rng, &keywords, &media);
        let got = hbase.search(&q).expect("hbase search");
        assert_eq!(
            got,
            embedded.search(&q).expect("embedded search"),
            "query #{i}: {q:?}"
        );
        if i % 6 == 0 {
            assert_eq!(
                got,
                hbase.full_scan_search(&q).expect("full scan"),
                "query #{i} vs full scan"
            );
        }
        non_empty += usize::from(!got.is_empty());
    }
    assert!(non_empty > QUERIES / 4, "only {non_empty} queries had hits");

    let intervals = [
        Interval::Day,
        Interval::Week,
        Interval::Month,
        Interval::Year,
    ];
    let groups = [
        None,
        Some(GroupBy::Topic),
        Some(GroupBy::Media),
        Some(GroupBy::Source),
    ];
    let mut counted = 0u64;
    for i in 0..16 {
        let sq = StatsQuery {
            query: random_query(&mut rng, &keywords, &media),
            interval: intervals[i % 4],
            group_by: groups[(i / 4) % 4],
            tz: if i % 2 == 0 {
                indexer::Zone::Utc
            } else {
                indexer::Zone::parse("Asia/Shanghai").expect("zone")
            },
            fill_empty: i % 3 == 0,
            bounds: Default::default(),
        };
        let got = hbase.stats(&sq).expect("hbase stats");
        assert_eq!(
            got,
            embedded.stats(&sq).expect("embedded stats"),
            "stats #{i}: {sq:?}"
        );
        counted += got.iter().map(|r| r.count).sum::<u64>();
    }
    assert!(counted > 1_000, "stats counted only {counted}");

    // Re-indexing changed pages deletes their stale posting cells (single
    // cell deletes through Thrift) on HBase as in the embedded store.
    let changed: Vec<_> = pages
        .iter()
        .filter(|p| p.keywords.len() >= 2)
        .step_by(11)
        .map(|p| {
            let mut c = p.clone();
            c.topic = "economy".into();
            c.keywords = vec![p.keywords[0].clone(), "tariffs".into()];
            c.media = None;
            c.comments = Some(4242);
            c
        })
        .collect();
    assert!(changed.len() > 100);
    embedded.index_pages(&changed).expect("re-index embedded");
    hbase.index_pages(&changed).expect("re-index on hbase");
    let dropped = &pages
        .iter()
        .find(|p| p.url == changed[0].url)
        .expect("original")
        .keywords[1];
    for kw in ["tariffs", dropped.as_str(), keywords[0].as_str()] {
        let q = Query {
            keywords: vec![kw.to_owned()],
            ..Query::new(&[], utc(2000, 1, 1), utc(2100, 1, 1))
        };
        for group in [Some(GroupBy::Topic), Some(GroupBy::Media)] {
            let sq = StatsQuery::new(q.clone(), Interval::Month, group);
            let got = hbase.stats(&sq).expect("hbase stats");
            assert_eq!(got, embedded.stats(&sq).expect("embedded stats"), "{kw}");
            assert_eq!(got, hbase.full_scan_stats(&sq).expect("full scan"), "{kw}");
        }
    }
    let tariffs = Query {
        keywords: vec!["tariffs".into()],
        min_comments: Some(4242),
        ..Query::new(&[], utc(2000, 1, 1), utc(2100, 1, 1))
    };
    let hits = hbase.search(&tariffs).expect("search");
    let want = changed.iter().filter(|c| !c.revisit).count();
    assert!(
        hits.len() >= want,
        "{} tariffs pages, {want} re-indexed",
        hits.len()
    );
    assert_eq!(hits, embedded.search(&tariffs).expect("embedded"));
    assert_eq!(hits, hbase.full_scan_search(&tariffs).expect("full scan"));
}

#[test]
fn acknowledged_puts_survive_a_thrift_restart() {
    const TABLE: &str = "fault_restart";
    let cluster = TestCluster::shared();
    let store = Arc::new(store());
    store.create_table(TABLE, &["a"], 4).expect("create");
    let titles: Vec<String> = news_pages().into_iter().map(|p| p.title).collect();
    let acked = Arc::new(Mutex::new(Vec::<u32>::new()));
    let failed = Arc::new(AtomicUsize::new(0));
    let count = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (store, acked, failed, count, stop, titles) = (
            Arc::clone(&store),
            Arc::clone(&acked),
            Arc::clone(&failed),
            Arc::clone(&count),
            Arc::clone(&stop),
            titles.clone(),
        );
        std::thread::spawn(move || {
            let mut i = 0u32;
            while !stop.load(Ordering::SeqCst) {
                let row = Row::new([&[(i % 4) as u8][..], &i.to_be_bytes()].concat()).with(
                    "a",
                    b"title".to_vec(),
                    titles[i as usize % titles.len()].clone().into_bytes(),
                );
                match store.put(TABLE, &[row]) {
                    Ok(()) => acked.lock().expect("lock").push(i),
                    Err(_) => {
                        failed.fetch_add(1, Ordering::SeqCst);
                    }
                }
                count.fetch_add(1, Ordering::SeqCst);
                i += 1;
            }
        })
    };
    let wait_for = |n: usize| {
        let deadline = Instant::now() + Duration::from_secs(120);
        while count.load(Ordering::SeqCst) < n && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
    };
    wait_for(100);
    let before = count.load(Ordering::SeqCst);
    cluster.restart_thrift().expect("restart thrift");
    wait_for(before + 200);
    stop.store(true, Ordering::SeqCst);
    writer.join().expect("writer thread");

    let acked = acked.lock().expect("lock").clone();
    assert!(acked.len() >= 300, "writer made progress: {}", acked.len());
    assert_eq!(
        failed.load(Ordering::SeqCst),
        0,
        "retries covered the restart"
    );
    assert!(
        store.stats().retries > 0,
        "the restart was noticed and retried"
    );
    let rows = store.scan(TABLE, &Scan::default()).expect("scan");
    let mut stored: Vec<u32> = rows
        .iter()
        .map(|r| u32::from_be_bytes(r.key[1..5].try_into().expect("4-byte id")))
        .collect();
    stored.sort_unstable();
    assert_eq!(
        stored, acked,
        "every acknowledged put is stored, nothing else"
    );
    for r in &rows {
        let i = u32::from_be_bytes(r.key[1..5].try_into().expect("4-byte id"));
        assert_eq!(
            r.cell("a", b"title"),
            Some(titles[i as usize % titles.len()].as_bytes())
        );
    }
}

#[test]
fn a_batch_over_the_message_cap_is_split() {
    const TABLE: &str = "fault_oversize";
    const ROWS: usize = 120;
    const VALUE: usize = 1 << 20;
    let store = store();
    store.create_table(TABLE, &["a"], 4).expect("create");
    // ~120 MiB of real text in one put: over the server's ~100 MB frame cap.
    let corpus: String = news_pages()
        .iter()
        .map(|p| p.title.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let rows: Vec<Row> = (0..ROWS)
        .map(|i| {
            let text: Vec<u8> = corpus.bytes().cycle().skip(i * 7919).take(VALUE).collect();
            Row::new(vec![(i % 4) as u8, i as u8]).with("a", b"text".to_vec(), text)
        })
        .collect();
    let total: usize = rows.iter().map(|r| r.cells[0].value.len()).sum();
    assert!(total > 100_000_000);
    let calls_before = store.stats().mutate_calls;
    store
        .put(TABLE, &rows)
        .expect("oversize put is split and stored");
    let calls = store.stats().mutate_calls - calls_before;
    let bound = HbaseOptions::default().max_batch_bytes;
    assert!(
        calls as usize >= total / bound,
        "split into {calls} calls of at most {bound} bytes"
    );
    for bucket in 0..4u8 {
        let got = store.scan(TABLE, &Scan::prefix(&[bucket])).expect("scan");
        assert_eq!(got.len(), ROWS / 4);
        for r in got {
            let i = usize::from(r.key[1]);
            assert_eq!(
                r.cell("a", b"text"),
                Some(rows[i].cells[0].value.as_slice())
            );
        }
    }

    // A small byte bound splits an ordinary batch into many calls too.
    let small = store_with(HbaseOptions {
        max_batch_bytes: 16 << 10,
        ..HbaseOptions::default()
    });
    let rows: Vec<Row> = news_pages()
        .into_iter()
        .take(2000)
        .enumerate()
        .map(|(i, p)| {
            Row::new([&[4u8][..], &(i as u32).to_be_bytes()].concat()).with(
                "a",
                b"url".to_vec(),
                p.url.into_bytes(),
            )
        })
        .collect();
    small.put(TABLE, &rows).expect("put");
    assert!(small.stats().mutate_calls > 5);
    assert_eq!(
        small.scan(TABLE, &Scan::prefix(&[4])).expect("scan").len(),
        2000
    );
}

#[test]
fn tables_are_pre_split_into_one_region_per_bucket() {
    let store = store();
    let table = "presplit_2026";
    store.drop_table(table).expect("drop leftovers");
    store
        .create_table(table, &["a", "i"], BUCKETS)
        .expect("create");
    assert_eq!(
        store.server_regions(table).expect("regions"),
        indexer::bucket_regions(BUCKETS),
        "HBase regions = salt buckets"
    );
    assert!(store.is_pre_split(table).expect("check"));
    // Idempotent, and a different bucket count is refused.
    store
        .create_table(table, &["a", "i"], BUCKETS)
        .expect("again");
    let err = store
        .create_table(table, &["a", "i"], BUCKETS * 2)
        .expect_err("other layout");
    assert!(matches!(err, Error::TableMismatch { .. }), "{err}");
    let (kind, cluster_id) = store.server_info().expect("server info");
    assert_eq!(kind, indexer::ServerType::One);
    assert!(!cluster_id.is_empty());
    // Not dropped: other tests of this process list and scan every table.
}

#[test]
fn without_a_thrift2_admin_tables_have_one_region() {
    let cluster = TestCluster::shared();
    let store = connect(&cluster.thrift, HbaseOptions::default()).expect("connect");
    assert_eq!(store.admin_addr(), None);
    let table = "onesplit_2026";
    store.drop_table(table).expect("drop leftovers");
    store
        .create_table(table, &["a", "i"], BUCKETS)
        .expect("create");
    assert_eq!(store.server_regions(table).expect("regions").len(), 1);
    assert!(!store.is_pre_split(table).expect("check"));
    // Queries still run per logical bucket.
    assert_eq!(
        store.regions(table).expect("buckets").len(),
        usize::from(BUCKETS)
    );
    // Not dropped: other tests of this process list and scan every table.
}

#[test]
fn a_thrift1_server_given_as_admin_is_refused_clearly() {
    let cluster = TestCluster::shared();
    let options = HbaseOptions {
        admin: Some(cluster.thrift.clone()),
        ..HbaseOptions::default()
    };
    let err = connect(&cluster.thrift, options).expect_err("thrift 1 is not an admin");
    assert!(err.to_string().contains("Thrift 2"), "{err}");
}

#[test]
fn unreachable_thrift_server_fails_fast_with_a_clear_error() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port();
    let addr = format!("127.0.0.1:{port}");
    let started = Instant::now();
    let err = HbaseStore::connect(&addr, HbaseOptions::default()).expect_err("nothing listens");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(matches!(err, Error::Unavailable { .. }), "{err:?}");
    assert!(err.to_string().contains(&addr), "{err}");
}

#[test]
fn scans_resume_across_a_thrift_restart() {
    const TABLE: &str = "fault_scan_restart";
    const ROWS: usize = 3_000;
    let cluster = TestCluster::shared();
    let store = Arc::new(store_with(HbaseOptions {
        scan_caching: 50,
        ..HbaseOptions::default()
    }));
    store.create_table(TABLE, &["a"], 4).expect("create");
    let rows: Vec<Row> = news_pages()
        .into_iter()
        .take(ROWS)
        .enumerate()
        .map(|(i, p)| {
            Row::new([&[(i % 4) as u8][..], &(i as u32).to_be_bytes()].concat()).with(
                "a",
                b"title".to_vec(),
                p.title.into_bytes(),
            )
        })
        .collect();
    store.put(TABLE, &rows).expect("put");
    let scans = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let reader = {
        let (store, scans, stop) = (Arc::clone(&store), Arc::clone(&scans), Arc::clone(&stop));
        std::thread::spawn(move || -> Vec<String> {
            let mut problems = Vec::new();
            while !stop.load(Ordering::SeqCst) {
                match store.scan(TABLE, &Scan::default()) {
                    Ok(got) if got.len() == ROWS && got.windows(2).all(|w| w[0].key < w[1].key) => {
                    }
                    Ok(got) => problems.push(format!("scan returned {} rows", got.len())),
                    Err(e) => problems.push(e.to_string()),
                }
                scans.fetch_add(1, Ordering::SeqCst);
            }
            problems
        })
    };
    let wait_for = |n: usize| {
        let deadline = Instant::now() + Duration::from_secs(120);
        while scans.load(Ordering::SeqCst) < n && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
    };
    wait_for(2);
    let before = scans.load(Ordering::SeqCst);
    cluster.restart_thrift().expect("restart thrift");
    wait_for(before + 3);
    stop.store(true, Ordering::SeqCst);
    let problems = reader.join().expect("reader thread");
    assert!(
        problems.is_empty(),
        "scans across the restart: {problems:?}"
    );
    assert!(scans.load(Ordering::SeqCst) >= before + 3);
    assert!(store.stats().retries > 0, "the restart interrupted a scan");
}

#[test]
fn client_side_only_filters_give_the_same_answers() {
    let store = store_with(HbaseOptions {
        server_side_filters: false,
        ..HbaseOptions::default()
    });
    indexer::conformance::scan_filters(&store, "hb_srvfilt").expect("filters on the client");
    indexer::conformance::binary_keys(&store, "hb_srvbin").expect("binary keys");
}
