//! Records with equal keys folded into one on the way out: `-u` / Nsort's `-noduplicates` keep the
//! first (in input order), Nsort's `-summarize` keeps the first with its named integer fields
//! replaced by the sums over the group. A sum that would not fit its field never wraps: as in
//! Nsort (its `NSORT_SUMMARIZE_OVERFLOWED` warning), the group is kept as several records, the
//! record that would overflow starting the next one, and the overflows are counted for a
//! warning.
//!
//! Nsort's `-match[=N]` marks instead of folding: each record passed on is preceded by one byte,
//! `1` when its first N keys (all of them, without N) equal those of the record passed on before
//! it, `0` when they do not (and for the first record). A program reading the output (Ordinal's
//! SUMP Pump, whose `-GROUP_BY` reducers need it) finds each group's first record by its `0`.
//!
//! Folding happens where sorted records are emitted in order (the final merge, or the one-pass
//! output), so groups that span runs fold too. It works on any [`RecordOrder`] and [`Framing`]:
//! fixed-size records and text lines (`-u`) alike.

use crate::error::{Result, SortError};
use crate::framing::{Framing, RecordOrder};
use crate::key::ByteOrder;
use crate::runs::RecordSink;
use crate::stats::SortCounters;
use std::cmp::Ordering;
use std::sync::atomic::Ordering as Atomic;

/// An integer field summed by `-summarize`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SumField {
    /// Its name, for messages.
    pub name: String,
    /// Offset in the record.
    pub offset: usize,
    /// Size in bytes: 1, 2, 4 or 8.
    pub len: usize,
    /// Two's complement signed (else unsigned).
    pub signed: bool,
    /// Byte order.
    pub order: ByteOrder,
}

impl SumField {
    fn read(&self, rec: &[u8]) -> i128 {
        let mut b = [0u8; 8];
        let src = &rec[self.offset..self.offset + self.len];
        match self.order {
            ByteOrder::Big => b[8 - self.len..].copy_from_slice(src),
            ByteOrder::Little => {
                b[8 - self.len..].copy_from_slice(src);
                b[8 - self.len..].reverse();
            }
        }
        let raw = u64::from_be_bytes(b);
        let bits = 8 * self.len as u32;
        if self.signed {
            // Sign-extend from the field's width.
            ((raw << (64 - bits)) as i64 >> (64 - bits)) as i128
        } else {
            raw as i128
        }
    }

    fn range(&self) -> (i128, i128) {
        let bits = 8 * self.len as u32;
        if self.signed {
            (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
        } else {
            (0, (1i128 << bits) - 1)
        }
    }

    fn write(&self, rec: &mut [u8], v: i128) {
        let b = (v as u64).to_be_bytes();
        let dst = &mut rec[self.offset..self.offset + self.len];
        dst.copy_from_slice(&b[8 - self.len..]);
        if self.order == ByteOrder::Little {
            dst.reverse();
        }
    }
}

/// Nsort's `-match[=N]`: which keys the byte before each output record compares (see the module
/// doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MatchMark {
    /// The first this many keys; all of them when None.
    pub keys: Option<usize>,
}

impl MatchMark {
    /// The byte before a record that starts a group.
    pub const NEW_GROUP: u8 = b'0';
    /// The byte before a record whose keys match the record's before it.
    pub const SAME_GROUP: u8 = b'1';
}

/// How equal-key records are folded, or marked.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Folding {
    /// Keep only the first record of each group of equal keys.
    pub unique: bool,
    /// Fields summed over each group (implies one record per group).
    pub sums: Vec<SumField>,
    /// Each record passed on preceded by whether it matches the one before it.
    pub mark: Option<MatchMark>,
}

impl Folding {
    /// Whether records pass through a [`FoldSink`] at all: folded or marked.
    pub fn is_active(&self) -> bool {
        self.folds() || self.mark.is_some()
    }

    /// Whether records with equal keys become one.
    fn folds(&self) -> bool {
        self.unique || !self.sums.is_empty()
    }

    /// Checks the summed fields against the record size.
    pub fn check(&self, record_size: usize) -> Result<()> {
        for f in &self.sums {
            if ![1, 2, 4, 8].contains(&f.len) || f.offset + f.len > record_size {
                return Err(SortError::BadOption(format!(
                    "-summarize field '{}' must be a 1, 2, 4 or 8-byte integer inside the {record_size}-byte record",
                    f.name
                )));
            }
        }
        Ok(())
    }
}

/// A sink that folds consecutive records with equal keys before passing them on.
pub struct FoldSink<'a, 'w, O: RecordOrder> {
    sink: RecordSink<'w>,
    order: &'a O,
    framing: Framing,
    folding: &'a Folding,
    pending: Vec<u8>,
    sums: Vec<i128>,
    has_pending: bool,
    /// The record passed on last, for `-match` (None before the first).
    last: Option<Vec<u8>>,
    /// Records taken.
    taken: u64,
    /// Records passed on.
    written: u64,
    /// Records that started a new record of their group because a sum would have overflowed.
    overflows: u64,
}

impl<'a, 'w, O: RecordOrder> FoldSink<'a, 'w, O> {
    /// A sink into `sink` of records framed as `framing` (a line gets its terminator back).
    pub fn new(sink: RecordSink<'w>, order: &'a O, framing: Framing, folding: &'a Folding) -> Self {
        let (pending, sums) = (Vec::new(), Vec::new());
        FoldSink { sink, order, framing, folding, pending, sums, has_pending: false, last: None, taken: 0, written: 0, overflows: 0 }
    }

    /// Passes a record on (with its mark, under `-match`).
    #[inline]
    fn pass(&mut self, rec: &[u8]) -> Result<()> {
        if let Some(mark) = self.folding.mark {
            let same = self.last.as_deref().is_some_and(|last| self.order.keys_equal(last, rec, mark.keys));
            self.sink.push(&[if same { MatchMark::SAME_GROUP } else { MatchMark::NEW_GROUP }])?;
            let last = self.last.get_or_insert_with(Vec::new);
            last.clear();
            last.extend_from_slice(rec);
        }
        self.written += 1;
        self.sink.push_record(rec, self.framing)
    }

    /// Takes the next record in sorted order (passed straight on when nothing is folded).
    pub fn push(&mut self, rec: &[u8]) -> Result<()> {
        self.taken += 1;
        if !self.folding.folds() {
            return self.pass(rec);
        }
        if self.has_pending && self.order.compare(&self.pending, rec) == Ordering::Equal {
            let fits = self.sums.iter().zip(&self.folding.sums).all(|(sum, f)| {
                let (lo, hi) = f.range();
                (lo..=hi).contains(&(sum + f.read(rec)))
            });
            if fits {
                for (sum, f) in self.sums.iter_mut().zip(&self.folding.sums) {
                    *sum += f.read(rec);
                }
                return Ok(());
            }
            self.overflows += 1;
        }
        self.emit()?;
        self.pending.clear();
        self.pending.extend_from_slice(rec);
        self.sums.clear();
        self.sums.extend(self.folding.sums.iter().map(|f| f.read(rec)));
        self.has_pending = true;
        Ok(())
    }

    fn emit(&mut self) -> Result<()> {
        if !self.has_pending {
            return Ok(());
        }
        for (sum, f) in self.sums.iter().zip(&self.folding.sums) {
            f.write(&mut self.pending, *sum);
        }
        let pending = std::mem::take(&mut self.pending);
        let passed = self.pass(&pending);
        self.pending = pending;
        self.has_pending = false;
        passed
    }

    /// Passes on the last group and flushes; adds to `counters` the records folded into another
    /// and those whose sums did not fit the record before (see the module doc).
    pub fn finish(mut self, counters: &SortCounters) -> Result<u64> {
        self.emit()?;
        counters.records_folded.fetch_add(self.taken - self.written, Atomic::Relaxed);
        counters.summarize_overflows.fetch_add(self.overflows, Atomic::Relaxed);
        self.sink.flush()?;
        Ok(self.written)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(offset: usize, len: usize, signed: bool, order: ByteOrder) -> SumField {
        SumField { name: "f".into(), offset, len, signed, order }
    }

    #[test]
    fn fields_read_and_write_in_both_orders_and_signs() {
        let mut rec = [0u8; 8];
        for (len, signed, v) in [(1, true, -5i128), (2, false, 65535), (4, true, -2_000_000_000), (8, false, u64::MAX as i128)] {
            for order in [ByteOrder::Big, ByteOrder::Little] {
                let f = field(0, len, signed, order);
                f.write(&mut rec, v);
                assert_eq!(f.read(&rec), v, "{len} {signed} {order:?}");
                let (lo, hi) = f.range();
                assert!(lo <= v && v <= hi);
            }
        }
    }

    #[test]
    fn bad_fields_are_refused() {
        let f = Folding { sums: vec![field(6, 4, false, ByteOrder::Big)], ..Folding::default() };
        assert!(f.check(8).is_err());
        let f = Folding { sums: vec![field(0, 3, false, ByteOrder::Big)], ..Folding::default() };
        assert!(f.check(8).is_err());
    }
}
