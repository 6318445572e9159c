//! The integer types the radix sort and its helpers sort: `u128` entries (a key prefix of up to
//! 15 bytes beside a record's position) and `u64` entries (up to 7 bytes beside it), which move
//! half the bytes through memory when a short prefix tells the keys apart.

use std::fmt::Debug;
use std::ops::{BitAnd, BitOr, BitOrAssign, BitXor, BitXorAssign, Not};

mod sealed {
    pub trait Sealed {}
    impl Sealed for u64 {}
    impl Sealed for u128 {}
}

/// An unsigned integer entry, sorted as a number, its most significant byte first.
pub trait Word:
    sealed::Sealed
    + Copy
    + Ord
    + Default
    + Debug
    + Send
    + Sync
    + BitAnd<Output = Self>
    + BitOr<Output = Self>
    + BitXor<Output = Self>
    + BitOrAssign
    + BitXorAssign
    + Not<Output = Self>
    + 'static
{
    /// Bits in the entry.
    const BITS: u32;
    /// The entry whose bits are all zero.
    const ZERO: Self;

    /// `self >> shift`, its low bits as a `usize` (the digit of a radix pass, before its mask).
    fn shifted(self, shift: u32) -> usize;

    /// How many leading bits are zero.
    fn leading_zeros(self) -> u32;

    /// All ones when `yes`, else zero: a mask for branch-free selection.
    fn mask_if(yes: bool) -> Self;

    /// The entry with its top `bits` bits set (all of them for `bits >= BITS`).
    fn top_bits(bits: u32) -> Self;
}

macro_rules! word {
    ($t:ty) => {
        impl Word for $t {
            const BITS: u32 = <$t>::BITS;
            const ZERO: Self = 0;

            #[inline(always)]
            fn shifted(self, shift: u32) -> usize {
                (self >> shift) as usize
            }

            #[inline(always)]
            fn leading_zeros(self) -> u32 {
                <$t>::leading_zeros(self)
            }

            #[inline(always)]
            fn mask_if(yes: bool) -> Self {
                (0 as $t).wrapping_sub(<$t>::from(yes))
            }

            fn top_bits(bits: u32) -> Self {
                match bits.min(<$t>::BITS) {
                    0 => 0,
                    b => !0 << (<$t>::BITS - b),
                }
            }
        }
    };
}

word!(u64);
word!(u128);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operations_of_both_widths() {
        assert_eq!((0xAB_u64 << 56).shifted(56), 0xAB);
        assert_eq!((0xABCD_u128 << 112).shifted(120), 0xAB);
        assert_eq!((<u64 as Word>::mask_if(true), <u64 as Word>::mask_if(false)), (u64::MAX, 0));
        assert_eq!(<u128 as Word>::mask_if(true), u128::MAX);
        assert_eq!(<u64 as Word>::top_bits(8), 0xFF << 56);
        assert_eq!((<u128 as Word>::top_bits(0), <u128 as Word>::top_bits(500)), (0, u128::MAX));
        assert_eq!(Word::leading_zeros(1u64), 63);
    }
}
