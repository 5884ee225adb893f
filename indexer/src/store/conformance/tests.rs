//! The whole suite on the embedded store.

#[test]
fn embedded_store_keeps_the_crawl_state() -> crate::Result<()> {
    let dir = tempfile::tempdir().map_err(|e| crate::Error::backend("tempdir", e))?;
    let store = std::sync::Arc::new(crate::EmbeddedStore::open(dir.path())?);
    super::crawl_state(store, "conf-job")
}

#[test]
fn embedded_store_links_near_duplicates() -> crate::Result<()> {
    let dir = tempfile::tempdir().map_err(|e| crate::Error::backend("tempdir", e))?;
    let store = std::sync::Arc::new(crate::EmbeddedStore::open(dir.path())?);
    super::near_duplicates(store, "conf-nd")
}

#[test]
fn embedded_store_applies_batches_atomically() -> crate::Result<()> {
    let dir = tempfile::tempdir().map_err(|e| crate::Error::backend("tempdir", e))?;
    let store = std::sync::Arc::new(crate::EmbeddedStore::open(dir.path())?);
    super::batches(store, "conf")
}

#[test]
fn embedded_store_conforms() -> crate::Result<()> {
    let dir = tempfile::tempdir().map_err(|e| crate::Error::backend("tempdir", e))?;
    let store = crate::EmbeddedStore::open(dir.path())?;
    super::run_all(&store, "conf")
}
