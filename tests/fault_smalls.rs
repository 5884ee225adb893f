//! Issue 40 item 6, the smaller holes of the fault/security probe: `harvest
//! serve` on a fresh data folder, statistics over the bucket limit answered
//! as a usage error (HTTP 400 / `--from: ...`), and the SSRF guard when the
//! crawler goes out through a proxy (`HTTP_PROXY`).

mod util;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream, ToSocketAddrs};
use std::sync::{Arc, Mutex};

use serde_json::Value;
use util::Workspace;

/// Kills the child when the test ends, also when it panics.
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `GET path` on `base` (`http://host:port`): status and body.
fn get(base: &str, path: &str) -> (u16, String) {
    let addr = base.trim_start_matches("http://");
    let mut s = TcpStream::connect(addr).expect("connect to harvest serve");
    write!(s, "GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").expect("send request");
    let mut text = String::new();
    s.read_to_string(&mut text).expect("read answer");
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}

fn json(body: &str) -> Value {
    serde_json::from_str(body).unwrap_or_else(|e| panic!("not JSON ({e}): {body}"))
}

/// Issue 40 item 6: `harvest serve` refused a fresh data folder ("no archive
/// at ..."), and `/api/stats` over more than 100,000 buckets answered 500.
#[test]
fn serve_starts_on_a_fresh_data_dir_and_oversized_stats_are_usage_errors() {
    // The workspace folder is the data_dir: it holds only harvest.toml.
    let ws = Workspace::new("http://127.0.0.1:9/", "fresh", Some(0));
    assert!(!ws.path().join("index").exists());
    let (server, base) = util::start_serve(&ws.config, &[]);
    let server = Killed(server);
    assert!(
        base.starts_with("http://"),
        "harvest serve did not print its ready line on a fresh data_dir: {base:?}"
    );

    let (status, body) = get(&base, "/healthz");
    assert_eq!(status, 200, "{body}");
    let (status, body) = get(&base, "/api/search");
    assert_eq!(status, 200, "{body}");
    let v = json(&body);
    assert_eq!(v["hits"].as_array().map(Vec::len), Some(0), "{v}");
    let (status, body) = get(&base, "/api/stats");
    assert_eq!(status, 200, "{body}");
    assert_eq!(json(&body)["total"], 0);

    // 8,000 years of days or weeks: more than 100,000 buckets, the asker's
    // range (filled out to both bounds although the archive is empty).
    for (uri, param) in [
        ("/api/stats?from=1000-01-01&to=9000-01-01", "from"),
        ("/api/stats.csv?from=1000-01-01&to=9000-01-01", "from"),
        (
            "/api/stats.json?from=1000-01-01&to=9000-01-01&interval=week",
            "from",
        ),
    ] {
        let (status, body) = get(&base, uri);
        assert_eq!(status, 400, "{uri}: {body}");
        let v = json(&body);
        assert_eq!(v["error"]["param"], param, "{uri}: {v}");
        let message = v["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("100000") && message.contains("interval"),
            "{uri}: {message}"
        );
    }
    // The same range by year is fine: 8,001 empty years (a plain `to` date
    // is inclusive).
    let (status, body) = get(
        &base,
        "/api/stats?from=1000-01-01&to=9000-01-01&interval=year",
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(json(&body)["buckets"].as_array().map(Vec::len), Some(8001));
    drop(server);

    // The command line: the same limit is a usage error naming --from, exit 1
    // like every other bad filter (`--from: ...`), not an internal error.
    let out = ws.harvest_raw(&["stats", "--from", "1000-01-01", "--to", "9000-01-01"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("--from:") && stderr.contains("100000 day buckets"),
        "{stderr}"
    );
    let bad_date = ws.harvest_raw(&["stats", "--from", "yesterday"]);
    assert_eq!(
        bad_date.status.code(),
        out.status.code(),
        "the same exit code as another bad --from"
    );
    let out = ws.harvest(&[
        "stats",
        "--from",
        "2000-01-01",
        "--to",
        "2010-01-01",
        "--interval",
        "year",
    ]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).lines().count(),
        12,
        "a header and the years 2000 to 2010"
    );
}

/// A loopback HTTP proxy that records the request lines it receives and
/// answers each with a small HTML page (404 for robots.txt).
struct FakeProxy {
    addr: String,
    requests: Arc<Mutex<Vec<String>>>,
}

impl FakeProxy {
    fn start() -> FakeProxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind proxy");
        let addr = listener.local_addr().expect("proxy addr").to_string();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = requests.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(mut conn) = conn else { continue };
                let mut reader = BufReader::new(conn.try_clone().expect("clone"));
                let mut line = String::new();
                if reader.read_line(&mut line).is_err() {
                    continue;
                }
                loop {
                    let mut header = String::new();
                    match reader.read_line(&mut header) {
                        Ok(0) | Err(_) => break,
                        Ok(_) if header.trim().is_empty() => break,
                        Ok(_) => {}
                    }
                }
                let line = line.trim().to_string();
                let (status, body) = if line.contains("/robots.txt") {
                    ("404 Not Found", "no robots".to_string())
                } else {
                    (
                        "200 OK",
                        "<html><head><title>Behind the proxy</title></head><body><p>served by the proxy</p></body></html>".to_string(),
                    )
                };
                seen.lock().expect("requests").push(line);
                let _ = write!(
                    conn,
                    "HTTP/1.1 {status}\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        FakeProxy { addr, requests }
    }

    fn requests(&self) -> Vec<String> {
        self.requests.lock().expect("requests").clone()
    }
}

/// This machine's name when it resolves only to non-public addresses (a
/// name, not a literal: literals are refused before any lookup).
fn private_name() -> Option<String> {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname").ok()?;
    let name = name.trim().to_string();
    let addrs: Vec<_> = (name.as_str(), 80).to_socket_addrs().ok()?.collect();
    let private = !addrs.is_empty() && addrs.iter().all(|a| !crawler::guard::is_public_ip(a.ip()));
    private.then_some(name)
}

/// Issue 40 item 6: with `HTTP_PROXY` set the target's name went to the
/// proxy unresolved, past the resolver that refuses private addresses, so a
/// name of a private address was fetched. The crawler now resolves and
/// checks the name itself before the request reaches the proxy.
#[test]
fn a_private_target_behind_a_proxy_is_refused() {
    let Some(name) = private_name() else {
        eprintln!("skipped: this machine's name does not resolve to a private address");
        return;
    };
    let proxy = FakeProxy::start();
    let seed = format!("http://{name}:9/private-page");
    let ws = Workspace::new(&seed, "proxied", Some(0));
    let crawl = |allow_private: bool| -> Value {
        ws.configure(|raw| raw.crawl.allow_private = Some(allow_private));
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_harvest"))
            .arg("-c")
            .arg(&ws.config)
            .args(["crawl", "--quiet", "--json"])
            .env("HTTP_PROXY", format!("http://{}", proxy.addr))
            .env_remove("http_proxy")
            .env_remove("NO_PROXY")
            .env_remove("no_proxy")
            .output()
            .expect("run harvest crawl");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("crawl --json prints JSON")
    };

    let summary = crawl(false);
    assert_eq!(
        proxy.requests(),
        Vec::<String>::new(),
        "nothing reached the proxy"
    );
    assert_eq!(summary["pages"], 0, "{summary}");
    assert!(
        summary["failures"]["refused"].as_u64().unwrap_or(0) >= 1,
        "{summary}"
    );

    // The control: with the guard off the same crawl does go through the
    // proxy (so the refusal above is the guard's, not a proxy left unused).
    let summary = crawl(true);
    assert_eq!(summary["pages"], 1, "{summary}");
    let requests = proxy.requests();
    assert!(
        requests.iter().any(|r| r.contains(&seed)),
        "the proxy got the absolute URL: {requests:?}"
    );
}
