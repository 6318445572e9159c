//! The engine: one driver for every format. It opens the destination, plans the memory, sorts the
//! input in one pass or into runs, merges the runs, commits the output and reports statistics; the
//! format (fixed-size records or text lines, see [`crate::config::Format`]) only says how a chunk is
//! read, indexed and sorted, and how records frame and order (the internal trait `FormatSort`).

use crate::compress::Compressor;
use crate::config::{Format, Output, SortConfig, TempCompression};
use crate::error::Result;
use crate::fold::{FoldSink, Folding};
use crate::framing::{Framing, RecordOrder};
use crate::merge::{merge_runs, MergeJob, MergeReport};
use crate::output::Destination;
use crate::plan::MemoryPlan;
use crate::reading::ReadStrategy;
use crate::runs::{RecordSink, Run, TempStore};
use crate::stats::{minor_faults, peak_rss_bytes, phases_of, process_cpu, Sample, Sampler, SortCounters, SortStats};
use crate::temp_codec::{SpillShape, TempCodec};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use xsort_io::{epoch, BlockWriter, BufferPool, ReadService, TempSpace};
use xsort_kernels::Method;

/// Sorts according to a [`SortConfig`], records or lines alike.
pub struct Engine {
    cfg: SortConfig,
    counters: Arc<SortCounters>,
}

/// What sorting the input produced.
pub(crate) enum Sorted {
    /// Everything fit one chunk: the output is written (not yet committed). The writer, when given,
    /// may still have writes in flight: the engine finishes it after the sort's buffers are freed,
    /// so that freeing them overlaps the last writes (4-5 ms for a 10^6-record sort's 150 MB on
    /// the development VM).
    Written { records: u64, writer: Option<BlockWriter> },
    /// Runs on temp space, in input order, to be merged into the output.
    Spilled { records: u64, runs: Vec<Run> },
}

/// The statistics only a format knows.
pub(crate) struct FormatStats {
    /// Bytes sorted.
    pub bytes: u64,
    /// Bytes per record (0 for lines).
    pub record_size: usize,
    /// The key, in words.
    pub key: String,
    /// Memory the plan held at most.
    pub memory_planned: u64,
    /// The longest line (0 for records).
    pub longest_line: u64,
    /// Why the budget was exceeded, when it was.
    pub budget_exceeded: Option<String>,
    /// How the input was read.
    pub read: ReadStrategy,
    /// Bytes of entries and scratch the sort phase held at most.
    pub entries_bytes: u64,
}

/// What the engine needs of a format: its framing and order, how it sorts its input into the output
/// or into runs, and the parts of the statistics that depend on it. Implemented by fixed-size records
/// ([`crate::records`]) and text lines ([`crate::text`]); the engine is generic over it so that
/// comparisons in the merge stay monomorphic.
pub(crate) trait FormatSort {
    /// The order of records.
    type Order: RecordOrder;
    /// The order.
    fn order(&self) -> &Self::Order;
    /// How the byte stream splits into records.
    fn framing(&self) -> Framing;
    /// What the output starts with, before the sorted records (a header).
    fn preamble(&self) -> &[u8] {
        &[]
    }
    /// Records with equal keys folded on the way out.
    fn folding(&self) -> &Folding;
    /// What the memory plan and the statistics need to know of the input, before the sort.
    fn input_shape(&self) -> InputShape;
    /// Reads the input chunk by chunk, sorting each: when a single chunk holds all the input it is
    /// written to the output, otherwise each chunk is spilled as a run.
    fn sort_or_spill(&mut self, plan: &MemoryPlan, store: &mut TempStore, dest: &Destination) -> Result<Sorted>;
    /// For a merge of presorted inputs (`-m`): the inputs as runs; None when the input is to be sorted.
    fn presorted_runs(&mut self, store: &mut TempStore) -> Result<Option<Vec<Run>>>;
    /// The longest record sorted, which the merge plans for.
    fn longest_record(&self) -> u64;
    /// Bytes the final merge's output can reserve for `records` records, when known.
    fn output_reserve(&self, records: u64) -> Option<u64>;
    /// The format's part of the statistics.
    fn stats(&self, plan: &MemoryPlan, records: u64, runs: u64, merge: &MergeReport) -> FormatStats;
}

/// The budget left to the sort once the codecs have theirs: the output's compressor, and a
/// decompressor when an input may be compressed (any input of unknown length: a stream, or a
/// compressed file). The codecs never take more than half of it.
fn sort_budget(cfg: &SortConfig, dest: &Destination, input: &InputShape) -> u64 {
    let decoder = if cfg.decompress && input.known_len.is_none() { xsort_io::codec::DECODER_MEMORY } else { 0 };
    let codecs = dest.codec_memory() + decoder;
    cfg.memory_budget - codecs.min(cfg.memory_budget / 2)
}

/// What the memory plan and the statistics need to know of a format's input, before the sort.
pub(crate) struct InputShape {
    /// Bytes per record for the memory plan (1 for lines).
    pub plan_record_size: usize,
    /// Total bytes of the inputs, when known.
    pub known_len: Option<u64>,
    /// Input files, for the plan's alignment slack.
    pub files: usize,
    /// Bytes per input read request, for the statistics.
    pub request: usize,
}

impl Engine {
    /// An engine for `cfg` that keeps `counters` up to date as it runs.
    /// Its worker threads are at most the CPUs the process may use
    /// ([`crate::limits::worker_threads`]), whatever the configuration asks.
    pub fn new(mut cfg: SortConfig, counters: Arc<SortCounters>) -> Self {
        cfg.threads = crate::limits::worker_threads(Some(cfg.threads));
        Engine { cfg, counters }
    }

    /// The sort's configuration.
    pub fn config(&self) -> &SortConfig {
        &self.cfg
    }

    /// The sort's configuration, to change before it runs.
    pub(crate) fn config_mut(&mut self) -> &mut SortConfig {
        &mut self.cfg
    }

    /// Live counters, for a progress display.
    pub fn counters(&self) -> Arc<SortCounters> {
        self.counters.clone()
    }

    /// Runs the sort (or merge) on worker threads of its own (`threads` of its config). On error
    /// nothing is left at the output path and no temp file remains.
    /// A cancelled sort fails with [`crate::SortError::Cancelled`], whatever stopped it first (a
    /// check of the flag, or a pushed input that the cancel ended).
    pub fn run(&self) -> Result<SortStats> {
        match crate::pool::run_in_pool(self.cfg.threads, || self.start()) {
            Err(e @ crate::SortError::Comparison(_)) => Err(e),
            Err(_) if self.cfg.is_cancelled() => Err(crate::SortError::Cancelled),
            done => done,
        }
    }

    /// Opens the format and drives the sort, on its pool's driver thread.
    fn start(&self) -> Result<SortStats> {
        let t0 = epoch().elapsed().as_secs_f64();
        let cpu0 = (process_cpu(), minor_faults());
        // Each format checks its settings and opens every input before anything is written.
        match &self.cfg.format {
            Format::Records(rec) => {
                let sort = crate::records::RecordSort::open(&self.cfg, rec, &self.counters)?;
                let key = sort.order().clone();
                // A declared comparison that failed cancelled the sort: it fails for that reason.
                self.drive(sort, t0, cpu0).map_err(|e| key.comparison_failure().map_or(e, |m| crate::SortError::Comparison(m.into())))
            }
            Format::Lines(lines) => self.drive(crate::text::LineSort::open(&self.cfg, lines, &self.counters)?, t0, cpu0),
        }
    }

    /// The sort of an opened format, from the destination to the statistics.
    fn drive<F: FormatSort>(&self, mut format: F, t0: f64, cpu0: ((f64, f64), u64)) -> Result<SortStats> {
        let cfg = &self.cfg;
        // As in GNU sort, the temp directories matter only to a sort that spills: one is made in
        // them when needed, and fails then. An input known to spill has them checked before it is
        // read.
        let temp = TempSpace::unchecked(cfg.temp_dirs.clone(), cfg.temp_io.direct)?;
        // Every writer of the sort (runs, merges, the output) takes its buffers from one pool and
        // gives them back, so that each one's are the last one's, faulted in once.
        let buffers = Arc::new(BufferPool::default());
        let dest = Destination::open(cfg, buffers.clone(), cfg.threads)?;
        // Inputs of unknown length are planned for the caller's expected length, when given.
        let input = format.input_shape();
        let planned_len = input.known_len.or(cfg.expected_input_bytes);
        let budget = sort_budget(cfg, &dest, &input);
        let mut plan = self.plan(budget, &input, planned_len)?;
        let codec = self.temp_codec(&temp, &plan, &input, budget);
        if let (Some(codec), false) = (&codec, plan.one_pass) {
            // The encoder of the run being written comes off the budget (at most a quarter of it).
            plan = self.plan(budget - codec.encoder_memory().min(budget / 4), &input, planned_len)?;
        }
        if input.known_len.is_some() && !plan.one_pass {
            temp.check()?;
        }
        self.counters.input_total.store(input.known_len.unwrap_or(0), Ordering::Relaxed);
        let sampler = Sampler::start(self.counters.clone());
        let mut store = TempStore::new(temp, cfg.temp_io, self.counters.temp_write.clone(), buffers);
        store.compress_with(cfg.compress_program.clone().map(Compressor::new));
        store.compress_temp(codec);
        let presorted = format.presorted_runs(&mut store)?;
        // A merge of presorted inputs (`-m`) has no sort pass.
        let sort_passes = u32::from(presorted.is_none());
        let sorted = match presorted {
            Some(runs) => Sorted::Spilled { records: 0, runs },
            None => format.sort_or_spill(&plan, &mut store, &dest)?,
        };
        sampler.mark();
        let (records, runs, merge) = match sorted {
            Sorted::Written { records, writer } => {
                if let Some(w) = writer {
                    w.finish()?;
                }
                (records, 0, MergeReport::default())
            }
            Sorted::Spilled { records, runs } => {
                let n = runs.len() as u64;
                let (merged, report) = self.merge(&format, &plan, runs, &mut store, &dest, format.output_reserve(records))?;
                // The records sorted: those read (a merge of presorted inputs counts them as it
                // merges; -u may have dropped some from each run before the merge).
                (records.max(merged), n, report)
            }
        };
        // A cancel that came after the merge's last look at the flag still publishes nothing: the
        // caller is told the sort was cancelled, so no output may appear.
        cfg.check_cancelled()?;
        dest.commit(cfg.sync)?;
        let samples = sampler.finish();
        let passes = sort_passes + merge.levels;
        let mut stats = self.stats(&format, t0, cpu0, &plan, (records, runs, passes), merge, samples);
        if runs > 0 || merge.levels > 1 {
            stats.temp_compression = store.codec().map(TempCodec::describe);
            stats.temp_compression_reason = store.codec().map(|c| c.reason.clone());
            stats.temp_run_bytes = store.run_bytes();
            stats.temp_written_bytes = self.counters.temp_write.bytes();
        }
        Ok(stats)
    }

    /// The warnings of a finished sort (none under `-nowarn`).
    fn warnings(&self) -> Vec<String> {
        let overflows = self.counters.summarize_overflows.load(Ordering::Relaxed);
        if self.cfg.no_warnings || overflows == 0 {
            return Vec::new();
        }
        vec![format!(
            "-summarize: {overflows} record{} would have overflowed a summed field; each starts another record of its key \
             (Nsort's NSORT_SUMMARIZE_OVERFLOWED)",
            if overflows == 1 { "" } else { "s" }
        )]
    }

    /// The memory plan of a sort of `budget` bytes.
    fn plan(&self, budget: u64, input: &InputShape, planned_len: Option<u64>) -> Result<MemoryPlan> {
        let cfg = &self.cfg;
        let mut plan = MemoryPlan::new(budget, input.plan_record_size, planned_len, input.files, cfg.output_io)?;
        if input.known_len.is_none() && !plan.one_pass {
            // An expected length that does not fit is only a guess: chunks take the whole budget,
            // so that an input shorter than expected may still sort in one pass.
            plan = MemoryPlan::new(budget, input.plan_record_size, None, input.files, cfg.output_io)?;
        }
        Ok(plan.with_max_fan_in(cfg.max_fan_in))
    }

    /// The codec of the sort's temp runs: zstd when asked, or, by default, when a sort of an input
    /// of known length spills more than its temp directories' free space holds plainly (see
    /// [`crate::temp_codec::choose`]); not by default beside a compress program, nor for a merge
    /// of presorted inputs (`-m`), whose temp runs are only the batches beyond its fan-in.
    fn temp_codec(&self, temp: &TempSpace, plan: &MemoryPlan, input: &InputShape, budget: u64) -> Option<TempCodec> {
        let cfg = &self.cfg;
        let (level, reason) = match cfg.temp_compression {
            TempCompression::Plain => return None,
            TempCompression::Zstd(level) => (level, "asked for (--compress-temp)".to_string()),
            TempCompression::Auto => {
                let merging = matches!(&cfg.format, Format::Lines(l) if l.mode == crate::text::TextMode::Merge);
                if cfg.compress_program.is_some() || plan.one_pass || merging {
                    return None;
                }
                let output = match &cfg.output {
                    Output::Path(p) => Some(p.as_path()),
                    _ => None,
                };
                let record_size = input.plan_record_size as u64;
                let chunk_bytes = plan.chunk_records as u64 * record_size;
                let shape = SpillShape { len: input.known_len?, chunk_bytes, record_size, plan, temp_io: cfg.temp_io, output };
                let why = crate::temp_codec::choose(temp.dirs(), &temp.free_space(), &shape)?;
                (TempCompression::DEFAULT_LEVEL, format!("automatic: {why}"))
            }
        };
        Some(TempCodec::new(level, budget, cfg.threads, reason))
    }

    /// Merges runs level by level until at most a fan-in's worth remain, then into the output, folding
    /// equal keys when asked; returns the records merged into the output.
    fn merge<F: FormatSort>(
        &self,
        format: &F,
        plan: &MemoryPlan,
        runs: Vec<Run>,
        store: &mut TempStore,
        dest: &Destination,
        reserve: Option<u64>,
    ) -> Result<(u64, MergeReport)> {
        let cfg = &self.cfg;
        let (order, framing) = (format.order(), format.framing());
        let svc = ReadService::new(cfg.temp_io.count.clamp(2, crate::config::MAX_IO_COUNT), self.counters.temp_read.clone())?;
        // The merge holds up to one record per run: it plans for the longest one sorted.
        let job = MergeJob { order, framing, plan, longest: format.longest_record(), temp_io: cfg.temp_io, svc: &svc, cfg };
        let mut report = MergeReport::default();
        let (runs, shape) = job.reduce(runs, store, &mut report)?;
        self.counters.final_merge.store(true, Ordering::Relaxed);
        let mut w = dest.writer(plan.write_block, plan.write_buffers, cfg.output_io, reserve, true, self.counters.output.clone())?;
        let mut out = RecordSink::new(&mut w);
        out.push(format.preamble())?;
        let mut sink = FoldSink::new(out, order, framing, format.folding());
        let mut merged = 0u64;
        merge_runs(&runs, order, framing, shape, &svc, |rec| {
            merged += 1;
            if merged.is_multiple_of(CANCEL_CHECK_RECORDS) {
                cfg.check_cancelled()?;
            }
            sink.push(rec)
        })?;
        sink.finish(&self.counters)?;
        w.finish()?;
        // The last runs' space is not punched out here: the temp files are closed, and their space
        // freed, once the output is committed. Punching out 12 runs of 3 GB first took 0.6 s on
        // the development VM, between the last write and the commit.
        Ok((merged, report))
    }

    /// The statistics of a finished sort of `records` records, `runs` runs and `passes` passes.
    #[allow(clippy::too_many_arguments)]
    fn stats<F: FormatSort>(
        &self,
        format: &F,
        t0: f64,
        ((u0, s0), faults0): ((f64, f64), u64),
        plan: &MemoryPlan,
        (records, runs, passes): (u64, u64, u32),
        merge: MergeReport,
        samples: Vec<Sample>,
    ) -> SortStats {
        let cfg = &self.cfg;
        let elapsed = epoch().elapsed().as_secs_f64() - t0;
        let (u1, s1) = process_cpu();
        let phases = phases_of(&self.counters, format.input_shape().request, plan.write_block, merge.block, t0, &samples, cfg.threads);
        let own = format.stats(plan, records, runs, &merge);
        SortStats {
            version: env!("CARGO_PKG_VERSION"),
            records,
            records_read: cfg.select.as_ref().filter(|s| s.selection.is_some()).map(|s| s.read.load(std::sync::atomic::Ordering::Relaxed)),
            records_written: records - self.counters.records_folded.load(Ordering::Relaxed),
            warnings: self.warnings(),
            bytes: own.bytes,
            record_size: own.record_size,
            key: own.key,
            method: match cfg.method {
                Method::Radix => "radix",
                Method::Merge => "merge",
            },
            threads: cfg.threads,
            passes,
            runs,
            merge_levels: merge.levels,
            merge_fan_in: merge.fan_in,
            memory_budget_bytes: plan.budget,
            memory_budget_basis: cfg.memory_budget_basis.clone(),
            memory_planned_bytes: own.memory_planned,
            peak_rss_bytes: peak_rss_bytes(),
            input_mapped: own.read.is_mapped(),
            input_read: own.read,
            entries_bytes: own.entries_bytes,
            minor_faults: minor_faults().saturating_sub(faults0),
            longest_line_bytes: own.longest_line,
            budget_exceeded: own.budget_exceeded,
            elapsed_s: elapsed,
            cpu_user_s: u1 - u0,
            cpu_system_s: s1 - s0,
            cpu_utilization: (u1 - u0 + s1 - s0) / (elapsed.max(1e-9) * cfg.threads.max(1) as f64),
            temp_dirs: cfg.temp_dirs.iter().map(|d| d.display().to_string()).collect(),
            temp_compression: None,
            temp_compression_reason: None,
            temp_run_bytes: 0,
            temp_written_bytes: 0,
            phases,
            samples,
        }
    }
}

/// Records merged between two checks of the cancel flag: a few milliseconds' work.
pub(crate) const CANCEL_CHECK_RECORDS: u64 = 1 << 16;
