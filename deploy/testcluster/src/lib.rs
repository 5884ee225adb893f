//! Guard for harvest's JVM test cluster: a real HBase 2.6.1 mini cluster (HMaster, RegionServer, a MiniDFSCluster
//! NameNode + DataNode holding hbase.rootdir, MiniZooKeeperCluster) and HBase's own Thrift 1 server (binary
//! protocol, buffered transport), all in one JVM started from the Maven project next to this crate (`pom.xml`,
//! `src/main/java/harvest/testcluster/`).
//!
//! [`TestCluster::start`] builds the Maven project if needed (`build.sh`), spawns the JVM, waits for its ready line
//! and returns the endpoints; dropping the guard stops the JVM. [`TestCluster::start_with`] takes [`Options`] (more
//! DataNodes, a replication factor) for fault tests, which use the control methods
//! ([`TestCluster::stop_datanode`], [`TestCluster::datanodes_of`], [`TestCluster::restart_namenode`],
//! [`TestCluster::restart_thrift`]). [`TestCluster::shared`] gives one cluster per test
//! process. With [`Options::yarn`] (or [`TestCluster::shared_with_yarn`]) the JVM also runs YARN and MapReduce
//! (ResourceManager, one NodeManager, JobHistoryServer) on the same HDFS and writes a Hadoop client configuration
//! and a `hadoop` launcher ([`Yarn`]). The JVM exits by itself when its stdin closes, so it never outlives the test process, even one that
//! was killed.
//!
//! ```no_run
//! let cluster = testcluster::TestCluster::shared();
//! println!("{} {}", cluster.hdfs_url, cluster.thrift);
//! ```

mod error;

pub use error::{Error, Result};

use std::collections::VecDeque;
use std::fs::{self, File};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant, SystemTime};

/// Prefix of the line the JVM prints once every endpoint answers.
pub const READY_PREFIX: &str = "HARVEST-TESTCLUSTER READY ";
/// Prefix of every line the JVM prints for the guard (the ready line and the answers to control commands).
pub const LINE_PREFIX: &str = "HARVEST-TESTCLUSTER ";
/// Line the JVM prints after `restart-thrift` once the Thrift server answers again.
pub const THRIFT_RESTARTED: &str = "HARVEST-TESTCLUSTER THRIFT-RESTARTED";
/// Answer to `stop-datanode I`: `DATANODE-STOPPED I 127.0.0.1:PORT` (after [`LINE_PREFIX`]).
pub const DATANODE_STOPPED: &str = "DATANODE-STOPPED";
/// Answer to `datanodes-of PATH`: `DATANODES-OF 0,2` (after [`LINE_PREFIX`]).
pub const DATANODES_OF: &str = "DATANODES-OF";
/// Answer to `restart-namenode [DOWN_MS]` once the NameNode is back and out of safe mode.
pub const NAMENODE_RESTARTED: &str = "NAMENODE-RESTARTED";
/// Answer to a control command that failed: `COMMAND-FAILED <command>: <error>`.
pub const COMMAND_FAILED: &str = "COMMAND-FAILED";
/// Answer to a control command the JVM does not know.
pub const UNKNOWN_COMMAND: &str = "UNKNOWN-COMMAND";
/// Control command: restart the Thrift server on the same port.
pub const CMD_RESTART_THRIFT: &str = "restart-thrift";
/// Control command: stop the live DataNode with this index (`stop-datanode I`).
pub const CMD_STOP_DATANODE: &str = "stop-datanode";
/// Control command: which live DataNodes hold the last block of an HDFS file (`datanodes-of /path`).
pub const CMD_DATANODES_OF: &str = "datanodes-of";
/// Control command: stop the NameNode, wait, start it again on the same port (`restart-namenode [DOWN_MS]`).
pub const CMD_RESTART_NAMENODE: &str = "restart-namenode";
/// Control command: clean shutdown (EOF on stdin does the same).
pub const CMD_STOP: &str = "stop";
/// How long [`TestCluster::start`] waits for the ready line.
pub const START_TIMEOUT: Duration = Duration::from_secs(300);
/// How long [`TestCluster::restart_thrift`] waits for the Thrift server to answer again.
pub const RESTART_TIMEOUT: Duration = Duration::from_secs(120);
/// How long [`TestCluster::restart_namenode`] waits (after the down time) for the NameNode to be back.
pub const NAMENODE_RESTART_TIMEOUT: Duration = Duration::from_secs(120);
/// How long [`TestCluster::stop_datanode`] and [`TestCluster::datanodes_of`] wait for their answer.
pub const DATANODE_TIMEOUT: Duration = Duration::from_secs(60);
/// How long `Drop` waits for a clean shutdown before it kills the process group.
pub const STOP_GRACE: Duration = Duration::from_secs(15);
/// Lines of JVM output kept for error messages.
pub const TAIL_LINES: usize = 40;

const KEY_HDFS: &str = "hdfs";
const KEY_THRIFT: &str = "thrift";
const KEY_ZK: &str = "zk";
const KEY_THRIFT2: &str = "thrift2";
const KEY_NAMENODE_HTTP: &str = "namenode_http";
const KEY_HBASE_HTTP: &str = "hbase_http";
const MAIN_CLASS: &str = "harvest.testcluster.Main";
const DELETE_ON_EXIT: &str = "--delete-on-exit";
const OPT_DATANODES: &str = "--datanodes";
const OPT_REPLICATION: &str = "--replication";
const OPT_YARN: &str = "--yarn";
const KEY_YARN_RM: &str = "yarn_rm";
const KEY_YARN_WEB: &str = "yarn_web";
const KEY_JHS: &str = "jhs";
const KEY_JHS_WEB: &str = "jhs_web";
const KEY_HADOOP_CONF: &str = "hadoop_conf";
const KEY_HADOOP: &str = "hadoop";
const KEY_STREAMING_JAR: &str = "streaming_jar";
const KEY_YARN_START_MS: &str = "yarn_start_ms";
const JVM_FLAGS_FILE: &str = "jvm.flags";
const BUILD_SCRIPT: &str = "build.sh";
const POM_FILE: &str = "pom.xml";
const SOURCES_DIR: &str = "src/main";
const MAVEN_TARGET: &str = "target";
const CLASSPATH_FILE: &str = "target/classpath.txt";
const CLASSES_DIR: &str = "target/classes";
const BUILD_LOCK_FILE: &str = "target/.build.lock";
const BUILD_LOG_FILE: &str = "target/build.log";
const LOG_FILE: &str = "jvm.log";
const WORK_DIR: &str = "work";
const TEMP_PREFIX: &str = "harvest-testcluster-";
/// File in a cluster's temp folder naming the process that owns it.
const OWNER_FILE: &str = "owner.pid";
/// A leftover folder without an owner file (made before there was one) is removed once it is this old.
const UNOWNED_AGE: Duration = Duration::from_secs(6 * 3600);
const POLL: Duration = Duration::from_millis(100);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// Removes the temp folders of test clusters whose process is gone. A test process's shared cluster
/// ([`TestCluster::shared`]) lives in a static, which is never dropped, so its folder (a few hundred MB of
/// HDFS and HBase data) outlives the process; the next start clears it. Folders of live processes are left
/// alone; one without an owner file only when it is older than [`UNOWNED_AGE`]. Errors are ignored (a
/// folder another process is removing, permissions).
fn sweep_leftovers(root: &Path) {
    let Ok(entries) = fs::read_dir(root) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        if !name.to_string_lossy().starts_with(TEMP_PREFIX) {
            continue;
        }
        let path = entry.path();
        let gone = match fs::read_to_string(path.join(OWNER_FILE)) {
            Ok(pid) => pid
                .trim()
                .parse::<u32>()
                .is_ok_and(|pid| !Path::new(&format!("/proc/{pid}")).exists()),
            Err(_) => entry
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age > UNOWNED_AGE),
        };
        if gone {
            tracing::debug!(path = %path.display(), "removing a test cluster folder left by a finished process");
            let _ = fs::remove_dir_all(&path);
        }
    }
}

/// What the stdout reader thread reports.
#[derive(Debug)]
enum Event {
    Ready(String),
    /// Any other line of the guard's protocol, without [`LINE_PREFIX`] (the answer to a control command).
    Answer(String),
    Closed,
}

/// Shape of a test cluster started by [`TestCluster::start_with`]. `Default`: 1 DataNode, replication 1, no YARN
/// (what [`TestCluster::start`] and [`TestCluster::shared`] use: the fastest start).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// DataNodes of the MiniDFSCluster (at least 1).
    pub datanodes: u32,
    /// `dfs.replication` of the cluster (1 ..= `datanodes`); HBase's files and new files without their own
    /// replication get it.
    pub replication: u32,
    /// Also run YARN + MapReduce (MiniMRYarnCluster: ResourceManager, one NodeManager, JobHistoryServer) on the
    /// same HDFS, see [`Yarn`]. Adds ~6-9 s to the start and ~85 MB to the JVM's RSS, plus ~0.7 GB of container
    /// JVMs while a job runs (the AM and two tasks).
    pub yarn: bool,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            datanodes: 1,
            replication: 1,
            yarn: false,
        }
    }
}

/// The YARN part of a cluster started with [`Options::yarn`]: what a Hadoop client needs to submit jobs.
///
/// The NodeManager offers 1536 MB; the MapReduce AM takes 512 MB, map and reduce containers 384 MB each (so the
/// AM and two tasks run at once). Container JVMs get the Java 17 `--add-opens` Hadoop needs; their class path is
/// the cluster's (Hadoop 3.3.5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Yarn {
    /// The ResourceManager's client RPC address "127.0.0.1:PORT" (`yarn.resourcemanager.address`).
    pub resourcemanager: String,
    /// The ResourceManager's web server "127.0.0.1:PORT" (REST: `/ws/v1/cluster/info`, `/ws/v1/cluster/apps`).
    pub resourcemanager_web: String,
    /// The MapReduce JobHistoryServer's RPC address "127.0.0.1:PORT" (`mapreduce.jobhistory.address`).
    pub jobhistory: String,
    /// The JobHistoryServer's web server "127.0.0.1:PORT" (REST: `/ws/v1/history/mapreduce/jobs`).
    pub jobhistory_web: String,
    /// A Hadoop configuration folder (`HADOOP_CONF_DIR`): core-site.xml (`fs.defaultFS`), hdfs-site.xml,
    /// yarn-site.xml (the RM's addresses), mapred-site.xml (`mapreduce.framework.name=yarn`, container sizes and
    /// Java 17 options), log4j.properties (INFO to stderr, as Hadoop's).
    pub conf_dir: PathBuf,
    /// The `hadoop` launcher: `hadoop jar JAR [MAINCLASS] ARGS...` (RunJar), `hadoop fs ARGS...` (FsShell),
    /// `hadoop classpath`, `hadoop version`, with the cluster's class path and [`Yarn::conf_dir`]; honours
    /// `HADOOP_CONF_DIR`, `HADOOP_CLASSPATH` and `HADOOP_CLIENT_OPTS`. Progress and counters go to stderr.
    pub hadoop: PathBuf,
    /// The `hadoop-streaming-3.3.5.jar` (in `~/.m2`).
    pub streaming_jar: PathBuf,
    /// How long starting YARN and MapReduce took inside the JVM (after HBase was up).
    pub start_time: Duration,
}

/// The JVM's combined output: the log file plus the last [`TAIL_LINES`] lines in memory.
#[derive(Debug)]
struct Output {
    log: Mutex<File>,
    tail: Mutex<VecDeque<String>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Output {
    fn record(&self, stream: &str, line: &str) {
        // A failing log write must not stop the pump (the pipe would fill up and block the JVM).
        let _ = writeln!(lock(&self.log), "[{stream}] {line}");
        let mut tail = lock(&self.tail);
        if tail.len() == TAIL_LINES {
            tail.pop_front();
        }
        tail.push_back(format!("[{stream}] {line}"));
    }

    fn tail(&self) -> String {
        lock(&self.tail)
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Reads `reader` line by line into `output`; on stdout, also reports ready/restarted lines and EOF.
fn pump(
    reader: impl Read,
    stream: &'static str,
    output: Arc<Output>,
    events: Option<Sender<Event>>,
) {
    let mut reader = BufReader::new(reader);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match reader.read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let line = String::from_utf8_lossy(&buf);
        let line = line.trim_end();
        output.record(stream, line);
        if let Some(tx) = &events {
            let event = if line.starts_with(READY_PREFIX) {
                Some(Event::Ready(line.to_string()))
            } else {
                line.strip_prefix(LINE_PREFIX)
                    .map(|answer| Event::Answer(answer.to_string()))
            };
            if let Some(e) = event {
                let _ = tx.send(e);
            }
        }
    }
    if let Some(tx) = events {
        let _ = tx.send(Event::Closed);
    }
}

/// Endpoints parsed from the ready line.
#[derive(Debug, PartialEq, Eq)]
struct Endpoints {
    hdfs_url: String,
    thrift: String,
    zookeeper: String,
    thrift2: String,
    namenode_http: String,
    hbase_http: String,
    yarn: Option<Yarn>,
}

fn parse_ready(line: &str) -> Result<Endpoints> {
    let rest = line.strip_prefix(READY_PREFIX).unwrap_or(line);
    let get = |key: &str| {
        rest.split_whitespace()
            .find_map(|kv| kv.strip_prefix(key).and_then(|v| v.strip_prefix('=')))
            .filter(|v| !v.is_empty())
            .map(str::to_string)
            .ok_or_else(|| Error::ReadyLine {
                missing: key.to_string(),
                line: line.to_string(),
            })
    };
    let yarn = if rest.split_whitespace().any(|kv| kv.starts_with("yarn_rm=")) {
        let ms = get(KEY_YARN_START_MS)?;
        Some(Yarn {
            resourcemanager: get(KEY_YARN_RM)?,
            resourcemanager_web: get(KEY_YARN_WEB)?,
            jobhistory: get(KEY_JHS)?,
            jobhistory_web: get(KEY_JHS_WEB)?,
            conf_dir: PathBuf::from(get(KEY_HADOOP_CONF)?),
            hadoop: PathBuf::from(get(KEY_HADOOP)?),
            streaming_jar: PathBuf::from(get(KEY_STREAMING_JAR)?),
            start_time: Duration::from_millis(ms.parse().map_err(|_| Error::ReadyLine {
                missing: KEY_YARN_START_MS.to_string(),
                line: line.to_string(),
            })?),
        })
    } else {
        None
    };
    Ok(Endpoints {
        yarn,
        hdfs_url: get(KEY_HDFS)?,
        thrift: get(KEY_THRIFT)?,
        zookeeper: get(KEY_ZK)?,
        thrift2: get(KEY_THRIFT2)?,
        namenode_http: get(KEY_NAMENODE_HTTP)?,
        hbase_http: get(KEY_HBASE_HTTP)?,
    })
}

/// The Maven project's folder (this crate's folder).
fn project_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn modified(path: &Path) -> Option<SystemTime> {
    fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// Newest modification time of a file or of any file below a folder.
fn newest(path: &Path) -> Option<SystemTime> {
    let meta = fs::metadata(path).ok()?;
    if !meta.is_dir() {
        return meta.modified().ok();
    }
    fs::read_dir(path)
        .ok()?
        .filter_map(|e| e.ok())
        .filter_map(|e| newest(&e.path()))
        .max()
}

/// True when the class path file is missing or older than the pom, the build script or any source.
fn needs_build(dir: &Path) -> bool {
    let Some(built) = modified(&dir.join(CLASSPATH_FILE)) else {
        return true;
    };
    if !dir.join(CLASSES_DIR).is_dir() {
        return true;
    }
    [POM_FILE, BUILD_SCRIPT, SOURCES_DIR]
        .iter()
        .filter_map(|p| newest(&dir.join(p)))
        .any(|t| t > built)
}

fn file_tail(path: &Path) -> String {
    let text = fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(TAIL_LINES)..].join("\n")
}

/// Runs `build.sh` when needed, under a file lock so that parallel test processes build once.
fn ensure_built(dir: &Path) -> Result<()> {
    if !needs_build(dir) {
        return Ok(());
    }
    let target = dir.join(MAVEN_TARGET);
    fs::create_dir_all(&target)
        .map_err(|e| Error::io(format!("create {}", target.display()), e))?;
    let lock_path = dir.join(BUILD_LOCK_FILE);
    let lock_file = File::create(&lock_path)
        .map_err(|e| Error::io(format!("create {}", lock_path.display()), e))?;
    lock_file
        .lock()
        .map_err(|e| Error::io(format!("lock {}", lock_path.display()), e))?;
    if !needs_build(dir) {
        return Ok(());
    }
    let started = Instant::now();
    tracing::info!(dir = %dir.display(), "building the test cluster (Maven)");
    let log_path = dir.join(BUILD_LOG_FILE);
    let log = File::create(&log_path)
        .map_err(|e| Error::io(format!("create {}", log_path.display()), e))?;
    let log_err = log
        .try_clone()
        .map_err(|e| Error::io("clone build log handle", e))?;
    let status = Command::new("bash")
        .arg(dir.join(BUILD_SCRIPT))
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(log_err)
        .status();
    match status {
        Ok(s) if s.success() => {
            tracing::info!(
                elapsed_ms = started.elapsed().as_millis() as u64,
                "test cluster built"
            );
            Ok(())
        }
        Ok(s) => Err(Error::Build {
            status: s.to_string(),
            tail: file_tail(&log_path),
        }),
        Err(e) => Err(Error::Build {
            status: format!("cannot run bash: {e}"),
            tail: String::new(),
        }),
    }
}

fn java_binary() -> PathBuf {
    if let Some(home) = std::env::var_os("JAVA_HOME") {
        let java = Path::new(&home).join("bin").join("java");
        if java.is_file() {
            return java;
        }
    }
    PathBuf::from("java")
}

fn jvm_flags(dir: &Path) -> Result<Vec<String>> {
    let path = dir.join(JVM_FLAGS_FILE);
    let text =
        fs::read_to_string(&path).map_err(|e| Error::io(format!("read {}", path.display()), e))?;
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect())
}

/// Kills the JVM's process group (it leads its own group), then the child itself, and reaps it.
fn kill_group(child: &mut Child) {
    let group = format!("-{}", child.id());
    let _ = Command::new("kill")
        .args(["-KILL", "--", &group])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    let _ = child.kill();
    let _ = child.wait();
}

/// Waits up to `limit` for the child to exit; returns its status text if it did.
fn wait_exit(child: &mut Child, limit: Duration) -> Option<String> {
    let deadline = Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status.to_string()),
            Ok(None) if Instant::now() < deadline => thread::sleep(POLL),
            Ok(None) => return None,
            Err(e) => return Some(format!("wait failed: {e}")),
        }
    }
}

/// True when a TCP connection to `addr` ("host:port") succeeds.
pub fn port_answers(addr: &str) -> bool {
    let Ok(mut addrs) = addr.to_socket_addrs() else {
        return false;
    };
    addrs.any(|a: SocketAddr| TcpStream::connect_timeout(&a, CONNECT_TIMEOUT).is_ok())
}

/// A running test cluster; dropping it stops the JVM (and deletes its data).
#[derive(Debug)]
pub struct TestCluster {
    /// e.g. "hdfs://127.0.0.1:41234" (NameNode RPC of HBase's MiniDFS; the folder /hbase exists on it).
    pub hdfs_url: String,
    /// HBase's Thrift 1 server, e.g. "127.0.0.1:41235" (binary protocol, buffered transport).
    pub thrift: String,
    /// HBase's ZooKeeper quorum "127.0.0.1:PORT".
    pub zookeeper: String,
    /// HBase's Thrift 2 server "127.0.0.1:PORT" (used to create pre-split tables).
    pub thrift2: String,
    /// The NameNode's web server "127.0.0.1:PORT" (its /jmx gives version and capacity).
    pub namenode_http: String,
    /// The HBase master's web server "127.0.0.1:PORT" (its /dump gives the HBase version).
    pub hbase_http: String,
    /// YARN + MapReduce, when started with [`Options::yarn`].
    pub yarn: Option<Yarn>,
    start_time: Duration,
    child: Mutex<Child>,
    stdin: Mutex<Option<ChildStdin>>,
    events: Mutex<Receiver<Event>>,
    output: Arc<Output>,
    log_path: PathBuf,
    // Dropped last: the JVM is gone by then.
    _dir: tempfile::TempDir,
}

static SHARED: OnceLock<std::result::Result<TestCluster, String>> = OnceLock::new();
static SHARED_YARN: OnceLock<std::result::Result<TestCluster, String>> = OnceLock::new();

/// Starts of a test cluster tried when a port it chose was taken before it bound it.
const START_ATTEMPTS: u32 = 3;

/// Whether the JVM's last output says a port it chose was in use when it bound it.
fn port_taken(tail: &str) -> bool {
    tail.contains("BindException") || tail.contains("Address already in use")
}

impl TestCluster {
    /// Starts the JVM (building the Maven project first if needed), waits for the ready line (timeout 300 s),
    /// returns Err with the tail of the JVM's output if it fails or times out. 1 DataNode, replication 1.
    pub fn start() -> Result<TestCluster> {
        Self::start_with(Options::default())
    }

    /// [`TestCluster::start`] with more DataNodes and another replication factor (for fault tests; each extra
    /// DataNode adds a second or two to the start).
    pub fn start_with(options: Options) -> Result<TestCluster> {
        let mut attempt = 1;
        loop {
            match Self::start_once(options) {
                // The JVM chooses some ports as free ones and binds them later: another
                // process (a second test cluster starting beside it) may take one between.
                // Such a start is tried again on new ports; any other failure is final.
                Err(Error::Exited { tail, .. })
                    if attempt < START_ATTEMPTS && port_taken(&tail) =>
                {
                    tracing::warn!(
                        attempt,
                        "a port of the test cluster was taken while it started; starting again"
                    );
                    attempt += 1;
                }
                other => return other,
            }
        }
    }

    fn start_once(options: Options) -> Result<TestCluster> {
        if options.datanodes == 0
            || options.replication == 0
            || options.replication > options.datanodes
        {
            return Err(Error::io(
                "test cluster options",
                std::io::Error::other(format!(
                    "need 1 <= replication ({}) <= DataNodes ({})",
                    options.replication, options.datanodes
                )),
            ));
        }
        let dir = project_dir();
        ensure_built(&dir)?;
        let classpath_file = dir.join(CLASSPATH_FILE);
        let deps = fs::read_to_string(&classpath_file)
            .map_err(|e| Error::io(format!("read {}", classpath_file.display()), e))?;
        let classpath = format!("{}:{}", dir.join(CLASSES_DIR).display(), deps.trim());
        let flags = jvm_flags(&dir)?;

        sweep_leftovers(&std::env::temp_dir());
        let temp = tempfile::Builder::new()
            .prefix(TEMP_PREFIX)
            .tempdir()
            .map_err(|e| Error::io("create temp dir", e))?;
        let owner = temp.path().join(OWNER_FILE);
        fs::write(&owner, std::process::id().to_string())
            .map_err(|e| Error::io(format!("write {}", owner.display()), e))?;
        let log_path = temp.path().join(LOG_FILE);
        let log = File::create(&log_path)
            .map_err(|e| Error::io(format!("create {}", log_path.display()), e))?;
        let output = Arc::new(Output {
            log: Mutex::new(log),
            tail: Mutex::new(VecDeque::new()),
        });

        let started = Instant::now();
        let mut child = Command::new(java_binary())
            .args(&flags)
            .arg("-cp")
            .arg(&classpath)
            .arg(MAIN_CLASS)
            .arg(temp.path().join(WORK_DIR))
            .arg(DELETE_ON_EXIT)
            .args([OPT_DATANODES, &options.datanodes.to_string()])
            .args([OPT_REPLICATION, &options.replication.to_string()])
            .args(options.yarn.then_some(OPT_YARN))
            .current_dir(temp.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .map_err(|e| Error::io(format!("spawn {}", java_binary().display()), e))?;
        let pid = child.id();
        tracing::info!(pid, log = %log_path.display(), "test cluster JVM spawned");

        let (tx, rx) = mpsc::channel();
        let stdin = child.stdin.take();
        let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
            kill_group(&mut child);
            return Err(Error::io(
                "JVM pipes",
                std::io::Error::other("stdout/stderr not captured"),
            ));
        };
        let out = Arc::clone(&output);
        let _stdout_pump: JoinHandle<()> =
            thread::spawn(move || pump(stdout, "out", out, Some(tx)));
        let err = Arc::clone(&output);
        let stderr_pump = thread::spawn(move || pump(stderr, "err", err, None));

        let deadline = started + START_TIMEOUT;
        let endpoints = loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(Event::Ready(line)) => match parse_ready(&line) {
                    Ok(e) => break e,
                    Err(e) => {
                        kill_group(&mut child);
                        return Err(e);
                    }
                },
                Ok(Event::Answer(_)) => {}
                Ok(Event::Closed) | Err(RecvTimeoutError::Disconnected) => {
                    let status =
                        wait_exit(&mut child, STOP_GRACE).unwrap_or_else(|| "stdout closed".into());
                    kill_group(&mut child);
                    let _ = stderr_pump.join();
                    return Err(Error::Exited {
                        status,
                        tail: output.tail(),
                    });
                }
                Err(RecvTimeoutError::Timeout) => {
                    kill_group(&mut child);
                    let _ = stderr_pump.join();
                    return Err(Error::Timeout {
                        what: "become ready".into(),
                        secs: START_TIMEOUT.as_secs(),
                        tail: output.tail(),
                    });
                }
            }
        };
        let start_time = started.elapsed();
        tracing::info!(
            pid,
            elapsed_ms = start_time.as_millis() as u64,
            yarn = ?endpoints.yarn.as_ref().map(|y| &y.resourcemanager),
            hdfs = %endpoints.hdfs_url,
            thrift = %endpoints.thrift,
            zookeeper = %endpoints.zookeeper,
            "test cluster ready"
        );
        Ok(TestCluster {
            hdfs_url: endpoints.hdfs_url,
            thrift: endpoints.thrift,
            zookeeper: endpoints.zookeeper,
            thrift2: endpoints.thrift2,
            namenode_http: endpoints.namenode_http,
            hbase_http: endpoints.hbase_http,
            yarn: endpoints.yarn,
            start_time,
            child: Mutex::new(child),
            stdin: Mutex::new(stdin),
            events: Mutex::new(rx),
            output,
            log_path,
            _dir: temp,
        })
    }

    /// One cluster per test process, started on first use; panics with the startup error if it cannot start
    /// (so tests FAIL, never skip). A failed start is not retried by later callers: they panic with the same error.
    pub fn shared() -> &'static TestCluster {
        match SHARED.get_or_init(|| TestCluster::start().map_err(|e| e.to_string())) {
            Ok(cluster) => cluster,
            Err(e) => panic!("the harvest test cluster could not start: {e}"),
        }
    }

    /// A second per-process cluster that also runs YARN + MapReduce ([`Options::yarn`]); [`TestCluster::yarn`] is
    /// `Some`. Separate from [`TestCluster::shared`] so that suites without MapReduce jobs do not pay for YARN; a
    /// test binary that calls both runs two JVMs. Panics (the test FAILS) if it cannot start.
    pub fn shared_with_yarn() -> &'static TestCluster {
        let start = || {
            TestCluster::start_with(Options {
                yarn: true,
                ..Options::default()
            })
            .map_err(|e| e.to_string())
        };
        match SHARED_YARN.get_or_init(start) {
            Ok(cluster) => cluster,
            Err(e) => panic!("the harvest test cluster with YARN could not start: {e}"),
        }
    }

    /// Time from spawning the JVM to its ready line (with [`Options::yarn`], YARN's part is
    /// [`Yarn::start_time`]).
    pub fn start_time(&self) -> Duration {
        self.start_time
    }

    /// Sends one control command and waits up to `limit` for its answer, which must start with `expect`; returns
    /// the rest of the answer (trimmed). A `COMMAND-FAILED` or `UNKNOWN-COMMAND` answer is [`Error::Command`].
    fn command(&self, command: &str, expect: &str, limit: Duration) -> Result<String> {
        let started = Instant::now();
        let mut stdin = lock(&self.stdin);
        let events = lock(&self.events);
        // Drop reports left over from earlier calls.
        while let Ok(e) = events.try_recv() {
            if matches!(e, Event::Closed) {
                return Err(self.exited());
            }
        }
        let Some(pipe) = stdin.as_mut() else {
            return Err(self.exited());
        };
        if let Err(e) = writeln!(pipe, "{command}").and_then(|_| pipe.flush()) {
            return Err(Error::io(format!("send `{command}` to the JVM"), e));
        }
        let deadline = started + limit;
        loop {
            match events.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(Event::Answer(answer)) => {
                    if let Some(rest) = answer.strip_prefix(expect) {
                        tracing::info!(
                            command,
                            elapsed_ms = started.elapsed().as_millis() as u64,
                            "test cluster command done"
                        );
                        return Ok(rest.trim().to_string());
                    }
                    if answer.starts_with(COMMAND_FAILED) || answer.starts_with(UNKNOWN_COMMAND) {
                        return Err(Error::Command {
                            command: command.to_string(),
                            answer,
                            tail: self.output.tail(),
                        });
                    }
                }
                Ok(Event::Ready(_)) => {}
                Ok(Event::Closed) | Err(RecvTimeoutError::Disconnected) => {
                    return Err(self.exited())
                }
                Err(RecvTimeoutError::Timeout) => {
                    return Err(Error::Timeout {
                        what: format!("answer `{command}`"),
                        secs: limit.as_secs(),
                        tail: self.output.tail(),
                    })
                }
            }
        }
    }

    /// Kill the Thrift server only and start it again on the same port (for fault tests); blocks until it answers.
    /// Open Thrift connections are cut and open scanners are lost, as with a real server restart; the data stays.
    pub fn restart_thrift(&self) -> Result<()> {
        let answered = THRIFT_RESTARTED
            .strip_prefix(LINE_PREFIX)
            .unwrap_or(THRIFT_RESTARTED);
        self.command(CMD_RESTART_THRIFT, answered, RESTART_TIMEOUT)?;
        if !port_answers(&self.thrift) {
            return Err(Error::Timeout {
                what: format!("accept connections on {} after the restart", self.thrift),
                secs: CONNECT_TIMEOUT.as_secs(),
                tail: self.output.tail(),
            });
        }
        tracing::info!(thrift = %self.thrift, "thrift restarted");
        Ok(())
    }

    /// Stops the live DataNode with index `index` (0-based among the DataNodes still running; the indexes of later
    /// ones shift down by one) as a killed process would stop: its sockets close at once, writers with it in their
    /// pipeline see the failure, the NameNode marks it dead after ~20 s (heartbeat recheck). Returns its data
    /// transfer address `127.0.0.1:PORT`.
    pub fn stop_datanode(&self, index: usize) -> Result<String> {
        self.command(
            &format!("{CMD_STOP_DATANODE} {index}"),
            DATANODE_STOPPED,
            DATANODE_TIMEOUT,
        )
        .map(|rest| {
            rest.split_whitespace()
                .nth(1)
                .unwrap_or_default()
                .to_string()
        })
    }

    /// Indexes of the live DataNodes that hold the last block of the HDFS file `path` (absolute, e.g.
    /// `/packs/a.warc.gz`); for a file being written, the DataNodes of its write pipeline.
    pub fn datanodes_of(&self, path: &str) -> Result<Vec<usize>> {
        let rest = self.command(
            &format!("{CMD_DATANODES_OF} {path}"),
            DATANODES_OF,
            DATANODE_TIMEOUT,
        )?;
        rest.split(',')
            .filter(|s| !s.is_empty())
            .map(|s| {
                s.parse().map_err(|_| Error::Command {
                    command: format!("{CMD_DATANODES_OF} {path}"),
                    answer: rest.clone(),
                    tail: String::new(),
                })
            })
            .collect()
    }

    /// Stops the NameNode, keeps it down for `down`, starts it again on the same port and waits until it has left
    /// safe mode (the DataNodes reported their blocks). HBase rides it out (its HDFS client retries); clients of
    /// the NameNode see refused connections while it is down.
    pub fn restart_namenode(&self, down: Duration) -> Result<()> {
        self.command(
            &format!("{CMD_RESTART_NAMENODE} {}", down.as_millis()),
            NAMENODE_RESTARTED,
            down + NAMENODE_RESTART_TIMEOUT,
        )
        .map(|_| ())
    }

    /// Process id of the JVM (it leads its own process group).
    pub fn pid(&self) -> u32 {
        lock(&self.child).id()
    }

    /// The JVM's combined stdout/stderr log (inside the cluster's temp dir).
    pub fn log_path(&self) -> &Path {
        &self.log_path
    }

    /// The NameNode's RPC address "127.0.0.1:PORT" (the authority of [`TestCluster::hdfs_url`]).
    pub fn namenode_addr(&self) -> &str {
        self.hdfs_url
            .strip_prefix("hdfs://")
            .unwrap_or(&self.hdfs_url)
    }

    fn exited(&self) -> Error {
        let status = wait_exit(&mut lock(&self.child), CONNECT_TIMEOUT)
            .unwrap_or_else(|| "stdout closed".into());
        Error::Exited {
            status,
            tail: self.output.tail(),
        }
    }
}

impl Drop for TestCluster {
    fn drop(&mut self) {
        let child = self.child.get_mut().unwrap_or_else(PoisonError::into_inner);
        if let Some(mut stdin) = self
            .stdin
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        {
            let _ = writeln!(stdin, "{CMD_STOP}").and_then(|_| stdin.flush());
            // Dropping stdin closes it: EOF is a shutdown request too.
        }
        match wait_exit(child, STOP_GRACE) {
            Some(status) => tracing::info!(pid = child.id(), %status, "test cluster stopped"),
            None => {
                tracing::warn!(
                    pid = child.id(),
                    "test cluster did not stop in time, killing its process group"
                );
                kill_group(child);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_port_taken_while_starting_is_recognised() {
        let tail = "[err] Caused by: java.net.BindException: Port in use: 127.0.0.1:37873\n\
                    [err] Caused by: java.io.IOException: Failed to bind to /127.0.0.1:37873";
        assert!(super::port_taken(tail));
        assert!(!super::port_taken(
            "[err] java.lang.OutOfMemoryError: Java heap space"
        ));
    }

    use super::*;

    #[test]
    fn parses_the_ready_line() {
        let line = "HARVEST-TESTCLUSTER READY hdfs=hdfs://127.0.0.1:41234 thrift2=127.0.0.1:41236 \
                    thrift=127.0.0.1:41235 zk=127.0.0.1:2181 namenode_http=127.0.0.1:41237 hbase_http=127.0.0.1:41238";
        let e = parse_ready(line).expect("valid line");
        assert_eq!(e.hdfs_url, "hdfs://127.0.0.1:41234");
        assert_eq!(e.thrift, "127.0.0.1:41235");
        assert_eq!(e.thrift2, "127.0.0.1:41236");
        assert_eq!(e.zookeeper, "127.0.0.1:2181");
        assert_eq!(e.namenode_http, "127.0.0.1:41237");
        assert_eq!(e.hbase_http, "127.0.0.1:41238");
    }

    #[test]
    fn parses_the_yarn_part_of_the_ready_line() {
        let base =
            "HARVEST-TESTCLUSTER READY hdfs=hdfs://127.0.0.1:1 thrift=127.0.0.1:2 zk=127.0.0.1:3 \
                    thrift2=127.0.0.1:4 namenode_http=127.0.0.1:5 hbase_http=127.0.0.1:6";
        assert_eq!(parse_ready(base).expect("valid line").yarn, None);
        let line = format!(
            "{base} yarn_rm=127.0.0.1:7 yarn_web=127.0.0.1:8 jhs=127.0.0.1:9 jhs_web=127.0.0.1:10 \
             hadoop_conf=/t/work/hadoop/etc/hadoop hadoop=/t/work/hadoop/bin/hadoop \
             streaming_jar=/m2/hadoop-streaming-3.3.5.jar yarn_start_ms=6761"
        );
        let yarn = parse_ready(&line)
            .expect("valid line")
            .yarn
            .expect("yarn part");
        assert_eq!(yarn.resourcemanager, "127.0.0.1:7");
        assert_eq!(yarn.resourcemanager_web, "127.0.0.1:8");
        assert_eq!(yarn.jobhistory, "127.0.0.1:9");
        assert_eq!(yarn.jobhistory_web, "127.0.0.1:10");
        assert_eq!(yarn.conf_dir, Path::new("/t/work/hadoop/etc/hadoop"));
        assert_eq!(yarn.hadoop, Path::new("/t/work/hadoop/bin/hadoop"));
        assert_eq!(
            yarn.streaming_jar,
            Path::new("/m2/hadoop-streaming-3.3.5.jar")
        );
        assert_eq!(yarn.start_time, Duration::from_millis(6761));
        match parse_ready(&line.replace(" jhs_web=127.0.0.1:10", "")) {
            Err(Error::ReadyLine { missing, .. }) => assert_eq!(missing, KEY_JHS_WEB),
            other => panic!("expected ReadyLine error, got {other:?}"),
        }
    }

    #[test]
    fn ready_line_without_thrift_is_rejected() {
        let line =
            "HARVEST-TESTCLUSTER READY hdfs=hdfs://127.0.0.1:1 thriftx=127.0.0.1:2 zk=127.0.0.1:3 \
             thrift2=127.0.0.1:4 namenode_http=127.0.0.1:5 hbase_http=127.0.0.1:6";
        match parse_ready(line) {
            Err(Error::ReadyLine { missing, .. }) => assert_eq!(missing, KEY_THRIFT),
            other => panic!("expected ReadyLine error, got {other:?}"),
        }
    }

    #[test]
    fn output_keeps_only_the_last_lines() {
        let file = tempfile::tempfile().expect("temp file");
        let out = Output {
            log: Mutex::new(file),
            tail: Mutex::new(VecDeque::new()),
        };
        for i in 0..(TAIL_LINES + 5) {
            out.record("out", &format!("line {i}"));
        }
        let tail = out.tail();
        assert_eq!(tail.lines().count(), TAIL_LINES);
        assert!(tail.starts_with("[out] line 5\n"), "{tail}");
        assert!(
            tail.ends_with(&format!("line {}", TAIL_LINES + 4)),
            "{tail}"
        );
    }

    #[test]
    fn pump_reports_ready_restart_and_eof() {
        let file = tempfile::tempfile().expect("temp file");
        let out = Arc::new(Output {
            log: Mutex::new(file),
            tail: Mutex::new(VecDeque::new()),
        });
        let text = format!(
            "noise\n{READY_PREFIX}hdfs=hdfs://h:1 thrift=h:2 zk=h:3\n{THRIFT_RESTARTED}\n\
             {LINE_PREFIX}{DATANODE_STOPPED} 1 127.0.0.1:5\n"
        );
        let (tx, rx) = mpsc::channel();
        pump(text.as_bytes(), "out", out, Some(tx));
        let events: Vec<Event> = rx.try_iter().collect();
        assert!(
            matches!(
                events.as_slice(),
                [
                    Event::Ready(_),
                    Event::Answer(t),
                    Event::Answer(d),
                    Event::Closed
                ] if t == "THRIFT-RESTARTED" && d == "DATANODE-STOPPED 1 127.0.0.1:5"
            ),
            "{events:?}"
        );
    }

    #[test]
    fn folders_of_finished_processes_are_swept_and_others_kept() {
        let root = tempfile::tempdir().expect("temp dir");
        let folder = |name: &str, owner: Option<String>| {
            let path = root.path().join(format!("{TEMP_PREFIX}{name}"));
            fs::create_dir_all(path.join("work")).expect("mkdir");
            if let Some(pid) = owner {
                fs::write(path.join(OWNER_FILE), pid).expect("write owner");
            }
            path
        };
        // No process has this id (above any pid_max); a spawned and reaped child's id could be reused, and
        // spawning one races with the port tests of this module (the child holds their sockets until exec).
        let dead = u32::MAX;
        let finished = folder("finished", Some(dead.to_string()));
        let running = folder("running", Some(std::process::id().to_string()));
        let unowned = folder("unowned", None);
        let other = root.path().join("something-else");
        fs::create_dir_all(&other).expect("mkdir");
        fs::write(other.join(OWNER_FILE), dead.to_string()).expect("write");
        sweep_leftovers(root.path());
        assert!(!finished.exists(), "its process is gone");
        assert!(running.exists(), "its process runs");
        assert!(unowned.exists(), "no owner file and young");
        assert!(other.exists(), "not a test cluster folder");
    }

    #[test]
    fn stale_class_path_needs_a_build() {
        let dir = tempfile::tempdir().expect("temp dir");
        assert!(needs_build(dir.path()), "no class path file yet");
        fs::create_dir_all(dir.path().join(CLASSES_DIR)).expect("mkdir");
        fs::create_dir_all(dir.path().join(SOURCES_DIR)).expect("mkdir");
        fs::write(dir.path().join(POM_FILE), "<project/>").expect("write pom");
        fs::write(dir.path().join(CLASSPATH_FILE), "a.jar").expect("write class path");
        assert!(!needs_build(dir.path()), "class path newer than sources");
        thread::sleep(Duration::from_millis(20));
        fs::write(
            dir.path().join(SOURCES_DIR).join("Main.java"),
            "class Main {}",
        )
        .expect("write source");
        assert!(needs_build(dir.path()), "a source changed after the build");
    }

    #[test]
    fn closed_port_does_not_answer() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr").to_string();
        assert!(port_answers(&addr));
        drop(listener);
        assert!(!port_answers(&addr));
    }
}
