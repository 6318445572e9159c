//! Page-aligned heap buffers for direct I/O.
//!
//! `O_DIRECT` transfers need the user buffer, the file offset and the length
//! aligned to the device's logical block size; 4 KiB covers every device in
//! practice. Large buffers are aligned to 2 MiB and advised to use huge
//! pages (`MADV_HUGEPAGE`), to take fewer first-touch page faults where the
//! kernel backs them with huge pages; they are allocated once and reused.
//! (On the development VM fresh huge pages were measured slower than 4 KiB
//! ones, because the guest hands free 2 MiB blocks back to the host: xsort's
//! own sort buffers use small pages for that reason, see docs/BENCHMARKS.md.)

use std::alloc::{self, Layout};
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

use crate::error::{Error, Result};

/// Alignment every direct transfer honours.
pub const DIRECT_ALIGN: usize = 4096;

const HUGE_PAGE: usize = 2 * 1024 * 1024;

/// A zero-initialised, page-aligned, fixed-size byte buffer.
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    layout: Layout,
}

// SAFETY: AlignedBuf owns its allocation exclusively (like a Box<[u8]>), so
// moving it to or sharing it between threads is as safe as for Box<[u8]>.
unsafe impl Send for AlignedBuf {}
// SAFETY: shared access only hands out `&[u8]`; see Send.
unsafe impl Sync for AlignedBuf {}

impl AlignedBuf {
    /// A zeroed buffer of `len` bytes rounded up to a multiple of 4 KiB.
    pub fn new(len: usize) -> Result<AlignedBuf> {
        let size = round_up(len.max(1), DIRECT_ALIGN);
        let align = if size >= HUGE_PAGE { HUGE_PAGE } else { DIRECT_ALIGN };
        let layout = Layout::from_size_align(size, align).map_err(|e| Error::Internal(format!("buffer layout for {size} bytes: {e}")))?;
        // SAFETY: the layout has a non-zero size (at least DIRECT_ALIGN).
        let raw = unsafe { alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).ok_or_else(|| Error::Internal(format!("out of memory allocating {size} bytes")))?;
        if align == HUGE_PAGE {
            // SAFETY: the range is exactly our own live allocation; madvise
            // only changes paging policy, and failure is harmless (ignored).
            unsafe {
                libc::madvise(raw.cast(), size, libc::MADV_HUGEPAGE);
            }
        }
        Ok(AlignedBuf { ptr, layout })
    }

    /// The buffer's size in bytes (a multiple of 4 KiB).
    pub fn capacity(&self) -> usize {
        self.layout.size()
    }
}

impl Deref for AlignedBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: ptr points to layout.size() initialised (zeroed at
        // allocation) bytes that live as long as self.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.layout.size()) }
    }
}

impl DerefMut for AlignedBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in deref, and &mut self guarantees exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.layout.size()) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: ptr was returned by alloc_zeroed with this very layout and
        // is freed exactly once, here.
        unsafe { alloc::dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

/// `n` rounded up to a multiple of `to` (a power of two or any positive number).
pub const fn round_up(n: usize, to: usize) -> usize {
    n.div_ceil(to) * to
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_aligned_zeroed_and_rounded() {
        for len in [1usize, 100, 4096, 4097, 3 * 1024 * 1024] {
            let mut buf = AlignedBuf::new(len).expect("allocation");
            assert_eq!(buf.as_ptr() as usize % DIRECT_ALIGN, 0);
            assert_eq!(buf.capacity() % DIRECT_ALIGN, 0);
            assert!(buf.capacity() >= len);
            assert!(buf.iter().all(|&b| b == 0));
            buf[len - 1] = 1;
        }
    }
}
