//! K-means benchmark: harvest's K-means (linfa-clustering) vs scikit-learn's KMeans on the
//! attribute vectors of the real news corpus, in the same run, plus the pipeline replay
//! (cluster packing vs arrival order). With `--sweep`, also the t1 / pages_per_cluster / batch
//! size sweep that the defaults are chosen from.
//!
//! ```text
//! indexer/tests/fetch-news.sh       # deploy/cache/NewsArticles.csv
//! python3 -m venv deploy/cache/venv && deploy/cache/venv/bin/pip install scikit-learn==1.9.1
//! cargo run --release -p packer --example kmeans_bench [-- --sweep] [CSV] [PYTHON]
//! ```

use std::path::PathBuf;
use std::process::ExitCode;

use packer::placement::{self, ClusterOptions, DEFAULT_KEYWORDS_PER_ARTICLE};

/// (pages_per_cluster, media_weight, t1) combinations of `--sweep`.
const SWEEP: [(usize, f32, f32); 18] = [
    (10, 1.0, 0.7),
    (10, 1.0, 0.9),
    (10, 1.0, 1.1),
    (10, 0.5, 0.5),
    (10, 0.5, 0.7),
    (10, 0.5, 0.9),
    (10, 0.0, 0.5),
    (10, 0.0, 0.7),
    (10, 0.0, 0.9),
    (25, 1.0, 0.7),
    (25, 1.0, 0.9),
    (25, 1.0, 1.1),
    (25, 0.5, 0.5),
    (25, 0.5, 0.7),
    (25, 0.5, 0.9),
    (25, 0.0, 0.5),
    (25, 0.0, 0.7),
    (25, 0.0, 0.9),
];

fn main() -> ExitCode {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut sweep = false;
    let mut positional = Vec::new();
    for arg in std::env::args().skip(1) {
        if arg == "--sweep" {
            sweep = true;
        } else {
            positional.push(PathBuf::from(arg));
        }
    }
    let csv = positional
        .first()
        .cloned()
        .unwrap_or_else(|| root.join("deploy/cache/NewsArticles.csv"));
    let python = positional
        .get(1)
        .cloned()
        .unwrap_or_else(|| root.join("deploy/cache/venv/bin/python"));
    let python = python.exists().then_some(python);
    if python.is_none() {
        eprintln!("kmeans_bench: no Python with scikit-learn found (create deploy/cache/venv, see the docs above)");
    }
    match placement::bench(&csv, python.as_deref()) {
        Ok(b) => println!("{b}"),
        Err(e) => {
            eprintln!("kmeans_bench: {e}");
            return ExitCode::FAILURE;
        }
    }
    if sweep {
        let articles = match placement::load_news(&csv, DEFAULT_KEYWORDS_PER_ARTICLE) {
            Ok(a) => a,
            Err(e) => {
                eprintln!("kmeans_bench: {e}");
                return ExitCode::FAILURE;
            }
        };
        for batch in [10, 40, 100] {
            for (ppc, media_weight, t1) in SWEEP {
                {
                    let opts = ClusterOptions {
                        t1,
                        media_weight,
                        pages_per_cluster: ppc,
                        ..ClusterOptions::default()
                    };
                    match placement::packing_report(&articles, &opts, batch) {
                        Ok(r) => println!("{r}"),
                        Err(e) => {
                            eprintln!("kmeans_bench: {e}");
                            return ExitCode::FAILURE;
                        }
                    }
                }
            }
        }
    }
    ExitCode::SUCCESS
}
