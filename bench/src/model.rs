//! `harvest-bench model` (`harvest model bench`): the classifier crate against scikit-learn
//! on the same corpora, splits and options, in the same run.
//!
//! For 20 Newsgroups (bydate), Reuters R8 and THUCNews titles (`#train80` / `#test20`) it
//! trains a [`Model`] with the default [`TrainOptions`] (calibration included) and predicts
//! every test document, then runs `deploy/data/sklearn-baseline.py` (embedded in this program)
//! with the given Python, which does the same with `TfidfVectorizer(sublinear_tf=True)` +
//! `LinearSVC` and prints one JSON line per corpus. Train time includes tokenizing and TF-IDF
//! on both sides; predict time is one thread for both (ours: [`Model::predict`] per document).
//! Our training uses every core of the rayon pool; scikit-learn's liblinear uses one.

use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::Result;
use classifier::{CorpusSpec, Doc, Model, TrainOptions, UNKNOWN_TOPIC};
use serde::Deserialize;

/// Why the scikit-learn peer gave no figures (the report says so and keeps ours).
#[derive(Debug, thiserror::Error)]
pub enum PeerError {
    /// The interpreter could not be run or fed the script.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The interpreter.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The peer failed or printed something unexpected.
    #[error("scikit-learn baseline: {0}")]
    Baseline(String),
}

/// The peer script, run with `python -` so the binary needs no source tree.
const SKLEARN_SCRIPT: &str = include_str!("../../deploy/data/sklearn-baseline.py");
/// Flag that makes the script print JSON lines.
const JSON_FLAG: &str = "--json";
/// How to create the Python environment the peer needs.
pub const VENV_SETUP: &str = "python3 -m venv deploy/cache/venv && deploy/cache/venv/bin/pip install scikit-learn==1.9.1 jieba==0.42.1";
/// Accuracy may be at most this far below scikit-learn's (the bar of the issue).
const ACCURACY_SLACK: f64 = 0.01;
/// Minimum wall time of a throughput measurement; the documents are predicted again until
/// it is reached.
const MIN_THROUGHPUT_SECS: f64 = 0.5;

/// The benchmark corpora: name, train spec, test spec (relative to the cache folder).
const CORPORA: [(&str, &str, &str); 3] = [
    (
        "20newsgroups",
        "tab:20newsgroups-train.tab",
        "tab:20newsgroups-test.tab",
    ),
    (
        "reuters-r8",
        "tab:reuters-r8-train.tab",
        "tab:reuters-r8-test.tab",
    ),
    (
        "thucnews",
        "thucnews:thucnews_train_1w.txt#train80",
        "thucnews:thucnews_train_1w.txt#test20",
    ),
];

/// Accuracy and times of one classifier on one corpus.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Figures {
    /// Fraction of test documents classified correctly.
    pub accuracy: f64,
    /// Mean per-class F1.
    pub macro_f1: f64,
    /// Seconds to fit vocabulary and classifier on the training documents.
    pub train_s: f64,
    /// Seconds to vectorize and predict all test documents (one thread).
    pub predict_s: f64,
}

impl Figures {
    fn total_s(&self) -> f64 {
        self.train_s + self.predict_s
    }
}

/// One corpus of the report.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchRow {
    /// Corpus name.
    pub corpus: String,
    /// Training documents.
    pub train_docs: usize,
    /// Test documents.
    pub test_docs: usize,
    /// This crate.
    pub ours: Figures,
    /// scikit-learn, when it ran.
    pub sklearn: Option<Figures>,
}

impl BenchRow {
    /// Whether the bar holds: accuracy at least scikit-learn's minus one point, and
    /// train + predict time at most scikit-learn's. `None` without the peer.
    pub fn meets_bar(&self) -> Option<bool> {
        self.sklearn.as_ref().map(|s| {
            self.ours.accuracy >= s.accuracy - ACCURACY_SLACK && self.ours.total_s() <= s.total_s()
        })
    }
}

/// Single-thread prediction throughput on real documents.
#[derive(Debug, Clone, PartialEq)]
pub struct Throughput {
    /// What was classified.
    pub what: String,
    /// Mean document size in bytes.
    pub mean_bytes: usize,
    /// Documents classified per second on one core.
    pub pages_per_s: f64,
}

/// Result of [`run`]; its `Display` is the printed report.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchReport {
    /// One row per corpus.
    pub rows: Vec<BenchRow>,
    /// Prediction throughput.
    pub throughput: Vec<Throughput>,
    /// Why the scikit-learn columns are missing, if they are.
    pub sklearn_missing: Option<String>,
    /// scikit-learn version reported by the peer.
    pub sklearn_version: Option<String>,
    /// Threads of the rayon pool our training used.
    pub threads: usize,
}

/// One JSON line of the peer script.
#[derive(Debug, Deserialize)]
struct PeerLine {
    corpus: String,
    sklearn: String,
    #[serde(flatten)]
    figures: Figures,
}

/// Runs the benchmark on the corpora in `cache_dir` (see `deploy/data/fetch-corpora.sh`).
/// `sklearn` is the Python interpreter with scikit-learn and jieba installed (see
/// [`VENV_SETUP`]); without it, or if it fails, the report says so and has our figures only.
pub fn run(cache_dir: &Path, sklearn: Option<&Path>) -> Result<BenchReport> {
    let mut rows = Vec::new();
    let mut throughput = Vec::new();
    for (name, train, test) in CORPORA {
        let train_docs = spec(cache_dir, train)?.load()?;
        let test_docs = spec(cache_dir, test)?.load()?;
        let opts = TrainOptions {
            trained_on: train.to_owned(),
            ..TrainOptions::default()
        };
        let t = Instant::now();
        let model = Model::train(&train_docs, &opts)?;
        let train_s = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let known = test_docs
            .iter()
            .filter(|d| model.predict(&d.text).topic != UNKNOWN_TOPIC)
            .count();
        let predict_s = t.elapsed().as_secs_f64();
        let eval = model.evaluate(&test_docs)?;
        tracing::debug!(corpus = name, known, "bench: test documents predicted");
        tracing::info!(
            corpus = name,
            accuracy = eval.accuracy,
            train_s,
            predict_s,
            "bench: corpus done"
        );
        if name != "reuters-r8" {
            throughput.push(measure_throughput(&model, name, &test_docs));
        }
        rows.push(BenchRow {
            corpus: name.to_owned(),
            train_docs: train_docs.len(),
            test_docs: test_docs.len(),
            ours: Figures {
                accuracy: eval.accuracy,
                macro_f1: eval.macro_f1,
                train_s,
                predict_s,
            },
            sklearn: None,
        });
    }
    let mut report = BenchReport {
        rows,
        throughput,
        sklearn_missing: None,
        sklearn_version: None,
        threads: rayon::current_num_threads(),
    };
    match sklearn {
        None => {
            report.sklearn_missing = Some(format!(
                "no Python given; set one up with `{VENV_SETUP}` and pass deploy/cache/venv/bin/python"
            ));
        }
        Some(python) => match run_peer(python, cache_dir) {
            Ok(lines) => {
                for line in lines {
                    report.sklearn_version = Some(line.sklearn.clone());
                    if let Some(row) = report.rows.iter_mut().find(|r| r.corpus == line.corpus) {
                        row.sklearn = Some(line.figures);
                    }
                }
            }
            Err(e) => report.sklearn_missing = Some(format!("{e} (set up: `{VENV_SETUP}`)")),
        },
    }
    Ok(report)
}

/// A spec relative to the cache folder.
fn spec(cache_dir: &Path, relative: &str) -> Result<CorpusSpec> {
    let (kind, rest) = relative.split_once(':').unwrap_or(("tsv", relative));
    Ok(format!("{kind}:{}", cache_dir.join(rest).display()).parse()?)
}

/// Documents per second of [`Model::predict`] on one thread.
fn measure_throughput(model: &Model, name: &str, docs: &[Doc]) -> Throughput {
    let mut done = 0usize;
    let mut known = 0usize;
    let t = Instant::now();
    while t.elapsed().as_secs_f64() < MIN_THROUGHPUT_SECS && !docs.is_empty() {
        for d in docs {
            known += usize::from(model.predict(&d.text).topic != UNKNOWN_TOPIC);
        }
        done += docs.len();
    }
    let secs = t.elapsed().as_secs_f64();
    tracing::debug!(corpus = name, known, done, "bench: throughput measured");
    Throughput {
        what: format!("{name} test documents"),
        mean_bytes: docs.iter().map(|d| d.text.len()).sum::<usize>() / docs.len().max(1),
        pages_per_s: if secs > 0.0 { done as f64 / secs } else { 0.0 },
    }
}

/// Runs the embedded peer script and parses its JSON lines.
fn run_peer(python: &Path, cache_dir: &Path) -> Result<Vec<PeerLine>, PeerError> {
    let io = |source| PeerError::Io {
        path: PathBuf::from(python),
        source,
    };
    let mut child = Command::new(python)
        .arg("-")
        .arg(cache_dir)
        .arg(JSON_FLAG)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(io)?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(SKLEARN_SCRIPT.as_bytes()).map_err(io)?;
    }
    let out = child.wait_with_output().map_err(io)?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let last = stderr
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        return Err(PeerError::Baseline(format!(
            "{} exited with {}: {last}",
            python.display(),
            out.status
        )));
    }
    let lines: Vec<PeerLine> = stdout
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| {
            serde_json::from_str(l).map_err(|e| PeerError::Baseline(format!("bad line {l:?}: {e}")))
        })
        .collect::<Result<_, _>>()?;
    if lines.is_empty() {
        return Err(PeerError::Baseline(format!(
            "{} printed no result line",
            python.display()
        )));
    }
    Ok(lines)
}

impl fmt::Display for BenchReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "classifier benchmark (ours: {} training threads; predict times on one thread)",
            self.threads
        )?;
        writeln!(
            f,
            "{:<13} {:>11} | {:>6} {:>6} {:>7} {:>7} | {:>6} {:>6} {:>7} {:>7} | {:>8} {:>10} {:>4}",
            "corpus", "train/test", "acc", "F1", "train s", "pred s", "sk acc", "sk F1",
            "train s", "pred s", "acc diff", "time ratio", "bar"
        )?;
        for r in &self.rows {
            let o = &r.ours;
            write!(
                f,
                "{:<13} {:>11} | {:>6.4} {:>6.4} {:>7.2} {:>7.2} |",
                r.corpus,
                format!("{}/{}", r.train_docs, r.test_docs),
                o.accuracy,
                o.macro_f1,
                o.train_s,
                o.predict_s
            )?;
            match &r.sklearn {
                Some(s) => writeln!(
                    f,
                    " {:>6.4} {:>6.4} {:>7.2} {:>7.2} | {:>+8.4} {:>10.2} {:>4}",
                    s.accuracy,
                    s.macro_f1,
                    s.train_s,
                    s.predict_s,
                    o.accuracy - s.accuracy,
                    o.total_s() / s.total_s(),
                    if r.meets_bar() == Some(true) {
                        "ok"
                    } else {
                        "MISS"
                    }
                )?,
                None => writeln!(f, " {:>6} {:>6} {:>7} {:>7} |", "-", "-", "-", "-")?,
            }
        }
        writeln!(f, "time ratio = ours (train + predict) / scikit-learn's; bar: acc >= sk acc - {ACCURACY_SLACK} and ratio <= 1")?;
        match (&self.sklearn_missing, &self.sklearn_version) {
            (Some(why), _) => writeln!(f, "scikit-learn peer not run: {why}")?,
            (None, Some(v)) => writeln!(
                f,
                "peer: scikit-learn {v} (TfidfVectorizer sublinear_tf + LinearSVC), same splits"
            )?,
            (None, None) => {}
        }
        for t in &self.throughput {
            writeln!(
                f,
                "predict throughput: {:>9.0} pages/s per core on {} (mean {} bytes)",
                t.pages_per_s, t.what, t.mean_bytes
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// A fake interpreter: a shell script that ignores its stdin and prints `output`.
    fn fake_python(dir: &Path, output: &str, status: i32) -> PathBuf {
        let path = dir.join("python");
        std::fs::write(
            &path,
            format!("#!/bin/sh\ncat >/dev/null\ncat <<'OUT'\n{output}\nOUT\nexit {status}\n"),
        )
        .expect("write");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        path
    }

    /// [`run_peer`] of a script just written: another test's child, forked while
    /// the script was open for writing, can hold it open until that child execs,
    /// and an exec meanwhile fails with ETXTBSY ("Text file busy"); tried again then.
    fn run_fake(python: &Path, dir: &Path) -> Result<Vec<PeerLine>, PeerError> {
        let mut tries = 0;
        loop {
            match run_peer(python, dir) {
                Err(PeerError::Io { source, .. })
                    if source.raw_os_error() == Some(26) && tries < 20 =>
                {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(25));
                }
                other => return other,
            }
        }
    }

    #[test]
    fn peer_json_lines_are_parsed_and_other_lines_ignored() {
        let dir = tempfile::tempdir().expect("tempdir");
        let python = fake_python(
            dir.path(),
            "Building prefix dict from the default dictionary ...\n\
             {\"corpus\": \"thucnews\", \"sklearn\": \"1.9.1\", \"accuracy\": 0.829, \"macro_f1\": 0.828, \
             \"train_s\": 3.3, \"predict_s\": 0.8, \"train_docs\": 7995, \"test_docs\": 2005, \"features\": 21897}",
            0,
        );
        let lines = run_fake(&python, dir.path()).expect("peer");
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0].corpus, "thucnews");
        assert_eq!(lines[0].sklearn, "1.9.1");
        assert_eq!(lines[0].figures.train_s, 3.3);
    }

    #[test]
    fn peer_failures_are_clear_errors() {
        let dir = tempfile::tempdir().expect("tempdir");
        let missing = dir.path().join("no-such-python");
        let err = run_fake(&missing, dir.path()).expect_err("missing interpreter");
        assert!(matches!(err, PeerError::Io { .. }), "{err}");
        assert!(err.to_string().contains("no-such-python"), "{err}");

        let failing = fake_python(dir.path(), "", 1);
        let err = run_fake(&failing, dir.path()).expect_err("exit 1");
        assert!(err.to_string().contains("exited with"), "{err}");

        let silent = fake_python(dir.path(), "nothing useful", 0);
        let err = run_fake(&silent, dir.path()).expect_err("no json");
        assert!(err.to_string().contains("no result line"), "{err}");

        let broken = fake_python(dir.path(), "{\"corpus\": 1}", 0);
        let err = run_fake(&broken, dir.path()).expect_err("bad json");
        assert!(matches!(err, PeerError::Baseline(_)), "{err}");
    }

    #[test]
    fn report_marks_the_bar_and_missing_peer() {
        let figures = |accuracy, train_s| Figures {
            accuracy,
            macro_f1: accuracy,
            train_s,
            predict_s: 0.5,
        };
        let row = |ours, sklearn| BenchRow {
            corpus: "thucnews".into(),
            train_docs: 8,
            test_docs: 2,
            ours,
            sklearn,
        };
        assert_eq!(
            row(figures(0.82, 1.0), Some(figures(0.829, 3.0))).meets_bar(),
            Some(true)
        );
        assert_eq!(
            row(figures(0.81, 1.0), Some(figures(0.829, 3.0))).meets_bar(),
            Some(false)
        );
        assert_eq!(
            row(figures(0.83, 4.0), Some(figures(0.829, 3.0))).meets_bar(),
            Some(false)
        );
        assert_eq!(row(figures(0.83, 4.0), None).meets_bar(), None);
        let report = BenchReport {
            rows: vec![row(figures(0.82, 1.0), Some(figures(0.829, 3.0)))],
            throughput: vec![],
            sklearn_missing: None,
            sklearn_version: Some("1.9.1".into()),
            threads: 2,
        };
        let text = report.to_string();
        assert!(text.contains("0.43"), "time ratio 1.5 / 3.5: {text}");
        assert!(text.contains(" ok"), "{text}");
        let missing = BenchReport {
            sklearn_missing: Some("no Python given".into()),
            ..report
        };
        assert!(missing
            .to_string()
            .contains("scikit-learn peer not run: no Python given"));
    }
}
