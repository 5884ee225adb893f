//! Opening the configured backends behind the two storage traits.

use std::sync::Arc;

use anyhow::{bail, Context, Result};
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
            IndexBackend::Hbase { thrift } => {
                bail!("[index] backend = \"hbase\" (thrift {thrift}) is not available in this build yet")
            }
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
