//! Building one 100-byte gensort 1.5 record from generator values.
//!
//! Binary record `i` is ten 10-byte parts: part `k` is the top 80 bits of
//! `R(i+1+k) XOR MASKS[k]`, so the key is the top 80 bits of `R(i+1)` and every
//! payload byte is pseudo-random. ASCII record `i` uses `R(i+1)` only: a base-95
//! printable key, the record number in hex, and a hex filler, ending in CRLF.
//! Skewing (`-s`) then overwrites the leading key bits with a row of a small
//! table chosen by the record number's bit length, so keys repeat and cluster.
//!
//! These are the byte layouts of the 1.5 reference tools (FORMAT.md, sections
//! 2 to 4); the golden tests hold them to the reference's checksums.

use crate::lcg;

/// Bytes in a record.
pub const REC_SIZE: usize = 100;
/// Bytes in a record's key (its first bytes).
pub const KEY_SIZE: usize = 10;

/// Skew rows hold this many key bytes.
const SKEW_BYTES: usize = 6;

/// Masks XORed into the ten random values of a binary record (part 0, the key,
/// is left as is). Each is `(MH << 64) | (ML << 48)`: only the top 80 bits are
/// ever written.
pub(crate) const MASKS: [u128; 10] = [
    0,
    mask(0xF0E8_E4E2_E1D8_D4D2, 0xD1CC),
    mask(0xCAC9_C6C5_C3B8_B4B2, 0xB1AC),
    mask(0xAAA9_A6A5_A39C_9A99, 0x9695),
    mask(0x938E_8D8B_8778_7472, 0x716C),
    mask(0x6A69_6665_635C_5A59, 0x5655),
    mask(0x534E_4D4B_473C_3A39, 0x3635),
    mask(0x332E_2D2B_271E_1D1B, 0x170F),
    mask(0xC8C4_C2C1_9894_9291, 0x8CE0),
    mask(0x170F_332E_2D2B_271E, 0x1D1B),
];

const fn mask(high: u64, low16: u16) -> u128 {
    ((high as u128) << 64) | ((low16 as u128) << 48)
}

/// Writes a binary record from `r[k] = R(i+1+k)`, `k = 0..10`.
#[inline(always)]
pub(crate) fn put_binary(rec: &mut [u8; REC_SIZE], r: &[u128; 10]) {
    // Each part is stored as a whole 16-byte big-endian word whose last six
    // bytes are garbage that the next, later store overwrites: one unaligned
    // vector store per part instead of an 8 + 2 byte pair. The last part
    // cannot overhang the record, so it is copied exactly.
    for k in 0..9 {
        let bytes = (r[k] ^ MASKS[k]).to_be_bytes();
        rec[10 * k..10 * k + 16].copy_from_slice(&bytes);
    }
    let bytes = (r[9] ^ MASKS[9]).to_be_bytes();
    rec[90..100].copy_from_slice(&bytes[..10]);
}

/// The printable key of an ASCII record made from `r = R(i+1)`: eight base-95
/// digits of the high half, least significant first, then two of the low half.
#[inline(always)]
pub(crate) const fn ascii_key(r: u128) -> [u8; KEY_SIZE] {
    const P1: u64 = 95;
    const P2: u64 = P1 * 95;
    const P3: u64 = P2 * 95;
    const P4: u64 = P3 * 95;
    const P5: u64 = P4 * 95;
    const P6: u64 = P5 * 95;
    const P7: u64 = P6 * 95;
    let hi = (r >> 64) as u64;
    let lo = r as u64;
    // Written out with constant divisors: each digit is then a multiply by
    // an inverse, independent of the others (a loop over a table of powers
    // compiled to eight hardware divisions, and the reference's serial
    // `t /= 95` would chain eight multiply latencies).
    [
        b' ' + (hi % 95) as u8,
        b' ' + (hi / P1 % 95) as u8,
        b' ' + (hi / P2 % 95) as u8,
        b' ' + (hi / P3 % 95) as u8,
        b' ' + (hi / P4 % 95) as u8,
        b' ' + (hi / P5 % 95) as u8,
        b' ' + (hi / P6 % 95) as u8,
        b' ' + (hi / P7 % 95) as u8,
        b' ' + (lo % 95) as u8,
        b' ' + (lo / P1 % 95) as u8,
    ]
}

/// The key of a binary record made from `r = R(i+1)`.
pub(crate) const fn binary_key(r: u128) -> [u8; KEY_SIZE] {
    let bytes = r.to_be_bytes();
    let mut key = [0u8; KEY_SIZE];
    let mut j = 0;
    while j < KEY_SIZE {
        key[j] = bytes[j];
        j += 1;
    }
    key
}

/// The 8 nibbles of `x` spread into the 8 bytes of a u64, nibble j in byte j.
#[inline(always)]
const fn spread_nibbles(x: u32) -> u64 {
    let mut v = x as u64;
    v = (v | (v << 16)) & 0x0000_FFFF_0000_FFFF;
    v = (v | (v << 8)) & 0x00FF_00FF_00FF_00FF;
    (v | (v << 4)) & 0x0F0F_0F0F_0F0F_0F0F
}

/// Bytes 0..=15 to the ASCII hex digits '0'..'9', 'A'..'F', all at once:
/// a byte b >= 10 turns b + 6 into 16..21, which sets bit 4 and cannot
/// carry into the next byte.
#[inline(always)]
const fn nibbles_to_hex(v: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let letters = ((v + 6 * ONES) >> 4) & ONES;
    v + b'0' as u64 * ONES + 7 * letters
}

/// `x` as 16 uppercase hex digits, most significant first.
#[inline(always)]
pub(crate) fn hex16(x: u64) -> [u8; 16] {
    let high = nibbles_to_hex(spread_nibbles((x >> 32) as u32)).to_be_bytes();
    let low = nibbles_to_hex(spread_nibbles(x as u32)).to_be_bytes();
    let mut out = [0u8; 16];
    out[..8].copy_from_slice(&high);
    out[8..].copy_from_slice(&low);
    out
}

/// Writes ASCII record number `recno` made from `r = R(recno+1)`.
#[inline(always)]
pub(crate) fn put_ascii(rec: &mut [u8; REC_SIZE], r: u128, recno: u128) {
    rec[..KEY_SIZE].copy_from_slice(&ascii_key(r));
    rec[10..12].copy_from_slice(b"  ");
    rec[12..28].copy_from_slice(&hex16((recno >> 64) as u64));
    rec[28..44].copy_from_slice(&hex16(recno as u64));
    rec[44..46].copy_from_slice(b"  ");
    // Thirteen digits of the low 52 bits, each written four times.
    let filler = hex16(r as u64);
    for k in 0..13 {
        let d = filler[3 + k];
        rec[46 + 4 * k..50 + 4 * k].copy_from_slice(&[d; 4]);
    }
    rec[98..100].copy_from_slice(b"\r\n");
}

/// Number of skew rows: bit lengths 0..=128.
const SKEW_ROWS: usize = 129;

/// Row `s` is the first six key bytes of unskewed record `s`; built at
/// compile time rather than copied as a table, so it cannot hold a typo.
static SKEW_BINARY: [[u8; SKEW_BYTES]; SKEW_ROWS] = skew_table(false);
static SKEW_ASCII: [[u8; SKEW_BYTES]; SKEW_ROWS] = skew_table(true);

const fn skew_table(ascii: bool) -> [[u8; SKEW_BYTES]; SKEW_ROWS] {
    let mut table = [[0u8; SKEW_BYTES]; SKEW_ROWS];
    let mut r = lcg::C; // R(1), the key source of record 0
    let mut s = 0;
    while s < SKEW_ROWS {
        let key = if ascii { ascii_key(r) } else { binary_key(r) };
        let mut j = 0;
        while j < SKEW_BYTES {
            table[s][j] = key[j];
            j += 1;
        }
        r = lcg::next(r);
        s += 1;
    }
    table
}

/// The skew row of record `i`: its bit length, except that the reference
/// gives 64 to every `i` in `[2^60, 2^64)` and 128 to every `i >= 2^124`
/// (it tests the top four bits of each half instead of the top one). Kept,
/// since identical output is the point.
#[inline(always)]
pub(crate) fn skew_row(i: u128) -> usize {
    const TOP4: u64 = 0xF000_0000_0000_0000;
    let hi = (i >> 64) as u64;
    let lo = i as u64;
    if hi == 0 {
        if lo & TOP4 != 0 {
            64
        } else {
            (64 - lo.leading_zeros()) as usize
        }
    } else if hi & TOP4 != 0 {
        128
    } else {
        (128 - hi.leading_zeros()) as usize
    }
}

/// Skews the key of binary record `i` built from `r = R(i+1)`.
#[inline(always)]
pub(crate) fn skew_binary(rec: &mut [u8; REC_SIZE], r: u128, i: u128) {
    let mut bits = ((r as u64) >> 32) as u32 & 0x3F;
    if bits > 8 * SKEW_BYTES as u32 {
        bits = 0; // 16 of the 64 values: a quarter of the keys stay as made
    }
    overwrite_top_bits(rec, &SKEW_BINARY[skew_row(i)], bits);
}

/// Skews the key of ASCII record `i` built from `r = R(i+1)`.
#[inline(always)]
pub(crate) fn skew_ascii(rec: &mut [u8; REC_SIZE], r: u128, i: u128) {
    let mut count = ((r as u64) >> 32) as u32 & 0x7;
    if count > SKEW_BYTES as u32 {
        count = 0; // 2 of the 8 values: a quarter of the keys stay as made
    }
    overwrite_top_bits(rec, &SKEW_ASCII[skew_row(i)], 8 * count);
}

/// Replaces the top `bits` (0..=48) bits of the record's first six bytes with
/// those of `row`. This is the reference's "whole bytes, then the high `rem`
/// bits of one more byte", done as one masked 48-bit merge: a
/// variable-length byte copy would cost a `memcpy` call per record.
#[inline(always)]
fn overwrite_top_bits(rec: &mut [u8; REC_SIZE], row: &[u8; SKEW_BYTES], bits: u32) {
    let widen = |b: &[u8]| u64::from_be_bytes([b[0], b[1], b[2], b[3], b[4], b[5], 0, 0]);
    let mask = if bits == 0 { 0 } else { !0u64 << (64 - bits) };
    let merged = (widen(row) & mask) | (widen(&rec[..SKEW_BYTES]) & !mask);
    rec[..SKEW_BYTES].copy_from_slice(&merged.to_be_bytes()[..SKEW_BYTES]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex16_matches_format() {
        for x in [0u64, 1, 0xA, 0xF, 0x0123_4567_89AB_CDEF, u64::MAX, 0xFEDC_BA98_7654_3210] {
            let expect = format!("{x:016X}");
            assert_eq!(&hex16(x), expect.as_bytes());
        }
    }

    #[test]
    fn ascii_key_matches_serial_division() {
        let mut r = lcg::C;
        for _ in 0..1000 {
            let mut expect = [0u8; KEY_SIZE];
            let mut t = (r >> 64) as u64;
            for b in expect.iter_mut().take(8) {
                *b = b' ' + (t % 95) as u8;
                t /= 95;
            }
            t = r as u64;
            expect[8] = b' ' + (t % 95) as u8;
            t /= 95;
            expect[9] = b' ' + (t % 95) as u8;
            assert_eq!(ascii_key(r), expect);
            r = lcg::next(r);
        }
    }

    #[test]
    fn skew_rows_match_reference_tables() {
        // Spot checks against the 1.5 source's literal tables.
        assert_eq!(SKEW_BINARY[0], [0x4a, 0x69, 0x6d, 0x47, 0x72, 0x61]);
        assert_eq!(SKEW_BINARY[1], [0x95, 0xe0, 0xe4, 0x82, 0x62, 0xb3]);
        assert_eq!(SKEW_BINARY[2], [0x45, 0x97, 0x93, 0x53, 0xdb, 0xed]);
        assert_eq!(SKEW_BINARY[64], [0x33, 0xd5, 0xb5, 0xb1, 0x5c, 0x70]);
        assert_eq!(SKEW_BINARY[128], [0xe1, 0xdc, 0x46, 0xb6, 0x45, 0xc4]);
        assert_eq!(&SKEW_ASCII[0], b"AsfAGH");
        assert_eq!(&SKEW_ASCII[9], b"5HA\\z%");
        assert_eq!(&SKEW_ASCII[128], b"12NSK|");
    }

    #[test]
    fn skew_row_is_bit_length_with_reference_quirks() {
        assert_eq!(skew_row(0), 0);
        assert_eq!(skew_row(1), 1);
        assert_eq!(skew_row(2), 2);
        assert_eq!(skew_row(3), 2);
        assert_eq!(skew_row(4), 3);
        assert_eq!(skew_row(16), 5);
        assert_eq!(skew_row((1 << 60) - 1), 60);
        assert_eq!(skew_row(1 << 60), 64);
        assert_eq!(skew_row(u64::MAX as u128), 64);
        assert_eq!(skew_row(1 << 64), 65);
        assert_eq!(skew_row((1 << 65) + 7), 66);
        assert_eq!(skew_row(1 << 124), 128);
        assert_eq!(skew_row(u128::MAX), 128);
    }

    #[test]
    fn binary_key_of_record_zero_is_the_dedication() {
        assert_eq!(&binary_key(lcg::C), b"JimGrayRIP");
    }
}
