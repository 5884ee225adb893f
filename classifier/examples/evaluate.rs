//! Trains on one corpus spec and evaluates on another, printing the report:
//!
//! ```text
//! cargo run -p harvest-classifier --release --example evaluate -- TRAIN_SPEC TEST_SPEC [C] [MIN_DF] [SAVE_PATH] [CALIBRATION_FOLDS] [BIGRAMS]
//! cargo run -p harvest-classifier --release --example evaluate -- \
//!     thucnews:deploy/cache/thucnews_train_1w.txt#train80 thucnews:deploy/cache/thucnews_train_1w.txt#test20
//! ```

use std::time::Instant;

use classifier::{CorpusSpec, Model, TrainOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [train, test, rest @ ..] = args.as_slice() else {
        return Err("usage: evaluate TRAIN_SPEC TEST_SPEC [C] [MIN_DF] [SAVE_PATH] [CALIBRATION_FOLDS] [BIGRAMS]".into());
    };
    let train: CorpusSpec = train.parse()?;
    let test: CorpusSpec = test.parse()?;
    let mut opts = TrainOptions {
        trained_on: train.to_string(),
        ..TrainOptions::default()
    };
    if let Some(c) = rest.first() {
        opts.svm.c = c.parse()?;
    }
    if let Some(min_df) = rest.get(1) {
        opts.vocab.min_df = min_df.parse()?;
    }
    if let Some(folds) = rest.get(3) {
        opts.calibration_folds = folds.parse()?;
    }
    if let Some(bigrams) = rest.get(4) {
        opts.vocab.bigrams = bigrams.parse()?;
    }
    let (train_docs, test_docs) = (train.load()?, test.load()?);
    let t = Instant::now();
    let model = Model::train(&train_docs, &opts)?;
    let trained = t.elapsed();
    let t = Instant::now();
    let eval = model.evaluate(&test_docs)?;
    println!(
        "train {} docs in {trained:.2?}, {} features; evaluate {} docs in {:.2?}\n{eval}",
        train_docs.len(),
        model.vectorizer.len(),
        test_docs.len(),
        t.elapsed()
    );
    // calibration: expected calibration error over 10 score bins, and mean score vs accuracy
    let mut bins = [(0usize, 0.0f64, 0usize); 10];
    for d in &test_docs {
        let p = model.predict(&d.text);
        let b = ((p.score * 10.0) as usize).min(9);
        bins[b].0 += 1;
        bins[b].1 += f64::from(p.score);
        bins[b].2 += usize::from(p.topic == d.label);
    }
    let n = test_docs.len() as f64;
    let ece: f64 = bins
        .iter()
        .filter(|b| b.0 > 0)
        .map(|b| (b.1 - b.2 as f64).abs() / n)
        .sum();
    let mean_score = bins.iter().map(|b| b.1).sum::<f64>() / n;
    println!(
        "calibration: mean score {mean_score:.4} vs accuracy {:.4}, ECE {ece:.4}",
        eval.accuracy
    );
    if let Some(path) = rest.get(2).filter(|p| !p.is_empty() && *p != "-") {
        model.save(path)?;
        let t = Instant::now();
        let loaded = Model::load(path)?;
        println!(
            "saved {path} ({} bytes), loaded back in {:.2?}",
            std::fs::metadata(path)?.len(),
            t.elapsed()
        );
        assert_eq!(
            loaded.predict(&test_docs[0].text),
            model.predict(&test_docs[0].text)
        );
    }
    Ok(())
}
