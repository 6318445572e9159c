//! `-R`: a keyed hash of the (transformed) key; equal keys hash equally, so they end up adjacent.
//!
//! GNU hashes with MD5 seeded from `--random-source`; byte identity with GNU is not a goal, so this
//! uses SipHash-1-3 keyed from the seed bytes: the same seed gives the same order. Keys whose hashes
//! tie compare by their bytes, as in GNU.

use std::cmp::Ordering;

use super::locale::Locale;

/// The SipHash key derived from the `-R` seed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct HashKey {
    k0: u64,
    k1: u64,
}

impl HashKey {
    /// Derives a key from arbitrary seed bytes (any length, possibly empty).
    pub(crate) fn from_seed(seed: &[u8]) -> HashKey {
        let base = HashKey { k0: 0x736f_7274_2d52_2d31, k1: 0x7873_6f72_742d_7365 };
        let k0 = base.hash_bytes(seed.iter().copied());
        let k1 = HashKey { k0: base.k1, k1: k0 }.hash_bytes(seed.iter().copied());
        HashKey { k0, k1 }
    }

    /// SipHash-1-3 of a byte stream.
    pub(crate) fn hash_bytes(&self, bytes: impl Iterator<Item = u8>) -> u64 {
        let mut v = [
            self.k0 ^ 0x736f_6d65_7073_6575,
            self.k1 ^ 0x646f_7261_6e64_6f6d,
            self.k0 ^ 0x6c79_6765_6e65_7261,
            self.k1 ^ 0x7465_6462_7974_6573,
        ];
        let mut word = 0u64;
        let mut n = 0usize;
        for b in bytes {
            word |= (b as u64) << (8 * (n % 8));
            n += 1;
            if n & 7 == 0 {
                v[3] ^= word;
                round(&mut v);
                v[0] ^= word;
                word = 0;
            }
        }
        let last = word | ((n as u64 & 0xff) << 56);
        v[3] ^= last;
        round(&mut v);
        v[0] ^= last;
        v[2] ^= 0xff;
        round(&mut v);
        round(&mut v);
        round(&mut v);
        v[0] ^ v[1] ^ v[2] ^ v[3]
    }

    /// The hash of a key after -d/-i dropping and -f folding, in a collating locale of its
    /// collation transform (so that keys that collate equal hash equally).
    #[inline]
    pub(crate) fn hash_key(&self, locale: &Locale, ignore: Option<&[bool; 256]>, fold: Option<&[u8; 256]>, s: &[u8]) -> u64 {
        if locale.collates() {
            let mut xfrm = Vec::new();
            locale.xfrm_into(ignore, fold, s, &mut xfrm);
            return self.hash_bytes(xfrm.into_iter());
        }
        let tr = fold.unwrap_or(&super::IDENTITY);
        match ignore {
            None => self.hash_bytes(s.iter().map(|&c| tr[c as usize])),
            Some(ig) => self.hash_bytes(s.iter().filter(|&&c| !ig[c as usize]).map(|&c| tr[c as usize])),
        }
    }
}

#[inline]
fn round(v: &mut [u64; 4]) {
    v[0] = v[0].wrapping_add(v[1]);
    v[1] = v[1].rotate_left(13);
    v[1] ^= v[0];
    v[0] = v[0].rotate_left(32);
    v[2] = v[2].wrapping_add(v[3]);
    v[3] = v[3].rotate_left(16);
    v[3] ^= v[2];
    v[0] = v[0].wrapping_add(v[3]);
    v[3] = v[3].rotate_left(21);
    v[3] ^= v[0];
    v[2] = v[2].wrapping_add(v[1]);
    v[1] = v[1].rotate_left(17);
    v[1] ^= v[2];
    v[2] = v[2].rotate_left(32);
}

/// GNU's compare_random: by hash, then by the transformed key bytes (in a collating locale, by
/// the collation transforms' bytes).
#[inline]
pub(crate) fn compare(
    key: &HashKey,
    locale: &Locale,
    ignore: Option<&[bool; 256]>,
    fold: Option<&[u8; 256]>,
    a: &[u8],
    b: &[u8],
) -> Ordering {
    if locale.collates() {
        let (mut xa, mut xb) = (Vec::new(), Vec::new());
        locale.xfrm_into(ignore, fold, a, &mut xa);
        locale.xfrm_into(ignore, fold, b, &mut xb);
        return key.hash_bytes(xa.iter().copied()).cmp(&key.hash_bytes(xb.iter().copied())).then_with(|| xa.cmp(&xb));
    }
    let ha = key.hash_key(locale, ignore, fold, a);
    let hb = key.hash_key(locale, ignore, fold, b);
    ha.cmp(&hb).then_with(|| super::text_compare(ignore, fold, a, b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_keys_hash_equal_and_seeds_differ() {
        let k = HashKey::from_seed(b"seed");
        assert_eq!(k.hash_key(&Locale::C, None, Some(&super::super::TOUPPER), b"abc"), k.hash_key(&Locale::C, None, None, b"ABC"));
        assert_eq!(
            k.hash_key(&Locale::C, Some(&super::super::C_CLASSES.nondictionary), None, b"a-b"),
            k.hash_key(&Locale::C, None, None, b"ab")
        );
        assert_ne!(k.hash_key(&Locale::C, None, None, b"abc"), k.hash_key(&Locale::C, None, None, b"abd"));
        assert_ne!(HashKey::from_seed(b"x"), HashKey::from_seed(b"y"));
        assert_eq!(HashKey::from_seed(b"x"), HashKey::from_seed(b"x"));
        assert_eq!(compare(&k, &Locale::C, None, Some(&super::super::TOUPPER), b"abc", b"ABC"), Ordering::Equal);
    }
}
