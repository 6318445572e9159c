//! Narrow entries for sorts of records in memory: a `u64` that holds the first bytes of the
//! normalized key above the record's index, half the width of the engine's `u128` entries (see
//! [`crate::entry`]). The radix sort, the entries' place in the output and the gather all move
//! half the bytes: 10^7 records of 100 bytes have 40-bit prefixes (5 key bytes above a 24-bit
//! index), which tell random keys apart, and their entries sort in about half the time.
//!
//! A prefix that ties often would leave most of the work to the refinement of ties, so a sample of
//! the records decides: narrow entries are used when the key fits in the prefix whole, or when
//! the sample's prefixes rarely tie. Groups of entries that still tie are put in order by their
//! full keys: a few entries by comparing records, larger groups by the engine's `u128` entries,
//! which refine ties level by level.

use crate::batches::SortContext;
use crate::entry::{self, EntryLayout, Locate, Records};
use crate::key::ResolvedKey;
use crate::refine::{self, COMPARE_MAX};
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};

/// How narrow entries of one array of records are laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct NarrowLayout {
    /// Key bytes held in the entry.
    pub prefix_bytes: usize,
    /// Low bits holding the record's index.
    index_bits: u32,
    /// Whether the prefix holds the whole key, so that entry order is final.
    exact: bool,
    /// Bytes per record.
    record_size: usize,
}

/// Records whose prefixes are sampled to decide whether narrow entries tell the keys apart.
const SAMPLE: usize = 1024;

/// Narrow entries are used when at most this fraction (1/n) of the sampled prefixes equal their
/// neighbour's in sorted order.
const SAMPLE_TIES_PER: usize = 64;

impl NarrowLayout {
    /// The narrow layout for `n` records of `record_size` bytes each, numbered from 0 in `records`,
    /// sorted by `key`, or `None` when wide entries serve them better: no key byte fits beside
    /// the index, or a sample of the records shows prefixes that tie too often.
    pub(crate) fn choose(key: &ResolvedKey, records: &impl Records, n: usize, record_size: usize) -> Option<NarrowLayout> {
        let index_bits = 64 - (n.max(2) as u64 - 1).leading_zeros();
        let prefix_bytes = key.len().min((64 - index_bits as usize) / 8);
        if prefix_bytes == 0 {
            return None;
        }
        let layout = NarrowLayout { prefix_bytes, index_bits, exact: key.exact_within(prefix_bytes), record_size };
        if layout.exact {
            return Some(layout);
        }
        let step = (n / SAMPLE).max(1);
        let mut sample: Vec<u64> = (0..n).step_by(step).map(|i| layout.prefix(key, records.record(i))).collect();
        sample.sort_unstable();
        let ties = sample.windows(2).filter(|w| w[0] == w[1]).count();
        (ties * SAMPLE_TIES_PER <= sample.len()).then_some(layout)
    }

    /// The key prefix of `rec`, in the entry's top bits.
    #[inline]
    fn prefix(&self, key: &ResolvedKey, rec: &[u8]) -> u64 {
        (key.prefix(rec, self.prefix_bytes) >> 64) as u64
    }

    /// The entry of `rec`, record `index` of its array.
    #[inline]
    pub(crate) fn entry(&self, key: &ResolvedKey, rec: &[u8], index: usize) -> u64 {
        self.prefix(key, rec) | index as u64
    }

    fn index_mask(&self) -> u64 {
        (1u64 << self.index_bits) - 1
    }

    /// The index of an entry's record.
    #[inline]
    pub(crate) fn index(&self, e: u64) -> usize {
        (e & self.index_mask()) as usize
    }
}

impl Locate<u64> for NarrowLayout {
    #[inline]
    fn record_at(&self, e: u64) -> usize {
        self.index(e) * self.record_size
    }
}

/// Sorts the narrow entries of the records numbered in `records` by the radix kernel, then puts
/// each group of equal prefixes in order by the full key (see the module doc). Gives up once
/// `stop` is set, leaving the entries in unspecified contents.
pub(crate) fn sort_until<S: Records>(
    ctx: &SortContext,
    layout: NarrowLayout,
    records: &S,
    entries: &mut [u64],
    scratch: &mut [u64],
    stop: &AtomicBool,
) {
    if !xsort_kernels::radix_sort_until(entries, scratch, layout.prefix_bytes, stop) || layout.exact {
        return;
    }
    let groups = xsort_kernels::equal_prefix_runs(entries, (layout.prefix_bytes * 8) as u32);
    refine::split_groups(entries, scratch, &groups).into_par_iter().for_each(|(group, _)| {
        if !stop.load(Ordering::Relaxed) {
            sort_group(ctx, layout, records, group, stop);
        }
    });
}

/// Orders a group of entries with equal prefixes by their records' full keys, ties by index.
fn sort_group<S: Records>(ctx: &SortContext, layout: NarrowLayout, records: &S, group: &mut [u64], stop: &AtomicBool) {
    let key = ctx.key;
    let compare = |group: &mut [u64]| {
        let by_record = |a: &u64, b: &u64| {
            let (ia, ib) = (layout.index(*a), layout.index(*b));
            key.compare(records.record(ia), records.record(ib)).then(ia.cmp(&ib))
        };
        if key.is_complete() {
            group.sort_unstable_by(by_record);
        } else {
            refine::merge_sort_untrusted(group, &by_record);
        }
    };
    if group.len() <= COMPARE_MAX {
        return compare(group);
    }
    // The engine's wide entries, which refine ties by the next bytes of the key, level by level;
    // where their memory cannot be had (a huge group the sample did not see), records compared.
    let (Some(mut entries), Some(mut scratch)) = (zeroed(group.len()), zeroed(group.len())) else {
        return compare(group);
    };
    // Their locations are the records' numbers, as the narrow entries' are.
    let wide = EntryLayout::for_key(key, 1 << layout.index_bits);
    for (w, &e) in entries.iter_mut().zip(group.iter()) {
        *w = wide.entry(key, records.record(layout.index(e)), layout.index(e));
    }
    entry::sort_located_until(&SortContext { layout: wide, ..*ctx }, records, &mut entries, &mut scratch, stop);
    let prefix = group[0] & !layout.index_mask();
    for (e, w) in group.iter_mut().zip(entries) {
        *e = prefix | wide.offset(w) as u64;
    }
}

/// `n` zeroed entries, or None when the memory cannot be had.
fn zeroed(n: usize) -> Option<Vec<u128>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).ok()?;
    v.resize(n, 0);
    Some(v)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::entry::ByIndex;
    use crate::key::{KeyPart, KeySpec};
    use xsort_kernels::Method;

    /// Records of `r` bytes whose bytes come from `alphabet` (xorshift64 from `seed`, not 0).
    pub(crate) fn records(seed: u64, n: usize, r: usize, alphabet: &[u8]) -> Vec<u8> {
        let mut x = seed;
        (0..n * r)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                alphabet[(x >> 40) as usize % alphabet.len()]
            })
            .collect()
    }

    fn sorted_indices(key: &ResolvedKey, layout: NarrowLayout, data: &[u8]) -> Vec<usize> {
        let r = layout.record_size;
        let n = data.len() / r;
        let (mut entries, mut scratch) = (vec![0u64; n], vec![0u64; n]);
        let make = |rec: &[u8], i: usize| layout.entry(key, rec, i);
        entry::extract_checked_with(data, r, key.first_offset(), &mut entries, make, || Ok(())).unwrap();
        let ctx = SortContext { method: Method::Radix, key, layout: EntryLayout::for_key(key, data.len()), record_size: r };
        sort_until(&ctx, layout, &ByIndex { data, record_size: r }, &mut entries, &mut scratch, &entry::NEVER);
        entries.iter().map(|&e| layout.index(e)).collect()
    }

    #[test]
    fn layouts_for_short_long_and_tied_keys() {
        let r = 100;
        let random = records(7, 10_000, r, &(0..=255).collect::<Vec<u8>>());
        let key = |spec: &str| KeySpec::new(vec![KeyPart::parse_key_bytes(spec).unwrap()]).resolve(r).unwrap();
        let choose = |key: &ResolvedKey, data: &[u8]| NarrowLayout::choose(key, &ByIndex { data, record_size: r }, data.len() / r, r);
        // 10,000 records: a 14-bit index, 6 key bytes beside it.
        let l = choose(&key("0:10"), &random).unwrap();
        assert_eq!((l.prefix_bytes, l.index_bits, l.exact), (6, 14, false));
        let l = choose(&key("3:4"), &random).unwrap();
        assert_eq!((l.prefix_bytes, l.exact), (4, true));
        // Keys whose first 6 bytes take 4 values: the sample ties, wide entries serve better.
        let tied = records(7, 10_000, r, b"ab");
        assert_eq!(choose(&key("0:10"), &tied), None);
        assert!(choose(&key("0:2"), &tied).is_some(), "a key held whole is never refined");
    }

    /// Keys longer than the prefix, with groups of every size tied on it (bytes from a small
    /// alphabet, a forced layout so that ties are plenty), in both directions: the order equals a
    /// stable sort by the full key.
    #[test]
    fn ties_past_the_prefix_are_ordered_by_the_full_key() {
        let r = 24;
        for (alphabet, n) in [(&b"xy"[..], 3000), (&b"pqrs"[..], 20_000), (&b"\x00\x01\x02\xff"[..], 70_000)] {
            let data = records(n as u64, n, r, alphabet);
            for spec in ["0:12", "2:20:char:r", "4:8:u64le"] {
                let key = KeySpec::new(vec![KeyPart::parse_key_bytes(spec).unwrap()]).resolve(r).unwrap();
                let layout = NarrowLayout { prefix_bytes: 2, index_bits: 17, exact: false, record_size: r };
                let mut want: Vec<usize> = (0..n).collect();
                want.sort_by(|&a, &b| key.compare(&data[a * r..a * r + r], &data[b * r..b * r + r]));
                assert_eq!(sorted_indices(&key, layout, &data), want, "key {spec}, {n} records");
            }
        }
    }
}
