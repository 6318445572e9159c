//! Criterion benchmarks: `radix_sort`, `merge_sort` and rayon's
//! `par_sort_unstable` on 10M gensort-like entries (`key80 << 48 | index`,
//! random keys) and on a skewed set, plus `merge_sorted` of 8 runs.
//!
//! Each iteration copies the input into a buffer allocated once and times
//! only the sort, so page faults and input generation stay out of the
//! figures; scratch is allocated and touched once too, as the sorter does.
//! Run: `cargo bench -p xsort-kernels -- --warm-up-time 1 --measurement-time 5`.

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, SamplingMode, Throughput};
use rayon::slice::ParallelSliceMut;
use xsort_kernels::{merge_sort, merge_sorted, radix_sort};

const N: usize = 10_000_000;
const KEY_BYTES: usize = 10;

/// SplitMix64, so the data is the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A random 80-bit key, like gensort's 10-byte keys.
    fn key80(&mut self) -> u128 {
        ((u128::from(self.next()) << 64) | u128::from(self.next())) >> 48
    }
}

/// Entries as the sorter builds them: an 80-bit key, then a 48-bit index.
fn entries(keys: impl Iterator<Item = u128>) -> Vec<u128> {
    keys.enumerate().map(|(i, k)| (k << 48) | i as u128).collect()
}

/// Random keys.
fn random_set() -> Vec<u128> {
    let mut rng = Rng(1);
    entries((0..N).map(|_| rng.key80()))
}

/// Skewed keys: half share one hot key, 30% come from 256 warm keys that
/// differ only in their last byte, 20% are random.
fn skewed_set() -> Vec<u128> {
    let mut rng = Rng(2);
    let hot = rng.key80();
    let warm = rng.key80() & !0xFF;
    entries((0..N).map(|_| match rng.next() % 10 {
        0..=4 => hot,
        5..=7 => warm | u128::from(rng.next() as u8),
        _ => rng.key80(),
    }))
}

/// Times `sort` on a fresh copy of `input` per iteration.
fn time_sort(input: &[u128], iters: u64, mut sort: impl FnMut(&mut [u128], &mut [u128])) -> Duration {
    let mut work = input.to_vec();
    // Written once here so that page faults stay out of the timings.
    let mut scratch = vec![1u128; input.len()];
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        work.copy_from_slice(input);
        let start = Instant::now();
        sort(&mut work, &mut scratch);
        total += start.elapsed();
    }
    total
}

fn sorts(c: &mut Criterion) {
    let mut group = c.benchmark_group("sort_10M");
    // One sort per sample: a sort takes a large fraction of a second.
    group.sample_size(10).sampling_mode(SamplingMode::Flat);
    group.throughput(Throughput::Elements(N as u64));
    for (name, input) in [("random", random_set()), ("skewed", skewed_set())] {
        group.bench_function(BenchmarkId::new("radix_sort", name), |b| {
            b.iter_custom(|iters| time_sort(&input, iters, |e, s| radix_sort(e, s, KEY_BYTES)))
        });
        group.bench_function(BenchmarkId::new("merge_sort", name), |b| b.iter_custom(|iters| time_sort(&input, iters, merge_sort)));
        group.bench_function(BenchmarkId::new("par_sort_unstable", name), |b| {
            b.iter_custom(|iters| time_sort(&input, iters, |e, _| e.par_sort_unstable()))
        });
    }
    group.finish();
}

fn merges(c: &mut Criterion) {
    let mut group = c.benchmark_group("merge_10M");
    group.sample_size(10).sampling_mode(SamplingMode::Flat);
    group.throughput(Throughput::Elements(N as u64));
    let mut input = random_set();
    let runs: Vec<&[u128]> = input
        .chunks_mut(N / 8)
        .map(|r| {
            r.sort_unstable();
            &*r
        })
        .collect();
    let mut out = vec![1u128; N];
    group.bench_function("merge_sorted_8_runs", |b| b.iter(|| merge_sorted(&runs, &mut out)));
    group.finish();
}

criterion_group!(benches, sorts, merges);
criterion_main!(benches);
