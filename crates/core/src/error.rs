//! The core's error type: bad input and configuration (the user's to fix), resources (disk, memory)
//! and internal bugs, so the CLI can choose exit codes in one place.

use std::path::PathBuf;

/// Errors of the sorter.
#[derive(Debug, thiserror::Error)]
pub enum SortError {
    /// An input file is malformed (for example its length is not a multiple of the record size).
    #[error("{path}: {problem}")]
    BadInput { path: PathBuf, problem: String },
    /// The configuration cannot work (a key beyond the record, a zero record size...).
    #[error("{0}")]
    Config(String),
    /// Nsort statements that do not parse.
    #[error("{0}")]
    Spec(#[from] crate::spec::SpecError),
    /// The library was called out of order or with a bad argument (pushing after the input ended,
    /// pulling into a buffer smaller than a record...).
    #[error("{0}")]
    Usage(String),
    /// The system refused a resource the sort needs (threads, memory).
    #[error("{0}")]
    Resource(String),
    /// An external program (the compress program) could not run or failed.
    #[error("{0}")]
    Program(String),
    /// An I/O failure, already naming its file.
    #[error(transparent)]
    Io(#[from] xsort_io::IoError),
    /// The caller cancelled the sort (see `Sort::cancel_flag`, `Sorting::cancel_handle`): it
    /// stopped, removed its temp files and left no output file.
    #[error("the sort was cancelled")]
    Cancelled,
    /// A bug in xsort.
    #[error("internal error: {0}")]
    Internal(String),
}

impl SortError {
    /// Whether the user's input or options caused the error (as opposed to the system or a bug).
    pub fn is_user_error(&self) -> bool {
        matches!(self, SortError::BadInput { .. } | SortError::Config(_) | SortError::Spec(_) | SortError::Usage(_))
    }
}

/// Result alias of the core.
pub type Result<T, E = SortError> = std::result::Result<T, E>;
