//! A gzip bomb (1 GiB of zeros, compressed while being sent) must stop at the
//! decoded-body cap quickly and without buffering the decoded data.
//! Own test binary so the process memory high-water mark means something.

mod util;

use std::time::{Duration, Instant};

use crawler::FailureKind;
use util::{failures, run, test_config, Reply, TestServer};

const GIB: u64 = 1024 * 1024 * 1024;
const CAP: u64 = 4 * 1024 * 1024;

/// Peak resident memory of this process in KiB (Linux `VmHWM`).
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gzip_bomb_is_cut_at_the_decoded_cap() {
    let server = TestServer::start(|req| match req.path.as_str() {
        "/bomb.html" => Reply::GzipBomb { decoded_bytes: GIB },
        _ => Reply::status(404),
    })
    .await;
    let mut cfg = test_config(vec![server.url("/bomb.html")]);
    cfg.max_body_bytes = CAP;
    cfg.respect_robots = false;
    let started = Instant::now();
    let (summary, events) = run(cfg).await;
    let elapsed = started.elapsed();

    assert_eq!(
        failures(&events),
        vec![(server.url("/bomb.html").to_string(), FailureKind::TooLarge)]
    );
    assert_eq!(summary.pages, 0);
    assert!(elapsed < Duration::from_secs(20), "took {elapsed:?}");
    // The client stopped reading long before the server produced the whole GiB
    // of decoded data... unless the socket buffers absorbed it; either way our
    // memory stayed far below the bomb's size.
    if let Some(peak) = peak_rss_kib() {
        assert!(peak < 256 * 1024, "peak RSS {peak} KiB");
    }
    assert!(server.bomb_bytes.load(std::sync::atomic::Ordering::SeqCst) >= CAP);
}
