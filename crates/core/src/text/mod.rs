//! Sorting text lines: the engine of fixed-size records, with lines as records.
//!
//! Lines are read in chunks ([`reader`]) or, for a single file that fits, mapped; then indexed and
//! sorted in memory ([`chunk`]): each line's entry holds a 64-bit prefix of its order (from
//! [`RecordOrder::prefix`]) and its place, the kernel sorts the entries, and groups of equal
//! prefixes are refined key by key. The kernel hands the sorted entries over in pieces, and each
//! piece is written while the next is sorted. When all the input fits one chunk, the pieces go
//! straight to the output; otherwise each chunk becomes a run on temp space and the runs are merged
//! by the same merge as records ([`crate::merge`]), with lines as delimited records. `-m` merges the
//! inputs themselves as runs; `-c` checks ([`check`]).

pub mod check;
pub mod chunk;
pub mod reader;

use crate::compress::Compressor;
use crate::config::{Input, IoSettings, Output};
use crate::error::{Result, SortError};
use crate::fold::{FoldSink, Folding};
use crate::framing::{Framing, RecordOrder};
use crate::merge::{merge_runs, MergeJob, MergeReport};
use crate::output::{sort_while_writing, Destination};
use crate::plan::MemoryPlan;
use crate::runs::{RecordSink, Run, TempStore};
use crate::size::format_bytes;
use crate::stats::{peak_rss_bytes, phases_of, process_cpu, Sampler, SortCounters, SortStats};
use chunk::{ensure_capacity, gather, sort_and_locate, Chunk, BYTES_PER_LINE, MAX_CHUNK_BYTES};
use reader::LineReader;
use std::cmp::Ordering;
use std::path::PathBuf;
use std::sync::atomic::Ordering as AtomicOrdering;
use std::sync::Arc;
use xsort_io::{epoch, AlignedBuf, BlockWriter, MappedFile, ReadService, TempSpace};
use xsort_kernels::Method;

/// What to do with the lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextMode {
    /// Sort them.
    Sort,
    /// Merge inputs that are already sorted (`-m`).
    Merge,
}

/// A sort of text lines; see the CLI's `--help` for the meaning of each setting.
#[derive(Clone, Debug)]
pub struct TextConfig {
    /// Inputs, read in order (ties keep this order).
    pub inputs: Vec<Input>,
    /// The output.
    pub output: Output,
    /// Line terminator: `\n`, or NUL with `-z`.
    pub terminator: u8,
    /// Sort or merge.
    pub mode: TextMode,
    /// Output only the first of each run of equal lines (`-u`).
    pub unique: bool,
    /// Memory budget in bytes.
    pub memory_budget: u64,
    /// Worker threads; the sort starts them itself (see `pool`).
    pub threads: usize,
    /// Most runs merged at once (`--batch-size`), if limited.
    pub max_fan_in: Option<usize>,
    /// Directories for temp runs.
    pub temp_dirs: Vec<PathBuf>,
    /// In-memory kernel.
    pub method: Method,
    /// Output transfers.
    pub output_io: IoSettings,
    /// Temp-file transfers.
    pub temp_io: IoSettings,
    /// fsync the output file and its directory before returning.
    pub sync: bool,
    /// GNU sort's `--compress-program`: temp runs are stored through it.
    pub compress_program: Option<String>,
}

impl TextConfig {
    /// A configuration with defaults for everything but the essentials.
    pub fn new(inputs: Vec<Input>, output: Output, memory_budget: u64) -> Self {
        TextConfig {
            inputs,
            output,
            terminator: b'\n',
            mode: TextMode::Sort,
            unique: false,
            memory_budget,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            max_fan_in: None,
            temp_dirs: vec![std::env::temp_dir()],
            method: Method::Radix,
            output_io: IoSettings::default(),
            temp_io: IoSettings::default(),
            sync: false,
            compress_program: None,
        }
    }
}

/// Sorts (or merges) text lines by an order.
pub struct LineSorter<O: RecordOrder> {
    cfg: TextConfig,
    order: O,
    counters: Arc<SortCounters>,
    /// The longest line indexed so far, without its terminator.
    longest_line: std::sync::atomic::AtomicU64,
    /// The most a chunk held: its lines, their bookkeeping, and what the reader held beside them.
    largest_chunk: std::sync::atomic::AtomicU64,
}

/// The reusable memory of the sort phase: the entries and the kernel's scratch (which then lays
/// out the output), grown as chunks need.
struct Workspace {
    entries: AlignedBuf,
    scratch: AlignedBuf,
}

impl Workspace {
    fn new() -> Result<Self> {
        Ok(Workspace { entries: AlignedBuf::new(4096)?, scratch: AlignedBuf::new(4096)? })
    }
}

impl<O: RecordOrder> LineSorter<O> {
    /// A sorter of `cfg`'s lines by `order`.
    pub fn new(cfg: TextConfig, order: O) -> Self {
        LineSorter { cfg, order, counters: Arc::default(), longest_line: Default::default(), largest_chunk: Default::default() }
    }

    /// The sort's configuration.
    pub fn config(&self) -> &TextConfig {
        &self.cfg
    }

    /// The sort's configuration, to change before it runs.
    pub(crate) fn config_mut(&mut self) -> &mut TextConfig {
        &mut self.cfg
    }

    /// Live counters, for a progress display.
    pub fn counters(&self) -> Arc<SortCounters> {
        self.counters.clone()
    }

    /// Runs the sort or merge on worker threads of its own (`threads` of its config). On error
    /// nothing is left at the output path and no temp file remains.
    pub fn run(&self) -> Result<SortStats> {
        crate::pool::run_in_pool(self.cfg.threads, || self.drive())
    }

    /// The sort, on its pool's driver thread.
    fn drive(&self) -> Result<SortStats> {
        let cfg = &self.cfg;
        let t0 = epoch().elapsed().as_secs_f64();
        let cpu0 = process_cpu();
        // Checks every input before anything is written.
        let mut reader = LineReader::new(&cfg.inputs, cfg.terminator, self.counters.input.clone())?;
        // The temp directories too, as for records: a bad -T is refused even by a sort that would
        // fit in memory (GNU sort notices only when it spills), so a command that works on small
        // inputs does not fail later on big ones.
        let temp = TempSpace::new(cfg.temp_dirs.clone(), cfg.temp_io.direct)?;
        let dest = Destination::open(&cfg.output, cfg.output_io, &cfg.temp_dirs)?;
        let mut plan = MemoryPlan::new(cfg.memory_budget, 1, reader.known_len(), cfg.inputs.len(), cfg.output_io)?;
        self.counters.input_total.store(reader.known_len().unwrap_or(0), AtomicOrdering::Relaxed);
        let sampler = Sampler::start(self.counters.clone());
        let mut store = TempStore::new(temp, cfg.temp_io, self.counters.temp_write.clone());
        store.compress_with(cfg.compress_program.clone().map(Compressor::new));
        let (lines, runs) = match cfg.mode {
            TextMode::Sort => self.form_runs(&plan, &mut reader, &mut store, &dest)?,
            TextMode::Merge => (0, Some(self.input_runs(&mut reader, &mut store)?)),
        };
        // The merge holds up to one line per run: it plans for the longest line sorted.
        plan.longest_record = self.longest_line.load(AtomicOrdering::Relaxed).max(1);
        sampler.mark();
        let run_count = runs.as_ref().map_or(0, |r| r.len() as u64);
        let (lines, merge) = match runs {
            None => (lines, MergeReport::default()),
            Some(runs) => self.merge(&plan, runs, &mut store, &dest)?,
        };
        dest.commit(cfg.sync)?;
        let samples = sampler.finish();
        Ok(self.stats(t0, cpu0, &plan, lines, run_count, merge, samples))
    }

    /// Makes the entries of one chunk of whole lines in `ws` and returns how many lines it has;
    /// None when they are so many that their bookkeeping with the chunk's bytes exceeds `limit`.
    fn index_chunk(&self, chunk: Chunk, limit: usize, ws: &mut Workspace) -> Result<Option<usize>> {
        let Some((n, longest)) = chunk.make_entries(&self.order, &mut ws.entries, limit)? else {
            return Ok(None);
        };
        self.longest_line.fetch_max(longest as u64, AtomicOrdering::Relaxed);
        ensure_capacity(&mut ws.scratch, n * 16)?;
        Ok(Some(n))
    }

    /// Sorts the `n` indexed lines of `chunk` and writes them through `writer`, each piece as soon
    /// as it is sorted (see [`sort_and_locate`]); returns the bytes written.
    fn sort_and_write(&self, chunk: Chunk, n: usize, ws: &mut Workspace, writer: &mut BlockWriter) -> Result<u64> {
        let (order, method, unique) = (&self.order, self.cfg.method, self.cfg.unique);
        let (entries, scratch) = (&mut ws.entries.as_u128_mut()[..n], &mut ws.scratch.as_u128_mut()[..n]);
        let mut out = RecordSink::new(writer);
        sort_while_writing(
            |emit| sort_and_locate(order, method, unique, chunk, entries, scratch, |locs, len| emit((locs, len))),
            |(locs, len)| out.push_with(len, |from, dst| gather(chunk.data, locs, from, dst)),
        )?;
        out.flush()?;
        Ok(out.written())
    }

    /// A single regular input that fits in memory and ends with a terminator, mapped rather than
    /// read; None when the input is anything else.
    fn map_single_input(&self, reader: &mut LineReader, limit: usize) -> Result<Option<(MappedFile, PathBuf)>> {
        let Some((file, len, path)) = reader.single_regular()? else { return Ok(None) };
        if len == 0 || len as usize > limit {
            return Ok(None);
        }
        // A refused mapping is read instead.
        let Some(map) = MappedFile::map(file, len, &path)? else { return Ok(None) };
        let data = map.as_slice();
        Ok((data.last() == Some(&self.cfg.terminator)).then_some((map, path)))
    }

    /// Reads chunk after chunk, sorting each: a single chunk holding all the input goes straight to
    /// the output (runs: None), otherwise each becomes a run.
    fn form_runs(
        &self,
        plan: &MemoryPlan,
        reader: &mut LineReader,
        store: &mut TempStore,
        dest: &Destination,
    ) -> Result<(u64, Option<Vec<Run>>)> {
        let cfg = &self.cfg;
        let pool = (plan.write_block * plan.write_buffers) as u64;
        let limit = plan.budget.saturating_sub(pool).max(64 << 10) as usize;
        // The output's size is known unless -u drops lines; it is preallocated when known.
        let write_out = |ws: &mut Workspace, chunk: Chunk, n: usize| -> Result<()> {
            let size = (!cfg.unique).then_some(chunk.data.len() as u64);
            let mut w = dest.writer(plan.write_block, plan.write_buffers, cfg.output_io, size, true, self.counters.output.clone())?;
            self.sort_and_write(chunk, n, ws, &mut w)?;
            w.finish()?;
            Ok(())
        };
        let mut ws = Workspace::new()?;
        let started = std::time::Instant::now();
        if let Some((map, path)) = self.map_single_input(reader, limit)? {
            let data = map.as_slice();
            // A file that shrank while mapped reads as zeros past its new end (see xsort_io::sigbus):
            // that is an error, found after each pass over the mapping and before any commit.
            let intact = || if map.intact() { Ok(()) } else { Err(crate::input::shrank(&path, data.len() as u64)) };
            // Lines so short that their bookkeeping overflows the budget take the chunked path.
            let chunk = Chunk { data, terminator: cfg.terminator };
            if let Some(n) = self.index_chunk(chunk, limit, &mut ws)? {
                self.largest_chunk.fetch_max((data.len() + n * BYTES_PER_LINE) as u64, AtomicOrdering::Relaxed);
                intact()?;
                self.counters.input.record(data.len() as u64, started, false);
                write_out(&mut ws, chunk, n)?;
                intact()?;
                return Ok((n as u64, None));
            }
        }
        let expected = reader.known_len().map_or(limit, |n| (n as usize).saturating_add(cfg.inputs.len() + 1));
        let mut data_buf = AlignedBuf::new(expected.min(limit).max(4096))?;
        // A chunk's lines and bookkeeping leave room for what the reader holds beyond them.
        let room = limit.saturating_sub(reader::read_slack(data_buf.capacity())).max(limit / 2);
        let mut runs = Vec::new();
        let mut total = 0u64;
        loop {
            let filled =
                reader.fill(&mut data_buf, |bytes, lines| bytes + lines * BYTES_PER_LINE >= room || bytes >= MAX_CHUNK_BYTES / 2)?;
            let chunk = Chunk { data: &data_buf.as_slice()[..filled], terminator: cfg.terminator };
            // The fill stops at the budget, so the bookkeeping fits (a single huge line aside).
            let n = self.index_chunk(chunk, usize::MAX, &mut ws)?.ok_or_else(|| SortError::Internal("chunk over budget".into()))?;
            let held = filled + n * BYTES_PER_LINE + reader::read_slack(data_buf.capacity());
            self.largest_chunk.fetch_max(held as u64, AtomicOrdering::Relaxed);
            total += n as u64;
            if runs.is_empty() && reader.exhausted() {
                write_out(&mut ws, chunk, n)?;
                return Ok((total, None));
            }
            if n > 0 {
                self.counters.spilled.store(true, AtomicOrdering::Relaxed);
                // The run's extent is reserved for every line; -u may leave it shorter.
                let (mut run, mut w) = store.create_run(filled as u64, plan.write_block, plan.write_buffers)?;
                let wrote = self.sort_and_write(chunk, n, &mut ws, &mut w);
                run.bytes = w.finish_after(wrote)?;
                runs.push(run);
            }
            if reader.exhausted() {
                return Ok((total, Some(runs)));
            }
        }
    }

    /// For `-m`: each input as a run. Regular files are read in place, each opened again only
    /// while it is merged; other inputs (pipes, standard input) are first copied to temp space,
    /// through the descriptor the reader opened them with.
    fn input_runs(&self, reader: &mut LineReader, store: &mut TempStore) -> Result<Vec<Run>> {
        let inputs = reader.take_inputs();
        let mut runs = Vec::with_capacity(inputs.len());
        for input in inputs {
            runs.push(match input {
                xsort_io::OpenedInput::Regular(mut r) => {
                    r.release();
                    Run::input(r.path().to_owned(), r.len())
                }
                xsort_io::OpenedInput::Stream(mut s) => store.spool(&mut s.file, &s.name, self.plan_block(), 2)?,
            });
        }
        Ok(runs)
    }

    fn plan_block(&self) -> usize {
        xsort_io::align_up(self.cfg.temp_io.transfer_size.clamp(xsort_io::IO_ALIGN, 1 << 20))
    }

    /// Merges the runs into the output (through intermediate levels if there are too many).
    fn merge(&self, plan: &MemoryPlan, runs: Vec<Run>, store: &mut TempStore, dest: &Destination) -> Result<(u64, MergeReport)> {
        let cfg = &self.cfg;
        let framing = Framing::Delimited(cfg.terminator);
        let svc = ReadService::new(cfg.temp_io.count.clamp(2, crate::config::MAX_IO_COUNT), self.counters.temp_read.clone());
        let mut plan = *plan;
        if let Some(max) = cfg.max_fan_in {
            plan.max_fan_in = max.max(2);
        }
        let job = MergeJob { order: &self.order, framing, plan: &plan, temp_io: cfg.temp_io, svc: &svc };
        let mut report = MergeReport::default();
        let (runs, block) = job.reduce(runs, store, &mut report)?;
        self.counters.final_merge.store(true, AtomicOrdering::Relaxed);
        let mut w = dest.writer(plan.write_block, plan.write_buffers, cfg.output_io, None, false, self.counters.output.clone())?;
        let folding = Folding { unique: cfg.unique, sums: Vec::new() };
        let mut sink = FoldSink::new(RecordSink::new(&mut w), &self.order, framing, &folding);
        let mut lines = 0u64;
        merge_runs(&runs, &self.order, framing, block, &svc, |line| {
            lines += 1;
            sink.push(line)
        })?;
        sink.finish()?;
        w.finish()?;
        runs.iter().for_each(|run| store.release(run));
        Ok((lines, report))
    }

    #[allow(clippy::too_many_arguments)]
    fn stats(
        &self,
        t0: f64,
        (u0, s0): (f64, f64),
        plan: &MemoryPlan,
        lines: u64,
        runs: u64,
        merge: MergeReport,
        samples: Vec<crate::stats::Sample>,
    ) -> SortStats {
        let cfg = &self.cfg;
        let elapsed = epoch().elapsed().as_secs_f64() - t0;
        let (u1, s1) = process_cpu();
        let c = &self.counters;
        let phases = phases_of(c, 8 << 20, plan.write_block, merge.block, t0, &samples, cfg.threads);
        let bytes = c.input.snapshot().bytes;
        let long_line_needs = long_line_needs(plan, self.largest_chunk.load(AtomicOrdering::Relaxed), runs, &merge);
        SortStats {
            version: env!("CARGO_PKG_VERSION"),
            records: lines,
            bytes,
            record_size: 0,
            key: "text lines".into(),
            method: match cfg.method {
                Method::Radix => "radix",
                Method::Merge => "merge",
            },
            threads: cfg.threads,
            passes: u32::from(cfg.mode == TextMode::Sort) + merge.levels,
            runs,
            merge_levels: merge.levels,
            merge_fan_in: merge.fan_in,
            memory_budget_bytes: plan.budget,
            // Lines, their bookkeeping and the write pool, up to the budget (a mapped input is counted
            // although it stays in the page cache), or what the longest line needs beyond it.
            memory_planned_bytes: (bytes + lines * BYTES_PER_LINE as u64 + (plan.write_block * plan.write_buffers) as u64)
                .min(plan.budget)
                .max(merge.memory)
                .max(long_line_needs),
            peak_rss_bytes: peak_rss_bytes(),
            longest_line_bytes: plan.longest_record,
            budget_exceeded: (long_line_needs > plan.budget).then(|| {
                let (budget, line, needs) = (format_bytes(plan.budget), format_bytes(plan.longest_record), format_bytes(long_line_needs));
                format!("budget {budget} exceeded: a {line} line needs {needs}")
            }),
            elapsed_s: elapsed,
            cpu_user_s: u1 - u0,
            cpu_system_s: s1 - s0,
            cpu_utilization: (u1 - u0 + s1 - s0) / (elapsed.max(1e-9) * cfg.threads.max(1) as f64),
            temp_dirs: cfg.temp_dirs.iter().map(|d| d.display().to_string()).collect(),
            phases,
            samples,
        }
    }
}

/// The most the sort held by its plan: the largest chunk (`chunk`: lines, bookkeeping and the
/// reader's slack) with the write pool, and, when runs were merged, the merge's blocks and one
/// longest line per run merged at once (see [`MemoryPlan::merge_shape`]). Chunks end before the
/// line that fills them and merges shrink to fit, so this exceeds the budget only when the
/// longest line does not fit it.
fn long_line_needs(plan: &MemoryPlan, chunk: u64, runs: u64, merge: &MergeReport) -> u64 {
    let pool = (plan.write_block * plan.write_buffers) as u64;
    let merged = if runs > 0 || merge.levels > 0 { plan.merge_bytes(merge.fan_in, merge.block) } else { 0 };
    (chunk + pool).max(merged)
}

impl RecordOrder for crate::order::LineOrder {
    #[inline]
    fn prefix(&self, rec: &[u8]) -> u128 {
        crate::order::LineOrder::prefix(self, rec)
    }

    #[inline]
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        crate::order::LineOrder::compare(self, a, b)
    }

    fn prefix_is_exact(&self) -> bool {
        false
    }

    fn levels(&self) -> usize {
        crate::order::LineOrder::levels(self)
    }

    #[inline]
    fn level_prefix(&self, rec: &[u8], level: usize) -> u128 {
        crate::order::LineOrder::level_prefix(self, rec, level)
    }

    #[inline]
    fn level_equal(&self, a: &[u8], b: &[u8], level: usize) -> bool {
        crate::order::LineOrder::level_equal(self, a, b, level)
    }

    fn level_matcher<'a>(&'a self, first: &'a [u8], level: usize) -> crate::framing::Matcher<'a> {
        crate::order::LineOrder::level_matcher(self, first, level)
    }
}
