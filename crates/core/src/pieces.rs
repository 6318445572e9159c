//! Fixed-size records that lie in several pieces of memory, sorted where they lie: the in-memory
//! sort of records (the one [`crate::Sort::sort_slice`] uses) for a caller whose records are not
//! in one buffer, as a cluster rank's round is (the records it keeps, in its own buffer, and those
//! each other rank sent, in a receive buffer), without copying them together first.
//!
//! The records are numbered from 0 in the order their pieces were pushed, and that number is the
//! low bits of each record's sort entry, so records with equal keys keep that order: pushing the
//! pieces in input order makes the sort stable. The entries are narrow (`u64`) when a sample of
//! the records shows that their prefixes tell the keys apart, else wide (`u128`), by the same
//! rule and the same tie refinement as the other in-memory sorts (see `narrow.rs` and `entry.rs`
//! in xsort-core). Both widths live in memory the caller gives and can reuse round after round.

use crate::batches::SortContext;
use crate::entry::{self, EntryLayout, Records};
use crate::key::ResolvedKey;
use crate::narrow::{self, NarrowLayout};
use xsort_kernels::Method;

/// Fixed-size records in several pieces of memory, numbered from 0 in the order of their pieces.
#[derive(Clone, Debug)]
pub struct RecordPieces<'a> {
    /// Each piece with the number of its first record.
    pieces: Vec<(usize, &'a [u8])>,
    record_size: usize,
    len: usize,
}

impl<'a> RecordPieces<'a> {
    /// No records yet, of `record_size` bytes each (at least 1).
    pub fn new(record_size: usize) -> Self {
        assert!(record_size > 0, "records have at least one byte");
        RecordPieces { pieces: Vec::new(), record_size, len: 0 }
    }

    /// Adds the records of `piece`, numbered after those before it. Its length is a whole number
    /// of records; an empty piece adds nothing.
    pub fn push(&mut self, piece: &'a [u8]) {
        assert!(
            piece.len().is_multiple_of(self.record_size),
            "a piece of {} bytes holds whole records of {}",
            piece.len(),
            self.record_size
        );
        if !piece.is_empty() {
            self.pieces.push((self.len, piece));
            self.len += piece.len() / self.record_size;
        }
    }

    /// How many records the pieces hold.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the pieces hold no record.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Record number `i`.
    #[inline]
    pub fn record(&self, i: usize) -> &'a [u8] {
        let p = if self.pieces.len() == 1 { 0 } else { self.pieces.partition_point(|p| p.0 <= i) - 1 };
        let (first, piece) = self.pieces[p];
        let at = (i - first) * self.record_size;
        &piece[at..at + self.record_size]
    }

    /// Sorts the records by `key` (the key of records of this size), stably: the numbers of the
    /// records in key order, ties in number order. `entries` and `scratch` hold at least
    /// [`Self::len`] entries each; the order lies in them (narrow entries and their scratch both
    /// fit in `entries`, two to a wide one). Runs on the current rayon pool.
    pub fn sort<'e>(&self, key: &ResolvedKey, entries: &'e mut [u128], scratch: &'e mut [u128]) -> SortedPieces<'e> {
        let (n, r) = (self.len, self.record_size);
        assert!(entries.len() >= n && scratch.len() >= n, "room for {n} entries");
        let ctx = SortContext { method: Method::Radix, key, layout: EntryLayout::for_key(key, n), record_size: r };
        let order = match NarrowLayout::choose(key, self, n, r) {
            Some(layout) => {
                // SAFETY: every bit pattern is a valid `u64`, and a `u128` slice is aligned for
                // `u64`s, so the middle is the whole slice (two words per entry), borrowed for
                // as long as `entries`.
                let (_, words, _) = unsafe { entries[..n].align_to_mut::<u64>() };
                let (narrow, work) = words.split_at_mut(n);
                self.extract(key, narrow, |rec, i| layout.entry(key, rec, i));
                narrow::sort_until(&ctx, layout, self, narrow, work, &entry::NEVER);
                Order::Narrow(narrow, layout)
            }
            None => {
                let (wide, layout) = (&mut entries[..n], ctx.layout);
                self.extract(key, wide, |rec, i| layout.entry(key, rec, i));
                entry::sort_located_until(&ctx, self, wide, &mut scratch[..n], &entry::NEVER);
                Order::Wide(wide, layout)
            }
        };
        SortedPieces { order }
    }

    /// Fills `out[i]` with `make(record i, i)`, piece by piece, each in parallel.
    fn extract<E: Send>(&self, key: &ResolvedKey, out: &mut [E], make: impl Fn(&[u8], usize) -> E + Sync) {
        for &(first, piece) in &self.pieces {
            let slots = &mut out[first..first + piece.len() / self.record_size];
            entry::extract_each(piece, self.record_size, key.first_offset(), slots, |rec, i| make(rec, first + i));
        }
    }
}

impl Records for RecordPieces<'_> {
    #[inline]
    fn record(&self, index: usize) -> &[u8] {
        RecordPieces::record(self, index)
    }
}

/// The order [`RecordPieces::sort`] found.
pub struct SortedPieces<'e> {
    order: Order<'e>,
}

/// Sorted entries of either width.
enum Order<'e> {
    Narrow(&'e [u64], NarrowLayout),
    Wide(&'e [u128], EntryLayout),
}

impl SortedPieces<'_> {
    /// How many records were sorted.
    pub fn len(&self) -> usize {
        match &self.order {
            Order::Narrow(e, _) => e.len(),
            Order::Wide(e, _) => e.len(),
        }
    }

    /// Whether no record was sorted.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The number of the record at place `k` of the sorted order.
    #[inline]
    pub fn index(&self, k: usize) -> usize {
        match &self.order {
            Order::Narrow(e, layout) => layout.index(e[k]),
            Order::Wide(e, layout) => layout.offset(e[k]),
        }
    }

    /// Whether narrow entries were used (for statistics and tests).
    pub fn is_narrow(&self) -> bool {
        matches!(self.order, Order::Narrow(..))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{KeyPart, KeySpec};
    use crate::narrow::tests::records;

    /// Records cut into pieces of uneven sizes (an empty one among them) sort as a stable sort of
    /// their concatenation does, with narrow entries (random keys) and wide ones (keys that tie
    /// on their first bytes), a short key and one longer than any prefix.
    #[test]
    fn pieces_sort_like_a_stable_sort_of_their_concatenation() {
        let r = 20;
        let all: Vec<u8> = (0..256).map(|b| b as u8).collect();
        for (alphabet, n, narrow) in [(&all[..], 50_000, Some(true)), (&b"ab"[..], 40_000, Some(false)), (&b"\x00\x01"[..], 20, None)] {
            let data = records(n as u64, n, r, alphabet);
            for spec in ["0:20", "2:3", "5:10:char:r"] {
                let key = KeySpec::new(vec![KeyPart::parse_key_bytes(spec).unwrap()]).resolve(r).unwrap();
                let mut pieces = RecordPieces::new(r);
                let cuts = [0, n / 7, n / 7, n / 2, n / 2 + 1, n];
                for w in cuts.windows(2) {
                    pieces.push(&data[w[0] * r..w[1] * r]);
                }
                assert_eq!(pieces.len(), n);
                let (mut entries, mut scratch) = (vec![0u128; n + 3], vec![0u128; n]);
                let sorted = pieces.sort(&key, &mut entries, &mut scratch);
                let mut want: Vec<usize> = (0..n).collect();
                want.sort_by(|&a, &b| key.compare(&data[a * r..a * r + r], &data[b * r..b * r + r]));
                let got: Vec<usize> = (0..sorted.len()).map(|k| sorted.index(k)).collect();
                assert_eq!(got, want, "key {spec}, {n} records");
                if let (Some(narrow), "0:20") = (narrow, spec) {
                    assert_eq!(sorted.is_narrow(), narrow, "key {spec}, {n} records");
                }
            }
        }
    }
}
