//! What the engine needs to know about records, whatever their format: how a byte stream splits into
//! records ([`Framing`]) and how two records order ([`RecordOrder`]).
//!
//! Fixed-size binary records and text lines share the run merge and the temp store through these
//! two; each format brings its own implementation of the order (byte-range keys for records, GNU
//! sort's key semantics for lines).

use crate::key::ResolvedKey;
use std::cmp::Ordering;

/// How a byte stream splits into records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    /// Records of exactly this many bytes.
    Fixed(usize),
    /// Records ended by this byte (newline for lines, NUL for `-z`). The terminator is not part of
    /// the record as the order sees it; a stream's last record may lack it.
    Delimited(u8),
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
        self.len() <= 16
    }
}
