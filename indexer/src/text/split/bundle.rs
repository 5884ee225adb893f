//! The split file format: the files of a tantivy index folder bundled into
//! one buffer, and unbundled into a folder again.

use std::path::Path;

/// First bytes of a split file.
const MAGIC: &[u8; 8] = b"HVSPLIT1";

/// The files of a tantivy index folder in one buffer: the magic, the number of files,
/// then each file's name (u32 length first) and bytes (u64 length first).
pub(super) fn bundle(dir: &Path) -> std::io::Result<Vec<u8>> {
    let mut names: Vec<String> = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.file_type()?.is_file() && !name.ends_with(".lock") {
            names.push(name);
        }
    }
    names.sort();
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&(names.len() as u32).to_be_bytes());
    for name in names {
        let bytes = std::fs::read(dir.join(&name))?;
        out.extend_from_slice(&(name.len() as u32).to_be_bytes());
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(&(bytes.len() as u64).to_be_bytes());
        out.extend_from_slice(&bytes);
    }
    Ok(out)
}

/// Writes the files of a [`bundle`] into `dir`.
pub(super) fn unbundle(bytes: &[u8], dir: &Path) -> std::result::Result<(), String> {
    let mut at = 0usize;
    let mut take = |n: usize| -> std::result::Result<&[u8], String> {
        let end = at.checked_add(n).filter(|&e| e <= bytes.len());
        let end = end.ok_or_else(|| format!("truncated at byte {at}"))?;
        let s = &bytes[at..end];
        at = end;
        Ok(s)
    };
    if take(MAGIC.len())? != MAGIC {
        return Err("not a text split".into());
    }
    let count = u32::from_be_bytes(take(4)?.try_into().map_err(|_| "count")?);
    for _ in 0..count {
        let len = u32::from_be_bytes(take(4)?.try_into().map_err(|_| "name length")?);
        let name = std::str::from_utf8(take(len as usize)?).map_err(|_| "file name")?;
        if name.is_empty() || name.contains(['/', '\\']) || name.starts_with("..") {
            return Err(format!("bad file name {name:?}"));
        }
        let name = name.to_owned();
        let len = u64::from_be_bytes(take(8)?.try_into().map_err(|_| "file length")?);
        let data = take(usize::try_from(len).map_err(|_| "file length")?)?;
        std::fs::write(dir.join(&name), data).map_err(|e| format!("{name}: {e}"))?;
    }
    Ok(())
}
