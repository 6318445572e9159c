//! Read-only memory maps of input files.
//!
//! A sort that fits in memory maps its input instead of copying it into fresh memory: the records
//! or lines are indexed and gathered straight from the page cache, which saves the copy and, on
//! virtual machines where first touch of fresh memory is expensive, most of the kernel time.
//!
//! A mapped file may shrink while it is sorted (another process truncates it). Reading a page past
//! its new end would raise SIGBUS and kill the process; every mapping is therefore registered with
//! [`crate::sigbus`], whose handler turns the rest of the mapping into zeros and marks it, and the
//! owner asks [`MappedFile::intact`] before committing anything read from it: a shrunk input is
//! the error "file shrank while being read", as when it is read rather than mapped.

use crate::error::{IoError, Result};
use crate::sigbus::Registration;
use std::fs::File;
use std::os::unix::io::AsRawFd;
use std::path::Path;
use std::ptr::NonNull;

/// A whole file mapped read-only, its pages populated up front.
pub struct MappedFile {
    ptr: NonNull<u8>,
    len: usize,
    /// The mapped file, to check its size again.
    file: File,
    /// The mapping's entry in the SIGBUS handler's table (None only while being dropped).
    registration: Option<Registration>,
}

// SAFETY: the mapping is read-only and owned exclusively by this value; sharing &[u8] across threads
// is sound.
unsafe impl Send for MappedFile {}
// SAFETY: see above.
unsafe impl Sync for MappedFile {}

impl MappedFile {
    /// Maps the whole of an open regular file of `len` bytes (non-empty); `name` names it in
    /// messages. The descriptor is the input's own: the path is not opened again. None when the
    /// kernel refuses the mapping (ENODEV where a filesystem cannot map, EINVAL, ENOMEM...) or it
    /// cannot be guarded against truncation: the caller reads the file instead.
    pub fn map(file: File, len: u64, name: &Path) -> Result<Option<Self>> {
        if len == 0 {
            return Err(IoError::Internal(format!("{}: cannot map an empty file", name.display())));
        }
        let Ok(len) = usize::try_from(len) else { return Ok(None) };
        // SAFETY: a read-only private mapping of an open file, no address hint; the result is checked.
        let p =
            unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ, libc::MAP_PRIVATE | libc::MAP_POPULATE, file.as_raw_fd(), 0) };
        if p == libc::MAP_FAILED {
            return Ok(None);
        }
        let Some(registration) = crate::sigbus::register(p as usize, len) else {
            // SAFETY: unmapping exactly the mapping just made, of which nothing was handed out.
            unsafe { libc::munmap(p, len) };
            return Ok(None);
        };
        let ptr = NonNull::new(p as *mut u8).ok_or_else(|| IoError::Internal("mmap returned null".into()))?;
        Ok(Some(MappedFile { ptr, len, file, registration: Some(registration) }))
    }

    /// The file's bytes (zeros past the point where it was found to have shrunk).
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: the mapping is valid for len bytes for the life of self and never written.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// Whether everything read from the mapping so far is the file's: no read met the end of a
    /// shrunk file, and the file still has its mapped length. Ask it after the last read of the
    /// mapping and before anything made from it is committed.
    pub fn intact(&self) -> bool {
        let shrank = self.registration.as_ref().is_none_or(|r| r.shrank());
        !shrank && self.file.metadata().is_ok_and(|m| m.len() >= self.len as u64)
    }
}

impl Drop for MappedFile {
    fn drop(&mut self) {
        // Unregistered first: once unmapped, the range may be reused by another mapping.
        self.registration = None;
        // SAFETY: unmapping exactly the region mapped in `map`; no slice of it outlives self.
        unsafe { libc::munmap(self.ptr.as_ptr() as *mut libc::c_void, self.len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, b"hello\nworld\n").unwrap();
        let m = MappedFile::map(File::open(&p).unwrap(), 12, &p).unwrap().unwrap();
        assert_eq!(m.as_slice(), b"hello\nworld\n");
        assert!(m.intact());
    }

    #[test]
    fn a_shrunk_file_reads_as_zeros_and_is_not_intact() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        let page = 4096 * 4;
        std::fs::write(&p, vec![7u8; 4 * page]).unwrap();
        let m = MappedFile::map(File::open(&p).unwrap(), 4 * page as u64, &p).unwrap().unwrap();
        assert!(m.intact());
        std::fs::OpenOptions::new().write(true).open(&p).unwrap().set_len(page as u64 + 10).unwrap();
        // The pages past the new end would raise SIGBUS: the handler turns them into zeros.
        let data = m.as_slice();
        let sum: u64 = data.iter().map(|&b| b as u64).sum();
        assert_eq!(&data[..page + 10], &vec![7u8; page + 10][..]);
        assert!(sum < 7 * 2 * page as u64, "the rest should read as zeros: {sum}");
        assert!(!m.intact());
        // Another mapping of a file that keeps its size is unaffected.
        let q = dir.path().join("g");
        std::fs::write(&q, vec![1u8; page]).unwrap();
        let n = MappedFile::map(File::open(&q).unwrap(), page as u64, &q).unwrap().unwrap();
        assert!(n.as_slice().iter().all(|&b| b == 1));
        assert!(n.intact());
    }

    #[test]
    fn a_file_cut_after_the_last_read_is_not_intact() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, b"abcdef").unwrap();
        let m = MappedFile::map(File::open(&p).unwrap(), 6, &p).unwrap().unwrap();
        std::fs::OpenOptions::new().write(true).open(&p).unwrap().set_len(3).unwrap();
        assert!(!m.intact());
    }

    #[test]
    fn a_refused_mapping_is_none() {
        // sysfs refuses mmap (ENODEV); the caller is to read the file instead.
        let p = Path::new("/sys/devices/system/cpu/possible");
        assert!(MappedFile::map(File::open(p).unwrap(), 4096, p).unwrap().is_none());
    }
}
