//! The fuzz driver of harvest's parser targets (issue 13), on stable Rust.
//!
//! A target is a proptest strategy (inputs: arbitrary bytes, and valid
//! documents of the format with random mutations) and a function that must
//! neither panic nor hang on any input. [`fuzz`] runs it:
//!
//! - by default [`SMOKE_CASES`] cases (the CI smoke run, bounded);
//! - with `HARVEST_FUZZ_CASES=N`, N cases;
//! - with `HARVEST_FUZZ_SECS=S`, as many cases as fit in S seconds
//!   (`deploy/fuzz.sh`).
//!
//! A panic, or a case slower than `HARVEST_FUZZ_HANG_MS` (default 5,000),
//! is a crash: proptest shrinks the input and the test fails naming it. Each
//! run appends `target executions seconds crashes slowest_ms` to the file
//! named by `HARVEST_FUZZ_REPORT`, if set, and prints it to stderr.

use std::fmt::Debug;
use std::io::Write;
use std::time::{Duration, Instant};

pub use proptest;
use proptest::strategy::Strategy;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};

/// Cases per target in the CI smoke run.
pub const SMOKE_CASES: u32 = 256;
/// Cases per round of a timed run (a fresh seed each round).
const ROUND_CASES: u32 = 512;
/// Default slowest case that is not a hang.
const DEFAULT_HANG_MS: u64 = 5_000;

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok()?.trim().parse().ok()
}

/// What a run did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Report {
    pub executions: u64,
    pub seconds: f64,
    pub slowest: Duration,
}

/// Runs `target` on inputs from `strategy` (see the crate docs); panics
/// with the shrunk input when a case crashes or hangs.
pub fn fuzz<S, F>(name: &str, strategy: S, target: F) -> Report
where
    S: Strategy,
    S::Value: Debug,
    F: Fn(S::Value),
{
    let hang = Duration::from_millis(env_u64("HARVEST_FUZZ_HANG_MS").unwrap_or(DEFAULT_HANG_MS));
    let deadline = env_u64("HARVEST_FUZZ_SECS").map(|s| Instant::now() + Duration::from_secs(s));
    let cases =
        env_u64("HARVEST_FUZZ_CASES").map_or(SMOKE_CASES, |c| c.clamp(1, u32::MAX as u64) as u32);
    let start = Instant::now();
    let executions = std::cell::Cell::new(0u64);
    let slowest = std::cell::Cell::new(Duration::ZERO);
    let mut round = 0u64;
    let seed = env_u64("HARVEST_FUZZ_SEED").unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
    });
    loop {
        let round_cases = if deadline.is_some() {
            ROUND_CASES
        } else {
            cases
        };
        let config = Config {
            cases: round_cases,
            failure_persistence: None,
            max_shrink_iters: 2_000,
            ..Config::default()
        };
        let mut key = [0u8; 32];
        key[..8].copy_from_slice(&seed.to_le_bytes());
        key[8..16].copy_from_slice(&round.to_le_bytes());
        let name_hash = name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        key[16..24].copy_from_slice(&name_hash.to_le_bytes());
        let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &key);
        let mut runner = TestRunner::new_with_rng(config, rng);
        let outcome = runner.run(&strategy, |input| {
            let t0 = Instant::now();
            target(input);
            let took = t0.elapsed();
            executions.set(executions.get() + 1);
            slowest.set(slowest.get().max(took));
            if took > hang {
                return Err(TestCaseError::fail(format!("hang: one case took {took:?}")));
            }
            Ok(())
        });
        if let Err(e) = outcome {
            report(name, executions.get(), start.elapsed(), 1, slowest.get());
            panic!(
                "fuzz target {name}: crash after {} executions (seed {seed}): {e}",
                executions.get()
            );
        }
        round += 1;
        match deadline {
            Some(d) if Instant::now() < d => continue,
            _ => break,
        }
    }
    report(name, executions.get(), start.elapsed(), 0, slowest.get());
    Report {
        executions: executions.get(),
        seconds: start.elapsed().as_secs_f64(),
        slowest: slowest.get(),
    }
}

fn report(name: &str, executions: u64, took: Duration, crashes: u32, slowest: Duration) {
    let line = format!(
        "{name} {executions} {:.1} {crashes} {}",
        took.as_secs_f64(),
        slowest.as_millis()
    );
    eprintln!("fuzz: {line}");
    if let Ok(path) = std::env::var("HARVEST_FUZZ_REPORT") {
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
        {
            let _ = writeln!(f, "{line}");
        }
    }
}

/// Strategies shared by the targets.
pub mod gen {
    use proptest::prelude::*;

    /// Arbitrary bytes up to `max` long.
    pub fn bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(any::<u8>(), 0..max)
    }

    /// One edit of a document.
    #[derive(Debug, Clone)]
    pub enum Edit {
        /// Set the byte at (position mod length).
        Set(usize, u8),
        /// Remove up to n bytes at a position.
        Remove(usize, usize),
        /// Insert bytes at a position.
        Insert(usize, Vec<u8>),
        /// Cut the document at a position.
        Truncate(usize),
        /// Copy a span to another position.
        Duplicate(usize, usize, usize),
    }

    /// Up to `n` random edits.
    pub fn edits(n: usize) -> impl Strategy<Value = Vec<Edit>> {
        let edit = prop_oneof![
            4 => (any::<usize>(), any::<u8>()).prop_map(|(p, b)| Edit::Set(p, b)),
            2 => (any::<usize>(), 1usize..64).prop_map(|(p, n)| Edit::Remove(p, n)),
            2 => (any::<usize>(), bytes(32)).prop_map(|(p, b)| Edit::Insert(p, b)),
            1 => any::<usize>().prop_map(Edit::Truncate),
            1 => (any::<usize>(), 1usize..256, any::<usize>()).prop_map(|(a, n, b)| Edit::Duplicate(a, n, b)),
        ];
        proptest::collection::vec(edit, 0..n)
    }

    /// `doc` with `edits` applied.
    pub fn apply(doc: &[u8], edits: &[Edit]) -> Vec<u8> {
        let mut d = doc.to_vec();
        for e in edits {
            let len = d.len().max(1);
            match e {
                Edit::Set(p, b) => {
                    if !d.is_empty() {
                        let i = p % d.len();
                        d[i] = *b;
                    }
                }
                Edit::Remove(p, n) => {
                    let i = p % len;
                    let end = (i + n).min(d.len());
                    if i < end {
                        d.drain(i..end);
                    }
                }
                Edit::Insert(p, b) => {
                    let i = (p % (d.len() + 1)).min(d.len());
                    d.splice(i..i, b.iter().copied());
                }
                Edit::Truncate(p) => {
                    let i = p % (d.len() + 1);
                    d.truncate(i);
                }
                Edit::Duplicate(a, n, b) => {
                    if !d.is_empty() {
                        let from = a % d.len();
                        let end = (from + n).min(d.len());
                        let span = d[from..end].to_vec();
                        let at = b % (d.len() + 1);
                        d.splice(at..at, span);
                    }
                }
            }
        }
        d
    }

    /// One of `docs`, mutated.
    pub fn mutated(docs: Vec<Vec<u8>>, max_edits: usize) -> impl Strategy<Value = Vec<u8>> {
        let n = docs.len().max(1);
        (0..n, edits(max_edits)).prop_map(move |(i, e)| match docs.get(i) {
            Some(d) => apply(d, &e),
            None => Vec::new(),
        })
    }

    /// Arbitrary bytes half of the time, a mutated document otherwise.
    pub fn bytes_or_mutated(docs: Vec<Vec<u8>>, max: usize) -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![1 => bytes(max), 3 => mutated(docs, 8)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_executions_and_reports_a_crash() {
        let r = fuzz("selftest", gen::bytes(16), |b| {
            let _ = b.len();
        });
        assert!(r.executions >= u64::from(SMOKE_CASES));
        let crashed = std::panic::catch_unwind(|| {
            fuzz("selftest-crash", gen::bytes(64), |b| {
                assert!(b.len() < 8, "long input");
            })
        });
        assert!(crashed.is_err());
    }

    #[test]
    fn edits_apply_without_panics() {
        let doc = b"hello world".to_vec();
        let e = vec![
            gen::Edit::Set(100, b'x'),
            gen::Edit::Remove(3, 100),
            gen::Edit::Insert(1000, vec![1, 2]),
            gen::Edit::Duplicate(1, 3, 2),
            gen::Edit::Truncate(2),
        ];
        let out = gen::apply(&doc, &e);
        assert!(out.len() <= doc.len() + 10);
        // On an empty document only the insertions (and copies of them) remain.
        assert!(gen::apply(&[], &e).len() <= 4);
    }
}
