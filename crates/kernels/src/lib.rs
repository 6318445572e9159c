//! Pure sorting kernels for xsort: no I/O, only slices.
//!
//! The sorter turns each record into one `u128` *entry*: the top bits hold
//! a normalized, byte-comparable key prefix (the key's first byte is the
//! entry's most significant byte), the low bits the record's position.
//! Sorting entries ascending as plain integers therefore sorts by key with
//! ties in input order. This crate sorts and merges such entries (the radix
//! sort and its helpers also `u64` ones, see [`Word`]):
//!
//! - [`radix_sort`]: parallel MSD radix sort, the default kernel;
//! - [`merge_sort`]: parallel merge sort, the comparison-based alternative;
//! - [`sort_entries`]: dispatch on [`Method`]; [`sort_entries_in_pieces`]
//!   hands the sorted entries over in ascending pieces as they are done;
//!   [`sort_entries_until`] gives up when a flag is set;
//! - [`merge_sorted`]: parallel k-way merge of sorted runs;
//! - [`LoserTree`]: the tournament tree behind k-way merges, also for the
//!   sorter's merges of runs read from disk;
//! - [`equal_prefix_runs`]: groups whose prefixes tie, for re-sorting by
//!   the full key;
//! - [`prefetch`]: software prefetch for gathers of records in sorted order;
//! - [`stream`]: copies into large outputs with streaming stores.
//!
//! All parallel kernels run on the current rayon thread pool, so the caller
//! picks the thread count with `ThreadPool::install`.

mod loser_tree;
mod merge;
pub mod prefetch;
mod radix;
mod runs;
mod small;
pub mod stream;
mod tuning;
mod word;

pub use loser_tree::LoserTree;
pub use merge::{merge_sort, merge_sorted};
pub use radix::{radix_sort, radix_sort_pieces, radix_sort_until};
pub use runs::equal_prefix_runs;
pub use word::Word;

/// Which in-memory kernel to use (Nsort's `-method=radix|merge`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Method {
    /// [`radix_sort`]: fastest on normalized keys, the default.
    #[default]
    Radix,
    /// [`merge_sort`]: comparison based.
    Merge,
}

/// Sorts `entries` ascending as u128 with the chosen kernel, using
/// `scratch` (same length, contents ignored) as working space. `key_bytes`
/// is the radix sort's hint (see [`radix_sort`]); the merge sort ignores it.
///
/// # Panics
///
/// If `scratch.len() != entries.len()`.
pub fn sort_entries(method: Method, entries: &mut [u128], scratch: &mut [u128], key_bytes: usize) {
    match method {
        Method::Radix => radix_sort(entries, scratch, key_bytes),
        Method::Merge => merge_sort(entries, scratch),
    }
}

/// [`sort_entries`] that gives up once `stop` is set (see [`radix_sort_until`]; the merge sort
/// runs to its end and only reports the flag). Returns whether the sort finished; when it did not,
/// `entries` and `scratch` hold unspecified contents.
///
/// # Panics
///
/// If `scratch.len() != entries.len()`.
pub fn sort_entries_until(
    method: Method,
    entries: &mut [u128],
    scratch: &mut [u128],
    key_bytes: usize,
    stop: &std::sync::atomic::AtomicBool,
) -> bool {
    match method {
        Method::Radix => radix_sort_until(entries, scratch, key_bytes, stop),
        Method::Merge => {
            merge_sort(entries, scratch);
            !stop.load(std::sync::atomic::Ordering::Relaxed)
        }
    }
}

/// [`sort_entries`] that hands the sorted entries over in consecutive
/// ascending pieces, as [`radix_sort_pieces`] does; the merge sort hands
/// them over as one piece.
///
/// # Panics
///
/// If `scratch.len() != entries.len()`.
pub fn sort_entries_in_pieces<'a>(
    method: Method,
    entries: &'a mut [u128],
    scratch: &'a mut [u128],
    key_bytes: usize,
    mut emit: impl FnMut(&'a mut [u128], &'a mut [u128]),
) {
    match method {
        Method::Radix => radix_sort_pieces(entries, scratch, key_bytes, emit),
        Method::Merge => {
            merge_sort(entries, scratch);
            emit(entries, scratch);
        }
    }
}
