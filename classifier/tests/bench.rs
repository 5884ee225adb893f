//! `bench::run` end to end on the real corpora, with scikit-learn when its venv exists
//! (`deploy/cache/venv`, see the crate README) and without it otherwise.

mod util;

use std::path::PathBuf;

use classifier::bench;

#[test]
fn bench_reports_ours_beside_sklearn() {
    let cache = util::corpus_dir();
    let venv_python =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../deploy/cache/venv/bin/python");
    let python = venv_python.is_file().then_some(venv_python.as_path());
    let report = bench::run(&cache, python).expect("bench");
    print!("{report}");
    assert_eq!(report.rows.len(), 3);
    for row in &report.rows {
        assert!(row.ours.accuracy > 0.8, "{row:?}");
        assert!(
            row.ours.train_s > 0.0 && row.ours.predict_s > 0.0,
            "{row:?}"
        );
        if let Some(sk) = &row.sklearn {
            // the accuracy half of the bar; times depend on the machine's load
            assert!(row.ours.accuracy >= sk.accuracy - 0.01, "{row:?}");
        }
    }
    assert_eq!(report.throughput.len(), 2);
    assert!(report.throughput.iter().all(|t| t.pages_per_s > 0.0));
    match python {
        Some(_) => assert!(report.sklearn_missing.is_none(), "{report}"),
        None => assert!(report.to_string().contains("scikit-learn peer not run")),
    }
}

#[test]
fn bench_on_a_folder_without_corpora_is_a_clear_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    // no corpora there: a clear error naming the missing file, not a panic
    let err = bench::run(dir.path(), None).expect_err("no corpora");
    assert!(err.to_string().contains("20newsgroups-train.tab"), "{err}");
}
