//! Conformance suite for [`PackStore`] backends (compiled for tests and with the
//! `conformance` feature).
//!
//! Each function checks one property and panics with a message when the backend breaks it.
//! Every function works in its own fresh namespace (`conformance-<uuid>/…`), so the suite can
//! run against a shared, non-empty store and more than once. A backend test calls
//! [`run_all`], or the functions one by one for finer reporting:
//!
//! ```ignore
//! #[test]
//! fn hdfs_conformance() {
//!     let store = HdfsPackStore::connect(&minidfs.url()).unwrap();
//!     packer::conformance::run_all(&store);
//! }
//! ```

use super::api::{PackStore, PackWriter};
use crate::error::Error;

/// Real text used as file content (from RFC 9110, section 15.3.1).
const SAMPLE: &[u8] = b"The 200 (OK) status code indicates that the request has succeeded. \
The content sent in a 200 response depends on the request method.";

/// A fresh namespace folder for one check.
fn namespace(check: &str) -> String {
    format!("conformance-{}/{check}", uuid::Uuid::new_v4().simple())
}

fn write_file(store: &dyn PackStore, path: &str, chunks: &[&[u8]]) {
    let mut w = store
        .create(path)
        .unwrap_or_else(|e| panic!("create {path}: {e}"));
    for chunk in chunks {
        w.append(chunk)
            .unwrap_or_else(|e| panic!("append to {path}: {e}"));
    }
    w.close().unwrap_or_else(|e| panic!("close {path}: {e}"));
}

/// Runs every check.
pub fn run_all(store: &dyn PackStore) {
    create_append_read_ranges(store);
    append_returns_offsets_and_position(store);
    create_existing_fails(store);
    create_makes_parent_folders(store);
    list_is_recursive_sorted_and_filtered_by_prefix(store);
    list_of_missing_prefix_is_empty(store);
    len_reports_size(store);
    delete_removes_file(store);
    rename_moves_and_never_overwrites(store);
    sync_then_read(store);
    reopen_for_append(store);
    missing_file_errors(store);
    out_of_range_read_errors(store);
    invalid_paths_are_rejected(store);
}

/// Appended bytes can be read back by arbitrary ranges, including empty ones.
pub fn create_append_read_ranges(store: &dyn PackStore) {
    let path = format!("{}/a.warc.gz", namespace("ranges"));
    let (head, tail) = SAMPLE.split_at(40);
    write_file(store, &path, &[head, tail]);
    let all = store
        .read_range(&path, 0, SAMPLE.len() as u64)
        .expect("read all");
    assert_eq!(all, SAMPLE);
    let mid = store.read_range(&path, 30, 25).expect("read middle");
    assert_eq!(mid, &SAMPLE[30..55]);
    let last = store
        .read_range(&path, SAMPLE.len() as u64 - 1, 1)
        .expect("read last byte");
    assert_eq!(last, &SAMPLE[SAMPLE.len() - 1..]);
    let empty = store
        .read_range(&path, SAMPLE.len() as u64, 0)
        .expect("empty read at end");
    assert!(empty.is_empty());
}

/// `append` returns the offset of its bytes and `position` the running total.
pub fn append_returns_offsets_and_position(store: &dyn PackStore) {
    let path = format!("{}/p", namespace("position"));
    let mut w = store.create(&path).expect("create");
    assert_eq!(w.position(), 0);
    assert_eq!(w.append(&SAMPLE[..10]).expect("append 1"), 0);
    assert_eq!(w.append(&[]).expect("append empty"), 10);
    assert_eq!(w.append(&SAMPLE[10..25]).expect("append 2"), 10);
    assert_eq!(w.position(), 25);
    w.close().expect("close");
    assert_eq!(store.len(&path).expect("len"), 25);
}

/// `create` on an existing file fails with `AlreadyExists` and leaves it untouched.
pub fn create_existing_fails(store: &dyn PackStore) {
    let path = format!("{}/x", namespace("exists"));
    write_file(store, &path, &[SAMPLE]);
    match store.create(&path) {
        Err(Error::AlreadyExists { path: p }) => assert_eq!(p, path),
        Err(e) => panic!("expected AlreadyExists, got {e}"),
        Ok(_) => panic!("create of an existing file succeeded"),
    }
    assert_eq!(store.len(&path).expect("len"), SAMPLE.len() as u64);
}

/// `create` makes all missing parent folders.
pub fn create_makes_parent_folders(store: &dyn PackStore) {
    let path = format!("{}/t/2024/05/01/c0-0.warc.gz", namespace("parents"));
    write_file(store, &path, &[b"x"]);
    assert_eq!(store.len(&path).expect("len"), 1);
}

/// `list` is recursive, sorted by path, reports lengths and filters by string prefix.
pub fn list_is_recursive_sorted_and_filtered_by_prefix(store: &dyn PackStore) {
    let ns = namespace("list");
    let files = [
        ("b/2024/05/02/c1-0.warc.gz", 3usize),
        ("a/2024/05/01/c10-0.warc.gz", 5),
        ("a/2024/05/01/c1-1.warc.gz", 2),
        ("a/2024/05/01/c1-0.warc.gz", 7),
        ("a/2024/12/31/c0-0.warc.gz", 1),
        // A current pack name (layout/name.rs): '-' and digits throughout.
        (
            "a/2024/05/01/a-20240501-c1-20240502101112-00002-k7q2mxa4.warc.gz",
            4,
        ),
    ];
    for (rel, len) in files {
        write_file(store, &format!("{ns}/{rel}"), &[&SAMPLE[..len]]);
    }
    let listed = store.list(&format!("{ns}/")).expect("list namespace");
    let got: Vec<_> = listed
        .iter()
        .map(|e| {
            (
                e.path.strip_prefix(&format!("{ns}/")).unwrap_or(&e.path),
                e.len,
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (
                "a/2024/05/01/a-20240501-c1-20240502101112-00002-k7q2mxa4.warc.gz",
                4
            ),
            ("a/2024/05/01/c1-0.warc.gz", 7),
            ("a/2024/05/01/c1-1.warc.gz", 2),
            ("a/2024/05/01/c10-0.warc.gz", 5),
            ("a/2024/12/31/c0-0.warc.gz", 1),
            ("b/2024/05/02/c1-0.warc.gz", 3),
        ]
    );
    let day: Vec<_> = store
        .list(&format!("{ns}/a/2024/05/01/c1-"))
        .expect("list partial name")
        .into_iter()
        .map(|e| e.path)
        .collect();
    assert_eq!(
        day,
        vec![
            format!("{ns}/a/2024/05/01/c1-0.warc.gz"),
            format!("{ns}/a/2024/05/01/c1-1.warc.gz"),
        ]
    );
    let folder = store.list(&format!("{ns}/a/2024/12")).expect("list folder");
    assert_eq!(folder.len(), 1);
    let everything = store.list("").expect("list all");
    assert!(everything.len() >= files.len());
    assert!(
        everything.windows(2).all(|w| w[0].path < w[1].path),
        "list(\"\") not sorted"
    );
}

/// A prefix below a missing folder lists nothing (not an error).
pub fn list_of_missing_prefix_is_empty(store: &dyn PackStore) {
    let ns = namespace("list-missing");
    let listed = store.list(&format!("{ns}/nothing/here/")).expect("list");
    assert!(listed.is_empty(), "unexpected entries: {listed:?}");
}

/// `len` reports the size after close.
pub fn len_reports_size(store: &dyn PackStore) {
    let path = format!("{}/len", namespace("len"));
    write_file(store, &path, &[SAMPLE, SAMPLE]);
    assert_eq!(store.len(&path).expect("len"), 2 * SAMPLE.len() as u64);
    let empty = format!("{}/empty", namespace("len"));
    write_file(store, &empty, &[]);
    assert_eq!(store.len(&empty).expect("len of empty"), 0);
}

/// `delete` removes the file; deleting again fails with `NotFound`.
pub fn delete_removes_file(store: &dyn PackStore) {
    let ns = namespace("delete");
    let path = format!("{ns}/gone");
    write_file(store, &path, &[SAMPLE]);
    store.delete(&path).expect("delete");
    assert!(matches!(store.len(&path), Err(Error::NotFound { .. })));
    assert!(store.list(&format!("{ns}/")).expect("list").is_empty());
    assert!(matches!(store.delete(&path), Err(Error::NotFound { .. })));
    // The path can be created again after a delete.
    write_file(store, &path, &[b"again"]);
    assert_eq!(store.len(&path).expect("len"), 5);
}

/// `rename` moves content (making parents), fails on a missing source and never overwrites.
pub fn rename_moves_and_never_overwrites(store: &dyn PackStore) {
    let ns = namespace("rename");
    let from = format!("{ns}/tmp/a.warc.gz.open");
    let to = format!("{ns}/final/2024/a.warc.gz");
    write_file(store, &from, &[SAMPLE]);
    store.rename(&from, &to).expect("rename");
    assert!(matches!(store.len(&from), Err(Error::NotFound { .. })));
    assert_eq!(
        store.read_range(&to, 0, SAMPLE.len() as u64).expect("read"),
        SAMPLE
    );

    let other = format!("{ns}/other");
    write_file(store, &other, &[b"other"]);
    match store.rename(&other, &to) {
        Err(Error::AlreadyExists { .. }) => {}
        Err(e) => panic!("expected AlreadyExists, got {e}"),
        Ok(()) => panic!("rename overwrote an existing file"),
    }
    assert_eq!(store.len(&to).expect("len"), SAMPLE.len() as u64);
    assert_eq!(store.len(&other).expect("len"), 5);
    assert!(matches!(
        store.rename(&format!("{ns}/missing"), &format!("{ns}/x")),
        Err(Error::NotFound { .. })
    ));
}

/// Bytes are readable (and counted by `len`) after `sync`, before `close`; the writer
/// keeps working after a sync.
pub fn sync_then_read(store: &dyn PackStore) {
    let path = format!("{}/synced", namespace("sync"));
    let mut w: Box<dyn PackWriter> = store.create(&path).expect("create");
    w.sync().expect("sync of empty file");
    w.append(&SAMPLE[..20]).expect("append");
    w.sync().expect("sync");
    assert_eq!(store.len(&path).expect("len"), 20);
    assert_eq!(store.read_range(&path, 0, 20).expect("read"), &SAMPLE[..20]);
    w.append(&SAMPLE[20..30]).expect("append after sync");
    w.sync().expect("second sync");
    assert_eq!(
        store.read_range(&path, 20, 10).expect("read"),
        &SAMPLE[20..30]
    );
    w.close().expect("close");
    assert_eq!(store.len(&path).expect("len"), 30);
}

/// `append` reopens a closed file at its end (or says the store cannot): what was in it and
/// what is appended read back in one range, before and after close. While a writer holds the
/// file, a second `append` is `Busy`, from a created writer or an appending one; after it
/// closes, the file can be appended to again. A missing file is `NotFound`.
pub fn reopen_for_append(store: &dyn PackStore) {
    let ns = namespace("append");
    let path = format!("{ns}/grown");
    write_file(store, &path, &[&SAMPLE[..10]]);
    let mut w = match store.append(&path) {
        Ok(w) => w,
        Err(Error::AppendUnsupported { .. }) => return,
        Err(e) => panic!("append to a closed file: {e}"),
    };
    assert_eq!(w.position(), 10);
    assert!(
        matches!(store.append(&path), Err(Error::Busy { .. })),
        "a second writer of a held file"
    );
    assert_eq!(w.append(&SAMPLE[10..25]).expect("append"), 10);
    w.sync().expect("sync");
    assert_eq!(store.len(&path).expect("len"), 25);
    assert_eq!(store.read_range(&path, 0, 25).expect("read"), &SAMPLE[..25]);
    assert_eq!(store.read_range(&path, 8, 4).expect("read"), &SAMPLE[8..12]);
    w.close().expect("close");
    assert_eq!(store.read_range(&path, 0, 25).expect("read"), &SAMPLE[..25]);

    let mut again = store.append(&path).expect("append after close");
    assert_eq!(again.append(&SAMPLE[25..30]).expect("append"), 25);
    again.close().expect("close");
    assert_eq!(store.read_range(&path, 0, 30).expect("read"), &SAMPLE[..30]);

    let open = format!("{ns}/open");
    let mut created = store.create(&open).expect("create");
    created.append(&SAMPLE[..3]).expect("append");
    created.sync().expect("sync");
    assert!(
        matches!(store.append(&open), Err(Error::Busy { .. })),
        "append of a file its creator still writes"
    );
    created.close().expect("close");
    assert!(matches!(
        store.append(&format!("{ns}/missing")),
        Err(Error::NotFound { .. })
    ));
}

/// Operations on a missing file fail with `NotFound`.
pub fn missing_file_errors(store: &dyn PackStore) {
    let path = format!("{}/missing.warc.gz", namespace("missing"));
    assert!(matches!(
        store.read_range(&path, 0, 1),
        Err(Error::NotFound { .. })
    ));
    assert!(matches!(store.len(&path), Err(Error::NotFound { .. })));
    assert!(matches!(store.delete(&path), Err(Error::NotFound { .. })));
}

/// Reads past the end fail with `OutOfRange` instead of returning short data.
pub fn out_of_range_read_errors(store: &dyn PackStore) {
    let path = format!("{}/short", namespace("range"));
    write_file(store, &path, &[&SAMPLE[..10]]);
    for (offset, len) in [(0, 11), (10, 1), (11, 0), (5, u64::MAX), (u64::MAX, 1)] {
        match store.read_range(&path, offset, len) {
            Err(Error::OutOfRange { file_len, .. }) => assert_eq!(file_len, 10),
            Err(e) => panic!("read {offset}+{len}: expected OutOfRange, got {e}"),
            Ok(bytes) => panic!(
                "read {offset}+{len} past the end returned {} bytes",
                bytes.len()
            ),
        }
    }
}

/// Traversal, absolute and malformed paths are rejected by every operation.
pub fn invalid_paths_are_rejected(store: &dyn PackStore) {
    let ns = namespace("invalid");
    let good = format!("{ns}/ok");
    write_file(store, &good, &[b"ok"]);
    for bad in [
        "",
        "/etc/passwd",
        "../outside",
        "a/../../b",
        "a//b",
        "a/./b",
        "a\\b",
        "dir/",
    ] {
        let is_invalid = |r: Result<(), Error>| matches!(r, Err(Error::InvalidPath { .. }));
        assert!(is_invalid(store.create(bad).map(|_| ())), "create {bad:?}");
        assert!(
            is_invalid(store.read_range(bad, 0, 0).map(|_| ())),
            "read {bad:?}"
        );
        assert!(is_invalid(store.len(bad).map(|_| ())), "len {bad:?}");
        assert!(is_invalid(store.delete(bad)), "delete {bad:?}");
        assert!(is_invalid(store.rename(&good, bad)), "rename to {bad:?}");
    }
    assert!(matches!(store.list("../"), Err(Error::InvalidPath { .. })));
    assert!(matches!(
        store.list("/abs/"),
        Err(Error::InvalidPath { .. })
    ));
    assert_eq!(store.len(&good).expect("len"), 2);
}
