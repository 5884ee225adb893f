//! The t1 / media_weight / pages_per_cluster / batch size sweep the K-means placement defaults
//! are chosen from: the pipeline replay (cluster packing vs arrival order,
//! `harvest_bench::news::packing_report`) on the real news corpus for every combination. harvest's
//! K-means beside scikit-learn's is `harvest bench kmeans` (`bench/src/kmeans.rs`).
//!
//! ```text
//! indexer/tests/fetch-news.sh       # deploy/cache/NewsArticles.csv
//! cargo run --release -p harvest-bench --example kmeans_sweep [-- CSV]
//! ```

use std::path::PathBuf;
use std::process::ExitCode;

use harvest_bench::news::{load_news, packing_report, DEFAULT_KEYWORDS_PER_ARTICLE};
use packer::placement::ClusterOptions;

/// (pages_per_cluster, media_weight, t1) combinations of the sweep.
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
    let csv = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("deploy/cache/NewsArticles.csv"));
    let articles = match load_news(&csv, DEFAULT_KEYWORDS_PER_ARTICLE) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("kmeans_sweep: {e:#}");
            return ExitCode::FAILURE;
        }
    };
    for batch in [10, 40, 100] {
        for (ppc, media_weight, t1) in SWEEP {
            let opts = ClusterOptions {
                t1,
                media_weight,
                pages_per_cluster: ppc,
                ..ClusterOptions::default()
            };
            match packing_report(&articles, &opts, batch) {
                Ok(r) => println!("{r}"),
                Err(e) => {
                    eprintln!("kmeans_sweep: {e:#}");
                    return ExitCode::FAILURE;
                }
            }
        }
    }
    ExitCode::SUCCESS
}
