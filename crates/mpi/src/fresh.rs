//! Large arrays in anonymous memory of their own ([`Fresh`]), for the in-place path's index and
//! buffers: made for the most they may hold, untouched pages cost nothing, and a failure to map
//! one is an error to agree on, not an abort.

use anyhow::{Context, Result};

/// Plain-data types that anonymous memory (all zeros) holds validly.
pub trait Zeroed: Copy {}
impl Zeroed for u8 {}
impl Zeroed for u16 {}
impl Zeroed for u32 {}
impl Zeroed for u64 {}
impl Zeroed for u128 {}

/// A large array in anonymous memory of its own. Untouched, it costs nothing (no reservation), so
/// it can be made for the most it may hold. (Advised to use huge pages, a receive buffer of a
/// rank's whole range cost more on the development VM, not less: 1.45 s of system time for the
/// job against 0.62 s.)
pub struct Fresh<T: Zeroed> {
    ptr: *mut T,
    len: usize,
    bytes: usize,
}

impl<T: Zeroed> Fresh<T> {
    pub fn new(len: usize) -> Result<Fresh<T>> {
        Fresh::mapped(len, 0)
    }

    /// An array whose pages the kernel makes at once (`MAP_POPULATE`): for one that is written
    /// whole, it saves a fault per page, and moves that cost out of the phase that writes it (the
    /// rounds' buffers' out of the rounds).
    pub fn populated(len: usize) -> Result<Fresh<T>> {
        Fresh::mapped(len, libc::MAP_POPULATE)
    }

    fn mapped(len: usize, flags: libc::c_int) -> Result<Fresh<T>> {
        let bytes = len.max(1).checked_mul(std::mem::size_of::<T>()).context("an array too large for memory")?;
        // SAFETY: a private anonymous mapping, no address hint; the result is checked.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | flags,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            anyhow::bail!("cannot allocate {bytes} bytes: {}", xsort_io::error::os_text(&std::io::Error::last_os_error()));
        }
        Ok(Fresh { ptr: p as *mut T, len, bytes })
    }

    pub fn as_slice(&self) -> &[T] {
        // SAFETY: the mapping holds `len` zero-initialised or written values of a plain-data type
        // for the life of self.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    pub fn as_mut_slice(&mut self) -> &mut [T] {
        // SAFETY: as above, and `&mut self` makes the access exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

// SAFETY: the mapping is owned by this value alone; access follows Rust's borrows of it.
unsafe impl<T: Zeroed + Send> Send for Fresh<T> {}
// SAFETY: see above.
unsafe impl<T: Zeroed + Sync> Sync for Fresh<T> {}

impl<T: Zeroed> Drop for Fresh<T> {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly the mapping made in `new`; no slice of it outlives self.
        unsafe { libc::munmap(self.ptr as *mut libc::c_void, self.bytes) };
    }
}
