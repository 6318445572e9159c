//! Unit tests of the radix sort's internals: tiny thresholds drive the
//! parallel passes, parallel children and digit skipping with small inputs.

use proptest::prelude::*;

use super::*;

/// Thresholds small enough that a few hundred entries take every path.
const TINY: RadixConfig = RadixConfig {
    small_sort: 4,
    small_bucket: 24,
    small_digit_bits: 6,
    par_pass: 64,
    par_children: 32,
    streaming: 100,
    min_chunk: 8,
    chunks_per_thread: 3,
};

fn check<E: Word>(cfg: &RadixConfig, input: &[E], key_bytes: usize) {
    let mut expected = input.to_vec();
    expected.sort_unstable();
    let mut entries = input.to_vec();
    let mut scratch = vec![!E::ZERO; input.len()];
    radix_sort_with(cfg, &mut entries, &mut scratch, key_bytes);
    assert_eq!(entries, expected, "key_bytes {key_bytes}");
}

/// Entries built like the sorter's: a key in the top `key_bytes`, the
/// index below.
fn with_index(keys: &[u128], key_bytes: usize) -> Vec<u128> {
    let shift = 128 - 8 * key_bytes as u32;
    keys.iter()
        .enumerate()
        .map(|(i, &k)| {
            let key = if shift == 0 { k } else { k << shift };
            key | (i as u128 & ((1u128 << shift.min(127)) - 1))
        })
        .collect()
}

/// Sorts `input` in pieces and checks what [`radix_sort_pieces`] promises:
/// the pieces are consecutive, in `entries` order, sorted as a whole, come
/// with the same range of `scratch`, and never split entries that agree on
/// the top `key_bytes`. Returns the number of pieces.
fn check_pieces(cfg: &RadixConfig, input: &[u128], key_bytes: usize) -> usize {
    let mut expected = input.to_vec();
    expected.sort_unstable();
    let mut entries = input.to_vec();
    let mut scratch = vec![0xDEAD; input.len()];
    let (entries_at, scratch_at) = (entries.as_ptr() as usize, scratch.as_ptr() as usize);
    let mut pieces: Vec<(usize, Vec<u128>)> = Vec::new();
    let mut next = 0;
    radix_sort_pieces_with(cfg, &mut entries, &mut scratch, key_bytes, |piece, work| {
        let start = (piece.as_ptr() as usize - entries_at) / 16;
        assert_eq!(start, next, "pieces must be consecutive");
        assert_eq!((work.as_ptr() as usize - scratch_at) / 16, start);
        assert_eq!(work.len(), piece.len());
        next += piece.len();
        work.fill(0xBAD); // the caller's to use
        pieces.push((start, piece.to_vec()));
    });
    assert_eq!(next, input.len());
    assert_eq!(entries, expected, "key_bytes {key_bytes}");
    let top = |e: u128| e.checked_shr(128 - 8 * key_bytes.min(16) as u32).unwrap_or(0);
    for w in pieces.windows(2) {
        let (a, b) = (w[0].1.last().unwrap(), w[1].1.first().unwrap());
        assert!(top(*a) < top(*b), "a key straddles two pieces");
    }
    pieces.len()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn pieces_with_tiny_thresholds(keys in prop::collection::vec(0u128..1000, 0..600), kb in 1usize..=4, shared in any::<u8>()) {
        // A shared top byte makes the split skip to the next digit.
        let v: Vec<u128> = with_index(&keys, kb).iter().map(|&e| e | (shared as u128) << 120).collect();
        check_pieces(&TINY, &v, kb);
        check_pieces(&TINY, &keys, kb);
    }

    #[test]
    fn tiny_thresholds_random(v in prop::collection::vec(any::<u128>(), 0..600), kb in 1usize..=16) {
        check(&TINY, &v, kb);
    }

    #[test]
    fn tiny_thresholds_few_keys(keys in prop::collection::vec(0u128..4, 0..600), kb in 1usize..=16) {
        check(&TINY, &with_index(&keys, kb), kb);
        check(&TINY, &keys, kb);
    }

    #[test]
    fn narrow_entries_with_tiny_thresholds(v in prop::collection::vec(any::<u64>(), 0..600), few in prop::collection::vec(0u64..4, 0..600), kb in 1usize..=10) {
        check(&TINY, &v, kb);
        // Keys in the top byte, input order below: ties and digits to skip.
        let v: Vec<u64> = few.iter().enumerate().map(|(i, &k)| k << 56 | i as u64).collect();
        check(&TINY, &v, kb);
    }

    #[test]
    fn tiny_thresholds_shared_bytes(v in prop::collection::vec(0u128..256, 0..600), top in any::<u128>(), kb in 1usize..=16) {
        // Only the lowest byte differs: 15 digits to skip.
        let mask = !0xFFu128;
        let v: Vec<u128> = v.iter().map(|&x| (top & mask) | x).collect();
        check(&TINY, &v, kb);
    }
}

#[test]
fn tiny_thresholds_on_odd_thread_counts() {
    // Also the Miri run's check of the whole sort: small under Miri.
    let n = if cfg!(miri) { 400 } else { 5000 };
    let v: Vec<u128> = (0..n).map(|i| (((i * 0x9E37_79B9_7F4A_7C15) % 977) << 100) | i).collect();
    for threads in [1, 3] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| {
            for kb in [1, 2, 10, 16] {
                check(&TINY, &v, kb);
            }
        });
    }
}

#[test]
fn pieces_split_large_inputs_and_keep_equal_keys_whole() {
    let v: Vec<u128> = (0..300_000u128).map(|i| ((i * 0x9E37_79B9_7F4A_7C15) % 4099) << 112 | i).collect();
    assert!(check_pieces(&RadixConfig::DEFAULT, &v, 2) > 10);
    // Two values of the first byte: each half is split again on the next one.
    let skewed: Vec<u128> = (0..300_000u128).map(|i| (1 + i % 2) << 120 | ((i * 0x9E37_79B9_7F4A_7C15) % 251) << 112 | i).collect();
    assert!(check_pieces(&RadixConfig::DEFAULT, &skewed, 2) > 100);
    // Shared bits move the split off a byte boundary: its digit must still end with the key (here
    // bit 16), or entries with equal keys would land in two pieces.
    let unaligned: Vec<u128> = (0..300_000u128).map(|i| 0x41 << 120 | (0x30 + (i * 0x9E37_79B9) % 2) << 112 | i << 90).collect();
    check_pieces(&RadixConfig::DEFAULT, &unaligned, 2);
    // All keys equal: one piece, in input order.
    let same: Vec<u128> = (0..200_000u128).rev().map(|i| 9u128 << 120 | i).collect();
    assert_eq!(check_pieces(&RadixConfig::DEFAULT, &same, 1), 1);
    assert_eq!(check_pieces(&TINY, &[3, 1, 2], 16), 1);
    assert_eq!(check_pieces(&TINY, &[], 16), 1);
}

/// u64 entries at the default thresholds: parallel passes with streaming stores, cache-sized
/// buckets, tied prefixes; and the flag that stops a sort.
#[test]
fn narrow_entries_at_default_thresholds() {
    let n = if cfg!(miri) { 500 } else { 1_500_000u64 };
    let random: Vec<u64> = (0..n).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29)).collect();
    check(&RadixConfig::DEFAULT, &random, 8);
    let tied: Vec<u64> = (0..n).map(|i| (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) % 1000) << 40 | (n - i)).collect();
    check(&RadixConfig::DEFAULT, &tied, 3);
    let (mut entries, mut scratch) = (tied.clone(), vec![0; tied.len()]);
    assert!(!radix_sort_until(&mut entries, &mut scratch, 3, &std::sync::atomic::AtomicBool::new(true)));
}

#[test]
fn all_equal_and_exhausted_keys() {
    check(&TINY, &vec![7u128; 1000], 3);
    // Same key, low bits descending: key bytes exhausted, still unsorted.
    let v: Vec<u128> = (0..1000u128).rev().map(|i| 5u128 << 120 | i).collect();
    check(&TINY, &v, 1);
    check(&RadixConfig::DEFAULT, &v, 1);
}

#[test]
fn shared_prefix_reads_diff() {
    assert!(matches!(shared_prefix(0u128, 24, 8), Shared::All));
    assert!(matches!(shared_prefix(1u128, 24, 8), Shared::UpTo(127)));
    assert!(matches!(shared_prefix(1u128 << 127, 0, 8), Shared::Differs));
    assert!(matches!(shared_prefix(1u128 << 100, 24, 8), Shared::Differs));
    assert!(matches!(shared_prefix(1u128 << 100, 16, 8), Shared::UpTo(27)));
}

/// `radix_sort_until`: with its flag never set it sorts as `radix_sort` does and says it finished;
/// with the flag set it gives up before its first bucket and says so.
#[test]
fn radix_sort_until_gives_up_once_its_flag_is_set() {
    use std::sync::atomic::AtomicBool;
    let input: Vec<u128> = (0..200_000u128).map(|i| (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) & 0xFFFF_FFFF) << 96 | i).collect();
    let mut sorted = input.clone();
    sorted.sort_unstable();
    let (mut entries, mut scratch) = (input.clone(), vec![0; input.len()]);
    assert!(radix_sort_until(&mut entries, &mut scratch, 4, &AtomicBool::new(false)));
    assert_eq!(entries, sorted);
    let (mut entries, mut scratch) = (input.clone(), vec![0; input.len()]);
    assert!(!radix_sort_until(&mut entries, &mut scratch, 4, &AtomicBool::new(true)));
    assert_ne!(entries, sorted);
}
