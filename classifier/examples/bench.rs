//! Runs `classifier::bench::run` (what `harvest model bench` calls) and prints the report:
//!
//! ```text
//! cargo run -p classifier --release --example bench -- [CACHE_DIR] [PYTHON]
//! cargo run -p classifier --release --example bench -- deploy/cache deploy/cache/venv/bin/python
//! ```

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let cache = PathBuf::from(args.first().map_or("deploy/cache", String::as_str));
    let python = args.get(1).map(PathBuf::from);
    let report = classifier::bench::run(&cache, python.as_deref())?;
    print!("{report}");
    Ok(())
}
