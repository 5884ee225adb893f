//! Model files of every format version, and damaged or foreign files.

use std::path::PathBuf;

use classifier::model::MAGIC;
use classifier::{Doc, Error, Model, TrainOptions, FORMAT_VERSION, UNKNOWN_TOPIC};

/// A version 1 model written by the previous release (`examples/evaluate` on
/// `tests/fixtures/tiny-train.tsv`, before calibration existed).
fn v1_fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/model-v1.model")
}

/// The headlines of the fixture, as training documents.
fn tiny_docs() -> Vec<Doc> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tiny-train.tsv");
    classifier::read_tsv(&path).expect("fixture corpus")
}

#[test]
fn version_1_files_still_load_with_softmax_scores() {
    let m = Model::load(v1_fixture()).expect("v1 model loads");
    assert_eq!(m.format_version, 1);
    assert!(m.calibration.is_none());
    assert_eq!(m.options.calibration_folds, 0, "absent in v1, read as 0");
    assert!(!m.vectorizer.options().bigrams);
    assert_eq!(m.classes, ["finance", "space", "sports"]);
    let text = "央行宣布降息 银行股大涨";
    let p = m.predict(text);
    assert_eq!(p.topic, "finance");
    let margins = m.margins(&m.vectorizer.transform(text));
    let softmax = 1.0 / margins.iter().map(|v| (v - p.margin).exp()).sum::<f32>();
    assert!(
        (p.score - softmax).abs() < 1e-6,
        "{p:?} vs softmax {softmax}"
    );
    assert_eq!(m.predict("").topic, UNKNOWN_TOPIC);
}

#[test]
fn new_models_are_version_2_with_calibration() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("tiny.model");
    let m = Model::train(&tiny_docs(), &TrainOptions::default()).expect("train");
    m.save(&path).expect("save");
    let bytes = std::fs::read(&path).expect("read");
    assert!(bytes.starts_with(format!("{MAGIC} 2 json+gzip\n").as_bytes()));
    assert_eq!(FORMAT_VERSION, 2);
    let back = Model::load(&path).expect("load");
    assert_eq!(back, m);
    assert!(back.calibration.is_some());
}

/// Rewrites the version number in a model file's header.
fn with_version(dir: &std::path::Path, version: &str) -> PathBuf {
    let bytes = std::fs::read(v1_fixture()).expect("read");
    let header = format!("{MAGIC} 1 ");
    let mut out = format!("{MAGIC} {version} ").into_bytes();
    out.extend_from_slice(&bytes[header.len()..]);
    let path = dir.join(format!("v{version}.model"));
    std::fs::write(&path, out).expect("write");
    path
}

#[test]
fn future_and_zero_versions_are_rejected_naming_file_and_versions() {
    let dir = tempfile::tempdir().expect("tempdir");
    for version in [3u32, 99, 0] {
        let path = with_version(dir.path(), &version.to_string());
        let err = Model::load(&path).expect_err("unsupported");
        match &err {
            Error::UnsupportedVersion {
                found, supported, ..
            } => {
                assert_eq!(*found, version);
                assert_eq!(*supported, FORMAT_VERSION);
            }
            other => panic!("expected UnsupportedVersion, got {other:?}"),
        }
        let msg = err.to_string();
        assert!(msg.contains(&format!("v{version}.model")), "{msg}");
        assert!(
            msg.contains(&format!("version {version} is not supported")),
            "{msg}"
        );
        assert!(msg.contains("versions 1..=2"), "{msg}");
    }
    let garbage = with_version(dir.path(), "two");
    let err = Model::load(&garbage).expect_err("bad header");
    assert!(matches!(err, Error::Corrupt { .. }), "{err}");
}

#[test]
fn damaged_models_say_corrupt_and_name_the_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bytes = std::fs::read(v1_fixture()).expect("read");
    let header_len = bytes.iter().position(|&b| b == b'\n').expect("header") + 1;
    let cases: [(&str, Vec<u8>); 3] = [
        ("truncated.model", bytes[..bytes.len() - 40].to_vec()),
        ("header-only.model", bytes[..header_len].to_vec()),
        ("not-gzip.model", {
            let mut b = bytes[..header_len].to_vec();
            b.extend_from_slice(b"{\"classes\": []}");
            b
        }),
    ];
    for (name, content) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, content).expect("write");
        let err = Model::load(&path).expect_err(name);
        assert!(matches!(err, Error::Corrupt { .. }), "{name}: {err}");
        assert!(err.to_string().contains(name), "{err}");
    }
    let empty = dir.path().join("empty.model");
    std::fs::write(&empty, b"").expect("write");
    assert!(matches!(Model::load(&empty), Err(Error::NotAModel { .. })));
}
