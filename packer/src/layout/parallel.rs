//! Pack syncs and closes run side by side on a few threads: each waits on a disk or on
//! HDFS, not on the CPU.

use crate::error::{Error, Result};

/// Most threads [`Packer::sync_all`](super::Packer::sync_all) syncs dirty packs on (and
/// [`Packer::close_all`](super::Packer::close_all) closes packs on) at once.
pub(super) const SYNC_THREADS: usize = 8;

/// Runs `work` on each item on up to [`SYNC_THREADS`] threads side by side (a run of
/// consecutive items a thread). Every item is tried; the first error in item order is
/// returned.
pub(super) fn side_by_side<T: Send>(
    items: Vec<T>,
    work: impl Fn(T) -> Result<()> + Sync,
) -> Result<()> {
    map_side_by_side(items, |item| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(item))).unwrap_or_else(|_| {
            Err(Error::Io {
                path: String::new(),
                source: std::io::Error::other("a pack sync or close thread panicked"),
            })
        })
    })
    .into_iter()
    .fold(Ok(()), Result::and)
}

/// `work` of each item, in item order, run on up to [`SYNC_THREADS`] threads side by side
/// (a run of consecutive items a thread).
pub(super) fn map_side_by_side<T: Send, R: Send>(
    items: Vec<T>,
    work: impl Fn(T) -> R + Sync,
) -> Vec<R> {
    let threads = items.len().clamp(1, SYNC_THREADS);
    let per_thread = items.len().div_ceil(threads).max(1);
    let run = |group: Vec<T>| group.into_iter().map(&work).collect::<Vec<R>>();
    let mut groups: Vec<Vec<T>> = Vec::with_capacity(threads);
    let mut rest = items.into_iter().peekable();
    while rest.peek().is_some() {
        groups.push(rest.by_ref().take(per_thread).collect());
    }
    if groups.len() <= 1 {
        return groups.into_iter().flat_map(run).collect();
    }
    let run = &run;
    std::thread::scope(|scope| {
        let handles: Vec<_> = groups
            .into_iter()
            .map(|group| scope.spawn(move || run(group)))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    })
}
