//! The sort's destination: a file replaced atomically, or standard output.

use crate::config::{IoSettings, Output};
use crate::error::{Result, SortError};
use std::fs::File;
use std::os::unix::io::FromRawFd;
use std::sync::Arc;
use xsort_io::{AtomicOutput, BlockWriter, IoCounters, Sink, WriterConfig};

/// An opened destination.
pub enum Destination {
    /// A file written beside its target and renamed over it on commit.
    File(AtomicOutput),
    /// Standard output.
    Stdout,
}

impl Destination {
    /// Opens the destination now, so that an unwritable target fails before any work is done.
    pub fn open(output: &Output, io: IoSettings) -> Result<Self> {
        Ok(match output {
            Output::Stdout => Destination::Stdout,
            Output::Path(p) => Destination::File(AtomicOutput::create(p, io.direct)?),
        })
    }

    /// A write-behind pipeline into the destination; `total` (when known) is preallocated.
    pub fn writer(&self, block: usize, buffers: usize, io: IoSettings, total: Option<u64>, preallocate: bool, counters: Arc<IoCounters>) -> Result<BlockWriter> {
        let sink = match self {
            // Devices and FIFOs take plain sequential writes: no positions, padding or truncation.
            Destination::File(o) if !o.is_regular() => Sink::Stream { out: Box::new(o.file().try_clone_file()?), name: o.target().to_owned() },
            Destination::File(o) => {
                if let (true, Some(n)) = (preallocate, total) {
                    o.file().preallocate(n)?;
                }
                Sink::File(o.file().clone())
            }
            Destination::Stdout => {
                // SAFETY: dup returns a new descriptor (checked) that File then owns and closes.
                let fd = unsafe { libc::dup(1) };
                if fd < 0 {
                    return Err(SortError::Io(xsort_io::IoError::write("-".as_ref(), std::io::Error::last_os_error())));
                }
                // SAFETY: fd is a fresh descriptor owned by nobody else.
                let out = Box::new(unsafe { File::from_raw_fd(fd) });
                Sink::Stream { out, name: "-".into() }
            }
        };
        let cfg = WriterConfig { threads: io.count.clamp(1, buffers), ..WriterConfig::new(block, buffers) };
        Ok(BlockWriter::new(sink, cfg, counters)?)
    }

    /// Puts a complete output in place (synced first when asked).
    pub fn commit(self, sync: bool) -> Result<()> {
        match self {
            Destination::File(o) => Ok(o.commit(sync)?),
            Destination::Stdout => Ok(()),
        }
    }
}
