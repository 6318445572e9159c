//! Groups of sorted entries that share a key prefix.
//!
//! An entry holds only a prefix of a long key, so entries with equal
//! prefixes are ordered by record position, not by key; the sorter re-sorts
//! each such group with a full key comparison. Finding the groups is one
//! read of the entries, split across threads for large inputs.

use std::ops::Range;

use rayon::prelude::*;

use crate::tuning::PAR_SCAN_MIN;
use crate::Word;

/// Sorted groups of entries whose top `prefix_bits` bits are equal and that
/// hold more than one entry, as index ranges into `entries` (which must be
/// sorted ascending). `prefix_bits` above the entry's width acts as all of it; 0 makes all
/// entries one group.
pub fn equal_prefix_runs<E: Word>(entries: &[E], prefix_bits: u32) -> Vec<Range<usize>> {
    let mask = E::top_bits(prefix_bits);
    let n = entries.len();
    if n < PAR_SCAN_MIN {
        return runs_in(entries, mask, 0..n);
    }
    let pieces = rayon::current_num_threads() * 4;
    let bounds = piece_bounds(entries, mask, pieces);
    bounds.par_windows(2).map(|w| runs_in(entries, mask, w[0]..w[1])).flatten_iter().collect()
}

/// The groups of more than one entry inside `range`, which must not split a
/// group.
fn runs_in<E: Word>(entries: &[E], mask: E, range: Range<usize>) -> Vec<Range<usize>> {
    let mut runs = Vec::new();
    let mut start = range.start;
    for i in range.start + 1..=range.end {
        let ends = i == range.end || entries[i] & mask != entries[start] & mask;
        if ends {
            if i - start > 1 {
                runs.push(start..i);
            }
            start = i;
        }
    }
    runs
}

/// Splits `0..len` into about `pieces` ranges, moving each boundary forward
/// (binary search, the entries being sorted) so that no group is split.
fn piece_bounds<E: Word>(entries: &[E], mask: E, pieces: usize) -> Vec<usize> {
    let n = entries.len();
    let mut bounds = vec![0];
    for p in 1..pieces {
        let target = (n * p / pieces).max(*bounds.last().unwrap_or(&0));
        if target == 0 || target >= n {
            continue;
        }
        let prefix = entries[target - 1] & mask;
        let end = target + entries[target..].partition_point(|&e| e & mask <= prefix);
        if end > *bounds.last().unwrap_or(&0) && end < n {
            bounds.push(end);
        }
    }
    bounds.push(n);
    bounds
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_examples() {
        let v: Vec<u128> = vec![1, 1, 2, 3, 3, 3, 4];
        assert_eq!(equal_prefix_runs(&v, 128), vec![0..2, 3..6]);
        assert_eq!(equal_prefix_runs(&v, 0), vec![0..7]);
        assert_eq!(equal_prefix_runs(&v, 126), vec![0..6]);
        assert_eq!(equal_prefix_runs::<u128>(&[], 8), vec![]);
        assert_eq!(equal_prefix_runs(&[5u128], 0), vec![]);
    }

    #[test]
    fn piece_bounds_never_split_a_group() {
        let v: Vec<u128> = (0..1000u128).map(|i| (i / 300) << 100).collect();
        let b = piece_bounds(&v, <u128 as Word>::top_bits(28), 7);
        assert_eq!(b, vec![0, 300, 600, 900, 1000]);
    }
}
