//! What valsort learns about a run of records, and the 280-byte summary file.
//!
//! A [`Summary`] describes consecutive records: how many, how many keys are
//! out of order or repeated, the checksum, and the first and last record, so
//! that summaries of adjacent parts combine into the summary of the whole
//! ([`Summary::append`], [`combine_summaries`]). That is how valsort checks
//! in parallel and how `valsort -s` checks partitioned output.
//!
//! The file form (`-o`) is the reference's `struct summary`: five 128-bit
//! counters, each as two `u64` (high half, then low half) in the host's byte
//! order, then the first and the last record: 280 bytes, no padding, readable
//! by the 1.5 tools on a host of the same byte order.

use crate::checksum::format_checksum;
use crate::error::{Error, Result};
use crate::record::{KEY_SIZE, REC_SIZE};
use crate::validate::KeyOrder;

/// Bytes in one summary record.
pub const SUMMARY_SIZE: usize = 5 * 16 + 2 * REC_SIZE;

/// The result of validating consecutive records (or a whole file).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Summary {
    /// 0-based index of the first record whose key is less than its
    /// predecessor's, or `None` when all are in order. (The file form
    /// encodes `None` as 0, which is unambiguous: record 0 has no
    /// predecessor and so is never unordered.)
    pub first_unordered: Option<u128>,
    /// Records whose key is less than their predecessor's.
    pub unordered: u128,
    /// Records.
    pub records: u128,
    /// Records whose key equals their predecessor's (a key seen three times
    /// counts two).
    pub duplicates: u128,
    /// Sum of the records' CRC-32s, mod 2^128.
    pub checksum: u128,
    /// The first record.
    pub first_record: [u8; REC_SIZE],
    /// The last record.
    pub last_record: [u8; REC_SIZE],
}

impl Summary {
    /// The summary of a single record.
    pub fn of_record(rec: &[u8; REC_SIZE]) -> Summary {
        Summary {
            first_unordered: None,
            unordered: 0,
            records: 1,
            duplicates: 0,
            checksum: u128::from(crate::record_crc(rec)),
            first_record: *rec,
            last_record: *rec,
        }
    }

    /// True when no record is out of order (valsort's exit status 0).
    pub fn is_ordered(&self) -> bool {
        self.unordered == 0
    }

    /// valsort's exit status for this result: 0 if ordered, else 1.
    pub fn exit_code(&self) -> i32 {
        if self.is_ordered() {
            0
        } else {
            1
        }
    }

    /// Extends `self` with the summary of the records that directly follow,
    /// comparing the keys on each side of the boundary with `order`.
    pub fn append(&mut self, next: &Summary, order: KeyOrder) {
        let before = self.records;
        match order.compare(key(&self.last_record), key(&next.first_record)) {
            std::cmp::Ordering::Equal => self.duplicates = self.duplicates.wrapping_add(1),
            std::cmp::Ordering::Greater => {
                // The boundary's later record is the unordered one.
                self.first_unordered.get_or_insert(before);
                self.unordered = self.unordered.wrapping_add(1);
            }
            std::cmp::Ordering::Less => {}
        }
        if self.first_unordered.is_none() {
            self.first_unordered = next.first_unordered.map(|i| before.wrapping_add(i));
        }
        self.unordered = self.unordered.wrapping_add(next.unordered);
        self.records = before.wrapping_add(next.records);
        self.duplicates = self.duplicates.wrapping_add(next.duplicates);
        self.checksum = self.checksum.wrapping_add(next.checksum);
        self.last_record = next.last_record;
    }

    /// The 280-byte file form (see the module docs).
    pub fn to_bytes(&self) -> [u8; SUMMARY_SIZE] {
        let mut out = [0u8; SUMMARY_SIZE];
        let counters = [self.first_unordered.unwrap_or(0), self.unordered, self.records, self.duplicates, self.checksum];
        for (slot, value) in out.chunks_exact_mut(16).zip(counters) {
            slot[..8].copy_from_slice(&((value >> 64) as u64).to_ne_bytes());
            slot[8..].copy_from_slice(&(value as u64).to_ne_bytes());
        }
        out[80..180].copy_from_slice(&self.first_record);
        out[180..280].copy_from_slice(&self.last_record);
        out
    }

    /// Reads the file form; `bytes` must be exactly 280 bytes long.
    pub fn from_bytes(bytes: &[u8]) -> Result<Summary> {
        let bytes: &[u8; SUMMARY_SIZE] = bytes.try_into().map_err(|_| Error::PartialSummary)?;
        let counter = |k: usize| {
            let mut hi = [0u8; 8];
            let mut lo = [0u8; 8];
            hi.copy_from_slice(&bytes[16 * k..16 * k + 8]);
            lo.copy_from_slice(&bytes[16 * k + 8..16 * k + 16]);
            (u128::from(u64::from_ne_bytes(hi)) << 64) | u128::from(u64::from_ne_bytes(lo))
        };
        let mut first_record = [0u8; REC_SIZE];
        let mut last_record = [0u8; REC_SIZE];
        first_record.copy_from_slice(&bytes[80..180]);
        last_record.copy_from_slice(&bytes[180..280]);
        Ok(Summary {
            first_unordered: Some(counter(0)).filter(|&i| i != 0),
            unordered: counter(1),
            records: counter(2),
            duplicates: counter(3),
            checksum: counter(4),
            first_record,
            last_record,
        })
    }

    /// The report valsort prints on stderr, line by line, each ending in
    /// `\n`, exactly as the reference prints it.
    pub fn report(&self) -> String {
        let mut out = String::new();
        if let Some(index) = self.first_unordered {
            out.push_str(&format!("First unordered record is record {index}\n"));
        }
        out.push_str(&format!("Records: {}\n", self.records));
        out.push_str(&format!("Checksum: {}\n", format_checksum(self.checksum)));
        if self.is_ordered() {
            out.push_str(&format!("Duplicate keys: {}\n", self.duplicates));
            out.push_str("SUCCESS - all records are in order\n");
        } else {
            out.push_str(&format!("ERROR - there are {} unordered records\n", self.unordered));
        }
        out
    }
}

fn key(rec: &[u8; REC_SIZE]) -> &[u8] {
    &rec[..KEY_SIZE]
}

/// Combines summaries of consecutive parts, in order, into the summary of
/// their concatenation (valsort `-s`); `None` if there are none.
pub fn combine_summaries<I>(parts: I, order: KeyOrder) -> Option<Summary>
where
    I: IntoIterator<Item = Summary>,
{
    let mut parts = parts.into_iter();
    let mut total = parts.next()?;
    for part in parts {
        total.append(&part, order);
    }
    Some(total)
}

/// Parses a file of concatenated summaries (what `cat *.sum` makes).
pub fn parse_summaries(bytes: &[u8]) -> Result<Vec<Summary>> {
    let tail = bytes.len() % SUMMARY_SIZE;
    if tail > 0 {
        return Err(Error::PartialSummary);
    }
    bytes.chunks_exact(SUMMARY_SIZE).map(Summary::from_bytes).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(key_byte: u8) -> [u8; REC_SIZE] {
        let mut r = [0u8; REC_SIZE];
        r[..KEY_SIZE].fill(key_byte);
        r
    }

    #[test]
    fn bytes_round_trip_and_layout() {
        let s = Summary {
            first_unordered: Some(250_000),
            unordered: (1 << 64) + 3,
            records: 1_000_000,
            duplicates: 7,
            checksum: 0x7a0e0d4868cd4,
            first_record: rec(1),
            last_record: rec(2),
        };
        let bytes = s.to_bytes();
        assert_eq!(Summary::from_bytes(&bytes).expect("parse"), s);
        assert_eq!(&bytes[..8], &0u64.to_ne_bytes());
        assert_eq!(&bytes[8..16], &250_000u64.to_ne_bytes());
        assert_eq!(&bytes[16..24], &1u64.to_ne_bytes());
        assert_eq!(&bytes[24..32], &3u64.to_ne_bytes());
        assert!(matches!(Summary::from_bytes(&bytes[1..]), Err(Error::PartialSummary)));
    }

    #[test]
    fn append_counts_boundaries() {
        let mut a = Summary::of_record(&rec(5));
        a.append(&Summary::of_record(&rec(5)), KeyOrder::Bytes);
        assert_eq!((a.records, a.duplicates, a.unordered), (2, 1, 0));
        a.append(&Summary::of_record(&rec(4)), KeyOrder::Bytes);
        assert_eq!((a.first_unordered, a.unordered), (Some(2), 1));
        let mut later = Summary::of_record(&rec(9));
        later.append(&Summary::of_record(&rec(8)), KeyOrder::Bytes);
        a.append(&later, KeyOrder::Bytes);
        assert_eq!((a.first_unordered, a.unordered, a.records), (Some(2), 2, 5));
    }

    #[test]
    fn report_lines() {
        let mut s = Summary::of_record(&rec(1));
        s.checksum = 0x1ea6370b955;
        s.records = 1000;
        assert_eq!(s.report(), "Records: 1000\nChecksum: 1ea6370b955\nDuplicate keys: 0\nSUCCESS - all records are in order\n");
        s.first_unordered = Some(2);
        s.unordered = 483;
        assert_eq!(
            s.report(),
            "First unordered record is record 2\nRecords: 1000\nChecksum: 1ea6370b955\nERROR - there are 483 unordered records\n"
        );
    }
}
