//! Command line of `harvest-bench` (also reached as `harvest bench ...`).

use std::path::PathBuf;

use clap::{Args, Parser, ValueEnum};
use harvest::cli::LogFormat;

#[derive(Debug, Parser)]
#[command(
    name = "harvest-bench",
    version,
    about = "Benchmarks that print harvest's figure beside a peer's (also run as `harvest bench ...`)"
)]
pub struct Cli {
    /// More log output on stderr (-v info, -vv debug). HARVEST_LOG overrides.
    #[arg(long, short = 'v', global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// Log lines on stderr as plain text or as JSON objects (one a line).
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
    #[command(flatten)]
    pub bench: BenchArgs,
}

/// The pages of `harvest bench extract`.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum ExtractSet {
    /// newspaper4k's test pages and harvest's labelled pages.
    Dev,
    /// go-htmldate's and go-readability's labelled real pages.
    Heldout,
    /// Both, one after the other.
    All,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum BenchKind {
    /// First full crawl (`harvest crawl` as a child process, durable queue)
    /// on a loopback site vs `wget --recursive --warc-file`: pages/s, peak RSS;
    /// runs alternated (env HARVEST_BENCH_RUNS pairs, default 3), medians.
    Ingest,
    /// The same first full crawl on the cluster backends (HDFS packs, HBase
    /// index; --hdfs, --thrift) beside the embedded default, embedded runs
    /// before and after: pages/s and the cluster's share (goal >= 50%).
    /// deploy/bench/cluster-ingest.sh starts the test cluster and runs it
    ClusterIngest,
    /// The cluster's text index as immutable tantivy splits in HDFS (what
    /// harvest ships) beside posting rows in HBase (one row per word), on one
    /// cluster (--hdfs, --thrift) with the real texts of --news: build pages/s,
    /// bytes per page, query p50/p99. deploy/bench/text-cluster.sh starts the
    /// test cluster and runs it
    TextCluster,
    /// The first full crawl with `[crawl] requisites` off and on, beside
    /// `wget --recursive --page-requisites --warc-file`: pages/s, requests,
    /// embeds archived, archive bytes.
    Requisites,
    /// The first full crawl with `[dedup] near_duplicates` off and on, runs
    /// alternated (env HARVEST_BENCH_RUNS pairs, default 3): pages/s each
    /// way, the cost of detection in %, pages linked. With --zh-reposts, on
    /// a generated site of Chinese news articles and their reposts.
    Neardup,
    /// The first full crawl with `[index] text` off and on, runs alternated
    /// (env HARVEST_BENCH_RUNS pairs, default 3): pages/s each way, the cost
    /// of the text index in % (goal <= 15%).
    TextIngest,
    /// The same crawl SIGKILLed at about half its pages and taken up by a
    /// second `harvest crawl`, vs the uninterrupted crawl: wall time, pages
    /// archived once, pages fetched twice.
    Resume,
    /// A second `harvest crawl` of the unchanged site on the first crawl's
    /// data dir vs the first crawl: URLs/s, new records, pack bytes added.
    Recrawl,
    /// 1,000,000 queued URLs (env HARVEST_BENCH_URLS): the durable frontier
    /// table vs the in-memory queue, each in a child process: peak RSS, push
    /// rate, store size.
    Frontier,
    /// Packs touched by analysts' queries: K-means cluster packing vs
    /// arrival-order packing, on the real news articles crawled as a site.
    Locality,
    /// K-means on the news articles' attribute vectors vs scikit-learn's KMeans.
    Kmeans,
    /// /api/search and /api/stats latency at 1,000,000 pages (env
    /// HARVEST_BENCH_PAGES) vs a full scan, and requests/s under wrk.
    Api,
    /// The text index on api's archive (1,000,000 pages, env
    /// HARVEST_BENCH_PAGES) beside SQLite FTS5 on the same texts: build
    /// pages/s, bytes per page, p50/p99 of ten text queries alone, with
    /// source + quarter + topic, and as mentions per day over a year.
    Text,
    /// The load clients of `api`, run by it as a child process: a load plan
    /// (JSON) on stdin, a report (JSON) on stdout.
    #[value(hide = true)]
    ApiLoad,
    /// Title, publish time (minute, day) and media accuracy of attribute
    /// extraction on the dev set (newspaper4k test pages + harvest's labelled
    /// pages) or the held-out sets (--set) vs trafilatura on the same pages.
    Extract,
    /// Near-duplicates: SimHash MB/s and repost accuracy vs the Python
    /// simhash library, all pairs within 3 bits among 1,000,000 fingerprints
    /// (env HARVEST_BENCH_SIMHASHES) vs brute force and the peer's index.
    Simhash,
    /// The seed's duplicate finder: 10,000 image files (env
    /// HARVEST_BENCH_IMAGES) cut from real images with 1% duplicates,
    /// exact (size + SHA-1) and perceptual (aHash, dHash, pHash), vs the
    /// issue's 112 s and Python imagehash on the same files.
    Images,
    /// The topic classifier: accuracy and train+predict time on 20
    /// Newsgroups, Reuters R8 and THUCNews titles (in --cache), beside
    /// scikit-learn's LinearSVC in the same run (`harvest model bench`).
    Model,
}

#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Which benchmark to run.
    #[arg(value_enum)]
    pub kind: BenchKind,
    /// Site to serve: a .tar.gz or a folder (default: the bundled demo site).
    #[arg(long)]
    pub site: Option<PathBuf>,
    /// Entry path on the site (default: the demo's entry page).
    #[arg(long)]
    pub entry: Option<String>,
    /// Scratch folder (wiped).
    #[arg(long, default_value = "harvest-data/bench")]
    pub dir: PathBuf,
    /// NewsArticles.csv (locality, kmeans, simhash; fetched by
    /// indexer/tests/fetch-news.sh; simhash also reads 199801.txt beside it,
    /// fetched by deploy/data/fetch-neardup.sh).
    #[arg(long, default_value = "deploy/cache/NewsArticles.csv")]
    pub news: PathBuf,
    /// Python with the peers (kmeans, model: scikit-learn, simhash: simhash,
    /// extract: trafilatura; set up by deploy/data/setup-peers.sh).
    #[arg(long, default_value = "deploy/cache/venv/bin/python")]
    pub python: PathBuf,
    /// Folder with the classifier's corpora (model; deploy/data/fetch-corpora.sh
    /// fills it).
    #[arg(long, default_value = "deploy/cache")]
    pub cache: PathBuf,
    /// newspaper4k test pages with their metadata (extract; fetched by
    /// deploy/data/fetch-extract-devset.sh).
    #[arg(long, default_value = "deploy/cache/newspaper4k")]
    pub devset: PathBuf,
    /// Real images the image workload is cut from (images; fetched by
    /// deploy/data/fetch-images.sh).
    #[arg(long, default_value = "deploy/cache/skimage-data")]
    pub images: PathBuf,
    /// harvest's labelled extraction pages (extract).
    #[arg(long, default_value = "extract/tests/fixtures/pages")]
    pub fixtures: PathBuf,
    /// extract: which pages: `dev` (the dev set the rules were built on),
    /// `heldout` (real pages the rules were not built on, --heldout) or `all`.
    #[arg(long, value_enum, default_value_t = ExtractSet::Dev)]
    pub set: ExtractSet,
    /// The held-out sets of extract (fetched by
    /// deploy/data/fetch-extract-heldout.sh).
    #[arg(long, default_value = "deploy/cache/extract-heldout")]
    pub heldout: PathBuf,
    /// Crawl benchmarks: instead of --site, serve every People's Daily
    /// 1998-01 article (199801.txt beside --news, fetched by
    /// deploy/data/fetch-neardup.sh) published by one Chinese portal and
    /// reposted by two others (harvest::reposts templates).
    #[arg(long)]
    pub zh_reposts: bool,
    /// cluster-ingest: the HDFS URL packs go under (e.g.
    /// hdfs://127.0.0.1:PORT; a folder per run is made below it).
    #[arg(long)]
    pub hdfs: Option<String>,
    /// cluster-ingest: the HBase Thrift 1 server `host:port` (its tables
    /// must not hold an earlier run's: start a fresh cluster).
    #[arg(long)]
    pub thrift: Option<String>,
    /// cluster-ingest: the HBase Thrift 2 server `host:port`, to create
    /// pre-split tables (optional).
    #[arg(long)]
    pub thrift2: Option<String>,
    /// cluster-ingest: process id of the cluster's JVM, to print the CPU
    /// it used during each run beside harvest's.
    #[arg(long)]
    pub cluster_pid: Option<u32>,
    /// text-cluster: how many times the corpus is indexed (each copy under
    /// other URLs), to see how the designs grow with the archive.
    #[arg(long, default_value_t = 1)]
    pub copies: usize,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn every_argument_has_help() {
        let mut cmd = Cli::command();
        cmd.build();
        let missing: Vec<_> = cmd
            .get_arguments()
            .filter(|a| a.get_help().is_none() && a.get_long_help().is_none())
            .map(|a| a.get_id().to_string())
            .collect();
        assert!(missing.is_empty(), "no help text: {missing:?}");
    }

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }
}
