//! `harvest bench kmeans` (`kmeans::bench_with`) on the real news corpus
//! (`deploy/cache/NewsArticles.csv`, fetched by `indexer/tests/fetch-news.sh`) beside
//! scikit-learn.

use std::path::PathBuf;

use harvest_bench::kmeans;

/// Articles in the corpus.
const ARTICLES: usize = 3824;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn csv_path() -> PathBuf {
    root().join("deploy/cache/NewsArticles.csv")
}

/// Settings of the test comparisons: k = 8, one run (a debug build runs linfa's generic code
/// unoptimised; the full benchmark is `harvest bench kmeans`).
fn small_bench() -> kmeans::BenchOptions {
    kmeans::BenchOptions {
        k: 8,
        n_runs: 1,
        batches: Vec::new(),
    }
}

/// Our K-means against scikit-learn's on the corpus vectors. The peer is the venv
/// `deploy/cache/venv` (`deploy/data/setup-peers.sh`, which `deploy/test.sh` runs); without
/// it the test fails, never skips: the comparison is the point.
#[test]
fn bench_against_sklearn() {
    let python = root().join("deploy/cache/venv/bin/python");
    assert!(
        python.is_file(),
        "{} is missing: run deploy/data/setup-peers.sh (the scikit-learn peer; deploy/test.sh runs it)",
        python.display()
    );
    let b = kmeans::bench_with(&csv_path(), Some(&python), &small_bench()).expect("bench");
    eprintln!("{b}");
    assert_eq!(b.n, ARTICLES);
    assert_eq!(b.k, 8);
    assert!(b.inertia.is_finite() && b.inertia > 0.0);
    let s = b
        .sklearn
        .as_ref()
        .unwrap_or_else(|e| panic!("{} exists but scikit-learn failed: {e}", python.display()));
    let ratio = b.inertia / s.inertia;
    assert!((0.95..=1.05).contains(&ratio), "inertia ratio {ratio}");
}

/// Without a Python, ours is still reported and scikit-learn marked NOT RUN.
#[test]
fn bench_without_a_python_reports_sklearn_not_run() {
    let b = kmeans::bench_with(&csv_path(), None, &small_bench()).expect("bench");
    assert_eq!(b.n, ARTICLES);
    assert!(b.inertia.is_finite() && b.inertia > 0.0);
    let e = b
        .sklearn
        .as_ref()
        .expect_err("scikit-learn ran without a Python");
    assert!(e.contains("no Python"), "{e}");
    assert!(b.to_string().contains("NOT RUN"), "{b}");
}
