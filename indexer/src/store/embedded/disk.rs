//! What a refused write meets on disk: the I/O error at the root of a fjall
//! error, and a probe write that finds out why the store's folder refuses
//! writes when fjall no longer says.

use std::path::Path;

/// The I/O error at the root of a fjall error, if it has one.
pub(super) fn io_cause(e: &fjall::Error) -> Option<&std::io::Error> {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(c) = cause {
        if let Some(io) = c.downcast_ref::<std::io::Error>() {
            return Some(io);
        }
        cause = c.source();
    }
    None
}

/// Bytes a probe writes to find out why the store's folder refuses writes.
const PROBE_BYTES: usize = 64 * 1024;

/// Writes (and removes) a small file in `dir`: the I/O error that refuses
/// it, if any (e.g. `ENOSPC` on a full disk).
pub(super) fn probe_write(dir: &Path) -> Option<std::io::Error> {
    use std::io::Write;
    let probe = dir.join(format!(".harvest-write-probe-{}", std::process::id()));
    let written = std::fs::File::create(&probe).and_then(|mut f| {
        f.write_all(&[0u8; PROBE_BYTES])?;
        f.sync_data()
    });
    let _ = std::fs::remove_file(&probe);
    written.err()
}
