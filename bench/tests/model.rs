//! `harvest-bench model` (`model::run`) end to end on the real corpora, beside scikit-learn
//! from its venv (`deploy/cache/venv`, made by `deploy/data/setup-peers.sh`, which
//! `deploy/test.sh` runs). Without the venv the test fails, never skips: the comparison is
//! the point. The report without a peer ("scikit-learn peer not run") is pinned by the unit
//! tests of `model`.

use std::path::PathBuf;
use std::process::Command;

use harvest_bench::model as bench;

/// The corpus cache folder, filled by `deploy/data/fetch-corpora.sh` if a corpus is missing
/// (as the classifier's corpus tests do).
fn corpus_dir() -> PathBuf {
    const FILES: [&str; 5] = [
        "20newsgroups-train.tab",
        "20newsgroups-test.tab",
        "reuters-r8-train.tab",
        "reuters-r8-test.tab",
        "thucnews_train_1w.txt",
    ];
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let cache = root.join("deploy/cache");
    if FILES.iter().any(|f| !cache.join(f).is_file()) {
        let script = root.join("deploy/data/fetch-corpora.sh");
        let status = Command::new("bash")
            .arg(&script)
            .arg(&cache)
            .status()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", script.display()));
        assert!(status.success(), "{} failed: {status}", script.display());
    }
    for f in FILES {
        assert!(
            cache.join(f).is_file(),
            "{f} missing in {}",
            cache.display()
        );
    }
    cache
}

#[test]
fn bench_reports_ours_beside_sklearn() {
    let cache = corpus_dir();
    let python = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../deploy/cache/venv/bin/python");
    assert!(
        python.is_file(),
        "{} is missing: run deploy/data/setup-peers.sh (the scikit-learn peer; deploy/test.sh runs it)",
        python.display()
    );
    let report = bench::run(&cache, Some(&python)).expect("bench");
    print!("{report}");
    assert_eq!(report.rows.len(), 3);
    for row in &report.rows {
        assert!(row.ours.accuracy > 0.8, "{row:?}");
        assert!(
            row.ours.train_s > 0.0 && row.ours.predict_s > 0.0,
            "{row:?}"
        );
        let sk = row
            .sklearn
            .as_ref()
            .expect("a scikit-learn figure for every corpus");
        // the accuracy half of the bar; times depend on the machine's load
        assert!(row.ours.accuracy >= sk.accuracy - 0.01, "{row:?}");
    }
    assert_eq!(report.throughput.len(), 2);
    assert!(report.throughput.iter().all(|t| t.pages_per_s > 0.0));
    assert!(report.sklearn_missing.is_none(), "{report}");
}

#[test]
fn bench_on_a_folder_without_corpora_is_a_clear_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    // no corpora there: a clear error naming the missing file, not a panic
    let err = bench::run(dir.path(), None).expect_err("no corpora");
    assert!(err.to_string().contains("20newsgroups-train.tab"), "{err}");
}
