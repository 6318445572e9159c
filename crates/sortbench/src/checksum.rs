//! The benchmark checksum: the sum of the CRC-32 of every 100-byte record.
//!
//! The sum is taken mod 2^128 (`wrapping_add`), as the reference's 128-bit
//! counter does, and it does not depend on record order: a correct sort's
//! output has its input's checksum. CRC-32 is zlib's: 100-byte records go
//! through this crate's fixed-length kernel (`crc100`), anything else
//! through `crc32fast`.

use rayon::prelude::*;

use crate::crc100;
use crate::record::REC_SIZE;

/// Records per parallel task: large enough that splitting costs nothing,
/// small enough to balance across threads.
const PAR_RECS: usize = 16 * 1024;

/// zlib's CRC-32 of one record (or of any byte slice).
#[inline]
pub fn record_crc(rec: &[u8]) -> u32 {
    match <&[u8; REC_SIZE]>::try_from(rec) {
        Ok(rec) => crc100::crc_record(rec),
        Err(_) => crc32fast::hash(rec),
    }
}

/// Sum of the CRC-32 of each whole 100-byte record of `data`, mod 2^128,
/// computed on the current rayon pool. A trailing partial record (if
/// `data.len()` is not a multiple of 100) is not counted.
pub fn checksum_of(data: &[u8]) -> u128 {
    let whole = data.len() - data.len() % REC_SIZE;
    data[..whole].par_chunks(PAR_RECS * REC_SIZE).map(checksum_serial).reduce(|| 0, u128::wrapping_add)
}

/// [`checksum_of`] on the calling thread only.
#[inline]
pub(crate) fn checksum_serial(data: &[u8]) -> u128 {
    crc100::sum_records(data)
}

/// Formats a checksum the way the reference prints it: lowercase hex, no
/// prefix, no leading zeros (`0` for zero).
pub fn format_checksum(sum: u128) -> String {
    format!("{sum:x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc_is_zlibs() {
        assert_eq!(record_crc(b"123456789"), 0xCBF4_3926);
        assert_eq!(record_crc(&[]), 0);
    }

    #[test]
    fn checksum_ignores_a_partial_tail_and_wraps() {
        let mut data = vec![7u8; 3 * REC_SIZE + 5];
        let one = u128::from(record_crc(&data[..REC_SIZE]));
        assert_eq!(checksum_of(&data), 3 * one);
        data.truncate(0);
        assert_eq!(checksum_of(&data), 0);
        assert_eq!(format_checksum(0), "0");
        assert_eq!(format_checksum(0x1ea6370b955), "1ea6370b955");
        assert_eq!(u128::MAX.wrapping_add(2), 1);
    }
}
