//! The Sort Benchmark's 128-bit linear congruential generator, with jump-ahead.
//!
//! `X(n+1) = A * X(n) + C (mod 2^128)`, `X(0) = 0`, and `R(n) = X(n)`, so
//! `R(1) = C`. Record `i` is built from `R(i+1)` onwards (see the `record` module).
//!
//! The step `x -> A*x + C` is an affine map, and affine maps compose into affine
//! maps, so `f^n` is the composition of the precomputed `f^(2^k)` for the set bits
//! of `n`: at most 128 compositions reach any `R(n)`. That is what lets `-b`
//! start anywhere and lets every parallel chunk start on its own.
//!
//! The multiplier has `A mod 4 == 1` and `C` is odd, so the period is the full
//! 2^128 and `R(n)` depends on `n mod 2^128` only: wrapping arithmetic is exact.

/// The multiplier of the generator.
pub const A: u128 = 0x2360_ed05_1fc6_5da4_4385_df64_9fcc_f645;
/// The increment of the generator.
pub const C: u128 = 0x4a69_6d47_7261_7952_4950_2020_2020_2001;

/// An affine map `x -> mul * x + add (mod 2^128)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Affine {
    /// Multiplier.
    pub mul: u128,
    /// Increment.
    pub add: u128,
}

impl Affine {
    /// The identity map.
    pub const IDENTITY: Affine = Affine { mul: 1, add: 0 };
    /// One step of the generator.
    pub const STEP: Affine = Affine { mul: A, add: C };

    /// Applies the map to `x`.
    #[inline(always)]
    pub const fn apply(self, x: u128) -> u128 {
        self.mul.wrapping_mul(x).wrapping_add(self.add)
    }

    /// The map "`self`, then `next`".
    #[inline]
    pub const fn then(self, next: Affine) -> Affine {
        Affine { mul: next.mul.wrapping_mul(self.mul), add: next.mul.wrapping_mul(self.add).wrapping_add(next.add) }
    }
}

/// `POWERS[k]` is the generator step applied `2^k` times.
static POWERS: [Affine; 128] = build_powers();

const fn build_powers() -> [Affine; 128] {
    let mut table = [Affine::IDENTITY; 128];
    let mut current = Affine::STEP;
    let mut k = 0;
    while k < 128 {
        table[k] = current;
        current = current.then(current);
        k += 1;
    }
    table
}

/// The generator step applied `n` times (mod 2^128).
pub fn jump(n: u128) -> Affine {
    let mut map = Affine::IDENTITY;
    let mut bits = n;
    while bits != 0 {
        let k = bits.trailing_zeros() as usize;
        // Powers of the same map commute, so the order of composition is free.
        map = map.then(POWERS[k]);
        bits &= bits - 1;
    }
    map
}

/// `R(n)`: the `n`-th value after the seed 0 (so `rand_at(1) == C`).
pub fn rand_at(n: u128) -> u128 {
    jump(n).apply(0)
}

/// The value following `x`.
#[inline(always)]
pub const fn next(x: u128) -> u128 {
    Affine::STEP.apply(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_values_match_stepping() {
        let mut x = 0u128;
        for n in 0..2_000u128 {
            assert_eq!(rand_at(n), x, "R({n})");
            x = next(x);
        }
        assert_eq!(rand_at(1), C);
    }

    #[test]
    fn jumps_compose_across_the_64_bit_boundary() {
        let base = (1u128 << 64) - 3;
        let mut x = rand_at(base);
        for d in 0..10u128 {
            assert_eq!(rand_at(base + d), x);
            x = next(x);
        }
        assert_eq!(jump(5).apply(rand_at(base)), rand_at(base + 5));
    }

    #[test]
    fn full_period_wraps_to_the_seed() {
        // f^(2^128) is the identity, so R(2^128 - 1) steps to R(0) = 0.
        assert_eq!(next(rand_at(u128::MAX)), 0);
    }
}
