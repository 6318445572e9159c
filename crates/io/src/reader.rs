//! Read-ahead: filling a large region from a file with several transfers in flight on long-lived
//! reader threads while the caller consumes each block as it is filled, and a small service that
//! prefetches blocks of temp runs.

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

/// The threads that read regions for [`read_region`], started once, before the sort's buffers are
/// faulted in, and kept for every region: creating a thread waits for the address-space lock, which
/// the threads that fault buffers in (and each reader pinning its block for a direct transfer) hold
/// for a millisecond at a time. Started per region on the development VM, the fourth reader of a
/// 10^6-record sort began its read 5 to 30 ms after the first.
pub struct Readers {
    pool: rayon::ThreadPool,
}

impl Readers {
    /// Starts `count` reader threads, or one if the system refuses that many; an error only when
    /// not even one starts.
    pub fn start(count: usize) -> Result<Self> {
        let mut refused = None;
        for n in [count.max(1), 1] {
            let mut started = Vec::new();
            let built = rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .spawn_handler(|thread| {
                    let spawned = std::thread::Builder::new().name("xsort-read".into()).spawn(|| thread.run());
                    spawned.map(|h| started.push(h)).inspect_err(|e| refused = e.raw_os_error())
                })
                .build();
            if let Ok(pool) = built {
                return Ok(Readers { pool });
            }
            // The threads of a refused pool have been told to end, but count against a limit on
            // threads (`ulimit -u`) until they have: the one reader would be refused for them.
            // The kernel releases a thread just after its join returns, hence the pause.
            if !started.is_empty() {
                started.into_iter().for_each(|h| drop(h.join()));
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        }
        let cause = refused.map_or_else(|| std::io::Error::other("refused"), std::io::Error::from_raw_os_error);
        Err(IoError::Thread { what: "reader", cause })
    }

    /// Transfers these readers keep in flight.
    pub fn count(&self) -> usize {
        self.pool.current_num_threads()
    }
}

/// Fills `buf[start..]` from `file` starting at `file_offset` (`start`, `file_offset` and the buffer's
/// address aligned) with up to `cfg.in_flight` concurrent transfers on `readers`, stopping at end of
/// file. As each transfer completes, in whatever order the device finishes them, `on_filled` is
/// called on the calling thread with a view of what is filled so far ([`Filled`]: what lies before
/// `start`, filled earlier, and the finished transfers), so the caller can work on it while other
/// blocks are still being read. Returns the number of bytes read (up to the first short transfer,
/// the end of file).
///
/// Transfers do not finish in order: with the mq-deadline scheduler a request issued just after
/// the one behind it waits for the elevator to come back, and on the development VM the third of
/// twelve 8 MiB reads regularly finished last, after all the others. A caller that waited for the
/// filled prefix to grow would then do all its work after the last read.
#[allow(clippy::too_many_arguments)]
pub fn read_region(
    readers: &Readers,
    file: &DirectFile,
    file_offset: u64,
    buf: &mut [u8],
    start: usize,
    cfg: ReadConfig,
    counters: &IoCounters,
    mut on_filled: impl FnMut(&Filled<'_>),
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
    // SAFETY: start <= buf.len(), checked above. Derived from `origin`, so that both pointers come
    // from one borrow of `buf`.
    let base = SendPtr(unsafe { origin.get().add(start) });
    let next = AtomicUsize::new(0);
    let (done_tx, done_rx) = unbounded::<Result<(usize, usize)>>();
    // The scope returns only when every reader has stopped, so no transfer outlives the borrow of
    // `buf`, whatever the consumer returns.
    readers.pool.in_place_scope(|s| {
        for _ in 0..cfg.in_flight.min(readers.count()).clamp(1, nblocks) {
            let (next, done_tx) = (&next, done_tx.clone());
            s.spawn(move |_| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= nblocks {
                    break;
                }
                let start = i * block;
                let n = block.min(len - start);
                // SAFETY: every block index is claimed by exactly one reader (fetch_add), blocks are
                // disjoint ranges inside buf, and the consumer only views finished blocks.
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
        }
        drop(done_tx);
        let filled = Filled { origin, start, block, len, got: vec![None; nblocks], just: 0..0, _buf: std::marker::PhantomData };
        consume_as_filled(done_rx, filled, &next, &mut on_filled)
    })
}

/// Reports each block as it completes (in any order) and returns the filled prefix's length.
fn consume_as_filled(
    done: Receiver<Result<(usize, usize)>>,
    mut filled: Filled<'_>,
    next: &AtomicUsize,
    on_filled: &mut impl FnMut(&Filled<'_>),
) -> Result<usize> {
    let nblocks = filled.got.len();
    for r in done {
        let (i, n) = match r {
            Ok(x) => x,
            Err(e) => {
                next.store(nblocks, Ordering::Relaxed); // stop the other readers early
                return Err(e);
            }
        };
        if n < filled.expected(i) {
            next.store(nblocks, Ordering::Relaxed); // a short block is the end of the file
        }
        filled.got[i] = Some(n);
        let at = filled.start + i * filled.block;
        filled.just = at..at + n;
        if n > 0 {
            on_filled(&filled);
        }
    }
    // The prefix up to the first short or missing block: what the file held.
    let mut total = 0;
    for (i, got) in filled.got.iter().enumerate() {
        let Some(n) = *got else { break };
        total += n;
        if n < filled.expected(i) {
            break;
        }
    }
    Ok(total)
}

/// What [`read_region`] has filled of its buffer so far: everything before its `start` (filled
/// before the call) and each finished block up to the bytes it got. Slices of it are safe to read
/// while other blocks are being read, since no reader writes to a finished block again.
pub struct Filled<'a> {
    origin: SendPtr,
    start: usize,
    block: usize,
    len: usize,
    got: Vec<Option<usize>>,
    just: std::ops::Range<usize>,
    _buf: std::marker::PhantomData<&'a [u8]>,
}

impl<'a> Filled<'a> {
    /// A buffer filled in full (as a stream's reader fills it, in order): all of `bytes`, which
    /// have also just been filled.
    pub fn whole(bytes: &'a [u8]) -> Self {
        let origin = SendPtr(bytes.as_ptr().cast_mut());
        Filled { origin, start: bytes.len(), block: 1, len: 0, got: Vec::new(), just: 0..bytes.len(), _buf: std::marker::PhantomData }
    }

    /// The bytes (buffer positions) of the block that has just finished.
    pub fn just_filled(&self) -> std::ops::Range<usize> {
        self.just.clone()
    }

    /// `buf[range]` when every byte of it is filled, None otherwise (and for a range that is not
    /// inside the buffer, even an empty one).
    pub fn get(&self, range: std::ops::Range<usize>) -> Option<&[u8]> {
        if range.start > range.end || range.end > self.start + self.len {
            return None;
        }
        if range.end > self.start {
            let first = range.start.max(self.start) - self.start;
            for i in first / self.block..(range.end - self.start).div_ceil(self.block) {
                let end = self.start + i * self.block + (*self.got.get(i)?)?;
                if end < range.end.min(self.start + (i + 1) * self.block) {
                    return None;
                }
            }
        }
        // SAFETY: the range lies inside the buffer (checked above: its length is `start + len`) and
        // holds only bytes filled before the call or by finished blocks, which no thread writes any
        // more; the buffer outlives 'a. (A `whole` view is a shared slice, never written through.)
        Some(unsafe { std::slice::from_raw_parts(self.origin.get().add(range.start), range.len()) })
    }

    /// Bytes block `i` asks for (the last one may be shorter).
    fn expected(&self, i: usize) -> usize {
        self.block.min(self.len - i * self.block)
    }
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
    fn region_read_reports_each_block_as_it_is_filled() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("in");
        let data: Vec<u8> = (0..100_000u32).map(|i| (i * 7 % 256) as u8).collect();
        std::fs::write(&p, &data).unwrap();
        let f = DirectFile::open(&p, Access::Read, true).unwrap();
        let mut buf = AlignedBuf::new(200_000).unwrap();
        let mut seen = Vec::new();
        let cfg = ReadConfig { transfer_size: 8192, in_flight: 3 };
        let readers = Readers::start(3).unwrap();
        let n = read_region(&readers, &f, 0, buf.as_mut_slice(), 4096, cfg, &IoCounters::default(), |filled| {
            let just = filled.just_filled();
            // The block just read is there, whatever finished before it; the part before the
            // region counts as filled; nothing past the end of the file is.
            assert_eq!(filled.get(just.clone()).unwrap(), &data[just.start - 4096..just.end - 4096]);
            assert!(filled.get(0..4096).is_some());
            assert!(filled.get(just.start..4096 + data.len() + 1).is_none());
            seen.push(just);
        })
        .unwrap();
        assert_eq!(n, data.len());
        assert_eq!(&buf.as_slice()[4096..4096 + n], &data[..]);
        // Every block reported once, together covering the file.
        seen.sort_by_key(|r| r.start);
        assert_eq!(seen.len(), data.len().div_ceil(8192));
        assert!(seen.windows(2).all(|w| w[0].end == w[1].start));
        assert_eq!((seen[0].start, seen.last().unwrap().end), (4096, 4096 + n));
    }

    /// A view answers only for ranges inside its buffer: an empty range past the end is no slice
    /// (a pointer past the buffer), whether the view is of a read or of a whole buffer.
    #[test]
    fn filled_views_give_no_range_outside_their_buffer() {
        let bytes = [7u8; 100];
        let whole = Filled::whole(&bytes);
        assert_eq!(whole.get(0..100), Some(&bytes[..]));
        assert_eq!(whole.get(100..100), Some(&[][..]));
        assert_eq!(whole.get(4096..4096), None);
        assert_eq!(whole.get(50..101), None);
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("in");
        std::fs::write(&p, vec![5u8; 8192]).unwrap();
        let f = DirectFile::open(&p, Access::Read, false).unwrap();
        let mut buf = AlignedBuf::new(8192).unwrap();
        let cfg = ReadConfig { transfer_size: 4096, in_flight: 1 };
        let readers = Readers::start(1).unwrap();
        let mut views = 0;
        read_region(&readers, &f, 0, buf.as_mut_slice(), 0, cfg, &IoCounters::default(), |filled| {
            assert_eq!(filled.get(8192 + 4096..8192 + 4096), None);
            assert_eq!(filled.get(3 * 4096..3 * 4096), None);
            views += 1;
        })
        .unwrap();
        assert_eq!(views, 2);
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
