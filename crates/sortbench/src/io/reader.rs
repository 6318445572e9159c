//! Reading a file as a sequence of large blocks, several transfers in flight.
//!
//! Regular files are split into fixed blocks that I/O threads claim in order
//! and read positionally; the consumer takes them back in file order (a small
//! reorder map holds blocks that finish early). Before each block is read,
//! `mincore` on a (never touched) mapping of the file tells how much of it
//! the page cache holds: a mostly cached block is copied from the cache at
//! memory speed, any other comes through the `O_DIRECT` descriptor, so cold
//! data streams from the device without filling the cache. (A first version
//! probed with `preadv2(RWF_NOWAIT)`, but on a miss that call still starts
//! readahead, so cold blocks were read twice.) Pipes and other streams are
//! read sequentially by one thread.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Mutex;
use std::thread;

use super::{kind_of, round_up, AlignedBuf, IoConfig, Kind, DIRECT_ALIGN};
use crate::error::{Error, Result};

/// An input opened for block reading.
pub(crate) struct Input {
    path: PathBuf,
    file: File,
    /// A second descriptor on the same file with O_DIRECT, when available.
    direct_file: Option<File>,
    /// Regular files only: their length at open.
    size: Option<u64>,
    /// A read-only mapping used only to ask `mincore` what is cached.
    residency: Option<Residency>,
    /// Whether the direct descriptor is still usable.
    direct: AtomicBool,
}

/// A block read (or failed) by an I/O thread: (block index, buffer, length).
type Delivery = (u64, Result<(AlignedBuf, usize)>);

impl Input {
    /// Opens `path` for reading (errors print like C's `perror(path)`).
    pub(crate) fn open(path: &Path, cfg: &IoConfig) -> Result<Input> {
        let open_err = |source| Error::Open { path: path.to_path_buf(), source };
        let file = File::open(path).map_err(open_err)?;
        let meta = file.metadata().map_err(open_err)?;
        let regular = kind_of(path, &meta) == Kind::Regular;
        let direct_file = if regular && cfg.direct { open_direct(path, &meta) } else { None };
        let residency = if regular { Residency::map(&file, meta.len()) } else { None };
        Ok(Input {
            path: path.to_path_buf(),
            file,
            size: regular.then_some(meta.len()),
            residency,
            direct: AtomicBool::new(direct_file.is_some()),
            direct_file,
        })
    }

    /// The length of a regular file; `None` for streams.
    pub(crate) fn size(&self) -> Option<u64> {
        self.size
    }

    fn read_err(&self, source: io::Error) -> Error {
        Error::Read { path: self.path.clone(), source }
    }

    /// Whether the page cache appears to hold most of a regular file: half
    /// or more of the pages of up to 64 windows of 1 MiB spread evenly over
    /// it are resident. `false` for streams, or when the kernel will not say.
    /// (For files the caller neither owns nor may write, Linux reports every
    /// page as resident; such files are then read buffered, which is correct
    /// either way.)
    pub(crate) fn mostly_cached(&self) -> bool {
        const WINDOWS: u64 = 64;
        const WINDOW: u64 = 1 << 20;
        let (Some(residency), Some(size)) = (&self.residency, self.size) else {
            return false;
        };
        let count = size.div_ceil(WINDOW).min(WINDOWS);
        let cached = (0..count)
            .filter(|&w| {
                // Window starts spread over the file, page aligned.
                let start = (size / count * w) / DIRECT_ALIGN as u64 * DIRECT_ALIGN as u64;
                residency.mostly_cached(start, WINDOW.min(size - start) as usize)
            })
            .count() as u64;
        count > 0 && 2 * cached >= count
    }

    /// Reads exactly `buf.len()` bytes at `offset` through the page cache.
    pub(crate) fn read_cached(&self, buf: &mut [u8], offset: u64) -> Result<()> {
        self.file.read_exact_at(buf, offset).map_err(|e| self.read_err(e))
    }

    /// Reads exactly `len` bytes at `offset` (4 KiB aligned) into `buf`.
    fn read_block(&self, buf: &mut AlignedBuf, offset: u64, len: usize) -> io::Result<()> {
        // Unknown residency (no mapping, or mincore refused) counts as cold.
        let cached = self.residency.as_ref().is_some_and(|r| r.mostly_cached(offset, len));
        if let (Some(direct), true, false) = (&self.direct_file, self.direct.load(Ordering::Relaxed), cached) {
            let end = round_up(len, DIRECT_ALIGN);
            match read_direct(direct, &mut buf[..end], offset, len) {
                Ok(()) => return Ok(()),
                // Refused: buffered from now on (a partial direct read, if
                // any, is simply read again below).
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                    self.direct.store(false, Ordering::Relaxed);
                }
                Err(e) => return Err(e),
            }
        }
        self.file.read_exact_at(&mut buf[..len], offset)
    }
}

/// A `PROT_READ` shared mapping of a whole file, never dereferenced: only
/// its address range is passed to `mincore`.
struct Residency {
    addr: *mut libc::c_void,
    len: usize,
    page: usize,
}

// SAFETY: the mapping is never read or written through `addr`; the pointer
// is only an address handed to mincore/munmap, which any thread may call.
unsafe impl Send for Residency {}
// SAFETY: as for Send; mincore does not mutate the mapping.
unsafe impl Sync for Residency {}

impl Residency {
    fn map(file: &File, size: u64) -> Option<Residency> {
        let len = usize::try_from(size).ok().filter(|&l| l > 0)?;
        // SAFETY: sysconf has no memory preconditions.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).ok()?;
        // SAFETY: a fresh shared read-only mapping chosen by the kernel (NULL
        // hint) over an open descriptor; nothing else aliases it.
        let addr = unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ, libc::MAP_SHARED, file.as_raw_fd(), 0) };
        (addr != libc::MAP_FAILED).then_some(Residency { addr, len, page })
    }

    /// Whether at least half of the pages of `[offset, offset + len)` are
    /// in the page cache. Errors (e.g. EPERM-like restrictions some kernels
    /// apply to files the caller may not write) answer "no".
    fn mostly_cached(&self, offset: u64, len: usize) -> bool {
        let Ok(offset) = usize::try_from(offset) else {
            return false;
        };
        let start = offset / self.page * self.page;
        let end = (offset + len).min(self.len);
        if end <= start {
            return false;
        }
        let pages = (end - start).div_ceil(self.page);
        let mut vec = vec![0u8; pages];
        // SAFETY: [addr + start, addr + end) lies inside our live mapping,
        // addr + start is page aligned, and `vec` has one byte per page.
        let rc = unsafe { libc::mincore(self.addr.cast::<u8>().add(start).cast(), end - start, vec.as_mut_ptr()) };
        rc == 0 && 2 * vec.iter().filter(|&&v| v & 1 != 0).count() >= pages
    }
}

impl Drop for Residency {
    fn drop(&mut self) {
        // SAFETY: exactly the mapping made in `map`, unmapped once.
        unsafe {
            libc::munmap(self.addr, self.len);
        }
    }
}

/// Opens a second, O_DIRECT descriptor on the file `meta` describes, or
/// `None` where the file system refuses (EINVAL) or the name now points
/// elsewhere.
fn open_direct(path: &Path, meta: &std::fs::Metadata) -> Option<File> {
    let file = OpenOptions::new().read(true).custom_flags(libc::O_DIRECT).open(path).ok()?;
    let again = file.metadata().ok()?;
    (again.dev() == meta.dev() && again.ino() == meta.ino()).then_some(file)
}

/// Direct reads into the page-aligned `dst` until `need` bytes are in.
fn read_direct(file: &File, dst: &mut [u8], offset: u64, need: usize) -> io::Result<()> {
    let mut pos = 0;
    while pos < need {
        match file.read_at(&mut dst[pos..], offset + pos as u64) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => pos += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Calls `consume` on each block of the input, in order; every block but the
/// last holds exactly `cfg.block_len()` bytes. Reading runs ahead on I/O
/// threads. A regular file is read up to its length at open.
pub(crate) fn read_blocks<F>(input: &Input, cfg: &IoConfig, consume: F) -> Result<()>
where
    F: FnMut(&[u8]) -> Result<()>,
{
    let block = cfg.block_len();
    let (readers, buffers, buf_len, blocks) = match input.size {
        Some(0) => return Ok(()),
        Some(size) => {
            let blocks = size.div_ceil(block as u64);
            let readers = (cfg.inflight_len() as u64).min(blocks) as usize;
            let buf_len = (block as u64).min(size.div_ceil(DIRECT_ALIGN as u64) * DIRECT_ALIGN as u64);
            (readers, (readers as u64 + 2).min(blocks) as usize, buf_len as usize, blocks)
        }
        None => (1, 3, block, u64::MAX),
    };
    let next_block = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    // Channels outlive the scope so the I/O threads may borrow them.
    let (free_tx, free_rx) = mpsc::channel::<AlignedBuf>();
    let (full_tx, full_rx) = mpsc::channel::<Delivery>();
    for _ in 0..buffers {
        let _ = free_tx.send(AlignedBuf::new(buf_len)?);
    }
    let free_rx = Mutex::new(free_rx);
    thread::scope(|scope| -> Result<()> {
        for _ in 0..readers {
            let full_tx = full_tx.clone();
            let (free_rx, next_block, stop) = (&free_rx, &next_block, &stop);
            scope.spawn(move || match input.size {
                Some(size) => reader_loop(input, size, block, free_rx, full_tx, next_block, stop),
                None => stream_loop(input, free_rx, full_tx, stop),
            });
        }
        drop(full_tx);
        let result = deliver_in_order(&full_rx, free_tx, blocks, consume);
        // Readers blocked on a free buffer wake when free_tx (moved into
        // deliver_in_order) is dropped; the others see `stop`.
        stop.store(true, Ordering::Relaxed);
        result
    })
}

/// The consumer side: hand blocks to `consume` in index order, recycle buffers.
fn deliver_in_order<F>(full_rx: &Receiver<Delivery>, free_tx: Sender<AlignedBuf>, blocks: u64, mut consume: F) -> Result<()>
where
    F: FnMut(&[u8]) -> Result<()>,
{
    let mut pending = BTreeMap::new();
    let mut want = 0u64;
    while want < blocks {
        // All readers gone: the input is exhausted (streams) or they stopped.
        let Ok((index, delivery)) = full_rx.recv() else {
            break;
        };
        pending.insert(index, delivery?);
        while let Some((buf, len)) = pending.remove(&want) {
            consume(&buf[..len])?;
            let _ = free_tx.send(buf);
            want += 1;
        }
    }
    Ok(())
}

/// One I/O thread on a regular file: claim the next block, read it, deliver.
fn reader_loop(
    input: &Input,
    size: u64,
    block: usize,
    free_rx: &Mutex<Receiver<AlignedBuf>>,
    full_tx: Sender<Delivery>,
    next_block: &AtomicU64,
    stop: &AtomicBool,
) {
    let blocks = size.div_ceil(block as u64);
    loop {
        let buf = match free_rx.lock() {
            Ok(rx) => rx.recv(),
            Err(_) => return,
        };
        let Ok(mut buf) = buf else { return };
        // Claim an index only while holding a buffer, so the lowest claimed
        // index always has one and the consumer can never wait forever.
        let index = next_block.fetch_add(1, Ordering::Relaxed);
        if index >= blocks || stop.load(Ordering::Relaxed) {
            return;
        }
        let offset = index * block as u64;
        let len = (block as u64).min(size - offset) as usize;
        let delivery = match input.read_block(&mut buf, offset, len) {
            Ok(()) => Ok((buf, len)),
            Err(e) => Err(input.read_err(e)),
        };
        if full_tx.send((index, delivery)).is_err() {
            return;
        }
    }
}

/// The I/O thread for a stream: fill each buffer completely (short reads are
/// normal on pipes) so that only the last block can be short.
fn stream_loop(input: &Input, free_rx: &Mutex<Receiver<AlignedBuf>>, full_tx: Sender<Delivery>, stop: &AtomicBool) {
    let mut index = 0;
    loop {
        let buf = match free_rx.lock() {
            Ok(rx) => rx.recv(),
            Err(_) => return,
        };
        let Ok(mut buf) = buf else { return };
        if stop.load(Ordering::Relaxed) {
            return;
        }
        let cap = buf.capacity();
        let mut len = 0;
        let mut result = Ok(());
        while len < cap {
            match (&input.file).read(&mut buf[len..cap]) {
                Ok(0) => break,
                Ok(n) => len += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    result = Err(input.read_err(e));
                    break;
                }
            }
        }
        let last = len < cap || result.is_err();
        if len > 0 || result.is_err() {
            let delivery = result.map(|()| (buf, len));
            if full_tx.send((index, delivery)).is_err() {
                return;
            }
        }
        if last {
            return;
        }
        index += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(path: &Path, cfg: &IoConfig) -> Vec<u8> {
        let input = Input::open(path, cfg).expect("open");
        let mut all = Vec::new();
        read_blocks(&input, cfg, |b| {
            all.extend_from_slice(b);
            Ok(())
        })
        .expect("read");
        all
    }

    #[test]
    fn regular_files_read_back_in_order() {
        let dir = tempfile::tempdir().expect("tempdir");
        for (len, direct) in [(0usize, true), (100, true), (102_400 * 7 + 300, true), (333_333, false)] {
            let data: Vec<u8> = (0..len).map(|j| (j % 253) as u8).collect();
            let path = dir.path().join(format!("in{len}"));
            std::fs::write(&path, &data).expect("write");
            let cfg = IoConfig { block_bytes: 1, inflight: 3, direct };
            assert_eq!(collect(&path, &cfg), data, "len {len}");
        }
    }

    #[test]
    fn cold_files_read_back_through_direct_io() {
        let dir = tempfile::tempdir().expect("tempdir");
        let len = 102_400 * 5 + 4_321; // several blocks and an unaligned tail
        let data: Vec<u8> = (0..len).map(|j| (j % 239) as u8).collect();
        let path = dir.path().join("cold");
        std::fs::write(&path, &data).expect("write");
        let cfg = IoConfig { block_bytes: 1, inflight: 3, direct: true };
        let input = Input::open(&path, &cfg).expect("open");
        // SAFETY: fsync and fadvise on our own descriptor; the latter is a hint.
        unsafe {
            libc::fsync(input.file.as_raw_fd());
            libc::posix_fadvise(input.file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED);
        }
        // Where the hint is ignored (tmpfs keeps its pages), the blocks are
        // read buffered instead; the bytes must be the same either way.
        let cold = !input.mostly_cached();
        let mut all = Vec::new();
        read_blocks(&input, &cfg, |b| {
            all.extend_from_slice(b);
            Ok(())
        })
        .expect("read");
        assert!(all == data);
        if cold && input.direct_file.is_some() {
            // Direct reads bypass the page cache, which stays (mostly) empty.
            assert!(!input.mostly_cached());
        }
    }

    #[test]
    fn streams_are_read_whole() {
        let cfg = IoConfig { block_bytes: 1, inflight: 2, direct: true };
        let input = Input::open(Path::new("/dev/null"), &cfg).expect("open");
        assert_eq!(input.size(), None);
        let mut calls = 0;
        read_blocks(&input, &cfg, |_| {
            calls += 1;
            Ok(())
        })
        .expect("read");
        assert_eq!(calls, 0);
    }

    #[test]
    fn consumer_errors_propagate() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("x");
        std::fs::write(&path, vec![1u8; 102_400 * 9]).expect("write");
        let cfg = IoConfig { block_bytes: 1, inflight: 2, direct: true };
        let input = Input::open(&path, &cfg).expect("open");
        let mut seen = 0;
        let res = read_blocks(&input, &cfg, |_| {
            seen += 1;
            if seen == 3 {
                Err(Error::Internal("enough".into()))
            } else {
                Ok(())
            }
        });
        assert!(matches!(res, Err(Error::Internal(_))));
        assert_eq!(seen, 3);
    }

    #[test]
    fn refused_direct_read_falls_back_to_buffered() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("cold");
        let data: Vec<u8> = (0..3 * DIRECT_ALIGN).map(|j| (j % 241) as u8).collect();
        std::fs::write(&path, &data).expect("write");
        let cfg = IoConfig { block_bytes: 1, inflight: 1, direct: true };
        let input = Input::open(&path, &cfg).expect("open");
        if input.direct_file.is_none() {
            return; // no direct I/O on this file system: nothing to refuse
        }
        // Drop the file from the page cache so the direct path is chosen.
        // SAFETY: fadvise on our own open descriptor; only a hint.
        unsafe {
            libc::fsync(input.file.as_raw_fd());
            libc::posix_fadvise(input.file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED);
        }
        if input.mostly_cached() {
            return; // the hint was ignored: the direct path cannot be reached
        }
        let mut buf = AlignedBuf::new(2 * DIRECT_ALIGN).expect("buffer");
        // An unaligned offset makes the direct read fail with EINVAL.
        input.read_block(&mut buf, 100, 5000).expect("buffered retry");
        assert_eq!(&buf[..5000], &data[100..5100]);
        assert!(!input.direct.load(Ordering::Relaxed));
    }

    #[test]
    fn missing_file_is_an_open_error() {
        let err = Input::open(Path::new("/nonexistent/x"), &IoConfig::default()).err();
        assert!(matches!(err, Some(Error::Open { .. })));
    }
}
