//! `harvest`: glue code, not a library. It owns the command line and the
//! configuration and wires the stage crates (crawler, classifier, packer,
//! indexer) together.

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Parser;
use harvest::cli::{
    Cli, ClusterCommand, Command, ConfigCommand, JobsCommand, LogFormat, ModelCommand,
};
use harvest::config::{self, Config};
use harvest::{bench, demo, filters, jobs, pipeline, runtime, stores};

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_tracing(cli.verbose, cli.log_format);
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            if is_broken_pipe(&err) {
                return ExitCode::SUCCESS;
            }
            eprintln!("harvest: error: {err}");
            for cause in err.chain().skip(1) {
                eprintln!("  caused by: {cause}");
            }
            ExitCode::from(1)
        }
    }
}

fn init_tracing(verbose: u8, format: LogFormat) {
    let default = match verbose {
        0 => "warn",
        1 => "info",
        _ => "debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("HARVEST_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    // Colour only on a terminal: a log file or journald gets plain text.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(ansi);
    let _ = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
}

/// Prints a run's summary (human or JSON).
fn print_report(report: &pipeline::RunReport, json: bool) -> Result<()> {
    if json {
        println!("{}", serde_json::to_string_pretty(report)?);
        return Ok(());
    }
    if let (Some(job), Some(started)) = (&report.job, report.started) {
        println!(
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
        );
    }
    print!("{}", report.summary.render());
    if report.not_due > 0 {
        println!(
            "not due        {:>8}   (known articles whose revisit is not due yet)",
            report.not_due
        );
    }
    Ok(())
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

fn run(cli: Cli) -> Result<()> {
    let config_path = cli.config.as_deref();
    match cli.command {
        Command::Crawl(args) => {
            let mut cfg = Config::load(config_path)?;
            args.apply(&mut cfg)?;
            if cfg.crawl.seeds.is_empty() {
                anyhow::bail!("no seeds: give --seed URL or [crawl] seeds in harvest.toml");
            }
            let stores = stores::Stores::open(&cfg)?;
            // An ad-hoc crawl is a job too: its queue survives a kill and the
            // next `harvest crawl` takes an interrupted run up.
            let report = runtime()?.block_on(pipeline::run_job(
                &cfg,
                &stores,
                pipeline::CrawlRun {
                    progress: pipeline::Progress::for_stderr(args.quiet),
                    conditional: !args.no_conditional,
                    job: Some(pipeline::JobRun {
                        name: jobs::AD_HOC_JOB.to_string(),
                        recrawl: jobs::Recrawl::always(),
                    }),
                },
            ))?;
            print_report(&report, args.json)
        }
        Command::Jobs { command } => {
            let cfg = Config::load(config_path)?;
            match command {
                JobsCommand::List => {
                    if cfg.jobs.is_empty() {
                        println!("no [[job]] tables in the config");
                        return Ok(());
                    }
                    let stores = stores::Stores::open(&cfg)?;
                    let now = chrono::Utc::now();
                    println!(
                        "{:<20} {:>6} {:<10} {:<26} LAST RUN",
                        "JOB", "SEEDS", "RECRAWL", "STATUS"
                    );
                    for job in &cfg.jobs {
                        let last = jobs::runs(&stores.index, Some(&job.name), 1)?
                            .into_iter()
                            .next();
                        let (status, when) = match &last {
                            Some(r) => (jobs::status_label(r, now), r.started.to_rfc3339()),
                            None => ("never run".to_string(), "-".to_string()),
                        };
                        println!(
                            "{:<20} {:>6} {:<10} {:<26} {}",
                            job.name,
                            job.crawl.seeds.len(),
                            if job.recrawl.always {
                                "always"
                            } else {
                                "schedule"
                            },
                            status,
                            when
                        );
                    }
                    Ok(())
                }
                JobsCommand::Run { name, quiet, json } => {
                    let job = cfg
                        .jobs
                        .iter()
                        .find(|j| j.name == name)
                        .with_context(|| {
                            let known: Vec<&str> =
                                cfg.jobs.iter().map(|j| j.name.as_str()).collect();
                            format!(
                                "no job named {name:?} (known: {})",
                                if known.is_empty() {
                                    "none".to_string()
                                } else {
                                    known.join(", ")
                                }
                            )
                        })?
                        .clone();
                    let mut run_cfg = cfg.clone();
                    run_cfg.crawl = job.crawl.clone();
                    let stores = stores::Stores::open(&run_cfg)?;
                    let report = runtime()?.block_on(pipeline::run_job(
                        &run_cfg,
                        &stores,
                        pipeline::CrawlRun {
                            progress: pipeline::Progress::for_stderr(quiet),
                            conditional: true,
                            job: Some(pipeline::JobRun {
                                name: job.name.clone(),
                                recrawl: job.recrawl.clone(),
                            }),
                        },
                    ))?;
                    print_report(&report, json)
                }
                JobsCommand::Status { name, limit, json } => {
                    let stores = stores::Stores::open(&cfg)?;
                    let runs = jobs::runs(&stores.index, name.as_deref(), limit)?;
                    if json {
                        for r in &runs {
                            println!("{}", serde_json::to_string(r)?);
                        }
                        return Ok(());
                    }
                    if runs.is_empty() {
                        println!("no runs recorded");
                    }
                    let now = chrono::Utc::now();
                    for r in &runs {
                        let s: pipeline::IngestSummary =
                            serde_json::from_value(r.summary.clone()).unwrap_or_default();
                        println!(
                            "{}  {}  {}{}  pages {} (new {}, changed {}, unchanged {}), not modified {}, failures {}{}",
                            r.job,
                            r.started.to_rfc3339(),
                            jobs::status_label(r, now),
                            r.ended.map_or(String::new(), |e| format!(" {}", e.to_rfc3339())),
                            s.pages,
                            s.new,
                            s.changed,
                            s.unchanged,
                            s.not_modified,
                            s.failures_total(),
                            r.error.as_ref().map_or(String::new(), |e| format!("  error: {e}"))
                        );
                    }
                    Ok(())
                }
            }
        }
        Command::Query(args) => {
            let cfg = Config::load(config_path)?;
            let stores = stores::Stores::open(&cfg)?;
            filters::run_query(&stores, &args)
        }
        Command::Stats(args) => {
            let cfg = Config::load(config_path)?;
            let stores = stores::Stores::open(&cfg)?;
            filters::run_stats(&stores, &args)
        }
        Command::Get(args) => {
            let cfg = Config::load(config_path)?;
            let stores = stores::Stores::open(&cfg)?;
            let bytes = filters::get_original(&stores, &args.url, args.record)?;
            let mut out = std::io::stdout().lock();
            out.write_all(&bytes)?;
            out.flush()?;
            Ok(())
        }
        Command::Serve(args) => {
            let cfg = Config::load(config_path)?;
            let stores = stores::Stores::open(&cfg)?;
            runtime()?.block_on(harvest::serve::serve(
                stores,
                harvest::serve::ServeOptions {
                    listen: args.listen,
                    token: args.token,
                },
            ))
        }
        Command::Demo(args) => demo::run(&args),
        Command::Config { command } => match command {
            ConfigCommand::Check { file } => {
                let path = file.as_deref().or(config_path);
                let cfg = Config::load(path)?;
                println!(
                    "config OK: {}",
                    path.map_or("(defaults, no harvest.toml)".to_string(), |p| p
                        .display()
                        .to_string())
                );
                println!("  packs    {}", cfg.packs);
                println!("  index    {:?}", cfg.index);
                println!("  buckets  {}", cfg.buckets);
                println!("  model    {}", cfg.model.display());
                println!("  seeds    {}", cfg.crawl.seeds.len());
                println!("  sources  {}", cfg.sources.len());
                Ok(())
            }
            ConfigCommand::Sample => {
                print!("{}", config::SAMPLE_CONFIG);
                Ok(())
            }
        },
        Command::Model { command } => match command {
            ModelCommand::Train { corpus, out } => {
                let spec: classifier::CorpusSpec = corpus.parse()?;
                let docs = spec
                    .load()
                    .with_context(|| format!("cannot read corpus {corpus}"))?;
                let started = std::time::Instant::now();
                let opts = classifier::TrainOptions {
                    trained_on: corpus.clone(),
                    ..Default::default()
                };
                let model = classifier::Model::train(&docs, &opts)?;
                model.save(&out)?;
                println!(
                    "trained on {} documents, {} classes in {:.2} s -> {}",
                    docs.len(),
                    model.classes.len(),
                    started.elapsed().as_secs_f64(),
                    out.display()
                );
                Ok(())
            }
            ModelCommand::Eval { model, corpus } => {
                let m = classifier::Model::load(&model)?;
                let spec: classifier::CorpusSpec = corpus.parse()?;
                let docs = spec
                    .load()
                    .with_context(|| format!("cannot read corpus {corpus}"))?;
                let e = m.evaluate(&docs)?;
                print!("{e}");
                Ok(())
            }
            ModelCommand::Bench { cache, python } => {
                let python = python.exists().then_some(python.as_path());
                if python.is_none() {
                    eprintln!(
                        "harvest: scikit-learn peer not found; set it up with deploy/data/setup-peers.sh ({})",
                        classifier::bench::VENV_SETUP
                    );
                }
                let report = classifier::bench::run(&cache, python)?;
                println!("{report}");
                Ok(())
            }
            ModelCommand::Info { model } => {
                let path = match model {
                    Some(p) => p,
                    None => Config::load(config_path)?.model,
                };
                let m = classifier::Model::load(&path)?;
                println!("model       {}", path.display());
                println!("format      {}", m.format_version);
                println!("classes     {}", m.classes.join(", "));
                println!("trained on  {}", m.trained_on);
                println!("created     {}", m.created);
                Ok(())
            }
        },
        Command::Bench(args) => bench::run(&args),
        Command::Cluster { command } => {
            let cfg = Config::load(config_path)?;
            match command {
                ClusterCommand::Check => print!("{}", stores::check(&cfg)?),
                ClusterCommand::Init => {
                    for t in stores::init(&cfg)? {
                        println!("table {t} ready");
                    }
                }
            }
            Ok(())
        }
    }
}
