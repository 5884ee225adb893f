//! Where packs live, laid out as tantivy's `directory/`: the storage traits
//! ([`PackStore`], [`PackWriter`]) with their path rules, a backend per file (a local
//! folder; HDFS with feature `hdfs`), [`open_store`] choosing one from a URL, and
//! `conformance`: the checks every backend must pass.

use std::sync::Arc;

mod api;
#[cfg(any(test, feature = "conformance"))]
pub mod conformance;
#[cfg(feature = "hdfs")]
pub mod hdfs;
pub mod local;

pub use api::*;

use crate::error::{Error, Result};
use local::LocalPackStore;

/// Separator between a URL scheme and the rest of the URL.
const SCHEME_SEPARATOR: &str = "://";

/// Opens a pack store from a URL: `file:///abs/path` or a plain filesystem path select the
/// local-folder backend ([`LocalPackStore`], root created if missing);
/// `hdfs://host:port/root/path` selects [`hdfs::HdfsPackStore`] (feature `hdfs`;
/// connects at once and fails within seconds if the NameNode does not answer). Any other
/// scheme (or `hdfs://` without the feature) fails with [`Error::UnsupportedScheme`].
/// `file://` URLs are taken literally (no percent-decoding).
pub fn open_store(url: &str) -> Result<Arc<dyn PackStore>> {
    open_store_with(url, &OpenOptions::default())
}

/// Settings of [`open_store_with`] that only some backends use. `Default`: none.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OpenOptions {
    /// HDFS: the NameNode's web server `host:port`, for WebHDFS reads of bytes another
    /// process has synced into a pack it is still writing
    /// (`hdfs::HdfsOptions::webhdfs`). Ignored by the local backend.
    pub namenode_http: Option<String>,
}

/// [`open_store`] with backend settings.
pub fn open_store_with(url: &str, options: &OpenOptions) -> Result<Arc<dyn PackStore>> {
    #[cfg(not(feature = "hdfs"))]
    let _ = options;
    let invalid = |reason| Error::InvalidUrl {
        url: url.to_string(),
        reason,
    };
    let path = match url.split_once(SCHEME_SEPARATOR) {
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case(FILE_SCHEME) => {
            if !rest.starts_with('/') {
                return Err(invalid("file URLs must be file:///absolute/path (no host)"));
            }
            rest
        }
        #[cfg(feature = "hdfs")]
        Some((scheme, _)) if scheme.eq_ignore_ascii_case(hdfs::HDFS_SCHEME) => {
            let store = hdfs::HdfsPackStore::connect_with(
                url,
                hdfs::HdfsOptions {
                    webhdfs: options.namenode_http.clone(),
                    ..Default::default()
                },
            )?;
            tracing::debug!(url, root = store.root(), "opened hdfs pack store");
            return Ok(Arc::new(store));
        }
        Some((scheme, _)) => {
            return Err(Error::UnsupportedScheme {
                scheme: scheme.to_string(),
                url: url.to_string(),
            })
        }
        None => url,
    };
    if path.is_empty() {
        return Err(invalid("empty path"));
    }
    let store = LocalPackStore::open(path)?;
    tracing::debug!(url, root = %store.root().display(), "opened local pack store");
    Ok(Arc::new(store))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_store_rejects_other_schemes() {
        match open_store("s3://bucket/packs") {
            Err(Error::UnsupportedScheme { scheme, .. }) => assert_eq!(scheme, "s3"),
            other => panic!("expected UnsupportedScheme, got {:?}", other.map(|_| ())),
        }
        #[cfg(not(feature = "hdfs"))]
        assert!(matches!(
            open_store("hdfs://namenode:9000/packs"),
            Err(Error::UnsupportedScheme { .. })
        ));
        #[cfg(feature = "hdfs")]
        assert!(matches!(
            open_store("hdfs://127.0.0.1:1/packs"),
            Err(Error::Unavailable { .. })
        ));
        assert!(matches!(
            open_store("file://host/packs"),
            Err(Error::InvalidUrl { .. })
        ));
        assert!(matches!(open_store(""), Err(Error::InvalidUrl { .. })));
    }

    #[test]
    fn open_store_accepts_file_url_and_plain_path() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("packs");
        let url = format!("file://{}", root.display());
        let store = open_store(&url).unwrap();
        store.create("a/b").unwrap().close().unwrap();
        assert!(root.join("a/b").is_file());

        let plain = open_store(root.to_str().unwrap()).unwrap();
        assert_eq!(plain.len("a/b").unwrap(), 0);
    }
}
