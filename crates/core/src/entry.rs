//! Sort entries: a normalized key prefix and the record's byte offset packed in one `u128`.
//!
//! The offset takes the low bits, as few as the buffer needs; the key prefix takes as many whole
//! bytes of the rest as the key has (12 bytes for a 1 GB buffer, so the benchmark's 10-byte keys
//! sort exactly, with no tie-break). Sorting entries as plain integers orders by key, ties by offset,
//! and offsets grow with input order: the sort is stable by construction.
//!
//! Sorts of records in memory use narrow `u64` entries instead when a shorter prefix tells the keys
//! apart (see [`crate::narrow`]); [`gather`] reads either through [`Locate`].

use crate::batches::SortContext;
use crate::error::Result;
use crate::gather::Placed;
use crate::key::ResolvedKey;
use crate::refine::{self, EntryMatcher, Tied};
use rayon::prelude::*;
use std::sync::atomic::AtomicBool;
use xsort_kernels::prefetch::{prefetch_line, SCAN_AHEAD};
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

    /// The layout for `key` in a buffer of `buffer_len` bytes: not exact when a part of the key
    /// is compared by a function, whatever the prefix holds.
    pub fn for_key(key: &ResolvedKey, buffer_len: usize) -> Self {
        let layout = Self::new(key.len(), buffer_len);
        EntryLayout { exact: key.exact_within(layout.prefix_bytes), ..layout }
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

/// Where the record of an entry lies: for the engine's entries ([`EntryLayout`], `u128`) and the
/// narrow ones of in-memory sorts ([`crate::narrow::NarrowLayout`], `u64`).
pub trait Locate<E>: Copy + Send + Sync {
    /// The byte offset of the entry's record in its buffer.
    fn record_at(&self, e: E) -> usize;
}

impl Locate<u128> for EntryLayout {
    #[inline]
    fn record_at(&self, e: u128) -> usize {
        self.offset(e)
    }
}

/// Where the refinement of ties finds the record an entry's location (its low bits) names: by
/// byte offset in one buffer ([`ByOffset`], the engine's entries), or by number ([`ByIndex`] in one
/// buffer, [`crate::pieces::RecordPieces`] across several).
pub(crate) trait Records: Sync {
    /// The record at `location`.
    fn record(&self, location: usize) -> &[u8];
}

/// Records of one buffer found by their byte offset.
#[derive(Clone, Copy)]
pub(crate) struct ByOffset<'a> {
    pub data: &'a [u8],
    pub record_size: usize,
}

impl Records for ByOffset<'_> {
    #[inline]
    fn record(&self, offset: usize) -> &[u8] {
        &self.data[offset..offset + self.record_size]
    }
}

/// Records of one buffer found by their number.
#[derive(Clone, Copy)]
pub(crate) struct ByIndex<'a> {
    pub data: &'a [u8],
    pub record_size: usize,
}

impl Records for ByIndex<'_> {
    #[inline]
    fn record(&self, index: usize) -> &[u8] {
        &self.data[index * self.record_size..(index + 1) * self.record_size]
    }
}

/// Below this many records a job is not worth splitting across threads.
const PAR_MIN: usize = 1 << 14;

/// Writes the entries of `out.len()` consecutive `record_size`-byte records starting at byte `start`
/// of `data` into `out`, in parallel (the tests' shorthand for [`extract_at`]).
#[cfg(test)]
pub fn extract(key: &ResolvedKey, layout: EntryLayout, data: &[u8], start: usize, record_size: usize, out: &mut [u128]) {
    extract_at(key, layout, &data[start..start + out.len() * record_size], start, record_size, out);
}

/// A stop flag for sorts that nothing cancels: never set.
pub(crate) static NEVER: AtomicBool = AtomicBool::new(false);

/// Records whose entries [`extract_checked`] makes between two calls of its check (64 MB of
/// entries, a few tens of milliseconds).
const EXTRACT_SLICE: usize = 1 << 22;

/// The entries of the records of `data` that `keep` keeps, into the front of `out` in input order,
/// in parallel, a slice at a time, calling `check` before each; returns how many. Each parallel
/// piece writes its kept entries to the front of its own part of `out`, and the parts are then
/// moved together (only ever toward the front, over entries already moved).
pub(crate) fn extract_selected(
    key: &ResolvedKey,
    layout: EntryLayout,
    data: &[u8],
    record_size: usize,
    out: &mut [u128],
    keep: &(dyn Fn(&[u8]) -> bool + Sync),
    check: impl Fn() -> Result<()>,
) -> Result<usize> {
    let n = out.len().min(data.len() / record_size);
    let ahead = SCAN_AHEAD.div_ceil(record_size) * record_size + key.first_offset();
    let (mut kept, mut first) = (0, 0);
    while first < n {
        check()?;
        let end = (first + EXTRACT_SLICE).min(n);
        let counts: Vec<usize> = out[first..end]
            .par_chunks_mut(PAR_MIN)
            .enumerate()
            .map(|(c, part)| {
                let base = first + c * PAR_MIN;
                let mut k = 0;
                for i in base..base + part.len() {
                    let at = i * record_size;
                    prefetch_line(data, at + ahead);
                    let rec = &data[at..at + record_size];
                    // Written whether kept or not, and kept by counting it: no branch on the
                    // outcome, which is as good as random for a selection keeping half.
                    part[k] = layout.entry(key, rec, at);
                    k += usize::from(keep(rec));
                }
                k
            })
            .collect();
        for (c, k) in counts.into_iter().enumerate() {
            let from = first + c * PAR_MIN;
            out.copy_within(from..from + k, kept);
            kept += k;
        }
        first = end;
    }
    Ok(kept)
}

/// The entries of every record of `data`, into `out` in parallel, a slice at a time, calling
/// `check` before each: a cancelled sort stops between them rather than after the whole input.
pub fn extract_checked(
    key: &ResolvedKey,
    layout: EntryLayout,
    data: &[u8],
    record_size: usize,
    out: &mut [u128],
    check: impl Fn() -> Result<()>,
) -> Result<()> {
    let make = |rec: &[u8], i: usize| layout.entry(key, rec, i * record_size);
    extract_checked_with(data, record_size, key.first_offset(), out, make, check)
}

/// Fills `out[i]` with `make(record i of data, i)`, in parallel, a slice at a time, calling `check`
/// before each. `key_offset` is where in a record the key starts (what is prefetched ahead).
pub(crate) fn extract_checked_with<E: Send>(
    data: &[u8],
    record_size: usize,
    key_offset: usize,
    out: &mut [E],
    make: impl Fn(&[u8], usize) -> E + Sync,
    check: impl Fn() -> Result<()>,
) -> Result<()> {
    for (s, slice) in out.chunks_mut(EXTRACT_SLICE).enumerate() {
        check()?;
        let first = s * EXTRACT_SLICE;
        let records = &data[first * record_size..(first + slice.len()) * record_size];
        extract_each(records, record_size, key_offset, slice, |rec, i| make(rec, first + i));
    }
    Ok(())
}

/// Writes the entries of the records in `records` (`out.len()` of them, consecutive), which lie at
/// byte `offset` of their buffer, into `out`, in parallel.
pub fn extract_at(key: &ResolvedKey, layout: EntryLayout, records: &[u8], offset: usize, record_size: usize, out: &mut [u128]) {
    extract_each(records, record_size, key.first_offset(), out, |rec, i| layout.entry(key, rec, offset + i * record_size));
}

/// Fills `out[i]` with `make(record i of records, i)`, in parallel, fetching the key of the record
/// about [`SCAN_AHEAD`] bytes ahead: the hardware prefetcher stops at page boundaries.
pub(crate) fn extract_each<E: Send>(
    records: &[u8],
    record_size: usize,
    key_offset: usize,
    out: &mut [E],
    make: impl Fn(&[u8], usize) -> E + Sync,
) {
    let ahead = SCAN_AHEAD.div_ceil(record_size) * record_size + key_offset;
    out.par_chunks_mut(PAR_MIN).enumerate().for_each(|(c, chunk)| {
        let first = c * PAR_MIN;
        let mut at = first * record_size;
        for (j, e) in chunk.iter_mut().enumerate() {
            prefetch_line(records, at + ahead);
            *e = make(&records[at..at + record_size], first + j);
            at += record_size;
        }
    });
}

/// Sorts the entries of records in `data`: the kernel on the packed integers, then, when the prefix
/// does not hold the whole key, each group of equal prefixes refined by the rest of the key.
pub fn sort(
    method: Method,
    key: &ResolvedKey,
    layout: EntryLayout,
    record_size: usize,
    data: &[u8],
    entries: &mut [u128],
    scratch: &mut [u128],
) {
    sort_until(&SortContext { method, key, layout, record_size }, data, entries, scratch, &NEVER);
}

/// [`sort`] that gives up once `stop` is set, leaving the entries in unspecified contents: the
/// kernel looks at the flag before each bucket (see [`xsort_kernels::sort_entries_until`]), the
/// refinement of ties before each group and each level.
pub fn sort_until(ctx: &SortContext, data: &[u8], entries: &mut [u128], scratch: &mut [u128], stop: &AtomicBool) {
    sort_located_until(ctx, &ByOffset { data, record_size: ctx.record_size }, entries, scratch, stop);
}

/// [`sort_until`] for entries whose locations `records` interprets (see [`Records`]).
pub(crate) fn sort_located_until<S: Records>(
    ctx: &SortContext,
    records: &S,
    entries: &mut [u128],
    scratch: &mut [u128],
    stop: &AtomicBool,
) {
    let n = entries.len();
    let SortContext { method, key, layout, .. } = *ctx;
    if xsort_kernels::sort_entries_until(method, entries, &mut scratch[..n], layout.prefix_bytes.max(1), stop) {
        sort_ties(&Ties { method, key, layout, records, stop }, entries, &mut scratch[..n]);
    }
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
    let records = ByOffset { data, record_size: ctx.record_size };
    let ties = Ties { method: ctx.method, key: ctx.key, layout, records: &records, stop: &NEVER };
    xsort_kernels::sort_entries_in_pieces(ctx.method, entries, &mut scratch[..n], layout.prefix_bytes.max(1), |piece, work| {
        sort_ties(&ties, piece, work);
        emit(piece);
    });
}

/// What refining ties needs (see [`crate::refine`]): the kernel, the key, where the records are,
/// and the flag that stops it. The key's levels are windows of the normalized key as wide as the
/// entry's prefix: level `l` is bytes `[l * prefix_bytes, (l + 1) * prefix_bytes)`.
struct Ties<'a, S> {
    method: Method,
    key: &'a ResolvedKey,
    layout: EntryLayout,
    records: &'a S,
    stop: &'a AtomicBool,
}

impl<S: Records> Ties<'_, S> {
    /// The record an entry locates.
    #[inline]
    fn record(&self, e: u128) -> &[u8] {
        self.records.record(self.layout.offset(e))
    }
}

impl<S: Records> Tied for Ties<'_, S> {
    fn method(&self) -> Method {
        self.method
    }

    fn stop(&self) -> &AtomicBool {
        self.stop
    }

    fn location_mask(&self) -> u128 {
        (1u128 << self.layout.offset_bits) - 1
    }

    fn levels(&self) -> usize {
        self.key.len().div_ceil(self.layout.prefix_bytes.max(1))
    }

    fn prefix_bytes(&self, level: usize) -> usize {
        let pb = self.layout.prefix_bytes;
        pb.min(self.key.len() - level * pb)
    }

    #[inline]
    fn level_prefix(&self, e: u128, level: usize) -> u128 {
        self.key.window(self.record(e), level * self.layout.prefix_bytes, self.prefix_bytes(level))
    }

    /// Equal windows are equal key bytes, so no level needs a matcher, except the last of a key
    /// with a part compared by a function: records equal up to that part are compared whole.
    fn level_matcher(&self, first: u128, level: usize) -> Option<EntryMatcher<'_>> {
        if self.key.is_complete() || level + 1 < self.levels() {
            return None;
        }
        let first = self.record(first);
        Some(Box::new(move |e| self.key.compare(self.record(e), first) == std::cmp::Ordering::Equal))
    }

    #[inline]
    fn compare(&self, a: u128, b: u128) -> std::cmp::Ordering {
        self.key.compare(self.record(a), self.record(b))
    }

    fn compare_is_trusted(&self) -> bool {
        self.key.is_complete()
    }

    #[inline]
    fn prefetch(&self, e: u128) {
        let rec = self.record(e);
        prefetch_line(rec, 0);
        prefetch_line(rec, rec.len() - 1);
    }
}

/// Puts each group of sorted entries with equal prefixes in order by the full key, unless the
/// prefix holds the whole key.
fn sort_ties<S: Records>(t: &Ties<S>, entries: &mut [u128], scratch: &mut [u128]) {
    if !t.layout.exact {
        refine::sort_ties(t, entries, scratch);
    }
}

/// Fills `dst` with bytes `[first_byte, first_byte + dst.len())` of the sorted output stream (the
/// records of `entries`, in order, back to back), so that output blocks of any size can be gathered
/// independently, even when records straddle block boundaries (see [`crate::gather`]).
pub fn gather<E: Copy + Sync>(layout: impl Locate<E>, entries: &[E], data: &[u8], record_size: usize, first_byte: u64, dst: &mut [u8]) {
    crate::gather::gather(SortedRecords { layout, entries, record_size }, data, first_byte, dst)
}

/// Fills `dst` as [`gather`] does, each record of `record_size` bytes written as `pieces` of it
/// (offset and length in the record, concatenated: Nsort's `-reformat` of fixed fields).
pub fn gather_reformatted(
    layout: EntryLayout,
    entries: &[u128],
    data: &[u8],
    (record_size, pieces): (usize, &[(usize, usize)]),
    first_byte: u64,
    dst: &mut [u8],
) {
    let out_size = pieces.iter().map(|p| p.1).sum();
    crate::gather::gather(Reformatted { sorted: SortedRecords { layout, entries, record_size }, pieces, out_size }, data, first_byte, dst)
}

/// Fixed-size records in the order of their sorted entries, each written as some of its bytes.
#[derive(Clone, Copy)]
struct Reformatted<'a> {
    sorted: SortedRecords<'a, EntryLayout, u128>,
    pieces: &'a [(usize, usize)],
    out_size: usize,
}

impl Placed for Reformatted<'_> {
    const STREAMING: bool = true;

    #[inline]
    fn find(&self, byte: u64) -> (usize, usize) {
        let r = self.out_size as u64;
        ((byte / r) as usize, (byte % r) as usize)
    }

    #[inline]
    fn place(&self, i: usize) -> Option<(usize, usize)> {
        self.sorted.place(i)
    }

    #[inline]
    fn copy(&self, data: &[u8], i: usize, mut skip: usize, dst: &mut [u8]) -> usize {
        let (start, _) = self.place(i).expect("the output's records cover its bytes");
        let mut at = 0;
        for &(offset, len) in self.pieces {
            if at == dst.len() {
                break;
            }
            if skip >= len {
                skip -= len;
                continue;
            }
            let n = (len - skip).min(dst.len() - at);
            dst[at..at + n].copy_from_slice(&data[start + offset + skip..start + offset + skip + n]);
            at += n;
            skip = 0;
        }
        at
    }
}

/// Fixed-size records in the order of their sorted entries, as the gather finds them.
#[derive(Clone, Copy)]
struct SortedRecords<'a, L, E> {
    layout: L,
    entries: &'a [E],
    record_size: usize,
}

impl<L: Locate<E>, E: Copy + Sync> Placed for SortedRecords<'_, L, E> {
    const STREAMING: bool = true;

    #[inline]
    fn find(&self, byte: u64) -> (usize, usize) {
        let r = self.record_size as u64;
        ((byte / r) as usize, (byte % r) as usize)
    }

    #[inline]
    fn place(&self, i: usize) -> Option<(usize, usize)> {
        self.entries.get(i).map(|&e| (self.layout.record_at(e), self.record_size))
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

    /// Typed parts over 40-byte records whose key is several times the prefix.
    fn typed_part() -> impl Strategy<Value = KeyPart> {
        use crate::key::{ByteOrder, KeyType};
        let kinds = prop_oneof![
            (1usize..12).prop_map(|l| (KeyType::Char, l)),
            Just((KeyType::Signed(ByteOrder::Little), 8)),
            Just((KeyType::Unsigned(ByteOrder::Big), 4)),
            Just((KeyType::Float(ByteOrder::Little), 8)),
            Just((KeyType::Signed(ByteOrder::Big), 2)),
            (1usize..6).prop_map(|l| (KeyType::Decimal, l)),
        ];
        (kinds, 0usize..40, any::<bool>()).prop_map(|((kind, len), off, d)| KeyPart::typed(off.min(40 - len), len, kind, d))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]
        /// Ties refined level by level (prefixes of 1 to 3 bytes, keys up to 5 parts) equal a stable
        /// sort by the full key, and every entry keeps the prefix of its record's key (batch merges
        /// compare them). Bytes come from tiny alphabets, so keys tie at every level and fully.
        #[test]
        fn refined_ties_match_stable_sort(
            recs in proptest::collection::vec(proptest::collection::vec(proptest::sample::select(b"\x00\x01 -5.\x80\xff".to_vec()), 40), 0..1500),
            parts in proptest::collection::vec(typed_part(), 1..6),
            prefix_bytes in 1usize..4,
            method in prop_oneof![Just(Method::Radix), Just(Method::Merge)],
            pieces in any::<bool>(),
        ) {
            let r = 40;
            let key = KeySpec::new(parts).resolve(r).unwrap();
            let data: Vec<u8> = recs.concat();
            let layout = EntryLayout { prefix_bytes, offset_bits: 20, exact: key.exact_within(prefix_bytes) };
            let n = recs.len();
            let (mut entries, mut scratch) = (vec![0u128; n], vec![0u128; n]);
            extract(&key, layout, &data, 0, r, &mut entries);
            if pieces {
                let ctx = SortContext { method, key: &key, layout, record_size: r };
                let mut done = 0;
                sort_in_pieces(&ctx, &data, &mut entries, &mut scratch, |p| done += p.len());
                prop_assert_eq!(done, n);
            } else {
                sort(method, &key, layout, r, &data, &mut entries, &mut scratch);
            }
            let got: Vec<usize> = entries.iter().map(|&e| layout.offset(e) / r).collect();
            let mut expect: Vec<usize> = (0..n).collect();
            expect.sort_by(|&a, &b| key.compare(&recs[a], &recs[b])); // stable: ties by index
            prop_assert_eq!(got, expect);
            for &e in &entries {
                let off = layout.offset(e);
                prop_assert_eq!(e, layout.entry(&key, &data[off..off + r], off));
            }
        }
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
            let layout = EntryLayout::for_key(&key, if block % 2 == 0 { usize::MAX >> 20 } else { data.len() });
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
