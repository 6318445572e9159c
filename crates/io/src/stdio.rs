//! Standard streams that were closed when the process started.
//!
//! `xsort f >&-` must fail as GNU sort fails ("write failed: standard output: Bad file
//! descriptor", status 2) rather than sort into nothing, and `xsort <&-` must not read an empty
//! input. But Rust's runtime reopens a closed descriptor 0, 1 or 2 on /dev/null before `main` runs,
//! so by then a closed stream looks like /dev/null. [`record_closed_streams`] looks first: a binary
//! registers it in its `.init_array`, which the C runtime runs before Rust's initialisation, and it
//! notes which of the three were closed. Inputs and outputs then ask [`stdin_input`] and
//! [`stdout_output`] before using a standard stream.

use crate::error::{IoError, Result};
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether descriptors 0, 1 and 2 were closed at start.
static CLOSED: [AtomicBool; 3] = [AtomicBool::new(false), AtomicBool::new(false), AtomicBool::new(false)];

/// Notes which standard descriptors are closed. Meant to run from `.init_array`, before Rust's
/// runtime reopens them: only async-signal-safe calls, no allocation, no panic.
pub extern "C" fn record_closed_streams() {
    for (fd, closed) in CLOSED.iter().enumerate() {
        // SAFETY: fcntl(F_GETFD) only queries the descriptor; errno is thread-local and read at once.
        let bad = unsafe { libc::fcntl(fd as libc::c_int, libc::F_GETFD) == -1 && *libc::__errno_location() == libc::EBADF };
        closed.store(bad, Ordering::Relaxed);
    }
}

/// Registers [`record_closed_streams`] to run before Rust's runtime starts. A binary that reads
/// or writes standard streams puts this in its main file (a static of the binary itself, so that
/// the linker cannot leave it out): `xsort_io::record_closed_streams_at_start!();`
#[macro_export]
macro_rules! record_closed_streams_at_start {
    () => {
        #[used]
        #[link_section = ".init_array"]
        static RECORD_CLOSED_STREAMS: extern "C" fn() = $crate::stdio::record_closed_streams;
    };
}

/// Whether descriptor `fd` (0, 1 or 2) was closed when the process started.
pub fn closed_at_start(fd: usize) -> bool {
    CLOSED.get(fd).is_some_and(|c| c.load(Ordering::Relaxed))
}

/// Checks that standard input may be read: an error, in GNU's words, when it was closed.
pub fn stdin_input() -> Result<()> {
    if closed_at_start(0) {
        return Err(IoError::ClosedStream { op: "read", name: "-" });
    }
    Ok(())
}

/// Checks that standard output may be written: an error, in GNU's words, when it was closed.
pub fn stdout_output() -> Result<()> {
    if closed_at_start(1) {
        return Err(IoError::ClosedStream { op: "write", name: "standard output" });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closed_stream_errors_read_as_gnu_says_them() {
        let e = IoError::ClosedStream { op: "write", name: "standard output" };
        assert_eq!(e.to_string(), "write failed: standard output: Bad file descriptor");
    }
}
