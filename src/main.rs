//! `harvest`: glue code, not a library. It owns the command line and the
//! configuration and wires the stage crates (crawler, classifier, packer,
//! indexer) together.

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Parser;
use harvest::cli::{Cli, ClusterCommand, Command, ConfigCommand, LogFormat, ModelCommand};
use harvest::config::{self, Config};
use harvest::{commands, demo, ingest, logline, outfile, remote, runtime, stores};

/// jemalloc instead of glibc malloc: a crawl allocates and frees many small
/// strings per page (the HTML tree, tendrils, URLs) from several threads, and
/// glibc's malloc/free/consolidate took ~15% of a full crawl's CPU.
#[global_allocator]
static ALLOC: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(&e),
    };
    harvest::init_tracing(cli.verbose, cli.log_format);
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            if is_broken_pipe(&err) {
                return ExitCode::SUCCESS;
            }
            // The command ran in `harvest serve`, which printed its messages.
            if let Some(commands::Exit(code)) = err.downcast_ref::<commands::Exit>() {
                return ExitCode::from(*code);
            }
            logline::error(&err);
            ExitCode::from(EXIT_ERROR)
        }
    }
}

/// Exit code of a command that failed (README, "Exit codes").
const EXIT_ERROR: u8 = 1;

/// A command line that does not parse (exit code 2, clap's) or asks for
/// `--help` / `--version` (exit code 0, printed on stdout). With
/// `--log-format json` on the command line the usage error is one JSON log
/// line, as every other line on stderr.
fn usage_error(e: &clap::Error) -> ExitCode {
    let code = u8::try_from(e.exit_code()).unwrap_or(2);
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if e.use_stderr() && logline::json_requested(&args) {
        let text = e.render().to_string();
        let message = text
            .trim()
            .strip_prefix("error: ")
            .unwrap_or(text.trim())
            .to_string();
        eprintln!("{}", logline::json_line("ERROR", &message, None));
    } else {
        let _ = e.print();
    }
    ExitCode::from(code)
}

/// The exit code of a crawl stopped by a signal (130 Ctrl-C, 143 SIGTERM),
/// 0 while none came.
static STOPPED_BY: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// Ctrl-C or SIGTERM (systemd's stop) ends a crawl the way a run of the
/// server is cancelled: no new fetches, the pages in flight are stored and
/// indexed, the run is recorded as cancelled with its queue, and the next
/// run takes it up. A second signal stops at once, as a kill would (the
/// next run takes that up too).
async fn stop_on_signal(cancel: crawler::CancellationToken) {
    #[cfg(unix)]
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    for round in 0.. {
        let code: u8 = {
            #[cfg(unix)]
            let term_recv = async {
                match term.as_mut() {
                    Some(t) => {
                        t.recv().await;
                    }
                    None => std::future::pending().await,
                }
            };
            #[cfg(not(unix))]
            let term_recv = std::future::pending::<()>();
            tokio::select! {
                r = tokio::signal::ctrl_c() => {
                    if r.is_err() {
                        return;
                    }
                    130
                }
                _ = term_recv => 143,
            }
        };
        if round > 0 {
            logline::say("harvest: stopped at once; the next run takes the crawl up");
            #[expect(
                clippy::exit,
                reason = "a second signal stops at once, as a kill would; the run is taken up"
            )]
            std::process::exit(i32::from(code));
        }
        STOPPED_BY.store(code, std::sync::atomic::Ordering::SeqCst);
        logline::say(
            "harvest: stopping: storing the pages in flight, the next run takes the crawl up \
             (a second Ctrl-C stops at once)",
        );
        cancel.cancel();
    }
}

/// `harvest bench ARGS...`: `harvest-bench ARGS...`, the benchmarks' own
/// program beside this executable, with this run's `-v` and `--log-format`;
/// its exit code is ours.
fn run_bench(args: Vec<std::ffi::OsString>, verbose: u8, log_format: LogFormat) -> Result<()> {
    let me = std::env::current_exe().context("cannot locate the harvest executable")?;
    let exe = me.with_file_name(format!("harvest-bench{}", std::env::consts::EXE_SUFFIX));
    if !exe.is_file() {
        anyhow::bail!(
            "the benchmarks are a separate program, {}, which is not built: \
             build it with `cargo build --release -p harvest-bench`",
            exe.display()
        );
    }
    let mut cmd = std::process::Command::new(&exe);
    for _ in 0..verbose {
        cmd.arg("-v");
    }
    if log_format == LogFormat::Json {
        cmd.args(["--log-format", "json"]);
    }
    let status = cmd
        .args(args)
        .status()
        .with_context(|| format!("cannot run {}", exe.display()))?;
    if status.success() {
        return Ok(());
    }
    // A benchmark killed by a signal exits as a shell reports it (128 + signal).
    #[cfg(unix)]
    let signal = std::os::unix::process::ExitStatusExt::signal(&status);
    #[cfg(not(unix))]
    let signal: Option<i32> = None;
    let code = status
        .code()
        .or(signal.map(|s| 128 + s))
        .and_then(|c| u8::try_from(c).ok())
        .filter(|&c| c != 0)
        .unwrap_or(1);
    Err(commands::Exit(code).into())
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// A command that works on the archive ([`commands::Command::uses_archive`]): through a
/// running `harvest serve` when one owns the store, else on the store opened here.
fn run_archive_command(cli: &Cli) -> Result<()> {
    anyhow::ensure!(
        cli.command.uses_archive(),
        "internal: a command without its own branch in main.rs is not an archive command"
    );
    let config_path = cli.config.as_deref();
    let cfg = Config::load(config_path)?;
    // One process owns the embedded store: with `harvest serve`
    // running on it, the command runs inside the server.
    // A server that refuses connections ran nothing: the store is
    // opened here (and fails "in use" if a live process holds it).
    if let Some(info) = remote::find(&cfg) {
        match remote::forward(&info, remote::forwarded_args(), cli.command.output_file()) {
            Ok(0) => return Ok(()),
            Ok(code) => return Err(anyhow::Error::new(commands::Exit(code))),
            Err(e) => match e.downcast_ref::<remote::Unreachable>() {
                Some(gone) => {
                    logline::say(&format!("harvest: {gone}; opening the store here instead"))
                }
                None => return Err(e),
            },
        }
    }
    let access = if cli.command.writes_archive() {
        stores::Access::Write
    } else {
        stores::Access::Read
    };
    let stores = stores::Stores::open_for(&cfg, access)?;
    let progress = ingest::Progress::for_stderr(cli.command.quiet());
    let mut out = std::io::BufWriter::new(std::io::stdout());
    let mut err = logline::StderrLines::new();
    let cancel = crawler::CancellationToken::new();
    let rt = runtime()?;
    let stopped = cli
        .command
        .crawls()
        .then(|| rt.spawn(stop_on_signal(cancel.clone())));
    rt.block_on(commands::run(
        &cli.command,
        &cfg,
        &stores,
        &mut out,
        &mut err,
        &outfile::Files::Local,
        progress,
        cancel,
    ))?;
    out.flush()?;
    // A crawl stopped by a signal says so in its exit code, as a
    // killed one would (128 + the signal), after its summary.
    if let Some(code) = stopped.and_then(|s| {
        s.abort();
        let code = STOPPED_BY.load(std::sync::atomic::Ordering::SeqCst);
        (code != 0).then_some(code)
    }) {
        return Err(anyhow::Error::new(commands::Exit(code)));
    }
    Ok(())
}

fn run(cli: Cli) -> Result<()> {
    let config_path = cli.config.as_deref();
    match cli.command {
        Command::Serve(args) => serve(args, config_path),
        Command::Reindex(args) => reindex(&args, config_path),
        Command::Demo(args) => demo::run(&args),
        Command::Config { command } => config_command(command, config_path),
        Command::Model { command } => {
            model_command(command, config_path, cli.verbose, cli.log_format)
        }
        Command::Bench { args } => run_bench(args, cli.verbose, cli.log_format),
        Command::Cluster { command } => cluster_command(command, config_path),
        // The commands that work on the archive (`Command::uses_archive`).
        _ => run_archive_command(&cli),
    }
}

/// `harvest serve`.
fn serve(args: harvest::cli::ServeArgs, config_path: Option<&std::path::Path>) -> Result<()> {
    let cfg = Config::load(config_path)?;
    // A server with jobs to run, or on a fresh data_dir, creates the
    // archive; otherwise it serves an existing one (read-only media
    // included).
    let stores = stores::Stores::open_for(&cfg, stores::Access::for_serve(&cfg))?;
    runtime()?.block_on(harvest::serve::serve(
        stores,
        harvest::serve::ServeOptions {
            listen: args.listen,
            token: args.token,
            allowed_hosts: args.allow_host,
            admission: {
                let mut a = harvest::serve::AdmissionLimits::default();
                if let Some(n) = args.max_queries {
                    a.max_queries = n.max(1);
                }
                a.queue_wait = std::time::Duration::from_millis(args.queue_wait_ms);
                a
            },
            config: Some(cfg),
            config_file: config::config_file(config_path),
            limits: harvest::serve::ServerLimits {
                max_connections: args.max_connections,
                header_timeout: std::time::Duration::from_secs(args.header_timeout),
                max_idle_per_client: args.max_idle_per_client,
            },
        },
    ))
}

/// `harvest reindex`.
fn reindex(args: &harvest::cli::ReindexArgs, config_path: Option<&std::path::Path>) -> Result<()> {
    let cfg = Config::load(config_path)?;
    if let Some(info) = remote::find(&cfg) {
        anyhow::bail!(
            "`harvest serve` (pid {}) has this archive open: stop it first, reindex replaces the index it reads",
            info.pid
        );
    }
    if args.replace {
        if let config::IndexBackend::Embedded { path } = &cfg.index {
            if path.exists() {
                let aside = std::path::PathBuf::from(format!(
                    "{}.replaced-{}",
                    path.display(),
                    chrono::Utc::now().format("%Y%m%dT%H%M%SZ")
                ));
                std::fs::rename(path, &aside)
                    .with_context(|| format!("cannot set {} aside", path.display()))?;
                logline::say(&format!(
                    "harvest: the old index is kept at {}",
                    aside.display()
                ));
            }
        } else {
            anyhow::bail!(
                "--replace works on the embedded index; on HBase drop the archive's tables first"
            );
        }
    }
    let stores = stores::Stores::open_for(&cfg, stores::Access::Write)?;
    let mut sink = std::io::sink();
    let mut stderr = logline::StderrLines::new();
    let progress: &mut dyn std::io::Write = if args.quiet { &mut sink } else { &mut stderr };
    let summary = harvest::replay::reindex(&cfg, &stores, progress)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        print!("{}", summary.render("reindex"));
    }
    Ok(())
}

/// `harvest config check|sample`.
fn config_command(command: ConfigCommand, config_path: Option<&std::path::Path>) -> Result<()> {
    match command {
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
    }
}

/// `harvest model train|eval|bench|info`.
fn model_command(
    command: ModelCommand,
    config_path: Option<&std::path::Path>,
    verbose: u8,
    log_format: LogFormat,
) -> Result<()> {
    match command {
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
        ModelCommand::Bench { cache, python } => run_bench(
            vec![
                "model".into(),
                "--cache".into(),
                cache.into_os_string(),
                "--python".into(),
                python.into_os_string(),
            ],
            verbose,
            log_format,
        ),
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
    }
}

/// `harvest cluster check|init`.
fn cluster_command(command: ClusterCommand, config_path: Option<&std::path::Path>) -> Result<()> {
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
