//! `harvest.toml`: the raw serde structs (every field documented with its
//! default, unknown keys rejected) and the validated [`Config`] the rest of the
//! binary uses.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

pub mod crawl;
pub use crawl::{
    check_http_url, host_of, parse_publish_zone, parse_scope, CrawlSettings, RawCrawl, ScopeKind,
    DEFAULT_MAX_BODY_BYTES, DEFAULT_TIMEOUT_SECS,
};

/// Default root folder for everything when no config file says otherwise.
pub const DEFAULT_DATA_DIR: &str = "harvest-data";
/// Default config file looked for in the working directory.
pub const DEFAULT_CONFIG_FILE: &str = "harvest.toml";
/// Default pack rollover size: 1 GiB.
pub const DEFAULT_MAX_PACK_BYTES: u64 = 1 << 30;
/// Default cap on pack writers open at once (`[storage] max_open_packs`).
pub const DEFAULT_MAX_OPEN_PACKS: usize = packer::DEFAULT_MAX_OPEN_PACKS;
/// Default number of salt buckets (regions) per table.
pub const DEFAULT_BUCKETS: u8 = 16;
/// Pages per durable batch (`[packing] batch_pages`).
pub const DEFAULT_BATCH_PAGES: usize = 256;
/// Longest wait of a page for its batch (`[packing] max_batch_wait_ms`).
pub const DEFAULT_MAX_BATCH_WAIT_MS: u64 = 2_000;
/// Hadoop 3's NameNode web port (`dfs.namenode.http-address`).
pub const DEFAULT_NAMENODE_HTTP_PORT: u16 = 9870;
/// HBase's master web port (`hbase.master.info.port`).
pub const DEFAULT_MASTER_HTTP_PORT: u16 = 16010;
/// The file as written by the user. Every field has a default.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RawConfig {
    /// Root folder for the embedded backends and models. Default `./harvest-data`.
    pub data_dir: Option<PathBuf>,
    pub storage: RawStorage,
    pub index: RawIndex,
    pub classifier: RawClassifier,
    pub crawl: RawCrawl,
    pub packing: RawPacking,
    pub dedup: RawDedup,
    /// Site groups. A page belongs to the first source whose hosts or URL
    /// prefixes match; otherwise to a source named after its host.
    pub sources: Vec<RawSource>,
    /// Crawl jobs (`[[job]]`): `harvest jobs list | run NAME | status`.
    #[serde(rename = "job")]
    pub jobs: Vec<crate::jobs::RawJob>,
}

/// How pages are placed into packs within a (topic, day).
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RawPacking {
    /// `kmeans` (default): K-means over attribute vectors per (topic, day)
    /// batch, batch centres within `t1` of a stored centre join its pack.
    /// `arrival`: packs filled in arrival order, `pages_per_cluster` each
    /// (the baseline of `harvest bench locality`).
    pub mode: Option<String>,
    /// Pages stored per durable batch (one K-means run per (topic, day) in
    /// it, one sync of the packs, one index write). Default 256.
    pub batch_pages: Option<usize>,
    /// A batch is stored at the latest this long after its first page
    /// arrived, even if it is not full. Default 2000 ms.
    pub max_batch_wait_ms: Option<u64>,
    /// K-means settings (see the config reference).
    pub kmeans: packer::ClusterOptions,
}

/// Near-duplicate detection at ingest (issue 12).
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RawDedup {
    /// Fingerprint every page's text (64-bit SimHash) and link a page whose
    /// fingerprint is within `distance` bits of an earlier page's to the first
    /// page of that story (`near_duplicate_of`, `--collapse`, copies).
    /// Default true.
    pub near_duplicates: Option<bool>,
    /// Largest Hamming distance (bits of 64) of near-duplicates, 0..=7.
    /// Default 3.
    pub distance: Option<u32>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RawStorage {
    /// Where packs live: `file:///abs/path`, a plain path, or (issue 3)
    /// `hdfs://host:port/path`. Default `{data_dir}/packs`.
    pub packs: Option<String>,
    /// Start a new part when a pack would grow past this. Default 1 GiB.
    pub max_pack_bytes: Option<u64>,
    /// At most this many packs open for writing at once (file handles; on
    /// HDFS, leases and write pipelines). One more closes the least recently
    /// written pack durably; a later page of its (topic, day, cluster) starts
    /// the next part. At least 1. Default 64.
    pub max_open_packs: Option<usize>,
    /// A run's first page of a (topic, day, cluster) appends to that family's
    /// last pack (below `max_pack_bytes`, whole at its end, written by no one
    /// else) instead of starting a pack of its own. Default true.
    pub append_packs: Option<bool>,
    /// The NameNode's web server `host:port`, read by `harvest cluster check`
    /// for the Hadoop version and the capacity (its `/jmx`). Default: the
    /// NameNode host of `packs` on port 9870 (Hadoop 3's default).
    pub namenode_http: Option<String>,
    /// Who runs the archive (a person or an organisation and a contact), written as
    /// `operator` in the warcinfo record that starts every pack. Default: none (the field
    /// is left out).
    pub operator: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RawIndex {
    /// `embedded` (default) or `hbase` (issue 3).
    pub backend: Option<String>,
    /// Folder of the embedded store. Default `{data_dir}/index`.
    pub path: Option<PathBuf>,
    /// Salt buckets (one region each) per `{source}_{yyyy}` table. Default 16.
    pub buckets: Option<u8>,
    /// HBase Thrift 1 server `host:port` (backend `hbase`): every read and write.
    pub thrift: Option<String>,
    /// HBase Thrift 2 server `host:port` (`hbase thrift2 start`), used to create
    /// tables pre-split into one region per bucket. Without it tables get one
    /// region (run deploy/cluster/create-tables.sh to pre-split them).
    pub thrift2: Option<String>,
    /// The HBase master's web server `host:port`, read by `harvest cluster
    /// check` for the HBase version (its `/dump`). Default: the Thrift 1 host
    /// on port 16010 (HBase's default).
    pub master_http: Option<String>,
    /// The text index (`--text`, `--keyword`, `--any`). Default on. Off: crawls write no
    /// words and text conditions are refused; pages crawled while it was off are found
    /// by text only after `harvest fsck --repair` with it on again.
    pub text: Option<bool>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RawClassifier {
    /// Topic model file. Default `{data_dir}/models/topic.model`.
    pub model: Option<PathBuf>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RawSource {
    /// Table prefix, `[a-z0-9_]+`, e.g. `sina_news`.
    pub name: String,
    /// Hosts that belong to this source (exact match, case-insensitive).
    #[serde(default)]
    pub hosts: Vec<String>,
    /// URL prefixes that belong to this source.
    #[serde(default)]
    pub prefixes: Vec<String>,
    /// Zone of publish times that this source's pages state without an
    /// offset (IANA name). Default: the job's / `[crawl]`'s, else by site.
    #[serde(default)]
    pub publish_time_zone: Option<String>,
}

/// Where the index lives, validated.
#[derive(Debug, Clone, PartialEq)]
pub enum IndexBackend {
    Embedded {
        path: PathBuf,
    },
    Hbase {
        thrift: String,
        thrift2: Option<String>,
        master_http: String,
    },
}

/// Validated configuration.
#[derive(Debug, Clone)]
pub struct Config {
    pub data_dir: PathBuf,
    pub packs: String,
    /// NameNode web server (HDFS packs only).
    pub namenode_http: Option<String>,
    pub max_pack_bytes: u64,
    /// Pack writers open at once at most (`[storage] max_open_packs`).
    pub max_open_packs: usize,
    /// Runs append to a day's last packs (`[storage] append_packs`).
    pub append_packs: bool,
    /// `[storage] operator`: the warcinfo `operator` field (none when unset or blank).
    pub operator: Option<String>,
    pub index: IndexBackend,
    pub buckets: u8,
    /// `[index] text`: the text index is kept.
    pub text_index: bool,
    pub model: PathBuf,
    pub crawl: CrawlSettings,
    pub packing: Packing,
    pub dedup: Dedup,
    pub sources: Vec<Source>,
    pub jobs: Vec<crate::jobs::Job>,
}

/// Pack placement within a (topic, day).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PackingMode {
    Kmeans,
    Arrival,
}

/// Validated `[dedup]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dedup {
    /// Near-duplicate detection on.
    pub near_duplicates: bool,
    /// Largest Hamming distance of near-duplicates.
    pub distance: u32,
}

/// Validated `[packing]`.
#[derive(Debug, Clone)]
pub struct Packing {
    pub mode: PackingMode,
    pub batch_pages: usize,
    pub max_batch_wait: std::time::Duration,
    pub kmeans: packer::ClusterOptions,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Source {
    pub name: String,
    pub hosts: Vec<String>,
    pub prefixes: Vec<String>,
    /// Zone of publish times without an offset on this source's pages.
    pub publish_time_zone: Option<chrono_tz::Tz>,
}

/// A source name must be usable as a table prefix.
pub fn valid_source_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// The source name a host gets when no configured source claims it:
/// lower-cased, every other character replaced by `_`.
pub fn source_from_host(host: &str) -> String {
    let mut s: String = host
        .to_ascii_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    s.truncate(64);
    if s.is_empty() {
        s.push_str("unknown");
    }
    s
}

impl Config {
    /// Read `path`, or the defaults when `path` is `None` and no
    /// `harvest.toml` exists in the working directory. The relative paths
    /// of a config file (also the default `data_dir`) are resolved against
    /// the file's folder, so one file names one store whatever the working
    /// directory; the defaults without a file stay relative to it.
    pub fn load(path: Option<&Path>) -> Result<Config> {
        match config_file(path).as_deref() {
            Some(p) => Config::from_raw_in(read_raw(p)?, Some(&config_folder(p)?)),
            None => Config::from_raw(RawConfig::default()),
        }
    }

    /// Validate `raw`; relative paths stay relative to the working directory.
    pub fn from_raw(raw: RawConfig) -> Result<Config> {
        Config::from_raw_in(raw, None)
    }

    /// Validate `raw`, resolving its relative paths (`data_dir`, a plain
    /// `[storage] packs` path, `[index] path`, `[classifier] model`) against
    /// `base` when given: the folder of the config file.
    pub fn from_raw_in(raw: RawConfig, base: Option<&Path>) -> Result<Config> {
        let resolve = |p: &Path| -> PathBuf {
            match base {
                Some(b) if p.is_relative() => normalise(&b.join(p)),
                _ => p.to_path_buf(),
            }
        };
        let data_dir = resolve(
            raw.data_dir
                .as_deref()
                .unwrap_or(Path::new(DEFAULT_DATA_DIR)),
        );
        check_folder("data_dir", &data_dir)?;
        let packs = match &raw.storage.packs {
            Some(p) if p.contains("://") => p.clone(),
            Some(p) => resolve(Path::new(p)).display().to_string(),
            None => data_dir.join("packs").display().to_string(),
        };
        match packs.split_once("://") {
            Some((scheme, _)) if scheme != "file" && scheme != "hdfs" => {
                bail!("[storage] packs: unsupported scheme `{scheme}://` (use file:// or hdfs://)");
            }
            Some(_) => {}
            None => check_folder("[storage] packs", Path::new(&packs))?,
        }
        let max_pack_bytes = raw.storage.max_pack_bytes.unwrap_or(DEFAULT_MAX_PACK_BYTES);
        if max_pack_bytes < 64 * 1024 {
            bail!("[storage] max_pack_bytes = {max_pack_bytes}: must be at least 65536");
        }
        let max_open_packs = raw.storage.max_open_packs.unwrap_or(DEFAULT_MAX_OPEN_PACKS);
        if max_open_packs == 0 {
            bail!("[storage] max_open_packs = 0: must be at least 1");
        }
        let index = index_backend(&raw.index, &data_dir, &resolve)?;
        let buckets = raw.index.buckets.unwrap_or(DEFAULT_BUCKETS);
        if buckets == 0 {
            bail!("[index] buckets must be between 1 and 255");
        }
        let model = raw
            .classifier
            .model
            .as_deref()
            .map_or_else(|| data_dir.join("models").join("topic.model"), resolve);

        let crawl = raw.crawl.settings("[crawl]")?;

        let sources = sources(&raw.sources)?;
        let namenode_http = match (&raw.storage.namenode_http, packs.strip_prefix("hdfs://")) {
            (Some(n), _) => Some(n.clone()),
            (None, Some(rest)) => {
                let authority = rest.split('/').next().unwrap_or_default();
                Some(format!(
                    "{}:{DEFAULT_NAMENODE_HTTP_PORT}",
                    authority_host(authority)
                ))
            }
            (None, None) => None,
        };
        let packing = packing(&raw.packing)?;
        let distance = raw
            .dedup
            .distance
            .unwrap_or(indexer::neardup::DEFAULT_DISTANCE);
        if distance > indexer::neardup::MAX_DISTANCE {
            bail!(
                "[dedup] distance = {distance}: must be between 0 and {}",
                indexer::neardup::MAX_DISTANCE
            );
        }
        let dedup = Dedup {
            near_duplicates: raw.dedup.near_duplicates.unwrap_or(true),
            distance,
        };
        let operator = raw
            .storage
            .operator
            .as_deref()
            .map(str::trim)
            .filter(|o| !o.is_empty())
            .map(str::to_string);
        if operator
            .as_deref()
            .is_some_and(|o| o.contains(['\r', '\n']))
        {
            bail!("[storage] operator: one line, please (it is a warcinfo field)");
        }
        Ok(Config {
            data_dir,
            packs,
            namenode_http,
            operator,
            packing,
            dedup,
            max_pack_bytes,
            max_open_packs,
            append_packs: raw.storage.append_packs.unwrap_or(true),
            index,
            buckets,
            text_index: raw.index.text.unwrap_or(true),
            model,
            jobs: crate::jobs::validate_jobs(&raw.jobs, &raw.crawl)?,
            crawl,
            sources,
        })
    }

    /// The source a URL belongs to.
    pub fn source_for(&self, url: &str) -> String {
        let host = host_of(url).unwrap_or_default();
        for s in &self.sources {
            if s.hosts.contains(&host) || s.prefixes.iter().any(|p| url.starts_with(p)) {
                return s.name.clone();
            }
        }
        source_from_host(&host)
    }
}

/// `[[sources]]`, validated: names usable in table names and each once, each with
/// hosts or prefixes, time zones parsed.
fn sources(raw: &[RawSource]) -> Result<Vec<Source>> {
    let mut seen = BTreeSet::new();
    let mut sources = Vec::new();
    for s in raw {
        if !valid_source_name(&s.name) {
            bail!(
                "[[sources]] name = {:?}: use lower-case letters, digits and _ (it names tables)",
                s.name
            );
        }
        if !seen.insert(s.name.clone()) {
            bail!("[[sources]] name = {:?} is defined twice", s.name);
        }
        if s.hosts.is_empty() && s.prefixes.is_empty() {
            bail!("[[sources]] {:?} needs hosts or prefixes", s.name);
        }
        sources.push(Source {
            name: s.name.clone(),
            hosts: s.hosts.iter().map(|h| h.to_ascii_lowercase()).collect(),
            prefixes: s.prefixes.clone(),
            publish_time_zone: s
                .publish_time_zone
                .as_deref()
                .map(|z| {
                    parse_publish_zone(z)
                        .with_context(|| format!("[[sources]] {:?}: publish_time_zone", s.name))
                })
                .transpose()?,
        });
    }
    Ok(sources)
}

/// `[packing]`, validated.
fn packing(raw: &RawPacking) -> Result<Packing> {
    let mode = match raw.mode.as_deref().unwrap_or("kmeans") {
        "kmeans" => PackingMode::Kmeans,
        "arrival" => PackingMode::Arrival,
        other => bail!("[packing] mode = {other:?}: expected \"kmeans\" or \"arrival\""),
    };
    let batch_pages = raw.batch_pages.unwrap_or(DEFAULT_BATCH_PAGES);
    if !(1..=100_000).contains(&batch_pages) {
        bail!("[packing] batch_pages = {batch_pages}: must be between 1 and 100000");
    }
    raw.kmeans
        .validate()
        .map_err(|e| anyhow::anyhow!("[packing.kmeans] {e}"))?;
    Ok(Packing {
        mode,
        batch_pages,
        max_batch_wait: std::time::Duration::from_millis(
            raw.max_batch_wait_ms.unwrap_or(DEFAULT_MAX_BATCH_WAIT_MS),
        ),
        kmeans: raw.kmeans.clone(),
    })
}

/// `[index]`: the embedded index (its folder checked) or HBase (its Thrift servers and
/// the master's web UI).
fn index_backend(
    raw: &RawIndex,
    data_dir: &Path,
    resolve: &dyn Fn(&Path) -> PathBuf,
) -> Result<IndexBackend> {
    Ok(match raw.backend.as_deref().unwrap_or("embedded") {
        "embedded" => {
            let path = raw
                .path
                .as_deref()
                .map_or_else(|| data_dir.join("index"), resolve);
            check_folder("[index] path", &path)?;
            IndexBackend::Embedded { path }
        }
        "hbase" => {
            let thrift = raw
                .thrift
                .clone()
                .context("[index] backend = \"hbase\" needs thrift = \"host:port\"")?;
            let master_http = match &raw.master_http {
                Some(m) => m.clone(),
                None => format!("{}:{DEFAULT_MASTER_HTTP_PORT}", authority_host(&thrift)),
            };
            IndexBackend::Hbase {
                thrift,
                thrift2: raw.thrift2.clone(),
                master_http,
            }
        }
        other => bail!("[index] backend = {other:?}: expected \"embedded\" or \"hbase\""),
    })
}

/// The absolute folder of a config file.
/// The file [`Config::load`] reads for `path`: `path` itself, else
/// `harvest.toml` in the working directory when it exists (as an absolute
/// path, so it names the same file after a change of directory).
pub fn config_file(path: Option<&Path>) -> Option<PathBuf> {
    match path {
        Some(p) => Some(p.to_path_buf()),
        None if Path::new(DEFAULT_CONFIG_FILE).exists() => {
            Some(absolute(Path::new(DEFAULT_CONFIG_FILE)))
        }
        None => None,
    }
}

fn config_folder(file: &Path) -> Result<PathBuf> {
    let folder = match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let abs = std::path::absolute(folder)
        .with_context(|| format!("cannot resolve the folder of {}", file.display()))?;
    Ok(normalise(&abs))
}

/// `p` without `.` components (`a/./b` -> `a/b`); `..` is kept (a symlink
/// may sit before it).
fn normalise(p: &Path) -> PathBuf {
    let out: PathBuf = p
        .components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .collect();
    if out.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        out
    }
}

/// `p` as an absolute path (against the working directory), for display.
pub fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).map_or_else(|_| p.to_path_buf(), |a| normalise(&a))
}

/// A configured folder that already exists as something else (a file) is an
/// error naming its key; one that does not exist yet is made when first used.
fn check_folder(key: &str, path: &Path) -> Result<()> {
    match std::fs::metadata(path) {
        Ok(meta) if !meta.is_dir() => bail!(
            "{key} = {:?}: is a file, not a folder (point {key} at a folder, or at a path that does not exist yet)",
            path.display().to_string()
        ),
        _ => Ok(()),
    }
}

fn read_raw(path: &Path) -> Result<RawConfig> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read config file {}", path.display()))?;
    toml::from_str(&text).with_context(|| format!("invalid config file {}", path.display()))
}

/// The documented sample config, checked by a round-trip test.
pub const SAMPLE_CONFIG: &str = include_str!("../../deploy/harvest.sample.toml");

/// The host part of `host:port` (or of a bare host).
fn authority_host(authority: &str) -> &str {
    match authority.rsplit_once(':') {
        Some((host, port)) if port.chars().all(|c| c.is_ascii_digit()) => host,
        _ => authority,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Issue 11: publish times without an offset are read in the zone of the
    /// page's source, else of `[crawl]`; a zone name that does not exist is
    /// an error naming where it was given.
    #[test]
    fn publish_time_zones_by_source_and_crawl() {
        let mut raw = RawConfig::default();
        raw.crawl.publish_time_zone = Some("Asia/Shanghai".into());
        raw.sources = vec![RawSource {
            name: "dw".into(),
            hosts: vec!["www.DW.com".into()],
            prefixes: vec!["https://p.dw.example/zh/".into()],
            publish_time_zone: Some("Europe/Berlin".into()),
        }];
        let c = Config::from_raw(raw.clone()).unwrap();
        assert_eq!(c.crawl.publish_time_zone, Some(chrono_tz::Asia::Shanghai));
        let crawl = crate::crawl_config(&c).unwrap();
        assert_eq!(crawl.time_zone, Some(chrono_tz::Asia::Shanghai));
        assert_eq!(
            crawl.host_time_zones,
            vec![
                ("www.dw.com".to_string(), chrono_tz::Europe::Berlin),
                ("p.dw.example".to_string(), chrono_tz::Europe::Berlin)
            ]
        );
        raw.sources[0].publish_time_zone = Some("Mars/Olympus".into());
        let e = format!("{:#}", Config::from_raw(raw.clone()).unwrap_err());
        assert!(e.contains("\"dw\"") && e.contains("Mars/Olympus"), "{e}");
        raw.sources.clear();
        raw.crawl.publish_time_zone = Some("UTC+8".into());
        let e = format!("{:#}", Config::from_raw(raw).unwrap_err());
        assert!(e.contains("[crawl] publish_time_zone"), "{e}");
    }

    #[test]
    fn defaults_are_embedded_under_harvest_data() {
        let c = Config::from_raw(RawConfig::default()).unwrap();
        assert_eq!(c.data_dir, PathBuf::from("harvest-data"));
        assert_eq!(
            c.index,
            IndexBackend::Embedded {
                path: PathBuf::from("harvest-data/index")
            }
        );
        assert_eq!(c.packs, "harvest-data/packs");
        assert_eq!(c.max_pack_bytes, 1 << 30);
        assert_eq!(c.max_open_packs, 64);
        assert_eq!(c.crawl.politeness_delay, Duration::from_secs(1));
        assert_eq!(c.crawl.max_body_bytes, 10 << 20);
    }

    /// Issue 10 item 7: relative paths of a config file were taken from the
    /// working directory.
    #[test]
    fn relative_paths_of_a_file_follow_its_folder() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("conf");
        std::fs::create_dir_all(&folder).unwrap();
        let file = folder.join("harvest.toml");
        std::fs::write(
            &file,
            "data_dir = \"./data\"\n[storage]\npacks = \"warc\"\n[index]\npath = \"../idx\"\n[classifier]\nmodel = \"/abs/m.model\"\n",
        )
        .unwrap();
        let c = Config::load(Some(&file)).unwrap();
        let folder = std::path::absolute(&folder).unwrap();
        assert_eq!(c.data_dir, folder.join("data"));
        assert_eq!(c.packs, folder.join("warc").display().to_string());
        assert_eq!(
            c.index,
            IndexBackend::Embedded {
                path: folder.join("..").join("idx")
            }
        );
        assert_eq!(c.model, PathBuf::from("/abs/m.model"));

        // Keys left out follow `data_dir`; URLs stay as written.
        std::fs::write(&file, "[storage]\npacks = \"file:///srv/packs\"\n").unwrap();
        let c = Config::load(Some(&file)).unwrap();
        assert_eq!(c.data_dir, folder.join(DEFAULT_DATA_DIR));
        assert_eq!(c.packs, "file:///srv/packs");
        assert_eq!(
            c.index,
            IndexBackend::Embedded {
                path: folder.join(DEFAULT_DATA_DIR).join("index")
            }
        );
        assert_eq!(
            c.model,
            folder
                .join(DEFAULT_DATA_DIR)
                .join("models")
                .join("topic.model")
        );
        // Without a file the defaults stay relative to the working directory.
        let c = Config::from_raw(RawConfig::default()).unwrap();
        assert!(c.data_dir.is_relative());
    }

    #[test]
    fn unknown_key_is_rejected_with_its_name() {
        let err = toml::from_str::<RawConfig>("[crawl]\npoliteness = 3\n").unwrap_err();
        assert!(err.to_string().contains("politeness"), "{err}");
    }

    #[test]
    fn sample_config_round_trips_and_validates() {
        let raw: RawConfig = toml::from_str(SAMPLE_CONFIG).unwrap();
        let again: RawConfig = toml::from_str(&toml::to_string(&raw).unwrap()).unwrap();
        assert_eq!(raw, again);
        let c = Config::from_raw(raw).unwrap();
        assert_eq!(c.sources.len(), 1);
        assert_eq!(c.jobs.len(), 1);
        assert!(c.jobs[0].schedule.is_some() && !c.crawl.allow_private);
        assert_eq!(
            c.source_for("https://news.sina.com.cn/c/x.html"),
            "sina_news"
        );
        assert_eq!(c.source_for("http://127.0.0.1:8080/a"), "127_0_0_1");
    }

    #[test]
    fn operator_is_one_trimmed_line_or_none() {
        let parse = |text: &str| Config::from_raw(toml::from_str(text).unwrap());
        let c =
            parse("[storage]\noperator = \"  Web archive team <archive@example.org> \"\n").unwrap();
        assert_eq!(
            c.operator.as_deref(),
            Some("Web archive team <archive@example.org>")
        );
        assert_eq!(
            parse("[storage]\noperator = \" \"\n").unwrap().operator,
            None
        );
        assert_eq!(parse("").unwrap().operator, None);
        let err = parse("[storage]\noperator = \"a\\nb\"\n").unwrap_err();
        assert!(err.to_string().contains("operator"), "{err}");
    }

    #[test]
    fn cluster_sample_config_validates() {
        let text = include_str!("../../deploy/cluster/harvest.cluster.toml");
        let c = Config::from_raw(toml::from_str(text).unwrap()).unwrap();
        assert_eq!(c.namenode_http.as_deref(), Some("namenode.example:9870"));
        match c.index {
            IndexBackend::Hbase {
                thrift2,
                master_http,
                ..
            } => {
                assert_eq!(thrift2.as_deref(), Some("hbase-thrift.example:9091"));
                assert_eq!(master_http, "hbase-master.example:16010");
            }
            other => panic!("expected hbase, got {other:?}"),
        }
    }

    #[test]
    fn web_addresses_default_to_the_service_hosts() {
        let raw: RawConfig = toml::from_str(
            "[storage]\npacks = \"hdfs://nn.example:8020/harvest\"\n[index]\nbackend = \"hbase\"\nthrift = \"thr.example:9090\"\n",
        )
        .unwrap();
        let c = Config::from_raw(raw).unwrap();
        assert_eq!(c.namenode_http.as_deref(), Some("nn.example:9870"));
        match c.index {
            IndexBackend::Hbase {
                master_http,
                thrift2,
                ..
            } => {
                assert_eq!(master_http, "thr.example:16010");
                assert_eq!(thrift2, None);
            }
            other => panic!("expected hbase, got {other:?}"),
        }
    }

    #[test]
    fn bad_values_name_their_key() {
        let raw: RawConfig = toml::from_str("[index]\nbackend = \"mongo\"\n").unwrap();
        let err = Config::from_raw(raw).unwrap_err().to_string();
        assert!(err.contains("[index] backend"), "{err}");
        let raw: RawConfig =
            toml::from_str("[[sources]]\nname = \"Sina News\"\nhosts=[\"a\"]\n").unwrap();
        let err = Config::from_raw(raw).unwrap_err().to_string();
        assert!(err.contains("[[sources]]"), "{err}");
        let raw: RawConfig = toml::from_str("[crawl]\nseeds = [\"ftp://x\"]\n").unwrap();
        assert!(Config::from_raw(raw).is_err());
        let raw: RawConfig = toml::from_str("[storage]\nmax_open_packs = 0\n").unwrap();
        let err = Config::from_raw(raw).unwrap_err().to_string();
        assert!(err.contains("[storage] max_open_packs"), "{err}");
        let raw: RawConfig = toml::from_str("[storage]\nmax_open_packs = 3\n").unwrap();
        assert_eq!(Config::from_raw(raw).unwrap().max_open_packs, 3);
    }

    /// Issue 40 item 6: `timeout_secs = 0` was taken as 1 s without a word.
    #[test]
    fn a_zero_timeout_is_an_error_naming_the_key() {
        let raw: RawConfig = toml::from_str("[crawl]\ntimeout_secs = 0\n").unwrap();
        let err = format!("{:#}", Config::from_raw(raw).unwrap_err());
        assert!(err.contains("[crawl] timeout_secs"), "{err}");
        let raw: RawConfig = toml::from_str("[crawl]\ntimeout_secs = 1\n").unwrap();
        assert_eq!(
            Config::from_raw(raw).unwrap().crawl.timeout,
            Duration::from_secs(1)
        );
        let c = Config::from_raw(RawConfig::default()).unwrap();
        assert_eq!(c.crawl.timeout, Duration::from_secs(DEFAULT_TIMEOUT_SECS));
    }

    /// Issue 40 item 6: `config check` passed a `data_dir` that is a file
    /// (every command then failed later, somewhere in the store).
    #[test]
    fn a_data_dir_that_is_a_file_is_an_error_naming_the_key() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("not-a-folder");
        std::fs::write(&file, b"x").unwrap();
        let conf = dir.path().join("harvest.toml");
        std::fs::write(&conf, "data_dir = \"not-a-folder\"\n").unwrap();
        let err = format!("{:#}", Config::load(Some(&conf)).unwrap_err());
        assert!(
            err.contains("data_dir")
                && err.contains("not-a-folder")
                && err.contains("not a folder"),
            "{err}"
        );
        // The index and pack folders likewise, when set apart from data_dir.
        std::fs::write(
            &conf,
            "data_dir = \"d\"\n[index]\npath = \"not-a-folder\"\n",
        )
        .unwrap();
        let err = format!("{:#}", Config::load(Some(&conf)).unwrap_err());
        assert!(err.contains("[index] path"), "{err}");
        std::fs::write(
            &conf,
            "data_dir = \"d\"\n[storage]\npacks = \"not-a-folder\"\n",
        )
        .unwrap();
        let err = format!("{:#}", Config::load(Some(&conf)).unwrap_err());
        assert!(err.contains("[storage] packs"), "{err}");
        // A folder, and one that does not exist yet, are fine.
        std::fs::write(&conf, "data_dir = \"new\"\n").unwrap();
        assert!(Config::load(Some(&conf)).is_ok());
        std::fs::create_dir(dir.path().join("new")).unwrap();
        assert!(Config::load(Some(&conf)).is_ok());
    }

    #[test]
    fn host_of_handles_ports_users_and_ipv6() {
        assert_eq!(
            host_of("http://User@Example.COM:80/x").as_deref(),
            Some("example.com")
        );
        assert_eq!(host_of("http://[::1]:8080/").as_deref(), Some("::1"));
        assert_eq!(host_of("nonsense"), None);
    }
}
