//! Error type of the classifier crate.

use std::path::PathBuf;

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong while reading corpora, training, saving or loading models.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An I/O error on a named file.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The file being read or written.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A corpus line has no `label<TAB>` prefix (or an empty label).
    #[error("{}:{line}: line has no label (expected `label<TAB>text`)", .path.display())]
    MissingLabel {
        /// The corpus file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
    },
    /// A corpus file is malformed in another way (bad header, bad encoding...).
    #[error("{}:{line}: {message}", .path.display())]
    BadCorpus {
        /// The corpus file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// A corpus spec string could not be parsed.
    #[error("invalid corpus spec `{spec}`: {message}")]
    BadSpec {
        /// The spec as given.
        spec: String,
        /// What is wrong.
        message: String,
    },
    /// The file does not start with the model magic: it is not a model file.
    #[error("{}: not a harvest classifier model file (missing `{}` header)", .path.display(), crate::format::MAGIC)]
    NotAModel {
        /// The file.
        path: PathBuf,
    },
    /// The file has the model header but its body cannot be decoded.
    #[error("{}: corrupt model file: {message}", .path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The model file was written by a newer version of harvest.
    #[error("{}: model format version {found} is not supported (this build reads versions {}..={supported}); retrain or upgrade harvest", .path.display(), crate::format::OLDEST_FORMAT_VERSION)]
    UnsupportedVersion {
        /// The file.
        path: PathBuf,
        /// Version found in the file.
        found: u32,
        /// Highest version this build reads.
        supported: u32,
    },
    /// Training is impossible with the given data or options.
    #[error("cannot train: {0}")]
    Training(String),
    /// An error reported by linfa (metrics, dataset shapes).
    #[error("linfa: {0}")]
    Linfa(#[from] linfa::Error),
    /// An evaluation document carries a label the model does not know.
    #[error("evaluation label `{0}` is not one of the model's classes")]
    UnknownLabel(String),
    /// An image could not be decoded (unknown format, corrupt, over the size limits).
    #[error("image: {0}")]
    Image(String),
}
