//! Opening the configured backends behind the two storage traits.

use std::sync::Arc;

use anyhow::{Context, Result};
use indexer::{Index, IndexOptions, TableStore};
use packer::PackStore;

use crate::config::{Config, IndexBackend};

/// The open backends: packs and tables.
pub struct Stores {
    pub packs: Arc<dyn PackStore>,
    pub index: Arc<Index>,
}

impl Stores {
    pub fn open(cfg: &Config) -> Result<Stores> {
        let packs = packer::open_store(&cfg.packs)
            .with_context(|| format!("cannot open the pack store {:?}", cfg.packs))?;
        let tables: Arc<dyn TableStore> = match &cfg.index {
            IndexBackend::Embedded { path } => {
                Arc::new(indexer::EmbeddedStore::open(path).with_context(|| {
                    format!("cannot open the embedded index at {}", path.display())
                })?)
            }
            IndexBackend::Hbase { thrift } => Arc::new(
                indexer::HbaseStore::connect(thrift, indexer::HbaseOptions::default())
                    .with_context(|| format!("cannot reach the HBase Thrift server at {thrift}"))?,
            ),
        };
        let index = Index::new(
            tables,
            IndexOptions {
                buckets: cfg.buckets,
            },
        )
        .context("cannot open the index")?;
        Ok(Stores {
            packs,
            index: Arc::new(index),
        })
    }
}

/// What `harvest cluster check` found.
pub fn check(cfg: &Config) -> Result<String> {
    let mut out = String::new();
    let started = std::time::Instant::now();
    let packs = packer::open_store(&cfg.packs)
        .with_context(|| format!("cannot open the pack store {:?}", cfg.packs))?;
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
    let started = std::time::Instant::now();
    let stores = Stores::open(cfg)?;
    let store = stores.index.store();
    let tables = store.list_tables().context("cannot list tables")?;
    out.push_str(&format!(
        "index   {}  reached in {:.2} s: {} tables\n",
        match &cfg.index {
            IndexBackend::Embedded { path } => format!("embedded {}", path.display()),
            IndexBackend::Hbase { thrift } => format!("hbase thrift {thrift}"),
        },
        started.elapsed().as_secs_f64(),
        tables.len()
    ));
    for t in &tables {
        let regions = store.regions(t).map(|r| r.len()).unwrap_or(0);
        out.push_str(&format!("  {t:<32} {regions:>3} regions\n"));
    }
    Ok(out)
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
    for source in &cfg.sources {
        for y in [year, year + 1] {
            let name = indexer::keys::table_name(&source.name, y)?;
            store
                .create_table(&name, &indexer::record::PAGE_FAMILIES, cfg.buckets)
                .with_context(|| format!("cannot create table {name}"))?;
            created.push(name);
        }
    }
    Ok(created)
}
