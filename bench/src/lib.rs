//! `harvest-bench`: every benchmark of harvest, each a program that prints
//! harvest's figure beside a peer's measured in the same run. The product
//! binary reaches it as `harvest bench ...` (it runs this program, found
//! beside itself, with the same arguments); the benchmarks that crawl run the
//! `harvest` binary found beside this one, as a user would.

pub mod api;
pub mod cli;
pub mod crawl;
pub mod extract;
pub mod images;
pub mod kmeans;
pub mod model;
pub mod news;
pub mod reposts;
pub mod simhash;
pub mod text;
pub mod textcluster;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};

use crate::cli::{BenchArgs, BenchKind};

/// Runs the benchmark `args.kind` and prints its report on stdout.
pub fn run(args: &BenchArgs) -> Result<()> {
    match args.kind {
        BenchKind::Ingest => crawl::ingest(args),
        BenchKind::ClusterIngest => crawl::cluster_ingest(args),
        BenchKind::TextCluster => textcluster::run(args),
        BenchKind::Requisites => crawl::requisites(args),
        BenchKind::Neardup => crawl::neardup(args),
        BenchKind::TextIngest => crawl::text_ingest(args),
        BenchKind::Resume => crawl::resume(args),
        BenchKind::Recrawl => crawl::recrawl(args),
        BenchKind::Frontier => crawl::frontier(args),
        BenchKind::Locality => crawl::locality(args),
        BenchKind::Api => api::run(args),
        BenchKind::Text => text::run(args),
        BenchKind::ApiLoad => api::load_clients(),
        BenchKind::Extract => extract::run(args),
        BenchKind::Simhash => simhash::run(args),
        BenchKind::Images => images::run(args),
        BenchKind::Model => {
            let python = args.python.exists().then_some(args.python.as_path());
            if python.is_none() {
                eprintln!(
                    "harvest: scikit-learn peer not found; set it up with deploy/data/setup-peers.sh ({})",
                    model::VENV_SETUP
                );
            }
            let report = model::run(&args.cache, python)?;
            println!("{report}");
            Ok(())
        }
        BenchKind::Kmeans => {
            let python = args.python.exists().then_some(args.python.as_path());
            if python.is_none() {
                eprintln!(
                    "harvest: {} missing: the scikit-learn peer is skipped (deploy/data/setup-peers.sh sets it up)",
                    args.python.display()
                );
            }
            let report = kmeans::bench(&args.news, python)?;
            println!("{report}");
            Ok(())
        }
    }
}

/// The `harvest` binary beside this one (`target/release/harvest` beside
/// `target/release/harvest-bench`): the crawl benchmarks run it as a child
/// process, as a user would.
pub fn harvest_exe() -> Result<PathBuf> {
    let me = std::env::current_exe().context("cannot locate harvest-bench's own executable")?;
    let exe = me.with_file_name(format!("harvest{}", std::env::consts::EXE_SUFFIX));
    if !exe.is_file() {
        anyhow::bail!(
            "{} not found: the crawl benchmarks run the harvest binary beside harvest-bench; \
             build it with `cargo build --release -p harvest`",
            exe.display()
        );
    }
    Ok(exe)
}

/// Runs a peer's Python `script` (handed on stdin: `python - ARGS`) and parses
/// the one JSON value it prints; its stderr goes to ours. `package` is what
/// `deploy/data/setup-peers.sh` installs for it (named when the peer fails).
pub fn run_python_peer(
    python: &Path,
    script: &str,
    args: &[&Path],
    package: &str,
) -> Result<serde_json::Value> {
    eprintln!(
        "harvest: running the Python {package} peer ({})",
        python.display()
    );
    let mut child = Command::new(python)
        .arg("-")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("cannot run {}", python.display()))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(script.as_bytes())?;
    }
    let out = child.wait_with_output()?;
    if !out.status.success() {
        bail!(
            "the Python peer failed (deploy/data/setup-peers.sh installs {package}): {}",
            out.status
        );
    }
    serde_json::from_slice(&out.stdout).context("peer output")
}
