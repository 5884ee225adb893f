//! YARN + MapReduce on the test cluster: a Hadoop Streaming job submitted through the cluster's `hadoop` launcher
//! with the streaming jar, as `harvest mapreduce` will submit its jobs (a configured `hadoop` command), reading
//! and writing the cluster's HDFS. One cluster with YARN for this test binary (`shared_with_yarn`).

use std::collections::BTreeMap;
use std::fs;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use hdfs_native::sync::{Client, ClientBuilder};
use hdfs_native::WriteOptions;
use testcluster::{port_answers, TestCluster};

const DIR: &str = "/harvest-tc/yarn";
const INPUT: &str = "/harvest-tc/yarn/in/words.txt";
const OUTPUT: &str = "/harvest-tc/yarn/out";
const TEXT: &str = "the quick brown fox\nthe lazy dog\nthe fox jumps\n\nover the dog\n";
/// Emits `word<TAB>1` for every word of every line (the mapper shipped with `-files`).
const MAPPER: &str = "#!/bin/sh\nawk '{ for (i = 1; i <= NF; i++) printf \"%s\\t1\\n\", $i }'\n";
/// Sums the counts per word (the reducer shipped with `-files`).
const REDUCER: &str =
    "#!/bin/sh\nawk -F '\\t' '{ n[$1] += $2 } END { for (w in n) printf \"%s\\t%d\\n\", w, n[w] }'\n";
const RSS_POLL: Duration = Duration::from_millis(250);

fn expected_counts() -> BTreeMap<String, u64> {
    let mut counts = BTreeMap::new();
    for word in TEXT.split_whitespace() {
        *counts.entry(word.to_string()).or_insert(0) += 1;
    }
    counts
}

fn hadoop(cluster: &TestCluster, args: &[&str]) -> Output {
    let yarn = cluster.yarn.as_ref().expect("yarn part");
    Command::new(&yarn.hadoop)
        .args(args)
        .env_remove("HADOOP_CONF_DIR")
        .output()
        .unwrap_or_else(|e| panic!("run {}: {e}", yarn.hadoop.display()))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Parses `word<TAB>count` lines.
fn parse_counts(output: &str) -> BTreeMap<String, u64> {
    output
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| {
            let (word, n) = l
                .split_once('\t')
                .unwrap_or_else(|| panic!("not word<TAB>count: {l:?}"));
            let n = n
                .trim()
                .parse()
                .unwrap_or_else(|_| panic!("bad count: {l:?}"));
            (word.to_string(), n)
        })
        .collect()
}

/// `GET path` on a web server, returns the body (HTTP/1.0 answers end with the connection).
fn http_get(addr: &str, path: &str) -> String {
    let mut s = TcpStream::connect(addr).unwrap_or_else(|e| panic!("connect {addr}: {e}"));
    s.set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    write!(
        s,
        "GET {path} HTTP/1.0\r\nHost: {addr}\r\nAccept: application/json\r\n\r\n"
    )
    .expect("send request");
    let mut answer = String::new();
    s.read_to_string(&mut answer).expect("read answer");
    assert!(
        answer.starts_with("HTTP/1.1 200") || answer.starts_with("HTTP/1.0 200"),
        "GET http://{addr}{path}: {answer}"
    );
    answer
}

/// Resident memory (KiB) of `pid` and of all its descendants (the NodeManager's container JVMs are children of
/// the cluster JVM, via bash).
fn rss_tree_kib(root: u32) -> (u64, u64) {
    let mut parent = BTreeMap::new();
    let mut rss = BTreeMap::new();
    for entry in fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(status) = fs::read_to_string(entry.path().join("status")) else {
            continue;
        };
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.split_whitespace().next())
                .and_then(|v| v.parse::<u64>().ok())
        };
        if let Some(ppid) = field("PPid:") {
            parent.insert(pid, ppid as u32);
        }
        rss.insert(pid, field("VmRSS:").unwrap_or(0));
    }
    let in_tree = |mut pid: u32| loop {
        if pid == root {
            return true;
        }
        match parent.get(&pid) {
            Some(&p) if p != 0 && p != pid => pid = p,
            _ => return false,
        }
    };
    let total = rss
        .iter()
        .filter(|(pid, _)| in_tree(**pid))
        .map(|(_, kib)| kib)
        .sum();
    (rss.get(&root).copied().unwrap_or(0), total)
}

/// Samples [`rss_tree_kib`] until stopped; returns the peaks (cluster JVM alone, whole tree).
fn sample_rss(pid: u32, stop: Arc<AtomicBool>) -> thread::JoinHandle<(u64, u64)> {
    thread::spawn(move || {
        let mut peak = (0, 0);
        while !stop.load(Ordering::Relaxed) {
            let (jvm, tree) = rss_tree_kib(pid);
            peak = (peak.0.max(jvm), peak.1.max(tree));
            thread::sleep(RSS_POLL);
        }
        peak
    })
}

fn write_hdfs(client: &Client, path: &str, data: &[u8]) {
    let mut w = client
        .create(path, WriteOptions::default().create_parent(true))
        .unwrap_or_else(|e| panic!("create {path}: {e}"));
    w.write_all(data).expect("write");
    w.close().expect("close");
}

fn read_hdfs(client: &Client, path: &str) -> String {
    let len = client.get_file_info(path).expect("stat").length;
    let reader = client.read(path).expect("open");
    text(&reader.read_range(0, len).expect("read"))
}

#[test]
fn streaming_job_runs_on_yarn_through_the_hadoop_launcher() {
    let started = Instant::now();
    let cluster = TestCluster::shared_with_yarn();
    let yarn = cluster
        .yarn
        .as_ref()
        .expect("shared_with_yarn() has no YARN part");
    println!(
        "cluster with YARN ready after {:.1} s (JVM start to ready {:.1} s, of which YARN + MapReduce {:.1} s)",
        started.elapsed().as_secs_f64(),
        cluster.start_time().as_secs_f64(),
        yarn.start_time.as_secs_f64()
    );
    for addr in [
        &yarn.resourcemanager,
        &yarn.resourcemanager_web,
        &yarn.jobhistory,
        &yarn.jobhistory_web,
    ] {
        assert!(addr.starts_with("127.0.0.1:"), "{addr}");
        assert!(port_answers(addr), "{addr} does not answer");
    }
    let info = http_get(&yarn.resourcemanager_web, "/ws/v1/cluster/info");
    assert!(info.contains("\"state\":\"STARTED\""), "{info}");
    assert!(info.contains("\"hadoopVersion\":\"3.3.5\""), "{info}");
    let nodes = http_get(&yarn.resourcemanager_web, "/ws/v1/cluster/nodes");
    assert!(nodes.contains("\"state\":\"RUNNING\""), "{nodes}");
    let core = fs::read_to_string(yarn.conf_dir.join("core-site.xml")).expect("core-site.xml");
    assert!(core.contains(&cluster.hdfs_url), "{core}");
    let mapred =
        fs::read_to_string(yarn.conf_dir.join("mapred-site.xml")).expect("mapred-site.xml");
    assert!(
        mapred.contains("<name>mapreduce.framework.name</name><value>yarn</value>"),
        "{mapred}"
    );
    let site = fs::read_to_string(yarn.conf_dir.join("yarn-site.xml")).expect("yarn-site.xml");
    assert!(site.contains(&yarn.resourcemanager), "{site}");
    assert!(
        yarn.streaming_jar.is_file(),
        "{}",
        yarn.streaming_jar.display()
    );

    let version = hadoop(cluster, &["version"]);
    assert!(version.status.success(), "hadoop version: {version:?}");
    assert!(
        text(&version.stdout).starts_with("Hadoop 3.3.5"),
        "{version:?}"
    );

    let client = ClientBuilder::new()
        .with_url(cluster.hdfs_url.as_str())
        .build()
        .expect("hdfs client");
    let _ = client.delete(DIR, true);
    write_hdfs(&client, INPUT, TEXT.as_bytes());

    let local = tempfile::tempdir().expect("temp dir");
    let script = |name: &str, body: &str| {
        let path = local.path().join(name);
        fs::write(&path, body).expect("write script");
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).expect("chmod");
        path.to_string_lossy().into_owned()
    };
    let files = format!(
        "{},{}",
        script("mapper.sh", MAPPER),
        script("reducer.sh", REDUCER)
    );
    let jar = yarn.streaming_jar.to_string_lossy().into_owned();
    let job_args = [
        "jar",
        jar.as_str(),
        "-D",
        "mapreduce.job.name=harvest-tc-wordcount",
        "-D",
        "mapreduce.job.reduces=1",
        "-files",
        files.as_str(),
        "-input",
        INPUT,
        "-output",
        OUTPUT,
        "-mapper",
        "mapper.sh",
        "-reducer",
        "reducer.sh",
    ];

    let stop = Arc::new(AtomicBool::new(false));
    let (jvm_before, _) = rss_tree_kib(cluster.pid());
    let sampler = sample_rss(cluster.pid(), Arc::clone(&stop));
    let job_started = Instant::now();
    let job = hadoop(cluster, &job_args);
    let job_time = job_started.elapsed();
    stop.store(true, Ordering::Relaxed);
    let (jvm_peak, tree_peak) = sampler.join().expect("sampler");
    let log = text(&job.stderr);
    println!(
        "streaming job: {:.1} s wall (hadoop jar to exit); RSS of the cluster JVM {} MB before, peak {} MB; \
         peak of the JVM and its containers together {} MB",
        job_time.as_secs_f64(),
        jvm_before / 1024,
        jvm_peak / 1024,
        tree_peak / 1024
    );
    assert!(
        job.status.success(),
        "hadoop jar exited {}; stderr:\n{log}\nstdout:\n{}",
        job.status,
        text(&job.stdout)
    );
    assert!(log.contains("completed successfully"), "{log}");
    assert!(log.contains("Counters:"), "{log}");
    assert!(log.contains("Map input records=5"), "{log}");
    assert!(log.contains("Reduce output records=8"), "{log}");
    assert!(log.contains("Launched reduce tasks=1"), "{log}");

    let listing = client.list_status(OUTPUT, false).expect("list output");
    let names: Vec<&str> = listing
        .iter()
        .map(|s| s.path.rsplit('/').next().unwrap_or(&s.path))
        .collect();
    assert!(names.contains(&"_SUCCESS"), "{names:?}");
    let parts: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| n.starts_with("part-"))
        .collect();
    assert_eq!(parts, ["part-00000"], "{names:?}");
    let mut output = String::new();
    for part in &parts {
        output.push_str(&read_hdfs(&client, &format!("{OUTPUT}/{part}")));
    }
    assert_eq!(parse_counts(&output), expected_counts(), "{output}");

    // `hadoop fs` reads the same output.
    let cat = hadoop(cluster, &["fs", "-cat", &format!("{OUTPUT}/part-*")]);
    assert!(cat.status.success(), "hadoop fs -cat: {cat:?}");
    assert_eq!(parse_counts(&text(&cat.stdout)), expected_counts());

    // A job that cannot run fails the launcher, as `hadoop jar` does: the output folder exists now.
    let again = hadoop(cluster, &job_args);
    assert!(
        !again.status.success(),
        "second run into an existing output folder exited 0: {}",
        text(&again.stderr)
    );
    assert!(
        text(&again.stderr).contains("already exists"),
        "{}",
        text(&again.stderr)
    );
    assert!(client.delete(DIR, true).expect("delete"));
    assert!(Path::new(&yarn.hadoop).is_file());
}
