//! Property and regression tests of the public sorting API: `radix_sort`,
//! `merge_sort` and `sort_entries` must equal `slice::sort` on every input.

mod common;

use common::{generate, sorted, Dist, ALL_DISTS};
use proptest::prelude::*;
use xsort_kernels::{merge_sort, radix_sort, sort_entries, Method};

fn radix(v: &[u128], key_bytes: usize) -> Vec<u128> {
    let mut e = v.to_vec();
    let mut scratch = vec![u128::MAX; v.len()];
    radix_sort(&mut e, &mut scratch, key_bytes);
    e
}

fn merge(v: &[u128]) -> Vec<u128> {
    let mut e = v.to_vec();
    let mut scratch = vec![u128::MAX; v.len()];
    merge_sort(&mut e, &mut scratch);
    e
}

/// Sizes around the thresholds (see `src/tuning.rs`: small sort 48, 8-bit
/// versus wider digits at 1,024, cache-sized buckets 60,000, parallel
/// children 2^16, parallel merge 2^15, parallel pass and scans 2^17).
const SIZES: [usize; 16] = [0, 1, 2, 47, 48, 49, 300, 1_023, 1_024, 16_385, 32_769, 59_999, 60_001, 131_071, 131_073, 300_000];

#[test]
fn radix_every_distribution_size_and_key_width() {
    for dist in ALL_DISTS {
        for (s, &n) in SIZES.iter().enumerate() {
            // All widths on small inputs; a spread of them on large ones.
            let widths: &[usize] = if n <= 50_000 { &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16] } else { &[1, 6, 10, 16] };
            for &kb in widths {
                let v = generate(dist, n, kb, (s * 17 + kb) as u64);
                assert_eq!(radix(&v, kb), sorted(&v), "{dist:?} n={n} key_bytes={kb}");
            }
        }
    }
}

#[test]
fn radix_with_streaming_stores() {
    // Parallel passes over 2^20 entries or more write with streaming stores.
    for dist in [Dist::Random, Dist::Skewed, Dist::Arbitrary] {
        let v = generate(dist, 1_100_003, 10, 5);
        assert_eq!(radix(&v, 10), sorted(&v), "{dist:?}");
    }
}

#[test]
fn radix_hint_may_be_wrong() {
    // Keys span 10 bytes but the hint says 1, and the other way round.
    for dist in [Dist::Random, Dist::Skewed, Dist::FewKeysRandomLow] {
        let v = generate(dist, 100_000, 10, 3);
        for kb in [0, 1, 16, 40] {
            assert_eq!(radix(&v, kb), sorted(&v), "{dist:?} key_bytes={kb}");
        }
    }
}

#[test]
fn merge_every_distribution_and_size() {
    for dist in ALL_DISTS {
        for (s, &n) in SIZES.iter().enumerate() {
            let v = generate(dist, n, 10, s as u64);
            assert_eq!(merge(&v), sorted(&v), "{dist:?} n={n}");
        }
    }
}

#[test]
fn sort_entries_dispatches() {
    let v = generate(Dist::Random, 50_000, 10, 9);
    for method in [Method::Radix, Method::Merge] {
        let mut e = v.clone();
        let mut scratch = vec![0; v.len()];
        sort_entries(method, &mut e, &mut scratch, 10);
        assert_eq!(e, sorted(&v), "{method:?}");
    }
    assert_eq!(Method::default(), Method::Radix);
}

#[test]
fn odd_thread_counts() {
    for threads in [1, 3] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| {
            for dist in [Dist::Random, Dist::Skewed, Dist::Arbitrary] {
                let v = generate(dist, 200_001, 10, threads as u64);
                let expected = sorted(&v);
                assert_eq!(radix(&v, 10), expected, "radix {dist:?} threads={threads}");
                assert_eq!(merge(&v), expected, "merge {dist:?} threads={threads}");
            }
        });
    }
}

#[test]
#[should_panic(expected = "scratch must be as long as entries")]
fn radix_rejects_short_scratch() {
    radix_sort(&mut [3u128, 2, 1], &mut [0; 2], 8);
}

/// Entries whose key lives in the top `kb` bytes, drawn from `keys` values.
fn entries_strategy() -> impl Strategy<Value = (Vec<u128>, usize)> {
    (1usize..=16, 0usize..2000, 1u64..1000, any::<u64>(), 0usize..7)
        .prop_map(|(kb, n, _, seed, d)| (generate(ALL_DISTS[d], n, kb, seed), kb))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn radix_equals_sort_on_generated((v, kb) in entries_strategy()) {
        prop_assert_eq!(radix(&v, kb), sorted(&v));
    }

    #[test]
    fn radix_equals_sort_on_any_u128(v in prop::collection::vec(any::<u128>(), 0..1500), kb in 1usize..=16) {
        prop_assert_eq!(radix(&v, kb), sorted(&v));
    }

    #[test]
    fn radix_equals_sort_on_few_values(v in prop::collection::vec(prop::sample::select(vec![0u128, 1, 1 << 64, u128::MAX, u128::MAX - 1, 1 << 127]), 0..1500), kb in 1usize..=16) {
        prop_assert_eq!(radix(&v, kb), sorted(&v));
    }

    #[test]
    fn merge_equals_sort((v, _) in entries_strategy()) {
        prop_assert_eq!(merge(&v), sorted(&v));
    }

    #[test]
    fn sort_entries_equals_sort((v, kb) in entries_strategy(), merge_method in any::<bool>()) {
        let method = if merge_method { Method::Merge } else { Method::Radix };
        let mut e = v.clone();
        let mut scratch = vec![0; v.len()];
        sort_entries(method, &mut e, &mut scratch, kb);
        prop_assert_eq!(e, sorted(&v));
    }
}
