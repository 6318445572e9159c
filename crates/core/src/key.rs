//! Keys and their normalization.
//!
//! Every key is turned into a byte string that compares correctly with `memcmp`: the concatenation of
//! its parts, each part's bytes inverted when descending. The sorter keeps only a prefix of it in the
//! 16-byte entry ([`KeySpec::prefix`]); when the key is longer than the prefix, entries whose prefixes
//! tie are put in order by [`KeySpec::compare`] on the records themselves. Typed keys (integers,
//! floats, decimal text) slot in as further part kinds with their own normalization.

use crate::error::{Result, SortError};
use std::cmp::Ordering;

/// One part of a key: a byte range of the record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyPart {
    /// Offset of the first byte in the record.
    pub offset: usize,
    /// Length in bytes (at least 1).
    pub len: usize,
    /// Descending order for this part.
    pub descending: bool,
}

/// The key of a sort: parts in priority order. No parts means the whole record, ascending.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeySpec {
    parts: Vec<KeyPart>,
}

impl KeySpec {
    /// A key from parts in priority order.
    pub fn new(parts: Vec<KeyPart>) -> Self {
        KeySpec { parts }
    }

    /// The parts (empty means whole record).
    pub fn parts(&self) -> &[KeyPart] {
        &self.parts
    }

    /// Resolves the key against a record size: an empty key becomes the whole record; parts that
    /// reach beyond the record are an error naming the option.
    pub fn resolve(&self, record_size: usize) -> Result<ResolvedKey> {
        let mut parts = self.parts.clone();
        if parts.is_empty() {
            parts.push(KeyPart { offset: 0, len: record_size, descending: false });
        }
        for p in &parts {
            if p.len == 0 {
                return Err(SortError::Config(format!("key {}:{}: a key must be at least one byte long", p.offset, p.len)));
            }
            if p.offset.checked_add(p.len).is_none_or(|end| end > record_size) {
                return Err(SortError::Config(format!(
                    "key {}:{} reaches beyond the {}-byte record (bytes {}..{})",
                    p.offset,
                    p.len,
                    record_size,
                    p.offset,
                    p.offset.saturating_add(p.len)
                )));
            }
        }
        let len = parts.iter().map(|p| p.len).sum();
        let simple = parts.len() == 1 && !parts[0].descending;
        Ok(ResolvedKey { parts, len, simple })
    }
}

/// A key checked against the record size, ready for the hot loops.
#[derive(Clone, Debug)]
pub struct ResolvedKey {
    parts: Vec<KeyPart>,
    len: usize,
    simple: bool,
}

impl ResolvedKey {
    /// Length of the normalized key in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the key is empty (never, once resolved; for clippy's sake).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The first `n` (<= 16) bytes of the normalized key as the top bytes of a u128, zero below.
    #[inline]
    pub fn prefix(&self, rec: &[u8], n: usize) -> u128 {
        let mut b = [0u8; 16];
        if self.simple {
            let p = &self.parts[0];
            let take = n.min(p.len);
            b[..take].copy_from_slice(&rec[p.offset..p.offset + take]);
        } else {
            let mut at = 0;
            for p in &self.parts {
                if at >= n {
                    break;
                }
                let take = (n - at).min(p.len);
                let src = &rec[p.offset..p.offset + take];
                if p.descending {
                    for (d, s) in b[at..at + take].iter_mut().zip(src) {
                        *d = !s;
                    }
                } else {
                    b[at..at + take].copy_from_slice(src);
                }
                at += take;
            }
        }
        u128::from_be_bytes(b)
    }

    /// Full comparison of two records' keys.
    #[inline]
    pub fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        for p in &self.parts {
            let (x, y) = (&a[p.offset..p.offset + p.len], &b[p.offset..p.offset + p.len]);
            let o = if p.descending { y.cmp(x) } else { x.cmp(y) };
            if o != Ordering::Equal {
                return o;
            }
        }
        Ordering::Equal
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn part(offset: usize, len: usize, descending: bool) -> KeyPart {
        KeyPart { offset, len, descending }
    }

    #[test]
    fn empty_key_is_whole_record() {
        let k = KeySpec::default().resolve(7).unwrap();
        assert_eq!(k.len(), 7);
        assert_eq!(k.prefix(b"abcdefg", 3), u128::from_be_bytes(*b"abc\0\0\0\0\0\0\0\0\0\0\0\0\0"));
    }

    #[test]
    fn key_beyond_record_is_error() {
        let e = KeySpec::new(vec![part(95, 10, false)]).resolve(100).unwrap_err();
        assert_eq!(e.to_string(), "key 95:10 reaches beyond the 100-byte record (bytes 95..105)");
        assert!(KeySpec::new(vec![part(usize::MAX, 2, false)]).resolve(100).is_err());
        assert!(KeySpec::new(vec![part(0, 0, false)]).resolve(100).is_err());
    }

    proptest! {
        /// The prefix order agrees with the full comparison wherever prefixes differ, and equal keys
        /// have equal prefixes: the invariant the radix sort plus tie-break relies on.
        #[test]
        fn prefix_is_consistent_with_compare(
            a in proptest::collection::vec(0u8..4, 12),
            b in proptest::collection::vec(0u8..4, 12),
            specs in proptest::collection::vec((0usize..12, 1usize..5, any::<bool>()), 0..4),
            n in 1usize..=16,
        ) {
            let parts: Vec<_> = specs.into_iter().filter(|(o, l, _)| o + l <= 12).map(|(o, l, d)| part(o, l, d)).collect();
            let k = KeySpec::new(parts).resolve(12).unwrap();
            let (pa, pb) = (k.prefix(&a, n), k.prefix(&b, n));
            let full = k.compare(&a, &b);
            if pa != pb {
                prop_assert_eq!(pa.cmp(&pb), full);
            }
            if full == Ordering::Equal {
                prop_assert_eq!(pa, pb);
            }
            if k.len() <= n {
                prop_assert_eq!(pa.cmp(&pb), full);
            }
        }
    }
}
