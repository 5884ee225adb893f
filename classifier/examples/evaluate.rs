//! Trains on one corpus spec and evaluates on another, printing the report:
//!
//! ```text
//! cargo run -p classifier --release --example evaluate -- TRAIN_SPEC TEST_SPEC [C] [MIN_DF] [SAVE_PATH]
//! cargo run -p classifier --release --example evaluate -- \
//!     thucnews:deploy/cache/thucnews_train_1w.txt#train80 thucnews:deploy/cache/thucnews_train_1w.txt#test20
//! ```

use std::time::Instant;

use classifier::{CorpusSpec, Model, TrainOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [train, test, rest @ ..] = args.as_slice() else {
        return Err("usage: evaluate TRAIN_SPEC TEST_SPEC [C] [MIN_DF] [SAVE_PATH]".into());
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
    if let Some(path) = rest.get(2) {
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
