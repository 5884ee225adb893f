//! `harvest`: glue code, not a library. It owns the command line and the
//! configuration and wires the stage crates (crawler, classifier, packer,
//! indexer) together.

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Parser;
use harvest::cli::{Cli, ClusterCommand, Command, ConfigCommand, ModelCommand};
use harvest::config::{self, Config};
use harvest::{bench, demo, filters, pipeline, runtime, stores};

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_tracing(cli.verbose);
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

fn init_tracing(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "info",
        _ => "debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("HARVEST_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
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
            let summary = runtime()?.block_on(pipeline::run_crawl(
                &cfg,
                &stores,
                pipeline::CrawlRun {
                    progress: !args.quiet,
                    conditional: !args.no_conditional,
                },
            ))?;
            if args.json {
                println!("{}", serde_json::to_string_pretty(&summary)?);
            } else {
                print!("{}", summary.render());
            }
            Ok(())
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
                let default_file = std::path::Path::new(config::DEFAULT_CONFIG_FILE);
                let path = path.or_else(|| default_file.exists().then_some(default_file));
                println!(
                    "config OK: {}",
                    path.map_or("(defaults, no harvest.toml)".to_string(), |p| p
                        .display()
                        .to_string())
                );
                let abs = |p: &std::path::Path| config::absolute(p).display().to_string();
                println!("  data dir {}", abs(&cfg.data_dir));
                let packs = if cfg.packs.contains("://") {
                    cfg.packs.clone()
                } else {
                    abs(std::path::Path::new(&cfg.packs))
                };
                println!("  packs    {packs}");
                match &cfg.index {
                    config::IndexBackend::Embedded { path } => {
                        println!("  index    embedded {}", abs(path))
                    }
                    other => println!("  index    {other:?}"),
                }
                println!("  buckets  {}", cfg.buckets);
                println!("  model    {}", abs(&cfg.model));
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
