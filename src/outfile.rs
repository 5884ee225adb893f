//! Files a command writes where one of its arguments says (`export cdxj
//! --out`, `stats --plot`): whole or not at all.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// Where a command writes the file one of its arguments names
/// (`export cdxj --out`, `stats --plot`): beside itself when the command
/// line opened the store, or back to the caller when the command runs inside
/// `harvest serve` for a forwarded command line: the server never opens a
/// path a request names, so the API cannot be used to write its host's files.
pub enum Files {
    /// The path on this machine, written by this process.
    Local,
    /// The caller's file: the content goes back in the answer's frames and
    /// the calling process writes it (the server's forwarding makes each).
    Caller(Box<dyn Fn() -> Box<dyn OutFile> + Send + Sync>),
}

/// A named output file being written; its content counts once
/// [`OutFile::commit`] returns (dropped before that, it is left out).
pub trait OutFile: Write + Send {
    fn commit(self: Box<Self>) -> Result<()>;
}

impl Files {
    /// The output file `path`.
    pub fn create(&self, path: &Path) -> Result<Box<dyn OutFile>> {
        match self {
            Files::Local => Ok(Box::new(LocalFile::create(path)?)),
            Files::Caller(make) => Ok(make()),
        }
    }
}

/// A file written under a temporary name beside its path and renamed to it
/// once whole and synced, so a reader never sees half of it.
pub struct LocalFile {
    path: PathBuf,
    tmp: PathBuf,
    file: Option<std::io::BufWriter<std::fs::File>>,
}

/// The temporary name beside `path` a file is written under until whole
/// (`.NAME.tmp-PID`).
pub fn temporary_beside(path: &Path) -> Result<PathBuf> {
    let name = path
        .file_name()
        .with_context(|| format!("{}: not a file name", path.display()))?;
    Ok(path.with_file_name(format!(
        ".{}.tmp-{}",
        name.to_string_lossy(),
        std::process::id()
    )))
}

impl LocalFile {
    pub fn create(path: &Path) -> Result<LocalFile> {
        let tmp = temporary_beside(path)?;
        let file =
            std::fs::File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
        Ok(LocalFile {
            path: path.to_path_buf(),
            tmp,
            file: Some(std::io::BufWriter::new(file)),
        })
    }
}

impl Write for LocalFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match &mut self.file {
            Some(f) => f.write(buf),
            None => Err(std::io::Error::other("the file is closed")),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match &mut self.file {
            Some(f) => f.flush(),
            None => Ok(()),
        }
    }
}

impl OutFile for LocalFile {
    fn commit(mut self: Box<Self>) -> Result<()> {
        let Some(w) = self.file.take() else {
            return Ok(());
        };
        let file = w
            .into_inner()
            .map_err(|e| e.into_error())
            .with_context(|| format!("writing {}", self.tmp.display()))?;
        file.sync_all()
            .with_context(|| format!("writing {}", self.tmp.display()))?;
        std::fs::rename(&self.tmp, &self.path)
            .with_context(|| format!("renaming {} to {}", self.tmp.display(), self.path.display()))
    }
}

impl Drop for LocalFile {
    fn drop(&mut self) {
        if self.file.take().is_some() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}
