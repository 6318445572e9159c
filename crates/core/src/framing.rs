//! What the engine needs to know about records, whatever their format: how a byte stream splits into
//! records ([`Framing`]) and how two records order ([`RecordOrder`]).
//!
//! Fixed-size binary records and text lines share the run merge and the temp store through these
//! two; each format brings its own implementation of the order (byte-range keys for records, GNU
//! sort's key semantics for lines).

use crate::csv::{CsvDialect, Scanner};
use crate::key::ResolvedKey;
use std::cmp::Ordering;

/// How a byte stream splits into records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    /// Records of exactly this many bytes.
    Fixed(usize),
    /// Records ended by a terminator (see [`Splitter`]). The terminator is not part of the record
    /// as the order sees it; a stream's last record may lack it.
    Delimited(Splitter),
}

/// How text splits into records: at each terminator (newline for lines, NUL for `-z`), or, for
/// CSV, at each terminator outside quotes (see [`crate::csv`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Splitter {
    /// The byte that ends a record.
    pub terminator: u8,
    /// CSV records: a terminator inside a quoted field does not end one.
    pub csv: Option<CsvDialect>,
}

impl Splitter {
    /// Records that are lines ended by `terminator`.
    #[cfg(test)]
    pub fn lines(terminator: u8) -> Splitter {
        Splitter { terminator, csv: None }
    }

    /// The offsets in `data` of the terminators of the records that start at `from` (a record's
    /// start) and end in `data`. The data is taken as checked: a CSV record with a fault that a
    /// strict dialect refuses is split as a lenient one would split it.
    #[inline]
    pub fn ends(self, data: &[u8], from: usize) -> Ends<'_> {
        match self.csv {
            None => Ends::Lines { found: memchr::memchr_iter(self.terminator, &data[from..]), base: from },
            Some(_) => Ends::Csv { finder: self.finder(), data, at: from },
        }
    }

    /// A finder of record ends in pieces of a stream, starting at a record's start.
    pub fn finder(self) -> EndFinder {
        EndFinder {
            terminator: self.terminator,
            scanner: self.csv.map(|d| Scanner::new(CsvDialect { strict: false, ..d }, self.terminator)),
        }
    }

    /// The offset of the terminator of the record that starts at `from` in `data`, if it ends there.
    #[inline]
    pub fn first_end(self, data: &[u8], from: usize) -> Option<usize> {
        match self.csv {
            None => memchr::memchr(self.terminator, &data[from..]).map(|i| from + i),
            Some(_) => self.ends(data, from).next(),
        }
    }
}

/// Finds where records end in a stream given piece by piece ([`Splitter::finder`]), taking the
/// data as checked (see [`Splitter::ends`]).
pub struct EndFinder {
    terminator: u8,
    scanner: Option<Scanner>,
}

impl EndFinder {
    /// The offset in `data` of the terminator that ends the record begun in it or in the pieces
    /// before; None when `data` ends first.
    #[inline]
    pub fn find(&mut self, data: &[u8]) -> Option<usize> {
        match &mut self.scanner {
            None => memchr::memchr(self.terminator, data),
            // A lenient scanner finds no fault.
            Some(s) => s.find_end(data).ok().flatten(),
        }
    }
}

/// The record ends of [`Splitter::ends`].
pub enum Ends<'a> {
    /// Lines: every terminator.
    Lines { found: memchr::Memchr<'a>, base: usize },
    /// CSV records: the terminators outside quotes.
    Csv { finder: EndFinder, data: &'a [u8], at: usize },
}

impl Iterator for Ends<'_> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        match self {
            Ends::Lines { found, base } => found.next().map(|i| *base + i),
            Ends::Csv { finder, data, at } => {
                let end = *at + finder.find(&data[*at..])?;
                *at = end + 1;
                Some(end)
            }
        }
    }
}

/// A test of records against one fixed record (see [`RecordOrder::level_matcher`]).
pub type Matcher<'a> = Box<dyn Fn(&[u8]) -> bool + Sync + 'a>;

/// The order of records: a byte-comparable prefix for fast comparisons, and the full comparison.
pub trait RecordOrder: Sync {
    /// The top bits of the record's normalized key, as an integer: `prefix(a) < prefix(b)` implies
    /// `compare(a, b) == Less`, and `compare(a, b) == Equal` implies equal prefixes.
    fn prefix(&self, rec: &[u8]) -> u128;
    /// The full order of two records.
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering;
    /// Whether prefix order already is the full order (no tie-break needed).
    fn prefix_is_exact(&self) -> bool;

    /// Comparison levels (keys one after the other): records equal at every level are equal. An
    /// order with several lets the sorter break ties of the first level's prefix by the next level's
    /// prefix instead of by full comparisons.
    fn levels(&self) -> usize {
        1
    }

    /// The prefix of one level alone, with [`Self::prefix`]'s contract among records whose earlier
    /// levels are equal. Level 0 is [`Self::prefix`].
    fn level_prefix(&self, rec: &[u8], level: usize) -> u128 {
        let _ = level;
        self.prefix(rec)
    }

    /// Whether two records are equal at one level.
    fn level_equal(&self, a: &[u8], b: &[u8], level: usize) -> bool {
        let _ = level;
        self.compare(a, b) == Ordering::Equal
    }

    /// Whether two records are equal in their first `keys` keys, or in all of them when None
    /// (Nsort's `-match`); an order of one key (the default) compares it whole.
    fn keys_equal(&self, a: &[u8], b: &[u8], keys: Option<usize>) -> bool {
        let _ = keys;
        self.compare(a, b) == Ordering::Equal
    }

    /// The bytes of `rec` that `level` orders by, when the level compares them as plain bytes
    /// (reversed when the bool is true), for every record or for none: lets a sorter pack a short
    /// key of the level with the next level's prefix. None (the default) for other levels.
    fn level_bytes<'r>(&self, rec: &'r [u8], level: usize) -> Option<(&'r [u8], bool)> {
        let _ = (rec, level);
        None
    }

    /// A test for records equal to `first` at `level`, for testing many against one: an order may
    /// prepare `first` once (find its key) instead of at every call.
    fn level_matcher<'a>(&'a self, first: &'a [u8], level: usize) -> Matcher<'a> {
        Box::new(move |rec| self.level_equal(first, rec, level))
    }

    /// Appends to `out` bytes of `rec` that order it at `level`: records with smaller bytes are
    /// smaller there (larger when the returned bool says the level is reversed), and records equal
    /// there have equal bytes; records with equal bytes may still differ at the level. None (the
    /// default) when the level has no such transform worth its cost, or not for this record. Lets
    /// a sorter order a group of ties by one transform per record instead of many costly
    /// comparisons (a locale's collation).
    fn level_transform(&self, rec: &[u8], level: usize, out: &mut Vec<u8>) -> Option<bool> {
        let _ = (rec, level, out);
        None
    }
}

impl RecordOrder for ResolvedKey {
    #[inline]
    fn prefix(&self, rec: &[u8]) -> u128 {
        ResolvedKey::prefix(self, rec, 16)
    }

    #[inline]
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        ResolvedKey::compare(self, a, b)
    }

    fn prefix_is_exact(&self) -> bool {
        self.exact_within(16)
    }

    fn keys_equal(&self, a: &[u8], b: &[u8], keys: Option<usize>) -> bool {
        ResolvedKey::parts_equal(self, a, b, keys)
    }
}
