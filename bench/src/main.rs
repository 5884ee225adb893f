//! `harvest-bench`: the benchmarks' program (`harvest bench ...` runs it);
//! the benchmarks themselves are this package's library.

use std::process::ExitCode;

use clap::Parser;
use harvest_bench::cli::Cli;

/// jemalloc, as in the `harvest` binary: the in-process benchmarks (api,
/// locality, cluster-ingest's crawls) measure the allocator the product uses.
#[global_allocator]
static ALLOC: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    harvest::init_tracing(cli.verbose, cli.log_format);
    match harvest_bench::run(&cli.bench) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("harvest-bench: error: {err}");
            for cause in err.chain().skip(1) {
                eprintln!("  caused by: {cause}");
            }
            ExitCode::from(1)
        }
    }
}
