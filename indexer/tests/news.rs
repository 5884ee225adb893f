//! The query engine against the brute-force reference on the real news corpus.

mod util;

use util::Lcg;

use std::collections::HashMap;
use std::sync::Arc;

use chrono::{DateTime, Duration, TimeZone, Utc};
use indexer::{
    DigestEntry, EmbeddedStore, GroupBy, Index, IndexOptions, Interval, PackLocation, PageHit,
    PageRecord, Query, Scan, StatsQuery, TableStore, UrlState, Zone,
};
use util::{news_pages, SOURCE_ANGLO, SOURCE_INTL};

const TOPICS: [&str; 5] = [
    "military",
    "economy",
    "politics",
    util::TOPIC_OTHER,
    "sports",
];

struct Fixture {
    _dir: tempfile::TempDir,
    index: Index,
    pages: Vec<PageRecord>,
}

fn fixture(buckets: u8) -> Fixture {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = EmbeddedStore::open(dir.path()).expect("open store");
    let index = Index::new(Arc::new(store), IndexOptions { buckets }).expect("index");
    let pages = news_pages();
    for chunk in pages.chunks(1000) {
        index.index_pages(chunk).expect("index pages");
    }
    Fixture {
        _dir: dir,
        index,
        pages,
    }
}

fn utc(y: i32, mo: u32, d: u32, h: u32, mi: u32, s: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, mo, d, h, mi, s)
        .single()
        .expect("valid time")
}

/// The 40 keywords used by most pages.
fn frequent_keywords(pages: &[PageRecord]) -> Vec<String> {
    let mut df: HashMap<&str, usize> = HashMap::new();
    for p in pages {
        for k in &p.keywords {
            *df.entry(k.as_str()).or_insert(0) += 1;
        }
    }
    let mut v: Vec<(&str, usize)> = df.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    v.into_iter().take(40).map(|(k, _)| k.to_owned()).collect()
}

fn random_query(rng: &mut Lcg, keywords: &[String], (media, outlets): &Names) -> Query {
    let base = utc(2016, 12, 1, 0, 0, 0);
    let (from, to) = match rng.below(4) {
        0 => (utc(2016, 1, 1, 0, 0, 0), utc(2018, 1, 1, 0, 0, 0)),
        1 => (utc(2016, 12, 25, 13, 0, 0), utc(2017, 1, 10, 7, 30, 15)),
        2 => (utc(2017, 2, 1, 0, 0, 0), utc(2017, 3, 1, 0, 0, 0)),
        _ => {
            let f = base + Duration::seconds(rng.below(120 * 86_400) as i64);
            (f, f + Duration::seconds(rng.below(40 * 86_400) as i64 + 1))
        }
    };
    let sources: Vec<&str> = match rng.below(4) {
        0 => vec![],
        1 => vec![SOURCE_INTL],
        2 => vec![SOURCE_ANGLO],
        _ => vec![SOURCE_INTL, SOURCE_ANGLO],
    };
    let mut q = Query::new(&sources, from, to);
    for _ in 0..rng.below(3) {
        q.topics.push((*rng.pick(&TOPICS)).to_owned());
    }
    if rng.below(3) == 0 {
        for _ in 0..1 + rng.below(2) {
            q.media.push(rng.pick(media).clone());
        }
    }
    for _ in 0..rng.below(3) {
        let k = rng.pick(keywords).clone();
        // keywords are case-insensitive
        q.keywords.push(if rng.below(2) == 0 {
            k.to_uppercase()
        } else {
            k
        });
    }
    q.min_comments = *rng.pick(&[None, None, Some(20), Some(60)]);
    q.max_comments = *rng.pick(&[None, None, Some(50), Some(150)]);
    q.include_revisits = rng.below(3) == 0;
    q.limit = *rng.pick(&[None, None, Some(1), Some(7), Some(50)]);
    if rng.below(3) == 0 {
        for _ in 0..1 + rng.below(3) {
            q.keywords_any.push(rng.pick(keywords).clone());
        }
    }
    q.collapse_near_duplicates = rng.below(3) == 0;
    // Every fifth query also asks for outlets; drawn from a second stream, so
    // the other conditions stay those of the queries before the outlet filter.
    let mut other = Lcg(rng.0.rotate_left(29) ^ 0x9e37_79b9);
    if other.below(5) == 0 {
        for _ in 0..1 + other.below(3) {
            q.outlets.push(other.pick(outlets).clone());
        }
    }
    q
}

/// The media and the outlets (named or hosts) of the pages.
type Names = (Vec<String>, Vec<String>);

fn media_hosts(pages: &[PageRecord]) -> Names {
    let mut m: Vec<String> = pages.iter().filter_map(|p| p.media.clone()).collect();
    m.sort();
    m.dedup();
    let mut o: Vec<String> = pages
        .iter()
        .map(|p| p.outlet_or_host().to_string())
        .collect();
    o.sort();
    o.dedup();
    (m, o)
}

#[test]
fn corpus_is_fully_indexed_and_every_page_reads_back() {
    let f = fixture(16);
    let everything = Query {
        include_revisits: true,
        ..Query::new(&[], utc(2000, 1, 1, 0, 0, 0), utc(2100, 1, 1, 0, 0, 0))
    };
    let hits = f.index.search(&everything).expect("search");
    assert_eq!(hits.len(), util::ARTICLES, "every article is one data row");
    let tables = f.index.store().list_tables().expect("tables");
    for t in [
        "anglo_news_2016",
        "anglo_news_2017",
        "intl_news_2016",
        "intl_news_2017",
        "urls",
        "digests",
    ] {
        assert!(tables.iter().any(|x| x == t), "table {t} exists");
    }
    let by_url: HashMap<&str, &PageRecord> = f.pages.iter().map(|p| (p.url.as_str(), p)).collect();
    for h in &hits {
        assert_eq!(
            Some(&&h.page),
            by_url.get(h.page.url.as_str()),
            "page round-trips"
        );
        let again = f.index.get_page(&h.table, &h.row_key).expect("get_page");
        assert_eq!(again.as_ref(), Some(&h.page));
    }
    assert!(
        hits.windows(2)
            .all(|w| w[0].page.key_time() <= w[1].page.key_time()),
        "time order"
    );
    let revisits = f.pages.iter().filter(|p| p.revisit).count();
    assert!(revisits > 0, "the corpus has repeated texts");
    let no_revisits = Query {
        include_revisits: false,
        ..everything
    };
    assert_eq!(
        f.index.search(&no_revisits).expect("search").len(),
        util::ARTICLES - revisits
    );
}

#[test]
fn search_equals_full_scan_on_many_query_shapes() {
    let f = fixture(16);
    let keywords = frequent_keywords(&f.pages);
    let media = media_hosts(&f.pages);
    let mut rng = Lcg(0x5eed);
    let mut non_empty = 0;
    let (mut by_outlet, mut plain) = (0, 0);
    for i in 0..QUERIES {
        let q = random_query(&mut rng, &keywords, &media);
        let fast = f.index.search(&q).expect("search");
        by_outlet += usize::from(!q.outlets.is_empty() && !fast.is_empty());
        // full_scan_search reads every data row; it is slow in debug builds, so
        // every 4th query uses it and all use the in-memory reference.
        if i % 4 == 0 {
            let slow = f.index.full_scan_search(&q).expect("full scan");
            assert_eq!(fast, slow, "query #{i} differs from full scan: {q:?}");
        }
        assert_eq!(
            fast,
            direct_search(&f, &q),
            "query #{i} differs from the source records: {q:?}"
        );
        // The outlet filter is counted apart: it selects a few pages.
        plain += usize::from(q.outlets.is_empty());
        if !fast.is_empty() && q.outlets.is_empty() {
            non_empty += 1;
        }
    }
    assert!(
        non_empty > plain / 3,
        "only {non_empty} of {plain} queries had hits; the test would prove little"
    );
    assert!(by_outlet > 5, "only {by_outlet} outlet queries had hits");
    eprintln!(
        "{non_empty} of {plain} queries had hits, {by_outlet} of {} with an outlet condition",
        QUERIES - plain
    );
}

const QUERIES: usize = 320;

/// The query answered from the original records, without the store.
fn direct_search(f: &Fixture, q: &Query) -> Vec<PageHit> {
    let nq = q.normalised().expect("normalise");
    let mut hits: Vec<PageHit> = f
        .pages
        .iter()
        .filter(|p| nq.matches(p))
        .map(|p| {
            let key = f.index.page_key(p).expect("page key");
            PageHit {
                table: key.table,
                row_key: key.row_key,
                page: p.clone(),
                score: None,
            }
        })
        .collect();
    hits.sort_by_key(|h| (h.page.key_time(), h.row_key[2..].to_vec(), h.table.clone()));
    if let Some(l) = nq.limit {
        hits.truncate(l);
    }
    hits
}

#[test]
fn stats_equal_full_scan_for_every_interval_and_grouping() {
    let f = fixture(8);
    let keywords = frequent_keywords(&f.pages);
    let media = media_hosts(&f.pages);
    let mut rng = Lcg(42);
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
        Some(GroupBy::Outlet),
    ];
    let zones = [
        Zone::Utc,
        Zone::parse("Asia/Shanghai").expect("zone"),
        Zone::parse("America/New_York").expect("zone"),
        Zone::parse("-03:30").expect("zone"),
    ];
    let mut total_counted = 0u64;
    for i in 0..80 {
        let query = random_query(&mut rng, &keywords, &media);
        let mut sq = StatsQuery::new(query, intervals[i % 4], groups[(i / 4) % 5]);
        sq.tz = *rng.pick(&zones);
        sq.fill_empty = rng.below(2) == 0;
        let fast = f.index.stats(&sq).expect("stats");
        let slow = f.index.full_scan_stats(&sq).expect("full scan stats");
        assert_eq!(fast, slow, "stats #{i} differ: {sq:?}");
        assert!(
            fast.windows(2)
                .all(|w| (&w[0].bucket, &w[0].group) < (&w[1].bucket, &w[1].group)),
            "sorted"
        );
        total_counted += fast.iter().map(|r| r.count).sum::<u64>();
    }
    assert!(
        total_counted > 4_000,
        "stats counted too little ({total_counted}) to mean anything"
    );
}

#[test]
fn daily_counts_match_the_corpus() {
    let f = fixture(16);
    let sq = StatsQuery::new(
        Query::new(&[], utc(2017, 3, 1, 0, 0, 0), utc(2017, 4, 1, 0, 0, 0)),
        Interval::Day,
        None,
    );
    let rows = f.index.stats(&sq).expect("stats");
    let mut want: HashMap<String, u64> = HashMap::new();
    for p in f
        .pages
        .iter()
        .filter(|p| !p.revisit && p.key_time() >= sq.query.from && p.key_time() < sq.query.to)
    {
        *want
            .entry(p.key_time().format("%Y-%m-%d").to_string())
            .or_insert(0) += 1;
    }
    let got: HashMap<String, u64> = rows.into_iter().map(|r| (r.bucket, r.count)).collect();
    assert_eq!(got, want);
    assert!(got.len() >= 20, "March 2017 has articles on most days");
}

#[test]
fn reindexing_replaces_the_row_and_its_stale_index_rows() {
    let f = fixture(4);
    let original = f
        .pages
        .iter()
        .find(|p| {
            p.topic == "military" && p.published.is_some() && !p.revisit && p.keywords.len() >= 2
        })
        .expect("a military article")
        .clone();
    let mut changed = original.clone();
    changed.topic = "economy".into();
    changed.keywords = vec!["tariffs".into(), original.keywords[0].clone()];
    changed.media = None;
    f.index
        .index_pages(std::slice::from_ref(&changed))
        .expect("re-index");

    let key = f.index.page_key(&changed).expect("key");
    assert_eq!(
        f.index.get_page(&key.table, &key.row_key).expect("get"),
        Some(changed.clone())
    );
    let day = original.key_time();
    let window = |topic: &str, kw: &str| Query {
        topics: vec![topic.into()],
        keywords: vec![kw.into()],
        ..Query::new(&[], day, day + Duration::seconds(1))
    };
    let urls = |q: &Query| -> Vec<String> {
        f.index
            .search(q)
            .expect("search")
            .into_iter()
            .map(|h| h.page.url)
            .collect()
    };
    assert!(
        !urls(&window("military", &original.keywords[0])).contains(&original.url),
        "old topic row removed"
    );
    assert!(
        urls(&window("economy", "tariffs")).contains(&original.url),
        "new index rows written"
    );
    let dropped_kw = &original.keywords[1];
    assert!(
        !urls(&window("economy", dropped_kw)).contains(&original.url),
        "dropped keyword row removed"
    );
    let media_q = Query {
        media: vec![original.media.clone().expect("media")],
        ..Query::new(&[], day, day + Duration::seconds(1))
    };
    assert!(
        !urls(&media_q).contains(&original.url),
        "media index row removed"
    );
    // no posting cell in the table still points at the page's suffix, other
    // than the new ones (and no per-page index rows: a postings table)
    let suffix = &key.row_key[2..];
    let store = f.index.store();
    let cells = store
        .scan(&key.table, &Scan::prefix(&[key.row_key[0], 0x02]))
        .expect("scan")
        .into_iter()
        .flat_map(|r| r.cells)
        .filter(|c| c.qualifier == suffix)
        .count();
    assert_eq!(cells, 1 + 2, "one topic cell and two keyword cells remain");
    let index_rows = store
        .scan(&key.table, &Scan::prefix(&[key.row_key[0], 0x01]))
        .expect("scan");
    assert!(index_rows.is_empty(), "no per-page index rows");
    assert_eq!(
        f.index
            .search(&Query::new(&[], day, day + Duration::seconds(1)))
            .expect("search")
            .iter()
            .filter(|h| h.page.url == original.url)
            .count(),
        1
    );
}

#[test]
fn urls_and_digests_round_trip_and_replace() {
    let f = fixture(2);
    let p = &f.pages[0];
    let key = f.index.page_key(p).expect("key");
    let mut state = UrlState {
        url: p.url.clone(),
        last_capture: p.fetched,
        captures: 1,
        first_capture: None,
        etag: Some("\"5a1f-54d\"".into()),
        last_modified: Some("Tue, 07 Feb 2017 18:02:11 GMT".into()),
        table: key.table.clone(),
        row_key: key.row_key.clone(),
        digest: Some(p.digest.clone()),
        next_fetch: Some(p.fetched + chrono::Duration::hours(6)),
        changes: 2,
        article: true,
        interval_secs: Some(6 * 3600),
    };
    assert_eq!(f.index.get_url(&p.url).expect("get"), None);
    f.index.put_urls(std::slice::from_ref(&state)).expect("put");
    let first = state.last_capture;
    state.first_capture = Some(first);
    assert_eq!(
        f.index.get_url(&p.url).expect("get"),
        Some(state.clone()),
        "a new URL's first capture is its last capture"
    );
    state.captures = 2;
    state.etag = None;
    state.first_capture = None;
    state.last_capture = first + Duration::days(3);
    f.index.put_urls(std::slice::from_ref(&state)).expect("put");
    state.first_capture = Some(first);
    assert_eq!(
        f.index.get_url(&p.url).expect("get"),
        Some(state),
        "vanished ETag is not kept, the stored first capture is"
    );

    let entry = DigestEntry {
        digest: p.digest.clone(),
        first_url: p.url.clone(),
        first_date: p.fetched,
        first_record_id: p.record_id.clone(),
        first_location: PackLocation {
            path: p.pack_path.clone(),
            offset: p.offset,
            length: p.length,
        },
        captures: 3,
        sources: vec![SOURCE_ANGLO.into(), SOURCE_INTL.into()],
    };
    f.index
        .put_digests(std::slice::from_ref(&entry))
        .expect("put");
    assert_eq!(f.index.get_digest(&p.digest).expect("get"), Some(entry));
    assert_eq!(f.index.get_digest("sha1:NOTSTORED").expect("get"), None);
}

#[test]
fn index_survives_reopen() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pages: Vec<PageRecord> = news_pages().into_iter().take(500).collect();
    let q = Query::new(&[], utc(2016, 1, 1, 0, 0, 0), utc(2018, 1, 1, 0, 0, 0));
    let before = {
        let store = EmbeddedStore::open(dir.path()).expect("open");
        let index = Index::new(Arc::new(store), IndexOptions::default()).expect("index");
        index.index_pages(&pages).expect("index");
        index.search(&q).expect("search")
    };
    assert!(!before.is_empty());
    let store: Arc<dyn TableStore> = Arc::new(EmbeddedStore::open(dir.path()).expect("reopen"));
    let index = Index::new(store, IndexOptions::default()).expect("index");
    assert_eq!(index.search(&q).expect("search"), before);
}

#[test]
fn bad_source_names_are_rejected() {
    let f = fixture(2);
    let mut p = f.pages[1].clone();
    p.source = "Bad Source".into();
    assert!(matches!(
        f.index.index_pages(&[p]),
        Err(indexer::Error::BadTableName { .. })
    ));
    let q = Query::new(&["x-y"], utc(2017, 1, 1, 0, 0, 0), utc(2017, 2, 1, 0, 0, 0));
    assert!(f.index.search(&q).is_err());
}
