//! Files read and written at explicit offsets, with O_DIRECT when the filesystem allows it.
//!
//! A [`DirectFile`] starts in direct mode when asked and drops to buffered mode, once and for good,
//! the first time the kernel refuses a direct open or transfer with `EINVAL` (tmpfs, some network
//! filesystems, an unaligned tail) or `ENODEV` (a filesystem without direct I/O). Callers therefore never need to know which mode they got, and
//! the statistics report which one was used.

use crate::buffer::IO_ALIGN;
use crate::error::{IoError, Result};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// Reserves the disk blocks of bytes `[offset, offset + len)` of `file` (named `path` in errors),
/// so that a full disk is found before they are written; with `keep_size` the file's size stays as
/// it is (`FALLOC_FL_KEEP_SIZE`), else it grows to cover the range. A full disk (ENOSPC, EDQUOT)
/// is [`IoError::DiskFull`]; any other refusal (a filesystem without `fallocate`, a file size
/// limit) reserves nothing and is left for the writes to meet.
pub fn reserve_blocks(file: &File, offset: u64, len: u64, keep_size: bool, path: &Path) -> Result<()> {
    if len == 0 {
        return Ok(());
    }
    let mode = if keep_size { libc::FALLOC_FL_KEEP_SIZE } else { 0 };
    // SAFETY: fallocate on a descriptor the caller holds open; it changes only that file.
    if unsafe { libc::fallocate(file.as_raw_fd(), mode, offset as libc::off_t, len as libc::off_t) } == 0 {
        return Ok(());
    }
    let e = std::io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::ENOSPC) | Some(libc::EDQUOT) => Err(IoError::DiskFull { path: path.to_owned() }),
        _ => Ok(()),
    }
}

/// How a file is opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Read only.
    Read,
    /// Create a new file (must not exist), write only.
    CreateNew,
    /// Create a new file (must not exist), read and write (temp files).
    CreateNewReadWrite,
}

/// A file used with positional reads and writes, direct when possible.
#[derive(Debug)]
pub struct DirectFile {
    file: File,
    path: PathBuf,
    direct: AtomicBool,
}

impl DirectFile {
    /// Opens `path`; tries O_DIRECT first when `want_direct`, and falls back to buffered I/O where it is
    /// refused.
    pub fn open(path: &Path, access: Access, want_direct: bool) -> Result<Self> {
        if want_direct {
            match open_with(path, access, libc::O_DIRECT) {
                Ok(file) => return Ok(DirectFile { file, path: path.to_owned(), direct: AtomicBool::new(true) }),
                Err(e) if matches!(e.raw_os_error(), Some(libc::EINVAL | libc::ENODEV)) => {}
                Err(cause) => return Err(IoError::Open { path: path.to_owned(), cause }),
            }
        }
        let file = open_with(path, access, 0).map_err(|cause| IoError::Open { path: path.to_owned(), cause })?;
        Ok(DirectFile { file, path: path.to_owned(), direct: AtomicBool::new(false) })
    }

    /// Wraps an already open file (for example a standard stream that is a regular file).
    pub fn from_file(file: File, path: PathBuf) -> Self {
        DirectFile { file, path, direct: AtomicBool::new(false) }
    }

    /// Wraps a file already open for reading, switching it to O_DIRECT when `want_direct` and the
    /// filesystem allows it (an input is opened once; its mode is chosen afterwards).
    pub fn from_read_file(file: File, path: PathBuf, want_direct: bool) -> Self {
        let f = DirectFile { file, path, direct: AtomicBool::new(false) };
        if want_direct {
            let fd = f.file.as_raw_fd();
            // SAFETY: fcntl on an fd we own.
            let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
            // SAFETY: as above. Refusal (EINVAL where the filesystem has no direct I/O) leaves the
            // descriptor buffered, as a refused direct open does.
            let set = flags >= 0 && unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_DIRECT) } == 0;
            f.direct.store(set, Ordering::Relaxed);
        }
        f
    }

    /// Wraps a file opened elsewhere (an unnamed temp file), `direct` if it was opened with O_DIRECT;
    /// `name` is what messages call it.
    pub fn from_parts(file: File, name: PathBuf, direct: bool) -> Self {
        DirectFile { file, path: name, direct: AtomicBool::new(direct) }
    }

    /// The open file, for the output's commit (linking it in, or copying it into its target).
    pub(crate) fn as_file(&self) -> &File {
        &self.file
    }

    /// Names the file differently in messages (the output's temp file is reported as its target).
    pub fn set_name(&mut self, name: PathBuf) {
        self.path = name;
    }

    /// A second handle on the same open file, for sequential writing (devices, FIFOs).
    pub fn try_clone_file(&self) -> Result<File> {
        self.file.try_clone().map_err(|e| IoError::meta(&self.path, "duplicate descriptor", e))
    }

    /// The path this file was opened by (for messages).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether transfers currently bypass the page cache.
    pub fn is_direct(&self) -> bool {
        self.direct.load(Ordering::Relaxed)
    }

    /// Size of the file now.
    pub fn len(&self) -> Result<u64> {
        Ok(self.file.metadata().map_err(|e| IoError::meta(&self.path, "stat", e))?.len())
    }

    /// Whether the file is empty.
    pub fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }

    /// Reads into `buf` from `offset` until `buf` is full or the file ends; returns the bytes read.
    /// In direct mode `buf`'s address, its length and `offset` should be multiples of [`IO_ALIGN`].
    pub fn read_at(&self, buf: &mut [u8], offset: u64) -> Result<usize> {
        let mut done = 0;
        while done < buf.len() {
            match self.file.read_at(&mut buf[done..], offset + done as u64) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if self.refused_direct(&e) => self.drop_direct()?,
                Err(e) => return Err(IoError::read(&self.path, e)),
            }
            // A short direct read ends at an unaligned point: normally the end of the file. If it is
            // not (a filesystem that splits transfers), buffered mode finishes the job.
            if done % IO_ALIGN != 0 && done < buf.len() && self.is_direct() {
                if offset + done as u64 >= self.len()? {
                    break;
                }
                self.drop_direct()?;
            }
        }
        Ok(done)
    }

    /// Writes all of `buf` at `offset`. In direct mode the address, length and offset should be
    /// aligned; an unaligned final transfer falls back to buffered mode.
    pub fn write_all_at(&self, buf: &[u8], offset: u64) -> Result<()> {
        let mut done = 0;
        while done < buf.len() {
            match self.file.write_at(&buf[done..], offset + done as u64) {
                Ok(0) => return Err(IoError::write(&self.path, std::io::ErrorKind::WriteZero.into())),
                Ok(n) => done += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if self.refused_direct(&e) => self.drop_direct()?,
                Err(e) => return Err(IoError::write(&self.path, e)),
            }
        }
        Ok(())
    }

    /// Reserves `len` bytes of disk for the file, so a full disk is found before the sort, not after
    /// it, and the blocks are laid out contiguously. Filesystems without fallocate are left alone.
    pub fn preallocate(&self, len: u64) -> Result<()> {
        reserve_blocks(&self.file, 0, len, false, &self.path)
    }

    /// Gives the blocks of `[offset, offset + len)` back to the filesystem (a consumed temp run),
    /// keeping the file's size. Best effort: filesystems without hole punching keep the space.
    pub fn punch_hole(&self, offset: u64, len: u64) {
        if len == 0 {
            return;
        }
        let mode = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE;
        // SAFETY: plain syscall on an fd we own; failure is harmless.
        unsafe { libc::fallocate(self.file.as_raw_fd(), mode, offset as libc::off_t, len as libc::off_t) };
    }

    /// Sets the file's length (used to cut the padding of a final direct write).
    pub fn set_len(&self, len: u64) -> Result<()> {
        self.file.set_len(len).map_err(|e| IoError::meta(&self.path, "truncate", e))
    }

    /// fsync.
    pub fn sync(&self) -> Result<()> {
        self.file.sync_all().map_err(|e| IoError::meta(&self.path, "fsync", e))
    }

    /// Drops cached pages of the file (after a direct transfer they are normally absent anyway).
    pub fn drop_cache(&self) {
        // SAFETY: advice syscall on an fd we own; failure is harmless.
        unsafe { libc::posix_fadvise(self.file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    }

    /// Whether an error is the kernel refusing a direct transfer (EINVAL; ENODEV where a filesystem
    /// has no direct I/O at all), which buffered mode then retries.
    fn refused_direct(&self, e: &std::io::Error) -> bool {
        matches!(e.raw_os_error(), Some(libc::EINVAL | libc::ENODEV)) && self.is_direct()
    }

    /// Switches the descriptor to buffered mode for good.
    pub(crate) fn drop_direct(&self) -> Result<()> {
        let fd = self.file.as_raw_fd();
        // SAFETY: fcntl on an fd we own.
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
        // SAFETY: as above.
        if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_DIRECT) } < 0 {
            return Err(IoError::meta(&self.path, "leave direct I/O mode", std::io::Error::last_os_error()));
        }
        self.direct.store(false, Ordering::Relaxed);
        Ok(())
    }
}

/// Reads what is available from a stream (a pipe, a terminal, a file read in order) into `dst`,
/// retrying reads interrupted by a signal; 0 means the stream has ended.
pub fn read_stream(src: &mut (impl std::io::Read + ?Sized), dst: &mut [u8]) -> std::io::Result<usize> {
    loop {
        match src.read(dst) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            other => return other,
        }
    }
}

/// The share of an open regular file's pages that are in the page cache (0.0 to 1.0), or None when
/// it cannot be told (empty file, mapping refused). A file mostly in memory is read faster through
/// the cache than from the disk with O_DIRECT, which would ignore the cached copy. It works on the
/// descriptor: opening the path again could meet a FIFO, whose data the probe would swallow.
pub fn page_cache_fraction(file: &File) -> Option<f64> {
    let len = file.metadata().ok()?.len() as usize;
    if len == 0 {
        return None;
    }
    // SAFETY: a read-only shared mapping of a file we opened; it is never dereferenced, only
    // inspected with mincore, and unmapped below.
    let map = unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ, libc::MAP_SHARED, file.as_raw_fd(), 0) };
    if map == libc::MAP_FAILED {
        return None;
    }
    let pages = len.div_ceil(4096);
    let mut vec = vec![0u8; pages];
    // SAFETY: map covers len bytes; vec has one byte per 4 KiB page of it.
    let ok = unsafe { libc::mincore(map, len, vec.as_mut_ptr()) } == 0;
    // SAFETY: unmapping exactly the mapping made above.
    unsafe { libc::munmap(map, len) };
    ok.then(|| vec.iter().filter(|&&b| b & 1 == 1).count() as f64 / pages as f64)
}

fn open_with(path: &Path, access: Access, flags: i32) -> std::io::Result<File> {
    let mut o = OpenOptions::new();
    match access {
        Access::Read => o.read(true),
        Access::CreateNew => o.write(true).create_new(true),
        Access::CreateNewReadWrite => o.read(true).write(true).create_new(true),
    };
    o.custom_flags(flags | libc::O_CLOEXEC).mode(0o666).open(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer::AlignedBuf;

    #[test]
    fn write_then_read_unaligned_tail() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        let f = DirectFile::open(&p, Access::CreateNewReadWrite, true).unwrap();
        let mut b = AlignedBuf::new(3 * IO_ALIGN).unwrap();
        for (i, x) in b.as_mut_slice().iter_mut().enumerate() {
            *x = (i % 251) as u8;
        }
        f.write_all_at(&b.as_slice()[..2 * IO_ALIGN], 0).unwrap();
        f.write_all_at(&b.as_slice()[2 * IO_ALIGN..2 * IO_ALIGN + 100], 2 * IO_ALIGN as u64).unwrap();
        assert_eq!(f.len().unwrap(), 2 * IO_ALIGN as u64 + 100);
        let mut r = AlignedBuf::new(3 * IO_ALIGN).unwrap();
        let n = f.read_at(r.as_mut_slice(), 0).unwrap();
        assert_eq!(n, 2 * IO_ALIGN + 100);
        assert_eq!(&r.as_slice()[..n], &b.as_slice()[..n]);
    }

    #[test]
    fn freshly_written_file_is_cached() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, vec![1u8; 1 << 20]).unwrap();
        assert!(page_cache_fraction(&File::open(&p).unwrap()).unwrap() > 0.9);
        std::fs::write(dir.path().join("e"), b"").unwrap();
        assert_eq!(page_cache_fraction(&File::open(dir.path().join("e")).unwrap()), None);
    }

    #[test]
    fn direct_reads_of_a_pseudo_file_fall_back_to_buffered() {
        let p = Path::new("/sys/devices/system/cpu/possible");
        let f = DirectFile::open(p, Access::Read, true).unwrap();
        let mut b = AlignedBuf::new(IO_ALIGN).unwrap();
        let n = f.read_at(b.as_mut_slice(), 0).unwrap();
        assert_eq!(&b.as_slice()[..n], &std::fs::read(p).unwrap()[..]);
    }

    #[test]
    fn open_missing_names_file() {
        let e = DirectFile::open(Path::new("/nonexistent/x"), Access::Read, true).unwrap_err();
        assert!(e.to_string().starts_with("/nonexistent/x: cannot open"), "{e}");
    }
}
