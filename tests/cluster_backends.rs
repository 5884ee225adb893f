//! The same crawl, queries and statistics on the embedded default and on the
//! real cluster backends (HDFS packs, HBase tables through Thrift), started by
//! `deploy/testcluster`. The answers must be identical.
//!
//! Runs with `--features cluster` (CI turns it on). If the cluster cannot
//! start, `TestCluster::shared()` panics and these tests fail.
#![cfg(feature = "cluster")]

mod util;

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use harvest::demo::{DEMO_DEPTH, DEMO_ENTRY};
use harvest::site::{SiteFiles, DEMO_SITE};
use testcluster::TestCluster;
use util::{count_by, Site, Workspace};

/// The attributes that must agree between backends (pack offsets may differ:
/// record ids and dates are new on every run).
fn projection(out: &std::process::Output) -> BTreeMap<String, serde_json::Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("jsonl");
            let key = v["url"].as_str().unwrap().to_string();
            // The pack's folder (topic/yyyy/mm/dd) is decided by the page; its
            // cluster file depends on which pages shared a storage batch, i.e.
            // on crawl timing, so two crawls may place a page in different
            // c{cluster} files. The bytes are compared through `get` below.
            let pack_dir = v["pack_path"]
                .as_str()
                .unwrap()
                .rsplit_once('/')
                .unwrap()
                .0
                .to_string();
            let p = serde_json::json!({
                "title": v["title"], "topic": v["topic"], "keywords": v["keywords"],
                "source": v["source"], "digest": v["digest"], "revisit": v["revisit"],
                "media": v["media"], "comments": v["comments"], "language": v["language"],
                "pack_dir": pack_dir,
            });
            (key, p)
        })
        .collect()
}

/// Text queries of every kind, from the words of the pages' headlines: the most
/// common word, a phrase of two headline words, `title:`, `OR` and an exclusion.
fn text_queries(pages: &BTreeMap<String, serde_json::Value>) -> Vec<String> {
    let words_of = |t: &str| -> Vec<String> {
        t.split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.len() >= 5 && w.chars().all(|c| c.is_ascii_alphabetic()))
            .map(str::to_lowercase)
            .collect()
    };
    let titles: Vec<String> = pages
        .values()
        .filter_map(|v| v["title"].as_str().map(str::to_string))
        .collect();
    let mut counts = count_by(titles.iter().flat_map(|t| {
        let mut w = words_of(t);
        w.sort();
        w.dedup();
        w
    }))
    .into_iter()
    .collect::<Vec<_>>();
    counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    assert!(counts.len() >= 3, "too few headline words: {counts:?}");
    let (w1, w2, w3) = (&counts[0].0, &counts[1].0, &counts[2].0);
    let phrase = titles
        .iter()
        .map(|t| words_of(t))
        .find(|w| w.len() >= 2)
        .map(|w| format!("\"{} {}\"", w[0], w[1]))
        .expect("a headline of two words");
    vec![
        w1.clone(),
        phrase,
        format!("title:{w2}"),
        format!("{w2} OR {w3}"),
        format!("{w1} -{w2}"),
    ]
}

fn stats_json(ws: &Workspace, args: &[&str]) -> serde_json::Value {
    let mut all = vec!["stats", "--format", "json"];
    all.extend_from_slice(args);
    serde_json::from_slice(&ws.harvest(&all).stdout).expect("stats json")
}

#[test]
fn embedded_and_cluster_backends_give_identical_answers() {
    let cluster = TestCluster::shared();
    let site = Site::demo();
    let files = SiteFiles::from_tar_gz(DEMO_SITE).unwrap();
    let seed = site.url(DEMO_ENTRY);
    let embedded = Workspace::new(&seed, "lohelp", Some(DEMO_DEPTH));
    let packs = format!("{}/e2e-{}", cluster.hdfs_url, std::process::id());
    let on_cluster = Workspace::with_backends(
        &seed,
        "lohelp",
        Some(DEMO_DEPTH),
        Some(packs.clone()),
        Some(cluster.thrift.clone()),
    );
    on_cluster.configure(|raw| {
        raw.index.thrift2 = Some(cluster.thrift2.clone());
        raw.index.master_http = Some(cluster.hbase_http.clone());
        raw.storage.namenode_http = Some(cluster.namenode_http.clone());
    });
    let init = on_cluster.harvest(&["cluster", "init"]);
    assert!(String::from_utf8_lossy(&init.stdout).contains("table urls ready"));

    for ws in [&embedded, &on_cluster] {
        ws.train_demo_model();
        let summary = ws.crawl();
        assert_eq!(summary["pages"].as_u64(), Some(377), "{summary}");
    }

    // `cluster check` reaches both services and sees what was written.
    let check =
        String::from_utf8_lossy(&on_cluster.harvest(&["cluster", "check"]).stdout).to_string();
    assert!(check.contains(&packs), "{check}");
    assert!(check.contains("hbase thrift"), "{check}");
    assert!(check.contains("lohelp_"), "{check}");
    // Versions and capacity from the NameNode's and the master's web servers.
    assert!(check.contains("hdfs    Hadoop 3."), "{check}");
    assert!(check.contains("capacity"), "{check}");
    assert!(check.contains("1 live DataNode"), "{check}");
    assert!(check.contains("hbase   HBase 2.6"), "{check}");
    // Tables made by `cluster init` and by the crawl are pre-split.
    let page_tables: Vec<&str> = check.lines().filter(|l| l.contains("lohelp_")).collect();
    assert!(!page_tables.is_empty(), "{check}");
    for line in page_tables {
        assert!(line.contains("one region per bucket"), "{line}\n{check}");
    }

    let everything = ["query", "--format", "jsonl", "--limit", "100000"];
    let a = projection(&embedded.harvest(&everything));
    let b = projection(&on_cluster.harvest(&everything));
    assert_eq!(a.len(), 377);
    assert_eq!(a, b, "open query differs between backends");

    let topics: BTreeSet<String> = a
        .values()
        .map(|v| v["topic"].as_str().unwrap().to_string())
        .collect();
    for topic in &topics {
        let mut args = everything.to_vec();
        args.extend(["--topic", topic.as_str()]);
        let ea = projection(&embedded.harvest(&args));
        assert_eq!(
            ea,
            projection(&on_cluster.harvest(&args)),
            "--topic {topic}"
        );
        let kws = count_by(ea.values().flat_map(|v| {
            v["keywords"]
                .as_array()
                .unwrap()
                .iter()
                .map(|k| k.as_str().unwrap().to_string())
        }));
        if let Some((kw, _)) = kws.iter().max_by_key(|(_, n)| **n) {
            args.extend(["--keyword", kw.as_str()]);
            let ka = projection(&embedded.harvest(&args));
            assert!(!ka.is_empty());
            assert_eq!(
                ka,
                projection(&on_cluster.harvest(&args)),
                "--topic {topic} --keyword {kw}"
            );
        }
    }
    // An explicit range (today): both stores then fill the same buckets.
    let today = chrono::Utc::now().date_naive().to_string();
    let range = ["--from", today.as_str(), "--to", today.as_str()];

    // Text queries, built from the pages' own headlines: the same pages on both
    // backends, the same BM25 scores in the same order, the same counts per day.
    for q in text_queries(&a) {
        let mut args = everything.to_vec();
        args.extend(["--text", q.as_str()]);
        let ea = projection(&embedded.harvest(&args));
        assert!(
            !ea.is_empty() || q.contains(" -"),
            "--text {q} finds nothing"
        );
        assert_eq!(ea, projection(&on_cluster.harvest(&args)), "--text {q}");
        args.extend(["--sort", "relevance"]);
        let ranked = |ws: &Workspace| -> Vec<(String, f64)> {
            String::from_utf8_lossy(&ws.harvest(&args).stdout)
                .lines()
                .map(|l| {
                    let v: serde_json::Value = serde_json::from_str(l).expect("jsonl");
                    let score = v["score"].as_f64().expect("a relevance hit has a score");
                    (v["url"].as_str().unwrap().to_string(), score)
                })
                .collect()
        };
        let (er, cr) = (ranked(&embedded), ranked(&on_cluster));
        assert_eq!(er.len(), ea.len(), "--text {q} --sort relevance");
        assert!(
            er.windows(2).all(|w| w[0].1 >= w[1].1),
            "--text {q}: not by score: {er:?}"
        );
        // Equal scores may come in either order (ties go by capture time).
        let by_url = |r: &[(String, f64)]| -> BTreeMap<String, u64> {
            r.iter().map(|(u, s)| (u.clone(), s.to_bits())).collect()
        };
        assert_eq!(by_url(&er), by_url(&cr), "--text {q}: scores differ");
        let scores =
            |r: &[(String, f64)]| -> Vec<u64> { r.iter().map(|x| x.1.to_bits()).collect() };
        assert_eq!(scores(&er), scores(&cr), "--text {q}: order differs");
        let mut sargs = vec![
            "--interval",
            "day",
            "--group-by",
            "topic",
            "--text",
            q.as_str(),
        ];
        sargs.extend(range);
        let by_topic = stats_json(&embedded, &sargs);
        assert_eq!(
            by_topic,
            stats_json(&on_cluster, &sargs),
            "stats --text {q}"
        );
        // Counts by day alone: the text index's hits counted without reading their rows
        // (`indexer::textmark`), the same as through the topic rows.
        let mut dargs = vec!["--interval", "day", "--text", q.as_str()];
        dargs.extend(range);
        let by_day = stats_json(&embedded, &dargs);
        assert_eq!(by_day, stats_json(&on_cluster, &dargs), "stats --text {q}");
        let total = |v: &serde_json::Value| -> u64 {
            v.as_array()
                .expect("stats rows")
                .iter()
                .map(|r| r["count"].as_u64().expect("count"))
                .sum()
        };
        assert_eq!(total(&by_day), total(&by_topic), "stats --text {q}");
    }
    for args in [
        &["--interval", "day", "--group-by", "topic"][..],
        &["--interval", "month", "--group-by", "source"][..],
        &["--interval", "year"][..],
    ] {
        let args: Vec<&str> = args.iter().chain(range.iter()).copied().collect();
        let args = args.as_slice();
        assert_eq!(
            stats_json(&embedded, args),
            stats_json(&on_cluster, args),
            "stats {args:?}"
        );
    }

    // Original bytes come back from HDFS exactly as served.
    let paths: Vec<&String> = a.keys().step_by(41).collect();
    for url in paths {
        let path = url.strip_prefix(&site.url("")).unwrap();
        let got = on_cluster.harvest(&["get", url]).stdout;
        assert_eq!(got.as_slice(), files.get(path).unwrap(), "get {url}");
    }

    // fsck reads the HDFS packs against the HBase rows.
    let fsck: serde_json::Value =
        serde_json::from_slice(&on_cluster.harvest(&["fsck", "--json", "--quiet"]).stdout)
            .expect("fsck json");
    // Every capture (the 377 pages, and the 404 answers of missing pages).
    assert_eq!(fsck["pages"].as_u64(), Some(377), "{fsck}");
    assert_eq!(fsck["verified"], fsck["captures"], "{fsck}");
    assert_eq!(fsck["missing"].as_u64(), Some(0), "{fsck}");
    assert_eq!(fsck["unindexed"].as_u64(), Some(0), "{fsck}");
    // … and the text splits against the rows.
    assert_eq!(fsck["text_missing"].as_u64(), Some(0), "{fsck}");
    assert_eq!(fsck["text_orphans"].as_u64(), Some(0), "{fsck}");
    assert_eq!(fsck["text_marks"].as_u64(), Some(0), "{fsck}");
    assert_eq!(fsck["text_files_unlisted"].as_u64(), Some(0), "{fsck}");
    // A split file a writer killed two hours ago left without its manifest row: found on
    // HDFS, removed by --repair, and the text answers are as before.
    let store = packer::open_store_with(&packs, &packer::OpenOptions::default()).unwrap();
    let old = chrono::Utc::now().timestamp_micros() - 2 * 3_600 * 1_000_000;
    let left = format!("_text/lohelp/1970-01/{old:016x}-0badf11e.split");
    let mut w = store.create(&left).unwrap();
    w.append(b"HVSPLIT1 torn").unwrap();
    w.close().unwrap();
    let fsck_json = |repair: bool| -> serde_json::Value {
        let mut args = vec!["fsck", "--json", "--quiet"];
        if repair {
            args.push("--repair");
        }
        serde_json::from_slice(&on_cluster.harvest_raw(&args).stdout).expect("fsck json")
    };
    let found = fsck_json(false);
    assert_eq!(found["text_files_unlisted"].as_u64(), Some(1), "{found}");
    let repaired = fsck_json(true);
    assert_eq!(
        repaired["removed_text_files"].as_u64(),
        Some(1),
        "{repaired}"
    );
    assert!(store.len(&left).is_err(), "{left} is still there");
    assert_eq!(fsck_json(false)["text_files_unlisted"].as_u64(), Some(0));

    // The cluster's packs rebuild a lost index: a reindex of the HDFS packs
    // into a new index gives the HBase index's rows, field for field.
    let rebuilt =
        Workspace::with_backends(&seed, "lohelp", Some(DEMO_DEPTH), Some(packs.clone()), None);
    rebuilt.configure(|raw| {
        raw.storage.namenode_http = Some(cluster.namenode_http.clone());
    });
    rebuilt.train_demo_model();
    rebuilt.harvest(&["reindex", "--quiet"]);
    let rows = |ws: &Workspace| -> BTreeSet<String> {
        String::from_utf8_lossy(&ws.harvest(&everything).stdout)
            .lines()
            .map(str::to_string)
            .collect()
    };
    let (from_hbase, from_packs) = (rows(&on_cluster), rows(&rebuilt));
    assert_eq!(from_packs.len(), 377);
    let differ: Vec<&String> = from_hbase.difference(&from_packs).take(3).collect();
    assert!(
        differ.is_empty(),
        "rows the reindex did not give back: {differ:?}"
    );

    // Issue 42 item 4: `compact` on HDFS + HBase, killed after its first batch of moved
    // rows: fsck finishes it (HDFS rename and deletes, HBase rows) and finds every row at
    // its record in the month pack; the next compact has nothing left to do.
    let before = fsck_json(false);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_harvest"))
        .arg("-c")
        .arg(&on_cluster.config)
        .args(["compact", "--quiet"])
        .env(harvest::compact::CRASH_COMPACT, "rows")
        .output()
        .expect("run harvest compact");
    {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(
            out.status.signal(),
            Some(9),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let finished = fsck_json(false);
    assert_eq!(
        finished["compactions_finished"].as_u64(),
        Some(1),
        "{finished}"
    );
    // What compaction must leave as it was: every row at its record.
    let same_counts = |after: &serde_json::Value| {
        for key in [
            "pages",
            "captures",
            "verified",
            "unindexed",
            "records",
            "missing",
        ] {
            assert_eq!(after[key], before[key], "{key}: {after}");
        }
    };
    same_counts(&finished);
    assert!(
        finished["packs"].as_u64() < before["packs"].as_u64(),
        "{finished}"
    );
    // The next compact merges the groups the killed one had not reached, the one after it
    // finds nothing left; fsck still finds every row at its record.
    let compact = || -> serde_json::Value {
        serde_json::from_slice(&on_cluster.harvest(&["compact", "--json", "--quiet"]).stdout)
            .expect("compact json")
    };
    let rest = compact();
    assert_eq!(rest["resumed"].as_u64(), Some(0), "{rest}");
    let done = fsck_json(false);
    same_counts(&done);
    assert_eq!(done["packs"], rest["after"]["packs"], "{done} {rest}");
    let again = compact();
    assert_eq!(again["merged"].as_u64(), Some(0), "{again}");
    assert!(store.list("_compact/").unwrap().is_empty());
    assert_eq!(rows(&on_cluster).len(), 377);
}

#[test]
fn unreachable_cluster_services_fail_fast_with_a_clear_error() {
    // Nothing listens on these loopback ports.
    for (packs, thrift, needle) in [
        (
            Some("hdfs://127.0.0.1:9/harvest".to_string()),
            None,
            "pack store",
        ),
        (None, Some("127.0.0.1:9".to_string()), "Thrift"),
    ] {
        let ws = Workspace::with_backends("http://127.0.0.1:9/", "down", None, packs, thrift);
        let started = Instant::now();
        let out = ws.harvest_raw(&["cluster", "check"]);
        let took = started.elapsed();
        assert_eq!(out.status.code(), Some(1));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{err}");
        assert!(took < Duration::from_secs(20), "took {took:?}: {err}");
    }
}
