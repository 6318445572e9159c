//! Decimal numbers written as text in a fixed-size field, and their fixed-size byte-comparable form.
//!
//! A field of `L` bytes holds `[blanks][+|-]digits[.digits][blanks]` (blanks are spaces and tabs;
//! `5.`, `.5` and `007` are numbers, at least one digit is needed). Because the field is `L` bytes,
//! the integer part has at most `L` digits and the fraction at most `L - 1`, so every value fits a
//! fixed-point layout of `2L - 1` decimal digits. The normalized form is `L` bytes of nibbles:
//!
//! ```text
//! nibble 0          class: 0 = not a number, 1 = negative, 2 = zero or positive
//! nibbles 1..=L     integer digits, right-aligned (leading zeros fill)
//! nibbles L+1..2L-1 fraction digits, left-aligned (trailing zeros fill)
//! ```
//!
//! Negative numbers store each digit `d` as `9 - d` (the nines' complement reverses the order of
//! fixed-width digit strings), so the bytes compare like the numbers. `-0` is zero. A field that is
//! not a number (all blanks included) has class 0 and zero digits: it sorts before every number, and
//! such fields are equal to each other, so a stable sort keeps them in input order.

use std::cmp::Ordering;

/// Class nibble of a field that is not a decimal number.
const MALFORMED: u8 = 0;
/// Class nibble of a negative number.
const NEGATIVE: u8 = 1;
/// Class nibble of zero or a positive number.
const NONNEGATIVE: u8 = 2;

/// A parsed field: its class and significant digits (ASCII).
#[derive(Clone, Copy, Debug)]
struct Parsed<'a> {
    class: u8,
    /// Integer digits without leading zeros.
    int: &'a [u8],
    /// Fraction digits without trailing zeros.
    frac: &'a [u8],
}

const NOT_A_NUMBER: Parsed<'static> = Parsed { class: MALFORMED, int: &[], frac: &[] };

#[inline]
fn is_blank(c: u8) -> bool {
    c == b' ' || c == b'\t'
}

#[inline]
fn parse(field: &[u8]) -> Parsed<'_> {
    let start = field.iter().position(|&c| !is_blank(c)).unwrap_or(field.len());
    let end = field.iter().rposition(|&c| !is_blank(c)).map_or(start, |e| e + 1);
    let s = &field[start..end];
    let (negative, s) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let (int, frac) = match s.iter().position(|&c| c == b'.') {
        Some(d) => (&s[..d], &s[d + 1..]),
        None => (s, &s[s.len()..]),
    };
    if int.is_empty() && frac.is_empty() || !int.iter().chain(frac).all(u8::is_ascii_digit) {
        return NOT_A_NUMBER;
    }
    let lead = int.iter().position(|&c| c != b'0').unwrap_or(int.len());
    let trail = frac.iter().rposition(|&c| c != b'0').map_or(0, |e| e + 1);
    let (int, frac) = (&int[lead..], &frac[..trail]);
    let class = if negative && !(int.is_empty() && frac.is_empty()) { NEGATIVE } else { NONNEGATIVE };
    Parsed { class, int, frac }
}

/// Writes the first `out.len()` (<= `field.len()`) bytes of the normalized form of `field`.
#[inline]
pub(super) fn encode(field: &[u8], out: &mut [u8]) {
    let l = field.len();
    debug_assert!(out.len() <= l);
    let p = parse(field);
    if p.class == MALFORMED {
        out.fill(0);
        return;
    }
    let negative = p.class == NEGATIVE;
    let pad = l - p.int.len(); // integer slots before the first significant digit
    let nibble = |k: usize| -> u8 {
        if k == 0 {
            return p.class;
        }
        let d = if k <= l {
            let j = k - 1;
            if j >= pad {
                p.int[j - pad] - b'0'
            } else {
                0
            }
        } else {
            p.frac.get(k - l - 1).map_or(0, |c| c - b'0')
        };
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

/// Compares two fields of the same length as decimal numbers; not-numbers first, equal to each
/// other. Agrees with the order of [`encode`]'s bytes.
#[inline]
pub(super) fn compare(a: &[u8], b: &[u8]) -> Ordering {
    let (x, y) = (parse(a), parse(b));
    x.class.cmp(&y.class).then_with(|| {
        if x.class == MALFORMED {
            return Ordering::Equal;
        }
        let o = x.int.len().cmp(&y.int.len()).then_with(|| x.int.cmp(y.int)).then_with(|| x.frac.cmp(y.frac));
        if x.class == NEGATIVE {
            o.reverse()
        } else {
            o
        }
    })
}
