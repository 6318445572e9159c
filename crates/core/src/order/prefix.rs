//! Order-preserving 96-bit prefixes of the first key (placed in the top 96 bits of a `u128`).
//!
//! Contract (see [`super::LineOrder::prefix`]): a smaller prefix means a smaller line, and lines
//! that compare equal have equal prefixes. So each prefix is a monotone (non-strict) function of the
//! key's equivalence class: truncation is fine, rounding is not.

use super::{general, numeric, version, Key, Kind, LineOrder, IDENTITY};

/// Bytes of text a prefix holds.
const TEXT_BYTES: usize = 12;

/// The mask of the 96 usable bits.
const MASK: u128 = !0u128 << 32;

/// Inverts the order of a prefix (for -r).
#[inline]
pub(crate) fn invert(p: u128) -> u128 {
    !p & MASK
}

/// The first 12 bytes of `s`, zero-padded, big-endian in the top 96 bits.
#[inline]
pub(crate) fn bytes(s: &[u8]) -> u128 {
    let mut buf = [0u8; 16];
    let n = s.len().min(TEXT_BYTES);
    buf[..n].copy_from_slice(&s[..n]);
    u128::from_be_bytes(buf)
}

/// The first 12 bytes of `s` that -d/-i keep, translated by -f.
#[inline]
fn transformed_bytes(ignore: Option<&[bool; 256]>, fold: Option<&[u8; 256]>, s: &[u8]) -> u128 {
    let tr = fold.unwrap_or(&IDENTITY);
    let mut buf = [0u8; 16];
    let mut n = 0;
    for &c in s {
        if ignore.is_some_and(|ig| ig[c as usize]) {
            continue;
        }
        buf[n] = tr[c as usize];
        n += 1;
        if n == TEXT_BYTES {
            break;
        }
    }
    u128::from_be_bytes(buf)
}

/// The prefix of one key's text `s` (not reversed), in `order`'s locale.
#[inline]
pub(crate) fn key(key: &Key, s: &[u8], order: &LineOrder) -> u128 {
    let locale = &order.locale;
    let low96 = match key.kind {
        Kind::Text if locale.collates() => return locale.xfrm_prefix(key.ignore, key.fold, s),
        Kind::Text if key.ignore.is_none() && key.fold.is_none() => return bytes(s),
        Kind::Text => return transformed_bytes(key.ignore, key.fold, s),
        Kind::Numeric => numeric::numeric_prefix(s, locale.numbers()),
        Kind::Human => numeric::human_prefix(s, key.fold.is_some(), locale.numbers()),
        Kind::General => general::general_prefix(s, locale),
        Kind::Month => (locale.month_at(s).0 as u128) << 92,
        Kind::Random => (order.hash_key.hash_key(locale, key.ignore, key.fold, s) as u128) << 32,
        Kind::Version => version::prefix_transformed(key.ignore, key.fold, s),
    };
    low96 << 32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_and_invert() {
        assert!(bytes(b"a") < bytes(b"a\x01"));
        assert_eq!(bytes(b"a"), bytes(b"a\0"));
        assert_eq!(bytes(b"abcdefghijklX"), bytes(b"abcdefghijklY"));
        assert_eq!(bytes(b"x") & !MASK, 0);
        assert!(invert(bytes(b"a")) > invert(bytes(b"b")));
        assert_eq!(invert(bytes(b"a")) & !MASK, 0);
        assert_eq!(transformed_bytes(Some(&super::super::C_CLASSES.nondictionary), Some(&super::super::TOUPPER), b"a-b.c"), bytes(b"ABC"));
    }
}
