//! Temp runs: sorted record streams stored as extents of one anonymous temp file per directory.
//!
//! One file per directory, not one per run, so that the number of runs (and the merge's fan-in) is
//! never limited by the descriptor limit. Runs go to the directories round robin; a merged run's
//! extent is punched out so the space returns at once.

use crate::config::IoSettings;
use crate::error::Result;
use std::sync::Arc;
use xsort_io::{align_up, AlignedBuf, BlockWriter, DirectFile, IoCounters, Sink, TempSpace, WriterConfig};

/// A sorted run on temp space.
#[derive(Clone, Debug)]
pub struct Run {
    /// The temp file holding it.
    pub file: Arc<DirectFile>,
    /// Offset of its first byte (aligned).
    pub offset: u64,
    /// Length in bytes (whole records).
    pub bytes: u64,
}

/// The temp files of one sort and the extents allocated in them.
pub struct TempStore {
    space: TempSpace,
    files: Vec<Option<(Arc<DirectFile>, u64)>>,
    next: usize,
    io: IoSettings,
    counters: Arc<IoCounters>,
}

impl TempStore {
    /// A store over checked temp directories; files are created on first use.
    pub fn new(space: TempSpace, io: IoSettings, counters: Arc<IoCounters>) -> Self {
        let files = vec![None; space.dirs().len()];
        TempStore { space, files, next: 0, io, counters }
    }

    /// Starts writing a run of `bytes` bytes: reserves an extent and returns a writer positioned on it.
    pub fn create_run(&mut self, bytes: u64, block: usize, buffers: usize) -> Result<(Run, BlockWriter)> {
        let slot = self.next % self.files.len();
        self.next += 1;
        if self.files[slot].is_none() {
            self.files[slot] = Some((self.space.create()?, 0));
        }
        let (file, end) = self.files[slot].as_mut().expect("created above");
        let offset = *end;
        *end += align_up(bytes as usize) as u64;
        let run = Run { file: file.clone(), offset, bytes };
        let cfg = WriterConfig { start_offset: offset, cut_padding: false, threads: self.io.count.clamp(1, buffers), ..WriterConfig::new(block, buffers) };
        let writer = BlockWriter::new(Sink::File(file.clone()), cfg, self.counters.clone())?;
        Ok((run, writer))
    }

    /// Gives a consumed run's space back.
    pub fn release(&self, run: &Run) {
        run.file.punch_hole(run.offset, align_up(run.bytes as usize) as u64);
    }
}

/// Appends records to a [`BlockWriter`] as one byte stream, splitting records across blocks.
pub struct RecordSink<'w> {
    writer: &'w mut BlockWriter,
    buf: Option<AlignedBuf>,
    len: usize,
}

impl<'w> RecordSink<'w> {
    /// A sink over `writer`.
    pub fn new(writer: &'w mut BlockWriter) -> Self {
        RecordSink { writer, buf: None, len: 0 }
    }

    /// Appends one record.
    #[inline]
    pub fn push(&mut self, mut rec: &[u8]) -> Result<()> {
        while !rec.is_empty() {
            let buf = match &mut self.buf {
                Some(b) => b,
                None => {
                    self.len = 0;
                    self.buf.insert(self.writer.buffer()?)
                }
            };
            let n = rec.len().min(buf.capacity() - self.len);
            buf.as_mut_slice()[self.len..self.len + n].copy_from_slice(&rec[..n]);
            self.len += n;
            rec = &rec[n..];
            if self.len == buf.capacity() {
                self.flush()?;
            }
        }
        Ok(())
    }

    /// Submits the partly filled last block.
    pub fn flush(&mut self) -> Result<()> {
        if let Some(b) = self.buf.take() {
            self.writer.submit(b, self.len)?;
        }
        Ok(())
    }
}
