//! Atomic index batches.
//!
//! An ingest batch touches many tables (page rows and posting cells in
//! `SOURCE_YYYY`, `urls`, `digests`, `captures`, `clusters`, `simhash`,
//! `stories`). [`Index::atomically`] runs the usual [`Index`] methods
//! against a view whose writes are recorded instead of sent, then hands the
//! whole list to [`TableStore::apply`]:
//! - the embedded store applies it as one fjall write batch across its
//!   keyspaces: every row of the batch is visible, or none is;
//! - a backend without cross-table atomicity (HBase) first files the batch
//!   in the `journal` table (one row: atomic on every backend), applies it,
//!   then removes the journal row. A process killed in between leaves the
//!   row behind; [`Index::recover`] (run when a writer opens the index)
//!   applies it again. Every mutation is an absolute put or delete, so
//!   applying a batch twice gives the rows applying it once gives.
//!
//! Reads inside [`Index::atomically`] see the store as it was before the
//! batch: the batch's own writes are not visible to them (the ingest path
//! reads before it writes, and never reads what it wrote in the same batch).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::error::{Error, Result};
use crate::index::Index;
pub use crate::store::{apply_in_order, Mutation};
use crate::store::{Cell, Hook, Hooked, Row, Scan, TableStore};
pub use crate::tables::JOURNAL_TABLE;

/// Largest journal cell: a batch is split over cells of at most this size
/// (HBase refuses cells over `hbase.client.keyvalue.maxsize`, 10 MB).
const JOURNAL_CHUNK: usize = 1 << 20;

/// A journal row of a process that may still be applying it is left alone
/// for this long when the process cannot be checked (another host).
const FOREIGN_JOURNAL_GRACE: chrono::Duration = chrono::Duration::minutes(10);

/// The hook of a batch's recording view: writes are recorded, reads go to
/// the store (or to rows read before the batch).
struct Recorder {
    log: Mutex<Vec<Mutation>>,
    known: ReadRows,
}

/// Table, families asked for and row key of a read row.
type ReadKey = (String, Vec<String>, Vec<u8>);

/// Rows read before a batch (its lookups: the URL states and digests of its
/// pages), for the batch's own reads of the same rows: on a remote store
/// each read again is a round trip and server work. See
/// [`Index::remembering`] and [`Index::atomically_knowing`].
#[derive(Clone, Default)]
pub struct ReadRows(Arc<Mutex<HashMap<ReadKey, Option<Row>>>>);

impl ReadRows {
    fn key(table: &str, families: &[&str], row: &[u8]) -> ReadKey {
        (
            table.to_owned(),
            families.iter().map(|f| (*f).to_owned()).collect(),
            row.to_vec(),
        )
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, HashMap<ReadKey, Option<Row>>>> {
        self.0
            .lock()
            .map_err(|_| Error::Invalid("read rows lock poisoned".into()))
    }

    /// Rows read so far.
    pub fn len(&self) -> usize {
        self.0.lock().map_or(0, |m| m.len())
    }

    /// Whether no row was read.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The hook of a view that keeps what its `get`s return.
struct Remembering(ReadRows);

impl Hook for Remembering {
    fn get(
        &self,
        inner: &dyn TableStore,
        table: &str,
        keys: &[Vec<u8>],
        families: &[&str],
    ) -> Result<Vec<Option<Row>>> {
        let rows = inner.get(table, keys, families)?;
        let mut known = self.0.lock()?;
        for (key, row) in keys.iter().zip(&rows) {
            known.insert(ReadRows::key(table, families, key), row.clone());
        }
        Ok(rows)
    }
}

impl Recorder {
    fn record(&self, m: Mutation) -> Result<()> {
        self.log
            .lock()
            .map_err(|_| Error::Invalid("batch recorder poisoned".into()))?
            .push(m);
        Ok(())
    }
}

impl Hook for Recorder {
    fn put(&self, _: &dyn TableStore, table: &str, rows: &[Row]) -> Result<()> {
        if rows.is_empty() {
            return Ok(());
        }
        self.record(Mutation::Put {
            table: table.to_string(),
            rows: rows.to_vec(),
        })
    }
    fn get(
        &self,
        inner: &dyn TableStore,
        table: &str,
        keys: &[Vec<u8>],
        families: &[&str],
    ) -> Result<Vec<Option<Row>>> {
        let mut out: Vec<Option<Row>> = Vec::with_capacity(keys.len());
        let mut missing: Vec<usize> = Vec::new();
        {
            let known = self.known.lock()?;
            if known.is_empty() {
                // Nothing read ahead (every batch on the embedded store).
                drop(known);
                return inner.get(table, keys, families);
            }
            for (i, key) in keys.iter().enumerate() {
                match known.get(&ReadRows::key(table, families, key)) {
                    Some(row) => out.push(row.clone()),
                    None => {
                        out.push(None);
                        missing.push(i);
                    }
                }
            }
        }
        if missing.len() == keys.len() {
            return inner.get(table, keys, families);
        }
        if !missing.is_empty() {
            let ask: Vec<Vec<u8>> = missing.iter().map(|&i| keys[i].clone()).collect();
            for (i, row) in missing.into_iter().zip(inner.get(table, &ask, families)?) {
                out[i] = row;
            }
        }
        Ok(out)
    }
    fn delete(&self, _: &dyn TableStore, table: &str, keys: &[Vec<u8>]) -> Result<()> {
        if keys.is_empty() {
            return Ok(());
        }
        self.record(Mutation::Delete {
            table: table.to_string(),
            keys: keys.to_vec(),
        })
    }
    fn delete_cells(&self, _: &dyn TableStore, table: &str, rows: &[Row]) -> Result<()> {
        if rows.is_empty() {
            return Ok(());
        }
        self.record(Mutation::DeleteCells {
            table: table.to_string(),
            rows: rows.to_vec(),
        })
    }
}

/// What [`Index::recover`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Recovered {
    /// Interrupted batches applied again.
    pub batches: usize,
    /// Journal rows left alone (their writer may still be at work).
    pub skipped: usize,
    /// Text marks of killed writers cleared ([`crate::tables::textmark`]).
    pub text_marks: usize,
    /// Pages of those marks whose rows never came: their words were removed from the
    /// text index.
    pub text_removed: usize,
}

impl Index {
    /// Runs `f` against a view of this index whose writes are collected,
    /// then makes them durable and visible as one unit (see the module
    /// documentation). When `f` fails nothing is written; when applying
    /// fails the error is returned and the archive holds the batch wholly
    /// or not at all (embedded), or its journal row for
    /// [`Index::recover`] (other backends).
    pub fn atomically<T>(&self, f: impl FnOnce(&Index) -> Result<T>) -> Result<T> {
        self.atomically_knowing(ReadRows::default(), f)
    }

    /// A view of this index that keeps the rows its `get`s return in `rows`,
    /// for [`Index::atomically_knowing`].
    pub fn remembering(&self, rows: &ReadRows) -> Index {
        self.with_store(Arc::new(Hooked {
            inner: self.store().clone(),
            hook: Remembering(rows.clone()),
        }))
    }

    /// [`Index::atomically`] whose reads of rows in `known` (read through
    /// [`Index::remembering`] since the last write to them) are answered
    /// from it: the batch's lookups are not sent again. The caller promises
    /// that nothing wrote those rows in between.
    pub fn atomically_knowing<T>(
        &self,
        known: ReadRows,
        f: impl FnOnce(&Index) -> Result<T>,
    ) -> Result<T> {
        let (out, mutations) = self.record_knowing(known, f)?;
        self.commit(&mutations)?;
        Ok(out)
    }

    /// The first half of [`Index::atomically_knowing`]: runs `f` against the
    /// recording view and returns what it wrote, not yet applied. The
    /// caller applies it with [`Index::commit`] (on another thread, reading
    /// meanwhile through [`Index::overlaid`]), before it records the next
    /// batch.
    pub fn record_knowing<T>(
        &self,
        known: ReadRows,
        f: impl FnOnce(&Index) -> Result<T>,
    ) -> Result<(T, Vec<Mutation>)> {
        let recorder = Arc::new(Hooked {
            inner: self.store().clone(),
            hook: Recorder {
                log: Mutex::new(Vec::new()),
                known,
            },
        });
        let view = self.with_store(recorder.clone());
        let out = f(&view)?;
        drop(view);
        let mutations = std::mem::take(
            &mut *recorder
                .hook
                .log
                .lock()
                .map_err(|_| Error::Invalid("batch recorder poisoned".into()))?,
        );
        Ok((out, mutations))
    }

    /// Applies `mutations` as one unit: directly where the store applies
    /// batches atomically, through the journal otherwise.
    pub fn commit(&self, mutations: &[Mutation]) -> Result<()> {
        if mutations.is_empty() {
            return Ok(());
        }
        let store = self.store();
        if store.atomic_apply() {
            return store.apply(mutations);
        }
        let key = journal_key();
        store.put(JOURNAL_TABLE, &[journal_row(&key, mutations)?])?;
        store.apply(mutations)?;
        store.delete(JOURNAL_TABLE, &[key])
    }

    /// Applies again the batches that a killed writer left in the journal,
    /// oldest first, and removes their rows. A row of a process that is
    /// still running on this host is left alone, as is a row of another
    /// host younger than ten minutes. Writers call this when they open the
    /// index.
    pub fn recover(&self) -> Result<Recovered> {
        let store = self.store();
        let rows = store.scan(JOURNAL_TABLE, &Scan::prefix(b""))?;
        let mut done = Recovered::default();
        let now = chrono::Utc::now();
        for row in rows {
            if writer_at_work(&row.key, now) {
                done.skipped += 1;
                continue;
            }
            let mutations = decode_journal(&row)?;
            tracing::warn!(
                writer = %String::from_utf8_lossy(&row.key),
                writes = mutations.len(),
                tables = ?mutations.iter().map(Mutation::table).collect::<std::collections::BTreeSet<_>>(),
                "applying an interrupted index batch again"
            );
            apply_in_order(store.as_ref(), &mutations)?;
            store.delete(JOURNAL_TABLE, std::slice::from_ref(&row.key))?;
            done.batches += 1;
        }
        // After the journal: a batch applied again has its rows, so its pages keep their text.
        let (marks, removed) = self.recover_text_marks(now)?;
        done.text_marks = marks;
        done.text_removed = removed;
        Ok(done)
    }
}

/// This machine's host name (empty if it has none), for records that say
/// which process wrote them (journal rows, job runs, a pack's warcinfo).
pub fn host_name() -> String {
    gethostname::gethostname()
        .to_string_lossy()
        .trim()
        .to_owned()
}

/// Whether a process with this id runs on this host (Linux: `/proc/PID`;
/// elsewhere assumed alive).
pub fn process_alive(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    let proc_root = std::path::Path::new("/proc");
    if !proc_root.join("self").exists() {
        return true;
    }
    // A process killed but not yet reaped by its parent is a zombie: its
    // entry stays until then, yet it holds nothing and answers nothing.
    match std::fs::read_to_string(proc_root.join(pid.to_string()).join("stat")) {
        Ok(stat) => !matches!(
            stat.rsplit_once(')')
                .map(|(_, rest)| rest.trim_start().chars().next()),
            Some(Some('Z' | 'X'))
        ),
        Err(_) => false,
    }
}

/// Whether the writer that filed a row keyed by [`journal_key`] may still be at work: a
/// live process of this host other than this one, or a process of another host (which
/// cannot be checked) within [`FOREIGN_JOURNAL_GRACE`].
pub(crate) fn writer_at_work(key: &[u8], now: chrono::DateTime<chrono::Utc>) -> bool {
    match JournalWriter::parse(key) {
        Some(w) if w.host == host_name() => w.pid != std::process::id() && process_alive(w.pid),
        Some(w) => now - w.time < FOREIGN_JOURNAL_GRACE,
        None => false,
    }
}

/// Who filed a journal row, from its key `{time}/{host}/{pid}/{seq}`.
struct JournalWriter {
    time: chrono::DateTime<chrono::Utc>,
    host: String,
    pid: u32,
}

impl JournalWriter {
    fn parse(key: &[u8]) -> Option<JournalWriter> {
        let text = std::str::from_utf8(key).ok()?;
        let mut parts = text.splitn(4, '/');
        let micros: i64 = parts.next()?.parse().ok()?;
        let host = parts.next()?.to_string();
        let pid = parts.next()?.parse().ok()?;
        Some(JournalWriter {
            time: chrono::DateTime::from_timestamp_micros(micros)?,
            host,
            pid,
        })
    }
}

/// A new journal key: time first (recovery applies oldest first), then
/// host and pid (whose rows may be replayed), then a sequence number.
pub(crate) fn journal_key() -> Vec<u8> {
    static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let seq = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!(
        "{:016}/{}/{}/{seq}",
        chrono::Utc::now().timestamp_micros(),
        host_name().replace('/', "_"),
        std::process::id()
    )
    .into_bytes()
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(&(b.len() as u32).to_be_bytes());
    out.extend_from_slice(b);
}

fn put_rows(out: &mut Vec<u8>, rows: &[Row]) {
    out.extend_from_slice(&(rows.len() as u32).to_be_bytes());
    for row in rows {
        put_bytes(out, &row.key);
        out.extend_from_slice(&(row.cells.len() as u32).to_be_bytes());
        for c in &row.cells {
            put_bytes(out, c.family.as_bytes());
            put_bytes(out, &c.qualifier);
            put_bytes(out, &c.value);
        }
    }
}

/// The bytes of a batch: per mutation a tag (`P`, `D`, `C`), the table and
/// the rows or keys, every length a big-endian u32.
pub fn encode_mutations(mutations: &[Mutation]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&(mutations.len() as u32).to_be_bytes());
    for m in mutations {
        match m {
            Mutation::Put { table, rows } => {
                out.push(b'P');
                put_bytes(&mut out, table.as_bytes());
                put_rows(&mut out, rows);
            }
            Mutation::Delete { table, keys } => {
                out.push(b'D');
                put_bytes(&mut out, table.as_bytes());
                out.extend_from_slice(&(keys.len() as u32).to_be_bytes());
                for k in keys {
                    put_bytes(&mut out, k);
                }
            }
            Mutation::DeleteCells { table, rows } => {
                out.push(b'C');
                put_bytes(&mut out, table.as_bytes());
                put_rows(&mut out, rows);
            }
        }
    }
    out
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn bad() -> Error {
        Error::Invalid("journal entry is truncated or malformed".into())
    }
    fn u32(&mut self) -> Result<u32> {
        let (head, rest) = self.0.split_first_chunk::<4>().ok_or_else(Self::bad)?;
        self.0 = rest;
        Ok(u32::from_be_bytes(*head))
    }
    fn u8(&mut self) -> Result<u8> {
        let (head, rest) = self.0.split_first().ok_or_else(Self::bad)?;
        self.0 = rest;
        Ok(*head)
    }
    fn bytes(&mut self) -> Result<&'a [u8]> {
        let n = self.u32()? as usize;
        if n > self.0.len() {
            return Err(Self::bad());
        }
        let (b, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(b)
    }
    fn text(&mut self) -> Result<String> {
        String::from_utf8(self.bytes()?.to_vec()).map_err(|_| Self::bad())
    }
    /// A count of items each at least `min` bytes long: refused when the
    /// rest of the input cannot hold them (no huge allocation on bad input).
    fn count(&mut self, min: usize) -> Result<usize> {
        let n = self.u32()? as usize;
        if n.saturating_mul(min) > self.0.len() {
            return Err(Self::bad());
        }
        Ok(n)
    }
    fn rows(&mut self) -> Result<Vec<Row>> {
        let n = self.count(8)?;
        let mut rows = Vec::with_capacity(n);
        for _ in 0..n {
            let mut row = Row::new(self.bytes()?.to_vec());
            let cells = self.count(12)?;
            for _ in 0..cells {
                let family = self.text()?;
                let qualifier = self.bytes()?.to_vec();
                let value = self.bytes()?.to_vec();
                row.cells.push(Cell::new(&family, qualifier, value));
            }
            rows.push(row);
        }
        Ok(rows)
    }
}

/// The batch [`encode_mutations`] wrote.
pub fn decode_mutations(bytes: &[u8]) -> Result<Vec<Mutation>> {
    let mut r = Reader(bytes);
    let n = r.count(5)?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let tag = r.u8()?;
        let table = r.text()?;
        out.push(match tag {
            b'P' => Mutation::Put {
                table,
                rows: r.rows()?,
            },
            b'C' => Mutation::DeleteCells {
                table,
                rows: r.rows()?,
            },
            b'D' => {
                let k = r.count(4)?;
                let mut keys = Vec::with_capacity(k);
                for _ in 0..k {
                    keys.push(r.bytes()?.to_vec());
                }
                Mutation::Delete { table, keys }
            }
            _ => return Err(Reader::bad()),
        });
    }
    if !r.0.is_empty() {
        return Err(Reader::bad());
    }
    Ok(out)
}

/// The journal row of a batch: its bytes in cells of at most
/// [`JOURNAL_CHUNK`] (qualifiers `000000`, `000001`, ...).
/// Qualifier prefix of a journal row's deflated chunks (rows written before
/// compression have bare numbers and are read as they are).
const DEFLATED: &str = "z";

/// A batch as a journal row: its bytes deflated (fast level: about a quarter
/// of the bytes, written once more to the write-ahead log and flushed by the
/// server for every batch), cut into cells of at most [`JOURNAL_CHUNK`].
fn journal_row(key: &[u8], mutations: &[Mutation]) -> Result<Row> {
    use std::io::Write;
    let bytes = encode_mutations(mutations);
    let mut z = flate2::write::DeflateEncoder::new(
        Vec::with_capacity(bytes.len() / 3),
        flate2::Compression::fast(),
    );
    z.write_all(&bytes)
        .and_then(|()| z.finish())
        .map(|deflated| {
            let mut row = Row::new(key.to_vec());
            for (i, chunk) in deflated.chunks(JOURNAL_CHUNK).enumerate() {
                row.cells.push(Cell::new(
                    crate::record::FAMILY_ATTRS,
                    format!("{DEFLATED}{i:06}").into_bytes(),
                    chunk.to_vec(),
                ));
            }
            row
        })
        .map_err(|e| Error::Invalid(format!("cannot deflate an index batch: {e}")))
}

fn decode_journal(row: &Row) -> Result<Vec<Mutation>> {
    use std::io::Read;
    let mut cells: Vec<&Cell> = row.family(crate::record::FAMILY_ATTRS).collect();
    cells.sort_by(|a, b| a.qualifier.cmp(&b.qualifier));
    let deflated = cells
        .first()
        .is_some_and(|c| c.qualifier.starts_with(DEFLATED.as_bytes()));
    let bytes: Vec<u8> = cells.iter().flat_map(|c| c.value.iter().copied()).collect();
    if !deflated {
        return decode_mutations(&bytes);
    }
    let mut plain = Vec::with_capacity(bytes.len() * 4);
    flate2::read::DeflateDecoder::new(bytes.as_slice())
        .read_to_end(&mut plain)
        .map_err(|e| {
            Error::Invalid(format!(
                "journal row {}: cannot inflate: {e}",
                String::from_utf8_lossy(&row.key)
            ))
        })?;
    decode_mutations(&plain)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn a_killed_process_not_yet_reaped_is_not_alive() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .expect("spawn sleep");
        assert!(process_alive(child.id()), "a running child is alive");
        child.kill().expect("kill");
        // Killed and not waited for: a zombie until `wait` below.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while process_alive(child.id()) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(
            std::path::Path::new(&format!("/proc/{}", child.id())).exists(),
            "the child is still unreaped"
        );
        assert!(!process_alive(child.id()), "a zombie is not alive");
        child.wait().expect("reap");
        assert!(!process_alive(child.id()));
    }

    fn sample() -> Vec<Mutation> {
        vec![
            Mutation::Delete {
                table: "t".into(),
                keys: vec![b"a".to_vec(), Vec::new()],
            },
            Mutation::Put {
                table: "urls".into(),
                rows: vec![Row::new(b"k".to_vec())
                    .with("a", b"q".to_vec(), vec![0u8; 3])
                    .with("i", Vec::new(), b"v".to_vec())],
            },
            Mutation::DeleteCells {
                table: "SRC_2024".into(),
                rows: vec![Row::new(b"p".to_vec()).with("i", b"s".to_vec(), Vec::new())],
            },
        ]
    }

    #[test]
    fn batches_round_trip_and_bad_bytes_are_refused() {
        let m = sample();
        let bytes = encode_mutations(&m);
        assert_eq!(decode_mutations(&bytes).unwrap(), m);
        for cut in 0..bytes.len() {
            assert!(decode_mutations(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut huge = bytes.clone();
        huge[..4].copy_from_slice(&u32::MAX.to_be_bytes());
        assert!(decode_mutations(&huge).is_err());
    }

    #[test]
    fn a_big_batch_spans_cells_in_order() {
        // Values that do not deflate (xorshift noise): 4 MB stay 4 MB.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut noise = |n: usize| -> Vec<u8> {
            (0..n)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect()
        };
        let rows: Vec<Row> = (0..40u32)
            .map(|i| Row::new(i.to_be_bytes().to_vec()).with("a", b"v".to_vec(), noise(100_000)))
            .collect();
        let m = vec![Mutation::Put {
            table: "t".into(),
            rows,
        }];
        let row = journal_row(b"key", &m).expect("row");
        assert!(row.cells.len() >= 4, "{} cells", row.cells.len());
        let mut shuffled = row.clone();
        shuffled.cells.reverse();
        assert_eq!(decode_journal(&shuffled).unwrap(), m);
    }

    #[test]
    fn journal_rows_are_deflated_and_old_plain_rows_still_read() {
        let m = sample();
        let repeated: Vec<Mutation> = (0..200).flat_map(|_| m.clone()).collect();
        let row = journal_row(b"key", &repeated).expect("row");
        assert!(row.cells[0].qualifier.starts_with(b"z"));
        let deflated: usize = row.cells.iter().map(|c| c.value.len()).sum();
        assert!(
            deflated * 4 < encode_mutations(&repeated).len(),
            "{deflated} bytes"
        );
        assert_eq!(decode_journal(&row).unwrap(), repeated);
        // A row filed before journal rows were deflated.
        let plain = encode_mutations(&m);
        let (a, b) = plain.split_at(plain.len() / 2);
        let old = Row::new(b"key".to_vec())
            .with("a", b"000001".to_vec(), b.to_vec())
            .with("a", b"000000".to_vec(), a.to_vec());
        assert_eq!(decode_journal(&old).unwrap(), m);
        // A damaged deflated row is an error naming it, not a panic.
        let mut broken = row.clone();
        broken.cells[0].value.truncate(3);
        let err = decode_journal(&broken).expect_err("damaged");
        assert!(err.to_string().contains("cannot inflate"), "{err}");
    }

    #[test]
    fn journal_keys_name_their_writer() {
        let key = journal_key();
        let w = JournalWriter::parse(&key).expect("parsed");
        assert_eq!(w.pid, std::process::id());
        assert!((chrono::Utc::now() - w.time).num_seconds() < 5);
        assert!(JournalWriter::parse(b"garbage").is_none());
    }

    /// Rows read through [`Index::remembering`] answer the batch's own reads
    /// of them (the store is not asked again); other rows are read through,
    /// and the batch's writes are applied as usual.
    #[test]
    fn a_batch_reads_remembered_rows_instead_of_the_store() {
        use crate::embedded::EmbeddedStore;
        use crate::record::FAMILY_ATTRS;
        let dir = tempfile::tempdir().expect("temp dir");
        let store: Arc<dyn TableStore> =
            Arc::new(EmbeddedStore::open(dir.path()).unwrap_or_else(|e| panic!("open: {e}")));
        let ix = Index::new(store.clone(), crate::IndexOptions { buckets: 2 }).expect("index");
        let row = |k: &str, v: &str| {
            Row::new(k.as_bytes().to_vec()).with(FAMILY_ATTRS, b"q".to_vec(), v.as_bytes().to_vec())
        };
        store
            .put("urls", &[row("a", "old"), row("b", "old")])
            .expect("put");
        let read = ReadRows::default();
        let looked = ix
            .remembering(&read)
            .store()
            .get("urls", &[b"a".to_vec(), b"z".to_vec()], &[FAMILY_ATTRS])
            .expect("lookup");
        assert_eq!(looked, vec![Some(row("a", "old")), None]);
        assert_eq!(read.len(), 2, "a row and an absent row remembered");
        // Changed behind the remembered read: the batch must not see it
        // (nothing else writes these rows in a real batch; here it shows
        // which reads were answered from memory).
        store
            .put("urls", &[row("a", "new"), row("b", "new"), row("z", "new")])
            .expect("put");
        let seen = ix
            .atomically_knowing(read.clone(), |view| {
                let got = view.store().get(
                    "urls",
                    &[b"b".to_vec(), b"a".to_vec(), b"z".to_vec()],
                    &[FAMILY_ATTRS],
                )?;
                view.store().put("urls", &[row("a", "batch")])?;
                Ok(got)
            })
            .expect("batch");
        assert_eq!(
            seen,
            vec![Some(row("b", "new")), Some(row("a", "old")), None]
        );
        assert_eq!(
            store
                .get("urls", &[b"a".to_vec()], &[FAMILY_ATTRS])
                .expect("get"),
            vec![Some(row("a", "batch"))]
        );
    }
}
