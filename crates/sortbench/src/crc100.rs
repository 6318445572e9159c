//! zlib's CRC-32 of exactly one 100-byte record, with carry-less multiplies
//! that do not wait on each other.
//!
//! A general CRC kernel folds 16 bytes at a time into one accumulator, a
//! chain of dependent multiplies (crc32fast takes about 17 ns per record on
//! the development machine). For a fixed length the chain is unnecessary:
//! CRC is linear, so each 16-byte chunk can be folded straight to the end of
//! the record with its own constant, `x^(128k ± 32) mod P`, and the products
//! XORed together; only the final Barrett reduction is serial. The record is
//! seen as 12 zero bytes (which leave a zero-initialised CRC unchanged)
//! followed by its 100 bytes, i.e. seven 16-byte chunks, with zlib's initial
//! `0xFFFFFFFF` XORed into its first four bytes and the result inverted.
//!
//! The constants are the standard ones of Intel's "Fast CRC computation for
//! generic polynomials using PCLMULQDQ" (reflected form: `reflect32(x^n mod
//! P) << 1`); the kernel is checked against crc32fast in the tests. Other
//! CPUs, and CPUs without PCLMULQDQ, use crc32fast.

use crate::record::REC_SIZE;

/// CRC-32 of one record.
#[inline]
pub(crate) fn crc_record(rec: &[u8; REC_SIZE]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        if x86::available() {
            // SAFETY: the CPU supports the kernel's target features (checked).
            return unsafe { x86::crc100(rec) };
        }
    }
    crc32fast::hash(rec)
}

/// Sum of the CRC-32 of each whole record of `data`, mod 2^128.
pub(crate) fn sum_records(data: &[u8]) -> u128 {
    #[cfg(target_arch = "x86_64")]
    {
        if x86::available() {
            // SAFETY: the CPU supports the kernel's target features (checked).
            return unsafe { x86::sum_records(data) };
        }
    }
    data.chunks_exact(REC_SIZE).fold(0u128, |sum, rec| sum.wrapping_add(u128::from(crc32fast::hash(rec))))
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::{
        __m128i, _mm_and_si128, _mm_clmulepi64_si128, _mm_extract_epi32, _mm_loadu_si128, _mm_set_epi32, _mm_set_epi64x, _mm_srli_si128,
        _mm_xor_si128,
    };

    use crate::record::REC_SIZE;

    /// `(reflect32(x^(128k+32) mod P) << 1, reflect32(x^(128k-32) mod P) << 1)`
    /// for k = 1..=6: folding a chunk forward by k chunks.
    const FOLD: [(i64, i64); 6] = [
        (0x1_7519_97d0, 0x0_ccaa_009e),
        (0x0_f1da_05aa, 0x1_5a54_6366),
        (0x0_3db1_ecdc, 0x1_7435_9406),
        (0x1_5444_2bd4, 0x1_c6e4_1596),
        (0x1_c756_9e54, 0x0_ae0b_5394),
        (0x0_df06_8dc2, 0x1_8cb4_4e58),
    ];
    /// `reflect32(x^64 mod P) << 1`.
    const K5: i64 = 0x1_63cd_6124;
    /// The polynomial and its Barrett constant, reflected.
    const P_X: i64 = 0x1_db71_0641;
    const U_PRIME: i64 = 0x1_f701_1641;

    pub(super) fn available() -> bool {
        is_x86_feature_detected!("pclmulqdq") && is_x86_feature_detected!("sse4.1")
    }

    /// Folds `chunk` forward by `k` chunks (k = 1..=6).
    ///
    /// # Safety
    /// The CPU must support PCLMULQDQ and SSE2.
    #[inline]
    #[target_feature(enable = "pclmulqdq", enable = "sse2")]
    unsafe fn fold(chunk: __m128i, k: usize) -> __m128i {
        let (low_key, high_key) = FOLD[k - 1];
        let keys = _mm_set_epi64x(high_key, low_key);
        _mm_xor_si128(_mm_clmulepi64_si128(chunk, keys, 0x00), _mm_clmulepi64_si128(chunk, keys, 0x11))
    }

    /// CRC-32 (zlib) of a 100-byte record.
    ///
    /// # Safety
    /// The CPU must support PCLMULQDQ, SSE2 and SSE4.1.
    #[inline]
    #[target_feature(enable = "pclmulqdq", enable = "sse2", enable = "sse4.1")]
    pub(super) unsafe fn crc100(rec: &[u8; REC_SIZE]) -> u32 {
        let head = u32::from_le_bytes([rec[0], rec[1], rec[2], rec[3]]) ^ !0;
        // Chunk 0 is twelve zero bytes and the (inverted) first four: only its
        // high half is non-zero, so one multiply folds it.
        let c0 = _mm_set_epi32(head as i32, 0, 0, 0);
        let (low6, high6) = FOLD[5];
        let mut acc = _mm_clmulepi64_si128(c0, _mm_set_epi64x(high6, low6), 0x11);
        for j in 1..=5 {
            acc = _mm_xor_si128(acc, fold(chunk(rec, j), 6 - j));
        }
        acc = _mm_xor_si128(acc, chunk(rec, 6));
        reduce(acc)
    }

    /// Chunk `j` (1..=6) of a record: bytes `4 + 16(j-1) .. 4 + 16j`.
    ///
    /// # Safety
    /// The CPU must support SSE2 (every x86_64 CPU does).
    #[inline]
    #[target_feature(enable = "sse2")]
    unsafe fn chunk(rec: &[u8; REC_SIZE], j: usize) -> __m128i {
        let bytes = &rec[4 + 16 * (j - 1)..4 + 16 * j];
        // SAFETY: `bytes` is 16 readable bytes (the slice above is
        // bounds-checked, and the check folds away for constant j);
        // loadu has no alignment requirement.
        unsafe { _mm_loadu_si128(bytes.as_ptr().cast::<__m128i>()) }
    }

    /// 128 bits of folded remainder to the final CRC (crc32fast's and the
    /// paper's last two steps: 128 -> 64 bits, then Barrett to 32).
    ///
    /// # Safety
    /// The CPU must support PCLMULQDQ, SSE2 and SSE4.1.
    #[inline]
    #[target_feature(enable = "pclmulqdq", enable = "sse2", enable = "sse4.1")]
    unsafe fn reduce(x: __m128i) -> u32 {
        let (k3, k4) = FOLD[0];
        let low32 = _mm_set_epi32(0, 0, 0, !0);
        let x = _mm_xor_si128(_mm_clmulepi64_si128(x, _mm_set_epi64x(k4, k3), 0x10), _mm_srli_si128(x, 8));
        let x = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(x, low32), _mm_set_epi64x(0, K5), 0x00), _mm_srli_si128(x, 4));
        let pu = _mm_set_epi64x(U_PRIME, P_X);
        let t1 = _mm_clmulepi64_si128(_mm_and_si128(x, low32), pu, 0x10);
        let t2 = _mm_clmulepi64_si128(_mm_and_si128(t1, low32), pu, 0x00);
        !(_mm_extract_epi32(_mm_xor_si128(x, t2), 1) as u32)
    }

    /// Sum of the CRCs of the whole records of `data`.
    ///
    /// # Safety
    /// The CPU must support PCLMULQDQ, SSE2 and SSE4.1.
    #[target_feature(enable = "pclmulqdq", enable = "sse2", enable = "sse4.1")]
    pub(super) unsafe fn sum_records(data: &[u8]) -> u128 {
        // A u64 sums 2^32 CRCs exactly: add in u64 per 2^24 records, then widen.
        let mut total = 0u128;
        for part in data.chunks(REC_SIZE << 24) {
            let mut sum = 0u64;
            for rec in part.chunks_exact(REC_SIZE) {
                if let Ok(rec) = <&[u8; REC_SIZE]>::try_from(rec) {
                    sum += u64::from(crc100(rec));
                }
            }
            total = total.wrapping_add(u128::from(sum));
        }
        total
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_crc32fast() {
        let mut rec = [0u8; REC_SIZE];
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for round in 0..20_000 {
            for b in rec.iter_mut() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *b = if round % 7 == 0 { (x & 1) as u8 * 0xFF } else { x as u8 };
            }
            assert_eq!(crc_record(&rec), crc32fast::hash(&rec), "round {round}");
        }
        assert_eq!(crc_record(&[0; REC_SIZE]), crc32fast::hash(&[0; REC_SIZE]));
        assert_eq!(crc_record(&[0xFF; REC_SIZE]), crc32fast::hash(&[0xFF; REC_SIZE]));
    }

    #[test]
    fn sums_match() {
        let data: Vec<u8> = (0..REC_SIZE * 333 + 7).map(|j| (j * 31 % 256) as u8).collect();
        let expect: u128 = data.chunks_exact(REC_SIZE).map(|r| u128::from(crc32fast::hash(r))).sum();
        assert_eq!(sum_records(&data), expect);
    }
}
