//! Input generators shared by the integration tests: a seeded PRNG and the
//! entry distributions the sorter meets (random, few distinct keys, skewed,
//! descending, arbitrary low bits).

#![allow(dead_code)]

/// SplitMix64: small, seedable, good enough for test data.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub fn next_u128(&mut self) -> u128 {
        (u128::from(self.next_u64()) << 64) | u128::from(self.next_u64())
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

/// Packs `keys` as the sorter does: key in the top `key_bytes` bytes
/// (keys are truncated to fit), the input position below.
pub fn entries_from_keys(keys: &[u128], key_bytes: usize) -> Vec<u128> {
    let index_bits = 128 - 8 * key_bytes as u32;
    keys.iter()
        .enumerate()
        .map(|(i, &k)| match index_bits {
            0 => k,
            b => (k << b) | (i as u128 & ((1u128 << b) - 1)),
        })
        .collect()
}

/// The distributions the property tests run on.
#[derive(Clone, Copy, Debug)]
pub enum Dist {
    /// Random keys, index below (gensort-like).
    Random,
    /// Keys from a handful of values, index below.
    FewKeys,
    /// 90% of entries share one key, the rest random.
    Skewed,
    /// All keys equal.
    AllEqual,
    /// Keys and entries descending.
    Descending,
    /// Random u128s: the low bits are not an ascending index.
    Arbitrary,
    /// Few keys, low bits random: exhausted key bytes stay unsorted.
    FewKeysRandomLow,
}

pub const ALL_DISTS: [Dist; 7] =
    [Dist::Random, Dist::FewKeys, Dist::Skewed, Dist::AllEqual, Dist::Descending, Dist::Arbitrary, Dist::FewKeysRandomLow];

/// `n` entries of distribution `dist` with keys of `key_bytes` bytes.
pub fn generate(dist: Dist, n: usize, key_bytes: usize, seed: u64) -> Vec<u128> {
    let mut rng = Rng::new(seed);
    let key_mask = if key_bytes >= 16 { !0 } else { (1u128 << (8 * key_bytes)) - 1 };
    let hot = rng.next_u128() & key_mask;
    let keys: Vec<u128> = match dist {
        Dist::Random => (0..n).map(|_| rng.next_u128() & key_mask).collect(),
        Dist::FewKeys => (0..n).map(|_| u128::from(rng.below(5)) * 0x0101_0101).collect(),
        Dist::Skewed => (0..n).map(|_| if rng.below(10) < 9 { hot } else { rng.next_u128() & key_mask }).collect(),
        Dist::AllEqual => vec![hot; n],
        Dist::Descending => (0..n).map(|i| (n - i) as u128).collect(),
        Dist::Arbitrary => return (0..n).map(|_| rng.next_u128()).collect(),
        Dist::FewKeysRandomLow => {
            let shift = 128 - 8 * key_bytes.min(15) as u32;
            return (0..n).map(|_| (u128::from(rng.below(3)) << shift) | (rng.next_u128() >> (128 - shift))).collect();
        }
    };
    let mut entries = entries_from_keys(&keys, key_bytes);
    if matches!(dist, Dist::Descending) {
        entries.reverse();
    }
    entries
}

/// The reference result.
pub fn sorted(v: &[u128]) -> Vec<u128> {
    let mut s = v.to_vec();
    s.sort();
    s
}
