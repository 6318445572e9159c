//! `-g`: GNU's general_numcompare, through the C shim `strtold.c` (`strtold` in the sort's locale,
//! whose decimal point it reads, compared as the platform's `long double`, 80-bit on x86 like GNU
//! sort).
//!
//! Order: keys without a number first (all equal), then NaNs (among themselves by memcmp of their
//! representation, as GNU 9.1 does: "nan" before "-nan" on x86), then numbers by value (-0 == 0).
//! The prefix carries the class and the value: sign, binary exponent and the top 64 bits of the
//! mantissa; all NaNs share one prefix.

use std::cmp::Ordering;
use std::ffi::c_void;
use std::os::raw::{c_char, c_int, c_ulonglong};

use super::locale::Locale;

extern "C" {
    fn xsort_order_gcmp(a: *const c_char, b: *const c_char, loc: *mut c_void) -> c_int;
    fn xsort_order_gend(s: *const c_char, loc: *mut c_void) -> usize;
    fn xsort_order_gkey(s: *const c_char, exp: *mut c_int, mant: *mut c_ulonglong, loc: *mut c_void) -> c_int;
}

/// Calls `f` with a NUL-terminated copy of `s` (on the stack when short).
#[inline]
fn with_cstr<R>(s: &[u8], f: impl FnOnce(*const c_char) -> R) -> R {
    let mut stack = [0u8; 128];
    if s.len() < stack.len() {
        stack[..s.len()].copy_from_slice(s);
        f(stack.as_ptr().cast())
    } else {
        let mut v = Vec::with_capacity(s.len() + 1);
        v.extend_from_slice(s);
        v.push(0);
        f(v.as_ptr().cast())
    }
}

/// GNU's general_numcompare on two keys.
#[inline]
pub(crate) fn general_numcompare(a: &[u8], b: &[u8], locale: &Locale) -> Ordering {
    let loc = locale.raw();
    // SAFETY: both pointers are NUL-terminated buffers alive for the call; `loc` is null or a live
    // locale object that `locale` holds.
    let r = with_cstr(a, |pa| with_cstr(b, |pb| unsafe { xsort_order_gcmp(pa, pb, loc) }));
    r.cmp(&0)
}

/// How many bytes of `s` strtold reads as a number (0 when none), for --debug.
pub(crate) fn general_end(s: &[u8], locale: &Locale) -> usize {
    let loc = locale.raw();
    // SAFETY: NUL-terminated buffer alive for the call; `loc` is null or a live locale object.
    with_cstr(s, |p| unsafe { xsort_order_gend(p, loc) })
}

/// 96-bit order-preserving prefix of a -g key: 2 bits of class (no number, NaN, number), then
/// for numbers 81 bits: bit 80 set for non-negative values, then the biased exponent (16 bits)
/// and 64 mantissa bits of |x|, complemented for negative values.
#[inline]
pub(crate) fn general_prefix(s: &[u8], locale: &Locale) -> u128 {
    let mut exp: c_int = 0;
    let mut mant: c_ulonglong = 0;
    let loc = locale.raw();
    // SAFETY: NUL-terminated buffer and valid out-pointers alive for the call; `loc` is null or a
    // live locale object.
    let class = with_cstr(s, |p| unsafe { xsort_order_gkey(p, &mut exp, &mut mant, loc) });
    const VALUE_BITS: u32 = 81;
    const MAG_MASK: u128 = (1u128 << 80) - 1;
    let number = |v: u128| (3u128 << VALUE_BITS) | v;
    let magnitude = || ((((exp + 20000).clamp(1, 0xfffe)) as u128) << 64) | mant as u128;
    let v = match class {
        0 => 0,
        1 | 2 => 1u128 << VALUE_BITS,
        3 => number(0),
        4 => number(!magnitude() & MAG_MASK),
        5 => number(1u128 << 80),
        6 => number((1u128 << 80) | magnitude()),
        _ => number((1u128 << 80) | MAG_MASK),
    };
    v << 13
}

#[cfg(test)]
mod tests {
    use super::*;
    use Ordering::*;
    const C: Locale = Locale::C;

    #[test]
    fn general_order() {
        // Increasing order; entries in the same group compare equal.
        let groups: &[&[&str]] = &[
            &["", "abc", "-", "+", ".", "e5"],
            &["nan", "NAN"],
            &["-nan", "-NaN"],
            &["-inf", "-Infinity"],
            &["-1e10", "-0x2.540BE4p32"],
            &["-1"],
            &["-0x1p-16445"],
            &["0", "-0", "0x0", " 0", "0.0e5", "\t\n\x0b+0"],
            &["1e-4950"],
            &["0.1"],
            &["1", "1.0", "+1", "0x1p0", "1e0x", "1."],
            &["1.0000000000000000001"],
            &["1.000000000000000001"],
            &["1e4932"],
            &["inf", "INFINITY", "1e5000"],
        ];
        for (gi, g) in groups.iter().enumerate() {
            for a in g.iter() {
                for b in g.iter() {
                    assert_eq!(general_numcompare(a.as_bytes(), b.as_bytes(), &C), Equal, "{a:?} {b:?}");
                    assert_eq!(general_prefix(a.as_bytes(), &C), general_prefix(b.as_bytes(), &C), "{a:?} {b:?}");
                }
                for h in &groups[gi + 1..] {
                    for b in h.iter() {
                        assert_eq!(general_numcompare(a.as_bytes(), b.as_bytes(), &C), Less, "{a:?} {b:?}");
                        assert_eq!(general_numcompare(b.as_bytes(), a.as_bytes(), &C), Greater, "{a:?} {b:?}");
                        assert!(general_prefix(a.as_bytes(), &C) <= general_prefix(b.as_bytes(), &C), "{a:?} {b:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn general_end_and_long_keys() {
        assert_eq!(general_end(b"  12.5e3xyz", &C), 8);
        assert_eq!(general_end(b"x", &C), 0);
        let long = format!("{}1", "0".repeat(300));
        assert_eq!(general_numcompare(long.as_bytes(), b"1", &C), Equal);
        assert_eq!(general_numcompare(b"1\x002", b"1", &C), Equal);
    }
}
