//! Bad input never panics: empty pages, pages without words, languages the model never saw,
//! corpus lines without a label, unusable training sets.

mod util;

use std::sync::OnceLock;

use classifier::{CorpusSpec, Doc, Error, Model, TrainOptions, UNKNOWN_TOPIC};

/// A model trained on the THUCNews titles (Chinese) and Reuters R8 (English) together.
fn model() -> &'static Model {
    static MODEL: OnceLock<Model> = OnceLock::new();
    MODEL.get_or_init(|| {
        let mut docs = util::spec("thucnews", "thucnews_train_1w.txt", "#train80")
            .parse::<CorpusSpec>()
            .expect("spec")
            .load()
            .expect("thucnews");
        docs.extend(
            util::spec("tab", "reuters-r8-train.tab", "")
                .parse::<CorpusSpec>()
                .expect("spec")
                .load()
                .expect("r8"),
        );
        Model::train(&docs, &TrainOptions::default()).expect("train")
    })
}

#[test]
fn empty_and_wordless_pages_are_unknown_with_score_zero() {
    for text in [
        "",
        " \n\t ",
        "12:45 2024-03-01 +86 10 6552 9988",
        "。。。！！！？？？ …… ——",
        "<<<>>> {} [] ### *** ///",
        "\u{200b}\u{feff}\u{00a0}",
    ] {
        let p = model().predict(text);
        assert_eq!(p.topic, UNKNOWN_TOPIC, "{text:?}");
        assert_eq!((p.score, p.margin), (0.0, 0.0), "{text:?}");
    }
}

#[test]
fn unseen_languages_do_not_panic_and_mostly_are_unknown() {
    let texts = [
        "Центральный банк России повысил ключевую ставку", // Russian
        "البنك المركزي يرفع سعر الفائدة",                  // Arabic
        "ธนาคารกลางขึ้นอัตราดอกเบี้ยนโยบาย",                    // Thai (no spaces)
        "중앙은행이 기준금리를 인상했다",                  // Korean
        "日銀は政策金利を引き上げた",                      // Japanese: kanji go to jieba
        "🙂🙂🙂 🚀📈",                                     // emoji only
    ];
    let mut unknown = 0;
    for text in texts {
        let p = model().predict(text);
        assert!((0.0..=1.0).contains(&p.score), "{text:?}: {p:?}");
        assert!(p.margin.is_finite(), "{text:?}: {p:?}");
        unknown += usize::from(p.topic == UNKNOWN_TOPIC);
    }
    // everything but the Japanese (whose kanji 政策 / 金利 are Chinese words too) is unknown
    assert!(
        unknown >= texts.len() - 1,
        "{unknown} unknown of {}",
        texts.len()
    );
}

#[test]
fn a_very_long_page_is_classified() {
    let page = "央行下调存款准备金率 股市大涨 银行股领涨 ".repeat(20_000);
    let p = model().predict(&page);
    assert_ne!(p.topic, UNKNOWN_TOPIC);
    assert!(p.score > 0.0 && p.score <= 1.0, "{p:?}");
}

#[test]
fn corpus_line_without_label_names_file_and_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("labelled.tsv");
    std::fs::write(
        &path,
        "finance\t央行下调存款准备金率\nsports\t女排战胜巴西队\n这一行没有标签\n",
    )
    .expect("write");
    let spec: CorpusSpec = format!("tsv:{}", path.display()).parse().expect("spec");
    let err = spec.load().expect_err("missing label");
    assert!(
        matches!(err, Error::MissingLabel { line: 3, .. }),
        "{err:?}"
    );
    let msg = err.to_string();
    assert!(msg.contains("labelled.tsv:3"), "{msg}");
    assert!(msg.contains("no label"), "{msg}");
    let empty_label = dir.path().join("empty-label.tsv");
    std::fs::write(&empty_label, "\t没有标签的正文\n").expect("write");
    assert!(matches!(
        classifier::read_tsv(&empty_label),
        Err(Error::MissingLabel { line: 1, .. })
    ));
}

#[test]
fn unusable_training_sets_are_errors() {
    let doc = |label: &str, text: &str| Doc {
        label: label.into(),
        text: text.into(),
    };
    let opts = TrainOptions::default();
    let err = Model::train(&[], &opts).expect_err("no documents");
    assert!(err.to_string().contains("at least 2 labels"), "{err}");
    let wordless = [doc("a", "123"), doc("b", "。。。")];
    let err = Model::train(&wordless, &opts).expect_err("no words");
    assert!(err.to_string().contains("empty vocabulary"), "{err}");
    // two documents with few words: trains (too few to calibrate, softmax scores)
    let tiny = [doc("a", "rocket launch"), doc("b", "hockey goal")];
    let m = Model::train(&tiny, &opts).expect("train");
    assert!(m.calibration.is_none());
    assert_eq!(m.predict("rocket").topic, "a");
}

#[test]
fn evaluating_nothing_or_unknown_labels() {
    let e = model().evaluate(&[]).expect("empty evaluation");
    assert_eq!((e.docs, e.accuracy, e.unknown), (0, 0.0, 0));
    let err = model()
        .evaluate(&[Doc {
            label: "weather".into(),
            text: "rain".into(),
        }])
        .expect_err("unknown label");
    assert!(err.to_string().contains("weather"), "{err}");
}
