//! One radix pass over a bucket: the histogram of one digit, and the stable
//! out-of-place scatter by that digit, sequential or on several threads.
//!
//! A digit is a window of up to 16 bits starting `depth` bits below the
//! top of the entry. The histogram also returns the OR of `entry ^ first`
//! over the bucket: its leading zero bits say how many leading bits all
//! entries share, so the driver can skip digits that would put every entry
//! in one bucket (skewed and all-equal keys) without a read pass per digit.

use rayon::prelude::*;

use super::stream;
use crate::Word;

/// Counts per digit value of a full 8-bit pass.
pub(crate) type Counts = [usize; 256];

/// A counter type: `usize` for big buckets, `u16` for cache-sized ones (at
/// most 65,535 entries) so that 16,384 counters fit in the L1 cache.
pub(crate) trait Count: Copy + Default {
    fn incr(&mut self);
    fn get(self) -> usize;
    fn set(n: usize) -> Self;
}

impl Count for usize {
    #[inline(always)]
    fn incr(&mut self) {
        *self += 1;
    }
    #[inline(always)]
    fn get(self) -> usize {
        self
    }
    #[inline(always)]
    fn set(n: usize) -> Self {
        n
    }
}

impl Count for u16 {
    #[inline(always)]
    fn incr(&mut self) {
        *self += 1;
    }
    #[inline(always)]
    fn get(self) -> usize {
        usize::from(self)
    }
    #[inline(always)]
    fn set(n: usize) -> Self {
        debug_assert!(u16::try_from(n).is_ok());
        n as u16
    }
}

/// Which bits of an entry a pass sorts by.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Digit {
    shift: u32,
    mask: usize,
}

impl Digit {
    /// The `width`-bit window starting `depth` bits below the top (fewer
    /// bits when fewer remain) of an entry of type `E`. `depth` must be below its width.
    pub(crate) fn new<E: Word>(depth: u32, width: u32) -> Digit {
        debug_assert!(depth < E::BITS && (1..=16).contains(&width));
        let width = width.min(E::BITS - depth);
        Digit { shift: E::BITS - depth - width, mask: (1 << width) - 1 }
    }

    /// How many bits the digit has.
    pub(crate) fn width(self) -> u32 {
        self.mask.count_ones()
    }

    /// How many values the digit takes.
    pub(crate) fn buckets(self) -> usize {
        self.mask + 1
    }

    #[inline(always)]
    pub(crate) fn of<E: Word>(self, e: E) -> usize {
        e.shifted(self.shift) & self.mask
    }
}

/// Adds the digit counts of `src` to `counts` (`digit.buckets() <= N`,
/// `N` a power of two) and returns the OR of `e ^ first`.
pub(crate) fn histogram<E: Word, C: Count, const N: usize>(src: &[E], digit: Digit, first: E, counts: &mut [C; N]) -> E {
    debug_assert!(N.is_power_of_two() && digit.buckets() <= N);
    let mut diff = E::ZERO;
    for &e in src {
        // The mask is a no-op that lets the compiler drop the bounds check.
        counts[digit.of(e) & (N - 1)].incr();
        diff |= e ^ first;
    }
    diff
}

/// Exclusive prefix sums of `counts`: where each digit's bucket starts.
pub(crate) fn bucket_starts<C: Count, const N: usize>(counts: &[C; N]) -> [C; N] {
    let mut starts = [C::default(); N];
    let mut sum = 0;
    for (start, &c) in starts.iter_mut().zip(counts) {
        *start = C::set(sum);
        sum += c.get();
    }
    starts
}

/// Stable scatter of `src` into `dst` by digit; `counts` must be the
/// histogram of `src`. Safe indexing: the bounds check is a predictable
/// branch and measured no slower than unchecked writes.
pub(crate) fn scatter<E: Word, C: Count, const N: usize>(src: &[E], dst: &mut [E], digit: Digit, counts: &[C; N]) {
    let mut offsets = bucket_starts(counts);
    for &e in src {
        let b = digit.of(e) & (N - 1);
        dst[offsets[b].get()] = e;
        offsets[b].incr();
    }
}

/// Histograms of each `chunk_len` chunk of `src` (one per task), and the
/// OR of `e ^ src[0]` over all of `src`.
pub(crate) fn par_histogram<E: Word>(src: &[E], digit: Digit, chunk_len: usize) -> (Vec<Counts>, E) {
    let first = src.first().copied().unwrap_or(E::ZERO);
    let parts: Vec<(Counts, E)> = src
        .par_chunks(chunk_len)
        .map(|chunk| {
            let mut counts = [0; 256];
            let diff = histogram(chunk, digit, first, &mut counts);
            (counts, diff)
        })
        .collect();
    let diff = parts.iter().fold(E::ZERO, |acc, &(_, d)| acc | d);
    (parts.into_iter().map(|(c, _)| c).collect(), diff)
}

/// Stable parallel scatter of `src` into `dst`: chunk `c` (of `chunk_len`
/// entries) writes its digit-`b` entries after those of chunks `0..c`, so
/// every chunk owns disjoint output ranges. `hists` must come from
/// `par_histogram(src, digit, chunk_len)`; `digit` has at most 8 bits.
/// With `streaming`, full cache lines bypass the cache (see [`stream`]).
/// Returns the bucket sizes.
pub(crate) fn par_scatter<E: Word>(src: &[E], dst: &mut [E], digit: Digit, chunk_len: usize, hists: &[Counts], streaming: bool) -> Counts {
    assert_eq!(src.len(), dst.len());
    assert_eq!(hists.len(), src.len().div_ceil(chunk_len));
    let (totals, offsets) = chunk_offsets(hists);
    let out = DstPtr { ptr: dst.as_mut_ptr(), len: dst.len() };
    src.par_chunks(chunk_len).zip(offsets).for_each(|(chunk, off)| {
        // SAFETY: `off` gives, for each digit, the start of a range reserved
        // for this chunk alone: chunk_offsets lays the ranges of all (digit,
        // chunk) pairs end to end, each as long as that chunk's count of the
        // digit, which `hists` holds for the same immutable `src` and
        // `digit`. The ranges tile 0..dst.len(), so writes stay in bounds
        // and never overlap; `dst` is mutably borrowed for this whole call,
        // so nothing else reads it meanwhile.
        unsafe {
            if streaming {
                stream::scatter_streaming(chunk, out.ptr, off, digit);
            } else {
                scatter_raw(chunk, out, off, digit);
            }
        }
    });
    totals
}

/// Per-digit totals, and per chunk the output position of its first entry
/// of each digit.
fn chunk_offsets(hists: &[Counts]) -> (Counts, Vec<Counts>) {
    let mut totals = [0usize; 256];
    for h in hists {
        for (t, &c) in totals.iter_mut().zip(h) {
            *t += c;
        }
    }
    let mut next = bucket_starts(&totals);
    let offsets = hists
        .iter()
        .map(|h| {
            let off = next;
            for (n, &c) in next.iter_mut().zip(h) {
                *n += c;
            }
            off
        })
        .collect();
    (totals, offsets)
}

/// The output slice of a parallel scatter, shared by the chunk tasks.
#[derive(Clone, Copy)]
struct DstPtr<E> {
    ptr: *mut E,
    len: usize,
}

// SAFETY: the pointer is only used by the scatter functions, whose contract
// gives each task disjoint positions, so sending and sharing it between
// threads cannot produce a data race.
unsafe impl<E> Send for DstPtr<E> {}
// SAFETY: as above.
unsafe impl<E> Sync for DstPtr<E> {}

/// Writes each entry of `src` at `out[off[digit]]`, post-incrementing.
///
/// # Safety
///
/// For each digit `b`, `off[b] .. off[b] + (number of entries of src with
/// digit b)` must lie inside `0..out.len`, and no other thread may access
/// those positions during the call.
unsafe fn scatter_raw<E: Word>(src: &[E], out: DstPtr<E>, mut off: Counts, digit: Digit) {
    for &e in src {
        let b = digit.of(e) & 0xFF;
        debug_assert!(off[b] < out.len);
        // SAFETY: in bounds and exclusively ours by the function contract.
        unsafe { out.ptr.add(off[b]).write(e) };
        off[b] += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pseudo_random(n: usize) -> Vec<u128> {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        (0..n)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (u128::from(x) << 64) | (u128::from(x.rotate_left(17)) << 20) | i as u128
            })
            .collect()
    }

    #[test]
    fn digits() {
        let d = Digit::new::<u128>(0, 8);
        assert_eq!((d.of(0xABu128 << 120), d.width(), d.buckets()), (0xAB, 8, 256));
        let d = Digit::new::<u128>(60, 12);
        assert_eq!(d.of(0xABCu128 << 56), 0xABC);
        let d = Digit::new::<u128>(124, 12);
        assert_eq!((d.of(0xF7u128), d.width()), (7, 4));
    }

    #[test]
    fn histogram_counts_and_diff() {
        let v = vec![0x01u128 << 120, 0x01u128 << 120 | 5, 0x02u128 << 120];
        let mut c = [0usize; 256];
        let diff = histogram(&v, Digit::new::<u128>(0, 8), v[0], &mut c);
        assert_eq!((c[1], c[2]), (2, 1));
        assert_eq!(diff.leading_zeros(), 6);
        let mut c = [0u16; 4096];
        assert_eq!(histogram(&v[..2], Digit::new::<u128>(0, 12), v[0], &mut c), 5);
        assert_eq!(c[0x10], 2);
    }

    #[test]
    fn parallel_scatter_equals_sequential() {
        // Miri checks the unsafe scatters on small inputs.
        let src = pseudo_random(if cfg!(miri) { 1_007 } else { 10_007 });
        for depth in [0, 3, 60, 120] {
            let digit = Digit::new::<u128>(depth, 8);
            let mut counts = [0usize; 256];
            histogram(&src, digit, src[0], &mut counts);
            let mut seq = vec![0; src.len()];
            scatter(&src, &mut seq, digit, &counts);
            let (hists, _) = par_histogram(&src, digit, 100);
            for streaming in [false, true] {
                let mut par = vec![0; src.len()];
                let totals = par_scatter(&src, &mut par, digit, 100, &hists, streaming);
                assert_eq!(totals, counts);
                assert_eq!(seq, par, "depth {depth} streaming {streaming}");
            }
        }
    }

    /// The streaming scatter of u64 entries (8 to a line) at every alignment in a line.
    #[test]
    fn streaming_scatter_of_narrow_entries_at_every_alignment() {
        let src: Vec<u64> = pseudo_random(if cfg!(miri) { 300 } else { 3000 }).iter().map(|&e| (e >> 64) as u64).collect();
        let digit = Digit::new::<u64>(0, if cfg!(miri) { 2 } else { 8 });
        let mut counts = [0usize; 256];
        histogram(&src, digit, src[0], &mut counts);
        let mut expected = vec![0; src.len()];
        scatter(&src, &mut expected, digit, &counts);
        let mut backing = vec![0u64; src.len() + 7];
        for skew in 0..8 {
            for chunk_len in [1, 5, 64, src.len()] {
                let dst = &mut backing[skew..skew + src.len()];
                let (hists, _) = par_histogram(&src, digit, chunk_len);
                par_scatter(&src, dst, digit, chunk_len, &hists, true);
                assert_eq!(dst, &expected[..], "skew {skew} chunk {chunk_len}");
            }
        }
    }

    #[test]
    fn streaming_scatter_with_every_alignment_and_tiny_chunks() {
        let src = pseudo_random(if cfg!(miri) { 300 } else { 3000 });
        // Two digit bits: few buckets, so lines fill and stream under Miri.
        let digit = Digit::new::<u128>(0, if cfg!(miri) { 2 } else { 8 });
        let mut counts = [0usize; 256];
        histogram(&src, digit, src[0], &mut counts);
        let mut expected = vec![0; src.len()];
        scatter(&src, &mut expected, digit, &counts);
        let mut backing = vec![0u128; src.len() + 3];
        for skew in 0..4 {
            let chunk_lens = if cfg!(miri) { [5, 64, 300] } else { [1, 3, 64] };
            for chunk_len in chunk_lens.into_iter().chain([src.len()]) {
                let dst = &mut backing[skew..skew + src.len()];
                let (hists, _) = par_histogram(&src, digit, chunk_len);
                par_scatter(&src, dst, digit, chunk_len, &hists, true);
                assert_eq!(dst, &expected[..], "skew {skew} chunk {chunk_len}");
            }
        }
    }
}
