//! Write-behind: a pool of aligned buffers and writer threads, so that filling buffer k (gathering
//! records) overlaps writing buffer k-1.
//!
//! The producer takes a free buffer with [`BlockWriter::buffer`], fills it, and hands it back with
//! [`BlockWriter::submit`]; blocks land at consecutive offsets. Files get several writers with
//! positional writes (several requests in flight); streams get one writer, in order. The final block
//! of a direct file may be unaligned: it is written padded and the file is cut to size in
//! [`BlockWriter::finish`].

use crate::buffer::{align_up, AlignedBuf};
use crate::error::{IoError, Result};
use crate::file::DirectFile;
use crate::stats::IoCounters;
use crossbeam_channel::{bounded, Receiver, Sender};
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

/// Where written blocks go.
pub enum Sink {
    /// A file written with positional writes (direct when it can be).
    File(Arc<DirectFile>),
    /// A stream (pipe, terminal, standard output), written in order.
    Stream { out: Box<dyn Write + Send>, name: PathBuf },
    /// A stream written through a compressor, which [`BlockWriter::finish`] ends.
    Compressed { out: crate::codec::Encoder, name: PathBuf },
}

/// Sizing of a [`BlockWriter`].
#[derive(Clone, Copy, Debug)]
pub struct WriterConfig {
    /// Bytes per buffer (one transfer).
    pub block_size: usize,
    /// Buffers in the pool (how many blocks can be in flight or being filled).
    pub buffers: usize,
    /// Writer threads for file sinks.
    pub threads: usize,
    /// File offset of the first block (temp runs are extents of a shared file).
    pub start_offset: u64,
    /// Cut a padded final block off the file in [`BlockWriter::finish`]. Off for extents, whose
    /// padding stays inside the extent.
    pub cut_padding: bool,
}

impl WriterConfig {
    /// A writer of `buffers` blocks of `block_size` bytes, with as many threads, from offset 0,
    /// cutting padding.
    pub fn new(block_size: usize, buffers: usize) -> Self {
        WriterConfig { block_size, buffers, threads: buffers, start_offset: 0, cut_padding: true }
    }
}

struct Job {
    buf: AlignedBuf,
    len: usize,
    offset: u64,
}

/// Aligned buffers kept for reuse by the writers of one sort. A buffer's first touch costs a page
/// fault per 4 KiB (seconds per GiB on some VMs), and a sort that spills starts a writer per run:
/// each takes the buffers the last one gave back instead of fresh ones. Buffers reserved ahead can
/// be faulted in while the input is read ([`BufferPool::reserve`]).
#[derive(Default)]
pub struct BufferPool {
    kept: Mutex<Vec<AlignedBuf>>,
}

impl BufferPool {
    /// A kept buffer of at least `size` bytes, or a new one.
    pub fn take(&self, size: usize) -> Result<AlignedBuf> {
        let mut kept = self.kept.lock().map_err(|_| IoError::Internal("buffer pool poisoned".into()))?;
        match kept.iter().position(|b| b.capacity() >= size) {
            Some(i) => Ok(kept.swap_remove(i)),
            None => {
                drop(kept);
                AlignedBuf::new(size)
            }
        }
    }

    /// Keeps `buf` for a later [`Self::take`].
    pub fn give(&self, buf: AlignedBuf) {
        if let Ok(mut kept) = self.kept.lock() {
            kept.push(buf);
        }
    }

    /// Allocates buffers until `count` of at least `size` bytes are kept, and calls `with` on all the
    /// kept buffers (to fault them in ahead; see [`crate::Prefault`]).
    pub fn reserve<R>(&self, count: usize, size: usize, with: impl FnOnce(&[AlignedBuf]) -> R) -> Result<R> {
        let mut kept = self.kept.lock().map_err(|_| IoError::Internal("buffer pool poisoned".into()))?;
        while kept.iter().filter(|b| b.capacity() >= size).count() < count {
            kept.push(AlignedBuf::new(size)?);
        }
        Ok(with(&kept))
    }
}

/// A write-behind pipeline; see the module doc.
pub struct BlockWriter {
    free: Receiver<AlignedBuf>,
    jobs: Option<Sender<Job>>,
    workers: Vec<JoinHandle<()>>,
    failure: Arc<Mutex<Option<IoError>>>,
    file: Option<Arc<DirectFile>>,
    next_offset: u64,
    padded: bool,
    cfg: WriterConfig,
    /// Where the buffers go back once the writes are done.
    pool: Option<Arc<BufferPool>>,
}

/// Starts a writer thread. On an error, the writers already started end once the pool's job
/// channel is dropped with the half-built writer.
fn spawn_writer(work: impl FnOnce() + Send + 'static) -> Result<JoinHandle<()>> {
    std::thread::Builder::new().name("xsort-write".into()).spawn(work).map_err(|cause| IoError::Thread { what: "writer", cause })
}

impl BlockWriter {
    /// Allocates the buffers and starts the writers.
    pub fn new(sink: Sink, cfg: WriterConfig, counters: Arc<IoCounters>) -> Result<Self> {
        Self::start(sink, cfg, None, counters)
    }

    /// [`Self::new`] with buffers taken from `pool`, and given back to it when the writer is done.
    pub fn pooled(sink: Sink, cfg: WriterConfig, pool: Arc<BufferPool>, counters: Arc<IoCounters>) -> Result<Self> {
        Self::start(sink, cfg, Some(pool), counters)
    }

    fn start(sink: Sink, cfg: WriterConfig, pool: Option<Arc<BufferPool>>, counters: Arc<IoCounters>) -> Result<Self> {
        let buffers = cfg.buffers.max(2);
        let (free_tx, free) = bounded(buffers);
        for _ in 0..buffers {
            let buf = match &pool {
                Some(p) => p.take(cfg.block_size)?,
                None => AlignedBuf::new(cfg.block_size)?,
            };
            free_tx.send(buf).map_err(|_| IoError::Internal("buffer pool".into()))?;
        }
        let (job_tx, job_rx) = bounded::<Job>(buffers);
        let failure = Arc::new(Mutex::new(None));
        let mut workers = Vec::new();
        let file = match sink {
            Sink::File(f) => {
                for _ in 0..cfg.threads.max(1) {
                    let (f, rx, free_tx, failure, c) = (f.clone(), job_rx.clone(), free_tx.clone(), failure.clone(), counters.clone());
                    workers.push(spawn_writer(move || file_worker(&f, rx, free_tx, &failure, &c))?);
                }
                Some(f)
            }
            Sink::Stream { out, name } => {
                let (failure, c) = (failure.clone(), counters.clone());
                let end = |mut out: Box<dyn Write + Send>| out.flush();
                workers.push(spawn_writer(move || stream_worker(out, end, name, job_rx, free_tx, &failure, &c))?);
                None
            }
            Sink::Compressed { out, name } => {
                let (failure, c) = (failure.clone(), counters.clone());
                let end = crate::codec::Encoder::finish;
                workers.push(spawn_writer(move || stream_worker(out, end, name, job_rx, free_tx, &failure, &c))?);
                None
            }
        };
        Ok(BlockWriter { free, jobs: Some(job_tx), workers, failure, file, next_offset: 0, padded: false, cfg, pool })
    }

    /// The capacity every buffer from [`Self::buffer`] has at least.
    pub fn block_size(&self) -> usize {
        self.cfg.block_size
    }

    /// Bytes submitted so far.
    pub fn position(&self) -> u64 {
        self.next_offset
    }

    /// Waits for a free buffer. Fails if an earlier write failed.
    pub fn buffer(&mut self) -> Result<AlignedBuf> {
        self.check()?;
        let buf = self.free.recv().map_err(|_| self.take_failure())?;
        self.check()?;
        Ok(buf)
    }

    /// Queues the first `len` bytes of `buf` to be written after the previous block.
    pub fn submit(&mut self, buf: AlignedBuf, len: usize) -> Result<()> {
        if self.padded {
            return Err(IoError::Internal("block submitted after an unaligned final block".into()));
        }
        if !len.is_multiple_of(crate::buffer::IO_ALIGN) && self.file.is_some() {
            self.padded = true;
        }
        let offset = self.cfg.start_offset + self.next_offset;
        self.next_offset += len as u64;
        let jobs = self.jobs.as_ref().ok_or_else(|| IoError::Internal("writer finished".into()))?;
        jobs.send(Job { buf, len, offset }).map_err(|_| self.take_failure())
    }

    /// Waits for every write, cuts a padded file to its true size, and reports the first error.
    /// Returns the number of bytes written.
    pub fn finish(mut self) -> Result<u64> {
        self.jobs = None;
        for w in self.workers.drain(..) {
            w.join().map_err(|_| IoError::Internal("writer thread panicked".into()))?;
        }
        self.check()?;
        if let (true, true, Some(f)) = (self.padded, self.cfg.cut_padding, &self.file) {
            f.set_len(self.cfg.start_offset + self.next_offset)?;
        }
        Ok(self.next_offset)
    }

    fn check(&self) -> Result<()> {
        match self.failure.lock().map(|mut g| g.take()) {
            Ok(Some(e)) => Err(e),
            Ok(None) => Ok(()),
            Err(_) => Err(IoError::Internal("writer state poisoned".into())),
        }
    }

    fn take_failure(&self) -> IoError {
        self.check().err().unwrap_or_else(|| IoError::Internal("writer stopped".into()))
    }
}

impl Drop for BlockWriter {
    fn drop(&mut self) {
        // Closing the job channel lets the workers drain and exit; join so no thread outlives us.
        self.jobs = None;
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
        // Every buffer not held by the caller is free now.
        if let Some(pool) = &self.pool {
            while let Ok(buf) = self.free.try_recv() {
                pool.give(buf);
            }
        }
    }
}

fn set_failure(failure: &Mutex<Option<IoError>>, e: IoError) {
    if let Ok(mut g) = failure.lock() {
        g.get_or_insert(e);
    }
}

fn has_failed(failure: &Mutex<Option<IoError>>) -> bool {
    failure.lock().map(|g| g.is_some()).unwrap_or(true)
}

fn file_worker(f: &DirectFile, rx: Receiver<Job>, free: Sender<AlignedBuf>, failure: &Mutex<Option<IoError>>, c: &IoCounters) {
    for job in rx {
        if !has_failed(failure) {
            // Pad the final block to the alignment; finish() truncates the padding away.
            let n = if f.is_direct() { align_up(job.len).min(job.buf.capacity()) } else { job.len };
            let start = Instant::now();
            match f.write_all_at(&job.buf.as_slice()[..n], job.offset) {
                Ok(()) => c.record(job.len as u64, start, f.is_direct()),
                Err(e) => set_failure(failure, e),
            }
        }
        let _ = free.send(job.buf);
    }
}

/// Writes the blocks in order to `out`, and ends it with `end` (a flush, or a compressor's finish)
/// when every write succeeded.
fn stream_worker<W: Write>(
    mut out: W,
    end: impl FnOnce(W) -> std::io::Result<()>,
    name: PathBuf,
    rx: Receiver<Job>,
    free: Sender<AlignedBuf>,
    failure: &Mutex<Option<IoError>>,
    c: &IoCounters,
) {
    for job in rx {
        if !has_failed(failure) {
            let start = Instant::now();
            match out.write_all(&job.buf.as_slice()[..job.len]) {
                Ok(()) => c.record(job.len as u64, start, false),
                Err(e) => set_failure(failure, IoError::write(&name, e)),
            }
        }
        let _ = free.send(job.buf);
    }
    if !has_failed(failure) {
        if let Err(e) = end(out) {
            set_failure(failure, IoError::write(&name, e));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::file::Access;

    /// A second writer from the same pool writes from the first one's buffers (the same memory,
    /// already faulted in), and a writer dropped without finishing gives its buffers back too.
    #[test]
    fn pooled_writers_reuse_the_buffers_given_back() {
        let dir = tempfile::tempdir().unwrap();
        let pool = Arc::new(BufferPool::default());
        let addresses = pool.reserve(3, 8192, |kept| kept.iter().map(|b| b.as_slice().as_ptr() as usize).collect::<Vec<_>>()).unwrap();
        for (i, finish) in [(0, true), (1, false), (2, true)] {
            let f = Arc::new(DirectFile::open(&dir.path().join(format!("out{i}")), Access::CreateNew, false).unwrap());
            let mut w = BlockWriter::pooled(Sink::File(f), WriterConfig::new(8192, 3), pool.clone(), Arc::default()).unwrap();
            let mut buf = w.buffer().unwrap();
            assert!(addresses.contains(&(buf.as_slice().as_ptr() as usize)));
            buf.as_mut_slice()[..5].copy_from_slice(b"block");
            w.submit(buf, 5).unwrap();
            if finish {
                assert_eq!(w.finish().unwrap(), 5);
            } else {
                drop(w); // the queued block is still written
            }
            assert_eq!(std::fs::read(dir.path().join(format!("out{i}"))).unwrap(), b"block");
        }
        let kept = pool.reserve(0, 8192, |kept| kept.iter().map(|b| b.as_slice().as_ptr() as usize).collect::<Vec<_>>()).unwrap();
        assert_eq!(kept.len(), 3);
        assert!(kept.iter().all(|a| addresses.contains(a)));
    }

    #[test]
    fn blocks_land_in_order_and_tail_is_cut() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out");
        let f = Arc::new(DirectFile::open(&p, Access::CreateNew, true).unwrap());
        let cfg = WriterConfig { threads: 2, ..WriterConfig::new(8192, 3) };
        let mut w = BlockWriter::new(Sink::File(f), cfg, Arc::default()).unwrap();
        let mut expect = Vec::new();
        for k in 0..10u8 {
            let mut b = w.buffer().unwrap();
            let len = if k == 9 { 1000 } else { 8192 };
            b.as_mut_slice()[..len].fill(k);
            expect.extend(std::iter::repeat_n(k, len));
            w.submit(b, len).unwrap();
        }
        assert_eq!(w.finish().unwrap(), expect.len() as u64);
        assert_eq!(std::fs::read(&p).unwrap(), expect);
    }
}
