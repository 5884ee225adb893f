//! `harvest demo` as a newcomer runs it: the LibreOffice help demo (offline,
//! bundled pages) and `--news`, the real news articles of four months
//! (issue 15 item 9: the first chart a newcomer sees shows trends, not one
//! bar), each followed by the commands it prints.

mod util;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Output;

use util::run_harvest as harvest;

fn text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn config(dir: &Path) -> String {
    dir.join("harvest.toml").display().to_string()
}

#[test]
fn the_libreoffice_demo_archives_its_pages_and_prints_commands_that_work() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().join("demo");
    let out = text(&harvest(&[
        "demo",
        "--dir",
        dir.to_str().unwrap(),
        "--quiet",
    ]));
    assert!(out.contains("== example query"), "{out}");
    assert!(
        out.contains("serve     # then open http://127.0.0.1:8080/"),
        "{out}"
    );
    let cfg = config(&dir);
    let rows = text(&harvest(&[
        "-c", &cfg, "query", "--format", "jsonl", "--limit", "1000",
    ]));
    assert!(rows.lines().count() > 300, "{} pages", rows.lines().count());

    // The example query, run as printed, gives the URLs the demo showed under it.
    let line = out
        .lines()
        .find_map(|l| l.strip_prefix("== example query: harvest "))
        .expect("the example query's command line");
    let args: Vec<&str> = line.split_whitespace().collect();
    let shown: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("== example query"))
        .skip(1)
        .take_while(|l| l.starts_with("   ") && !l.trim_start().starts_with('('))
        .filter_map(|l| l.split_whitespace().last())
        .collect();
    assert!(!shown.is_empty(), "{out}");
    let mut run = args.clone();
    run.extend(["--format", "jsonl", "--limit", "10"]);
    let got: Vec<String> = text(&harvest(&run))
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("jsonl");
            v["url"].as_str().unwrap_or_default().to_string()
        })
        .collect();
    assert_eq!(got, shown, "{line}");
}

#[test]
fn the_news_demo_shows_topics_and_media_over_months() {
    let csv = util::news_csv();
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().join("news");
    let out = text(&harvest(&[
        "demo",
        "--news",
        csv.to_str().unwrap(),
        "--dir",
        dir.to_str().unwrap(),
        "--quiet",
    ]));
    // The topic the model gives agrees with the articles' own sections
    // (ABC News, TASS) it was not trained on, well above chance (8 topics).
    let agree = out
        .lines()
        .find(|l| l.contains("topic vs the article's own section"))
        .unwrap_or_else(|| panic!("no agreement line: {out}"));
    let pct: f64 = agree
        .rsplit('(')
        .next()
        .and_then(|p| p.trim_end_matches("%)").parse().ok())
        .unwrap_or_else(|| panic!("{agree}"));
    assert!(pct > 50.0, "{agree}");

    // The statistics it prints, asked again through the command line: pages
    // in several months, by topic and by the outlets named on the pages.
    let cfg = config(&dir);
    let by = |group: &str| {
        text(&harvest(&[
            "-c",
            &cfg,
            "stats",
            "--from",
            "2016-12-01",
            "--to",
            "2017-03-31",
            "--interval",
            "month",
            "--group-by",
            group,
            "--format",
            "csv",
        ]))
    };
    let topics = by("topic");
    let months: BTreeSet<&str> = topics
        .lines()
        .skip(1)
        .filter(|l| !l.ends_with(",0"))
        .filter_map(|l| l.split(',').next())
        .collect();
    assert!(months.len() >= 4, "{topics}");
    let media = by("media");
    for outlet in ["TASS", "ABC News", "Al Jazeera", "BBC News", "China Daily"] {
        assert!(media.contains(&format!(",{outlet},")), "{outlet}: {media}");
    }
    assert!(
        out.contains("serve     # then open http://127.0.0.1:8080/"),
        "{out}"
    );
}
