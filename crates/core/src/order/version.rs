//! `-V`: gnulib's filenvercmp as in coreutils 9.1 (natural order of version numbers within text).
//!
//! Empty strings first; then "." , "..", other names starting with '.', other names; then the
//! Debian-style comparison (non-digit runs byte by byte with letters before other bytes and '~'
//! before everything, even the end; digit runs by numeric value) of the names without their file
//! suffix (the longest trailing `(\.[A-Za-z~][A-Za-z0-9~]*)*`, possibly the whole name), and if that
//! ties, of the whole names.

use std::cmp::Ordering;

/// Compares two -V keys after -d/-i/-f transformation.
pub(crate) fn compare_transformed(ignore: Option<&[bool; 256]>, fold: Option<&[u8; 256]>, a: &[u8], b: &[u8]) -> Ordering {
    if ignore.is_none() && fold.is_none() {
        return filenvercmp(a, b);
    }
    thread_local! {
        static BUFS: std::cell::RefCell<(Vec<u8>, Vec<u8>)> = const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
    }
    BUFS.with(|bufs| {
        let mut bufs = bufs.borrow_mut();
        let (ta, tb) = &mut *bufs;
        super::transform_into(ignore, fold, a, ta);
        super::transform_into(ignore, fold, b, tb);
        filenvercmp(ta, tb)
    })
}

/// Order-preserving prefix of a -V key after -d/-i/-f, in the low 96 bits: the leading-dot class
/// (empty, ".", "..", other dot names, the rest), then the weights of the first bytes of the name
/// without its suffix, up to its first digit or its end: the first comparison pass of filenvercmp
/// is decided there unless both reach a digit or the end at the same place.
pub(crate) fn prefix_transformed(ignore: Option<&[bool; 256]>, fold: Option<&[u8; 256]>, s: &[u8]) -> u128 {
    if ignore.is_none() && fold.is_none() {
        return prefix(s);
    }
    thread_local! {
        static BUF: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    BUF.with(|buf| {
        let mut buf = buf.borrow_mut();
        super::transform_into(ignore, fold, s, &mut buf);
        prefix(&buf)
    })
}

fn prefix(s: &[u8]) -> u128 {
    const WEIGHTS: usize = 9;
    const WEIGHT_BITS: u32 = 10;
    let class: u128 = if s.is_empty() {
        0
    } else if s == b"." {
        1
    } else if s == b".." {
        2
    } else if s[0] == b'.' {
        3
    } else {
        4
    };
    let mut v = class;
    let mut k = 0;
    if class >= 3 {
        let name = &s[..file_prefixlen(s)];
        while k < WEIGHTS {
            // '~' < end or digit < letters < other bytes, as in `order`; end and digit share a
            // weight and stop the encoding (filenvercmp then compares numbers or goes on).
            let (w, stop) = match name.get(k) {
                None => (2, true),
                Some(c) if c.is_ascii_digit() => (2, true),
                Some(b'~') => (1, false),
                Some(&c) if c.is_ascii_alphabetic() => (c as u128 + 3, false),
                Some(&c) => (c as u128 + 259, false),
            };
            v = (v << WEIGHT_BITS) | w;
            k += 1;
            if stop {
                break;
            }
        }
    }
    v <<= WEIGHT_BITS * (WEIGHTS - k) as u32;
    v << (96 - 3 - WEIGHT_BITS * WEIGHTS as u32)
}

/// Length of `s` without its file suffix, the longest trailing `(\.[A-Za-z~][A-Za-z0-9~]*)*`.
/// In gnulib as of coreutils 9.1 the suffix may be all of `s` (".a" has an empty prefix).
fn file_prefixlen(s: &[u8]) -> usize {
    let n = s.len();
    let mut i = 0;
    loop {
        let prefixlen = i;
        while i + 1 < n && s[i] == b'.' && (s[i + 1].is_ascii_alphabetic() || s[i + 1] == b'~') {
            i += 2;
            while i < n && (s[i].is_ascii_alphanumeric() || s[i] == b'~') {
                i += 1;
            }
        }
        if i >= n {
            return prefixlen;
        }
        i += 1;
    }
}

/// Weight of the byte at `pos` in a non-digit run; the end of the string weighs -1.
#[inline]
fn order(s: &[u8], pos: usize) -> i32 {
    match s.get(pos) {
        None => -1,
        Some(c) if c.is_ascii_digit() => 0,
        Some(c) if c.is_ascii_alphabetic() => *c as i32,
        Some(b'~') => -2,
        Some(&c) => c as i32 + 256,
    }
}

/// dpkg's verrevcmp.
fn verrevcmp(s1: &[u8], s2: &[u8]) -> Ordering {
    let (n1, n2) = (s1.len(), s2.len());
    let (mut p1, mut p2) = (0, 0);
    let digit = |s: &[u8], p: usize| p < s.len() && s[p].is_ascii_digit();
    while p1 < n1 || p2 < n2 {
        while (p1 < n1 && !s1[p1].is_ascii_digit()) || (p2 < n2 && !s2[p2].is_ascii_digit()) {
            let c1 = order(s1, p1);
            let c2 = order(s2, p2);
            if c1 != c2 {
                return c1.cmp(&c2);
            }
            p1 += 1;
            p2 += 1;
        }
        while p1 < n1 && s1[p1] == b'0' {
            p1 += 1;
        }
        while p2 < n2 && s2[p2] == b'0' {
            p2 += 1;
        }
        let mut first_diff = Ordering::Equal;
        while digit(s1, p1) && digit(s2, p2) {
            if first_diff == Ordering::Equal {
                first_diff = s1[p1].cmp(&s2[p2]);
            }
            p1 += 1;
            p2 += 1;
        }
        if digit(s1, p1) {
            return Ordering::Greater;
        }
        if digit(s2, p2) {
            return Ordering::Less;
        }
        if first_diff != Ordering::Equal {
            return first_diff;
        }
    }
    Ordering::Equal
}

/// gnulib's filenvercmp on byte strings.
pub(crate) fn filenvercmp(a: &[u8], b: &[u8]) -> Ordering {
    use Ordering::*;
    match (a.is_empty(), b.is_empty()) {
        (true, true) => return Equal,
        (true, false) => return Less,
        (false, true) => return Greater,
        _ => {}
    }
    if a[0] == b'.' {
        if b[0] != b'.' {
            return Less;
        }
        let (adot, bdot) = (a.len() == 1, b.len() == 1);
        if adot || bdot {
            return bdot.cmp(&adot);
        }
        let adotdot = a[1] == b'.' && a.len() == 2;
        let bdotdot = b[1] == b'.' && b.len() == 2;
        if adotdot || bdotdot {
            return bdotdot.cmp(&adotdot);
        }
    } else if b[0] == b'.' {
        return Greater;
    }
    let ap = file_prefixlen(a);
    let bp = file_prefixlen(b);
    let one_pass_only = ap == a.len() && bp == b.len();
    let result = verrevcmp(&a[..ap], &b[..bp]);
    if result != Equal || one_pass_only {
        result
    } else {
        verrevcmp(a, b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_order() {
        let cases: &[(&str, &str, Ordering)] = &[
            ("", "a", Ordering::Less),
            (".", "..", Ordering::Less),
            ("..", ".a", Ordering::Less),
            (".z", "a", Ordering::Less),
            (".R", ".1", Ordering::Less),
            (".a", "..a", Ordering::Less),
            ("R", "1", Ordering::Greater),
            ("1.2", "1.10", Ordering::Less),
            ("1.2~rc1", "1.2", Ordering::Less),
            ("1.2", "1.2a", Ordering::Less),
            ("a~", "a", Ordering::Less),
            ("a01", "a1", Ordering::Equal),
            ("foo.tar.gz", "foo.tar", Ordering::Greater),
            ("1.2.10a~rc1", "1.2.10a", Ordering::Less),
            ("x-1.0.tar.gz", "x-1.0.1.tar.gz", Ordering::Less),
        ];
        for (a, b, o) in cases {
            assert_eq!(filenvercmp(a.as_bytes(), b.as_bytes()), *o, "{a:?} {b:?}");
            assert_eq!(filenvercmp(b.as_bytes(), a.as_bytes()), o.reverse(), "{b:?} {a:?}");
        }
    }

    #[test]
    fn prefixes_agree_with_compare() {
        let names = [
            "",
            ".",
            "..",
            ".a",
            ".R",
            ".1",
            "..a",
            "a",
            "a0",
            "a1",
            "a~",
            "a.b",
            "a.1",
            "1.2",
            "1.10",
            "abcdefghijk1",
            "abcdefghijk2",
            "x~1",
            "x-1",
            "foo.tar.gz",
            "foo",
            "~",
            "0",
            "00",
            "a.b.c",
            "A",
        ];
        for a in names {
            for b in names {
                let (pa, pb) = (prefix(a.as_bytes()), prefix(b.as_bytes()));
                let c = filenvercmp(a.as_bytes(), b.as_bytes());
                assert!(pa < 1u128 << 96);
                if pa < pb {
                    assert_eq!(c, Ordering::Less, "{a:?} {b:?}");
                }
                if c == Ordering::Equal {
                    assert_eq!(pa, pb, "{a:?} {b:?}");
                }
            }
        }
        assert!(prefix(b"a") < prefix(b"b"));
    }

    #[test]
    fn suffix_lengths() {
        assert_eq!(file_prefixlen(b"foo.tar.gz"), 3);
        assert_eq!(file_prefixlen(b".bashrc"), 0);
        assert_eq!(file_prefixlen(b"a.b~c.d1"), 1);
        assert_eq!(file_prefixlen(b"..a"), 1);
        assert_eq!(file_prefixlen(b"a.b-c"), 5);
        assert_eq!(file_prefixlen(b"a.1"), 3);
        assert_eq!(file_prefixlen(b""), 0);
    }
}
