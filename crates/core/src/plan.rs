//! The memory plan: how the budget is split between the sort buffer, the entries, the write-behind
//! pool and, when the data does not fit, the merge's read-ahead buffers.
//!
//! Per record the sorter needs its bytes plus 32 bytes of entries (the entry and the radix sort's
//! scratch copy). Whatever the data, the output pool and per-file alignment slack come off the top.
//!
//! An input already in the page cache is not copied into the budget: a single regular file of
//! which at least half is cached (`reading::CACHED_ENOUGH`) is mapped read-only and sorted
//! from the mapping in one pass whenever its entries fit, whatever its size: the budget then counts
//! only what that path allocates and the write pool ([`MemoryPlan::mapped_fits`]). For records
//! that is 32 bytes a record (entry and scratch: one parallel sort), or, when those do not fit,
//! about 17 (the entry, and scratch for one sixteenth of them: sorted in batches, then merged);
//! for lines, 32 bytes a line (the line index). A 10 GB cached file of 100-byte records thus sorts
//! in one pass with 3.2 GB of entries, or 1.7 GB, and no copy. The pages of the mapping belong to
//! the page cache, not to the budget (they show in the peak RSS all the same), but they must stay
//! there: the sort gathers records from all over the mapping, and a page evicted meanwhile is read
//! again from the disk, one page at a time. So the file and the entries together must fit the
//! memory available now ([`fits_in_memory`]). When the entries do
//! not fit, or the input is anything else (several files, a stream, a file mostly on disk), the
//! plan below applies: chunks of records with their entries, spilled as runs when the data does
//! not fit.

use crate::config::IoSettings;
use crate::error::{Result, SortError};
use crate::limits::MemoryLimits;
use crate::size::format_bytes;
use xsort_io::{align_down, align_up, IO_ALIGN};

/// The smallest budget xsort works with; smaller requests are raised to it for the buffers, but a
/// chunk holds no more data than was asked for (see [`MemoryPlan::chunk_data_limit`]).
pub const MIN_BUDGET: u64 = 256 << 10;
/// The smallest chunk of data a plan sorts at once, however small the budget asked for.
const MIN_CHUNK_DATA: u64 = 1 << 10;
/// The largest budget a plan takes (4 EiB, beyond any machine): with budgets below it, no size the
/// plan derives (a few times the budget at most) can overflow 64 bits.
pub const MAX_BUDGET: u64 = 1 << 62;
/// Records the sort buffer holds at least, so that huge records still sort a few at a time.
pub const MIN_CHUNK_RECORDS: u64 = 4;
/// What the plan keeps beside the records of a minimal chunk: write pool and alignment slack.
const MIN_CHUNK_OVERHEAD: u64 = 64 << 10;
/// Bytes of entries per record: the entry and its scratch copy.
pub const ENTRY_BYTES_PER_RECORD: usize = 32;
/// Input files whose alignment slack the sort buffer reserves room for.
const MAX_SLACK_FILES: usize = 4;
/// Smallest budget for which files are transferred with O_DIRECT unless told otherwise. Below it,
/// write blocks shrink under 256 KiB (a sixteenth of the budget over 4 buffers), and the device's
/// latency on every direct transfer costs more than the page cache's copy: 4 KiB direct writes took
/// 1 ms each on the development VM, so a 2 MB sort under a 256 KiB budget took 1.2 s.
pub const MIN_DIRECT_BUDGET: u64 = 16 << 20;
/// Runs a spilled input of known size is cut into, when the budget allows larger ones (see
/// [`spill_chunks`]).
const SPILL_RUNS: u64 = 16;
/// Bounds of a spilled input's chunk when the budget allows larger ones.
const MIN_SPILL_CHUNK: u64 = 256 << 20;
const MAX_SPILL_CHUNK: u64 = 1 << 30;
/// Most blocks a run of a merge reads ahead of the one being consumed. With one, the reads of a
/// merge of a few runs are requested one at a time, as blocks are consumed; a second keeps requests
/// queued, so the read service keeps every one of its reads in flight, as the floor measures them.
pub const MAX_READ_AHEAD: usize = 2;
/// Smallest read-ahead buffer per run in a merge; below it, the fan-in shrinks instead.
pub const MIN_MERGE_BLOCK: usize = 16 << 10;

/// How the budget is spent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryPlan {
    /// The budget, after raising to [`MIN_BUDGET`] (and to a few records' worth for huge records).
    pub budget: u64,
    /// Most bytes of data (with their entries) one chunk holds: the budget asked for, even below
    /// [`MIN_BUDGET`] (at least 1 KiB). GNU's `-S` sizes the sort buffer so: `-S 1k` spills a
    /// 10 KB input in many runs, and its tests count on that to exercise temp files.
    pub chunk_data_limit: u64,
    /// Capacity of the sort buffer (records plus alignment slack).
    pub chunk_capacity: usize,
    /// Entries the sort buffer can hold.
    pub chunk_records: usize,
    /// Output (and run) write-behind block size and number of buffers.
    pub write_block: usize,
    /// Write-behind buffers.
    pub write_buffers: usize,
    /// Whether the known input fits in one chunk (one pass, no temp file).
    pub one_pass: bool,
    /// Chunks of records and entries a spilled sort of a known input holds: 2 when the budget has
    /// room for two (the next chunk is read while the last one's run is written), else 1.
    pub spill_buffers: usize,
    /// Most runs one merge may take, whatever the budget allows (GNU sort's `--batch-size`).
    pub max_fan_in: usize,
}

impl MemoryPlan {
    /// Plans a sort of `known_len` bytes (None: unknown, e.g. a pipe) of `record_size`-byte records
    /// from `files` inputs. A budget below [`MIN_BUDGET`] is raised to it; a budget too small for
    /// [`MIN_CHUNK_RECORDS`] records (see [`min_budget`]) is an error, not silently raised: the
    /// budget is the user's limit, and a record of gigabytes would otherwise take several times
    /// what was allowed.
    /// The plan is made before the sort and not changed after it: what only the sort finds out
    /// (the longest line) is given to the merge's calls.
    pub fn new(requested: u64, record_size: usize, known_len: Option<u64>, files: usize, out: IoSettings) -> Result<Self> {
        let budget = check_budget(requested, record_size)?;
        let chunk_data_limit = requested.clamp(MIN_CHUNK_DATA, budget);
        let write_buffers = out.count.clamp(2, 8);
        // Small budgets get small blocks so that the pool stays a small part of the budget.
        let write_block = align_up((out.transfer_size).min((budget / 16 / write_buffers as u64) as usize).max(IO_ALIGN));
        let pool = (write_block * write_buffers) as u64;
        // Alignment slack for the files one chunk holds; a chunk that runs out of slack just ends
        // early, so many small inputs under a tiny budget do not shrink the chunk to nothing.
        let slack = (files.clamp(1, MAX_SLACK_FILES) * crate::input::SLACK_PER_FILE) as u64;
        let for_chunk = budget.saturating_sub(pool + slack + IO_ALIGN as u64);
        let per_record = (record_size + ENTRY_BYTES_PER_RECORD) as u64;
        // A small budget asked for still takes a few records a chunk, as the raised one allows.
        let max_records = (for_chunk.min(chunk_data_limit.max(per_record * MIN_CHUNK_RECORDS)) / per_record).max(1);
        let mut spill_buffers = 1;
        let (records, one_pass) = match known_len {
            Some(len) if len / record_size as u64 <= max_records => (len / record_size as u64, true),
            Some(len) => {
                let (records, buffers) = spill_chunks(len, record_size, max_records, budget.saturating_sub(pool), out.transfer_size);
                spill_buffers = buffers;
                (records, false)
            }
            None => (max_records, false),
        };
        let chunk_records = records.max(1) as usize;
        let chunk_capacity = align_up(chunk_records * record_size) + slack as usize;
        Ok(MemoryPlan {
            budget,
            chunk_data_limit,
            chunk_capacity,
            chunk_records,
            write_block,
            write_buffers,
            one_pass,
            spill_buffers,
            max_fan_in: usize::MAX,
        })
    }

    /// This plan with merges of at most `max` runs (at least 2), when a most is given.
    pub fn with_max_fan_in(self, max: Option<usize>) -> Self {
        MemoryPlan { max_fan_in: max.map_or(self.max_fan_in, |m| m.max(2)), ..self }
    }

    /// Whether a one-pass sort from a mapping of the page cache that allocates `entry_bytes` of
    /// entries and scratch fits the budget with the write pool; the mapped input itself is not
    /// counted (see the module's doc).
    pub fn mapped_fits(&self, entry_bytes: u64) -> bool {
        let pool = (self.write_block * self.write_buffers) as u64;
        entry_bytes.checked_add(pool).is_some_and(|need| need <= self.budget)
    }

    /// Bytes the sort phase holds: the chunks with their entries, one chunk's scratch, and the
    /// output pool.
    pub fn sort_phase_bytes(&self) -> u64 {
        let chunk = self.chunk_capacity + self.chunk_records * ENTRY_BYTES_PER_RECORD / 2;
        (self.spill_buffers * chunk + self.chunk_records * ENTRY_BYTES_PER_RECORD / 2 + self.write_block * self.write_buffers) as u64
    }

    /// The merge's shape for `runs` runs whose longest record is `longest` bytes (the record size,
    /// or for lines the longest line read): the fan-in and the read-ahead block per run. Each run in
    /// a merge has two blocks (one being consumed, one being read), and its head record, when it
    /// straddles them, is assembled whole beside them: up to `longest` bytes per run. The blocks shrink, then the fan-in, to keep that within the budget; a merge needs
    /// two heads at least, so records too long for two to fit take it over the budget by two of
    /// them (and two smallest blocks), never by one per run. When the budget has room for a third
    /// full-size block per run, each run reads two blocks ahead ([`MAX_READ_AHEAD`]).
    pub fn merge_shape(&self, runs: usize, temp: IoSettings, longest: u64) -> MergeShape {
        let pool = (self.write_block * self.write_buffers) as u64;
        let for_runs = self.budget.saturating_sub(pool);
        let block_of =
            |room_per_run: u64| (align_down(room_per_run / 2) as usize).clamp(MIN_MERGE_BLOCK, temp.transfer_size.max(MIN_MERGE_BLOCK));
        if for_runs / 2 < (2 * MIN_MERGE_BLOCK as u64).saturating_add(longest) {
            // Not even two runs fit: two it is, with the budget's blocks and the two heads beyond.
            return MergeShape { fan_in: 2, block: block_of(for_runs / 2), depth: 1 };
        }
        // As many runs as fit with the smallest blocks, then the largest blocks those runs allow.
        let fits = for_runs / (2 * MIN_MERGE_BLOCK as u64 + longest);
        let fan_in = usize::try_from(fits).unwrap_or(usize::MAX).min(self.max_fan_in).clamp(2, runs.max(2));
        let room = (for_runs / fan_in as u64).saturating_sub(longest);
        let block = block_of(room);
        let depth = if block >= temp.transfer_size { (room / block as u64).saturating_sub(1).clamp(1, MAX_READ_AHEAD as u64) } else { 1 };
        MergeShape { fan_in, block, depth: depth as usize }
    }

    /// Bytes a merge of `fan_in` runs in blocks of `block` bytes read `depth` ahead holds at most:
    /// the write pool, the blocks of each run, and a head record of up to `longest` bytes assembled
    /// beside them per run.
    pub fn merge_bytes(&self, fan_in: usize, block: usize, depth: usize, longest: u64) -> u64 {
        let per_run = ((1 + depth as u64) * block as u64).saturating_add(longest);
        per_run.saturating_mul(fan_in as u64).saturating_add((self.write_block * self.write_buffers) as u64)
    }
}

/// Records per chunk of a known input of `len` bytes that does not fit the budget's `max_records`
/// and is spilled, and how many such chunks the sort holds (see [`MemoryPlan::spill_buffers`]).
///
/// A chunk is about a sixteenth of the input, between [`MIN_SPILL_CHUNK`] and [`MAX_SPILL_CHUNK`]
/// bytes, never so little that the merge (with `merge_room` bytes for two blocks per run) reads in
/// blocks smaller than `transfer` bytes, and never more than the budget holds. There are two of
/// them when the budget holds two such chunks of at least [`MIN_SPILL_CHUNK`]: one is read while
/// the other's run is written. (Under smaller budgets, two chunks of half the size made twice the
/// runs and measured no faster: 10^7 records under `-S 125M`, 4.4-5.1 s against 4.1-4.8 s.)
///
/// Why not the whole budget: a spilled sort reads and writes every byte twice whatever the size
/// of its runs, but the first touch of each byte of its buffers is paid once (and is costly on
/// virtual machines: 0.8-2 s a GiB on the development VM), and a large chunk delays the first run's
/// write. 10^8 records (10 GB) from disk, one chunk at a time, took 38.3 s under an 11.5 GiB budget
/// (2 runs, 11 GB of memory touched), 30.5 s under 1.25 GB (11 runs), 28.9 s under 625 MB (22 runs)
/// and 33.2 s under 100 MB (135 runs, whose merge reads 352 KiB blocks).
fn spill_chunks(len: u64, record_size: usize, max_records: u64, merge_room: u64, transfer: usize) -> (u64, usize) {
    let target = (len / SPILL_RUNS).clamp(MIN_SPILL_CHUNK, MAX_SPILL_CHUNK);
    // Runs this size leave each run of the merge two blocks of `transfer` bytes and its head record
    // (see [`MemoryPlan::merge_shape`]), with a page to spare for the rounding.
    let per_run = (2 * transfer as u64).saturating_add(record_size as u64 + IO_ALIGN as u64);
    let most_runs = (merge_room / per_run).max(1);
    let full_blocks = len.div_ceil(most_runs).saturating_add(record_size as u64);
    let records = (target.max(full_blocks) / record_size as u64).max(1);
    let smallest = (MIN_SPILL_CHUNK.max(full_blocks) / record_size as u64).max(1);
    if records.saturating_mul(2) <= max_records {
        (records, 2)
    } else if max_records / 2 >= smallest {
        (max_records / 2, 2)
    } else {
        (records.min(max_records), 1)
    }
}

/// Whether a mapped input of `len` bytes and `entry_bytes` of entries fit the memory this process
/// may use now ([`crate::limits::MemoryLimits::usable`]: `MemAvailable`, which counts the input's
/// own cached pages as free to take, and the room of its memory cgroup, which the mapping's pages
/// are charged to: the mapping needs them all and the entries beside them, so the sum must fit;
/// see the module's doc).
pub fn fits_in_memory(len: u64, entry_bytes: u64) -> bool {
    len.checked_add(entry_bytes).is_some_and(|need| need <= MemoryLimits::read().usable().0)
}

/// The smallest budget that sorts `record_size`-byte records: [`MIN_CHUNK_RECORDS`] records with
/// their entries, and the write pool and slack beside them (never less than [`MIN_BUDGET`]). None
/// when that exceeds [`MAX_BUDGET`]: no machine has it, and the sizes derived from it would
/// overflow.
pub fn min_budget(record_size: usize) -> Option<u64> {
    let per_record = (record_size as u64).checked_add(ENTRY_BYTES_PER_RECORD as u64)?;
    let floor = per_record.checked_mul(MIN_CHUNK_RECORDS)?.checked_add(MIN_CHUNK_OVERHEAD)?.max(MIN_BUDGET);
    (floor <= MAX_BUDGET).then_some(floor)
}

/// The budget a plan uses for `requested` (raised to [`MIN_BUDGET`], at most [`MAX_BUDGET`]), or an
/// error when it cannot hold [`MIN_CHUNK_RECORDS`] records of `record_size` bytes.
pub fn check_budget(requested: u64, record_size: usize) -> Result<u64> {
    let budget = requested.clamp(MIN_BUDGET, MAX_BUDGET);
    match min_budget(record_size) {
        Some(floor) if floor <= budget => Ok(budget),
        floor => Err(SortError::RecordTooLarge { record_size, floor, budget }),
    }
}

/// Why `what` (e.g. "--record-size=4294967296") cannot sort under `budget`, given the
/// [`min_budget`] of its records (None: none fits).
pub fn record_too_large(what: &str, floor: Option<u64>, budget: u64) -> String {
    match floor {
        Some(f) => format!(
            "{what} need a memory budget of at least {} ({MIN_CHUNK_RECORDS} records and their sort entries), more than the budget of {}",
            format_bytes(f),
            format_bytes(budget)
        ),
        None => format!("{what} are too large: {MIN_CHUNK_RECORDS} of them exceed the largest memory budget, {}", format_bytes(MAX_BUDGET)),
    }
}

/// Share of the usable memory taken when no budget is given.
pub const DEFAULT_BUDGET_PERCENT_OF_AVAILABLE: u64 = 50;

/// Share of the usable memory a requested budget is clamped to.
const MOST_BUDGET_PERCENT_OF_USABLE: u64 = 90;

/// A memory budget and where it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Budget {
    /// The budget in bytes.
    pub bytes: u64,
    /// Why this budget, for `--stats` (e.g. "50% of the memory cgroup's limit less its use (1.0
    /// GiB)", "-S 64M").
    pub basis: String,
    /// A warning when a request had to be clamped.
    pub warning: Option<String>,
}

/// The budget for a requested size (None: 50% of the memory this process may use now, see
/// `DEFAULT_BUDGET_PERCENT_OF_AVAILABLE`). A percentage (`-S 25%`) is of the most memory the process may ever
/// hold (physical memory, its cgroup's limit, `RLIMIT_AS`), and a request beyond 90% of what it may
/// use now is clamped there with a warning: a budget the cgroup cannot give gets the sort killed.
pub fn resolve_budget(requested: Option<crate::size::MemorySize>) -> Budget {
    resolve_budget_within(requested, &MemoryLimits::read())
}

fn resolve_budget_within(requested: Option<crate::size::MemorySize>, limits: &MemoryLimits) -> Budget {
    let (usable, bound) = limits.usable();
    let Some(req) = requested else {
        return Budget {
            bytes: percent_of(usable, DEFAULT_BUDGET_PERCENT_OF_AVAILABLE),
            basis: format!("{DEFAULT_BUDGET_PERCENT_OF_AVAILABLE}% of {} ({})", bound.describe(), format_bytes(usable)),
            warning: None,
        };
    };
    let (ceiling, ceiling_bound) = limits.ceiling();
    let bytes = req.to_bytes(ceiling);
    let requested = match req {
        crate::size::MemorySize::PercentOfRam(p) => format!("{p}% of {} ({})", ceiling_bound.describe_limit(), format_bytes(ceiling)),
        crate::size::MemorySize::Bytes(b) => format!("{} as requested", format_bytes(b)),
    };
    let most = percent_of(usable, MOST_BUDGET_PERCENT_OF_USABLE);
    if bytes > most {
        let warning = format!(
            "memory budget {} exceeds {} ({}); using {}",
            format_bytes(bytes),
            bound.describe(),
            format_bytes(usable),
            format_bytes(most)
        );
        let basis = format!("{requested}, clamped to {MOST_BUDGET_PERCENT_OF_USABLE}% of {} ({})", bound.describe(), format_bytes(usable));
        return Budget { bytes: most, basis, warning: Some(warning) };
    }
    Budget { bytes, basis: requested, warning: None }
}

/// `percent`% of `bytes`, rounded down (without overflow).
fn percent_of(bytes: u64, percent: u64) -> u64 {
    (bytes as u128 * percent as u128 / 100) as u64
}

/// How runs are merged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MergeShape {
    /// Most runs merged at once.
    pub fan_in: usize,
    /// Read-ahead block per run.
    pub block: usize,
    /// Blocks each run has requested beyond the one being consumed.
    pub depth: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gigabyte_fits_in_two_gigabytes() {
        let p = MemoryPlan::new(2 << 30, 100, Some(1_000_000_000), 1, IoSettings::default()).unwrap();
        assert!(p.one_pass);
        assert_eq!(p.chunk_records, 10_000_000);
        assert!(p.sort_phase_bytes() <= 2 << 30);
    }

    #[test]
    fn a_cached_input_counts_only_its_entries() {
        // 10 GB of 100-byte records: 3.2 GB of entries and scratch, far more data than the budget.
        let p = MemoryPlan::new(4 << 30, 100, Some(10_000_000_000), 1, IoSettings::default()).unwrap();
        assert!(!p.one_pass, "the data does not fit");
        assert!(p.mapped_fits(3_200_000_000), "the entries do: {p:?}");
        let p = MemoryPlan::new(3 << 30, 100, Some(10_000_000_000), 1, IoSettings::default()).unwrap();
        assert!(!p.mapped_fits(3_200_000_000), "3.2 GB of entries exceed 3 GiB");
        assert!(!p.mapped_fits(u64::MAX), "never wraps");
        // The mapping and the entries must also fit the memory there is.
        assert!(fits_in_memory(1 << 20, 1 << 20));
        assert!(!fits_in_memory(MemoryLimits::read().physical + 1, 0), "a file larger than the machine's memory is read, not mapped");
        assert!(!fits_in_memory(u64::MAX, 1), "never wraps");
    }

    #[test]
    fn budgets_follow_the_memory_the_process_may_use() {
        use crate::limits::{MemoryLimits, Room};
        use crate::size::MemorySize;
        let host = MemoryLimits { physical: 16 << 30, available: 12 << 30, cgroup: None, address_space: None };
        let boxed = MemoryLimits { cgroup: Some(Room { limit: 1 << 30, room: 800 << 20 }), ..host };
        let default = resolve_budget_within(None, &boxed);
        assert_eq!(default.bytes, 400 << 20);
        assert_eq!(default.basis, "50% of the memory cgroup's limit less its use (800 MiB)");
        assert_eq!(resolve_budget_within(None, &host).bytes, 6 << 30);
        // A percentage is of the most the process may hold: the cgroup's limit, not the host's.
        let quarter = resolve_budget_within(Some(MemorySize::PercentOfRam(25.0)), &boxed);
        assert_eq!((quarter.bytes, quarter.warning), (256 << 20, None));
        assert_eq!(quarter.basis, "25% of the memory cgroup's limit (1 GiB)");
        // A request the cgroup cannot give is clamped, with a warning naming the limit.
        let big = resolve_budget_within(Some(MemorySize::Bytes(4 << 30)), &boxed);
        assert_eq!(big.bytes, 720 << 20);
        assert_eq!(
            big.warning.as_deref(),
            Some("memory budget 4 GiB exceeds the memory cgroup's limit less its use (800 MiB); using 720 MiB")
        );
        let fits = resolve_budget_within(Some(MemorySize::Bytes(64 << 20)), &boxed);
        assert_eq!((fits.bytes, fits.warning, fits.basis.as_str()), (64 << 20, None, "64 MiB as requested"));
    }

    #[test]
    fn eighth_of_the_data_spills_with_a_single_level_merge() {
        let p = MemoryPlan::new(125_000_000, 100, Some(1_000_000_000), 1, IoSettings::default()).unwrap();
        assert!(!p.one_pass);
        assert!(p.sort_phase_bytes() <= 125_000_000);
        let runs = 1_000_000_000usize.div_ceil(p.chunk_records * 100);
        let m = p.merge_shape(runs, IoSettings::default(), 100);
        assert!(m.fan_in >= runs, "{m:?} for {runs} runs");
        assert!(m.block >= 1 << 20, "{m:?}");
        assert_eq!(m.depth, 1, "no room for a third block: {m:?}");
        assert!(p.merge_bytes(m.fan_in, m.block, m.depth, 100) <= p.budget, "{m:?}");
    }

    #[test]
    fn a_merge_with_room_reads_two_blocks_ahead_within_the_budget() {
        // 16 runs of 10 GB under 11.5 GiB: full 8 MiB blocks, two read ahead per run.
        let p = MemoryPlan::new(11_500 << 20, 100, Some(10_000_000_000), 1, IoSettings::default()).unwrap();
        let m = p.merge_shape(16, IoSettings::default(), 100);
        assert_eq!((m.fan_in, m.block, m.depth), (16, 8 << 20, 2));
        assert!(p.merge_bytes(m.fan_in, m.block, m.depth, 100) <= p.budget);
        // Room for exactly two full blocks a run: one ahead.
        let room = 16 * (2 * (8 << 20) + 100 + 4096) + (p.write_block * p.write_buffers) as u64;
        let p = MemoryPlan { budget: room, ..p };
        assert_eq!(p.merge_shape(16, IoSettings::default(), 100).depth, 1);
    }

    #[test]
    fn a_large_budget_spills_a_sixteenth_at_a_time() {
        // 10 GB under 11.5 GiB: sixteen runs of 625 MB, two chunks held, not one of 9.3 GB and a
        // second run of the rest.
        let p = MemoryPlan::new(11_500 << 20, 100, Some(10_000_000_000), 1, IoSettings::default()).unwrap();
        assert!(!p.one_pass);
        assert_eq!((p.chunk_records, p.spill_buffers), (6_250_000, 2));
        assert!(p.sort_phase_bytes() < 1_600_000_000, "{p:?}");
        // A budget that holds two chunks of 256 MiB but not two of 625 MB halves what it holds.
        let p = MemoryPlan::new(1_250_000_000, 100, Some(10_000_000_000), 1, IoSettings::default()).unwrap();
        assert_eq!(p.spill_buffers, 2);
        assert!(p.chunk_records > 4_000_000 && p.sort_phase_bytes() <= 1_250_000_000, "{p:?}");
        // Smaller budgets keep one chunk of what they hold; a small input spilled keeps 256 MiB.
        let small = MemoryPlan::new(500 << 20, 100, Some(10_000_000_000), 1, IoSettings::default()).unwrap();
        assert_eq!(small.spill_buffers, 1);
        assert!(small.chunk_records < 4_000_000 && small.sort_phase_bytes() <= 500 << 20, "{small:?}");
        let p = MemoryPlan::new(1 << 30, 100, Some(2_000_000_000), 1, IoSettings::default()).unwrap();
        assert_eq!((p.chunk_records, p.spill_buffers), ((256 << 20) / 100, 2));
        // Runs never so many that the merge's blocks shrink below the transfer size: 1 TB under
        // 6 GiB is cut into runs of about 2.6 GB, not 1 GiB.
        let p = MemoryPlan::new(6 << 30, 100, Some(1_000_000_000_000), 1, IoSettings::default()).unwrap();
        let runs = 1_000_000_000_000u64.div_ceil(p.chunk_records as u64 * 100) as usize;
        assert_eq!(p.merge_shape(runs, IoSettings::default(), 100).block, 8 << 20, "{runs} runs");
    }

    #[test]
    fn huge_records_need_a_budget_that_holds_a_few() {
        let floor = min_budget(1_000_000).unwrap();
        assert!((4_000_000..5_000_000).contains(&floor), "{floor}");
        let e = MemoryPlan::new(256 << 10, 1_000_000, Some(10_000_000), 1, IoSettings::default()).unwrap_err().to_string();
        assert_eq!(e, "records of 1000000 bytes need a memory budget of at least 3.9 MiB (4 records and their sort entries), more than the budget of 256 KiB");
        let p = MemoryPlan::new(floor, 1_000_000, Some(10_000_000), 1, IoSettings::default()).unwrap();
        assert!(p.chunk_records >= 2);
        assert!(p.sort_phase_bytes() <= p.budget, "{p:?}");
    }

    #[test]
    fn absurd_record_sizes_never_wrap() {
        for r in [usize::MAX, usize::MAX - 31, usize::MAX / 4, 18_446_744_073_709_550_000, 1 << 62] {
            assert_eq!(min_budget(r), None, "{r}");
            let e = MemoryPlan::new(u64::MAX, r, None, 1, IoSettings::default()).unwrap_err().to_string();
            assert!(e.contains("too large"), "{e}");
        }
        // A budget beyond any machine is taken as the largest, and the plan's sizes stay in range.
        let p = MemoryPlan::new(u64::MAX, 1 << 40, Some(u64::MAX), 1, IoSettings::default()).unwrap();
        assert_eq!(p.budget, MAX_BUDGET);
        assert!(p.sort_phase_bytes() <= MAX_BUDGET + (64 << 20), "{p:?}");
    }

    #[test]
    fn long_records_shrink_the_fan_in_and_exceed_the_budget_by_two_at_most() {
        let p = MemoryPlan::new(64 << 20, 1, None, 1, IoSettings::default()).unwrap();
        let short = p.merge_shape(10, IoSettings::default(), 1);
        assert!(short.fan_in >= 9, "{short:?}");
        for longest in [1u64 << 20, 20 << 20, 50 << 20, 1 << 40] {
            let m = p.merge_shape(10, IoSettings::default(), longest);
            // Lines that fit beside the blocks shrink the blocks; longer ones, the fan-in.
            assert!(m.fan_in >= 2 && (longest < 8 << 20 || m.fan_in < short.fan_in), "{longest}: {m:?}");
            let over = if longest < 30 << 20 { 0 } else { 2 * longest };
            assert!(p.merge_bytes(m.fan_in, m.block, m.depth, longest) <= p.budget + over, "{longest}: {m:?}");
        }
        assert_eq!(p.merge_shape(10, IoSettings::default(), 50 << 20).fan_in, 2, "50 MiB lines under 64 MiB");
        // Short records: one merge takes every run that the budget's blocks allow, as before.
        for runs in [2, 7, 8, 9, 31] {
            assert_eq!(p.merge_shape(runs, IoSettings::default(), 8).fan_in, runs, "{runs} runs of short lines");
        }
    }

    #[test]
    fn tiny_budget_still_plans() {
        let p = MemoryPlan::new(1, 100, None, 3, IoSettings::default()).unwrap();
        assert_eq!(p.budget, MIN_BUDGET);
        assert!(p.chunk_records >= 1);
        assert!(p.sort_phase_bytes() <= MIN_BUDGET + 4096);
        let m = p.merge_shape(1000, IoSettings::default(), 100);
        assert!(m.fan_in >= 2 && m.fan_in < 1000);
        assert_eq!(m.block % IO_ALIGN, 0);
    }
}
