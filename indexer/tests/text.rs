//! Text conditions on the real news corpus: the engine's answers (the text
//! index and the page tables) against a reference that reads nothing from the
//! text index: every page's title and text segmented in memory and each query
//! matched token by token, a Chinese term character by character
//! ([`TextQuery::matches`]), with the other conditions
//! decided by [`Query::matches`].

mod util;

use util::Lcg;

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use chrono::{DateTime, Duration, TimeZone, Utc};
use indexer::text::embedded::EmbeddedText;
use indexer::text::FieldText;
use indexer::text::TextDoc;
use indexer::{
    EmbeddedStore, GroupBy, Index, IndexOptions, Interval, PageRecord, Query, Sort, StatsQuery,
    TextQuery,
};
use util::{news_pages, news_texts, SOURCE_ANGLO, SOURCE_INTL};

struct Fixture {
    _dir: tempfile::TempDir,
    index: Index,
    pages: Vec<PageRecord>,
    /// Tokens of each page's title and text.
    words: Vec<(Vec<String>, Vec<String>)>,
    /// Runs of Chinese characters of each page's title and text.
    han: Vec<(String, String)>,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = EmbeddedStore::open(dir.path().join("index")).expect("open store");
    let text = EmbeddedText::open(&dir.path().join("text")).expect("open text");
    let index = Index::new(Arc::new(store), IndexOptions { buckets: 4 })
        .expect("index")
        .with_text(Arc::new(text));
    let pages = news_pages();
    let texts = news_texts();
    let mut words = Vec::with_capacity(pages.len());
    let mut han = Vec::with_capacity(pages.len());
    for (chunk, bodies) in pages.chunks(500).zip(texts.chunks(500)) {
        let docs: Vec<TextDoc> = chunk
            .iter()
            .zip(bodies)
            .map(|(p, body)| TextDoc::of(p, tokens::Tokens::new(body), TextDoc::han_of(body)))
            .collect();
        index.index_texts(&docs).expect("index texts");
        index.index_pages(chunk).expect("index pages");
        for (p, body) in chunk.iter().zip(bodies) {
            words.push((tokens::tokenize(&p.title), tokens::tokenize(body)));
            han.push((TextDoc::han_of(&p.title), TextDoc::han_of(body)));
        }
    }
    Fixture {
        _dir: dir,
        index,
        pages,
        words,
        han,
    }
}

fn utc(y: i32, mo: u32, d: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, mo, d, 0, 0, 0)
        .single()
        .expect("valid time")
}

impl Fixture {
    /// A word (or a run of `n` words) of a random page's text or title.
    fn draw(&self, rng: &mut Lcg, n: usize, title: bool) -> String {
        loop {
            let (t, b) = &self.words[rng.below(self.words.len())];
            let from = if title { t } else { b };
            if from.len() < n {
                continue;
            }
            let at = rng.below(from.len() - n + 1);
            return from[at..at + n].join(" ");
        }
    }

    fn random_text(&self, rng: &mut Lcg) -> String {
        match rng.below(6) {
            0 => self.draw(rng, 1, false),
            1 => {
                let n = 2 + rng.below(2);
                format!("\"{}\"", self.draw(rng, n, false))
            }
            2 => format!(
                "{} OR {}",
                self.draw(rng, 1, false),
                self.draw(rng, 1, false)
            ),
            3 => format!("{} -{}", self.draw(rng, 1, false), self.draw(rng, 1, false)),
            4 => format!("title:{}", self.draw(rng, 1, true)),
            _ => format!("{} {}", self.draw(rng, 1, false), self.draw(rng, 1, true)),
        }
    }

    fn random_query(&self, rng: &mut Lcg) -> Query {
        let (from, to) = match rng.below(3) {
            0 => (utc(2010, 1, 1), utc(2030, 1, 1)),
            1 => (utc(2017, 1, 1), utc(2017, 3, 1)),
            _ => {
                let f = utc(2016, 10, 1) + Duration::days(rng.below(150) as i64);
                (f, f + Duration::days(rng.below(60) as i64 + 1))
            }
        };
        let sources: Vec<&str> = match rng.below(3) {
            0 => vec![],
            1 => vec![SOURCE_INTL],
            _ => vec![SOURCE_ANGLO],
        };
        let mut q = Query::new(&sources, from, to);
        q.text = Some(self.random_text(rng));
        if rng.below(3) == 0 {
            q.topics
                .push(["military", "economy", "politics"][rng.below(3)].to_owned());
        }
        if rng.below(4) == 0 {
            q.min_comments = Some(40);
        }
        q.include_revisits = rng.below(3) == 0;
        q.collapse_near_duplicates = rng.below(4) == 0;
        q
    }

    /// The reference: pages whose tokens hold the text and that meet the rest.
    fn reference(&self, q: &Query) -> BTreeSet<String> {
        let nq = q.normalised().expect("normalised");
        let tq = nq.text_query().expect("parse").expect("text");
        self.pages
            .iter()
            .zip(self.words.iter().zip(&self.han))
            .filter(|(p, ((t, b), (th, bh)))| {
                let t: Vec<&str> = t.iter().map(String::as_str).collect();
                let b: Vec<&str> = b.iter().map(String::as_str).collect();
                nq.matches(p)
                    && tq.matches(
                        FieldText {
                            tokens: &t,
                            han: th,
                        },
                        FieldText {
                            tokens: &b,
                            han: bh,
                        },
                    )
            })
            .map(|(p, _)| format!("{} {}", p.url, p.key_time().timestamp()))
            .collect()
    }
}

fn found(hits: &[indexer::PageHit]) -> BTreeSet<String> {
    hits.iter()
        .map(|h| format!("{} {}", h.page.url, h.page.key_time().timestamp()))
        .collect()
}

#[test]
fn text_queries_equal_the_token_reference_with_every_filter() {
    let f = fixture();
    let mut rng = Lcg(41);
    let (mut nonempty, mut total) = (0, 0usize);
    for i in 0..160 {
        let q = f.random_query(&mut rng);
        let want = f.reference(&q);
        let got = found(&f.index.search(&q).expect("search"));
        assert_eq!(got, want, "query {i}: {q:?}");
        if i % 4 == 0 {
            let scan = found(&f.index.full_scan_search(&q).expect("full scan"));
            assert_eq!(scan, want, "full scan, query {i}: {q:?}");
        }
        nonempty += usize::from(!want.is_empty());
        total += want.len();
    }
    assert!(
        nonempty >= 100,
        "most queries find pages ({nonempty} of 160)"
    );
    assert!(total >= 2_000, "{total} hits in all");
}

#[test]
fn stats_and_pages_of_text_queries() {
    let f = fixture();
    let mut rng = Lcg(7);
    for i in 0..24 {
        let mut q = f.random_query(&mut rng);
        let want = f.reference(&q);
        // Statistics count what the search finds.
        let group = [None, Some(GroupBy::Topic), Some(GroupBy::Story)][i % 3];
        let sq = StatsQuery::new(q.clone(), Interval::Month, group);
        assert_eq!(
            f.index.stats(&sq).expect("stats"),
            f.index.full_scan_stats(&sq).expect("full scan stats"),
            "stats {i}: {q:?}"
        );
        // Paged by relevance and by time: the same pages, ranked by BM25 first.
        for sort in [Sort::Relevance, Sort::TimeDesc] {
            q.sort = sort;
            q.limit = Some(7);
            q.cursor = None;
            let mut seen = BTreeSet::new();
            loop {
                let page = f.index.search_page(&q).expect("search page");
                seen.extend(found(&page.hits));
                match page.next_cursor {
                    Some(c) => q.cursor = Some(indexer::Cursor::decode(&c).expect("cursor")),
                    None => break,
                }
            }
            assert_eq!(seen, want, "{sort:?} pages of query {i}");
        }
    }
}

#[test]
fn relevance_puts_the_pages_that_repeat_a_word_first() {
    let f = fixture();
    // The word of the corpus in the most texts, and how often each page says it.
    let mut df: HashMap<&str, usize> = HashMap::new();
    for (_, b) in &f.words {
        for w in b.iter().collect::<BTreeSet<_>>() {
            *df.entry(w).or_insert(0) += 1;
        }
    }
    let word = df
        .iter()
        .filter(|(w, _)| w.len() > 4)
        .max_by_key(|(w, n)| (**n, std::cmp::Reverse(**w)))
        .map(|(w, _)| (*w).to_owned())
        .expect("a word");
    let mut q = Query::new(&[], utc(2010, 1, 1), utc(2030, 1, 1));
    q.text = Some(word.clone());
    q.sort = Sort::Relevance;
    q.limit = Some(20);
    let page = f.index.search_page(&q).expect("search page");
    let counts = |url: &str| {
        let i = f.pages.iter().position(|p| p.url == url).expect("page");
        let (t, b) = &f.words[i];
        (t.iter().chain(b).filter(|w| **w == word).count(), b.len())
    };
    let top: Vec<(usize, usize)> = page.hits.iter().map(|h| counts(&h.page.url)).collect();
    // BM25: the best hits say the word more often for their length than a typical hit.
    let density = |(n, len): (usize, usize)| n as f64 / len.max(1) as f64;
    let all = f.reference(&q);
    let mean_all: f64 = all
        .iter()
        .map(|k| density(counts(k.split(' ').next().unwrap_or_default())))
        .sum::<f64>()
        / all.len() as f64;
    let mean_top: f64 = top.iter().map(|c| density(*c)).sum::<f64>() / top.len() as f64;
    assert!(
        mean_top > 2.0 * mean_all,
        "{word:?}: top density {mean_top:.4} vs all {mean_all:.4}"
    );
}

#[test]
fn bad_text_queries_are_refused_with_their_position() {
    let f = fixture();
    let mut q = Query::new(&[], utc(2010, 1, 1), utc(2030, 1, 1));
    for (text, at) in [("trade \"war", 7), ("OR trade", 1), ("the of", 1)] {
        q.text = Some(text.into());
        match f.index.search(&q) {
            Err(indexer::Error::BadText { position, .. }) => assert_eq!(position, at, "{text}"),
            other => panic!("{text}: {other:?}"),
        }
    }
    assert!(TextQuery::parse("trade").is_ok());
    // Without a text index a text condition is an error, not an empty answer.
    let dir = tempfile::tempdir().expect("tempdir");
    let bare = Index::new(
        Arc::new(EmbeddedStore::open(dir.path()).expect("store")),
        IndexOptions::default(),
    )
    .expect("index");
    q.text = Some("trade".into());
    assert!(bare.search(&q).is_err());
}

#[test]
fn counts_of_text_alone_are_the_counts_of_the_rows() {
    // Counts by time and source trust the text index's hits (no row is read): they must
    // be what the rows say, revisits left out unless asked for.
    let f = fixture();
    let revisits = f.pages.iter().filter(|p| p.revisit).count();
    assert!(revisits >= 10, "the corpus has revisits ({revisits})");
    let mut rng = Lcg(97);
    let mut counted = 0u64;
    for i in 0..30 {
        let sources: &[&str] = if i % 3 == 1 { &[SOURCE_INTL] } else { &[] };
        let mut q = Query::new(sources, utc(2010, 1, 1), utc(2030, 1, 1));
        if i % 5 == 2 {
            q.from = utc(2017, 1, 1);
            q.to = utc(2017, 2, 15);
        }
        q.text = Some(f.random_text(&mut rng));
        q.include_revisits = i % 2 == 0;
        let want = f.reference(&q).len() as u64;
        for group in [None, Some(GroupBy::Source)] {
            let sq = StatsQuery::new(q.clone(), Interval::Day, group);
            let rows = f.index.stats(&sq).expect("stats");
            assert_eq!(
                rows,
                f.index.full_scan_stats(&sq).expect("full scan stats"),
                "query {i} by {group:?}: {q:?}"
            );
            let total: u64 = rows.iter().map(|r| r.count).sum();
            assert_eq!(total, want, "query {i} by {group:?}: {q:?}");
            counted += total;
        }
    }
    assert!(counted >= 1_000, "{counted} pages counted in all");
}

/// A page of the corpus under another URL, with words no other page has.
fn stray_page(f: &Fixture, url: &str, words: &str) -> (PageRecord, TextDoc) {
    let mut page = f.pages[0].clone();
    page.url = url.to_owned();
    page.revisit = false;
    let doc = TextDoc::of(&page, tokens::Tokens::new(words), TextDoc::han_of(words));
    (page, doc)
}

fn mentions(f: &Fixture, word: &str) -> (u64, usize) {
    let mut q = Query::new(&[], utc(2010, 1, 1), utc(2030, 1, 1));
    q.text = Some(word.to_owned());
    let total = f
        .index
        .stats(&StatsQuery::new(q.clone(), Interval::Year, None))
        .expect("stats")
        .iter()
        .map(|r| r.count)
        .sum();
    (total, f.index.search(&q).expect("search").len())
}

#[test]
fn words_are_counted_only_with_their_rows_and_a_killed_writers_are_removed() {
    let f = fixture();
    let marks = |f: &Fixture| {
        f.index
            .store()
            .scan(indexer::TEXT_MARKS_TABLE, &indexer::Scan::prefix(b""))
            .expect("marks")
    };
    // A batch in flight: words written, rows recorded but not yet applied.
    let (page, doc) = stray_page(&f, "https://example.org/in-flight", "zyzzyva quagga");
    let ((), batch) = f
        .index
        .record_knowing(indexer::ReadRows::default(), |ix| {
            ix.index_texts(std::slice::from_ref(&doc))?;
            ix.index_pages(std::slice::from_ref(&page))
        })
        .expect("record");
    assert_eq!(
        marks(&f).len(),
        1,
        "the words' mark is durable before the rows"
    );
    assert_eq!(mentions(&f, "zyzzyva"), (0, 0), "no rows yet: not counted");
    f.index.commit(&batch).expect("commit");
    assert_eq!(mentions(&f, "zyzzyva"), (1, 1), "counted with its rows");
    assert!(marks(&f).is_empty(), "the mark went with the rows");

    // A writer killed between the words and the rows.
    let (_, doc) = stray_page(&f, "https://example.org/never", "xylophagous quagga");
    let failed = f.index.atomically(|ix| {
        ix.index_texts(std::slice::from_ref(&doc))?;
        Err::<(), _>(indexer::Error::Invalid("killed before its rows".into()))
    });
    assert!(failed.is_err());
    assert_eq!(mentions(&f, "xylophagous"), (0, 0), "words without rows");
    assert_eq!(mentions(&f, "quagga"), (1, 1));
    // The mark as another process's, still running: left alone.
    let mut child = std::process::Command::new("sleep")
        .arg("60")
        .spawn()
        .expect("spawn");
    let mut rows = marks(&f);
    assert_eq!(rows.len(), 1);
    let mut row = rows.remove(0);
    let old_key = row.key.clone();
    row.key = format!(
        "{:016}/{}/{}/0",
        Utc::now().timestamp_micros(),
        indexer::batch::host_name().replace('/', "_"),
        child.id()
    )
    .into_bytes();
    let store = f.index.store();
    store
        .put(indexer::TEXT_MARKS_TABLE, &[row])
        .expect("put mark");
    store
        .delete(indexer::TEXT_MARKS_TABLE, &[old_key])
        .expect("delete mark");
    let r = f.index.recover().expect("recover");
    assert_eq!((r.text_marks, r.text_removed), (0, 0));
    assert_eq!(mentions(&f, "xylophagous"), (0, 0));
    // Its writer killed: the words of its page without rows are removed, then the mark.
    child.kill().expect("kill");
    child.wait().expect("wait");
    let r = f.index.recover().expect("recover");
    assert_eq!((r.text_marks, r.text_removed), (1, 1));
    assert!(marks(&f).is_empty());
    let text = f.index.text().expect("text index");
    let tq = TextQuery::parse("xylophagous").expect("parse");
    let scope = indexer::text::TextScope {
        sources: Vec::new(),
        from: 0,
        to: i64::MAX,
    };
    assert!(
        text.search(&tq, &scope).expect("search").is_empty(),
        "the words of the page without rows are gone"
    );
    assert_eq!(
        mentions(&f, "quagga"),
        (1, 1),
        "the page with rows kept its words"
    );
}
