//! Sort entries: a normalized key prefix and the record's byte offset packed in one `u128`.
//!
//! The offset takes the low bits, as few as the buffer needs; the key prefix takes as many whole
//! bytes of the rest as the key has (12 bytes for a 1 GB buffer, so the benchmark's 10-byte keys
//! sort exactly, with no tie-break). Sorting entries as plain integers orders by key, ties by offset,
//! and offsets grow with input order: the sort is stable by construction.

use crate::batches::SortContext;
use crate::key::ResolvedKey;
use rayon::prelude::*;
use xsort_kernels::Method;

/// How entries of one buffer are laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EntryLayout {
    /// Key bytes held in the entry.
    pub prefix_bytes: usize,
    /// Low bits holding the record's offset.
    pub offset_bits: u32,
    /// Whether the prefix holds the whole key, so that entry order is final.
    pub exact: bool,
}

impl EntryLayout {
    /// The layout for a key of `key_len` bytes in a buffer of `buffer_len` bytes.
    pub fn new(key_len: usize, buffer_len: usize) -> Self {
        let offset_bits = 64 - (buffer_len.max(2) as u64 - 1).leading_zeros();
        let prefix_bytes = key_len.min((128 - offset_bits as usize) / 8);
        EntryLayout { prefix_bytes, offset_bits, exact: key_len <= prefix_bytes }
    }

    /// The entry of the record at `offset`.
    #[inline]
    pub fn entry(&self, key: &ResolvedKey, rec: &[u8], offset: usize) -> u128 {
        key.prefix(rec, self.prefix_bytes) | offset as u128
    }

    /// The record offset held in an entry.
    #[inline]
    pub fn offset(&self, e: u128) -> usize {
        (e & ((1u128 << self.offset_bits) - 1)) as usize
    }
}

/// Below this many records a job is not worth splitting across threads.
const PAR_MIN: usize = 1 << 14;

/// Writes the entries of `out.len()` consecutive `record_size`-byte records starting at byte `start`
/// of `data` into `out`, in parallel.
pub fn extract(key: &ResolvedKey, layout: EntryLayout, data: &[u8], start: usize, record_size: usize, out: &mut [u128]) {
    out.par_chunks_mut(PAR_MIN).enumerate().for_each(|(c, chunk)| {
        let mut off = start + c * PAR_MIN * record_size;
        for e in chunk {
            *e = layout.entry(key, &data[off..off + record_size], off);
            off += record_size;
        }
    });
}

/// Sorts the entries of records in `data`: the kernel on the packed integers, then, when the prefix
/// does not hold the whole key, a comparison sort of each group of equal prefixes.
pub fn sort(
    method: Method,
    key: &ResolvedKey,
    layout: EntryLayout,
    record_size: usize,
    data: &[u8],
    entries: &mut [u128],
    scratch: &mut [u128],
) {
    xsort_kernels::sort_entries(method, entries, &mut scratch[..entries.len()], layout.prefix_bytes.max(1));
    sort_ties(key, layout, record_size, data, entries);
}

/// [`sort`] that hands the sorted entries to `emit` in consecutive ascending pieces, each as soon as
/// it is final (see [`xsort_kernels::sort_entries_in_pieces`]), so that they can be written out while
/// the rest are sorted. Equal prefixes never straddle two pieces.
pub fn sort_in_pieces<'a>(
    ctx: &SortContext,
    data: &[u8],
    entries: &'a mut [u128],
    scratch: &'a mut [u128],
    mut emit: impl FnMut(&'a [u128]),
) {
    let (n, layout) = (entries.len(), ctx.layout);
    xsort_kernels::sort_entries_in_pieces(ctx.method, entries, &mut scratch[..n], layout.prefix_bytes.max(1), |piece, _| {
        sort_ties(ctx.key, layout, ctx.record_size, data, piece);
        emit(piece);
    });
}

/// Puts each group of sorted entries with equal prefixes in order by the full key (in parallel),
/// unless the prefix holds the whole key.
fn sort_ties(key: &ResolvedKey, layout: EntryLayout, record_size: usize, data: &[u8], entries: &mut [u128]) {
    if layout.exact {
        return;
    }
    let groups = xsort_kernels::equal_prefix_runs(entries, (layout.prefix_bytes * 8) as u32);
    let mut rest: &mut [u128] = entries;
    let mut consumed = 0;
    let mut slices = Vec::with_capacity(groups.len());
    for g in groups {
        let tail = std::mem::take(&mut rest);
        let (_, from_start) = tail.split_at_mut(g.start - consumed);
        let (group, after) = from_start.split_at_mut(g.len());
        consumed = g.end;
        rest = after;
        slices.push(group);
    }
    slices.into_par_iter().for_each(|group| {
        group.sort_unstable_by(|&a, &b| {
            let (oa, ob) = (layout.offset(a), layout.offset(b));
            key.compare(&data[oa..oa + record_size], &data[ob..ob + record_size]).then(oa.cmp(&ob))
        })
    });
}

/// Fills `dst` with bytes `[first_byte, first_byte + dst.len())` of the sorted output stream (the
/// records of `entries`, in order, back to back), so that output blocks of any size can be gathered
/// independently, even when records straddle block boundaries.
pub fn gather(layout: EntryLayout, entries: &[u128], data: &[u8], record_size: usize, first_byte: u64, dst: &mut [u8]) {
    const PIECE: usize = 256 << 10;
    crate::pool::install(|| {
        dst.par_chunks_mut(PIECE)
            .enumerate()
            .for_each(|(i, piece)| gather_serial(layout, entries, data, record_size, first_byte + (i * PIECE) as u64, piece))
    });
}

/// Records (or lines) ahead whose bytes a gather asks the CPU to fetch while it copies the current
/// one: the sources are scattered over the buffer, so each is a cache (and often TLB) miss.
pub(crate) const PREFETCH_AHEAD: usize = 16;

/// Hints the CPU to bring `data[at]` into cache.
#[inline]
pub(crate) fn prefetch(data: &[u8], at: usize) {
    #[cfg(target_arch = "x86_64")]
    if at < data.len() {
        // SAFETY: at is in bounds; a prefetch has no architectural effect besides caching.
        unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(data.as_ptr().add(at) as *const i8) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (data, at);
}

fn gather_serial(layout: EntryLayout, entries: &[u128], data: &[u8], r: usize, first_byte: u64, dst: &mut [u8]) {
    let mut idx = (first_byte / r as u64) as usize;
    let mut skip = (first_byte % r as u64) as usize;
    let mut at = 0;
    while at < dst.len() {
        if let Some(&ahead) = entries.get(idx + PREFETCH_AHEAD) {
            prefetch(data, layout.offset(ahead));
        }
        let off = layout.offset(entries[idx]);
        let n = (r - skip).min(dst.len() - at);
        dst[at..at + n].copy_from_slice(&data[off + skip..off + skip + n]);
        at += n;
        skip = 0;
        idx += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{KeyPart, KeySpec};
    use proptest::prelude::*;

    #[test]
    fn layout_sizes() {
        let l = EntryLayout::new(10, 1 << 30);
        assert_eq!((l.offset_bits, l.prefix_bytes, l.exact), (30, 10, true));
        let l = EntryLayout::new(100, 1 << 30);
        assert_eq!((l.prefix_bytes, l.exact), (12, false));
        let l = EntryLayout::new(4, 100);
        assert_eq!((l.offset_bits, l.prefix_bytes, l.exact), (7, 4, true));
    }

    proptest! {
        /// Entry sort + tie-break + gather equals a stable sort of the records by the full key.
        #[test]
        fn sort_and_gather_match_stable_sort(
            recs in proptest::collection::vec(proptest::collection::vec(0u8..3, 20), 0..300),
            parts in proptest::collection::vec((0usize..20, 1usize..8, any::<bool>()), 0..3),
            method in prop_oneof![Just(Method::Radix), Just(Method::Merge)],
            block in 1usize..97,
        ) {
            let r = 20;
            let spec = KeySpec::new(parts.into_iter().filter(|(o, l, _)| o + l <= r).map(|(offset, len, descending)| KeyPart::bytes(offset, len, descending)).collect());
            let key = spec.resolve(r).unwrap();
            let data: Vec<u8> = recs.concat();
            // A large buffer length forces a short prefix, exercising the tie-break path.
            let layout = EntryLayout::new(key.len(), if block % 2 == 0 { usize::MAX >> 20 } else { data.len() });
            let n = recs.len();
            let mut entries = vec![0u128; n];
            extract(&key, layout, &data, 0, r, &mut entries);
            let mut scratch = vec![0u128; n];
            sort(method, &key, layout, r, &data, &mut entries, &mut scratch);
            let mut out = vec![0u8; data.len()];
            for (i, piece) in out.chunks_mut(block).enumerate() {
                gather(layout, &entries, &data, r, (i * block) as u64, piece);
            }
            let mut expect = recs.clone();
            expect.sort_by(|a, b| key.compare(a, b));
            prop_assert_eq!(out, expect.concat());
        }
    }
}
