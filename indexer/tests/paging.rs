//! Paged search, sort orders and cursors, page ids, lists and the clusters
//! table, against the real news corpus (see `util`).

mod util;

use util::Lcg;

use std::collections::HashMap;
use std::sync::Arc;

use chrono::{DateTime, Duration, NaiveDate, TimeZone, Utc};
use indexer::{
    Bounds, ClusterRow, Cursor, EmbeddedStore, Error, GroupBy, Index, IndexOptions, Interval,
    PageHit, PageRecord, Query, Scan, Sort, StatsQuery, UrlState, Zone,
};
use util::{news_pages, SOURCE_ANGLO, SOURCE_INTL};

/// Most pages followed per query in the paging test.
const MAX_PAGES: usize = 25;

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

fn utc(y: i32, mo: u32, d: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, mo, d, 0, 0, 0)
        .single()
        .expect("valid time")
}

fn frequent_keywords(pages: &[PageRecord]) -> Vec<String> {
    let mut df: HashMap<&str, usize> = HashMap::new();
    for p in pages {
        for k in &p.keywords {
            *df.entry(k.as_str()).or_insert(0) += 1;
        }
    }
    let mut v: Vec<(&str, usize)> = df.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    v.into_iter().take(30).map(|(k, _)| k.to_owned()).collect()
}

fn random_query(rng: &mut Lcg, keywords: &[String], media: &[String]) -> Query {
    let (from, to) = match rng.below(3) {
        0 => (utc(2016, 1, 1), utc(2018, 1, 1)),
        1 => (utc(2017, 2, 1), utc(2017, 3, 1)),
        _ => {
            let f = utc(2016, 12, 1) + Duration::seconds(rng.below(100 * 86_400) as i64);
            (f, f + Duration::seconds(rng.below(30 * 86_400) as i64 + 1))
        }
    };
    let sources: Vec<&str> = match rng.below(3) {
        0 => vec![],
        1 => vec![SOURCE_INTL],
        _ => vec![SOURCE_ANGLO],
    };
    let mut q = Query::new(&sources, from, to);
    if rng.below(2) == 0 {
        q.topics
            .push((*rng.pick(&["military", "economy", "politics", "society"])).to_owned());
    }
    if rng.below(4) == 0 {
        q.media.push(rng.pick(media).clone());
    }
    if rng.below(3) == 0 {
        q.keywords.push(rng.pick(keywords).clone());
    }
    if rng.below(2) == 0 {
        for _ in 0..1 + rng.below(3) {
            q.keywords_any.push(rng.pick(keywords).to_uppercase());
        }
    }
    q.min_comments = *rng.pick(&[None, None, Some(30)]);
    q.max_comments = *rng.pick(&[None, None, Some(120)]);
    q.include_revisits = rng.below(3) == 0;
    q.collapse_near_duplicates = rng.below(2) == 0;
    q.sort = *rng.pick(&[
        Sort::TimeDesc,
        Sort::TimeAsc,
        Sort::Comments,
        Sort::Relevance,
    ]);
    q.limit = *rng.pick(&[None, Some(1), Some(9), Some(60)]);
    q
}

/// (primary, key time, url hash, table): the documented order of a page.
type SortKey = (i64, i64, Vec<u8>, String);

/// The full answer of a query in its sort order, from the source records.
fn direct_sorted(f: &Fixture, q: &Query) -> Vec<PageHit> {
    let nq = q.normalised().expect("normalise");
    let mut hits: Vec<(SortKey, PageHit)> = f
        .pages
        .iter()
        .filter(|p| nq.matches(p))
        .map(|p| {
            let key = f.index.page_key(p).expect("page key");
            let primary = match nq.sort {
                Sort::Comments => p.comments.map_or(-1, |c| c as i64),
                Sort::Relevance => i64::from(nq.relevance(p)),
                _ => 0,
            };
            let k = (
                primary,
                p.key_time().timestamp(),
                key.row_key[7..15].to_vec(),
                key.table.clone(),
            );
            (
                k,
                PageHit {
                    table: key.table,
                    row_key: key.row_key,
                    page: p.clone(),
                    score: None,
                },
            )
        })
        .collect();
    match nq.sort {
        Sort::TimeAsc => hits.sort_by(|a, b| a.0.cmp(&b.0)),
        _ => hits.sort_by(|a, b| b.0.cmp(&a.0)),
    }
    hits.into_iter().map(|(_, h)| h).collect()
}

fn media_hosts(pages: &[PageRecord]) -> Vec<String> {
    let mut m: Vec<String> = pages.iter().filter_map(|p| p.media.clone()).collect();
    m.sort();
    m.dedup();
    m
}

/// Follows the cursors of a query; returns the concatenated hits and
/// whether the last page was reached.
fn all_pages(index: &Index, q: &Query, full_scan: bool) -> (Vec<PageHit>, bool) {
    let mut q = q.clone();
    let mut out = Vec::new();
    for _ in 0..MAX_PAGES {
        let page = if full_scan {
            index.full_scan_search_page(&q).expect("full scan page")
        } else {
            index.search_page(&q).expect("search page")
        };
        let limit = q.limit.unwrap_or(indexer::DEFAULT_PAGE_LIMIT);
        assert!(page.hits.len() <= limit, "page over its limit");
        out.extend(page.hits);
        match page.next_cursor {
            None => return (out, true),
            Some(c) => q.cursor = Some(Cursor::decode(&c).expect("cursor decodes")),
        }
    }
    (out, false)
}

fn check_paging(f: &Fixture, seed: u64, queries: usize) {
    let keywords = frequent_keywords(&f.pages);
    let media = media_hosts(&f.pages);
    let mut rng = Lcg(seed);
    let mut multi_page = 0;
    for i in 0..queries {
        let q = random_query(&mut rng, &keywords, &media);
        let want = direct_sorted(f, &q);
        let (got, complete) = all_pages(&f.index, &q, false);
        if complete {
            assert_eq!(
                got, want,
                "query #{i}: pages differ from the full answer: {q:?}"
            );
        } else {
            assert_eq!(got, want[..got.len()], "query #{i}: pages differ: {q:?}");
        }
        if i % 8 == 0 {
            let (slow, _) = all_pages(&f.index, &q, true);
            assert_eq!(
                got[..got.len().min(slow.len())],
                slow[..got.len().min(slow.len())],
                "query #{i} vs full scan"
            );
        }
        if got.len() > q.limit.unwrap_or(indexer::DEFAULT_PAGE_LIMIT) {
            multi_page += 1;
        }
    }
    assert!(
        multi_page > queries / 4,
        "only {multi_page} of {queries} queries spanned pages; the test proves little"
    );
}

#[test]
fn concatenated_pages_equal_the_full_answer_in_every_sort() {
    let f = fixture(8);
    let near = f
        .pages
        .iter()
        .filter(|p| p.near_duplicate_of.is_some())
        .count();
    assert!(near > 50, "the corpus has near-duplicates ({near})");
    check_paging(&f, 0xc0ffee, 120);
}

/// Rewrites one in three posting cells of a table (taken in turn) to a
/// value the engine cannot read past its flags (no extended-value bit: only
/// the revisit flag counts, as in a value that does not decode); returns
/// (rewritten, cells).
fn strip_values(f: &Fixture, table: &str) -> (usize, usize) {
    let store = f.index.store();
    let postings: Vec<indexer::Row> = store
        .scan(table, &Scan::default().families(&["i"]))
        .expect("scan")
        .into_iter()
        .filter(|r| r.key[1] == 0x02)
        .collect();
    let mut stripped = Vec::new();
    let (mut n, mut i) = (0usize, 0usize);
    for row in &postings {
        let mut r = indexer::Row::new(row.key.clone());
        for c in &row.cells {
            i += 1;
            if i % 3 == 0 {
                r = r.with("i", c.qualifier.clone(), vec![c.value[0] & 0x01]);
                n += 1;
            }
        }
        stripped.push(r);
    }
    store.put(table, &stripped).expect("put stripped values");
    (n, i)
}

#[test]
fn entries_whose_value_does_not_decode_are_decided_from_data_rows() {
    let f = fixture(4);
    for table in ["anglo_news_2017", "intl_news_2017"] {
        let (stripped, cells) = strip_values(&f, table);
        assert!(stripped > 1000 && cells > stripped, "{stripped} of {cells}");
    }
    check_paging(&f, 0x1e9ac7, 40);
    let keywords = frequent_keywords(&f.pages);
    let media = media_hosts(&f.pages);
    let mut rng = Lcg(7);
    for i in 0..30 {
        let mut q = random_query(&mut rng, &keywords, &media);
        q.min_comments = Some(40);
        let group = [
            None,
            Some(GroupBy::Media),
            Some(GroupBy::Topic),
            Some(GroupBy::Story),
            Some(GroupBy::Source),
        ][i % 5];
        let sq = StatsQuery::new(q, Interval::Week, group);
        assert_eq!(
            f.index.stats(&sq).expect("stats"),
            f.index.full_scan_stats(&sq).expect("full"),
            "stats #{i}"
        );
    }
}

#[test]
fn cursors_belong_to_their_query_and_sort() {
    let f = fixture(4);
    let mut q = Query::new(&[], utc(2017, 1, 1), utc(2017, 2, 1));
    q.limit = Some(5);
    let page = f.index.search_page(&q).expect("page");
    assert_eq!(page.hits.len(), 5);
    let c = Cursor::decode(&page.next_cursor.expect("more pages")).expect("cursor");
    let mut other = q.clone();
    other.topics = vec!["military".into()];
    other.cursor = Some(c.clone());
    assert!(matches!(
        f.index.search_page(&other),
        Err(Error::BadCursor(_))
    ));
    let mut resorted = q.clone();
    resorted.sort = Sort::Comments;
    resorted.cursor = Some(c.clone());
    assert!(matches!(
        f.index.search_page(&resorted),
        Err(Error::BadCursor(_))
    ));
    let mut bigger = q.clone();
    bigger.limit = Some(50);
    bigger.cursor = Some(c);
    let next = f
        .index
        .search_page(&bigger)
        .expect("a new limit keeps the cursor valid");
    assert!(next.hits[0].page.key_time() <= page.hits[4].page.key_time());
    assert!(matches!(
        Cursor::decode("not a cursor"),
        Err(Error::BadCursor(_))
    ));
    q.limit = Some(indexer::MAX_PAGE_LIMIT + 1);
    assert!(matches!(f.index.search_page(&q), Err(Error::Invalid(_))));
    // serde: the cursor travels as its text
    let json = serde_json::to_string(&bigger).expect("json");
    let back: Query = serde_json::from_str(&json).expect("back");
    assert_eq!(back, bigger);
}

#[test]
fn filled_stats_in_a_zone_have_every_bucket() {
    let f = fixture(8);
    let shanghai = Zone::parse("Asia/Shanghai").expect("zone");
    let from = shanghai
        .start_of_day(NaiveDate::from_ymd_opt(2017, 3, 1).expect("d"))
        .expect("start");
    let to = shanghai
        .start_of_day(NaiveDate::from_ymd_opt(2017, 4, 1).expect("d"))
        .expect("end");
    let mut q = Query::new(&[], from, to);
    q.topics = vec!["military".into()];
    let mut sq = StatsQuery::new(q, Interval::Day, None);
    sq.tz = shanghai;
    sq.fill_empty = true;
    let rows = f.index.stats(&sq).expect("stats");
    assert_eq!(rows.len(), 31, "one row per local day of March");
    assert_eq!(rows[0].bucket, "2017-03-01");
    assert_eq!(rows[30].bucket, "2017-03-31");
    assert!(
        rows.iter().any(|r| r.count == 0),
        "some days have no military article"
    );
    let want = f.pages.iter().filter(|p| sq.query.matches(p)).count() as u64;
    assert_eq!(rows.iter().map(|r| r.count).sum::<u64>(), want);
    assert_eq!(rows, f.index.full_scan_stats(&sq).expect("full scan"));
    // grouped: every group gets every day
    sq.group_by = Some(GroupBy::Source);
    let grouped = f.index.stats(&sq).expect("stats");
    assert_eq!(grouped.len(), 31 * 2);
}

#[test]
fn page_ids_details_and_lists() {
    let f = fixture(4);
    let q = Query {
        limit: Some(30),
        ..Query::new(&[], utc(2017, 1, 1), utc(2017, 3, 1))
    };
    let hits = f.index.search_page(&q).expect("page").hits;
    assert_eq!(hits.len(), 30);
    for h in &hits {
        let id = h.id();
        assert_eq!(f.index.get_by_id(&id).expect("get").as_ref(), Some(h));
    }
    let h = &hits[0];
    let first = h.page.fetched - Duration::days(40);
    f.index
        .put_urls(&[UrlState {
            url: h.page.url.clone(),
            last_capture: h.page.fetched,
            captures: 3,
            first_capture: Some(first),
            etag: None,
            last_modified: None,
            table: h.table.clone(),
            row_key: h.row_key.clone(),
            digest: None,
            next_fetch: None,
            changes: 0,
            article: false,
            interval_secs: None,
        }])
        .expect("urls");
    let d = f
        .index
        .page_detail(&h.id())
        .expect("detail")
        .expect("exists");
    assert_eq!(
        (d.captures, d.first_seen, d.last_seen),
        (3, Some(first), h.page.fetched)
    );
    assert_eq!(d.location.path, h.page.pack_path);
    assert_eq!(
        (d.location.offset, d.location.length),
        (h.page.offset, h.page.length)
    );
    assert_eq!(&d.hit, h);
    // a well-formed id of a row that does not exist
    let mut gone = h.row_key.clone();
    gone[14] ^= 0xff;
    let missing = indexer::PageId {
        table: h.table.clone(),
        row_key: gone,
    }
    .to_string();
    assert_eq!(f.index.get_by_id(&missing).expect("get"), None);
    let other_year = indexer::PageId {
        table: "anglo_news_1999".into(),
        row_key: h.row_key.clone(),
    };
    assert_eq!(
        f.index.get_by_id(&other_year.to_string()).expect("get"),
        None
    );
    assert!(matches!(
        f.index.get_by_id("urls.AAAA"),
        Err(Error::BadPageId { .. })
    ));

    assert_eq!(
        f.index.sources().expect("sources"),
        [SOURCE_ANGLO, SOURCE_INTL]
    );
    let mut topics: Vec<String> = f.pages.iter().map(|p| p.topic.clone()).collect();
    topics.sort();
    topics.dedup();
    assert_eq!(f.index.topics(&[]).expect("topics"), topics);
    assert_eq!(
        f.index.topics(&["nowhere".into()]).expect("topics"),
        Vec::<String>::new()
    );
    let mut media: Vec<String> = f.pages.iter().filter_map(|p| p.media.clone()).collect();
    media.sort();
    media.dedup();
    assert!(!media.is_empty(), "the corpus names its media");
    assert_eq!(f.index.media(&[]).expect("media"), media);
    let mut anglo: Vec<String> = f
        .pages
        .iter()
        .filter(|p| p.source == SOURCE_ANGLO)
        .filter_map(|p| p.media.clone())
        .collect();
    anglo.sort();
    anglo.dedup();
    assert_eq!(f.index.media(&[SOURCE_ANGLO.into()]).expect("media"), anglo);
    assert_eq!(
        f.index.media(&["nowhere".into()]).expect("media"),
        Vec::<String>::new()
    );
}

#[test]
fn clusters_round_trip_per_topic_and_day() {
    let f = fixture(1);
    let day = NaiveDate::from_ymd_opt(2017, 2, 8).expect("day");
    let row = |topic: &str, day: NaiveDate, cluster: u32| ClusterRow {
        topic: topic.into(),
        day,
        cluster,
        centre: vec![0.25, -1.5, f32::MAX, 0.0],
        size: 17 + u64::from(cluster),
        pack: format!("{topic}/{}/c{cluster}-0.warc.gz", day.format("%Y/%m/%d")),
    };
    let rows = vec![
        row("military", day, 2),
        row("military", day, 0),
        row("military", day.succ_opt().expect("next"), 0),
        row("military\u{0}x", day, 1),
        row("militar", day, 1),
    ];
    f.index.put_clusters(&rows).expect("put");
    let got = f.index.clusters("military", day).expect("get");
    assert_eq!(got, vec![rows[1].clone(), rows[0].clone()]);
    let mut updated = rows[0].clone();
    updated.size = 99;
    updated.centre = vec![1.0];
    f.index
        .put_clusters(std::slice::from_ref(&updated))
        .expect("put");
    assert_eq!(f.index.clusters("military", day).expect("get")[1], updated);
    assert!(f.index.clusters("economy", day).expect("get").is_empty());
}

#[test]
fn open_ended_stats_fill_between_the_first_and_last_counted_bucket() {
    let f = fixture(4);
    // A table made ahead of time for a later year (as `cluster init` does).
    f.index
        .store()
        .create_table(&format!("{SOURCE_ANGLO}_2030"), &["a", "i"], 4)
        .expect("empty table");
    let open = Query::new(
        &[],
        utc(1970, 1, 1),
        Utc.with_ymd_and_hms(9999, 1, 1, 0, 0, 0)
            .single()
            .expect("t"),
    );
    let mut sq = StatsQuery::new(open.clone(), Interval::Month, None);
    sq.fill_empty = true;
    let rows = f.index.stats(&sq).expect("stats");
    let times: Vec<_> = f
        .pages
        .iter()
        .filter(|p| open.matches(p))
        .map(|p| p.key_time())
        .collect();
    let label = |t: &DateTime<Utc>| t.format("%Y-%m").to_string();
    let first = label(times.iter().min().expect("pages"));
    let last = label(times.iter().max().expect("pages"));
    assert_eq!(rows.first().map(|r| r.bucket.clone()), Some(first.clone()));
    assert_eq!(rows.last().map(|r| r.bucket.clone()), Some(last.clone()));
    assert!(
        rows.iter().all(|r| !r.bucket.starts_with("2030")),
        "no empty 2030"
    );
    assert_eq!(rows, f.index.full_scan_stats(&sq).expect("full scan"));
    // An explicit bound inside the tables' years is filled up to the bound,
    // even where nothing was counted.
    let mut bounded = open.clone();
    bounded.to = utc(2030, 3, 1);
    sq.query = bounded;
    let rows = f.index.stats(&sq).expect("stats");
    assert_eq!(rows.first().map(|r| r.bucket.clone()), Some(first));
    assert_eq!(rows.last().map(|r| r.bucket.as_str()), Some("2030-02"));
    assert_eq!(rows, f.index.full_scan_stats(&sq).expect("full scan"));
}

/// Issue 10 item 7: `from=2025-01-01&to=2026-12-31&interval=day` gave 32
/// buckets (from the first counted day) when only a 2026 table existed.
/// Given bounds are filled out to the bound, also over years without a table.
#[test]
fn given_bounds_fill_years_without_a_table() {
    let f = fixture(4);
    let years: std::collections::BTreeSet<i32> = f
        .pages
        .iter()
        .map(|p| p.key_time().format("%Y").to_string().parse().expect("year"))
        .collect();
    let (first_year, last_year) = (
        *years.first().expect("years"),
        *years.last().expect("years"),
    );
    // Two years before the first table, one after the last one.
    let (from, to) = (utc(first_year - 2, 1, 1), utc(last_year + 2, 1, 1));
    let mut sq = StatsQuery::new(Query::new(&[], from, to), Interval::Month, None);
    sq.fill_empty = true;
    sq.bounds = Bounds {
        from: true,
        to: true,
    };
    let rows = f.index.stats(&sq).expect("stats");
    let months = 12 * usize::try_from(last_year + 2 - (first_year - 2)).expect("years");
    assert_eq!(rows.len(), months, "one row per month of the range");
    assert_eq!(
        rows.first().map(|r| r.bucket.clone()),
        Some(format!("{}-01", first_year - 2))
    );
    assert_eq!(
        rows.last().map(|r| r.bucket.clone()),
        Some(format!("{}-12", last_year + 1))
    );
    let counted: u64 = rows.iter().map(|r| r.count).sum();
    assert_eq!(
        counted,
        f.pages.iter().filter(|p| sq.query.matches(p)).count() as u64
    );
    assert_eq!(rows, f.index.full_scan_stats(&sq).expect("full scan"));

    // Grouped, one given side: filled back to `from`, open after the last
    // counted bucket; every group gets every bucket.
    sq.bounds = Bounds {
        from: true,
        to: false,
    };
    sq.group_by = Some(GroupBy::Topic);
    let rows = f.index.stats(&sq).expect("stats");
    assert_eq!(
        rows.first().map(|r| r.bucket.clone()),
        Some(format!("{}-01", first_year - 2))
    );
    let last_page = f
        .pages
        .iter()
        .map(|p| p.key_time())
        .max()
        .expect("pages")
        .format("%Y-%m")
        .to_string();
    assert_eq!(rows.last().map(|r| r.bucket.clone()), Some(last_page));
    assert_eq!(rows, f.index.full_scan_stats(&sq).expect("full scan"));

    // No table of the source at all: zero rows over the given range
    // (ungrouped), nothing to group by.
    let mut none = StatsQuery::new(
        Query::new(&["nowhere"], utc(2025, 1, 1), utc(2027, 1, 1)),
        Interval::Day,
        None,
    );
    none.fill_empty = true;
    none.bounds = Bounds {
        from: true,
        to: true,
    };
    let rows = f.index.stats(&none).expect("stats");
    assert_eq!(rows.len(), 730);
    assert_eq!(rows[0].bucket, "2025-01-01");
    assert!(rows.iter().all(|r| r.count == 0));
    assert_eq!(rows, f.index.full_scan_stats(&none).expect("full scan"));
    none.group_by = Some(GroupBy::Topic);
    assert!(f.index.stats(&none).expect("stats").is_empty());
    // Without `fill_empty` the bounds change nothing.
    none.group_by = None;
    none.fill_empty = false;
    assert!(f.index.stats(&none).expect("stats").is_empty());
}
