//! Page-aligned buffers for direct I/O.
//!
//! Buffers come straight from anonymous `mmap`, so they are page aligned (what O_DIRECT needs), cost
//! nothing until touched, and go back to the kernel on drop instead of lingering in the allocator: the
//! memory budget is honoured by what is mapped, not by what malloc decides to keep.

use crate::error::{IoError, Result};
use std::ptr::NonNull;

/// Alignment of every direct transfer: offset, length and address. 4096 covers 512-byte and 4 KiB
/// logical sectors alike.
pub const IO_ALIGN: usize = 4096;

/// Rounds `n` up to a multiple of [`IO_ALIGN`].
pub const fn align_up(n: usize) -> usize {
    (n + IO_ALIGN - 1) & !(IO_ALIGN - 1)
}

/// Rounds `n` down to a multiple of [`IO_ALIGN`].
pub const fn align_down(n: u64) -> u64 {
    n & !(IO_ALIGN as u64 - 1)
}

/// A fixed-capacity, page-aligned, zero-initialised byte buffer.
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    cap: usize,
}

// SAFETY: AlignedBuf owns its mapping exclusively, like a Box<[u8]>; moving it between threads is fine
// and shared references only permit reads.
unsafe impl Send for AlignedBuf {}
// SAFETY: see above; &AlignedBuf gives only &[u8].
unsafe impl Sync for AlignedBuf {}

impl AlignedBuf {
    /// Maps `capacity` bytes (rounded up to a page), in ordinary 4 KiB pages. Transparent huge pages
    /// are not asked for: on these virtual machines the guest hands free 2 MiB blocks back to the
    /// host, so a fresh huge page costs the host's faults for all of its 512 pages at once; measured
    /// (2026-11-21), first touch of 320 MiB took 0.5-0.9 s in huge pages and 0.14 s in small ones,
    /// and a 1 GB one-pass sort 1.4 s against 1.05 s.
    pub fn new(capacity: usize) -> Result<Self> {
        let cap = align_up(capacity.max(1));
        // SAFETY: an anonymous private mapping with no address hint; the result is checked.
        let p = unsafe {
            libc::mmap(std::ptr::null_mut(), cap, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0)
        };
        if p == libc::MAP_FAILED {
            return Err(IoError::Alloc { bytes: cap, cause: std::io::Error::last_os_error() });
        }
        let ptr = NonNull::new(p as *mut u8).ok_or_else(|| IoError::Internal("mmap returned null".into()))?;
        Ok(AlignedBuf { ptr, cap })
    }

    /// Grows the buffer to at least `capacity` bytes, keeping its contents, without copying them:
    /// the kernel moves the pages (`mremap`), so growing a buffer that holds a long line never
    /// needs the old and the new buffer at once. A smaller `capacity` changes nothing.
    pub fn grow(&mut self, capacity: usize) -> Result<()> {
        let cap = align_up(capacity.max(1));
        if cap <= self.cap {
            return Ok(());
        }
        // SAFETY: ptr/cap are exactly a mapping of ours that nothing borrows (we hold &mut self);
        // MREMAP_MAYMOVE returns a new address (or MAP_FAILED, checked) and unmaps the old one, and
        // the pages beyond the old length are fresh zero pages, as in new().
        let p = unsafe { libc::mremap(self.ptr.as_ptr() as *mut libc::c_void, self.cap, cap, libc::MREMAP_MAYMOVE) };
        if p == libc::MAP_FAILED {
            return Err(IoError::Alloc { bytes: cap, cause: std::io::Error::last_os_error() });
        }
        self.ptr = NonNull::new(p as *mut u8).ok_or_else(|| IoError::Internal("mremap returned null".into()))?;
        self.cap = cap;
        Ok(())
    }

    /// Capacity in bytes (a multiple of [`IO_ALIGN`]).
    pub fn capacity(&self) -> usize {
        self.cap
    }

    /// The whole buffer.
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr is valid for cap bytes for the life of self; mapping is zero-initialised.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.cap) }
    }

    /// The whole buffer, mutably.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, and &mut self guarantees exclusivity.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.cap) }
    }

    /// Raw base pointer, for code that fills disjoint parts from several threads.
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// The buffer as 16-byte integers (sort entries), so that entry arrays are mapped like buffers.
    pub fn as_u128_mut(&mut self) -> &mut [u128] {
        // SAFETY: the mapping is page aligned (more than u128's alignment), its length is a multiple
        // of 16, every bit pattern is a valid u128, and &mut self guarantees exclusivity.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr() as *mut u128, self.cap / 16) }
    }

    /// The buffer as 8-byte integers (line offsets), so that those arrays are mapped like buffers.
    pub fn as_u64_mut(&mut self) -> &mut [u64] {
        // SAFETY: as for as_u128_mut: aligned, a multiple of 8 bytes, any bit pattern valid, exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr() as *mut u64, self.cap / 8) }
    }

    /// Pre-faults every page (Nsort's `-touch`), so page faults are not paid during the timed phases.
    pub fn touch(&mut self) {
        let page = 4096;
        let s = self.as_mut_slice();
        let mut i = 0;
        while i < s.len() {
            // A volatile write so the compiler cannot drop the store to a zero page.
            // SAFETY: i < len, pointer derived from a valid &mut slice.
            unsafe { std::ptr::write_volatile(s.as_mut_ptr().add(i), 0) };
            i += page;
        }
    }
}

/// Faults in the pages of some buffers on a background thread, so that the kernel's cost of fresh
/// memory (zeroing, and on virtual machines the host's own faults) is paid while the reader threads
/// wait for the disk rather than inside each read. Populating writes no data: the buffers may be
/// filled concurrently. Dropping the guard stops and joins the thread.
///
/// Each step is recorded in the counters given to [`Prefault::start`] as one transfer, so that the
/// statistics can report the time spent touching memory (bytes populated, from the first step's
/// start to the last one's end) as a phase of its own.
pub struct Prefault {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    handle: Option<std::thread::JoinHandle<()>>,
}

/// Step of the background prefault: small enough to stay just ahead of 8 MiB reads.
pub const PREFAULT_STEP: usize = 4 << 20;

/// Faults in the `n` bytes at address `at` and records the step in `counters`; false when the
/// kernel cannot (an old kernel without MADV_POPULATE_WRITE: nothing to gain from going on).
///
/// # Safety
/// `at..at + n` must lie inside a live mapping for the whole call.
unsafe fn populate(at: usize, n: usize, counters: &crate::IoCounters) -> bool {
    let started = std::time::Instant::now();
    // SAFETY: the caller guarantees a live mapping; MADV_POPULATE_WRITE only populates page
    // tables, it never changes the contents of present pages (the buffers may be filled meanwhile).
    if unsafe { libc::madvise(at as *mut libc::c_void, n, libc::MADV_POPULATE_WRITE) } != 0 {
        return false;
    }
    counters.record(n as u64, started, false);
    true
}

impl Prefault {
    /// Starts populating `bufs`, in order, front to back, recording each step in `counters`.
    pub fn start(bufs: &[&AlignedBuf], counters: std::sync::Arc<crate::IoCounters>) -> Self {
        use std::sync::atomic::{AtomicBool, Ordering};
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let regions: Vec<(usize, usize)> = bufs.iter().map(|b| (b.ptr.as_ptr() as usize, b.cap)).collect();
        let s = stop.clone();
        let handle = std::thread::Builder::new()
            .name("xsort-prefault".into())
            .spawn(move || {
                for (base, len) in regions {
                    let mut off = 0;
                    while off < len && !s.load(Ordering::Relaxed) {
                        let n = PREFAULT_STEP.min(len - off);
                        // SAFETY: the range lies inside a live mapping (the guard is dropped before
                        // the buffers: see Prefault's contract).
                        if !unsafe { populate(base + off, n, &counters) } {
                            return;
                        }
                        off += n;
                    }
                }
            })
            .ok();
        Prefault { stop, handle }
    }
}

impl Drop for Prefault {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// Faults in buffers a window ahead of a reader whose input length is unknown (a pipe, a pushed
/// input): the buffers are sized to the whole budget, and faulting all of them in would touch
/// memory a short input never uses, so the thread stays at most `window` records ahead of what the
/// reader reports with [`PrefaultAhead::advance`]. Each buffer is given with its bytes per record
/// (the data buffer's record size, an entry array's entry size). Dropping the guard stops and
/// joins the thread.
pub struct PrefaultAhead {
    shared: std::sync::Arc<AheadState>,
    handle: Option<std::thread::JoinHandle<()>>,
}

struct AheadState {
    records: std::sync::atomic::AtomicUsize,
    stop: std::sync::atomic::AtomicBool,
}

impl PrefaultAhead {
    /// Starts populating `bufs` (each with its bytes per record) up to `window` records ahead of
    /// the reader, which starts at record 0, recording each step in `counters`.
    pub fn start(bufs: &[(&AlignedBuf, usize)], window: usize, counters: std::sync::Arc<crate::IoCounters>) -> Self {
        use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
        let shared = std::sync::Arc::new(AheadState { records: AtomicUsize::new(0), stop: AtomicBool::new(false) });
        let mut regions: Vec<(usize, usize, usize, usize)> =
            bufs.iter().map(|(b, per_record)| (b.ptr.as_ptr() as usize, b.cap, *per_record, 0)).collect();
        let s = shared.clone();
        let handle = std::thread::Builder::new()
            .name("xsort-prefault".into())
            .spawn(move || {
                while !s.stop.load(Ordering::Relaxed) {
                    let ahead = s.records.load(Ordering::Relaxed).saturating_add(window);
                    let mut busy = false;
                    for (base, len, per_record, done) in regions.iter_mut() {
                        let limit = ahead.saturating_mul(*per_record).min(*len);
                        if *done >= limit {
                            continue;
                        }
                        let n = PREFAULT_STEP.min(limit - *done);
                        // SAFETY: a range inside a live mapping (the guard is dropped before the
                        // buffers).
                        if !unsafe { populate(*base + *done, n, &counters) } {
                            return;
                        }
                        *done += n;
                        busy = true;
                    }
                    if !busy {
                        if regions.iter().all(|(_, len, _, done)| done >= len) {
                            return;
                        }
                        std::thread::park(); // until the reader advances or the guard drops
                    }
                }
            })
            .ok();
        PrefaultAhead { shared, handle }
    }

    /// Reports that the reader has filled `records` records, letting the thread run further ahead.
    pub fn advance(&self, records: usize) {
        self.shared.records.store(records, std::sync::atomic::Ordering::Relaxed);
        if let Some(h) = &self.handle {
            h.thread().unpark();
        }
    }
}

impl Drop for PrefaultAhead {
    fn drop(&mut self) {
        self.shared.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            h.thread().unpark();
            let _ = h.join();
        }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: ptr/cap are exactly the mapping made in new(); nothing borrows it any more.
        unsafe { libc::munmap(self.ptr.as_ptr() as *mut libc::c_void, self.cap) };
    }
}

impl std::fmt::Debug for AlignedBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AlignedBuf({} bytes)", self.cap)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_and_zeroed() {
        let mut b = AlignedBuf::new(10_000).unwrap();
        assert_eq!(b.capacity(), 12288);
        assert_eq!(b.as_mut_ptr() as usize % IO_ALIGN, 0);
        assert!(b.as_slice().iter().all(|&x| x == 0));
        b.touch();
        b.as_mut_slice()[12287] = 7;
        assert_eq!(b.as_slice()[12287], 7);
    }

    #[test]
    fn grow_keeps_the_contents_and_zeroes_the_rest() {
        let mut b = AlignedBuf::new(8192).unwrap();
        b.as_mut_slice()[..5].copy_from_slice(b"hello");
        b.as_mut_slice()[8191] = 9;
        b.grow(100_000).unwrap();
        assert_eq!(b.capacity(), align_up(100_000));
        assert_eq!(b.as_mut_ptr() as usize % IO_ALIGN, 0);
        assert_eq!(&b.as_slice()[..5], b"hello");
        assert_eq!(b.as_slice()[8191], 9);
        assert!(b.as_slice()[8192..].iter().all(|&x| x == 0));
        b.grow(10).unwrap();
        assert_eq!(b.capacity(), align_up(100_000), "never shrinks");
    }

    /// Pages of `buf` that are resident, by mincore.
    fn resident_pages(buf: &AlignedBuf) -> Vec<bool> {
        let pages = buf.capacity() / 4096;
        let mut vec = vec![0u8; pages];
        // SAFETY: the range is exactly buf's live mapping; vec holds one byte per page.
        let r = unsafe { libc::mincore(buf.ptr.as_ptr() as *mut libc::c_void, buf.capacity(), vec.as_mut_ptr()) };
        assert_eq!(r, 0);
        vec.iter().map(|v| v & 1 == 1).collect()
    }

    /// Waits until `pred` holds of `buf`'s residency, for a few seconds at most.
    fn wait_for(buf: &AlignedBuf, pred: impl Fn(&[bool]) -> bool) -> Vec<bool> {
        for _ in 0..500 {
            let r = resident_pages(buf);
            if pred(&r) {
                return r;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        resident_pages(buf)
    }

    #[test]
    fn prefault_ahead_stays_within_its_window() {
        // 64 pages of 4096-byte "records", a window of 8 records.
        let data = AlignedBuf::new(64 * 4096).unwrap();
        let entries = AlignedBuf::new(64 * 4096 / 2).unwrap();
        let ahead = PrefaultAhead::start(&[(&data, 4096), (&entries, 2048)], 8, Default::default());
        let r = wait_for(&data, |r| r[..8].iter().all(|&p| p));
        assert!(r[..8].iter().all(|&p| p), "the window is faulted in: {r:?}");
        std::thread::sleep(std::time::Duration::from_millis(50));
        let r = resident_pages(&data);
        assert!(r[8..].iter().all(|&p| !p), "nothing beyond the window: {r:?}");
        ahead.advance(20);
        let r = wait_for(&data, |r| r[..28].iter().all(|&p| p));
        assert!(r[..28].iter().all(|&p| p) && r[28..].iter().all(|&p| !p), "the window moved: {r:?}");
        let e = wait_for(&entries, |e| e[..14].iter().all(|&p| p));
        assert!(e[..14].iter().all(|&p| p) && e[14..].iter().all(|&p| !p), "entries by their own size: {e:?}");
        drop(ahead); // joins the thread
    }

    #[test]
    fn prefault_populates_and_counts_what_it_touched() {
        let b = AlignedBuf::new(3 * PREFAULT_STEP + 4096).unwrap();
        let counters = std::sync::Arc::new(crate::IoCounters::default());
        let p = Prefault::start(&[&b], counters.clone());
        // The thread is joined on drop; wait for it to finish its work first.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while counters.bytes() < b.capacity() as u64 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        drop(p);
        let s = counters.snapshot();
        assert_eq!(s.bytes, b.capacity() as u64, "{s:?}");
        assert_eq!(s.transfers, 4, "three full steps and a last page: {s:?}");
        assert!(s.first_start_s.is_some_and(|t| t <= s.last_end_s), "{s:?}");
        assert!(b.as_slice().iter().all(|&x| x == 0), "populating writes no data");
    }

    #[test]
    fn rounding() {
        assert_eq!(align_up(0), 0);
        assert_eq!(align_up(1), 4096);
        assert_eq!(align_up(4096), 4096);
        assert_eq!(align_down(8191), 4096);
    }
}
