//! Splitters by regular sampling: every rank samples its share, the samples are gathered on every
//! rank, sorted as the sort orders records, and cut at equal shares of the bytes they stand for.
//!
//! Items compare by the sort's order and then by global input position, so that equal keys split
//! evenly (an input of one repeated key still spreads over the ranks) and a rank's range of equal
//! keys follows the lower rank's, which keeps the sort stable across ranks. When equal keys fold
//! into one record (`-u`, Nsort's `-noduplicates` or `-summarize`) they must meet on one rank, and
//! positions are left out.

use std::cmp::Ordering;
use xsort_core::Order;

/// A sampled item: its bytes (a record, or a line without its terminator) and global position.
pub type Sample = (Vec<u8>, u64);

/// The splitters: item `i` goes to the rank whose number is how many splitters are below it.
pub struct Splitters {
    order: Order,
    by_position: bool,
    items: Vec<Sample>,
}

impl Splitters {
    /// Chooses `ranks - 1` splitters from all the ranks' samples.
    pub fn choose(order: Order, by_position: bool, mut samples: Vec<Sample>, ranks: usize) -> Splitters {
        let weight = |s: &Sample| s.0.len() as u64 + u64::from(order.terminator().is_some());
        samples.sort_by(|a, b| compare(&order, by_position, (&a.0, a.1), (&b.0, b.1)));
        let total: u64 = samples.iter().map(weight).sum();
        let mut items = Vec::with_capacity(ranks.saturating_sub(1));
        let (mut acc, mut next) = (0u64, 1usize);
        for s in &samples {
            // A splitter closes each rank's share of the sampled bytes.
            while next < ranks && acc >= (total as u128 * next as u128 / ranks as u128) as u64 && total > 0 {
                items.push(s.clone());
                next += 1;
            }
            acc += weight(s);
        }
        // Ranks left without a splitter (few samples) get empty ranges at the top. With no samples
        // at all (no input, or only a last line without its terminator) everything goes to rank 0.
        if let Some(top) = samples.last() {
            while items.len() + 1 < ranks {
                items.push((top.0.clone(), u64::MAX));
            }
        }
        Splitters { order, by_position, items }
    }

    /// The splitters in order, each with its global position; whether positions break ties.
    pub fn items(&self) -> (&[Sample], bool) {
        (&self.items, self.by_position)
    }

    /// The rank an item at global position `pos` goes to.
    pub fn rank_of(&self, item: &[u8], pos: u64) -> usize {
        self.items.partition_point(|s| compare(&self.order, self.by_position, (&s.0, s.1), (item, pos)) == Ordering::Less)
    }
}

/// The order of items: the sort's, then (when `by_position`) input position.
fn compare(order: &Order, by_position: bool, a: (&[u8], u64), b: (&[u8], u64)) -> Ordering {
    let o = order.compare(a.0, b.0);
    if o == Ordering::Equal && by_position {
        a.1.cmp(&b.1)
    } else {
        o
    }
}

/// Samples as bytes, to gather them: (position, length, bytes) for each.
pub fn pack(samples: &[Sample]) -> Vec<u8> {
    let mut out = Vec::new();
    for (item, pos) in samples {
        out.extend_from_slice(&pos.to_le_bytes());
        out.extend_from_slice(&(item.len() as u64).to_le_bytes());
        out.extend_from_slice(item);
    }
    out
}

/// The samples in what [`pack`] made.
pub fn unpack(mut bytes: &[u8]) -> Vec<Sample> {
    let mut out = Vec::new();
    while bytes.len() >= 16 {
        let pos = u64::from_le_bytes(bytes[..8].try_into().unwrap_or_default());
        let len = u64::from_le_bytes(bytes[8..16].try_into().unwrap_or_default()) as usize;
        out.push((bytes[16..16 + len].to_vec(), pos));
        bytes = &bytes[16 + len..];
    }
    out
}
