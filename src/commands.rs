//! The commands that read or write the archive (`crawl`, `jobs`, `query`,
//! `stats`, `get`, `reextract`), written once and run either by the command line on a
//! store it opened itself, or inside `harvest serve` for a command line that
//! found the store owned by the server ([`crate::remote`]).

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};

use crate::cli::{Command, ExportCommand, JobsCommand};
use crate::config::Config;
use crate::ingest::{self, CrawlRun, JobRun, Progress, RunReport};
use crate::outfile::Files;
use crate::stores::Stores;
use crate::{filters, jobs, read};

/// An exit code decided elsewhere (the server already printed the messages).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exit(pub u8);

impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "exit code {}", self.0)
    }
}

impl std::error::Error for Exit {}

impl Command {
    /// The output file the command's arguments name, if any.
    pub fn output_file(&self) -> Option<&Path> {
        match self {
            Command::Export {
                command: ExportCommand::Cdxj(a),
            } => a.out.as_deref(),
            Command::Stats(a) => a.plot.as_deref(),
            _ => None,
        }
    }

    /// Whether the command asked for no progress output.
    pub fn quiet(&self) -> bool {
        match self {
            Command::Crawl(a) => a.quiet,
            Command::Jobs {
                command: JobsCommand::Run { quiet, .. },
            } => *quiet,
            Command::Import(a) => a.quiet,
            Command::Compact(a) => a.quiet,
            _ => false,
        }
    }

    /// Whether the command may write to the archive (crawls, job runs and
    /// a `reextract` that is not a dry run); the others only read it and
    /// need an existing archive.
    pub fn writes_archive(&self) -> bool {
        match self {
            Command::Crawl(_) | Command::Jobs { .. } => true,
            Command::Reextract(a) => !a.dry_run && a.explain.is_none(),
            Command::Fsck(a) => a.repair,
            Command::Import(_) => true,
            Command::Compact(a) => !a.dry_run,
            _ => false,
        }
    }

    /// Whether the command crawls (and so stops on Ctrl-C or SIGTERM by
    /// storing the pages in flight, leaving its queue for the next run).
    pub fn crawls(&self) -> bool {
        matches!(
            self,
            Command::Crawl(_)
                | Command::Jobs {
                    command: JobsCommand::Run { .. }
                }
        )
    }

    /// Whether the command works on the archive (and so may go through a
    /// running server): one of [`ARCHIVE_COMMANDS`].
    pub fn uses_archive(&self) -> bool {
        matches!(
            self,
            Command::Crawl(_)
                | Command::Jobs { .. }
                | Command::Query(_)
                | Command::Stats(_)
                | Command::Get(_)
                | Command::Reextract(_)
                | Command::Fsck(_)
                | Command::Dedup(_)
                | Command::Import(_)
                | Command::Compact(_)
                | Command::Export { .. }
        )
    }
}

/// The commands that work on the archive ([`Command::uses_archive`]), by name: the ones a
/// running `harvest serve` runs for a command line (`POST /api/cli`).
pub const ARCHIVE_COMMANDS: [&str; 11] = [
    "crawl",
    "jobs",
    "query",
    "stats",
    "get",
    "reextract",
    "fsck",
    "dedup",
    "import",
    "compact",
    "export",
];

/// [`ARCHIVE_COMMANDS`] as a sentence: `crawl, jobs, ... and export`.
pub fn archive_commands_listed() -> String {
    let (last, rest) = ARCHIVE_COMMANDS.split_last().unwrap_or((&"", &[]));
    format!("{} and {last}", rest.join(", "))
}

/// A command's report: pretty JSON with `json`, else its text.
fn print_report<T: serde::Serialize>(
    out: &mut (dyn Write + Send),
    json: bool,
    report: &T,
    text: impl FnOnce() -> String,
) -> Result<()> {
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(report)?)?;
    } else {
        write!(out, "{}", text())?;
    }
    out.flush()?;
    Ok(())
}

/// Runs an archive command on `stores`, printing its answer to `out` and
/// its warnings to `err`; a file its arguments name goes to `files`.
#[allow(clippy::too_many_arguments)]
pub async fn run(
    command: &Command,
    cfg: &Config,
    stores: &Stores,
    out: &mut (dyn Write + Send),
    err: &mut (dyn Write + Send),
    files: &Files,
    progress: Progress,
    cancel: crawler::CancellationToken,
) -> Result<()> {
    match command {
        Command::Crawl(args) => {
            let mut cfg = cfg.clone();
            args.apply(&mut cfg)?;
            if cfg.crawl.seeds.is_empty() {
                anyhow::bail!("no seeds: give --seed URL or [crawl] seeds in harvest.toml");
            }
            // An ad-hoc crawl is a job too: its queue survives a kill and the
            // next `harvest crawl` takes an interrupted run up.
            let report = ingest::run_job(
                &cfg,
                stores,
                CrawlRun {
                    progress,
                    conditional: !args.no_conditional,
                    job: Some(JobRun {
                        name: jobs::AD_HOC_JOB.to_string(),
                        recrawl: jobs::Recrawl::always(),
                    }),
                    cancel,
                },
            )
            .await?;
            write_report(out, &report, args.json)
        }
        Command::Jobs { command } => run_jobs(command, cfg, stores, out, progress, cancel).await,
        Command::Query(args) => jobs::off_runtime(|| filters::run_query(stores, args, out, err)),
        Command::Stats(args) => {
            jobs::off_runtime(|| filters::run_stats(stores, args, out, err, files))
        }
        Command::Get(args) => {
            let bytes = jobs::off_runtime(|| {
                let at = args.at.as_deref().map(read::parse_at).transpose()?;
                let part = if args.record {
                    read::Part::Record
                } else {
                    read::Part::Payload
                };
                read::capture(stores, &args.url, at, part)
            })?;
            out.write_all(&bytes)?;
            out.flush()?;
            Ok(())
        }
        Command::Export {
            command: ExportCommand::Cdxj(args),
        } => jobs::off_runtime(|| crate::cdxj::run(stores, args, out, err, files)),
        Command::Dedup(args) => {
            jobs::off_runtime(|| crate::dedup::run(stores, args, out))?;
            out.flush()?;
            Ok(())
        }
        Command::Reextract(args) => {
            jobs::off_runtime(|| crate::reextract::run_command(stores, cfg, args, out))?;
            out.flush()?;
            Ok(())
        }
        Command::Fsck(args) => {
            let report = jobs::off_runtime(|| {
                let mut sink = std::io::sink();
                let progress: &mut dyn Write = if args.quiet { &mut sink } else { err };
                crate::fsck::check(cfg, stores, progress, args.repair)
            })?;
            print_report(out, args.json, &report, || report.render())?;
            if report.clean() {
                Ok(())
            } else {
                Err(anyhow::Error::new(Exit(1)))
            }
        }
        Command::Compact(args) => {
            let options = crate::compact::CompactOptions {
                topic: args.topic.clone(),
                month: args
                    .month
                    .as_deref()
                    .map(crate::compact::parse_month)
                    .transpose()?,
                dry_run: args.dry_run,
                target_bytes: args.target_bytes.unwrap_or(cfg.max_pack_bytes).max(1),
            };
            let report = jobs::off_runtime(|| {
                let _alone = jobs::compaction()?;
                let mut sink = std::io::sink();
                let progress: &mut dyn Write = if args.quiet { &mut sink } else { err };
                crate::compact::compact(stores.packs.as_ref(), &stores.index, &options, progress)
            })?;
            print_report(out, args.json, &report, || report.render())?;
            Ok(())
        }
        Command::Import(args) => {
            let summary = jobs::off_runtime(|| {
                let mut sink = std::io::sink();
                let progress: &mut dyn Write = if args.quiet { &mut sink } else { err };
                crate::import::import(cfg, stores, &args.files, progress)
            })?;
            print_report(out, args.json, &summary, || summary.render("import"))?;
            Ok(())
        }
        other => anyhow::bail!("{other:?} is not an archive command"),
    }
}

async fn run_jobs(
    command: &JobsCommand,
    cfg: &Config,
    stores: &Stores,
    out: &mut (dyn Write + Send),
    progress: Progress,
    cancel: crawler::CancellationToken,
) -> Result<()> {
    match command {
        JobsCommand::List => {
            if cfg.jobs.is_empty() {
                writeln!(out, "no [[job]] tables in the config")?;
                return Ok(());
            }
            let now = chrono::Utc::now();
            writeln!(
                out,
                "{:<20} {:>5} {:<9} {:<22} {:<26} {:<26} LAST RUN",
                "JOB", "SEEDS", "RECRAWL", "SCHEDULE", "NEXT RUN (serve)", "STATUS"
            )?;
            for job in &cfg.jobs {
                let last = jobs::blocking(|| jobs::runs(&stores.index, Some(&job.name), 1))?
                    .into_iter()
                    .next();
                let (status, when) = match &last {
                    Some(r) => (jobs::status_label(r, now), r.started.to_rfc3339()),
                    None => ("never run".to_string(), "-".to_string()),
                };
                let (schedule, next) = match &job.schedule {
                    Some(s) => (
                        format!("{} {}", s.expr, s.tz),
                        s.next_after(now)
                            .map_or("-".to_string(), |t| t.to_rfc3339()),
                    ),
                    None => ("on request".to_string(), "-".to_string()),
                };
                writeln!(
                    out,
                    "{:<20} {:>5} {:<9} {:<22} {:<26} {:<26} {}",
                    job.name,
                    job.crawl.seeds.len(),
                    if job.recrawl.always {
                        "always"
                    } else {
                        "schedule"
                    },
                    schedule,
                    next,
                    status,
                    when
                )?;
            }
            Ok(())
        }
        JobsCommand::Run { name, json, .. } => {
            let job = find_job(cfg, name)?.clone();
            let mut run_cfg = cfg.clone();
            run_cfg.crawl = job.crawl.clone();
            let report = ingest::run_job(
                &run_cfg,
                stores,
                CrawlRun {
                    progress,
                    conditional: true,
                    job: Some(JobRun {
                        name: job.name.clone(),
                        recrawl: job.recrawl.clone(),
                    }),
                    cancel,
                },
            )
            .await?;
            write_report(out, &report, *json)
        }
        JobsCommand::Status { name, limit, json } => {
            let runs = jobs::blocking(|| jobs::runs(&stores.index, name.as_deref(), *limit))?;
            if *json {
                for r in &runs {
                    writeln!(out, "{}", serde_json::to_string(r)?)?;
                }
                return Ok(());
            }
            if runs.is_empty() {
                writeln!(out, "no runs recorded")?;
            }
            let now = chrono::Utc::now();
            for r in &runs {
                let s: ingest::IngestSummary =
                    serde_json::from_value(r.summary.clone()).unwrap_or_default();
                writeln!(
                    out,
                    "{}  {}  {}{}  pages {} (new {}, changed {}, unchanged {}), not modified {}, failures {}{}",
                    r.job,
                    r.started.to_rfc3339(),
                    jobs::status_label(r, now),
                    r.ended
                        .map_or(String::new(), |e| format!(" until {}", e.to_rfc3339())),
                    s.pages,
                    s.new,
                    s.changed,
                    s.unchanged,
                    s.not_modified,
                    s.failures_total(),
                    r.error
                        .as_ref()
                        .map_or(String::new(), |e| format!("  error: {e}"))
                )?;
            }
            Ok(())
        }
    }
}

/// The job named `name`, or an error listing the known ones.
pub fn find_job<'a>(cfg: &'a Config, name: &str) -> Result<&'a jobs::Job> {
    cfg.jobs.iter().find(|j| j.name == name).with_context(|| {
        let known: Vec<&str> = cfg.jobs.iter().map(|j| j.name.as_str()).collect();
        format!(
            "no job named {name:?} (known: {})",
            if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            }
        )
    })
}

/// A run's summary (human or JSON).
pub fn write_report(out: &mut (dyn Write + Send), report: &RunReport, json: bool) -> Result<()> {
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(report)?)?;
        return Ok(());
    }
    if let (Some(job), Some(started)) = (&report.job, report.started) {
        writeln!(
            out,
            "job            {job} (run started {}{})",
            started.to_rfc3339(),
            if report.resumed > 0 {
                format!(
                    ", taken up {} time(s) after an interruption",
                    report.resumed
                )
            } else {
                String::new()
            }
        )?;
    }
    write!(out, "{}", report.summary.render())?;
    if report.not_due > 0 {
        writeln!(
            out,
            "not due        {:>8}   (known articles whose revisit is not due yet)",
            report.not_due
        )?;
    }
    if report.cancelled {
        writeln!(
            out,
            "stopped        on request before the queue was done: the next run takes it up"
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names listed are the commands that go through a server, and only those: each
    /// parses to a command that uses the archive, and every other command does not.
    #[test]
    fn archive_commands_are_the_ones_that_use_the_archive() {
        use clap::{CommandFactory, Parser};
        fn minimal(name: &str) -> Vec<&str> {
            match name {
                "jobs" => vec!["harvest", "jobs", "list"],
                "get" => vec!["harvest", "get", "http://example.com/"],
                "export" => vec!["harvest", "export", "cdxj"],
                "import" => vec!["harvest", "import", "a.warc.gz"],
                other => vec!["harvest", other],
            }
        }
        for sub in crate::cli::Cli::command().get_subcommands() {
            let name = sub.get_name();
            let listed = ARCHIVE_COMMANDS.contains(&name);
            match crate::cli::Cli::try_parse_from(minimal(name)) {
                Ok(cli) => assert_eq!(cli.command.uses_archive(), listed, "{name}"),
                Err(e) => assert!(!listed, "{name} is listed and does not parse: {e}"),
            }
        }
        assert_eq!(archive_commands_listed().matches(", ").count(), 9);
    }
}
