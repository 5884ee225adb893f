//! `harvest serve` cannot be used against its host: the routes that act on
//! it (the command bridge, uploads, job runs) need a token even when the
//! server was started without one (it makes one and keeps it in the private
//! serve file), requests naming another host (DNS rebinding) or coming from
//! another site's page are refused, and a forwarded command writes no file
//! and reads no path on the server: `--out` and `--plot` are written by the
//! calling process, `import` reads only what the caller sends.

mod util;

use std::io::{Read, Write};

use base64::Engine;
use serde_json::Value;
use util::{start_serve, Site, Workspace};

/// One HTTP/1.0 request (no chunked answer) to `addr` with `headers`;
/// the status and the body.
fn request(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> (u16, String) {
    let mut s = std::net::TcpStream::connect(addr).expect("connect to harvest serve");
    let mut head = format!("{method} {path} HTTP/1.0\r\n");
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    s.write_all(head.as_bytes()).unwrap();
    s.write_all(body).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let text = String::from_utf8_lossy(&raw).into_owned();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {text:?}"));
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}

/// A forwarded command's frames (the body may be chunked: frames are found
/// by their JSON lines).
fn frames(body: &str) -> Vec<Value> {
    body.lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn cli_body(args: &[&str]) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({ "args": args })).unwrap()
}

struct Server {
    child: std::process::Child,
    addr: String,
    token: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(ws: &Workspace) -> Server {
    let (child, base) = start_serve(&ws.config, &[]);
    let addr = base.trim_start_matches("http://").to_string();
    let info: Value = serde_json::from_slice(
        &std::fs::read(ws.path().join("serve.json")).expect("the serve file"),
    )
    .expect("serve file JSON");
    let token = info["token"]
        .as_str()
        .expect("a server started without --token keeps a token in its serve file")
        .to_string();
    assert!(token.len() >= 32, "a short token: {token:?}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(ws.path().join("serve.json"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o077, 0, "the serve file is readable by others");
    }
    Server { child, addr, token }
}

fn archive() -> (Site, Workspace) {
    let site = Site::demo();
    let ws = Workspace::new(&site.url("/index.html"), "help", Some(1));
    ws.crawl();
    (site, ws)
}

#[test]
fn the_api_cannot_write_or_read_the_hosts_files() {
    let (_site, ws) = archive();
    let server = serve(&ws);
    let addr = server.addr.as_str();
    let bearer = format!("Bearer {}", server.token);
    let victim = tempfile::tempdir().unwrap();
    let svg = victim.path().join("planted.svg");
    let cdxj = victim.path().join("planted.cdxj");
    let svg_s = svg.to_str().unwrap();
    let cdxj_s = cdxj.to_str().unwrap();
    let json = ("Content-Type", "application/json");

    // No token: the bridge, uploads and job runs refuse (data routes stay open).
    for (path, body) in [
        ("/api/cli", cli_body(&["stats", "--plot", svg_s])),
        ("/api/uploads?name=x.warc", b"WARC/1.1\r\n".to_vec()),
        ("/api/jobs/any/run", Vec::new()),
    ] {
        let (status, text) = request(addr, "POST", path, &[("Host", addr), json], &body);
        assert_eq!(status, 401, "POST {path} without a token: {status} {text}");
        assert!(
            text.contains("serve file"),
            "the 401 says where the token is: {text}"
        );
    }
    let (status, _) = request(
        addr,
        "POST",
        "/api/cli",
        &[("Host", addr), json, ("Authorization", "Bearer wrong")],
        &cli_body(&["query"]),
    );
    assert_eq!(status, 401, "a wrong token");
    let (status, _) = request(addr, "GET", "/api/search", &[("Host", addr)], b"");
    assert_eq!(
        status, 200,
        "the data routes need no token when none was given"
    );

    // DNS rebinding: a page of evil.example whose name now points at
    // 127.0.0.1 sends its own name as Host; refused, token or not.
    let rebound = format!("evil.example:{}", addr.rsplit(':').next().unwrap());
    for (method, path, body) in [
        ("GET", "/api/search", Vec::new()),
        ("GET", "/", Vec::new()),
        ("POST", "/api/cli", cli_body(&["query"])),
    ] {
        let (status, text) = request(
            addr,
            method,
            path,
            &[("Host", &rebound), json, ("Authorization", &bearer)],
            &body,
        );
        assert_eq!(
            status, 403,
            "{method} {path} as evil.example: {status} {text}"
        );
        assert!(text.contains("evil.example"), "{text}");
    }
    // Another site's page posting here (CSRF) is refused even with the token.
    let (status, text) = request(
        addr,
        "POST",
        "/api/cli",
        &[
            ("Host", addr),
            ("Origin", "http://evil.example"),
            json,
            ("Authorization", &bearer),
        ],
        &cli_body(&["query"]),
    );
    assert_eq!(status, 403, "a cross-site POST: {status} {text}");
    // The server's own names pass: its address, localhost, its own origin.
    let local = format!("localhost:{}", addr.rsplit(':').next().unwrap());
    let (status, _) = request(addr, "GET", "/api/topics", &[("Host", &local)], b"");
    assert_eq!(status, 200, "Host localhost");
    let origin = format!("http://{addr}");
    let (status, text) = request(
        addr,
        "POST",
        "/api/cli",
        &[
            ("Host", addr),
            ("Origin", &origin),
            json,
            ("Authorization", &bearer),
        ],
        &cli_body(&["query", "--limit", "1"]),
    );
    assert_eq!(status, 200, "a same-origin POST with the token: {text}");

    // With the token, the files a command names are not the server's to write:
    // their bytes come back in the answer.
    for (args, planted, starts) in [
        (vec!["stats", "--plot", svg_s], &svg, "<svg"),
        (vec!["export", "cdxj", "--out", cdxj_s], &cdxj, "\"digest\""),
    ] {
        let (status, text) = request(
            addr,
            "POST",
            "/api/cli",
            &[("Host", addr), json, ("Authorization", &bearer)],
            &cli_body(&args),
        );
        assert_eq!(status, 200, "{args:?}: {text}");
        let frames = frames(&text);
        assert_eq!(frames.last().unwrap()["code"], 0, "{args:?}: {text}");
        assert!(
            !planted.exists(),
            "{args:?}: the server wrote {}",
            planted.display()
        );
        let file: Vec<u8> = frames
            .iter()
            .filter_map(|f| f["file"].as_str())
            .flat_map(|b| base64::engine::general_purpose::STANDARD.decode(b).unwrap())
            .collect();
        let file = String::from_utf8_lossy(&file);
        assert!(
            file.contains(starts),
            "{args:?}: the caller's file frames hold {:?}",
            &file[..file.len().min(200)]
        );
    }

    // Import reads only files the caller sent: a path on the server is refused.
    for path in [
        "/etc/passwd",
        "/etc/hostname",
        ws.packs()[0].to_str().unwrap(),
    ] {
        let (status, text) = request(
            addr,
            "POST",
            "/api/cli",
            &[("Host", addr), json, ("Authorization", &bearer)],
            &cli_body(&["import", path]),
        );
        assert_eq!(status, 200, "{text}");
        let frames = frames(&text);
        assert_eq!(frames.last().unwrap()["code"], 2, "import {path}: {text}");
        let said: String = frames.iter().filter_map(|f| f["stderr"].as_str()).collect();
        assert!(said.contains("sent to it first"), "import {path}: {said}");
    }
    // Upload names cannot climb out of the upload folder.
    for name in ["..", "../../x", "a/b"] {
        let (status, text) = request(
            addr,
            "POST",
            &format!("/api/uploads?name={}", name.replace('/', "%2F")),
            &[("Host", addr), ("Authorization", &bearer)],
            b"WARC/1.1\r\n",
        );
        assert_eq!(status, 400, "upload named {name:?}: {text}");
    }
    let (status, text) = request(
        addr,
        "POST",
        "/api/cli",
        &[("Host", addr), json, ("Authorization", &bearer)],
        &cli_body(&[
            "import",
            "upload:00000000000000000000000000000000/../../../etc/passwd",
        ]),
    );
    assert_eq!(status, 200);
    assert_eq!(
        frames(&text).last().unwrap()["code"],
        2,
        "a forged upload reference: {text}"
    );
}

#[test]
fn forwarded_commands_write_the_callers_files_and_send_its_imports() {
    let (_site, ws) = archive();
    let pack = ws.packs()[0].clone();
    let here = tempfile::tempdir().unwrap();
    let local = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_harvest"))
            .current_dir(here.path())
            .arg("-c")
            .arg(&ws.config)
            .args(args)
            .output()
            .expect("run harvest")
    };
    // The same commands on the store opened here: the reference answers.
    let direct_cdxj = local(&["export", "cdxj"]);
    assert!(direct_cdxj.status.success());

    let server = serve(&ws);
    let forwarded = |args: &[&str]| {
        let out = local(args);
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(
            err.contains("running this through"),
            "{args:?} did not go through the server: {err}"
        );
        assert!(out.status.success(), "{args:?}: {err}");
        out
    };
    // Relative paths: the caller's working folder, written by the caller.
    forwarded(&["stats", "--plot", "chart.svg"]);
    let chart = std::fs::read_to_string(here.path().join("chart.svg")).expect("the chart");
    assert!(
        chart.starts_with("<svg") || chart.contains("<svg"),
        "{chart:.100}"
    );
    forwarded(&["stats", "--plot", "chart.png"]);
    let png = std::fs::read(here.path().join("chart.png")).expect("the PNG chart");
    assert!(png.starts_with(b"\x89PNG"), "not a PNG");
    forwarded(&["export", "cdxj", "--out", "all.cdxj"]);
    let cdxj = std::fs::read(here.path().join("all.cdxj")).expect("the CDXJ file");
    assert_eq!(
        cdxj, direct_cdxj.stdout,
        "the forwarded export differs from the direct one"
    );
    assert!(!cdxj.is_empty());
    // No temporary file left beside them.
    let names: Vec<String> = std::fs::read_dir(here.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names.iter().all(|n| !n.contains(".tmp-")),
        "temporary files left: {names:?}"
    );

    // Import: the file is sent, imported (already archived: nothing new),
    // and its upload removed afterwards.
    let copy = here.path().join("again.warc.gz");
    std::fs::copy(&pack, &copy).unwrap();
    let out = forwarded(&["import", "--json", "--quiet", "again.warc.gz"]);
    let summary: Value = serde_json::from_slice(&out.stdout).expect("import --json");
    assert_eq!(summary["files"], 1, "{summary}");
    assert!(
        summary["records"].as_u64().unwrap_or(0) > 0,
        "the sent pack's records were read: {summary}"
    );
    let uploads = ws.path().join("uploads");
    let left: Vec<_> = std::fs::read_dir(&uploads)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "uploads left after the import: {left:?}");
    // A missing file fails on the caller's side, naming it.
    let out = local(&["import", "missing.warc.gz"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("missing.warc.gz"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    drop(server);
}
