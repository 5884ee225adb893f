//! A connection pool (a reverse proxy, a load generator) opening many
//! connections at once from one address is not mistaken for a flood: the
//! per-client idle cap counts only connections that have had a moment to
//! send a request and have not, so every pooled connection is answered.

mod util;

use std::io::{Read, Write};

use util::{Site, Workspace};

#[test]
fn a_pool_opening_more_connections_than_the_idle_cap_at_once_is_served() {
    const POOL: usize = 200; // the default --max-idle-per-client is 64
    let site = Site::demo();
    let ws = Workspace::new(&site.url("/index.html"), "demo", Some(0));
    ws.crawl();
    let (server, base) = util::start_serve(&ws.config, &[]);
    let _server = util::KillOnDrop(server);
    let addr = base.trim_start_matches("http://").to_string();
    // All connect first (as a pool warming up), then each sends its request.
    let mut pool: Vec<std::net::TcpStream> = (0..POOL)
        .map(|_| std::net::TcpStream::connect(&addr).expect("connect"))
        .collect();
    for s in &mut pool {
        write!(s, "GET /healthz HTTP/1.1\r\nHost: {addr}\r\n\r\n").expect("send");
    }
    let mut answered = 0;
    let mut failed = Vec::new();
    for (i, s) in pool.iter_mut().enumerate() {
        s.set_read_timeout(Some(std::time::Duration::from_secs(10)))
            .unwrap();
        let mut buf = [0u8; 256];
        match s.read(&mut buf) {
            Ok(n) if buf[..n].starts_with(b"HTTP/1.1 200") => answered += 1,
            Ok(n) => failed.push(format!(
                "{i}: {:?}",
                String::from_utf8_lossy(&buf[..n.min(40)])
            )),
            Err(e) => failed.push(format!("{i}: {e}")),
        }
    }
    assert_eq!(
        answered,
        POOL,
        "pooled connections closed or reset: {}",
        failed.join("; ")
    );
}

/// Overload is refused at once, not queued: with one index read at a time
/// and no wait for a turn, requests arriving together beyond the first
/// are answered 503 with `Retry-After`, every other one 200, none reset.
#[test]
fn requests_beyond_the_servers_turns_are_refused_with_retry_after() {
    const CLIENTS: usize = 40;
    let site = Site::demo();
    let ws = Workspace::new(&site.url("/index.html"), "demo", Some(1));
    ws.crawl();
    let (server, base) =
        util::start_serve(&ws.config, &["--max-queries", "1", "--queue-wait-ms", "0"]);
    let _server = util::KillOnDrop(server);
    let addr = base.trim_start_matches("http://").to_string();
    let start = std::sync::Arc::new(std::sync::Barrier::new(CLIENTS));
    let answers: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..CLIENTS)
            .map(|i| {
                let (addr, start) = (addr.clone(), start.clone());
                scope.spawn(move || {
                    let mut s = std::net::TcpStream::connect(&addr).expect("connect");
                    start.wait();
                    let path = if i % 2 == 0 {
                        "/api/stats?interval=day&group_by=topic"
                    } else {
                        "/api/search?limit=200"
                    };
                    write!(s, "GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").expect("send");
                    let mut text = String::new();
                    s.read_to_string(&mut text).expect("an answer, not a reset");
                    text
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let status = |t: &str| t.split(' ').nth(1).unwrap_or("").to_string();
    let busy: Vec<&String> = answers.iter().filter(|t| status(t) == "503").collect();
    let ok = answers.iter().filter(|t| status(t) == "200").count();
    assert_eq!(
        ok + busy.len(),
        CLIENTS,
        "answers other than 200 and 503: {:?}",
        answers
            .iter()
            .map(|t| t.lines().next().unwrap_or(""))
            .collect::<Vec<_>>()
    );
    assert!(ok >= 1, "nothing was served");
    assert!(
        !busy.is_empty(),
        "{CLIENTS} requests at once on one turn with no wait: none refused"
    );
    for t in busy {
        assert!(
            t.to_ascii_lowercase().contains("\r\nretry-after: 1\r\n"),
            "a 503 without Retry-After: {t}"
        );
    }
}
