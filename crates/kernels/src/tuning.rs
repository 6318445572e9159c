//! Every tunable of the kernels in one place (the ips4o habit), so that a
//! benchmark run can be repeated after changing a single file.
//!
//! The figures were chosen on the 2-core development machine (see the crate
//! README); they are about cache sizes and task overheads, not about the
//! data, so they should carry over to other x86-64 machines.

/// Thresholds of the radix sort. A value rather than bare constants so the
/// unit tests can shrink them and drive the parallel code paths with small
/// inputs.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RadixConfig {
    /// Buckets with at most this many entries are finished by insertion
    /// sort alone; after a wide pass (below), children up to this size are
    /// left to the bucket's final insertion sort rather than recursed into.
    pub small_sort: usize,
    /// Buckets with at most this many entries (under 1 MiB: they fit in the
    /// L2 cache) take one wide-digit pass straight into the output and
    /// finish with one insertion sort, instead of a call per child. At most
    /// 65,535: the pass counts in u16.
    pub small_bucket: usize,
    /// The widest digit of that pass, at most 14: 16,384 u16 counters
    /// (32 KiB) still fit in a 48 KiB L1 data cache. 12 bits measured about
    /// 25% slower on 10M random entries (children of ~10 entries instead of
    /// ~2.4 leave more work to the insertion sort).
    pub small_digit_bits: u32,
    /// Buckets with at least this many entries run their histogram and
    /// scatter on several threads; smaller ones are one sequential task.
    pub par_pass: usize,
    /// A bucket with at least this many entries hands its 256 children to
    /// rayon as separate tasks; below it, spawning costs more than sorting.
    pub par_children: usize,
    /// Parallel passes over at least this many entries (far beyond the L2
    /// cache) write their output with streaming stores.
    pub streaming: usize,
    /// Smallest chunk one thread histograms and scatters in a parallel pass.
    pub min_chunk: usize,
    /// Chunks per thread in a parallel pass: more than one lets work
    /// stealing even out threads that were busy elsewhere.
    pub chunks_per_thread: usize,
}

impl RadixConfig {
    /// The production setting.
    pub const DEFAULT: RadixConfig = RadixConfig {
        small_sort: 48,
        small_bucket: 60_000,
        small_digit_bits: 14,
        par_pass: 1 << 17,
        par_children: 1 << 16,
        streaming: 1 << 20,
        min_chunk: 1 << 15,
        chunks_per_thread: 2,
    };
}

// The wide pass counts in u16.
const _: () = assert!(RadixConfig::DEFAULT.small_bucket <= u16::MAX as usize);

/// Inputs shorter than this are merged by one thread: co-ranking and task
/// spawning cost more than they save.
pub(crate) const PAR_MERGE_MIN: usize = 1 << 15;

/// Output parts per thread in a parallel merge, for load balance.
pub(crate) const MERGE_PARTS_PER_THREAD: usize = 4;

/// Inputs shorter than this are sorted by one thread in `merge_sort`.
pub(crate) const PAR_MERGE_SORT_MIN: usize = 1 << 14;

/// Slices at least this long are checked for sortedness, copied and scanned
/// for equal-prefix runs on several threads.
pub(crate) const PAR_SCAN_MIN: usize = 1 << 17;
