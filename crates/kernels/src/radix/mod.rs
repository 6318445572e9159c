//! Parallel MSD radix sort of u128 entries on 8-bit digits.
//!
//! Each bucket is scattered out of place between `entries` and `scratch`
//! (the two swap roles at every level), starting from the most significant
//! byte. Buckets large enough run their histogram and scatter on several
//! threads (per-chunk histograms, prefix sums, scatter into disjoint
//! ranges), so one huge bucket of a skewed input still uses every thread;
//! the children of a large bucket are rayon tasks. Digits that every entry
//! of a bucket shares are skipped, small buckets finish with insertion
//! sort, and buckets whose key bytes are exhausted stop as soon as they are
//! found sorted (scatters are stable, so entries made in index order are).
//! Recursion depth is at most 16: every level consumes at least one byte.

mod pass;

use rayon::prelude::*;

use crate::small;
use crate::tuning::RadixConfig;
use pass::{Counts, Digit};

/// Sorts `entries` ascending as u128, using `scratch` (same length, contents
/// ignored) as working space.
///
/// `key_bytes` (1..=16) says how many most-significant bytes hold the key
/// prefix. It is only a hint: once a bucket has used up that many bytes the
/// sort checks whether the bucket is already in order before radixing
/// further, so the result equals a full u128 sort for any input. Values
/// above 16 act as 16. Runs on the current rayon thread pool.
///
/// # Panics
///
/// If `scratch.len() != entries.len()`.
pub fn radix_sort(entries: &mut [u128], scratch: &mut [u128], key_bytes: usize) {
    radix_sort_with(&RadixConfig::DEFAULT, entries, scratch, key_bytes);
}

/// [`radix_sort`] with explicit thresholds (the tests use tiny ones).
pub(crate) fn radix_sort_with(
    cfg: &RadixConfig,
    entries: &mut [u128],
    scratch: &mut [u128],
    key_bytes: usize,
) {
    assert_eq!(
        entries.len(),
        scratch.len(),
        "radix_sort: scratch must be as long as entries"
    );
    // Already-sorted input (a sorted file sorted again) costs one read;
    // random input fails at the first pair.
    if small::is_sorted(entries) {
        return;
    }
    let ctx = Ctx {
        cfg: *cfg,
        key_bytes: key_bytes.min(16),
        chunks: rayon::current_num_threads() * cfg.chunks_per_thread,
    };
    let root = Bucket {
        data: entries,
        buf: scratch,
        data_is_out: true,
        depth: 0,
    };
    sort_bucket(&ctx, root);
}

/// What every bucket of one sort needs to know.
struct Ctx {
    cfg: RadixConfig,
    key_bytes: usize,
    /// How many chunks a parallel pass splits a bucket into.
    chunks: usize,
}

/// Entries that share their first `depth` bytes. `data` holds them; `buf`
/// is the same range of the other array. `data_is_out` says whether `data`
/// lies in the caller's `entries`; if not, the sorted bucket must be
/// written to `buf`.
struct Bucket<'a> {
    data: &'a mut [u128],
    buf: &'a mut [u128],
    data_is_out: bool,
    depth: usize,
}

impl Bucket<'_> {
    /// Puts a bucket whose `data` is already in order where it belongs.
    fn finish(self) {
        if !self.data_is_out {
            small::copy(self.data, self.buf);
        }
    }

    /// Sorts a small bucket into where it belongs.
    fn finish_small(self) {
        if self.data_is_out {
            small::insertion_sort(self.data);
        } else {
            self.buf.copy_from_slice(self.data);
            small::insertion_sort(self.buf);
        }
    }
}

/// The outcome of one histogram (and maybe scatter) over a bucket.
enum Step {
    /// Every entry is identical: nothing to sort.
    AllEqual,
    /// Every entry shares the bytes up to this depth: radix from there.
    Skip(usize),
    /// Scattered into `buf`; these are the children's sizes.
    Scattered(Counts),
}

/// Sorts one bucket, then its children.
fn sort_bucket(ctx: &Ctx, mut b: Bucket<'_>) {
    loop {
        if b.data.len() <= ctx.cfg.small_sort {
            return b.finish_small();
        }
        // Depth 16 means all 16 bytes are shared: all entries are equal.
        let keys_done = b.depth >= ctx.key_bytes || b.depth >= 16;
        if keys_done && small::is_sorted(b.data) {
            return b.finish();
        }
        match radix_pass(ctx, &mut b) {
            Step::AllEqual => return b.finish(),
            Step::Skip(depth) => b.depth = depth,
            Step::Scattered(counts) => return sort_children(ctx, b, &counts),
        }
    }
}

/// Histograms the bucket at its depth and, unless the digit is shared by
/// every entry, scatters it into `buf`.
fn radix_pass(ctx: &Ctx, b: &mut Bucket<'_>) -> Step {
    let digit = Digit::at_depth(b.depth);
    let n = b.data.len();
    if n < ctx.cfg.par_pass {
        let (counts, diff) = pass::histogram(b.data, digit, b.data[0]);
        if let Some(step) = shared_prefix_step(diff, b.depth) {
            return step;
        }
        pass::scatter(b.data, b.buf, digit, &counts);
        return Step::Scattered(counts);
    }
    let chunks = ctx.chunks.min(n / ctx.cfg.min_chunk).max(1);
    let chunk_len = n.div_ceil(chunks);
    let (hists, diff) = pass::par_histogram(b.data, digit, chunk_len);
    if let Some(step) = shared_prefix_step(diff, b.depth) {
        return step;
    }
    Step::Scattered(pass::par_scatter(b.data, b.buf, digit, chunk_len, &hists))
}

/// Reads the OR of `entry ^ first` over a bucket: `None` when the entries
/// differ in the digit at `depth` (so the scatter is worth doing).
fn shared_prefix_step(diff: u128, depth: usize) -> Option<Step> {
    if diff == 0 {
        return Some(Step::AllEqual);
    }
    let first_differing = (diff.leading_zeros() / 8) as usize;
    (first_differing > depth).then_some(Step::Skip(first_differing))
}

/// Sorts the children of a scattered bucket: their entries now lie in
/// `buf`, so the arrays swap roles. Large buckets give each child to rayon.
fn sort_children(ctx: &Ctx, b: Bucket<'_>, counts: &Counts) {
    let parallel = b.data.len() >= ctx.cfg.par_children;
    let (data_is_out, depth) = (!b.data_is_out, b.depth + 1);
    let mut data = b.buf;
    let mut buf = b.data;
    let mut children = Vec::new();
    for &count in counts.iter().filter(|&&c| c > 0) {
        let (child_data, rest) = std::mem::take(&mut data).split_at_mut(count);
        data = rest;
        let (child_buf, rest) = std::mem::take(&mut buf).split_at_mut(count);
        buf = rest;
        let child = Bucket {
            data: child_data,
            buf: child_buf,
            data_is_out,
            depth,
        };
        if parallel {
            children.push(child);
        } else {
            sort_bucket(ctx, child);
        }
    }
    children
        .into_par_iter()
        .for_each(|child| sort_bucket(ctx, child));
}

#[cfg(test)]
mod tests;
