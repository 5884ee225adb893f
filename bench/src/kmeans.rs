//! `harvest bench kmeans`: harvest's K-means (`packer::placement::kmeans`, linfa-clustering)
//! beside scikit-learn's KMeans on the attribute vectors of the real news corpus, in the same
//! run, plus the pipeline replay (cluster packing vs arrival order,
//! [`crate::news::packing_report`]).

use std::fmt;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use anyhow::Result;
use packer::placement::{kmeans, AttributeEncoder, ClusterOptions, DEFAULT_N_RUNS};

use crate::news::{load_news, packing_report, PackingReport, DEFAULT_KEYWORDS_PER_ARTICLE};
use serde::Deserialize;

/// The peer script, embedded so the binary can run it from anywhere.
const SKLEARN_SCRIPT: &str = include_str!("../../deploy/data/sklearn-kmeans.py");
/// k of the whole-corpus benchmark.
pub const BENCH_K: usize = 20;

/// scikit-learn's figures (from `deploy/data/sklearn-kmeans.py`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct SklearnFigures {
    /// Sum of squared distances to the closest centre.
    pub inertia: f64,
    /// Seconds in `fit`.
    pub seconds: f64,
    /// Lloyd iterations of the best run.
    pub n_iter: u64,
    /// scikit-learn version.
    pub sklearn: String,
}

/// Result of [`bench()`]: our K-means and scikit-learn's on the same vectors, same run.
#[derive(Debug, Clone, PartialEq)]
pub struct KmeansBench {
    /// Vectors (pages).
    pub n: usize,
    /// Vector width.
    pub width: usize,
    /// Clusters.
    pub k: usize,
    /// Restarts (both).
    pub n_runs: usize,
    /// Iteration cap (both).
    pub max_iter: u64,
    /// Our inertia (sum of squared distances to the final centres).
    pub inertia: f64,
    /// Our seconds (K-means fit + predict + final means).
    pub seconds: f64,
    /// scikit-learn, or why it could not run.
    pub sklearn: std::result::Result<SklearnFigures, String>,
    /// The pipeline replay with default options ([`packing_report`]), one per
    /// [`BENCH_BATCHES`] size.
    pub packing: Vec<PackingReport>,
}

impl fmt::Display for KmeansBench {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "k-means on {} news pages x {} attributes, k={}, n_runs={}, max_iter={}",
            self.n, self.width, self.k, self.n_runs, self.max_iter
        )?;
        writeln!(
            f,
            "  harvest (linfa-clustering 0.8): inertia {:.2}, {:.3} s",
            self.inertia, self.seconds
        )?;
        match &self.sklearn {
            Ok(s) => writeln!(
                f,
                "  scikit-learn {}: inertia {:.2}, {:.3} s ({} iterations)\n  ratio harvest/sklearn: inertia {:.3}, time {:.2}",
                s.sklearn,
                s.inertia,
                s.seconds,
                s.n_iter,
                self.inertia / s.inertia,
                self.seconds / s.seconds
            )?,
            Err(e) => writeln!(f, "  scikit-learn: NOT RUN: {e}")?,
        }
        for (i, p) in self.packing.iter().enumerate() {
            let sep = if i == 0 { "" } else { "\n" };
            write!(f, "{sep}  packing replay: {p}")?;
        }
        Ok(())
    }
}

/// Writes a float32 C-order `.npy` (format 1.0) matrix.
fn write_npy(path: &Path, rows: &[Vec<f32>], width: usize) -> std::io::Result<()> {
    let mut header = format!(
        "{{'descr': '<f4', 'fortran_order': False, 'shape': ({}, {}), }}",
        rows.len(),
        width
    );
    // magic(6) + version(2) + len(2) + header + '\n' padded to a multiple of 64.
    let unpadded = 10 + header.len() + 1;
    header.push_str(&" ".repeat(unpadded.div_ceil(64) * 64 - unpadded));
    header.push('\n');
    let mut bytes = Vec::with_capacity(10 + header.len() + rows.len() * width * 4);
    bytes.extend_from_slice(b"\x93NUMPY\x01\x00");
    bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    for r in rows {
        for x in r {
            bytes.extend_from_slice(&x.to_le_bytes());
        }
    }
    std::fs::write(path, bytes)
}

fn run_sklearn(
    python: &Path,
    vectors: &[Vec<f32>],
    width: usize,
    opts: &ClusterOptions,
    k: usize,
) -> std::result::Result<SklearnFigures, String> {
    let dir = std::env::temp_dir().join(format!("harvest-kmeans-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let result = (|| {
        let npy = dir.join("vectors.npy");
        let script = dir.join("sklearn-kmeans.py");
        write_npy(&npy, vectors, width)
            .map_err(|e| format!("cannot write {}: {e}", npy.display()))?;
        std::fs::write(&script, SKLEARN_SCRIPT)
            .map_err(|e| format!("cannot write {}: {e}", script.display()))?;
        let out = Command::new(python)
            .arg(&script)
            .arg(&npy)
            .arg(k.to_string())
            .arg(opts.n_runs.to_string())
            .arg(opts.max_iter.to_string())
            .arg(opts.tolerance.to_string())
            .arg(opts.seed.to_string())
            .output()
            .map_err(|e| format!("cannot run {}: {e}", python.display()))?;
        if !out.status.success() {
            return Err(format!(
                "{} exited with {}: {}",
                python.display(),
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        let stdout = String::from_utf8_lossy(&out.stdout);
        let line = stdout.lines().last().unwrap_or("");
        serde_json::from_str::<SklearnFigures>(line)
            .map_err(|e| format!("unexpected output {line:?}: {e}"))
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// Builds the attribute vectors of the news corpus at `csv` (default options), runs our
/// K-means over all of them (k = [`BENCH_K`], `n_runs`/`max_iter`/`tolerance`/`seed` from
/// the defaults) and scikit-learn's with the same settings through `python` (a Python with
/// scikit-learn, e.g. `deploy/cache/venv/bin/python`; `None` = not run), plus the pipeline
/// replay ([`packing_report`] with batches of [`BENCH_BATCHES`] pages). A failing or missing Python is reported
/// in [`KmeansBench::sklearn`], not as an error.
pub fn bench(csv: &Path, python: Option<&Path>) -> Result<KmeansBench> {
    bench_with(csv, python, &BenchOptions::default())
}

/// What [`bench_with`] runs.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchOptions {
    /// k of the whole-corpus K-means (both). Default [`BENCH_K`].
    pub k: usize,
    /// Restarts (both). Default [`DEFAULT_N_RUNS`].
    pub n_runs: usize,
    /// Batch sizes of the pipeline replays. Default [`BENCH_BATCHES`].
    pub batches: Vec<usize>,
}

impl Default for BenchOptions {
    fn default() -> Self {
        Self {
            k: BENCH_K,
            n_runs: DEFAULT_N_RUNS,
            batches: BENCH_BATCHES.to_vec(),
        }
    }
}

/// [`bench()`] with another k, number of restarts or replay batch sizes (tests use a small
/// one: debug builds compile linfa's generic K-means without optimisation).
pub fn bench_with(csv: &Path, python: Option<&Path>, b: &BenchOptions) -> Result<KmeansBench> {
    let opts = ClusterOptions::default();
    let articles = load_news(csv, DEFAULT_KEYWORDS_PER_ARTICLE)?;
    let encoder = AttributeEncoder::new(&opts);
    let vectors: Vec<Vec<f32>> = articles
        .iter()
        .map(|a| encoder.encode(&a.attributes()))
        .collect();
    let width = encoder.width();
    let bench_opts = ClusterOptions {
        k: Some(b.k),
        n_runs: b.n_runs,
        ..opts.clone()
    };
    let t = Instant::now();
    let fit = kmeans(&vectors, width, &bench_opts)?;
    let seconds = t.elapsed().as_secs_f64();
    let sklearn = match python {
        Some(p) => run_sklearn(p, &vectors, width, &bench_opts, b.k),
        None => Err("no Python given (pass deploy/cache/venv/bin/python)".into()),
    };
    let packing = b
        .batches
        .iter()
        .map(|&b| packing_report(&articles, &opts, b))
        .collect::<Result<Vec<_>>>()?;
    Ok(KmeansBench {
        n: vectors.len(),
        width,
        k: fit.centres.len(),
        n_runs: bench_opts.n_runs,
        max_iter: bench_opts.max_iter,
        inertia: fit.inertia,
        seconds,
        sklearn,
        packing,
    })
}

/// Batch sizes of the pipeline replay in [`bench()`].
pub const BENCH_BATCHES: [usize; 2] = [10, 100];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npy_header_is_aligned() {
        let dir = std::env::temp_dir().join(format!("harvest-npy-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let p = dir.join("x.npy");
        write_npy(&p, &[vec![1.0, 2.0], vec![3.0, 4.0]], 2).expect("write");
        let bytes = std::fs::read(&p).expect("read");
        let hlen = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
        assert_eq!((10 + hlen) % 64, 0);
        assert_eq!(bytes.len(), 10 + hlen + 16);
        assert_eq!(&bytes[10 + hlen..10 + hlen + 4], &1.0f32.to_le_bytes());
        std::fs::remove_dir_all(&dir).expect("cleanup");
    }
}
