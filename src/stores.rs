//! Opening the configured backends behind the two storage traits.

use std::path::Path;
use std::sync::Arc;

use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use indexer::{Index, IndexOptions, TableStore};
use packer::PackStore;

use crate::config::{Config, IndexBackend};

/// Folder of the embedded text index, inside the embedded index's folder.
pub const TEXT_FOLDER: &str = "text";
/// Folder of the data dir where a cluster index's text splits are cached.
pub const TEXT_CACHE_FOLDER: &str = "text-cache";

/// The text index's split files in the pack store (HDFS on the cluster).
pub struct PackSplitFiles(pub Arc<dyn PackStore>);

fn split_err(what: &str, path: &str, e: packer::Error) -> indexer::Error {
    indexer::Error::backend(format!("{what} the text split {path}"), e)
}

impl indexer::text::split::SplitFiles for PackSplitFiles {
    fn put(&self, path: &str, bytes: &[u8]) -> indexer::Result<()> {
        // Written under another name and renamed: a reader never sees half a split.
        let part = format!("{path}.part");
        let mut w = self
            .0
            .create(&part)
            .map_err(|e| split_err("creating", &part, e))?;
        w.append(bytes)
            .map_err(|e| split_err("writing", &part, e))?;
        w.sync().map_err(|e| split_err("syncing", &part, e))?;
        w.close().map_err(|e| split_err("closing", &part, e))?;
        self.0
            .rename(&part, path)
            .map_err(|e| split_err("publishing", path, e))
    }

    fn get(&self, path: &str) -> indexer::Result<Vec<u8>> {
        let len = self
            .0
            .len(path)
            .map_err(|e| split_err("reading", path, e))?;
        self.0
            .read_range(path, 0, len)
            .map_err(|e| split_err("reading", path, e))
    }

    fn delete(&self, path: &str) -> indexer::Result<()> {
        match self.0.delete(path) {
            Err(packer::Error::NotFound { .. }) | Ok(()) => Ok(()),
            Err(e) => Err(split_err("removing", path, e)),
        }
    }

    fn list(&self, prefix: &str) -> indexer::Result<Vec<String>> {
        // A folder: `_text` must not also list `_textfoo`.
        let folder = format!("{}/", prefix.trim_end_matches('/'));
        Ok(self
            .0
            .list(&folder)
            .map_err(|e| split_err("listing", prefix, e))?
            .into_iter()
            .map(|e| e.path)
            .collect())
    }
}

/// The open backends: packs and tables.
#[derive(Clone)]
pub struct Stores {
    pub packs: Arc<dyn PackStore>,
    pub index: Arc<Index>,
    /// Set when the embedded index is on read-only media and was opened
    /// from a temporary copy (removed when the last clone is dropped):
    /// nothing written to it lasts.
    pub read_only_copy: Option<Arc<tempfile::TempDir>>,
}

/// What a command does with the archive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Crawls and jobs: the store is created if it is not there.
    Write,
    /// Query, stats, get, serve: the archive must exist; on read-only
    /// media its embedded index is opened from a temporary copy.
    Read,
}

impl Access {
    /// How `harvest serve` opens the archive: to write when it has jobs to
    /// run or when there is no archive yet (a fresh `data_dir`: the server
    /// starts on an empty archive, which jobs and crawls sent to it fill),
    /// else to read (an existing archive, read-only media included).
    pub fn for_serve(cfg: &Config) -> Access {
        let exists = match &cfg.index {
            IndexBackend::Embedded { path } => path.is_dir(),
            IndexBackend::Hbase { .. } => true,
        };
        if cfg.jobs.is_empty() && exists {
            Access::Read
        } else {
            Access::Write
        }
    }
}

/// Whether files can be created in `dir` (false on read-only media or
/// without write permission).
fn writable(dir: &Path) -> bool {
    let probe = dir.join(format!(".harvest-write-probe-{}", std::process::id()));
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
    {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            true
        }
        Err(e) => !matches!(
            e.kind(),
            std::io::ErrorKind::ReadOnlyFilesystem | std::io::ErrorKind::PermissionDenied
        ),
    }
}

/// Copies a directory tree (files and folders only).
fn copy_tree(from: &Path, to: &Path) -> Result<u64> {
    let mut bytes = 0;
    std::fs::create_dir_all(to).with_context(|| format!("creating {}", to.display()))?;
    for entry in std::fs::read_dir(from).with_context(|| format!("reading {}", from.display()))? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            bytes += copy_tree(&entry.path(), &target)?;
        } else if kind.is_file() {
            bytes += std::fs::copy(entry.path(), &target)
                .with_context(|| format!("copying {}", entry.path().display()))?;
        }
    }
    Ok(bytes)
}

impl Stores {
    /// Opens the stores for writing (creating them when absent).
    pub fn open(cfg: &Config) -> Result<Stores> {
        Stores::open_for(cfg, Access::Write)
    }

    pub fn open_for(cfg: &Config, access: Access) -> Result<Stores> {
        let mut read_only_copy = None;
        let mut embedded_path = None;
        if let IndexBackend::Embedded { path } = &cfg.index {
            embedded_path = Some(path.clone());
            if access == Access::Read {
                if !path.is_dir() {
                    bail!(
                        "no archive at {}: the index folder does not exist (data_dir {}). \
                         Crawl first, or point `data_dir` in the config at an existing archive.",
                        path.display(),
                        crate::config::absolute(&cfg.data_dir).display()
                    );
                }
                if !writable(path) {
                    let copy = tempfile::Builder::new()
                        .prefix("harvest-read-only-index-")
                        .tempdir()
                        .context("cannot make a temporary folder for the read-only index")?;
                    let bytes = copy_tree(path, copy.path()).with_context(|| {
                        format!("cannot copy the read-only index at {}", path.display())
                    })?;
                    crate::logline::say(&format!(
                        "harvest: the archive at {} is on read-only media: its index ({:.1} MB) was copied to {} for this run; nothing is written to the archive",
                        path.display(),
                        bytes as f64 / 1e6,
                        copy.path().display()
                    ));
                    embedded_path = Some(copy.path().to_path_buf());
                    read_only_copy = Some(Arc::new(copy));
                }
            }
        }
        let packs = open_packs(cfg)
            .with_context(|| format!("cannot open the pack store {:?}", cfg.packs))?;
        let tables: Arc<dyn TableStore> = match &cfg.index {
            IndexBackend::Embedded { .. } => {
                let path = embedded_path.as_deref().unwrap_or(Path::new("."));
                match indexer::EmbeddedStore::open(path) {
                    Ok(store) => Arc::new(store),
                    Err(e) if format!("{e:#}").contains("Locked") => {
                        let owner = match crate::remote::find(cfg) {
                            Some(info) => {
                                format!("`harvest serve` (pid {}) at {} has it", info.pid, info.url)
                            }
                            None => "another harvest process has it".to_string(),
                        };
                        bail!(
                        "the embedded index at {} is in use: {owner}. One process owns an embedded store; \
                         while `harvest serve` runs, crawl, jobs, query, stats, get and reextract go through it. \
                         Wait for the other process or stop it.",
                        path.display()
                    );
                    }
                    Err(e) => {
                        return Err(anyhow::Error::new(e).context(format!(
                            "cannot open the embedded index at {}",
                            path.display()
                        )))
                    }
                }
            }
            IndexBackend::Hbase {
                thrift, thrift2, ..
            } => Arc::new(
                indexer::HbaseStore::connect(
                    thrift,
                    indexer::HbaseOptions {
                        admin: thrift2.clone(),
                        ..indexer::HbaseOptions::default()
                    },
                )
                .with_context(|| match thrift2 {
                    Some(t2) => format!("cannot reach the HBase Thrift servers at {thrift} / {t2}"),
                    None => format!("cannot reach the HBase Thrift server at {thrift}"),
                })?,
            ),
        };
        let mut index = Index::new(
            tables.clone(),
            IndexOptions {
                buckets: cfg.buckets,
            },
        )
        .context("cannot open the index")?;
        if !cfg.text_index {
            // `[index] text = false`: no words are written, text conditions are refused.
        } else if let Some(path) = &embedded_path {
            // The text index lives in the index folder: a read-only copy takes it along.
            let text = indexer::text::embedded::EmbeddedText::open(&path.join(TEXT_FOLDER))
                .with_context(|| format!("cannot open the text index in {}", path.display()))?;
            index = index.with_text(Arc::new(text));
        } else {
            // On the cluster: splits in the pack store, their manifest beside the tables,
            // fetched into a cache folder of this machine.
            let cache = cfg.data_dir.join(TEXT_CACHE_FOLDER);
            let files = Arc::new(PackSplitFiles(packs.clone()));
            let text = indexer::text::split::SplitText::open(tables, files, &cache).with_context(
                || {
                    format!(
                        "cannot open the text index (splits cached in {})",
                        cache.display()
                    )
                },
            )?;
            index = index.with_text(Arc::new(text));
        }
        if access == Access::Write {
            // A batch a killed writer was applying (HBase: its journal row).
            let recovered = index
                .recover()
                .context("cannot apply an interrupted index batch again")?;
            if recovered.batches > 0 {
                crate::logline::say(&format!(
                    "harvest: {} index batch(es) interrupted by a crash were applied again",
                    recovered.batches
                ));
            }
            // A compaction a killed process left half done (its journal in the pack store).
            let compactions = crate::compact::finish_interrupted(packs.as_ref(), &index)
                .context("cannot finish an interrupted compaction")?;
            if compactions > 0 {
                crate::logline::say(&format!(
                    "harvest: {compactions} compaction(s) interrupted by a crash were finished"
                ));
            }
            if recovered.text_removed > 0 {
                crate::logline::say(&format!(
                    "harvest: the words of {} page(s) a crash left without rows were removed from the text index",
                    recovered.text_removed
                ));
            }
        }
        Ok(Stores {
            packs,
            index: Arc::new(index),
            read_only_copy,
        })
    }
}

/// Opens the configured pack store; on HDFS with the NameNode's web address, so that
/// pages another process (a running crawl) has synced into a pack it is still writing are
/// read over WebHDFS (`packer::HdfsOptions::webhdfs`).
pub fn open_packs(cfg: &Config) -> packer::Result<Arc<dyn packer::PackStore>> {
    packer::open_store_with(
        &cfg.packs,
        &packer::OpenOptions {
            namenode_http: cfg.namenode_http.clone(),
        },
    )
}

/// Timeout of one request to a NameNode or HBase master web server.
const WEB_TIMEOUT: Duration = Duration::from_secs(5);
/// The NameNode's JMX bean with version and capacity.
const NAMENODE_INFO: &str = "/jmx?qry=Hadoop:service=NameNode,name=NameNodeInfo";
/// The HBase master's plain-text status dump (starts with "Version Info").
const MASTER_DUMP: &str = "/dump";

/// What `harvest cluster check` found.
pub fn check(cfg: &Config) -> Result<String> {
    let mut out = String::new();
    let started = Instant::now();
    let packs =
        open_packs(cfg).with_context(|| format!("cannot open the pack store {:?}", cfg.packs))?;
    let entries = packs
        .list("")
        .with_context(|| format!("cannot list the pack store {:?}", cfg.packs))?;
    let bytes: u64 = entries.iter().map(|e| e.len).sum();
    out.push_str(&format!(
        "packs   {}  reached in {:.2} s: {} files, {:.1} MB\n",
        cfg.packs,
        started.elapsed().as_secs_f64(),
        entries.len(),
        bytes as f64 / 1e6
    ));
    if let Some(web) = &cfg.namenode_http {
        match namenode_facts(web) {
            Ok(f) => out.push_str(&format!("hdfs    {f} (NameNode web {web})\n")),
            Err(e) => out.push_str(&format!(
                "hdfs    version and capacity unknown: {e:#} (set [storage] namenode_http)\n"
            )),
        }
    }
    let started = Instant::now();
    let stores = Stores::open(cfg)?;
    let store = stores.index.store();
    let tables = store.list_tables().context("cannot list tables")?;
    let reached = started.elapsed().as_secs_f64();
    let hbase = match &cfg.index {
        IndexBackend::Embedded { path } => {
            out.push_str(&format!(
                "index   embedded {}  reached in {reached:.2} s: {} tables\n",
                path.display(),
                tables.len()
            ));
            None
        }
        IndexBackend::Hbase {
            thrift,
            thrift2,
            master_http,
        } => {
            match master_version(master_http) {
                Ok(v) => out.push_str(&format!("hbase   {v} (master web {master_http})\n")),
                Err(e) => out.push_str(&format!(
                    "hbase   version unknown: {e:#} (set [index] master_http)\n"
                )),
            }
            let hbase = indexer::HbaseStore::connect(
                thrift,
                indexer::HbaseOptions {
                    admin: thrift2.clone(),
                    ..indexer::HbaseOptions::default()
                },
            )?;
            let (kind, cluster_id) = hbase.server_info()?;
            out.push_str(&format!(
                "index   hbase thrift {thrift} ({kind}, cluster id {cluster_id}), admin {}  reached in {reached:.2} s: {} tables\n",
                thrift2.as_deref().map_or_else(|| "none: new tables get ONE region".to_owned(), |t| format!("thrift 2 {t}: new tables pre-split")),
                tables.len()
            ));
            Some(hbase)
        }
    };
    for t in &tables {
        let buckets = store.regions(t).map(|r| r.len()).unwrap_or(0);
        match &hbase {
            Some(h) => {
                let regions = h.server_regions(t).map(|r| r.len()).unwrap_or(0);
                let split = if h.is_pre_split(t).unwrap_or(false) {
                    "one region per bucket"
                } else {
                    "NOT pre-split"
                };
                out.push_str(&format!(
                    "  {t:<32} {buckets:>3} buckets {regions:>3} regions  {split}\n"
                ));
            }
            None => out.push_str(&format!("  {t:<32} {buckets:>3} buckets\n")),
        }
    }
    Ok(out)
}

/// GET `http://{addr}{path}` as text, with a short timeout.
fn web_get(addr: &str, path: &str) -> Result<String> {
    let url = format!("http://{addr}{path}");
    crate::runtime()?.block_on(async {
        let client = reqwest::Client::builder()
            .timeout(WEB_TIMEOUT)
            .build()
            .context("http client")?;
        let resp = client
            .get(&url)
            .send()
            .await
            .with_context(|| format!("cannot reach {url}"))?;
        let status = resp.status();
        if !status.is_success() {
            bail!("{url} answered {status}");
        }
        resp.text()
            .await
            .with_context(|| format!("cannot read {url}"))
    })
}

/// Version, capacity and live DataNodes from the NameNode's JMX bean.
fn namenode_facts(addr: &str) -> Result<String> {
    let body = web_get(addr, NAMENODE_INFO)?;
    let v: serde_json::Value = serde_json::from_str(&body).context("NameNode JMX is not JSON")?;
    let bean = v["beans"]
        .get(0)
        .context("NameNode JMX has no NameNodeInfo bean")?;
    let version = bean["SoftwareVersion"]
        .as_str()
        .or_else(|| bean["Version"].as_str())
        .context("NameNodeInfo has no version")?;
    let gb = |k: &str| bean[k].as_f64().map(|b| b / 1e9).unwrap_or(f64::NAN);
    // LiveNodes is a JSON object encoded as a string, one key per DataNode.
    let live = bean["LiveNodes"]
        .as_str()
        .and_then(|s| serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(s).ok())
        .map_or(0, |m| m.len());
    Ok(format!(
        "Hadoop {version}: capacity {:.1} GB, DFS used {:.1} MB, free {:.1} GB, {live} live DataNode(s)",
        gb("Total"),
        gb("Used") * 1e3,
        gb("Free")
    ))
}

/// "HBase x.y.z" from the master's status dump.
fn master_version(addr: &str) -> Result<String> {
    let body = web_get(addr, MASTER_DUMP)?;
    body.lines()
        .map(str::trim)
        .find(|l| l.starts_with("HBase ") && l.len() < 80)
        .map(str::to_owned)
        .with_context(|| format!("no \"HBase <version>\" line in http://{addr}{MASTER_DUMP}"))
}

/// Create the `urls` and `digests` tables and, for every configured source,
/// its tables of this year and the next (salted into `buckets` regions).
pub fn init(cfg: &Config) -> Result<Vec<String>> {
    let stores = Stores::open(cfg)?;
    let store = stores.index.store();
    let year = chrono::Datelike::year(&chrono::Utc::now());
    let mut created = vec![
        indexer::URLS_TABLE.to_string(),
        indexer::DIGESTS_TABLE.to_string(),
    ];
    let mut names = Vec::new();
    for source in &cfg.sources {
        for y in [year, year + 1] {
            names.push(indexer::keys::table_name(&source.name, y)?);
        }
    }
    let tables: Vec<(&str, &[&str], u8)> = names
        .iter()
        .map(|n| (n.as_str(), &indexer::record::PAGE_FAMILIES[..], cfg.buckets))
        .collect();
    for chunk in tables.chunks(8) {
        indexer::create_tables(store.as_ref(), chunk)
            .with_context(|| format!("cannot create the tables {chunk:?}"))?;
    }
    created.extend(names);
    Ok(created)
}
