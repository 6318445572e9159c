//! Nsort's coded number types and month names in fixed-size fields, and their byte-comparable
//! forms (as long as the field, so they fit the key machinery as `decimal` does):
//!
//! - **packed** decimal (COBOL's COMP-3): two digits a byte, the last nibble the sign (`B` or `D`
//!   negative; `A`, `C`, `E`, `F` positive). An `L`-byte field holds `2L - 1` digits.
//! - **zoned** decimal: one digit a byte in its low nibble; the last byte's high nibble is the sign
//!   (`B`, `D` or `7` negative: EBCDIC's and ASCII's conventions; any other positive), and the
//!   others' high nibbles are `3` (ASCII digits) or `F` (EBCDIC).
//! - **month**: a month's three-letter English abbreviation (`JAN` to `DEC`, any case, after
//!   leading blanks), as GNU's `-M` reads it; anything else is no month and sorts first.
//!
//! The normalized form of a number starts with a class nibble (0: not a number, which sorts first;
//! 1: negative; 2: zero or positive), then the digits, right-aligned, each `d` stored as `9 - d`
//! when negative (the nines' complement reverses the order of fixed-width digit strings); `-0` is
//! zero. A month's form is its number (0 for no month) followed by zeros.

/// Class nibble of a field that is not a number.
const MALFORMED: u8 = 0;
/// Class nibble of a negative number.
const NEGATIVE: u8 = 1;
/// Class nibble of zero or a positive number.
const NONNEGATIVE: u8 = 2;

/// Which coding a field has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coding {
    /// Packed decimal.
    Packed,
    /// Zoned decimal.
    Zoned,
    /// A month name.
    Month,
}

/// How many digits a packed or zoned field holds and whether it is negative; None when a
/// nibble is not a digit or the sign is not a sign. Its digits are then [`digit`]'s.
fn digits(coding: Coding, field: &[u8]) -> Option<(usize, bool)> {
    let (&last, head) = field.split_last()?;
    let (count, negative) = match coding {
        Coding::Packed => {
            let negative = match last & 15 {
                0xB | 0xD => true,
                0xA | 0xC | 0xE | 0xF => false,
                _ => return None,
            };
            (2 * field.len() - 1, negative)
        }
        _ => {
            if !head.iter().all(|b| matches!(b >> 4, 0x3 | 0xF)) {
                return None;
            }
            (field.len(), matches!(last >> 4, 0xB | 0xD | 0x7))
        }
    };
    (0..count).all(|i| digit(coding, field, i) <= 9).then_some((count, negative))
}

/// Digit `i` of a packed or zoned field (checked by [`digits`]).
#[inline]
fn digit(coding: Coding, field: &[u8], i: usize) -> u8 {
    match coding {
        // Two digits a byte, high nibble first.
        Coding::Packed => (field[i / 2] >> (4 * (1 - i % 2) as u32)) & 15,
        _ => field[i] & 15,
    }
}

/// The month a field names: 1 to 12, or 0.
pub fn month(field: &[u8]) -> u8 {
    const NAMES: [&[u8; 3]; 12] = [b"JAN", b"FEB", b"MAR", b"APR", b"MAY", b"JUN", b"JUL", b"AUG", b"SEP", b"OCT", b"NOV", b"DEC"];
    let start = field.iter().position(|&c| c != b' ' && c != b'\t').unwrap_or(field.len());
    let Some(word) = field.get(start..start + 3) else { return 0 };
    let upper = [word[0].to_ascii_uppercase(), word[1].to_ascii_uppercase(), word[2].to_ascii_uppercase()];
    NAMES.iter().position(|n| **n == upper).map_or(0, |i| i as u8 + 1)
}

/// The value of a packed or zoned field: its digits as a number, None when it is not one (or has
/// more digits than an `i128` holds).
pub fn value(coding: Coding, field: &[u8]) -> Option<i128> {
    if coding == Coding::Month {
        return Some(i128::from(month(field)));
    }
    let (count, negative) = digits(coding, field)?;
    let mut v: i128 = 0;
    for i in 0..count {
        v = v.checked_mul(10)?.checked_add(i128::from(digit(coding, field, i)))?;
    }
    Some(if negative { -v } else { v })
}

/// Writes the first `out.len()` (<= `field.len()`) bytes of the normalized form of `field`.
pub fn encode(coding: Coding, field: &[u8], out: &mut [u8]) {
    // Not a number (or no month) until shown otherwise: class 0, no digits.
    out.fill(MALFORMED);
    if coding == Coding::Month {
        if let Some(first) = out.first_mut() {
            *first = month(field);
        }
        return;
    }
    let Some((count, negative)) = digits(coding, field) else { return };
    let negative = negative && (0..count).any(|i| digit(coding, field, i) != 0);
    // Nibbles: the class, then the digits right-aligned in the 2L - 1 slots that follow.
    let slots = 2 * field.len() - 1;
    let pad = slots - count;
    let nibble = |k: usize| -> u8 {
        if k == 0 {
            return if negative { NEGATIVE } else { NONNEGATIVE };
        }
        let d = if k > pad { digit(coding, field, k - 1 - pad) } else { 0 };
        if negative {
            9 - d
        } else {
            d
        }
    };
    for (i, o) in out.iter_mut().enumerate() {
        *o = (nibble(2 * i) << 4) | nibble(2 * i + 1);
    }
}

/// Compares two fields of the same length as their normalized forms order them; fields up to 32
/// bytes are encoded on the stack (this is the comparison of ties: no allocation there).
pub fn compare(coding: Coding, a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    let (mut x, mut y) = ([0u8; 32], [0u8; 32]);
    if a.len() <= 32 {
        encode(coding, a, &mut x[..a.len()]);
        encode(coding, b, &mut y[..b.len()]);
        return x[..a.len()].cmp(&y[..b.len()]);
    }
    let (mut x, mut y) = (vec![0u8; a.len()], vec![0u8; b.len()]);
    encode(coding, a, &mut x);
    encode(coding, b, &mut y);
    x.cmp(&y)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(coding: Coding, field: &[u8]) -> Vec<u8> {
        let mut out = vec![0; field.len()];
        encode(coding, field, &mut out);
        out
    }

    #[test]
    fn packed_fields_order_as_their_numbers() {
        // +123, -123, +0, -0, +99999, a bad sign.
        let fields: [&[u8]; 6] =
            [&[0x00, 0x12, 0x3C], &[0x00, 0x12, 0x3D], &[0x00, 0x00, 0x0C], &[0x00, 0x00, 0x0D], &[0x99, 0x99, 0x9F], &[0x00, 0x12, 0x31]];
        assert_eq!(value(Coding::Packed, fields[0]), Some(123));
        assert_eq!(value(Coding::Packed, fields[1]), Some(-123));
        assert_eq!(value(Coding::Packed, fields[5]), None);
        assert_eq!(form(Coding::Packed, fields[2]), form(Coding::Packed, fields[3]), "-0 is 0");
        let mut sorted = fields.to_vec();
        sorted.sort_by_key(|f| form(Coding::Packed, f));
        assert_eq!(sorted, vec![fields[5], fields[1], fields[2], fields[3], fields[0], fields[4]]);
    }

    #[test]
    fn zoned_fields_in_ascii_and_ebcdic() {
        assert_eq!(value(Coding::Zoned, b"0123"), Some(123));
        assert_eq!(value(Coding::Zoned, &[0xF0, 0xF1, 0xD2]), Some(-12));
        assert_eq!(value(Coding::Zoned, b"012t"), Some(-124));
        assert_eq!(value(Coding::Zoned, b"1a3"), None);
        let mut fields: Vec<&[u8]> = vec![b"0123", b"012t", b"0005", b"0000", b"x000"];
        fields.sort_by_key(|f| form(Coding::Zoned, f));
        assert_eq!(fields, vec![&b"x000"[..], b"012t", b"0000", b"0005", b"0123"]);
    }

    #[test]
    fn months_by_name() {
        assert_eq!(month(b"  feb 2020"), 2);
        assert_eq!(month(b"DECEMBER"), 12);
        assert_eq!(month(b"xyz"), 0);
        assert_eq!(month(b"ja"), 0);
        assert_eq!(form(Coding::Month, b"Mar"), vec![3, 0, 0]);
    }
}
