//! Small helpers shared by the kernels: the insertion-sort base case, and
//! sortedness checks and copies that go parallel on large slices.

use rayon::prelude::*;

use crate::tuning::PAR_SCAN_MIN;
use crate::Word;

/// Sorts a short slice in place. Insertion sort: for the few dozen entries
/// a radix bucket ends with it beats anything with setup cost.
///
/// Radix buckets hand it mostly ordered data where an entry moves zero or
/// one place far more often than further, and whether it moves is a coin
/// toss that a branch predictor loses. So the first step is a branch-free
/// compare-and-swap against the running maximum (which is what `v[i - 1]`
/// holds, kept in registers so no iteration waits for the last one's
/// store), and only a move of two or more places takes a branch, one that
/// is rarely taken and so well predicted.
pub(crate) fn insertion_sort<E: Word>(v: &mut [E]) {
    if v.len() < 2 {
        return;
    }
    if v[1] < v[0] {
        v.swap(0, 1);
    }
    let mut max = v[1];
    for i in 2..v.len() {
        let x = v[i];
        // Select by mask: the compiler turns an `if` here back into a
        // branch (measured), the very mispredict this avoids.
        let mask = E::mask_if(max > x);
        v[i - 1] = max ^ ((max ^ x) & mask);
        let new_max = x ^ ((x ^ max) & mask);
        v[i] = new_max;
        // v[i - 2] <= max, so this also means x moved; testing only this
        // leaves one rarely taken branch (measured: testing both made the
        // compiler branch on the coin toss again).
        if v[i - 2] > x {
            let mut j = i - 1;
            while j > 0 && v[j - 1] > x {
                v[j] = v[j - 1];
                j -= 1;
            }
            v[j] = x;
        }
        max = new_max;
    }
}

/// Whether `v` is ascending; checks chunks on several threads when `v` is
/// large. Stops early (on every thread) at the first descent, so random
/// input costs next to nothing. (`slice::is_sorted` needs Rust 1.82; the
/// workspace promises 1.80.)
pub(crate) fn is_sorted<E: Word>(v: &[E]) -> bool {
    is_ordered_by(v, |a, b| a <= b)
}

/// Whether `v` is descending (ties allowed), like [`is_sorted`].
pub(crate) fn is_descending<E: Word>(v: &[E]) -> bool {
    is_ordered_by(v, |a, b| a >= b)
}

/// Whether `in_order` holds for every adjacent pair of `v`.
fn is_ordered_by<E: Word>(v: &[E], in_order: impl Fn(E, E) -> bool + Sync) -> bool {
    let chunk_ok = |c: &[E]| c.windows(2).all(|w| in_order(w[0], w[1]));
    if v.len() < PAR_SCAN_MIN {
        return chunk_ok(v);
    }
    let chunk = PAR_SCAN_MIN / 2;
    // Each chunk also compares its first element with its predecessor, so
    // chunk boundaries are checked too.
    v.par_chunks(chunk).enumerate().all(|(i, c)| {
        let boundary_ok = i == 0 || in_order(v[i * chunk - 1], c[0]);
        boundary_ok && chunk_ok(c)
    })
}

/// Reverses `v`, on several threads when large.
pub(crate) fn reverse<E: Word>(v: &mut [E]) {
    if v.len() < PAR_SCAN_MIN {
        v.reverse();
        return;
    }
    // Swap the first half with the mirrored second half (the middle entry
    // of an odd length stays put).
    let half = v.len() / 2;
    let (front, rest) = v.split_at_mut(half);
    let middle = rest.len() - half;
    let back = &mut rest[middle..];
    let chunk = PAR_SCAN_MIN / 2;
    front.par_chunks_mut(chunk).zip(back.par_rchunks_mut(chunk)).for_each(|(f, b)| {
        for (x, y) in f.iter_mut().zip(b.iter_mut().rev()) {
            std::mem::swap(x, y);
        }
    });
}

/// Reads one entry per 64-byte cache line of `v`, in order, so that a
/// scatter into `v` that follows finds every line in the cache.
///
/// A scatter with thousands of destinations that misses the cache reads
/// each line from memory before writing it (read for ownership), one
/// random miss after another; this sequential read costs a fraction of
/// that, because the hardware prefetcher streams it. Measured: the radix
/// sort of 10M random entries ran about 1.25x faster with it.
pub(crate) fn touch_lines<E: Word>(v: &[E]) {
    let mut acc = E::ZERO;
    for line in v.chunks(64 / std::mem::size_of::<E>()) {
        acc ^= line[0];
    }
    // Keeps the loads from being optimised away.
    std::hint::black_box(acc);
}

/// `dst.copy_from_slice(src)`, on several threads when large.
pub(crate) fn copy<E: Word>(src: &[E], dst: &mut [E]) {
    if src.len() < PAR_SCAN_MIN {
        dst.copy_from_slice(src);
        return;
    }
    let chunk = PAR_SCAN_MIN / 2;
    dst.par_chunks_mut(chunk).zip(src.par_chunks(chunk)).for_each(|(d, s)| d.copy_from_slice(s));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insertion_sort_sorts() {
        let mut v: Vec<u128> = vec![5, 1, 4, 1, u128::MAX, 0, 3];
        insertion_sort(&mut v);
        assert_eq!(v, vec![0, 1, 1, 3, 4, 5, u128::MAX]);
        let mut empty: Vec<u128> = vec![];
        insertion_sort(&mut empty);
        for n in 0..40u128 {
            let mut desc: Vec<u128> = (0..n).rev().collect();
            insertion_sort(&mut desc);
            assert_eq!(desc, (0..n).collect::<Vec<_>>());
        }
    }

    #[test]
    fn is_sorted_checks_chunk_boundaries() {
        let mut v: Vec<u128> = (0..(PAR_SCAN_MIN as u128 * 3)).collect();
        assert!(is_sorted(&v));
        // A descent exactly across a chunk boundary.
        let b = PAR_SCAN_MIN / 2;
        v.swap(b - 1, b);
        assert!(!is_sorted(&v));
        assert!(is_sorted::<u128>(&[]));
        assert!(is_sorted(&[7u128]));
    }

    #[test]
    fn descending_and_reverse_large_and_small() {
        for n in [0, 1, 2, 7, PAR_SCAN_MIN + 17, 3 * PAR_SCAN_MIN] {
            let mut v: Vec<u128> = (0..n as u128).rev().map(|x| x / 3).collect();
            assert!(is_descending(&v), "n {n}");
            reverse(&mut v);
            assert_eq!(v, (0..n as u128).map(|x| x / 3).collect::<Vec<_>>(), "n {n}");
            assert!(is_sorted(&v));
            assert_eq!(is_descending(&v), n < 4, "n {n}");
        }
    }

    #[test]
    fn copy_copies_large_and_small() {
        for n in [0, 5, PAR_SCAN_MIN + 17] {
            let src: Vec<u128> = (0..n as u128).map(|x| x * 3).collect();
            let mut dst = vec![0u128; n];
            copy(&src, &mut dst);
            assert_eq!(src, dst);
        }
    }
}
