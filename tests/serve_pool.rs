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
    let (mut server, base) = util::start_serve(&ws.config, &[]);
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
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(
        answered,
        POOL,
        "pooled connections closed or reset: {}",
        failed.join("; ")
    );
}
