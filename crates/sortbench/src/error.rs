//! The library's one error type.
//!
//! Variants are grouped as the workspace asks: bad input (the reference's
//! messages, word for word, since scripts grep for them), resources (I/O on a
//! named file, sizes that cannot be represented) and internal faults. Display
//! strings are what the binaries print on stderr.

use std::io;
use std::path::PathBuf;

/// Everything that can go wrong in generation or validation.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be opened; prints like C's `perror(name)`.
    #[error("{}: {}", .path.display(), os_text(.source))]
    Open {
        /// The name as given.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// Reading failed after the open.
    #[error("{}: read error: {}", .path.display(), os_text(.source))]
    Read {
        /// The name as given.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// Writing (or truncating, or syncing) failed after the open.
    #[error("{}: write error: {}", .path.display(), os_text(.source))]
    Write {
        /// The name as given.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// The input holds no record (or, with `-s`, no summary).
    #[error("there must be at least one record to be validated")]
    Empty,
    /// The input's length is not a multiple of 100 bytes.
    #[error("partial record found at end")]
    PartialRecord,
    /// A summary file's length is not a multiple of 280 bytes.
    #[error("partial partition summary found at end")]
    PartialSummary,
    /// A requested output is larger than a file offset can express.
    #[error("{count} records of 100 bytes do not fit in one file")]
    TooLarge {
        /// Records asked for.
        count: u128,
    },
    /// A worker thread or pool failed; a bug, not a user error.
    #[error("internal error: {0}")]
    Internal(String),
}

/// Shorthand for results of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The C library's text for an OS error (what `perror` prints), without the
/// " (os error N)" that Rust's `Display` appends.
pub fn os_text(err: &io::Error) -> String {
    let text = err.to_string();
    match err.raw_os_error() {
        Some(code) => match text.strip_suffix(&format!(" (os error {code})")) {
            Some(bare) => bare.to_string(),
            None => text,
        },
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_error_prints_like_perror() {
        let err = Error::Open { path: PathBuf::from("nosuch"), source: io::Error::from_raw_os_error(libc::ENOENT) };
        assert_eq!(err.to_string(), "nosuch: No such file or directory");
    }

    #[test]
    fn reference_messages_are_verbatim() {
        assert_eq!(Error::Empty.to_string(), "there must be at least one record to be validated");
        assert_eq!(Error::PartialRecord.to_string(), "partial record found at end");
        assert_eq!(Error::PartialSummary.to_string(), "partial partition summary found at end");
    }
}
