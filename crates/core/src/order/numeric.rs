//! `-n` (gnulib strnumcmp), `-h` (unit order, then strnumcmp), in the locale's number format.
//!
//! GNU compares `-n` keys as NUL-terminated strings without converting them: leading blanks, an
//! optional '-', digits, an optional decimal point and fraction digits; anything else ends the
//! number, no '+', and a key without digits is zero ("-0" == "0" == "" == "abc"). The thousands
//! separator is skipped among integer digits; the C locale has none, yet 9.1 skips byte 0x80 (see
//! [`Numbers::group`]). The decimal point and separator are the locale's ([`Numbers`]).
//! strnumcmp orders exactly by the decimal value, so here a key is reduced to its canonical form
//! (sign, integer digits without leading zeros, fraction digits without trailing zeros) and
//! canonical forms are compared; the same form yields the order-preserving prefix.

use std::cmp::Ordering;

use super::locale::Numbers;
use super::{BLANK, TOUPPER};

/// A decimal number in canonical form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Decimal<'a> {
    /// -1, 0 or 1.
    pub(crate) sign: i8,
    /// Integer digits from the first non-zero one, possibly with `group` bytes among them.
    pub(crate) int: &'a [u8],
    /// Number of digits in `int`.
    pub(crate) int_digits: usize,
    /// Whether `int` holds `group` bytes.
    pub(crate) int_sep: bool,
    /// Fraction digits without trailing zeros.
    pub(crate) frac: &'a [u8],
    /// The thousands separator skipped among the integer digits.
    group: u16,
}

impl Decimal<'_> {
    /// The significant digits: integer digits (separators dropped), then fraction digits.
    #[inline]
    pub(crate) fn digits(&self) -> impl Iterator<Item = u8> + '_ {
        self.int.iter().copied().filter(|&c| u16::from(c) != self.group).chain(self.frac.iter().copied())
    }
}

#[inline]
fn skip_blanks(s: &[u8]) -> &[u8] {
    let n = s.iter().position(|&c| !BLANK[c as usize]).unwrap_or(s.len());
    &s[n..]
}

/// Parses a number as strnumcmp reads it, from `s` whose leading blanks are already skipped.
#[inline]
pub(crate) fn parse_decimal(s: &[u8], n: Numbers) -> Decimal<'_> {
    let (sep, point) = (n.group, n.decimal);
    let is_sep = |c: u8| u16::from(c) == sep;
    let neg = s.first() == Some(&b'-');
    let mut i = neg as usize;
    while i < s.len() && (s[i] == b'0' || is_sep(s[i])) {
        i += 1;
    }
    let start = i;
    let mut int_sep = false;
    while i < s.len() && (s[i].is_ascii_digit() || is_sep(s[i])) {
        int_sep |= is_sep(s[i]);
        i += 1;
    }
    let mut end = i;
    while end > start && is_sep(s[end - 1]) {
        end -= 1;
    }
    let int = &s[start..end];
    let int_digits = if int_sep { int.iter().filter(|&&c| !is_sep(c)).count() } else { int.len() };
    let mut frac: &[u8] = &[];
    if i < s.len() && s[i] == point {
        i += 1;
        let fs = i;
        while i < s.len() && s[i].is_ascii_digit() {
            i += 1;
        }
        let mut fe = i;
        while fe > fs && s[fe - 1] == b'0' {
            fe -= 1;
        }
        frac = &s[fs..fe];
    }
    let sign = if int.is_empty() && frac.is_empty() {
        0
    } else if neg {
        -1
    } else {
        1
    };
    Decimal { sign, int, int_digits, int_sep, frac, group: sep }
}

#[inline]
fn magnitude_cmp(a: &Decimal, b: &Decimal) -> Ordering {
    a.int_digits.cmp(&b.int_digits).then_with(|| {
        if a.int_sep || b.int_sep {
            a.digits().cmp(b.digits())
        } else {
            a.int.cmp(b.int).then_with(|| a.frac.cmp(b.frac))
        }
    })
}

#[inline]
pub(crate) fn decimal_cmp(a: &Decimal, b: &Decimal) -> Ordering {
    match a.sign.cmp(&b.sign) {
        Ordering::Equal => match a.sign {
            1 => magnitude_cmp(a, b),
            -1 => magnitude_cmp(b, a),
            _ => Ordering::Equal,
        },
        other => other,
    }
}

/// GNU's numcompare (-n): skip blanks, then strnumcmp.
#[inline]
pub(crate) fn numcompare(a: &[u8], b: &[u8], n: Numbers) -> Ordering {
    let da = parse_decimal(skip_blanks(a), n);
    let db = parse_decimal(skip_blanks(b), n);
    decimal_cmp(&da, &db)
}

/// Unit order of a -h suffix byte (9.1: K M G T P E Z Y, and k for kilo).
#[inline]
pub(crate) fn unit_order(c: u8) -> i32 {
    match c {
        b'K' | b'k' => 1,
        b'M' => 2,
        b'G' => 3,
        b'T' => 4,
        b'P' => 5,
        b'E' => 6,
        b'Z' => 7,
        b'Y' => 8,
        _ => 0,
    }
}

/// GNU's traverse_raw_number on `s` from `start` (after an optional '-'): the largest digit seen
/// (0 if none) and the index just past the number, where a unit may follow. One thousands
/// separator may follow each digit; a number that ends with one ends before it.
#[inline]
pub(crate) fn traverse_raw_number(s: &[u8], start: usize, n: Numbers) -> (u8, usize) {
    let at = |i: usize| s.get(i).copied().unwrap_or(0);
    let mut max_digit = 0u8;
    let mut p = start;
    let mut ends_with_sep = false;
    let mut ch;
    loop {
        ch = at(p);
        p += 1;
        if !ch.is_ascii_digit() {
            break;
        }
        max_digit = max_digit.max(ch);
        ends_with_sep = n.unit_group.is_some_and(|g| at(p) == g);
        p += usize::from(ends_with_sep);
    }
    if ends_with_sep {
        return (max_digit, p - 2);
    }
    if ch == n.decimal {
        loop {
            ch = at(p);
            p += 1;
            if !ch.is_ascii_digit() {
                break;
            }
            max_digit = max_digit.max(ch);
        }
    }
    (max_digit, p - 1)
}

/// The -h key in canonical form: (signed unit order, number). `s` has its blanks skipped.
#[inline]
pub(crate) fn human_parts(s: &[u8], fold: bool, n: Numbers) -> (i32, Decimal<'_>) {
    let neg = s.first() == Some(&b'-');
    let (max_digit, end) = traverse_raw_number(s, neg as usize, n);
    let order = if max_digit > b'0' {
        let c = s.get(end).copied().unwrap_or(0);
        let c = if fold { TOUPPER[c as usize] } else { c };
        let o = unit_order(c);
        if neg {
            -o
        } else {
            o
        }
    } else {
        0
    };
    (order, parse_decimal(s, n))
}

/// GNU's human_numcompare (-h): unit order first, then strnumcmp. `fold` for -f, which GNU applies
/// to the key before looking at the unit.
#[inline]
pub(crate) fn human_numcompare(a: &[u8], b: &[u8], fold: bool, n: Numbers) -> Ordering {
    let (oa, da) = human_parts(skip_blanks(a), fold, n);
    let (ob, db) = human_parts(skip_blanks(b), fold, n);
    oa.cmp(&ob).then_with(|| decimal_cmp(&da, &db))
}

/// Bits of the digit-count field of a number's prefix.
const COUNT_BITS: u32 = 14;
const COUNT_SATURATED: u128 = (1 << COUNT_BITS) - 1;

/// An order-preserving encoding of `d` in `bits` bits (at most 96): 2 bits of sign, 14 bits of
/// integer digit count, then the leading digits as one binary integer. Equal numbers encode equally;
/// a smaller encoding means a smaller number. Huge digit counts saturate and then carry no digits.
#[inline]
pub(crate) fn encode_decimal(d: &Decimal, bits: u32) -> u128 {
    let digit_bits = bits - 2 - COUNT_BITS;
    // The most decimal digits whose every value fits in `digit_bits` bits.
    let ndigits = ((digit_bits as f64) * std::f64::consts::LOG10_2).floor() as usize;
    match d.sign {
        0 => 1u128 << (bits - 2),
        sign => {
            let (count, digits) = if d.int_digits as u128 >= COUNT_SATURATED {
                (COUNT_SATURATED, 0u128)
            } else {
                let mut v: u128 = 0;
                let mut taken = 0;
                for c in d.digits().take(ndigits) {
                    v = v * 10 + (c - b'0') as u128;
                    taken += 1;
                }
                for _ in taken..ndigits {
                    v *= 10;
                }
                (d.int_digits as u128, v)
            };
            let mag = (count << digit_bits) | digits;
            if sign > 0 {
                (2u128 << (bits - 2)) | mag
            } else {
                !mag & ((1u128 << (bits - 2)) - 1)
            }
        }
    }
}

/// 96-bit prefix of a -n key.
#[inline]
pub(crate) fn numeric_prefix(s: &[u8], n: Numbers) -> u128 {
    encode_decimal(&parse_decimal(skip_blanks(s), n), 96)
}

/// 96-bit prefix of a -h key: 5 bits of unit order, then the number.
#[inline]
pub(crate) fn human_prefix(s: &[u8], fold: bool, n: Numbers) -> u128 {
    let (order, d) = human_parts(skip_blanks(s), fold, n);
    (((order + 8) as u128) << 91) | encode_decimal(&d, 91)
}

#[cfg(test)]
mod tests {
    use super::*;
    use Ordering::*;
    const C: Numbers = Numbers::C;

    #[test]
    fn numeric_edge_cases() {
        let eq: [(&[u8], &[u8]); 12] = [
            (b"-0", b"0"),
            (b"", b"abc"),
            (b"0", b"-"),
            (b"1.50", b"1.5"),
            (b"007", b"7"),
            (b"  3", b"3x"),
            (b"+5", b"0"),
            (b"-.0", b""),
            (b"1\x802", b"12"),
            (b"\x80\x800\x801\x80", b"1"),
            (b"1\x80.5", b"1.5"),
            (b"1.5\x809", b"1.5"),
        ];
        for (a, b) in eq {
            assert_eq!(numcompare(a, b, C), Equal, "{a:?} {b:?}");
            assert_eq!(numeric_prefix(a, C), numeric_prefix(b, C), "{a:?} {b:?}");
        }
        let lt = [
            ("-1", "0"),
            ("-2", "-1"),
            ("-10", "-9"),
            ("0.5", "1"),
            ("9", "10"),
            ("1.05", "1.5"),
            (".5", "1.5"),
            ("-0.5", "0"),
            ("1e9", "2"),
            ("\n7", "8"),
            ("123456789012345678901234567", "123456789012345678901234568"),
            ("-1.5", "-1.25"),
        ];
        for (a, b) in lt {
            assert_eq!(numcompare(a.as_bytes(), b.as_bytes(), C), Less, "{a} {b}");
            assert_eq!(numcompare(b.as_bytes(), a.as_bytes(), C), Greater, "{a} {b}");
            assert!(numeric_prefix(a.as_bytes(), C) <= numeric_prefix(b.as_bytes(), C), "{a} {b}");
        }
        assert!(numeric_prefix(b"-2", C) < numeric_prefix(b"-1", C));
        assert!(numeric_prefix(b"0.5", C) < numeric_prefix(b"1", C));
    }

    #[test]
    fn huge_numbers_saturate_the_prefix_consistently() {
        let big = |first: char, n: usize| format!("{first}{}", "0".repeat(n - 1));
        let nums = [
            big('1', 16382),
            big('9', 16382),
            big('1', 16383),
            big('2', 16383),
            big('1', 20000),
            format!("-{}", big('1', 20000)),
            format!("-{}", big('5', 16383)),
            format!("-{}", big('5', 16382)),
            "7".to_string(),
        ];
        for a in &nums {
            for b in &nums {
                let (pa, pb) = (numeric_prefix(a.as_bytes(), C), numeric_prefix(b.as_bytes(), C));
                let c = numcompare(a.as_bytes(), b.as_bytes(), C);
                if pa < pb {
                    assert_eq!(c, Less);
                }
                if c == Equal {
                    assert_eq!(pa, pb);
                }
            }
        }
        assert!(numeric_prefix(big('9', 16382).as_bytes(), C) < numeric_prefix(big('1', 16383).as_bytes(), C));
        assert!(numeric_prefix(big('1', 16382).as_bytes(), C) < numeric_prefix(big('9', 16382).as_bytes(), C));
    }

    #[test]
    fn human_edge_cases() {
        let lt = [("1", "1K"), ("2K", "1M"), ("-1M", "-1K"), ("-1K", "-1"), ("1k", "2K"), ("0K", "1"), ("1.5K", "2K"), ("1Y", "1Q")];
        for (a, b) in lt {
            if (a, b) == ("1Y", "1Q") {
                // 9.1 does not know R and Q: 1Q is a plain 1.
                assert_eq!(human_numcompare(a.as_bytes(), b.as_bytes(), false, C), Greater);
                continue;
            }
            assert_eq!(human_numcompare(a.as_bytes(), b.as_bytes(), false, C), Less, "{a} {b}");
            assert!(human_prefix(a.as_bytes(), false, C) < human_prefix(b.as_bytes(), false, C), "{a} {b}");
        }
        assert_eq!(human_numcompare(b"1m", b"1", false, C), Equal);
        assert_eq!(human_numcompare(b"1m", b"1M", true, C), Equal);
        assert_eq!(human_numcompare(b"1.K", b"1K", false, C), Equal);
    }
}
