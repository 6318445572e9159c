//! Merging sorted u128 runs, and the parallel merge sort built on it.
//!
//! A parallel merge cuts the output into equal parts and finds, for each
//! cut, how many entries every run contributes before it (co-ranking by a
//! binary search over values), so each thread merges its own disjoint
//! output range with no synchronisation. Inside a part, two runs merge with
//! a plain two-way loop and more runs through a [`LoserTree`].
//!
//! Stability: equal entries from lower run indices come first, including
//! across part boundaries. For plain u128 entries equal values are
//! identical, so this only matters to the shape of the code, but it keeps
//! the merge correct for any future payload.

use rayon::prelude::*;

use crate::loser_tree::LoserTree;
use crate::small;
use crate::tuning::{MERGE_PARTS_PER_THREAD, PAR_MERGE_MIN, PAR_MERGE_SORT_MIN};

/// k-way merge of sorted u128 slices into `out`, stable by slice index, on
/// the current rayon thread pool.
///
/// # Panics
///
/// If `out.len()` differs from the total length of `runs`.
pub fn merge_sorted(runs: &[&[u128]], out: &mut [u128]) {
    let total: usize = runs.iter().map(|r| r.len()).sum();
    assert_eq!(out.len(), total, "merge_sorted: out must hold every run");
    // Dropping empty runs keeps the others' relative order, hence stability.
    let runs: Vec<&[u128]> = runs.iter().copied().filter(|r| !r.is_empty()).collect();
    let threads = rayon::current_num_threads();
    if total < PAR_MERGE_MIN || threads == 1 || runs.len() <= 1 {
        return merge_seq(&runs, out);
    }
    let parts = (threads * MERGE_PARTS_PER_THREAD).min(total / (PAR_MERGE_MIN / 2));
    let cuts: Vec<Vec<usize>> =
        (0..=parts).into_par_iter().map(|p| co_rank(&runs, total / parts * p + (total % parts) * p / parts)).collect();
    let mut outs = Vec::with_capacity(parts);
    let mut rest = out;
    for w in cuts.windows(2) {
        let len = w[1].iter().sum::<usize>() - w[0].iter().sum::<usize>();
        let (head, tail) = std::mem::take(&mut rest).split_at_mut(len);
        outs.push((head, &w[0], &w[1]));
        rest = tail;
    }
    outs.into_par_iter().for_each(|(out, lo, hi)| {
        let sub: Vec<&[u128]> = runs.iter().zip(lo.iter().zip(hi)).map(|(r, (&a, &b))| &r[a..b]).collect();
        merge_seq(&sub, out);
    });
}

/// How many entries of each run come before output position `rank` in the
/// stable merge. Finds the smallest value `v` with at least `rank` entries
/// `<= v` (a binary search over the u128 range); every entry below `v`
/// precedes the cut, and the entries equal to `v` that fit are taken from
/// the lowest run indices first.
fn co_rank(runs: &[&[u128]], rank: usize) -> Vec<usize> {
    let count_le = |v: u128| -> usize { runs.iter().map(|r| r.partition_point(|&x| x <= v)).sum() };
    let (mut lo, mut hi) = (0u128, u128::MAX);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if count_le(mid) >= rank {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    let v = lo;
    let below: Vec<usize> = runs.iter().map(|r| r.partition_point(|&x| x < v)).collect();
    let mut left = rank - below.iter().sum::<usize>();
    runs.iter()
        .zip(below)
        .map(|(r, b)| {
            let equal = r[b..].partition_point(|&x| x == v);
            let take = equal.min(left);
            left -= take;
            b + take
        })
        .collect()
}

/// One thread's k-way merge.
fn merge_seq(runs: &[&[u128]], out: &mut [u128]) {
    match runs {
        [] => {}
        [a] => out.copy_from_slice(a),
        [a, b] => merge_two(a, b, out),
        _ => merge_k(runs, out),
    }
}

/// Two-way merge; on ties `a` goes first. The select-and-advance form keeps
/// the loop free of unpredictable branches.
fn merge_two(a: &[u128], b: &[u128], out: &mut [u128]) {
    let (mut i, mut j, mut o) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        let (x, y) = (a[i], b[j]);
        let take_b = y < x;
        out[o] = if take_b { y } else { x };
        i += usize::from(!take_b);
        j += usize::from(take_b);
        o += 1;
    }
    let a_rest = &a[i..];
    out[o..o + a_rest.len()].copy_from_slice(a_rest);
    out[o + a_rest.len()..].copy_from_slice(&b[j..]);
}

/// k-way merge through a loser tree. The runs' heads are cached in an
/// array; an exhausted run's head becomes `u128::MAX` with its `done` flag
/// set, so comparing `(head, done, run index)` orders it after every live
/// run (even one whose head is `u128::MAX`) without a branch on run length.
fn merge_k(runs: &[&[u128]], out: &mut [u128]) {
    let mut heads: Vec<u128> = runs.iter().map(|r| r.first().copied().unwrap_or(u128::MAX)).collect();
    let mut done: Vec<bool> = runs.iter().map(|r| r.is_empty()).collect();
    let mut pos = vec![0usize; runs.len()];
    // `|` and `&` rather than `||` and `&&`: one result to select on, no
    // unpredictable branches.
    let less = |heads: &[u128], done: &[bool], i: usize, j: usize| {
        let (a, b) = (heads[i], heads[j]);
        (a < b) | ((a == b) & ((done[i], i) < (done[j], j)))
    };
    let mut tree = LoserTree::new(runs.len(), |i, j| less(&heads, &done, i, j));
    for slot in out.iter_mut() {
        let w = tree.winner();
        *slot = heads[w];
        pos[w] += 1;
        match runs[w].get(pos[w]) {
            Some(&next) => heads[w] = next,
            None => (heads[w], done[w]) = (u128::MAX, true),
        }
        tree.replay(|i, j| less(&heads, &done, i, j));
    }
}

/// Sorts `entries` ascending as u128 by a parallel merge sort, using
/// `scratch` (same length, contents ignored) as working space.
///
/// Each thread copies one chunk into `scratch` and sorts it there with the
/// standard library's unstable sort (for plain u128 an unstable sort gives
/// exactly the stable result, and pdqsort is a strong sequential kernel);
/// [`merge_sorted`] then merges the chunks back into `entries` in parallel.
///
/// # Panics
///
/// If `scratch.len() != entries.len()`.
pub fn merge_sort(entries: &mut [u128], scratch: &mut [u128]) {
    assert_eq!(entries.len(), scratch.len(), "merge_sort: scratch must be as long as entries");
    let n = entries.len();
    let threads = rayon::current_num_threads();
    if n < PAR_MERGE_SORT_MIN || threads == 1 || small::is_sorted(entries) {
        entries.sort_unstable();
        return;
    }
    let chunk = n.div_ceil(threads);
    scratch.par_chunks_mut(chunk).zip(entries.par_chunks(chunk)).for_each(|(dst, src)| {
        dst.copy_from_slice(src);
        dst.sort_unstable();
    });
    let runs: Vec<&[u128]> = scratch.chunks(chunk).collect();
    merge_sorted(&runs, entries);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn co_rank_splits_ties_by_run_index() {
        let a: &[u128] = &[1, 5, 5, 9];
        let b: &[u128] = &[5, 5, 6];
        let runs = [a, b];
        assert_eq!(co_rank(&runs, 0), vec![0, 0]);
        assert_eq!(co_rank(&runs, 1), vec![1, 0]);
        assert_eq!(co_rank(&runs, 2), vec![2, 0]);
        assert_eq!(co_rank(&runs, 3), vec![3, 0]);
        assert_eq!(co_rank(&runs, 4), vec![3, 1]);
        assert_eq!(co_rank(&runs, 5), vec![3, 2]);
        assert_eq!(co_rank(&runs, 6), vec![3, 3]);
        assert_eq!(co_rank(&runs, 7), vec![4, 3]);
    }

    #[test]
    fn co_rank_handles_extreme_values() {
        let a: &[u128] = &[0, u128::MAX];
        let b: &[u128] = &[u128::MAX, u128::MAX];
        assert_eq!(co_rank(&[a, b], 1), vec![1, 0]);
        assert_eq!(co_rank(&[a, b], 3), vec![2, 1]);
        assert_eq!(co_rank(&[a, b], 4), vec![2, 2]);
    }

    #[test]
    fn merge_two_and_k_small() {
        let mut out = vec![0; 5];
        merge_two(&[1, 3, 5], &[2, 3], &mut out);
        assert_eq!(out, vec![1, 2, 3, 3, 5]);
        let mut out = vec![0; 6];
        merge_k(&[&[3, 4], &[], &[1, 4], &[0, 9]], &mut out);
        assert_eq!(out, vec![0, 1, 3, 4, 4, 9]);
    }
}
