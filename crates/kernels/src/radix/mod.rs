//! Parallel MSD radix sort of entries (`u128` or `u64`, see [`crate::Word`]).
//!
//! Buckets are scattered out of place between `entries` and `scratch`
//! (the two swap roles at every level), starting from the most significant
//! bits:
//!
//! - a bucket too big for the cache takes an 8-bit pass; large ones run
//!   their histogram and scatter on several threads (per-chunk histograms,
//!   prefix sums, scatter into disjoint ranges, streaming stores), so even
//!   one huge bucket of a skewed input uses every thread, and its children
//!   become rayon tasks;
//! - a bucket that fits in the cache takes one pass with a digit of up to
//!   14 bits, straight into the output array, then a single insertion sort
//!   (see [`sort_small_bucket`]): for random keys that finishes it;
//! - digits that every entry of a bucket shares are skipped, found from the
//!   same read as the histogram;
//! - a bucket whose key bytes are used up stops as soon as it is found in
//!   order (scatters are stable, so entries made in index order are).
//!
//! Every level consumes at least 4 bits (8 outside cache-sized buckets),
//! so recursion is at most 32 levels deep, with frames of a few KiB (the
//! wide pass's 32 KiB of counters are released before it recurses).

mod pass;
mod stream;

use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;

use crate::small;
use crate::tuning::RadixConfig;
use crate::Word;
use pass::{Counts, Digit};

/// Sorts `entries` ascending as integers, using `scratch` (same length, contents
/// ignored) as working space.
///
/// `key_bytes` (1..=16; at most 8 count for u64) says how many most-significant bytes hold the key
/// prefix. It is only a hint: once a bucket has used up that many bytes the
/// sort checks whether the bucket is already in order before radixing
/// further, so the result equals a full integer sort for any input. Values
/// above 16 act as 16. Runs on the current rayon thread pool.
///
/// # Panics
///
/// If `scratch.len() != entries.len()`.
pub fn radix_sort<E: Word>(entries: &mut [E], scratch: &mut [E], key_bytes: usize) {
    radix_sort_with(&RadixConfig::DEFAULT, entries, scratch, key_bytes);
}

/// [`radix_sort`] that gives up once `stop` is set, for sorts that must end soon after a user
/// cancels them: every bucket looks at the flag before it is sorted, so only a parallel pass
/// already under way (over a bucket of any size) is finished first. Returns whether the sort
/// finished; when it did not, `entries` and `scratch` hold unspecified contents.
///
/// # Panics
///
/// If `scratch.len() != entries.len()`.
pub fn radix_sort_until<E: Word>(entries: &mut [E], scratch: &mut [E], key_bytes: usize, stop: &AtomicBool) -> bool {
    radix_sort_run(&RadixConfig::DEFAULT, entries, scratch, key_bytes, Some(stop));
    !stop.load(Ordering::Relaxed)
}

/// [`radix_sort`] with explicit thresholds (the tests use tiny ones).
pub(crate) fn radix_sort_with<E: Word>(cfg: &RadixConfig, entries: &mut [E], scratch: &mut [E], key_bytes: usize) {
    radix_sort_run(cfg, entries, scratch, key_bytes, None);
}

/// The radix sort, stopping early when `stop` is given and set.
fn radix_sort_run<E: Word>(cfg: &RadixConfig, entries: &mut [E], scratch: &mut [E], key_bytes: usize, stop: Option<&AtomicBool>) {
    assert_eq!(entries.len(), scratch.len(), "radix_sort: scratch must be as long as entries");
    // Already-sorted input (a sorted file sorted again) costs one read, and
    // so does a descending one (a reversed file: equal entries are
    // identical, so reversing is a correct sort); random input fails within
    // the first few pairs.
    if small::is_sorted(entries) {
        return;
    }
    if small::is_descending(entries) {
        return small::reverse(entries);
    }
    let ctx = Ctx::new(cfg, key_bytes, E::BITS, stop);
    let root = Bucket { data: entries, buf: scratch, data_is_out: true, depth: 0 };
    sort_bucket(&ctx, root);
}

/// [`radix_sort`] that hands the sorted array over in pieces, in ascending
/// order, each as soon as it is final, so that a caller can write out the
/// smallest entries while the rest are still being sorted.
///
/// `emit(piece, work)` receives consecutive sorted sub-slices of `entries`
/// that together cover it, and with each the same range of `scratch`, free
/// for the caller's use. The pieces are the buckets of the first digit, among
/// the top `key_bytes`, that tells entries apart (and a bucket over 1/64 of
/// the whole is split again on its own next such digit), so entries that
/// agree on their top `key_bytes` bytes always land in the same piece. Small
/// inputs, and inputs whose entries share all those bytes, come as one piece.
///
/// # Panics
///
/// If `scratch.len() != entries.len()`.
pub fn radix_sort_pieces<'a, E: Word>(
    entries: &'a mut [E],
    scratch: &'a mut [E],
    key_bytes: usize,
    emit: impl FnMut(&'a mut [E], &'a mut [E]),
) {
    radix_sort_pieces_with(&RadixConfig::DEFAULT, entries, scratch, key_bytes, emit);
}

/// [`radix_sort_pieces`] with explicit thresholds.
pub(crate) fn radix_sort_pieces_with<'a, E: Word>(
    cfg: &RadixConfig,
    entries: &'a mut [E],
    scratch: &'a mut [E],
    key_bytes: usize,
    mut emit: impl FnMut(&'a mut [E], &'a mut [E]),
) {
    assert_eq!(entries.len(), scratch.len(), "radix_sort_pieces: scratch must be as long as entries");
    let n = entries.len();
    let ctx = Ctx::new(cfg, key_bytes, E::BITS, None);
    if n < cfg.par_pass || small::is_sorted(entries) || small::is_descending(entries) {
        radix_sort_with(cfg, entries, scratch, key_bytes);
        return emit(entries, scratch);
    }
    // Pieces larger than this are split again, so that the first of them comes soon.
    let max_piece = (n / SPLIT_PIECES_ABOVE).max(cfg.par_pass);
    let root = Bucket { data: entries, buf: scratch, data_is_out: true, depth: 0 };
    emit_pieces(&ctx, root, max_piece, &mut emit);
}

/// A piece larger than this fraction of the whole sort is split on its next distinguishing digit.
const SPLIT_PIECES_ABOVE: usize = 64;

/// Sorts a bucket and hands it to `emit` in ascending pieces: as one piece when it has at most
/// `max_piece` entries or its entries share every key bit; otherwise scattered on its first
/// digit that tells them apart, and each child handled alike.
fn emit_pieces<'a, E: Word>(ctx: &Ctx, b: Bucket<'a, E>, max_piece: usize, emit: &mut impl FnMut(&'a mut [E], &'a mut [E])) {
    let Bucket { data, buf, data_is_out, mut depth } = b;
    let n = data.len();
    if n > max_piece {
        let chunk_len = n.div_ceil(ctx.chunks.min(n / ctx.cfg.min_chunk).max(1));
        while depth < ctx.key_bits {
            // The digit stays within the key bits: a split below them would part equal keys.
            let digit = Digit::new::<E>(depth, (ctx.key_bits - depth).min(8));
            let (hists, diff) = pass::par_histogram(data, digit, chunk_len);
            match shared_prefix(diff, depth, digit.width()) {
                Shared::All => break,
                Shared::UpTo(shared) => depth = shared,
                Shared::Differs => {
                    let streaming = n >= ctx.cfg.streaming;
                    let counts = pass::par_scatter(data, buf, digit, chunk_len, &hists, streaming);
                    // The children now lie in `buf`: the arrays swap roles. Small children are
                    // sorted a few at a time in parallel, then handed over in order.
                    let batch = 2 * rayon::current_num_threads();
                    let mut ready = Vec::with_capacity(batch);
                    for (child_data, child_buf) in split_buckets(buf, data, &counts) {
                        let child = Bucket { data: child_data, buf: child_buf, data_is_out: !data_is_out, depth: depth + digit.width() };
                        if child.data.len() > max_piece {
                            sort_and_emit(ctx, std::mem::take(&mut ready), emit);
                            emit_pieces(ctx, child, max_piece, emit);
                        } else {
                            ready.push(child);
                            if ready.len() == batch {
                                sort_and_emit(ctx, std::mem::take(&mut ready), emit);
                            }
                        }
                    }
                    return sort_and_emit(ctx, ready, emit);
                }
            }
        }
    }
    let whole = Bucket { data, buf, data_is_out, depth };
    sort_and_emit(ctx, vec![whole], emit);
}

/// Sorts consecutive buckets in parallel, then hands each to `emit`, in order.
fn sort_and_emit<'a, E: Word>(ctx: &Ctx, mut buckets: Vec<Bucket<'a, E>>, emit: &mut impl FnMut(&'a mut [E], &'a mut [E])) {
    buckets.par_iter_mut().for_each(|b| {
        let bucket = Bucket { data: &mut *b.data, buf: &mut *b.buf, data_is_out: b.data_is_out, depth: b.depth };
        sort_bucket(ctx, bucket);
    });
    for b in buckets {
        let (out, other) = if b.data_is_out { (b.data, b.buf) } else { (b.buf, b.data) };
        emit(out, other);
    }
}

/// What every bucket of one sort needs to know.
struct Ctx<'s> {
    cfg: RadixConfig,
    /// The key hint, in bits.
    key_bits: u32,
    /// How many chunks a parallel pass splits a bucket into.
    chunks: usize,
    /// Set when the sort is to give up (see [`radix_sort_until`]).
    stop: Option<&'s AtomicBool>,
}

impl<'s> Ctx<'s> {
    fn new(cfg: &RadixConfig, key_bytes: usize, entry_bits: u32, stop: Option<&'s AtomicBool>) -> Ctx<'s> {
        let chunks = rayon::current_num_threads() * cfg.chunks_per_thread;
        Ctx { cfg: *cfg, key_bits: (8 * key_bytes.min(16) as u32).min(entry_bits), chunks, stop }
    }

    fn stopped(&self) -> bool {
        self.stop.is_some_and(|s| s.load(Ordering::Relaxed))
    }
}

/// Entries that share their first `depth` bits. `data` holds them; `buf` is
/// the same range of the other array. `data_is_out` says whether `data`
/// lies in the caller's `entries`; if not, the sorted bucket must be
/// written to `buf`.
struct Bucket<'a, E> {
    data: &'a mut [E],
    buf: &'a mut [E],
    data_is_out: bool,
    depth: u32,
}

impl<E: Word> Bucket<'_, E> {
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

    /// Whether the bucket has used up its key bits and is found in order.
    /// A depth of the entry's width means every bit is shared: all entries are equal.
    fn done_by_keys(&self, ctx: &Ctx) -> bool {
        (self.depth >= ctx.key_bits || self.depth >= E::BITS) && small::is_sorted(self.data)
    }
}

/// What a bucket's histogram says about the bits its entries share.
enum Shared {
    /// Every entry is identical: nothing to sort.
    All,
    /// Every entry shares the bits before this depth, which lies beyond
    /// the digit just counted: radix from there.
    UpTo(u32),
    /// The entries differ within the digit just counted: scatter.
    Differs,
}

/// Reads the OR of `entry ^ first` over a bucket whose digit covered
/// `width` bits from `depth`.
fn shared_prefix<E: Word>(diff: E, depth: u32, width: u32) -> Shared {
    if diff == E::ZERO {
        return Shared::All;
    }
    let first_differing = diff.leading_zeros();
    if first_differing >= depth + width {
        Shared::UpTo(first_differing)
    } else {
        Shared::Differs
    }
}

/// Sorts one bucket, then its children.
fn sort_bucket<E: Word>(ctx: &Ctx, b: Bucket<'_, E>) {
    if ctx.stopped() {
        return;
    }
    if b.data.len() >= ctx.cfg.par_pass {
        sort_large(ctx, b);
    } else {
        sort_seq(ctx, b);
    }
}

/// A bucket large enough for a parallel histogram and scatter.
fn sort_large<E: Word>(ctx: &Ctx, mut b: Bucket<'_, E>) {
    let n = b.data.len();
    let chunks = ctx.chunks.min(n / ctx.cfg.min_chunk).max(1);
    let chunk_len = n.div_ceil(chunks);
    loop {
        if b.done_by_keys(ctx) {
            return b.finish();
        }
        let digit = Digit::new::<E>(b.depth, 8);
        let (hists, diff) = pass::par_histogram(b.data, digit, chunk_len);
        match shared_prefix(diff, b.depth, digit.width()) {
            Shared::All => return b.finish(),
            Shared::UpTo(depth) => b.depth = depth,
            Shared::Differs => {
                let streaming = n >= ctx.cfg.streaming;
                let counts = pass::par_scatter(b.data, b.buf, digit, chunk_len, &hists, streaming);
                return sort_children(ctx, b, digit.width(), &counts);
            }
        }
    }
}

/// A bucket sorted by the current thread (the children of a big one may
/// still become tasks).
fn sort_seq<E: Word>(ctx: &Ctx, mut b: Bucket<'_, E>) {
    loop {
        let n = b.data.len();
        if n <= ctx.cfg.small_sort {
            return b.finish_small();
        }
        if b.done_by_keys(ctx) {
            return b.finish();
        }
        if n <= ctx.cfg.small_bucket {
            return sort_small_bucket(ctx, b);
        }
        let digit = Digit::new::<E>(b.depth, 8);
        let mut counts = [0usize; 256];
        let diff = pass::histogram(b.data, digit, b.data[0], &mut counts);
        match shared_prefix(diff, b.depth, digit.width()) {
            Shared::All => return b.finish(),
            Shared::UpTo(depth) => b.depth = depth,
            Shared::Differs => {
                // The bucket fits in L2: see touch_lines.
                small::touch_lines(b.buf);
                pass::scatter(b.data, b.buf, digit, &counts);
                return sort_children(ctx, b, digit.width(), &counts);
            }
        }
    }
}

/// Sorts a cache-resident bucket without a call per child: one pass with a
/// digit wide enough for children of about two entries scatters it
/// straight into the output array; only children too big for insertion
/// sort recurse; then one insertion sort over the whole bucket puts the
/// small children in order. Each of those is disordered only within
/// itself, so that sort moves at most `small_sort / 2` entries per entry
/// on average, and for random keys less than one.
fn sort_small_bucket<E: Word>(ctx: &Ctx, b: Bucket<'_, E>) {
    let n = b.data.len();
    debug_assert!(n <= usize::from(u16::MAX));
    let wanted = (usize::BITS - 1 - n.leading_zeros()).saturating_sub(1);
    let width = wanted.clamp(4, ctx.cfg.small_digit_bits.min(14));
    // Counters sized to the digit: zeroing 16,384 of them for a bucket of
    // a few hundred entries would cost more than sorting it.
    let scattered = if width <= 8 { wide_pass::<E, 256>(ctx, b, width) } else { wide_pass::<E, 16384>(ctx, b, width) };
    let Some(Scattered { out, src, depth, big }) = scattered else {
        return;
    };
    for r in big {
        let child = Bucket { data: &mut out[r.clone()], buf: &mut src[r], data_is_out: true, depth };
        sort_bucket(ctx, child);
    }
    small::insertion_sort(out);
}

/// A bucket after its wide pass.
struct Scattered<'a, E> {
    /// The bucket's entries, in the output array, ordered by the digit.
    out: &'a mut [E],
    /// The same range of the other array.
    src: &'a mut [E],
    /// Where the children's digits start.
    depth: u32,
    /// Children too big for insertion sort (usually none).
    big: Vec<Range<usize>>,
}

/// The histogram (skipping shared digits) and scatter of
/// [`sort_small_bucket`], with `N >= 2^width` counters; `None` if the bucket
/// turned out to be finished. Never inlined, so the 32 KiB of counters leave
/// the stack before the caller recurses.
#[inline(never)]
fn wide_pass<'a, E: Word, const N: usize>(ctx: &Ctx, mut b: Bucket<'a, E>, width: u32) -> Option<Scattered<'a, E>> {
    let mut counts = [0u16; N];
    let digit = loop {
        let digit = Digit::new::<E>(b.depth, width);
        let diff = pass::histogram(b.data, digit, b.data[0], &mut counts);
        match shared_prefix(diff, b.depth, digit.width()) {
            Shared::All => {
                b.finish();
                return None;
            }
            Shared::UpTo(depth) => b.depth = depth,
            Shared::Differs => break digit,
        }
        if b.done_by_keys(ctx) {
            b.finish();
            return None;
        }
        counts[..digit.buckets()].fill(0);
    };
    let (src, out) = if b.data_is_out {
        // The scatter must land in `data`: move the entries out of its way.
        b.buf.copy_from_slice(b.data);
        (b.buf, b.data)
    } else {
        (b.data, b.buf)
    };
    small::touch_lines(out);
    pass::scatter(src, out, digit, &counts);
    let mut big = Vec::new();
    let mut start = 0;
    for &count in &counts[..digit.buckets()] {
        let end = start + usize::from(count);
        if end - start > ctx.cfg.small_sort {
            big.push(start..end);
        }
        start = end;
    }
    let depth = b.depth + digit.width();
    Some(Scattered { out, src, depth, big })
}

/// Sorts the children of a bucket scattered by a `width`-bit digit: their
/// entries now lie in `buf`, so the arrays swap roles. Large buckets give
/// each child to rayon.
fn sort_children<E: Word>(ctx: &Ctx, b: Bucket<'_, E>, width: u32, counts: &Counts) {
    let parallel = b.data.len() >= ctx.cfg.par_children;
    let (data_is_out, depth) = (!b.data_is_out, b.depth + width);
    let mut children = Vec::new();
    for (child_data, child_buf) in split_buckets(b.buf, b.data, counts) {
        let child = Bucket { data: child_data, buf: child_buf, data_is_out, depth };
        if parallel {
            children.push(child);
        } else {
            sort_bucket(ctx, child);
        }
    }
    children.into_par_iter().for_each(|child| sort_bucket(ctx, child));
}

/// Splits two arrays alike into the consecutive ranges of a histogram's non-empty buckets.
fn split_buckets<'a, E: Word>(mut a: &'a mut [E], mut b: &'a mut [E], counts: &Counts) -> Vec<(&'a mut [E], &'a mut [E])> {
    let mut parts = Vec::new();
    for &count in counts.iter().filter(|&&c| c > 0) {
        let (head_a, rest_a) = std::mem::take(&mut a).split_at_mut(count);
        let (head_b, rest_b) = std::mem::take(&mut b).split_at_mut(count);
        (a, b) = (rest_a, rest_b);
        parts.push((head_a, head_b));
    }
    parts
}

#[cfg(test)]
mod tests;
