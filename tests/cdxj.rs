//! `harvest export cdxj` (issue 14 item 4) against pywb's own indexer:
//! `cdxj-indexer` 1.5.0 (pip, pinned; `deploy/test.sh` installs it) reads the packs
//! of a real crawl and must write, line for line and field by field, what
//! harvest exports from its index. Also the SURT keys against the Python
//! `surt` package cdxj-indexer uses, and `query --format jsonl` past the
//! table's 100,000-row cap.

mod util;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use harvest::demo::{DEMO_DEPTH, DEMO_ENTRY};
use harvest::site::{SiteFiles, DEMO_SITE};
use util::{serve_with_validators as serve, walk_packs, Workspace};

/// The pinned peer.
const CDXJ_INDEXER: &str = "cdxj-indexer==1.5.0";

/// Runs Python; a missing package is a failure that says how to install it.
fn python(args: &[&str], stdin: Option<&str>) -> String {
    use std::io::Write;
    let mut child = Command::new("python3")
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("python3 must be installed");
    if let Some(text) = stdin {
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
    } else {
        drop(child.stdin.take());
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "python3 {args:?} failed (is {CDXJ_INDEXER} installed? `deploy/data/install-test-peers.sh` puts it in deploy/cache/test-venv, which deploy/test.sh puts first on PATH): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// pywb's indexer over the whole pack folder, sorted, file names relative to it.
fn cdxj_indexer(packs: &Path) -> String {
    let version = python(
        &[
            "-c",
            "import importlib.metadata as m; print(m.version('cdxj-indexer'))",
        ],
        None,
    );
    assert_eq!(
        version.trim(),
        CDXJ_INDEXER.rsplit('=').next().unwrap(),
        "pinned version"
    );
    let packs = packs.to_str().unwrap();
    python(
        &[
            "-m",
            "cdxj_indexer.main",
            "--sort",
            "--dir-root",
            packs,
            packs,
        ],
        None,
    )
}

/// `SURT timestamp {json}` split into its fields, the JSON's as strings.
fn fields(line: &str) -> BTreeMap<String, String> {
    let mut parts = line.splitn(3, ' ');
    let key = parts.next().expect("key");
    let ts = parts.next().expect("timestamp");
    let json: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(parts.next().expect("json")).expect("JSON object");
    let mut m: BTreeMap<String, String> = json
        .into_iter()
        .map(|(k, v)| (k, v.as_str().expect("string values").to_string()))
        .collect();
    m.insert("(surt)".into(), key.into());
    m.insert("(timestamp)".into(), ts.into());
    m
}

#[test]
fn cdxj_export_equals_pywb_cdxj_indexer_field_by_field() {
    let demo = SiteFiles::from_tar_gz(DEMO_SITE).unwrap();
    let mut pairs: Vec<(String, Vec<u8>)> = demo
        .html_paths()
        .map(|p| (p.to_string(), demo.get(p).unwrap().to_vec()))
        .collect();
    if let Some(robots) = demo.get("/robots.txt") {
        pairs.push(("/robots.txt".into(), robots.to_vec()));
    }
    // Extra seeds: the entry page again under another URL (a revisit of
    // another URL's payload), and URLs whose SURT keys need the rules
    // (upper case, an escape, a query to sort, a non-ASCII path).
    let entry = demo.get(DEMO_ENTRY).unwrap().to_vec();
    let extra = [
        "/copy/Entry.html",
        "/Upper/Case%20Name.html",
        "/p%C3%A4ge.html",
    ];
    for p in extra {
        pairs.push((p.to_string(), entry.clone()));
    }
    let served = serve(SiteFiles::from_pairs(pairs));
    let seeds = [
        format!("{}{DEMO_ENTRY}", served.base),
        format!("{}/copy/Entry.html", served.base),
        format!("{}/Upper/Case%20Name.html?b=2&A=1&a=", served.base),
        format!("{}/p%C3%A4ge.html", served.base),
    ];
    let ws = Workspace::new(&seeds[0], "cdxj", Some(DEMO_DEPTH));
    let mut crawl = vec!["crawl", "--quiet", "--json"];
    for s in &seeds {
        crawl.extend(["--seed", s.as_str()]);
    }
    // Twice: the second crawl stores revisits (unchanged 200s) and 304s.
    let first: serde_json::Value = serde_json::from_slice(&ws.harvest(&crawl).stdout).unwrap();
    let second: serde_json::Value = serde_json::from_slice(&ws.harvest(&crawl).stdout).unwrap();
    assert!(first["pages"].as_u64().unwrap() > 300, "{first}");
    assert!(second["not_modified"].as_u64().unwrap() > 50, "{second}");

    let out = ws.path().join("export.cdxj");
    ws.harvest(&[
        "export",
        "cdxj",
        "--records",
        "--out",
        out.to_str().unwrap(),
    ]);
    let ours = std::fs::read_to_string(&out).unwrap();
    let theirs = cdxj_indexer(&ws.packs_dir());

    // Every response and revisit record of the packs is one line.
    let records = walk_packs(&ws);
    let kinds = util::count_by(records.iter().map(|r| r.kind.as_str()));
    let ours_lines: Vec<&str> = ours.lines().collect();
    let theirs_lines: Vec<&str> = theirs.lines().collect();
    assert_eq!(
        theirs_lines.len() as u64,
        kinds.values().sum::<u64>(),
        "{kinds:?}"
    );
    assert!(
        kinds["revisit"] > 100 && kinds["response"] > 300,
        "{kinds:?}"
    );
    let key = |l: &&str| l.splitn(3, ' ').take(2).collect::<Vec<_>>().join(" ");
    let our_keys: std::collections::BTreeSet<String> = ours_lines.iter().map(key).collect();
    let missing: Vec<&&str> = theirs_lines
        .iter()
        .filter(|l| !our_keys.contains(&key(l)))
        .take(5)
        .collect();
    assert_eq!(
        ours_lines.len(),
        theirs_lines.len(),
        "harvest exported {} lines, cdxj-indexer wrote {}; lines harvest lacks: {missing:?}",
        ours_lines.len(),
        theirs_lines.len()
    );
    for (i, (o, t)) in ours_lines.iter().zip(&theirs_lines).enumerate() {
        assert_eq!(fields(o), fields(t), "line {i}:\nours:   {o}\ntheirs: {t}");
    }
    // Same bytes too (JSON spelling, sort order).
    assert_eq!(ours, theirs);
    // Without --records, for replay: the same lines but each 304's, which
    // lists at its date the capture it confirmed: an earlier line of its URL
    // (cdxj-indexer's 304 line names no digest: the capture's is the one the
    // 304 confirmed). A 304 in the same second as its original gives that
    // original's line again, written once.
    let replay = String::from_utf8(ws.harvest(&["export", "cdxj"]).stdout).unwrap();
    let replay_lines: BTreeSet<&str> = replay.lines().collect();
    let records_set: BTreeSet<&str> = ours_lines.iter().copied().collect();
    let mut confirmed = 0;
    for o in &ours_lines {
        let fo = fields(o);
        if fo["status"] != "304" {
            assert!(replay_lines.contains(o), "the replay export lacks {o}");
            continue;
        }
        let listed: Vec<&&str> = replay_lines
            .iter()
            .filter(|r| key(r) == key(o) && fields(r)["status"] != "304")
            .collect();
        assert!(!listed.is_empty(), "no line for the 304 {o}");
        for r in listed {
            let fr = fields(r);
            let original = ours_lines.iter().find(|l| {
                let f = fields(l);
                key(l) <= key(o)
                    && f["url"] == fo["url"]
                    && ["digest", "offset", "filename", "length", "mime", "status"]
                        .iter()
                        .all(|k| f.get(*k) == fr.get(*k))
            });
            assert!(original.is_some(), "{r} lists no earlier capture of {o}");
        }
        confirmed += 1;
    }
    for r in &replay_lines {
        assert!(
            records_set.contains(r)
                || ours_lines
                    .iter()
                    .any(|o| key(o) == key(r) && fields(o)["status"] == "304"),
            "the replay export adds {r}"
        );
    }
    assert!(confirmed > 50, "{confirmed} 304 lines listed as content");
    // Mime variety and the revisit kinds made it into the comparison.
    let all: Vec<BTreeMap<String, String>> = theirs_lines.iter().map(|l| fields(l)).collect();
    let mimes: BTreeSet<&str> = all.iter().map(|f| f["mime"].as_str()).collect();
    assert!(
        mimes.contains("warc/revisit") && mimes.contains("text/html"),
        "{mimes:?}"
    );
    let statuses: BTreeSet<&str> = all.iter().map(|f| f["status"].as_str()).collect();
    assert!(
        statuses.contains("304") && statuses.contains("200"),
        "{statuses:?}"
    );
    // Item 3: a pack's file name alone is unique, so `filename` is unambiguous.
    let paths: BTreeSet<&str> = all.iter().map(|f| f["filename"].as_str()).collect();
    let names: BTreeSet<&str> = paths
        .iter()
        .map(|p| p.rsplit('/').next().unwrap())
        .collect();
    assert!(paths.len() > 1);
    assert_eq!(paths.len(), names.len(), "{paths:?}");

    // Standard output gives the same; a filter selects a subset: every
    // capture of the pages `query` selects.
    let stdout = ws.harvest(&["export", "cdxj", "--records"]).stdout;
    assert_eq!(String::from_utf8(stdout).unwrap(), ours);
    let some_url = format!("{}/copy/Entry.html", served.base);
    let selected: BTreeSet<String> = String::from_utf8(
        ws.harvest(&[
            "query",
            "--format",
            "jsonl",
            "--include-revisits",
            "--to",
            "2100-01-01",
        ])
        .stdout,
    )
    .unwrap()
    .lines()
    .map(|l| {
        serde_json::from_str::<serde_json::Value>(l).unwrap()["url"]
            .as_str()
            .unwrap()
            .to_string()
    })
    .collect();
    assert!(selected.contains(&some_url));
    let filtered =
        String::from_utf8(ws.harvest(&["export", "cdxj", "--to", "2100-01-01"]).stdout).unwrap();
    let expected: Vec<&str> = replay
        .lines()
        .filter(|l| selected.contains(fields(l)["url"].as_str()))
        .collect();
    assert_eq!(filtered.lines().collect::<Vec<_>>(), expected);
    let none = ws
        .harvest(&["export", "cdxj", "--topic", "no-such-topic"])
        .stdout;
    assert!(none.is_empty());
}

#[test]
fn surt_keys_equal_the_python_package() {
    let urls = [
        "http://www.example.com/",
        "http://example.com",
        "https://www.EXAMPLE.com:443/A/B/?Z=1&a=2&a=1&b",
        "http://example.com:8080/a//b/./c/../d/",
        "http://www2.example.com/x",
        "http://wwwx.example.com/x",
        "http://www.com/",
        "http://127.0.0.1:34567/index.html",
        "http://127.1/x",
        "http://3232235777/",
        "http://user:pw@example.com/secret",
        "http://example.com/a%20b/%7Euser/%e4%b8%ad?q=%41%2f",
        "http://example.com/päge?ä=1",
        "http://example.com/a b",
        "http://example.com/a#frag",
        "http://example.com/?",
        "http://example.com/a?",
        "http://example.com/a?&&",
        "http://example.com/a?b=&b&a=1=2",
        "http://example.com/x?jsessionid=0123456789abcdef0123456789ABCDEF&y=1",
        "http://example.com/x?y=1&PHPSESSID=0123456789abcdef0123456789abcdef",
        "http://example.com/x?cfid=12&cftoken=ab&z=3",
        "http://example.com/(S(0123456789abcdefghijklmn))/page.aspx?x=1",
        "http://example.com/%2525/%zz",
        "http://Example.com./a..b/",
        "http://ex..ample.com/",
        "http://example.com:80/",
        "https://example.com:80/",
        "example.com/no-scheme",
        "http://http://example.com/twice",
        "ftp://example.com/file",
        "http://[::1]:8080/v6",
    ];
    let input: String = urls.iter().map(|u| format!("{u}\n")).collect();
    let theirs = python(
        &[
            "-c",
            "import sys, surt\nfor l in sys.stdin.read().splitlines():\n    print(surt.surt(l))",
        ],
        Some(&input),
    );
    let theirs: Vec<&str> = theirs.lines().collect();
    assert_eq!(theirs.len(), urls.len());
    let mut wrong = Vec::new();
    for (url, want) in urls.iter().zip(theirs) {
        let got = harvest::surt::surt(url);
        if got != want {
            wrong.push(format!("{url}: ours {got}, surt {want}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn jsonl_queries_have_no_row_cap_and_the_table_keeps_it() {
    let site = util::Site::serve(SiteFiles::from_pairs([(
        "/index.html".to_string(),
        b"<html><head><title>one</title></head><body>one page</body></html>".to_vec(),
    )]));
    let ws = Workspace::new(&site.url("/index.html"), "cap", None);
    ws.crawl();
    let rows = ws.harvest(&["query", "--format", "jsonl", "--limit", "100001"]);
    assert_eq!(String::from_utf8_lossy(&rows.stdout).lines().count(), 1);
    let all = ws.harvest(&["query", "--format", "jsonl"]);
    assert_eq!(all.stdout, rows.stdout);
    let table = ws.harvest_raw(&["query", "--limit", "100001"]);
    assert!(!table.status.success());
    assert!(
        String::from_utf8_lossy(&table.stderr).contains("--limit"),
        "{}",
        String::from_utf8_lossy(&table.stderr)
    );
}
