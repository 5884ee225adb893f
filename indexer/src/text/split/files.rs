//! Where split files are kept: the [`SplitFiles`] role of the shared file
//! store, its local-folder implementation, and the folder and file names of
//! the splits in it.

use std::path::{Path, PathBuf};

use super::super::embedded::text_err;
use crate::error::Result;

/// The folder of the split files in the file store (beside the packs' topic folders;
/// a topic is never named with a leading `_`).
pub const SPLIT_FOLDER: &str = "_text";
/// How old a file no manifest row names must be to count as left by a killed writer
/// (a write in progress takes seconds).
pub const UNLISTED_AFTER: std::time::Duration = std::time::Duration::from_secs(3_600);

/// Where split files are kept: the shared file store.
pub trait SplitFiles: Send + Sync {
    /// Writes a whole new file, durable when this returns.
    fn put(&self, path: &str, bytes: &[u8]) -> Result<()>;
    /// Reads a whole file.
    fn get(&self, path: &str) -> Result<Vec<u8>>;
    /// Removes a file (a missing file is no error).
    fn delete(&self, path: &str) -> Result<()>;
    /// The paths of the files under the folder `prefix` (none when it does not exist).
    fn list(&self, prefix: &str) -> Result<Vec<String>>;
}

/// Split files in a local folder (one machine; tests).
#[derive(Debug, Clone)]
pub struct FolderFiles {
    root: PathBuf,
}

impl FolderFiles {
    /// Files under `root`.
    pub fn new(root: &Path) -> FolderFiles {
        FolderFiles {
            root: root.to_owned(),
        }
    }
}

impl SplitFiles for FolderFiles {
    fn put(&self, path: &str, bytes: &[u8]) -> Result<()> {
        use std::io::Write;
        let full = self.root.join(path);
        let parent = full.parent().unwrap_or(&self.root);
        std::fs::create_dir_all(parent).map_err(|e| text_err(parent, "create folder", e))?;
        let part = full.with_extension("part");
        let mut f = std::fs::File::create(&part).map_err(|e| text_err(&part, "create", e))?;
        f.write_all(bytes)
            .and_then(|()| f.sync_all())
            .map_err(|e| text_err(&part, "write", e))?;
        std::fs::rename(&part, &full).map_err(|e| text_err(&full, "rename", e))
    }

    fn get(&self, path: &str) -> Result<Vec<u8>> {
        let full = self.root.join(path);
        std::fs::read(&full).map_err(|e| text_err(&full, "read", e))
    }

    fn delete(&self, path: &str) -> Result<()> {
        let full = self.root.join(path);
        match std::fs::remove_file(&full) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(text_err(&full, "remove", e)),
            _ => Ok(()),
        }
    }

    fn list(&self, prefix: &str) -> Result<Vec<String>> {
        fn walk(dir: &Path, rel: &str, out: &mut Vec<String>) -> std::io::Result<()> {
            let entries = match std::fs::read_dir(dir) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
                other => other?,
            };
            for entry in entries {
                let entry = entry?;
                let name = entry.file_name().to_string_lossy().into_owned();
                let path = format!("{rel}/{name}");
                if entry.file_type()?.is_dir() {
                    walk(&entry.path(), &path, out)?;
                } else {
                    out.push(path);
                }
            }
            Ok(())
        }
        let mut out = Vec::new();
        let root = self.root.join(prefix);
        walk(&root, prefix.trim_end_matches('/'), &mut out)
            .map_err(|e| text_err(&root, "list", e))?;
        Ok(out)
    }
}

/// The writer's clock (µs since the epoch) in a split file's name (`{seq:016x}-{nonce}…`).
pub(super) fn seq_of_file(path: &str) -> Option<u64> {
    let name = path.rsplit('/').next()?;
    u64::from_str_radix(name.get(..16)?, 16).ok()
}
