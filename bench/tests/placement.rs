//! K-means placement (`packer::placement`) on the real news corpus
//! (`deploy/cache/NewsArticles.csv`, 3,824 articles from 9 outlets, fetched by
//! `indexer/tests/fetch-news.sh`) and on the edge cases of `assign_batch`.
//!
//! The corpus is required: a missing file fails the tests with a message naming the fetch
//! script (no skipping).

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use harvest_bench::news::{
    load_news, packing_report, NewsArticle, DEFAULT_KEYWORDS_PER_ARTICLE, NEWS_FETCH_SCRIPT,
};
use packer::{
    assign_batch, AttributeEncoder, BatchAssignment, Centre, ClusterError, ClusterOptions,
    PageAttributes,
};

const ARTICLES: usize = 3824;
const OUTLETS: usize = 9;
const DAYS: usize = 57;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn csv_path() -> PathBuf {
    root().join("deploy/cache/NewsArticles.csv")
}

fn corpus() -> &'static [NewsArticle] {
    static CORPUS: OnceLock<Vec<NewsArticle>> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let path = csv_path();
        assert!(
            path.is_file(),
            "{} is missing: run {NEWS_FETCH_SCRIPT} (from the repository root) to fetch the news corpus",
            path.display()
        );
        load_news(&path, DEFAULT_KEYWORDS_PER_ARTICLE).expect("load NewsArticles.csv")
    })
}

/// The pages of the busiest day, in arrival (article_id) order.
fn busiest_day() -> Vec<&'static NewsArticle> {
    let mut by_day: BTreeMap<_, Vec<&NewsArticle>> = BTreeMap::new();
    for a in corpus() {
        by_day.entry(a.day).or_default().push(a);
    }
    by_day
        .into_values()
        .max_by_key(|v| v.len())
        .expect("at least one day")
}

fn encode_all(pages: &[&NewsArticle], opts: &ClusterOptions) -> Vec<Vec<f32>> {
    let enc = AttributeEncoder::new(opts);
    pages.iter().map(|a| enc.encode(&a.attributes())).collect()
}

fn assert_consistent(a: &BatchAssignment, n: usize) {
    assert_eq!(a.clusters.len(), n);
    let ids: HashSet<u32> = a.centres.iter().map(|c| c.cluster).collect();
    for c in &a.clusters {
        assert!(ids.contains(c), "cluster {c} has no returned centre");
    }
    for c in &a.centres {
        assert!(
            c.centre.iter().all(|x| x.is_finite()),
            "NaN in centre {}",
            c.cluster
        );
        assert!(c.size >= 1);
    }
    assert!(a.inertia.is_finite() && a.inertia >= 0.0);
}

#[test]
fn corpus_is_the_real_news_file() {
    let c = corpus();
    assert_eq!(c.len(), ARTICLES);
    let outlets: HashSet<&str> = c.iter().map(|a| a.media.as_str()).collect();
    assert_eq!(outlets.len(), OUTLETS, "{outlets:?}");
    assert!(outlets.contains("www.aljazeera.com"));
    let days: HashSet<_> = c.iter().map(|a| a.day).collect();
    assert_eq!(days.len(), DAYS);
    let full = c
        .iter()
        .filter(|a| a.keywords.len() == DEFAULT_KEYWORDS_PER_ARTICLE)
        .count();
    assert!(
        full > ARTICLES * 9 / 10,
        "only {full} articles with 10 keywords"
    );
    // Keywords are TF-IDF terms: no stop words, lowercase, no digits-only tokens.
    for a in c {
        for k in &a.keywords {
            assert!(
                !["the", "and", "said"].contains(&k.as_str()),
                "stop word {k}"
            );
            assert_eq!(k, &k.to_lowercase());
            assert!(!k.chars().all(|ch| ch.is_numeric()));
        }
    }
}

#[test]
fn missing_corpus_names_the_fetch_script() {
    let err = load_news(Path::new("/nonexistent/NewsArticles.csv"), 10).expect_err("missing");
    let msg = err.to_string();
    assert!(msg.contains(NEWS_FETCH_SCRIPT), "{msg}");
}

#[test]
fn the_nine_outlets_get_distinct_media_slots() {
    let enc = AttributeEncoder::new(&ClusterOptions::default());
    let outlets: HashSet<&str> = corpus().iter().map(|a| a.media.as_str()).collect();
    let slots: HashSet<[usize; 2]> = outlets
        .iter()
        .map(|o| enc.media_slots(o).expect("slots"))
        .collect();
    assert_eq!(
        slots.len(),
        outlets.len(),
        "two outlets share both media slots"
    );
}

#[test]
fn busiest_day_is_clustered_deterministically() {
    let opts = ClusterOptions::default();
    let pages = busiest_day();
    let vectors = encode_all(&pages, &opts);
    let a = assign_batch(&vectors, &[], &opts).expect("assign");
    assert_consistent(&a, vectors.len());
    assert_eq!(a.k, opts.k_for(vectors.len()));
    assert_eq!(a.centres.len(), a.k, "first batch: every centre is new");
    let ids: Vec<u32> = a.centres.iter().map(|c| c.cluster).collect();
    assert_eq!(ids, (0..a.k as u32).collect::<Vec<_>>());
    assert_eq!(
        a.centres.iter().map(|c| c.size).sum::<u64>(),
        vectors.len() as u64
    );
    let again = assign_batch(&vectors, &[], &opts).expect("assign again");
    assert_eq!(again, a, "same seed, same input -> same clusters");
    // Centres are the means of their members.
    for c in &a.centres {
        let members: Vec<&Vec<f32>> = vectors
            .iter()
            .zip(&a.clusters)
            .filter(|(_, &l)| l == c.cluster)
            .map(|(v, _)| v)
            .collect();
        assert_eq!(members.len() as u64, c.size);
        for (j, x) in c.centre.iter().enumerate() {
            let mean = members.iter().map(|v| f64::from(v[j])).sum::<f64>() / members.len() as f64;
            assert!((f64::from(*x) - mean).abs() < 1e-5);
        }
    }
}

#[test]
fn stored_centres_survive_a_restart_and_updates_are_size_weighted() {
    let opts = ClusterOptions::default();
    let pages = busiest_day();
    let vectors = encode_all(&pages, &opts);
    let (first, second) = vectors.split_at(vectors.len() / 2);
    let a = assign_batch(first, &[], &opts).expect("first half");
    // Persist as JSON (what the binary stores in the `clusters` table) and read back.
    let json = serde_json::to_string(&a.centres).expect("serialize");
    let stored: Vec<Centre> = serde_json::from_str(&json).expect("deserialize");
    assert_eq!(stored, a.centres);
    let b = assign_batch(second, &stored, &opts).expect("second half");
    assert_consistent(&b, second.len());
    let max_stored = stored.iter().map(|c| c.cluster).max().expect("stored");
    for c in &b.centres {
        match stored.iter().find(|s| s.cluster == c.cluster) {
            Some(old) => {
                // Joined: size grew by the pages of this batch placed there, centre moved to
                // the size-weighted mean.
                let added = b.clusters.iter().filter(|&&l| l == c.cluster).count() as u64;
                assert_eq!(c.size, old.size + added);
                let batch_mean: Vec<f64> = (0..old.centre.len())
                    .map(|j| {
                        second
                            .iter()
                            .zip(&b.clusters)
                            .filter(|(_, &l)| l == c.cluster)
                            .map(|(v, _)| f64::from(v[j]))
                            .sum::<f64>()
                            / added as f64
                    })
                    .collect();
                for ((got, old_x), mean) in c.centre.iter().zip(&old.centre).zip(&batch_mean) {
                    let want =
                        (f64::from(*old_x) * old.size as f64 + mean * added as f64) / c.size as f64;
                    assert!((f64::from(*got) - want).abs() < 1e-5);
                }
            }
            None => assert!(c.cluster > max_stored, "new ids follow the stored ones"),
        }
    }
    // The same second batch against the in-memory centres gives the same answer.
    let direct = assign_batch(second, &a.centres, &opts).expect("direct");
    assert_eq!(direct, b);
}

#[test]
fn t1_zero_never_joins_and_huge_t1_always_joins() {
    let pages = busiest_day();
    let base = ClusterOptions::default();
    let vectors = encode_all(&pages, &base);
    let (first, second) = vectors.split_at(vectors.len() / 2);
    let stored = assign_batch(first, &[], &base).expect("first").centres;
    let never = ClusterOptions {
        t1: 0.0,
        budget: false,
        ..base.clone()
    };
    let b = assign_batch(second, &stored, &never).expect("t1=0");
    assert!(b.centres.iter().all(|c| c.cluster as usize >= stored.len()));
    let always = ClusterOptions { t1: 1e6, ..base };
    let b = assign_batch(second, &stored, &always).expect("t1 huge");
    assert!(b.clusters.iter().all(|&c| (c as usize) < stored.len()));
    // With the pack budget, t1 = 0 still starts no more clusters than the budget allows.
    let budgeted = ClusterOptions {
        t1: 0.0,
        ..ClusterOptions::default()
    };
    let b = assign_batch(second, &stored, &budgeted).expect("budget");
    let budget = vectors.len().div_ceil(budgeted.pages_per_cluster);
    let ids: std::collections::BTreeSet<u32> = stored
        .iter()
        .map(|c| c.cluster)
        .chain(b.clusters.iter().copied())
        .collect();
    assert!(
        ids.len() <= budget.max(stored.len()),
        "{} > {budget}",
        ids.len()
    );
}

#[test]
fn edge_cases() {
    let opts = ClusterOptions::default();
    let enc = AttributeEncoder::new(&opts);
    let page = corpus()[0].clone();
    let v = enc.encode(&page.attributes());

    // Empty batch.
    let a = assign_batch(&[], &[], &opts).expect("empty");
    assert!(a.clusters.is_empty() && a.centres.is_empty());

    // One page.
    let a = assign_batch(std::slice::from_ref(&v), &[], &opts).expect("one");
    assert_eq!(a.clusters, vec![0]);
    assert_eq!(a.centres[0].centre, v);
    assert_eq!(a.inertia, 0.0);

    // Fewer pages than k.
    let k5 = ClusterOptions {
        k: Some(5),
        ..opts.clone()
    };
    let three = encode_all(&corpus().iter().take(3).collect::<Vec<_>>(), &opts);
    let a = assign_batch(&three, &[], &k5).expect("3 < k");
    assert_consistent(&a, 3);
    assert!(a.k <= 3);

    // Identical vectors: one cluster, zero inertia, even with a fixed k.
    let same = vec![v.clone(); 50];
    let a = assign_batch(&same, &[], &k5).expect("identical");
    assert_eq!(a.k, 1);
    assert_eq!(a.inertia, 0.0);
    assert!(a.clusters.iter().all(|&c| c == 0));

    // Empty keyword lists and no media: all-zero vectors cluster fine.
    let empty = enc.encode(&PageAttributes {
        media: "",
        comments: None,
        participants: None,
        keywords: &[],
    });
    let a = assign_batch(&[empty.clone(), empty, v.clone()], &[], &k5).expect("zeros");
    assert_consistent(&a, 3);
    assert_eq!(a.k, 2);

    // Stored centre of another width.
    let narrow = Centre {
        cluster: 3,
        centre: vec![0.0; 10],
        size: 4,
    };
    let err = assign_batch(std::slice::from_ref(&v), &[narrow], &opts).expect_err("width");
    assert!(matches!(
        err,
        ClusterError::WidthMismatch {
            cluster: 3,
            got: 10,
            ..
        }
    ));
    assert!(err.to_string().contains("keyword_width"), "{err}");

    // Ragged batch and NaN.
    let err = assign_batch(&[v.clone(), vec![0.0; 3]], &[], &opts).expect_err("ragged");
    assert!(matches!(err, ClusterError::RaggedBatch { index: 1, .. }));
    let mut nan = v.clone();
    nan[0] = f32::NAN;
    let err = assign_batch(&[v, nan], &[], &opts).expect_err("nan");
    assert!(matches!(err, ClusterError::NonFinite { index: 1, .. }));
}

#[test]
fn cluster_packing_beats_arrival_order_with_large_batches() {
    let opts = ClusterOptions::default();
    let r = packing_report(corpus(), &opts, 100).expect("report");
    eprintln!("{r}");
    assert_eq!(r.pages, ARTICLES);
    assert_eq!(r.days, DAYS);
    assert!(r.queries > 500);
    assert!(
        r.packs_touched_cluster < r.packs_touched_arrival,
        "packs touched: cluster {} vs arrival {}",
        r.packs_touched_cluster,
        r.packs_touched_arrival
    );
    assert!(
        r.pages_read_cluster < r.pages_read_arrival,
        "pages read: cluster {} vs arrival {}",
        r.pages_read_cluster,
        r.pages_read_arrival
    );
    assert!(r.pages_read_cluster * 2 < r.pages_read_one_pack);
}

#[test]
fn successive_batches_of_an_outlet_rejoin_its_clusters() {
    let opts = ClusterOptions::default();
    let r = packing_report(corpus(), &opts, 10).expect("report");
    eprintln!("{r}");
    // With the default t1, follow-up batches of the same outlet on the same day land in an
    // existing cluster (mostly one that already holds that outlet), so a day keeps a few
    // packs instead of one per batch.
    assert!(r.followup_joined * 10 >= r.followup_pages * 9, "{r}");
    assert!(r.followup_same_outlet * 10 >= r.followup_joined * 9, "{r}");
    assert!(r.packs < r.batches / 2, "{r}");
    assert!(r.packs > r.days, "{r}");
}
