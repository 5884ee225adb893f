//! Shared helpers of the corpus tests: the real corpora, fetched once by
//! `deploy/data/fetch-corpora.sh` into `deploy/cache/`.

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

/// Files the fetch script provides.
pub const CORPUS_FILES: [&str; 5] = [
    "20newsgroups-train.tab",
    "20newsgroups-test.tab",
    "reuters-r8-train.tab",
    "reuters-r8-test.tab",
    "thucnews_train_1w.txt",
];

/// The corpus cache folder, filled by the fetch script if anything is missing. Panics (the
/// test fails) if the script cannot provide the corpora.
pub fn corpus_dir() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
        let cache = root.join("deploy/cache");
        if CORPUS_FILES.iter().any(|f| !cache.join(f).is_file()) {
            let script = root.join("deploy/data/fetch-corpora.sh");
            let status = Command::new("bash")
                .arg(&script)
                .arg(&cache)
                .status()
                .unwrap_or_else(|e| panic!("cannot run {}: {e}", script.display()));
            assert!(
                status.success(),
                "{} failed ({status}); the corpus tests need the real corpora",
                script.display()
            );
        }
        for f in CORPUS_FILES {
            assert!(
                cache.join(f).is_file(),
                "{f} missing in {}",
                cache.display()
            );
        }
        cache
    })
    .clone()
}

/// A corpus spec string for a file of the cache.
#[allow(dead_code)] // not every test binary that includes this module uses it
pub fn spec(kind: &str, file: &str, split: &str) -> String {
    format!("{kind}:{}{split}", corpus_dir().join(file).display())
}
