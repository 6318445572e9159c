//! One radix pass over a bucket: the histogram of one byte digit, and the
//! stable out-of-place scatter by that digit, sequential or on several
//! threads.
//!
//! The histogram also returns the OR of `entry ^ first` over the bucket:
//! its leading zero bytes say how many leading bytes all entries share, so
//! the driver can skip digits that would put every entry in one bucket
//! (skewed and all-equal keys) without another read pass per digit.

use rayon::prelude::*;

/// Entry counts per digit value.
pub(crate) type Counts = [usize; 256];

/// Which byte of the entry a pass sorts by: depth 0 is the most
/// significant byte.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Digit {
    shift: u32,
}

impl Digit {
    /// The digit at `depth` (0..16) bytes from the top.
    pub(crate) fn at_depth(depth: usize) -> Digit {
        debug_assert!(depth < 16);
        Digit {
            shift: 120 - 8 * depth as u32,
        }
    }

    #[inline(always)]
    fn of(self, e: u128) -> usize {
        usize::from((e >> self.shift) as u8)
    }
}

/// Counts digits over `src` and ORs together `e ^ first`.
pub(crate) fn histogram(src: &[u128], digit: Digit, first: u128) -> (Counts, u128) {
    let mut counts = [0usize; 256];
    let mut diff = 0u128;
    for &e in src {
        counts[digit.of(e)] += 1;
        diff |= e ^ first;
    }
    (counts, diff)
}

/// Exclusive prefix sums: where each digit's bucket starts.
fn bucket_starts(counts: &Counts) -> Counts {
    let mut starts = [0usize; 256];
    let mut sum = 0;
    for (start, &c) in starts.iter_mut().zip(counts) {
        *start = sum;
        sum += c;
    }
    starts
}

/// Stable scatter of `src` into `dst` by digit; `counts` must be
/// `histogram(src, digit, _).0`. Safe indexing: the bounds check is a
/// predictable branch and measured no slower than unchecked writes here.
pub(crate) fn scatter(src: &[u128], dst: &mut [u128], digit: Digit, counts: &Counts) {
    let mut offsets = bucket_starts(counts);
    for &e in src {
        let b = digit.of(e);
        dst[offsets[b]] = e;
        offsets[b] += 1;
    }
}

/// Histograms of each `chunk_len` chunk of `src` (one per task), and the
/// OR of `e ^ src[0]` over all of `src`.
pub(crate) fn par_histogram(src: &[u128], digit: Digit, chunk_len: usize) -> (Vec<Counts>, u128) {
    let first = src.first().copied().unwrap_or(0);
    let parts: Vec<(Counts, u128)> = src
        .par_chunks(chunk_len)
        .map(|chunk| histogram(chunk, digit, first))
        .collect();
    let diff = parts.iter().fold(0, |acc, (_, d)| acc | d);
    (parts.into_iter().map(|(c, _)| c).collect(), diff)
}

/// Stable parallel scatter of `src` into `dst`: chunk `c` (of `chunk_len`
/// entries) writes its digit-`b` entries after those of chunks `0..c`, so
/// every chunk owns disjoint output ranges. `hists` must come from
/// `par_histogram(src, digit, chunk_len)`. Returns the bucket sizes.
pub(crate) fn par_scatter(
    src: &[u128],
    dst: &mut [u128],
    digit: Digit,
    chunk_len: usize,
    hists: &[Counts],
) -> Counts {
    assert_eq!(src.len(), dst.len());
    assert_eq!(hists.len(), src.len().div_ceil(chunk_len));
    let (totals, offsets) = chunk_offsets(hists);
    let out = DstPtr {
        ptr: dst.as_mut_ptr(),
        len: dst.len(),
    };
    src.par_chunks(chunk_len)
        .zip(offsets)
        .for_each(|(chunk, off)| {
            // SAFETY: `off` gives, for each digit, the start of a range
            // reserved for this chunk alone: chunk_offsets lays the ranges of
            // all (digit, chunk) pairs end to end, each as long as that
            // chunk's count of the digit, which `hists` holds for the same
            // immutable `src` and `digit`. The ranges tile 0..dst.len(), so
            // writes stay in bounds and never overlap; `dst` is mutably
            // borrowed for this whole call, so nothing else reads it.
            unsafe { scatter_raw(chunk, out, off, digit) }
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
struct DstPtr {
    ptr: *mut u128,
    len: usize,
}

// SAFETY: the pointer is only used by scatter_raw, whose contract gives each
// task disjoint positions, so sending and sharing it between threads cannot
// produce a data race.
unsafe impl Send for DstPtr {}
// SAFETY: as above.
unsafe impl Sync for DstPtr {}

/// Writes each entry of `src` at `out[off[digit]]`, post-incrementing.
///
/// # Safety
///
/// For each digit `b`, `off[b] .. off[b] + (number of entries of src with
/// digit b)` must lie inside `0..out.len`, and no other thread may access
/// those positions during the call.
unsafe fn scatter_raw(src: &[u128], out: DstPtr, mut off: Counts, digit: Digit) {
    for &e in src {
        let b = digit.of(e);
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
                (u128::from(x) << 64) | i as u128
            })
            .collect()
    }

    #[test]
    fn histogram_counts_and_diff() {
        let v = vec![0x01u128 << 120, 0x01u128 << 120 | 5, 0x02u128 << 120];
        let (c, diff) = histogram(&v, Digit::at_depth(0), v[0]);
        assert_eq!((c[1], c[2]), (2, 1));
        assert_eq!(diff.leading_zeros() / 8, 0);
        let (_, diff) = histogram(&v[..2], Digit::at_depth(0), v[0]);
        assert_eq!(diff, 5);
    }

    #[test]
    fn parallel_scatter_equals_sequential() {
        let src = pseudo_random(10_007);
        for depth in [0, 3, 15] {
            let digit = Digit::at_depth(depth);
            let (counts, _) = histogram(&src, digit, src[0]);
            let mut seq = vec![0; src.len()];
            scatter(&src, &mut seq, digit, &counts);
            let (hists, _) = par_histogram(&src, digit, 1000);
            let mut par = vec![0; src.len()];
            let totals = par_scatter(&src, &mut par, digit, 1000, &hists);
            assert_eq!(totals, counts);
            assert_eq!(seq, par);
        }
    }
}
