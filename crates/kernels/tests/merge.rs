//! Property tests of the merging API: `LoserTree`, `merge_sorted` and
//! `equal_prefix_runs`, each against a naive reference.

mod common;

use common::{sorted, Rng};
use proptest::prelude::*;
use xsort_kernels::{equal_prefix_runs, merge_sorted, LoserTree};

/// Merges `sources` through a loser tree into (value, source) pairs.
fn tree_merge(sources: &[Vec<u64>]) -> Vec<(u64, usize)> {
    let mut pos = vec![0; sources.len()];
    let less = |pos: &[usize], i: usize, j: usize| match (sources[i].get(pos[i]), sources[j].get(pos[j])) {
        (Some(x), Some(y)) => x < y || (x == y && i < j),
        (Some(_), None) => true,
        (None, _) => false,
    };
    let mut tree = LoserTree::new(sources.len(), |i, j| less(&pos, i, j));
    assert_eq!(tree.len(), sources.len());
    let total: usize = sources.iter().map(Vec::len).sum();
    let mut out = Vec::with_capacity(total);
    for _ in 0..total {
        let w = tree.winner();
        out.push((sources[w][pos[w]], w));
        pos[w] += 1;
        tree.replay(|i, j| less(&pos, i, j));
    }
    // Every source is exhausted now, and the winner is one of them.
    assert!(pos.iter().zip(sources).all(|(&p, s)| p == s.len()));
    out
}

/// The reference: a stable sort of the concatenation tagged with source.
fn stable_reference(sources: &[Vec<u64>]) -> Vec<(u64, usize)> {
    let mut all: Vec<(u64, usize)> = sources.iter().enumerate().flat_map(|(s, v)| v.iter().map(move |&x| (x, s))).collect();
    all.sort_by_key(|&(x, _)| x);
    all
}

/// `k` sorted vectors of random lengths (some empty) over a small value
/// range, so ties across sources are common.
fn sorted_sources(rng: &mut Rng, k: usize, max_len: u64, values: u64) -> Vec<Vec<u64>> {
    (0..k)
        .map(|_| {
            let len = rng.below(max_len + 1) as usize;
            let mut v: Vec<u64> = (0..len).map(|_| rng.below(values)).collect();
            v.sort();
            v
        })
        .collect()
}

#[test]
fn loser_tree_merges_stably() {
    let mut rng = Rng::new(42);
    for k in [1, 2, 3, 7, 64] {
        for round in 0..20 {
            let sources = sorted_sources(&mut rng, k, 60, if round % 2 == 0 { 5 } else { 1000 });
            assert_eq!(tree_merge(&sources), stable_reference(&sources), "k={k}");
        }
    }
}

#[test]
fn loser_tree_all_sources_empty() {
    for k in [1, 2, 5] {
        let sources = vec![Vec::new(); k];
        assert_eq!(tree_merge(&sources), vec![]);
    }
}

fn merged(runs: &[Vec<u128>]) -> Vec<u128> {
    let refs: Vec<&[u128]> = runs.iter().map(Vec::as_slice).collect();
    let mut out = vec![0; refs.iter().map(|r| r.len()).sum()];
    merge_sorted(&refs, &mut out);
    out
}

fn sorted_runs(rng: &mut Rng, k: usize, max_len: u64, values: u64) -> Vec<Vec<u128>> {
    sorted_sources(rng, k, max_len, values).into_iter().map(|v| v.into_iter().map(|x| u128::from(x) << 80).collect()).collect()
}

#[test]
fn merge_sorted_large_runs_with_ties() {
    let mut rng = Rng::new(7);
    for k in [1, 2, 3, 8, 33] {
        for values in [3, 1 << 40] {
            let runs = sorted_runs(&mut rng, k, 400_000 / k as u64, values);
            let all: Vec<u128> = runs.concat();
            assert_eq!(merged(&runs), sorted(&all), "k={k} values={values}");
        }
    }
}

#[test]
fn merge_sorted_on_three_threads() {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
    let mut rng = Rng::new(8);
    let runs = sorted_runs(&mut rng, 5, 100_000, 50);
    let all: Vec<u128> = runs.concat();
    pool.install(|| assert_eq!(merged(&runs), sorted(&all)));
}

#[test]
fn merge_sorted_extreme_values() {
    let runs = vec![vec![0, u128::MAX, u128::MAX], vec![], vec![u128::MAX; 70_000], vec![0; 70_000]];
    let all: Vec<u128> = runs.concat();
    assert_eq!(merged(&runs), sorted(&all));
    assert_eq!(merged(&[]), Vec::<u128>::new());
}

#[test]
#[should_panic(expected = "out must hold every run")]
fn merge_sorted_rejects_wrong_output_length() {
    merge_sorted(&[&[1, 2]], &mut [0; 3]);
}

/// The reference: one linear scan comparing shifted prefixes.
fn naive_runs(entries: &[u128], bits: u32) -> Vec<std::ops::Range<usize>> {
    let prefix = |e: u128| {
        if bits == 0 {
            0
        } else {
            e >> (128 - bits.min(128))
        }
    };
    let mut runs = Vec::new();
    let mut start = 0;
    for i in 1..=entries.len() {
        if i == entries.len() || prefix(entries[i]) != prefix(entries[start]) {
            if i - start > 1 {
                runs.push(start..i);
            }
            start = i;
        }
    }
    runs
}

#[test]
fn equal_prefix_runs_large_parallel_input() {
    let mut rng = Rng::new(11);
    for groups in [1u64, 7, 5000, 1 << 30] {
        let v = sorted(&(0..400_000).map(|_| u128::from(rng.below(groups)) << 60 | u128::from(rng.next_u64())).collect::<Vec<_>>());
        for bits in [0, 8, 68, 100, 128] {
            assert_eq!(equal_prefix_runs(&v, bits), naive_runs(&v, bits), "groups={groups} bits={bits}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn loser_tree_equals_stable_sort(sources in prop::collection::vec(prop::collection::vec(0u64..20, 0..40), 1..70)) {
        let sources: Vec<Vec<u64>> = sources.into_iter().map(|mut v| { v.sort(); v }).collect();
        prop_assert_eq!(tree_merge(&sources), stable_reference(&sources));
    }

    #[test]
    fn merge_sorted_equals_sort(runs in prop::collection::vec(prop::collection::vec(prop::sample::select(vec![0u128, 5, 5 << 100, u128::MAX]), 0..300), 0..12)) {
        let runs: Vec<Vec<u128>> = runs.into_iter().map(|v| sorted(&v)).collect();
        prop_assert_eq!(merged(&runs), sorted(&runs.concat()));
    }

    #[test]
    fn equal_prefix_runs_equals_naive(v in prop::collection::vec(0u128..64, 0..500), spread in 0u32..122, bits in 0u32..=130) {
        let v = sorted(&v.iter().map(|&x| x << spread).collect::<Vec<_>>());
        prop_assert_eq!(equal_prefix_runs(&v, bits), naive_runs(&v, bits));
    }
}
