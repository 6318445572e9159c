//! Read-only memory maps of input files.
//!
//! A text sort that fits in memory maps its input instead of copying it into fresh memory: the lines
//! are indexed and gathered straight from the page cache, which saves the copy and, on virtual
//! machines where first touch of fresh memory is expensive, most of the kernel time. The file must
//! not be truncated while mapped (reading a page past the new end raises SIGBUS), as with any tool
//! that maps its input.

use crate::error::{IoError, Result};
use std::fs::File;
use std::os::unix::io::AsRawFd;
use std::path::Path;
use std::ptr::NonNull;

/// A whole file mapped read-only, its pages populated up front.
pub struct MappedFile {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is read-only and owned exclusively by this value; sharing &[u8] across threads
// is sound.
unsafe impl Send for MappedFile {}
// SAFETY: see above.
unsafe impl Sync for MappedFile {}

impl MappedFile {
    /// Maps the whole of an open regular file of `len` bytes (non-empty); `name` names it in
    /// messages. The descriptor is the input's own: the path is not opened again. None when the
    /// kernel refuses the mapping (ENODEV where a filesystem cannot map, EINVAL, ENOMEM...): the
    /// caller reads the file instead.
    pub fn map(file: &File, len: u64, name: &Path) -> Result<Option<Self>> {
        if len == 0 {
            return Err(IoError::Internal(format!("{}: cannot map an empty file", name.display())));
        }
        let Ok(len) = usize::try_from(len) else { return Ok(None) };
        // SAFETY: a read-only private mapping of an open file, no address hint; the result is checked.
        let p = unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ, libc::MAP_PRIVATE | libc::MAP_POPULATE, file.as_raw_fd(), 0) };
        if p == libc::MAP_FAILED {
            return Ok(None);
        }
        let ptr = NonNull::new(p as *mut u8).ok_or_else(|| IoError::Internal("mmap returned null".into()))?;
        Ok(Some(MappedFile { ptr, len }))
    }

    /// The file's bytes.
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: the mapping is valid for len bytes for the life of self and never written.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for MappedFile {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly the region mapped in open; no slice of it outlives self.
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
        let m = MappedFile::map(&File::open(&p).unwrap(), 12, &p).unwrap().unwrap();
        assert_eq!(m.as_slice(), b"hello\nworld\n");
    }

    #[test]
    fn a_refused_mapping_is_none() {
        // sysfs refuses mmap (ENODEV); the caller is to read the file instead.
        let p = Path::new("/sys/devices/system/cpu/possible");
        assert!(MappedFile::map(&File::open(p).unwrap(), 4096, p).unwrap().is_none());
    }
}
