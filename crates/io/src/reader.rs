//! Read-ahead: filling a large region from a file with several transfers in flight while the caller
//! consumes the part already filled, and a small service that prefetches blocks of temp runs.

use crate::buffer::{AlignedBuf, IO_ALIGN};
use crate::error::{IoError, Result};
use crate::file::DirectFile;
use crate::stats::IoCounters;
use crossbeam_channel::{bounded, unbounded, Receiver, Sender};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

/// How a region is read.
#[derive(Clone, Copy, Debug)]
pub struct ReadConfig {
    /// Bytes per transfer (a multiple of [`IO_ALIGN`]).
    pub transfer_size: usize,
    /// Transfers in flight (reader threads).
    pub in_flight: usize,
}

/// Fills `buf[start..]` from `file` starting at `file_offset` (`start`, `file_offset` and the buffer's
/// address aligned) with up to `cfg.in_flight` concurrent transfers, stopping at end of file. Each
/// time the filled part grows, `on_filled` is called on the calling thread with `buf[..start + filled]`
/// (what lies before `start` was filled earlier), so the caller can work on it while later blocks are
/// still being read. Returns the number of bytes read.
pub fn read_region(
    file: &DirectFile,
    file_offset: u64,
    buf: &mut [u8],
    start: usize,
    cfg: ReadConfig,
    counters: &IoCounters,
    mut on_filled: impl FnMut(&[u8]),
) -> Result<usize> {
    let block = cfg.transfer_size.max(IO_ALIGN);
    let Some(len) = buf.len().checked_sub(start) else {
        return Err(IoError::Internal("read_region: start beyond buffer".into()));
    };
    let nblocks = len.div_ceil(block);
    if nblocks == 0 {
        return Ok(0);
    }
    let origin = SendPtr(buf.as_mut_ptr());
    // SAFETY: start <= buf.len(), checked above.
    let base = SendPtr(unsafe { buf.as_mut_ptr().add(start) });
    let next = AtomicUsize::new(0);
    let (done_tx, done_rx) = unbounded::<Result<(usize, usize)>>();
    std::thread::scope(|s| {
        for started in 0..cfg.in_flight.clamp(1, nblocks) {
            let (next, done_tx) = (&next, done_tx.clone());
            // Fewer readers than asked for still read everything; none is an error.
            let reader = std::thread::Builder::new().name("xsort-read".into()).spawn_scoped(s, move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= nblocks {
                    break;
                }
                let start = i * block;
                let n = block.min(len - start);
                // SAFETY: every block index is claimed by exactly one thread (fetch_add), blocks are
                // disjoint ranges inside dst, and the consumer only views the prefix below the
                // watermark, which never includes an unfinished block.
                let part = unsafe { std::slice::from_raw_parts_mut(base.get().add(start), n) };
                let t = Instant::now();
                let r = file.read_at(part, file_offset + start as u64);
                if let Ok(got) = r {
                    counters.record(got as u64, t, file.is_direct());
                }
                if done_tx.send(r.map(|got| (i, got))).is_err() {
                    break;
                }
            });
            match reader {
                Ok(_) => {}
                Err(cause) if started == 0 => return Err(IoError::Thread { what: "reader", cause }),
                Err(_) => break,
            }
        }
        drop(done_tx);
        consume_in_order(done_rx, nblocks, block, (origin, start), len, &next, &mut on_filled)
    })
}

/// Advances the filled prefix as blocks complete (in any order) and reports it in order.
fn consume_in_order(
    done: Receiver<Result<(usize, usize)>>,
    nblocks: usize,
    block: usize,
    (origin, start): (SendPtr, usize),
    len: usize,
    next: &AtomicUsize,
    on_filled: &mut impl FnMut(&[u8]),
) -> Result<usize> {
    let mut got = vec![None::<usize>; nblocks];
    let mut watermark_block = 0;
    let mut filled = 0usize;
    let mut eof = false;
    for r in done {
        let (i, n) = match r {
            Ok(x) => x,
            Err(e) => {
                next.store(nblocks, Ordering::Relaxed); // stop the other readers early
                return Err(e);
            }
        };
        got[i] = Some(n);
        let before = filled;
        while watermark_block < nblocks && !eof {
            let Some(n) = got[watermark_block] else { break };
            filled += n;
            watermark_block += 1;
            if n < block.min(len - (watermark_block - 1) * block) {
                eof = true; // a short block is the end of the file
                next.store(nblocks, Ordering::Relaxed);
            }
        }
        if filled > before {
            // SAFETY: [0, start) was filled before this call and [start, start + filled) consists of
            // finished blocks only; no thread writes to either any more.
            on_filled(unsafe { std::slice::from_raw_parts(origin.get(), start + filled) });
        }
    }
    Ok(filled)
}

#[derive(Clone, Copy)]
struct SendPtr(*mut u8);
// SAFETY: the pointer is only used for disjoint block ranges, see read_region.
unsafe impl Send for SendPtr {}
// SAFETY: as above.
unsafe impl Sync for SendPtr {}
impl SendPtr {
    fn get(self) -> *mut u8 {
        self.0
    }
}

/// Where a [`ReadRequest`] reads from.
pub enum ReadSource {
    /// A file, at an offset (aligned when the file is direct).
    At(Arc<DirectFile>, u64),
    /// A stream read in order, such as a decompressor's output: each request takes its next bytes.
    /// The path names it in errors.
    Stream(Arc<Mutex<dyn Read + Send>>, PathBuf),
}

/// One prefetch request: read `len` bytes from `source` into `buf`, and send the buffer and the byte
/// count back on `reply`. Fewer bytes than asked mean the end of the file or stream.
pub struct ReadRequest {
    /// What to read.
    pub source: ReadSource,
    /// How much to read (at most the buffer's capacity).
    pub len: usize,
    /// The buffer to fill; it comes back in the reply.
    pub buf: AlignedBuf,
    /// Where the filled buffer goes.
    pub reply: Sender<Result<(AlignedBuf, usize)>>,
}

/// A pool of threads serving [`ReadRequest`]s in arrival order: the merge's read-ahead for temp runs.
pub struct ReadService {
    tx: Option<Sender<ReadRequest>>,
    workers: Vec<JoinHandle<()>>,
}

impl ReadService {
    /// Starts `threads` readers that count their transfers in `counters`.
    pub fn new(threads: usize, counters: Arc<IoCounters>) -> Result<Self> {
        let (tx, rx) = unbounded::<ReadRequest>();
        let workers = (0..threads.max(1))
            .map(|_| {
                let (rx, c) = (rx.clone(), counters.clone());
                std::thread::Builder::new().name("xsort-read".into()).spawn(move || {
                    for mut req in rx {
                        let t = Instant::now();
                        let len = req.len.min(req.buf.capacity());
                        let dst = &mut req.buf.as_mut_slice()[..len];
                        let (r, direct) = match &req.source {
                            ReadSource::At(file, offset) => (file.read_at(dst, *offset), file.is_direct()),
                            ReadSource::Stream(stream, name) => {
                                let mut stream = stream.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                                (read_full(&mut *stream, dst).map_err(|e| IoError::read(name, e)), false)
                            }
                        };
                        if let Ok(n) = r {
                            c.record(n as u64, t, direct);
                        }
                        let _ = req.reply.send(r.map(|n| (req.buf, n)));
                    }
                })
            })
            // On an error the readers already started end when `tx` is dropped.
            .collect::<std::io::Result<Vec<_>>>()
            .map_err(|cause| IoError::Thread { what: "reader", cause })?;
        Ok(ReadService { tx: Some(tx), workers })
    }

    /// Queues a request for `len` bytes at `offset` of `file`. Returns the receiver on which the
    /// filled buffer will arrive.
    pub fn request(
        &self,
        file: Arc<DirectFile>,
        offset: u64,
        len: usize,
        buf: AlignedBuf,
    ) -> Result<Receiver<Result<(AlignedBuf, usize)>>> {
        self.send(ReadSource::At(file, offset), len, buf)
    }

    /// Queues a request for the next `len` bytes of a stream (`name` names it in errors).
    pub fn request_stream(
        &self,
        stream: Arc<Mutex<dyn Read + Send>>,
        name: &Path,
        len: usize,
        buf: AlignedBuf,
    ) -> Result<Receiver<Result<(AlignedBuf, usize)>>> {
        self.send(ReadSource::Stream(stream, name.to_owned()), len, buf)
    }

    fn send(&self, source: ReadSource, len: usize, buf: AlignedBuf) -> Result<Receiver<Result<(AlignedBuf, usize)>>> {
        let (reply, rx) = bounded(1);
        let tx = self.tx.as_ref().ok_or_else(|| IoError::Internal("read service stopped".into()))?;
        tx.send(ReadRequest { source, len, buf, reply }).map_err(|_| IoError::Internal("read service stopped".into()))?;
        Ok(rx)
    }
}

/// Reads from a stream until `dst` is full or the stream ends; returns the bytes read.
fn read_full(src: &mut (impl Read + ?Sized), dst: &mut [u8]) -> std::io::Result<usize> {
    let mut done = 0;
    while done < dst.len() {
        match crate::file::read_stream(src, &mut dst[done..])? {
            0 => break,
            n => done += n,
        }
    }
    Ok(done)
}

impl Drop for ReadService {
    fn drop(&mut self) {
        self.tx = None;
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::file::Access;

    /// A stream that hands out at most 3 bytes per read, like a pipe between writes.
    struct Trickle(std::io::Cursor<Vec<u8>>);
    impl Read for Trickle {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = buf.len().min(3);
            self.0.read(&mut buf[..n])
        }
    }

    #[test]
    fn stream_requests_take_the_next_bytes_in_full() {
        let svc = ReadService::new(2, Arc::default()).unwrap();
        let stream: Arc<Mutex<dyn Read + Send>> = Arc::new(Mutex::new(Trickle(std::io::Cursor::new((0..15u8).collect()))));
        let name = Path::new("stream");
        let first = svc.request_stream(stream.clone(), name, 10, AlignedBuf::new(4096).unwrap()).unwrap().recv().unwrap().unwrap();
        assert_eq!(&first.0.as_slice()[..first.1], &(0..10u8).collect::<Vec<_>>()[..]);
        // The end of the stream: fewer bytes than asked.
        let rest = svc.request_stream(stream, name, 10, AlignedBuf::new(4096).unwrap()).unwrap().recv().unwrap().unwrap();
        assert_eq!(&rest.0.as_slice()[..rest.1], &[10, 11, 12, 13, 14]);
    }

    #[test]
    fn region_read_reports_growing_prefix() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("in");
        let data: Vec<u8> = (0..100_000u32).map(|i| (i * 7 % 256) as u8).collect();
        std::fs::write(&p, &data).unwrap();
        let f = DirectFile::open(&p, Access::Read, true).unwrap();
        let mut buf = AlignedBuf::new(200_000).unwrap();
        let mut seen = Vec::new();
        let cfg = ReadConfig { transfer_size: 8192, in_flight: 3 };
        let n = read_region(&f, 0, buf.as_mut_slice(), 4096, cfg, &IoCounters::default(), |p| seen.push(p.len())).unwrap();
        assert_eq!(n, data.len());
        assert_eq!(&buf.as_slice()[4096..4096 + n], &data[..]);
        assert!(seen.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(*seen.last().unwrap(), 4096 + n);
    }

    #[test]
    fn service_reads_blocks() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("in");
        std::fs::write(&p, vec![5u8; 10_000]).unwrap();
        let f = Arc::new(DirectFile::open(&p, Access::Read, true).unwrap());
        let svc = ReadService::new(2, Arc::default()).unwrap();
        let rx = svc.request(f, 8192, 8192, AlignedBuf::new(8192).unwrap()).unwrap();
        let (buf, n) = rx.recv().unwrap().unwrap();
        assert_eq!(n, 10_000 - 8192);
        assert!(buf.as_slice()[..n].iter().all(|&b| b == 5));
    }
}
