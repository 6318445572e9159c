//! Scatter with non-temporal (streaming) stores, for passes whose output is
//! far larger than the caches.
//!
//! A plain scatter into 256 buckets misses the cache on nearly every store
//! and first reads each destination line from memory (read for ownership).
//! Here each bucket collects its entries in a cache-line buffer (256 x 64
//! bytes, resident in L1) and writes a line with streaming stores once it
//! is complete: the line goes to memory in one burst without being read.
//! Lines only partly owned by this task (where its range for a bucket
//! starts or ends) get ordinary stores, so neighbouring tasks never write
//! the same bytes. On targets other than x86-64 this is the plain scatter.

use super::pass::{Counts, Digit};
use crate::Word;

/// Writes each entry of `src` at `out + off[digit]`, post-incrementing.
///
/// # Safety
///
/// For each digit `b` (at most 8 bits), `off[b] .. off[b] + (number of
/// entries of src with digit b)` must be valid for writes from `out`, and
/// no other thread may access those positions during the call.
#[cfg(target_arch = "x86_64")]
pub(crate) unsafe fn scatter_streaming<E: Word>(src: &[E], out: *mut E, off: Counts, digit: Digit) {
    // Where `out` sits inside its cache line, in entries: an entry is aligned to its size on
    // x86-64 (u128 to 16 bytes since Rust 1.77), so each line holds exactly `lanes` of them.
    let lanes = lanes::<E>();
    let phase = (out as usize / std::mem::size_of::<E>()) & (lanes - 1);
    let slot = |pos: usize| (pos + phase) & (lanes - 1);

    let begin = off;
    let mut next = off;
    let mut lines = [Line([0; 4]); 256];
    for &e in src {
        let b = digit.of(e) & 0xFF;
        let pos = next[b];
        lines[b].set(slot(pos), e);
        next[b] = pos + 1;
        if slot(pos) != lanes - 1 {
            continue;
        }
        // `pos` completed the line holding positions pos+1-lanes ..= pos.
        if pos + 1 >= begin[b] + lanes {
            // SAFETY: positions pos+1-lanes ..= pos all belong to this task's
            // range for `b` (contract), and `out + pos + 1 - lanes` is 64-byte
            // aligned (slot 0).
            unsafe { store_line(out.add(pos + 1 - lanes), &lines[b]) };
        } else {
            // SAFETY: begin[b] ..= pos is this task's (contract).
            unsafe { store_plain(out, &lines[b], begin[b]..pos + 1, phase) };
        }
    }
    for b in 0..256 {
        // The last, incomplete line of each bucket: its slots before
        // slot(next[b]), and never before the range begins.
        let from = begin[b].max(next[b].saturating_sub(slot(next[b])));
        // SAFETY: from .. next[b] lies inside this task's range for `b`.
        unsafe { store_plain(out, &lines[b], from..next[b], phase) };
    }
    // Streaming stores are weakly ordered: make them visible before the
    // task reports completion to other threads.
    // SAFETY: sfence has no preconditions; SSE is baseline on x86-64.
    #[cfg(not(miri))]
    unsafe {
        std::arch::x86_64::_mm_sfence()
    };
}

// The line arithmetic above needs entries aligned to their size.
#[cfg(target_arch = "x86_64")]
const _: () = assert!(std::mem::align_of::<u128>() == 16 && std::mem::align_of::<u64>() == 8);

/// Entries of type `E` in a 64-byte line.
#[cfg(target_arch = "x86_64")]
const fn lanes<E>() -> usize {
    64 / std::mem::size_of::<E>()
}

/// One cache line of entries (4 u128 or 8 u64), aligned like the destination's lines.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([u128; 4]);

#[cfg(target_arch = "x86_64")]
impl Line {
    /// Puts `e` in slot `slot` (taken modulo the line's slots).
    #[inline(always)]
    fn set<E: Word>(&mut self, slot: usize, e: E) {
        let slot = slot & (lanes::<E>() - 1);
        // SAFETY: the line's 64 bytes, aligned to 64, hold `lanes::<E>()` entries of type E
        // (an integer, so any bytes are a valid one), and `slot` is below that.
        unsafe { self.0.as_mut_ptr().cast::<E>().add(slot).write(e) }
    }

    /// The entry in slot `slot` (taken modulo the line's slots).
    #[inline(always)]
    fn get<E: Word>(&self, slot: usize) -> E {
        let slot = slot & (lanes::<E>() - 1);
        // SAFETY: as in `set`.
        unsafe { self.0.as_ptr().cast::<E>().add(slot).read() }
    }
}

/// Writes a full line with streaming stores.
///
/// # Safety
///
/// `dst` must be 64-byte aligned, valid for 64 bytes of writes and owned
/// by the caller.
#[cfg(all(target_arch = "x86_64", not(miri)))]
#[inline(always)]
unsafe fn store_line<E>(dst: *mut E, line: &Line) {
    use std::arch::x86_64::{__m128i, _mm_load_si128, _mm_stream_si128};
    let src = line.0.as_ptr().cast::<__m128i>();
    let dst = dst.cast::<__m128i>();
    for i in 0..4 {
        // SAFETY: both pointers are 16-byte aligned (64-byte aligned bases,
        // 16-byte steps) and in bounds by the caller's contract; SSE2 is
        // baseline on x86-64.
        unsafe { _mm_stream_si128(dst.add(i), _mm_load_si128(src.add(i))) };
    }
}

/// Miri cannot run the streaming-store instruction; a plain copy lets it
/// check everything else in this file.
///
/// # Safety
///
/// As for the streaming version.
#[cfg(all(target_arch = "x86_64", miri))]
unsafe fn store_line<E>(dst: *mut E, line: &Line) {
    // SAFETY: valid and owned by the caller's contract; `line` is a local.
    unsafe { std::ptr::copy_nonoverlapping(line.0.as_ptr(), dst.cast::<u128>(), 4) };
}

/// Copies the buffered entries for `range` to `out` with ordinary stores.
///
/// # Safety
///
/// `range` must be valid for writes from `out` and owned by the caller.
#[cfg(target_arch = "x86_64")]
unsafe fn store_plain<E: Word>(out: *mut E, line: &Line, range: std::ops::Range<usize>, phase: usize) {
    for pos in range {
        // SAFETY: the caller owns `pos`.
        unsafe { out.add(pos).write(line.get(pos + phase)) };
    }
}

/// The portable fallback: a plain scatter.
///
/// # Safety
///
/// As for the x86-64 version.
#[cfg(not(target_arch = "x86_64"))]
pub(crate) unsafe fn scatter_streaming<E: Word>(src: &[E], out: *mut E, mut off: Counts, digit: Digit) {
    for &e in src {
        let b = digit.of(e) & 0xFF;
        // SAFETY: in bounds and exclusively ours by the function contract.
        unsafe { out.add(off[b]).write(e) };
        off[b] += 1;
    }
}
