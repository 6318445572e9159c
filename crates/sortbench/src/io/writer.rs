//! Writing a stream of blocks, produced in file order, with transfers in flight.
//!
//! The calling thread fills block k (usually in parallel on a rayon pool)
//! while I/O threads write blocks k-1, k-2, ...: buffers circulate between the
//! producer and the writers through two channels, so memory stays at
//! `inflight + 1` blocks however large the file.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Mutex;
use std::thread;

use super::{kind_of, round_up, AlignedBuf, IoConfig, Kind, DIRECT_ALIGN};
use crate::error::{Error, Result};

/// An output file opened (created, truncated) for block writing.
pub(crate) struct Output {
    path: PathBuf,
    file: File,
    kind: Kind,
    /// Whether the descriptor currently has O_DIRECT; cleared for good the
    /// first time the kernel refuses a direct transfer.
    direct: AtomicBool,
}

/// A filled block on its way to a writer.
struct Job {
    offset: u64,
    len: usize,
    buf: AlignedBuf,
}

impl Output {
    /// Creates or truncates `path`, like C's `fopen(path, "w")`, then turns on
    /// O_DIRECT for regular files when `cfg.direct` asks and the file system
    /// accepts it.
    pub(crate) fn create(path: &Path, cfg: &IoConfig) -> Result<Output> {
        let open_err = |source| Error::Open { path: path.to_path_buf(), source };
        let file = OpenOptions::new().write(true).create(true).truncate(true).open(path).map_err(open_err)?;
        let meta = file.metadata().map_err(open_err)?;
        let kind = kind_of(path, &meta);
        // Setting the flag after a plain open (rather than opening with it)
        // keeps open errors identical to the reference's, and a refusal
        // (EINVAL on file systems without direct I/O) simply leaves it off.
        let direct = kind == Kind::Regular && cfg.direct && set_direct(&file, true).is_ok();
        Ok(Output { path: path.to_path_buf(), file, kind, direct: AtomicBool::new(direct) })
    }

    /// What the output is.
    pub(crate) fn kind(&self) -> Kind {
        self.kind
    }

    /// Whether transfers currently bypass the page cache.
    #[cfg(test)]
    pub(crate) fn is_direct(&self) -> bool {
        self.direct.load(Ordering::Relaxed)
    }

    fn write_err(&self, source: io::Error) -> Error {
        Error::Write { path: self.path.clone(), source }
    }

    /// Writes `buf[..len]` at `offset` (or next, for streams).
    fn write_block(&self, buf: &mut AlignedBuf, len: usize, offset: u64) -> Result<()> {
        if self.kind == Kind::Stream {
            return (&self.file).write_all(&buf[..len]).map_err(|e| self.write_err(e));
        }
        if self.direct.load(Ordering::Relaxed) {
            // A direct transfer must be a whole number of pages: pad the tail
            // with zeros; `finish` truncates the file to its true length.
            let padded = round_up(len, DIRECT_ALIGN);
            buf[len..padded].fill(0);
            match self.file.write_all_at(&buf[..padded], offset) {
                Ok(()) => return Ok(()),
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                    // Refused (file system or alignment): go buffered from now
                    // on and rewrite this block whole, which is idempotent.
                    self.direct.store(false, Ordering::Relaxed);
                    let _ = set_direct(&self.file, false);
                }
                Err(e) => return Err(self.write_err(e)),
            }
        }
        self.file.write_all_at(&buf[..len], offset).map_err(|e| self.write_err(e))
    }

    /// Sets a regular file's final length (dropping direct-I/O padding).
    fn finish(&self, total: u64) -> Result<()> {
        if self.kind == Kind::Regular {
            self.file.set_len(total).map_err(|e| self.write_err(e))?;
        }
        Ok(())
    }
}

/// Turns O_DIRECT on or off for an open descriptor.
fn set_direct(file: &File, on: bool) -> io::Result<()> {
    let fd = file.as_raw_fd();
    // SAFETY: F_GETFL on a descriptor we own; no memory is passed.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    let wanted = if on { flags | libc::O_DIRECT } else { flags & !libc::O_DIRECT };
    // SAFETY: F_SETFL with an integer flag set on a descriptor we own.
    if unsafe { libc::fcntl(fd, libc::F_SETFL, wanted) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Writes `total` bytes to `out`. `fill(offset, block)` must fill `block`,
/// the bytes at `offset`; it is called in file order on the calling thread,
/// overlapped with the writing of earlier blocks. Nothing is written to the
/// null device (but `fill` still runs, e.g. for a checksum).
pub(crate) fn write_blocks<F>(out: &Output, total: u64, cfg: &IoConfig, mut fill: F) -> Result<()>
where
    F: FnMut(u64, &mut [u8]) -> Result<()>,
{
    let block = cfg.block_len() as u64;
    if total == 0 {
        return out.finish(0);
    }
    let buf_len = block.min(round_up_u64(total, DIRECT_ALIGN as u64)) as usize;
    if out.kind == Kind::Null {
        let mut buf = AlignedBuf::new(buf_len)?;
        let mut offset = 0;
        while offset < total {
            let len = block.min(total - offset) as usize;
            fill(offset, &mut buf[..len])?;
            offset += len as u64;
        }
        return Ok(());
    }
    let writers = if out.kind == Kind::Regular { cfg.inflight_len() } else { 1 };
    let blocks = total.div_ceil(block);
    let buffers = (writers as u64 + 1).min(blocks) as usize;
    let failed = AtomicBool::new(false);
    // Channels outlive the scope so the I/O threads may borrow them.
    let (job_tx, job_rx) = mpsc::sync_channel::<Job>(buffers);
    let job_rx = Mutex::new(job_rx);
    let (free_tx, free_rx) = mpsc::channel::<AlignedBuf>();
    for _ in 0..buffers {
        // The receiver is alive: sending cannot fail here.
        let _ = free_tx.send(AlignedBuf::new(buf_len)?);
    }
    thread::scope(|scope| -> Result<()> {
        let handles: Vec<_> = (0..writers)
            .map(|_| {
                let free_tx = free_tx.clone();
                let (job_rx, failed) = (&job_rx, &failed);
                scope.spawn(move || writer_loop(out, job_rx, free_tx, failed))
            })
            .collect();
        drop(free_tx);
        let produced = produce(total, block, &free_rx, &job_tx, &failed, &mut fill);
        drop(job_tx);
        let mut result = produced;
        for handle in handles {
            let written = handle.join().unwrap_or_else(|_| Err(Error::Internal("writer thread panicked".into())));
            if result.is_ok() {
                result = written;
            }
        }
        result
    })?;
    out.finish(total)
}

fn round_up_u64(n: u64, to: u64) -> u64 {
    n.div_ceil(to) * to
}

/// The producer side: fill free buffers in order and queue them for writing.
fn produce<F>(
    total: u64,
    block: u64,
    free_rx: &Receiver<AlignedBuf>,
    job_tx: &mpsc::SyncSender<Job>,
    failed: &AtomicBool,
    fill: &mut F,
) -> Result<()>
where
    F: FnMut(u64, &mut [u8]) -> Result<()>,
{
    let mut offset = 0;
    while offset < total && !failed.load(Ordering::Relaxed) {
        // Both channels close only when every writer has stopped, which they
        // do early only on an error that they report themselves.
        let Ok(mut buf) = free_rx.recv() else { break };
        let len = block.min(total - offset) as usize;
        fill(offset, &mut buf[..len])?;
        if job_tx.send(Job { offset, len, buf }).is_err() {
            break;
        }
        offset += len as u64;
    }
    Ok(())
}

/// One I/O thread: write queued blocks until the queue closes or one fails.
fn writer_loop(out: &Output, jobs: &Mutex<Receiver<Job>>, free: Sender<AlignedBuf>, failed: &AtomicBool) -> Result<()> {
    loop {
        let next = match jobs.lock() {
            Ok(rx) => rx.recv(),
            Err(_) => return Err(Error::Internal("writer queue lock poisoned".into())),
        };
        let Ok(mut job) = next else { return Ok(()) };
        if let Err(e) = out.write_block(&mut job.buf, job.len, job.offset) {
            failed.store(true, Ordering::Relaxed);
            return Err(e);
        }
        // The producer may already have finished; a closed channel is fine.
        let _ = free.send(job.buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(offset: u64, block: &mut [u8]) {
        for (j, b) in block.iter_mut().enumerate() {
            *b = ((offset + j as u64) % 251) as u8;
        }
    }

    #[test]
    fn blocks_land_in_order_with_exact_length() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cfg = IoConfig { block_bytes: 1, inflight: 3, direct: true };
        for total in [0u64, 100, 4096, 102_400, 102_500, 5 * 102_400 + 4200] {
            let path = dir.path().join(format!("out{total}"));
            let out = Output::create(&path, &cfg).expect("create");
            write_blocks(&out, total, &cfg, |off, b| {
                pattern(off, b);
                Ok(())
            })
            .expect("write");
            let data = std::fs::read(&path).expect("read back");
            let mut expect = vec![0u8; total as usize];
            pattern(0, &mut expect);
            assert_eq!(data, expect, "total {total}");
        }
    }

    #[test]
    fn buffered_mode_and_truncation_of_old_content() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("old");
        std::fs::write(&path, vec![9u8; 500_000]).expect("seed");
        let cfg = IoConfig { block_bytes: 1, inflight: 1, direct: false };
        let out = Output::create(&path, &cfg).expect("create");
        assert!(!out.is_direct());
        write_blocks(&out, 1000, &cfg, |off, b| {
            pattern(off, b);
            Ok(())
        })
        .expect("write");
        assert_eq!(std::fs::metadata(&path).expect("meta").len(), 1000);
    }

    #[test]
    fn fill_errors_stop_the_pipeline() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cfg = IoConfig { block_bytes: 1, inflight: 2, direct: true };
        let out = Output::create(&dir.path().join("e"), &cfg).expect("create");
        let res =
            write_blocks(&out, 10 * 102_400, &cfg, |off, _| if off >= 3 * 102_400 { Err(Error::Internal("stop".into())) } else { Ok(()) });
        assert!(matches!(res, Err(Error::Internal(_))));
    }

    #[test]
    fn refused_direct_write_falls_back_to_buffered() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("fallback");
        let cfg = IoConfig { block_bytes: 1, inflight: 1, direct: true };
        let out = Output::create(&path, &cfg).expect("create");
        if !out.is_direct() {
            return; // this file system has no direct I/O at all: nothing to refuse
        }
        // An unaligned offset makes the kernel refuse the direct transfer
        // with EINVAL, as file systems without direct I/O do.
        let mut buf = AlignedBuf::new(4096).expect("buffer");
        pattern(100, &mut buf[..300]);
        out.write_block(&mut buf, 300, 100).expect("buffered retry");
        // tmpfs emulates direct I/O without alignment rules, so it accepts
        // the transfer; block-device file systems (ext4, xfs) refuse it.
        let mut fs = std::mem::MaybeUninit::<libc::statfs>::zeroed();
        // SAFETY: fstatfs fills the statfs struct we pass for our own descriptor.
        let on_tmpfs = unsafe { libc::fstatfs(out.file.as_raw_fd(), fs.as_mut_ptr()) } == 0
            // SAFETY: fstatfs returned 0, so it initialised the struct.
            && unsafe { fs.assume_init() }.f_type == libc::TMPFS_MAGIC;
        assert!(on_tmpfs || !out.is_direct());
        out.finish(400).expect("finish");
        let data = std::fs::read(&path).expect("read back");
        let mut expect = vec![0u8; 300];
        pattern(100, &mut expect);
        assert_eq!(&data[100..], &expect[..]);
    }

    #[test]
    fn null_device_is_recognised() {
        let cfg = IoConfig::default();
        let out = Output::create(Path::new("/dev/null"), &cfg).expect("open null");
        assert_eq!(out.kind(), Kind::Null);
        let mut calls = 0;
        write_blocks(&out, 3 * cfg.block_len() as u64 + 100, &cfg, |_, _| {
            calls += 1;
            Ok(())
        })
        .expect("null write");
        assert_eq!(calls, 4);
    }
}
