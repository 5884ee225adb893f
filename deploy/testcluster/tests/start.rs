//! Smoke test of the test cluster (CI runs it first): start, endpoints answer, Thrift restart, stop on drop.

use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

use testcluster::{port_answers, TestCluster};

const GONE_WAIT: Duration = Duration::from_secs(5);

fn process_alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

#[test]
fn starts_restarts_thrift_and_stops_on_drop() {
    let cluster =
        TestCluster::start().unwrap_or_else(|e| panic!("test cluster did not start: {e}"));
    assert!(
        cluster.hdfs_url.starts_with("hdfs://127.0.0.1:"),
        "{}",
        cluster.hdfs_url
    );
    assert!(
        port_answers(cluster.namenode_addr()),
        "NameNode {} does not answer",
        cluster.hdfs_url
    );
    assert!(
        port_answers(&cluster.thrift),
        "Thrift {} does not answer",
        cluster.thrift
    );
    assert!(
        port_answers(&cluster.zookeeper),
        "ZooKeeper {} does not answer",
        cluster.zookeeper
    );
    assert!(cluster.log_path().is_file());

    // A connection open before the restart is cut by it, and the port answers again afterwards.
    let before = std::net::TcpStream::connect(&cluster.thrift).expect("connect before restart");
    cluster
        .restart_thrift()
        .unwrap_or_else(|e| panic!("restart_thrift failed: {e}"));
    assert!(
        port_answers(&cluster.thrift),
        "Thrift {} does not answer after the restart",
        cluster.thrift
    );
    before
        .set_read_timeout(Some(Duration::from_secs(5)))
        .expect("set timeout");
    let mut buf = [0u8; 1];
    let read = std::io::Read::read(&mut &before, &mut buf);
    assert!(
        matches!(read, Ok(0) | Err(_)),
        "old connection still open after the restart: {read:?}"
    );
    // And a second restart works as well (the server can be restarted repeatedly).
    cluster
        .restart_thrift()
        .unwrap_or_else(|e| panic!("second restart_thrift failed: {e}"));

    let pid = cluster.pid();
    let thrift = cluster.thrift.clone();
    assert!(process_alive(pid));
    drop(cluster);
    let deadline = Instant::now() + GONE_WAIT;
    while process_alive(pid) && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(100));
    }
    assert!(!process_alive(pid), "JVM {pid} still running after drop");
    assert!(
        !port_answers(&thrift),
        "Thrift {thrift} still answers after drop"
    );
}

#[test]
fn shared_cluster_is_started_once() {
    let a = TestCluster::shared();
    let b = TestCluster::shared();
    assert!(std::ptr::eq(a, b));
    assert!(port_answers(&a.thrift));
}
