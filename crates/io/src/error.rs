//! The I/O engine's error type: every variant names the file and the operation, so the CLI can print
//! one clear line without adding context. The OS error is part of the message, not a chained source,
//! so that printing the chain does not repeat it.

use std::path::{Path, PathBuf};

/// Errors of the I/O engine.
#[derive(Debug, thiserror::Error)]
pub enum IoError {
    /// Opening or creating a file failed.
    #[error("{path}: cannot open: {}", os_text(.cause))]
    Open { path: PathBuf, cause: std::io::Error },
    /// A read failed.
    #[error("{path}: read error: {}", os_text(.cause))]
    Read { path: PathBuf, cause: std::io::Error },
    /// An input's compressed data is corrupt or truncated (see [`crate::codec::Corrupt`]).
    #[error("{path}: {corrupt}")]
    Corrupt { path: PathBuf, corrupt: crate::codec::Corrupt },
    /// The output's new file could not be created in the target's directory (GNU sort's words).
    #[error("open failed: {}: {}", path.display(), os_text(.cause))]
    CreateIn { path: PathBuf, dir: PathBuf, cause: std::io::Error },
    /// A write failed for a reason other than a full disk.
    #[error("{path}: write error: {}", os_text(.cause))]
    Write { path: PathBuf, cause: std::io::Error },
    /// The filesystem holding `path` ran out of space.
    #[error("{path}: write error: No space left on device")]
    DiskFull { path: PathBuf },
    /// fsync, rename, truncate or another metadata operation failed.
    #[error("{path}: cannot {op}: {}", os_text(.cause))]
    Meta { path: PathBuf, op: &'static str, cause: std::io::Error },
    /// The `--stats-json` file names the output or an input (`what`: "the output file", "an
    /// input file").
    #[error("{path}: --stats-json names {what}")]
    StatsClash { path: PathBuf, what: &'static str },
    /// The `--stats-json` file cannot be opened or written.
    #[error("{path}: cannot write statistics: {}", os_text(.cause))]
    Statistics { path: PathBuf, cause: std::io::Error },
    /// A temp directory is missing, not a directory, or not writable (GNU sort's words).
    #[error("cannot create temporary file in '{}': {reason}", path.display())]
    TempDir { path: PathBuf, reason: String },
    /// Memory for a buffer could not be obtained.
    #[error("cannot allocate {bytes} bytes of buffer memory: {}", os_text(.cause))]
    Alloc { bytes: usize, cause: std::io::Error },
    /// A standard stream to be read or written was closed when the process started (`>&-`).
    #[error("{op} failed: {name}: Bad file descriptor")]
    ClosedStream { op: &'static str, name: &'static str },
    /// A thread the I/O engine needs could not be started (the system's limit on threads or
    /// memory was reached).
    #[error("cannot start a {what} thread: {}", os_text(.cause))]
    Thread { what: &'static str, cause: std::io::Error },
    /// An output to be appended to changed while the sort ran (Nsort's `NSORT_APPEND_CHANGED`):
    /// nothing was appended.
    #[error("{path}: changed while the sort ran ({was} bytes, now {now}): the sorted records were not appended")]
    AppendChanged { path: PathBuf, was: u64, now: u64 },
    /// A worker thread died; this is a bug in xsort.
    #[error("internal error: {0}")]
    Internal(String),
}

impl IoError {
    /// Classifies a failed write: ENOSPC and EDQUOT become [`IoError::DiskFull`].
    pub fn write(path: &Path, cause: std::io::Error) -> Self {
        match cause.raw_os_error() {
            Some(libc::ENOSPC) | Some(libc::EDQUOT) => IoError::DiskFull { path: path.to_owned() },
            _ => IoError::Write { path: path.to_owned(), cause },
        }
    }

    /// A read error on `path`: [`IoError::Corrupt`] when a decoder found the compressed data bad.
    pub fn read(path: &Path, cause: std::io::Error) -> Self {
        let path = path.to_owned();
        if !cause.get_ref().is_some_and(|e| e.is::<crate::codec::Corrupt>()) {
            return IoError::Read { path, cause };
        }
        match cause.into_inner().map(|e| e.downcast::<crate::codec::Corrupt>()) {
            Some(Ok(corrupt)) => IoError::Corrupt { path, corrupt: *corrupt },
            _ => IoError::Internal("a decoder's error lost its details".into()),
        }
    }

    /// A metadata operation `op` failed on `path`.
    pub fn meta(path: &Path, op: &'static str, cause: std::io::Error) -> Self {
        IoError::Meta { path: path.to_owned(), op, cause }
    }
}

/// An OS error's text without Rust's " (os error N)" suffix, as the C tools print it.
pub fn os_text(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error ") {
        Some(i) => s[..i].to_owned(),
        None => s,
    }
}

/// `text` without Rust's " (os error N)" suffixes, wherever they sit in it (an error's text may
/// quote several OS errors).
pub fn without_os_error_numbers(text: &str) -> String {
    const MARK: &str = " (os error ";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(MARK) {
        let after = &rest[i + MARK.len()..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        out.push_str(&rest[..i]);
        if digits > 0 && after[digits..].starts_with(')') {
            rest = &after[digits + 1..];
        } else {
            out.push_str(MARK);
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// The message of a caught panic (its payload, when it is text).
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".to_string())
}

/// Result alias of the I/O engine.
pub type Result<T, E = IoError> = std::result::Result<T, E>;
