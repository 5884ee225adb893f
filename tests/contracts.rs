//! Issue 42, "Contracts that match": what the documents promise is what
//! `harvest` does. A running `harvest serve` answers only the status codes
//! its OpenAPI document lists for each route and method; `POST /api/cli`
//! streams the JSON lines the document describes; `/metrics` parses as the
//! Prometheus text format and carries the figures of the job run it served;
//! usage errors exit 2; every `--json` output is JSON alone on stdout; under
//! `--log-format json` every line on stderr is a JSON object. Every JSON answer has
//! the fields its schema in the document lists, no other, of the documented types
//! ([`schema::Checker`]).

#[path = "contracts/schema.rs"]
mod schema;
mod util;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::process::Output;
use std::time::{Duration, Instant};

use base64::Engine;
use harvest::demo::DEMO_ENTRY;
use serde_json::Value;
use util::{start_serve, KillOnDrop, Site, Workspace};

const SOURCE: &str = "help";
const JOB: &str = "news";

/// An answer: status, headers (names lowercased) and body.
struct Answer {
    status: u16,
    headers: BTreeMap<String, String>,
    body: Vec<u8>,
}

impl Answer {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("{e}: not JSON: {}", self.text()))
    }
}

/// One HTTP/1.0 request (the answer is not chunked: it ends with the
/// connection) to `addr`. Asked again (five times at most) when no answer
/// came: a server that refuses a body over its limit closes the connection
/// with the rest of the body unread, and the reset that follows may cut off
/// its answer.
fn request(addr: &str, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Answer {
    for _ in 0..4 {
        if let Some(a) = try_request(addr, method, path, headers, body) {
            return a;
        }
    }
    try_request(addr, method, path, headers, body)
        .unwrap_or_else(|| panic!("{method} {path}: no answer"))
}

fn try_request(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Option<Answer> {
    let mut s = std::net::TcpStream::connect(addr).expect("connect to harvest serve");
    let mut head = format!("{} {path} HTTP/1.0\r\n", method.to_ascii_uppercase());
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        head.push_str(&format!("Host: {addr}\r\n"));
    }
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    s.write_all(head.as_bytes()).unwrap();
    // A server that refuses a body too large may close before reading it.
    let _ = s.write_all(body);
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("{method} {path}: no status line in {head:?}"));
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    Some(Answer {
        status,
        headers,
        body: raw[split + 4..].to_vec(),
    })
}

/// A demo-site archive whose config has the job [`JOB`] (never scheduled).
fn workspace(site: &Site) -> Workspace {
    let seed = site.url(DEMO_ENTRY);
    let ws = Workspace::new(&seed, SOURCE, Some(1));
    ws.configure(|raw| {
        raw.jobs = vec![harvest::jobs::RawJob {
            job: harvest::jobs::JobKeys {
                name: JOB.into(),
                ..Default::default()
            },
            crawl: harvest::config::RawCrawl {
                seeds: vec![seed.clone()],
                max_depth: Some(1),
                ..Default::default()
            },
        }];
    });
    ws
}

/// The statuses the OpenAPI document lists for `method` on `path`.
fn documented(doc: &Value, method: &str, path: &str) -> BTreeSet<u16> {
    let op = &doc["paths"][path][method];
    assert!(op.is_object(), "{method} {path} is not documented");
    op["responses"]
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.parse().unwrap_or_else(|_| panic!("{path}: status {k}")))
        .collect()
}

#[test]
fn served_answers_match_the_openapi_document_and_metrics_carry_the_job_run() {
    let site = Site::demo();
    let ws = workspace(&site);
    let (child, base) = start_serve(&ws.config, &[]);
    let _server = KillOnDrop(child);
    let addr = base.trim_start_matches("http://").to_string();
    let addr = addr.as_str();
    let info: Value = serde_json::from_slice(
        &std::fs::read(ws.path().join("serve.json")).expect("the serve file"),
    )
    .unwrap();
    let bearer = format!("Bearer {}", info["token"].as_str().unwrap());
    let auth = ("Authorization", bearer.as_str());
    let json = ("Content-Type", "application/json");
    let doc = request(addr, "GET", "/api/openapi.json", &[], b"").json();
    // (method, documented path, status answered, what was asked), and the answer's
    // JSON body.
    let mut seen: Vec<(&str, String, u16, String)> = Vec::new();
    let mut json_answers: Vec<(&str, String, u16, String, Value)> = Vec::new();
    let mut ask =
        |method: &'static str, route: &str, path: &str, headers: &[(&str, &str)], body: &[u8]| {
            let a = request(addr, method, path, headers, body);
            let what = format!("{method} {path}: {}", a.text());
            let ctype = a.headers.get("content-type").map_or("", String::as_str);
            if ctype.starts_with("application/json") {
                json_answers.push((
                    method,
                    route.to_string(),
                    a.status,
                    format!("{method} {path}"),
                    a.json(),
                ));
            }
            seen.push((method, route.to_string(), a.status, what));
            a
        };

    // A job run: refused without the token, started with it; unknown jobs
    // are 404s. (A second start while it runs is a 409, but the run may be
    // over by then: not asked.)
    let run_path = format!("/api/jobs/{JOB}/run");
    let run = "/api/jobs/{name}/run";
    assert_eq!(ask("post", run, &run_path, &[], b"").status, 401);
    let started = ask("post", run, &run_path, &[auth], b"");
    assert_eq!(started.status, 202, "{}", started.text());
    assert_eq!(started.json()["job"], JOB);
    assert_eq!(
        ask("post", run, "/api/jobs/no-such-job/run", &[auth], b"").status,
        404,
    );
    let t0 = Instant::now();
    let record = loop {
        let runs = ask(
            "get",
            "/api/runs",
            &format!("/api/runs?job={JOB}&limit=5"),
            &[],
            b"",
        )
        .json();
        let all = runs["runs"].as_array().unwrap().clone();
        if !all.is_empty() && all.iter().all(|r| r["status"] != "running") {
            break all;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(180),
            "the job run did not end: {runs}"
        );
        std::thread::sleep(Duration::from_millis(200));
    };

    // /metrics: the Prometheus text format, strictly (every line a HELP,
    // TYPE or sample line), with the runs' figures, once the run is over in
    // the server too (its record is written just before).
    let running = format!("harvest_job_running{{job=\"{JOB}\"}} ");
    let text = loop {
        let metrics = ask("get", "/metrics", "/metrics", &[], b"");
        assert_eq!(metrics.status, 200);
        assert!(metrics.headers["content-type"].starts_with("text/plain; version=0.0.4"));
        let text = metrics.text();
        if text.contains(&format!("{running}0\n")) {
            break text;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(180),
            "still running:\n{text}"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    for line in text.lines() {
        assert!(
            !matches!(
                prometheus_parse::LineInfo::parse(line),
                prometheus_parse::LineInfo::Ignored
            ),
            "not a line of the text format: {line:?}"
        );
    }
    let scrape = prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_string())))
        .expect("the metrics parse");
    let sample = |name: &str, labels: &[(&str, &str)]| -> prometheus_parse::Value {
        scrape
            .samples
            .iter()
            .find(|s| s.metric == name && labels.iter().all(|(k, v)| s.labels.get(k) == Some(*v)))
            .unwrap_or_else(|| panic!("no {name} {labels:?} in\n{text}"))
            .value
            .clone()
    };
    let counter = |name: &str, labels: &[(&str, &str)]| match sample(name, labels) {
        prometheus_parse::Value::Counter(v) => v,
        other => panic!("{name} is not a counter: {other:?}"),
    };
    let gauge = |name: &str, labels: &[(&str, &str)]| match sample(name, labels) {
        prometheus_parse::Value::Gauge(v) => v,
        other => panic!("{name} is not a gauge: {other:?}"),
    };
    let job = [("job", JOB)];
    let sum = |field: &str| -> f64 {
        record
            .iter()
            .map(|r| r["summary"][field].as_u64().unwrap_or(0) as f64)
            .sum()
    };
    let by_status = |status: &str| record.iter().filter(|r| r["status"] == status).count() as f64;
    let failures: f64 = record
        .iter()
        .flat_map(|r| {
            r["summary"]["failures"]
                .as_object()
                .cloned()
                .unwrap_or_default()
        })
        .map(|(_, n)| n.as_u64().unwrap_or(0) as f64)
        .sum();
    assert!(sum("pages") > 0.0, "the job stored no page: {record:?}");
    assert_eq!(
        counter("harvest_crawl_pages_stored_total", &job),
        sum("pages")
    );
    assert_eq!(
        counter("harvest_crawl_not_modified_total", &job),
        sum("not_modified")
    );
    assert_eq!(
        counter("harvest_crawl_fetched_bytes_total", &job),
        sum("bytes")
    );
    assert_eq!(
        counter("harvest_crawl_stored_bytes_total", &job),
        sum("pack_bytes")
    );
    assert_eq!(
        counter("harvest_crawl_fetch_failures_total", &job),
        failures
    );
    for outcome in ["finished", "cancelled", "failed"] {
        assert_eq!(
            counter(
                "harvest_job_runs_total",
                &[("job", JOB), ("outcome", outcome)]
            ),
            by_status(outcome),
            "{outcome}: {record:?}"
        );
    }
    assert_eq!(gauge("harvest_job_running", &job), 0.0);
    assert_eq!(gauge("harvest_crawl_frontier_urls", &job), 0.0);
    let last_end = record
        .iter()
        .filter_map(|r| r["ended"].as_str())
        .map(|t| {
            chrono::DateTime::parse_from_rfc3339(t)
                .unwrap()
                .timestamp_millis() as f64
                / 1e3
        })
        .fold(f64::MIN, f64::max);
    assert!(
        (gauge("harvest_job_last_run_end_timestamp_seconds", &job) - last_end).abs() < 0.002,
        "{last_end}\n{text}"
    );

    // The read routes: answers, bad parameters, foreign hosts.
    let evil = format!("evil.example:{}", addr.rsplit(':').next().unwrap());
    let hits = ask("get", "/api/search", "/api/search?limit=2", &[], b"").json();
    let id = hits["hits"][0]["id"].as_str().expect("a hit").to_string();
    let (table, key) = id.split_once('.').unwrap();
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let mut row = b64.decode(key).unwrap();
    *row.last_mut().unwrap() ^= 0xff;
    let missing = format!("{table}.{}", b64.encode(row));
    for (route, path) in [
        ("/api/search", "/api/search?limit=0".to_string()),
        (
            "/api/search",
            "/api/search?source=no-such-source".to_string(),
        ),
        (
            "/api/search",
            "/api/search?text=%E6%95%B0%E6%8D%AE&sort=relevance&limit=3".to_string(),
        ),
        (
            "/api/search",
            "/api/search?topic=no-such-topic&media=no-such-media".to_string(),
        ),
        ("/api/stats", "/api/stats?interval=week".into()),
        (
            "/api/stats",
            "/api/stats?group_by=story&topic=no-such-topic".into(),
        ),
        ("/api/stats", "/api/stats?interval=fortnight".into()),
        ("/api/stats.csv", "/api/stats.csv".into()),
        ("/api/stats.json", "/api/stats.json?group_by=media".into()),
        ("/api/pages/{id}", format!("/api/pages/{id}")),
        ("/api/pages/{id}", format!("/api/pages/{missing}")),
        ("/api/pages/{id}", "/api/pages/not-an-id!".into()),
        ("/api/pages/{id}/copies", format!("/api/pages/{id}/copies")),
        (
            "/api/pages/{id}/copies",
            format!("/api/pages/{missing}/copies"),
        ),
        ("/api/pages/{id}/raw", format!("/api/pages/{id}/raw")),
        ("/api/pages/{id}/raw", format!("/api/pages/{missing}/raw")),
        ("/api/topics", format!("/api/topics?source={SOURCE}")),
        ("/api/jobs", "/api/jobs".into()),
        ("/api/runs", "/api/runs?limit=0".into()),
        ("/api/sources", "/api/sources".into()),
        ("/api/openapi.json", "/api/openapi.json".into()),
        ("/healthz", "/healthz".into()),
        ("/metrics", "/metrics".into()),
    ] {
        ask("get", route, &path, &[], b"");
        ask("get", route, &path, &[("Host", &evil)], b"");
        // A parameter no route takes: a 400 where the document lists one,
        // else the route does not check its parameters.
        let sep = if path.contains('?') { '&' } else { '?' };
        let odd = ask(
            "get",
            route,
            &format!("{path}{sep}no_such_param=1"),
            &[],
            b"",
        );
        let lists_400 = documented(&doc, "get", route).contains(&400);
        if odd.status != 404 {
            assert_eq!(
                odd.status == 400,
                lists_400,
                "GET {path}{sep}no_such_param=1 answered {} while the document {} 400",
                odd.status,
                if lists_400 { "lists" } else { "does not list" }
            );
        }
    }

    // The command bridge: every way a request can be refused, and one
    // command streamed as documented.
    let cli = "/api/cli";
    let query = br#"{"args": ["query", "--limit", "1", "--format", "jsonl"]}"#;
    assert_eq!(ask("post", cli, cli, &[json], query).status, 401);
    assert_eq!(
        ask(
            "post",
            cli,
            cli,
            &[json, auth, ("Origin", "http://evil.example")],
            query
        )
        .status,
        403
    );
    assert_eq!(
        ask("post", cli, cli, &[json, auth], b"{not json").status,
        400
    );
    assert_eq!(ask("post", cli, cli, &[auth], query).status, 415);
    assert_eq!(
        ask("post", cli, cli, &[json, auth], br#"{"argv": []}"#).status,
        422
    );
    let big = format!(r#"{{"args": ["{}"]}}"#, "x".repeat(70 * 1024));
    assert_eq!(
        ask("post", cli, cli, &[json, auth], big.as_bytes()).status,
        413
    );
    for (args, code) in [
        (&query[..], 0),
        (&br#"{"args": ["query", "--no-such-flag"]}"#[..], 2),
        (
            &br#"{"args": ["get", "http://127.0.0.1:1/never-archived"]}"#[..],
            1,
        ),
    ] {
        let a = ask("post", cli, cli, &[json, auth], args);
        assert_eq!(a.status, 200, "{}", a.text());
        assert_eq!(a.headers["content-type"], "application/x-ndjson");
        let lines: Vec<Value> = a
            .text()
            .lines()
            .map(|l| {
                serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: not a JSON line: {l:?}"))
            })
            .collect();
        for l in &lines {
            let frame = l == "alive"
                || l.as_object().is_some_and(|o| {
                    o.len() == 1
                        && (["stdout", "stderr", "file"]
                            .iter()
                            .any(|k| o.get(*k).is_some_and(Value::is_string))
                            || o.get("code").is_some_and(Value::is_u64))
                });
            assert!(frame, "not a documented frame: {l}");
        }
        assert_eq!(lines.last().unwrap()["code"], code, "{}", a.text());
        assert_eq!(lines.iter().filter(|l| l["code"].is_u64()).count(), 1);
    }

    // Uploads.
    let up = "/api/uploads";
    assert_eq!(
        ask("post", up, "/api/uploads?name=a.warc", &[], b"WARC/1.1\r\n").status,
        401
    );
    assert_eq!(
        ask("post", up, "/api/uploads?name=..", &[auth], b"WARC/1.1\r\n").status,
        400
    );
    assert_eq!(
        ask(
            "post",
            up,
            "/api/uploads?name=a.warc",
            &[auth],
            b"WARC/1.1\r\n"
        )
        .status,
        201
    );

    let mut undocumented = Vec::new();
    let mut answered: BTreeMap<(String, &str), BTreeSet<u16>> = BTreeMap::new();
    for (method, path, status, what) in &seen {
        answered
            .entry((path.clone(), *method))
            .or_default()
            .insert(*status);
        if !documented(&doc, method, path).contains(status) {
            undocumented.push(format!("{status} not documented for {what}"));
        }
    }
    assert!(undocumented.is_empty(), "{undocumented:#?}");
    // The checks above reached every documented route.
    for route in harvest::serve::ROUTES.iter().filter(|r| r.doc.is_some()) {
        let (method, path) = (route.method.name(), route.path);
        assert!(
            answered.contains_key(&(path.to_string(), method)),
            "{method} {path} not asked"
        );
    }
    // Every JSON answer is what its schema says, and every field the schemas of the
    // answers list was in some answer.
    let mut checker = schema::Checker::new(&doc);
    let mut wrong = Vec::new();
    let mut declared = BTreeSet::new();
    for (method, path, status, what, value) in &json_answers {
        let documented = &doc["paths"][path][*method]["responses"][status.to_string()];
        let schema = &documented["content"]["application/json"]["schema"];
        if schema.is_object() {
            checker.check("", schema, value, what, &mut wrong);
            checker.declared("", schema, &mut declared);
        }
    }
    assert!(wrong.is_empty(), "answers unlike their schemas: {wrong:#?}");
    let unseen: Vec<&String> = declared.difference(&checker.seen).collect();
    assert!(
        unseen.is_empty(),
        "fields the document lists that no answer had: {unseen:?}"
    );
    for name in [
        "Hit",
        "PageDetail",
        "Stats",
        "Copies",
        "Error",
        "Warning",
        "Jobs",
        "Runs",
    ] {
        assert!(
            declared.iter().any(|d| d.starts_with(&format!("{name}."))),
            "no answer of schema {name} checked: {declared:?}"
        );
    }
    // And a good part of the statuses each documents.
    let reached: usize = answered.values().map(BTreeSet::len).sum();
    assert!(
        reached >= 50,
        "only {reached} statuses reached: {answered:?}"
    );
}

/// Whether every line of `text` is a JSON object; the offending line if not.
fn json_lines(text: &[u8]) -> Result<Vec<Value>, String> {
    String::from_utf8_lossy(text)
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l)
                .ok()
                .filter(Value::is_object)
                .ok_or_else(|| l.to_string())
        })
        .collect()
}

fn harvest_raw(ws: &Workspace, args: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_harvest"))
        .arg("-c")
        .arg(&ws.config)
        .args(args)
        .output()
        .expect("run harvest")
}

#[test]
fn usage_errors_exit_2_and_failed_commands_1() {
    let site = Site::demo();
    let ws = workspace(&site);
    for args in [
        &["query", "--no-such-flag"][..],
        &["no-such-command"],
        &["query", "--limit", "many"],
        &["--log-format", "json", "query", "--sort", "sideways"],
    ] {
        let out = harvest_raw(&ws, args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    // A read command on an archive that does not exist yet fails.
    let out = harvest_raw(&ws, &["get", "http://127.0.0.1:1/never-archived"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("harvest: error: "));
    // --help is no error.
    let out = harvest_raw(&ws, &["query", "--help"]);
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn json_output_is_json_alone_and_json_logs_are_json_lines() {
    let site = Site::demo();
    let ws = workspace(&site);
    let logs_json = |out: &Output, what: &str| -> Vec<Value> {
        json_lines(&out.stderr).unwrap_or_else(|line| {
            panic!("{what}: a line on stderr under --log-format json is not JSON: {line:?}")
        })
    };
    // A failing command: its error is a JSON log line (with its causes).
    let out = harvest_raw(
        &ws,
        &[
            "--log-format",
            "json",
            "get",
            "http://127.0.0.1:1/never-archived",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let logs = logs_json(&out, "get");
    assert!(logs.iter().any(|l| l["level"] == "ERROR"), "{logs:?}");
    // A usage error too.
    let out = harvest_raw(&ws, &["--log-format", "json", "query", "--no-such-flag"]);
    assert_eq!(out.status.code(), Some(2));
    let logs = logs_json(&out, "usage");
    assert!(
        logs.iter()
            .all(|l| l["level"] == "ERROR" && l["fields"]["message"].is_string()),
        "{logs:?}"
    );

    // The crawl (no topic model: a warning; progress lines): stdout is its
    // JSON summary, every line on stderr is JSON.
    let crawl = harvest_raw(&ws, &["--log-format", "json", "crawl", "--json"]);
    assert!(
        crawl.status.success(),
        "{}",
        String::from_utf8_lossy(&crawl.stderr)
    );
    let logs = logs_json(&crawl, "crawl");
    assert!(
        logs.iter().any(|l| l["level"] == "WARN"),
        "the missing model is a warning: {logs:?}"
    );
    let summary: Value = serde_json::from_slice(&crawl.stdout).expect("crawl --json: JSON alone");
    assert!(summary["pages"].as_u64() > Some(0), "{summary}");

    let status = harvest_raw(&ws, &["jobs", "status", "--json"]);
    assert!(status.status.success());
    let runs = json_lines(&status.stdout).unwrap_or_else(|l| panic!("jobs status --json: {l:?}"));
    assert!(!runs.is_empty(), "{runs:?}");

    // Every --json command: stdout is one JSON document (or JSON lines).
    let whole: [&[&str]; 9] = [
        &["reextract", "--dry-run", "--json"],
        &["reextract", "--json"],
        &["fsck", "--json"],
        &["jobs", "run", JOB, "--json"],
        &["dedup", "--format", "json"],
        &["stats", "--format", "json"],
        &[
            "--log-format",
            "json",
            "query",
            "--topic",
            "no-such-topic",
            "--format",
            "jsonl",
        ],
        &["import", "--json", "PACK"],
        &["reindex", "--replace", "--json"],
    ];
    let pack = ws.packs()[0].to_string_lossy().into_owned();
    for args in whole {
        let args: Vec<&str> = args
            .iter()
            .map(|a| if *a == "PACK" { pack.as_str() } else { *a })
            .collect();
        let out = harvest_raw(&ws, &args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        if args.contains(&"jsonl") {
            json_lines(&out.stdout).unwrap_or_else(|l| panic!("{args:?}: not a JSON line: {l:?}"));
            let logs = logs_json(&out, "query");
            assert!(
                logs.iter().any(|l| l["level"] == "WARN"),
                "an unknown topic is a warning: {logs:?}"
            );
        } else {
            let v: Result<Value, _> = serde_json::from_slice(&out.stdout);
            assert!(
                v.is_ok(),
                "{args:?}: stdout is not JSON alone: {}",
                String::from_utf8_lossy(&out.stdout)
            );
        }
    }
}
