//! Running store calls from the right kind of thread: the storage traits are
//! synchronous, the crawler and the server are async.

use anyhow::Result;

/// Runs `f` on a plain thread (no tokio context) and waits for it: for work
/// that reads packs, since the HDFS pack store refuses calls made inside a
/// tokio runtime (its blocking pool and `block_in_place` included).
pub fn off_runtime<T: Send>(f: impl FnOnce() -> Result<T> + Send) -> Result<T> {
    std::thread::scope(|scope| {
        scope
            .spawn(f)
            .join()
            .map_err(|_| anyhow::anyhow!("a worker thread panicked"))?
    })
}

/// [`blocking`] when `io` (the call waits on a network peer or the disk), else `f` in place.
pub fn blocking_if<T>(io: bool, f: impl FnOnce() -> T) -> T {
    if io {
        blocking(f)
    } else {
        f()
    }
}

/// Runs a blocking store call from async code without stalling the runtime.
pub fn blocking<T>(f: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(f)
        }
        _ => f(),
    }
}
