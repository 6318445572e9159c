//! The core's error type: bad input and configuration (the user's to fix), resources (disk, memory)
//! and internal bugs, so the CLI can choose exit codes in one place.

use std::path::PathBuf;

/// Errors of the sorter. A front end chooses its exit status or exception from the variant.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SortError {
    /// An input file is malformed (for example its length is not a multiple of the record size).
    /// `offset` is the byte of the input where the problem starts, when one place is to blame
    /// (where a partial last record starts); the message names the file and the problem.
    #[error("{}", bad_input_text(path, problem))]
    BadInput { path: PathBuf, offset: Option<u64>, problem: String },
    /// A record of an input to Nsort's `-merge` that orders before the record ahead of it: the
    /// inputs of a merge must each be sorted by the keys (Nsort's `NSORT_MERGE_MISORDERED`).
    /// `record` counts from 1; `offset` is the record's first byte in the input.
    #[error("{}: record {record} (at byte {offset}) is out of order: -merge needs each input sorted by the keys", path.display())]
    MergeMisordered { path: PathBuf, record: u64, offset: u64 },
    /// An option or setting that cannot work, worded as GNU sort or Nsort word it (a key beyond
    /// the record, a zero record size, incompatible ordering options, an unreadable
    /// `--random-source`...).
    #[error("{0}")]
    BadOption(String),
    /// A choice that is not one of an option's values (GNU's `--sort=WORD`), as GNU words it.
    #[error("invalid argument '{value}' for '{option}'")]
    InvalidArgument { option: String, value: String },
    /// Records too large for the memory budget: `floor` is the smallest budget that sorts them
    /// (None: no budget does).
    #[error("{}", crate::plan::record_too_large(&format!("records of {record_size} bytes"), *floor, *budget))]
    RecordTooLarge { record_size: usize, floor: Option<u64>, budget: u64 },
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
    /// A comparison function the program declared (Nsort's `compare=NAME`) failed, as through
    /// Nsort's `nsort_raise_error`: the sort stopped and left no output.
    #[error("{0}")]
    Comparison(String),
    /// An external program (the compress program) could not run or failed.
    #[error("{0}")]
    Program(String),
    /// An I/O failure, already naming its file. (Corrupt compressed input is
    /// [`SortError::BadInput`].)
    #[error(transparent)]
    Io(xsort_io::IoError),
    /// The caller cancelled the sort (see `Sort::cancel_flag`, `Sorting::cancel_handle`): it
    /// stopped, removed its temp files and left no output file.
    #[error("the sort was cancelled")]
    Cancelled,
    /// A bug in xsort.
    #[error("internal error: {0}")]
    Internal(String),
}

impl SortError {
    /// The message of [`SortError::RecordTooLarge`] with the records named `what` (as "records of
    /// --record-size=N") rather than by their size; None for other errors.
    pub fn records_named(&self, what: &str) -> Option<String> {
        match self {
            SortError::RecordTooLarge { floor, budget, .. } => Some(crate::plan::record_too_large(what, *floor, *budget)),
            _ => None,
        }
    }
}

impl From<xsort_io::IoError> for SortError {
    fn from(e: xsort_io::IoError) -> Self {
        match e {
            xsort_io::IoError::Corrupt { path, corrupt } => {
                SortError::BadInput { path, offset: Some(corrupt.offset), problem: corrupt.to_string() }
            }
            other => SortError::Io(other),
        }
    }
}

/// Result alias of the core.
pub type Result<T, E = SortError> = std::result::Result<T, E>;

/// The start of [`SortError::BadInput`]'s problem for an input that cannot be opened.
pub(crate) const UNREADABLE: &str = "cannot read: ";

/// [`SortError::BadInput`]'s message: "FILE: PROBLEM", or as GNU sort words an input it cannot
/// open, "cannot read: FILE: REASON".
fn bad_input_text(path: &std::path::Path, problem: &str) -> String {
    match problem.strip_prefix(UNREADABLE) {
        Some(reason) => format!("{UNREADABLE}{}: {reason}", path.display()),
        None => format!("{}: {problem}", path.display()),
    }
}
