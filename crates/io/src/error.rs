//! The I/O engine's error type: every variant names the file and the operation, so the CLI can print
//! one clear line without adding context.

use std::path::{Path, PathBuf};

/// Errors of the I/O engine.
#[derive(Debug, thiserror::Error)]
pub enum IoError {
    /// Opening or creating a file failed.
    #[error("{path}: cannot open: {source}")]
    Open { path: PathBuf, source: std::io::Error },
    /// A read failed.
    #[error("{path}: read error: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    /// A write failed for a reason other than a full disk.
    #[error("{path}: write error: {source}")]
    Write { path: PathBuf, source: std::io::Error },
    /// The filesystem holding `path` ran out of space.
    #[error("{path}: no space left on device")]
    DiskFull { path: PathBuf },
    /// fsync, rename, truncate or another metadata operation failed.
    #[error("{path}: cannot {op}: {source}")]
    Meta { path: PathBuf, op: &'static str, source: std::io::Error },
    /// A temp directory is missing, not a directory, or not writable.
    #[error("{path}: unusable temporary directory: {reason}")]
    TempDir { path: PathBuf, reason: String },
    /// Memory for a buffer could not be obtained.
    #[error("cannot allocate {bytes} bytes of buffer memory: {source}")]
    Alloc { bytes: usize, source: std::io::Error },
    /// A worker thread died; this is a bug in xsort.
    #[error("internal error: {0}")]
    Internal(String),
}

impl IoError {
    /// Classifies a failed write: ENOSPC and EDQUOT become [`IoError::DiskFull`].
    pub fn write(path: &Path, source: std::io::Error) -> Self {
        match source.raw_os_error() {
            Some(libc::ENOSPC) | Some(libc::EDQUOT) => IoError::DiskFull { path: path.to_owned() },
            _ => IoError::Write { path: path.to_owned(), source },
        }
    }

    /// A read error on `path`.
    pub fn read(path: &Path, source: std::io::Error) -> Self {
        IoError::Read { path: path.to_owned(), source }
    }

    /// A metadata operation `op` failed on `path`.
    pub fn meta(path: &Path, op: &'static str, source: std::io::Error) -> Self {
        IoError::Meta { path: path.to_owned(), op, source }
    }
}

/// Result alias of the I/O engine.
pub type Result<T, E = IoError> = std::result::Result<T, E>;
