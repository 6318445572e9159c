//! The sorter: one pass in memory when the data fits the budget, run formation and a (multi-level)
//! merge when it does not.

use crate::batches::{write_merged, BatchSorter, EntryMerger, SortContext};
use crate::compress::Compressor;
use crate::config::SortConfig;
use crate::entry::{extract, gather, sort_in_pieces, EntryLayout};
use crate::error::{Result, SortError};
use crate::fold::FoldSink;
use crate::framing::Framing;
use crate::input::InputSet;
use crate::key::ResolvedKey;
use crate::merge::{merge_runs, MergeJob, MergeReport};
use crate::output::{sort_while_writing, Destination};
use crate::plan::{MemoryPlan, ENTRY_BYTES_PER_RECORD};
use crate::runs::{RecordSink, Run, TempStore};
use crate::stats::{peak_rss_bytes, phases_of, process_cpu, Sampler, SortCounters, SortStats};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use xsort_io::{epoch, AlignedBuf, MappedFile, Prefault, ReadService, TempSpace};
use xsort_kernels::Method;

/// Sorts according to a [`SortConfig`].
pub struct Sorter {
    cfg: SortConfig,
    counters: Arc<SortCounters>,
}

/// What the run formation produced.
enum Formed {
    /// Everything fit: the output is written.
    Done { records: u64 },
    /// Runs on temp space, in input order.
    Runs { records: u64, runs: Vec<Run> },
}

impl Sorter {
    /// A sorter for `cfg`.
    pub fn new(cfg: SortConfig) -> Self {
        Sorter { cfg, counters: Arc::default() }
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

    /// Runs the sort on worker threads of its own (`threads` of its config). On error nothing is
    /// left at the output path and no temp file remains.
    pub fn run(&self) -> Result<SortStats> {
        crate::pool::run_in_pool(self.cfg.threads, || self.drive())
    }

    /// The sort, on its pool's driver thread.
    fn drive(&self) -> Result<SortStats> {
        let cfg = &self.cfg;
        let t0 = epoch().elapsed().as_secs_f64();
        let (u0, s0) = process_cpu();
        if cfg.record_size == 0 {
            return Err(SortError::Config("the record size must be at least 1 byte".into()));
        }
        // Before any input is opened: records too large for the budget are refused, not read.
        crate::plan::check_budget(cfg.memory_budget, cfg.record_size)?;
        let key = cfg.key.resolve(cfg.record_size)?;
        cfg.folding.check(cfg.record_size)?;
        let mut inputs = InputSet::open(&cfg.inputs, cfg.record_size, cfg.input_io, self.counters.input.clone())?;
        let temp = TempSpace::new(cfg.temp_dirs.clone(), cfg.temp_io.direct)?;
        let dest = Destination::open(&cfg.output, cfg.output_io, &cfg.temp_dirs)?;
        let plan = MemoryPlan::new(cfg.memory_budget, cfg.record_size, inputs.known_len(), inputs.file_count(), cfg.output_io)?;
        self.counters.input_total.store(inputs.known_len().unwrap_or(0), Ordering::Relaxed);
        let sampler = Sampler::start(self.counters.clone());

        let mut store = TempStore::new(temp, cfg.temp_io, self.counters.temp_write.clone());
        store.compress_with(cfg.compress_program.clone().map(Compressor::new));
        let formed = self.form_runs(&key, &plan, &mut inputs, &mut store, &dest)?;
        sampler.mark();
        let (records, runs, merge) = match formed {
            Formed::Done { records } => (records, 0, MergeReport::default()),
            Formed::Runs { records, runs } => {
                let n = runs.len() as u64;
                (records, n, self.merge_all(&key, &plan, runs, &mut store, &dest, records)?)
            }
        };
        dest.commit(cfg.sync)?;
        let samples = sampler.finish();
        Ok(self.stats(t0, (u0, s0), &plan, records, runs, merge, samples))
    }

    /// Reads chunk after chunk, sorting each; a single chunk that holds all the input goes straight to
    /// the output, otherwise each becomes a run.
    fn form_runs(
        &self,
        key: &ResolvedKey,
        plan: &MemoryPlan,
        inputs: &mut InputSet,
        store: &mut TempStore,
        dest: &Destination,
    ) -> Result<Formed> {
        let cfg = &self.cfg;
        let r = cfg.record_size;
        if let Some((map, path)) = self.map_cached_input(plan, inputs)? {
            let formed = self.sort_mapped(key, plan, &map, &path, dest)?;
            // The output is complete but not committed: nothing of a shrunk input may be.
            mapped_intact(&map, &path)?;
            return Ok(formed);
        }
        let mut buf = AlignedBuf::new(plan.chunk_capacity)?;
        if cfg.touch {
            buf.touch();
        }
        let layout = EntryLayout::new(key.len(), plan.chunk_capacity);
        let ctx = SortContext { method: cfg.method, key, layout, record_size: r };
        // Entry arrays are page-aligned mappings like the data, returned to the kernel on drop.
        let mut entry_buf = AlignedBuf::new(plan.chunk_records * 16)?;
        // Batches are sorted one at a time, so the kernel's scratch holds one batch, not the chunk.
        let mut scratch_buf = AlignedBuf::new(BatchSorter::batch_len(plan.chunk_records) * 16)?;
        // Fresh memory is faulted in ahead of the reads; the guard is dropped before the buffers.
        let _prefault = (!cfg.touch).then(|| Prefault::start(&[&buf, &entry_buf, &scratch_buf]));
        let all_entries = entry_buf.as_u128_mut();
        let scratch = scratch_buf.as_u128_mut();
        let mut runs = Vec::new();
        let mut records = 0u64;
        loop {
            let mut n = 0;
            let mut batches = BatchSorter::new(ctx, plan.chunk_records);
            inputs.fill(&mut buf, plan.chunk_records, |data, start, count| {
                extract(key, layout, data, start, r, &mut all_entries[n..n + count]);
                n += count;
                batches.sort_ready(data, all_entries, scratch, n);
            })?;
            batches.finish(buf.as_slice(), all_entries, scratch, n);
            records += n as u64;
            let mut merger = batches.merger(&all_entries[..n], buf.as_slice());
            if runs.is_empty() && inputs.exhausted() {
                self.write_one_pass(key, plan, dest, &mut merger, buf.as_slice(), n)?;
                return Ok(Formed::Done { records });
            }
            if n > 0 {
                self.counters.spilled.store(true, Ordering::Relaxed);
                let (run, mut w) = store.create_run((n * r) as u64, plan.write_block, plan.write_buffers)?;
                let wrote = write_merged(&mut w, &mut merger, n);
                w.finish_after(wrote)?;
                runs.push(run);
            }
            if inputs.exhausted() {
                return Ok(Formed::Runs { records, runs });
            }
        }
    }

    /// The single input, mapped, when it is a regular file mostly in the page cache that fits in one
    /// pass: sorting it in place saves copying it into fresh memory (whose first touch is costly on
    /// virtual machines). None otherwise.
    fn map_cached_input(&self, plan: &MemoryPlan, inputs: &mut InputSet) -> Result<Option<(MappedFile, PathBuf)>> {
        if !plan.one_pass || self.cfg.touch {
            return Ok(None);
        }
        let Some((file, len, path)) = inputs.single_cached_file()? else { return Ok(None) };
        let started = std::time::Instant::now();
        // A refused mapping is read instead.
        let Some(map) = MappedFile::map(file, len, &path)? else { return Ok(None) };
        self.counters.input.record(len, started, false);
        Ok(Some((map, path)))
    }

    /// One pass over a mapped input: entries extracted in parallel, sorted in batches, merged and
    /// gathered straight from the mapping into the output.
    fn sort_mapped(&self, key: &ResolvedKey, plan: &MemoryPlan, map: &MappedFile, path: &Path, dest: &Destination) -> Result<Formed> {
        let cfg = &self.cfg;
        let r = cfg.record_size;
        let data = map.as_slice();
        let n = data.len() / r;
        let layout = EntryLayout::new(key.len(), data.len());
        let ctx = SortContext { method: cfg.method, key, layout, record_size: r };
        let mut entry_buf = AlignedBuf::new(n * 16)?;
        let entries = &mut entry_buf.as_u128_mut()[..n];
        extract(key, layout, data, 0, r, entries);
        // Every record has been read once: a file that shrank meanwhile stops the sort here.
        mapped_intact(map, path)?;
        if !cfg.folding.is_active() {
            // Nothing to overlap with reading: one parallel sort of all the entries, with each piece
            // of the sorted output gathered and written while the next is sorted.
            let mut scratch_buf = AlignedBuf::new(n * 16)?;
            let scratch = &mut scratch_buf.as_u128_mut()[..n];
            let mut w = dest.writer(
                plan.write_block,
                plan.write_buffers,
                cfg.output_io,
                Some(data.len() as u64),
                cfg.preallocate,
                self.counters.output.clone(),
            )?;
            let mut out = RecordSink::new(&mut w);
            sort_while_writing(
                |emit| sort_in_pieces(&ctx, data, entries, scratch, emit),
                |piece: &[u128]| out.push_with((piece.len() * r) as u64, |from, dst| gather(layout, piece, data, r, from, dst)),
            )?;
            out.flush()?;
            w.finish()?;
            return Ok(Formed::Done { records: n as u64 });
        }
        let mut scratch_buf = AlignedBuf::new(BatchSorter::batch_len(n) * 16)?;
        let mut batches = BatchSorter::new(ctx, n);
        let scratch = scratch_buf.as_u128_mut();
        batches.sort_ready(data, entries, scratch, n);
        batches.finish(data, entries, scratch, n);
        let mut merger = batches.merger(entries, data);
        self.write_one_pass(key, plan, dest, &mut merger, data, n)?;
        Ok(Formed::Done { records: n as u64 })
    }

    /// Writes a one-pass sort's merged batches to the output, folding equal keys when asked.
    fn write_one_pass(
        &self,
        key: &ResolvedKey,
        plan: &MemoryPlan,
        dest: &Destination,
        merger: &mut EntryMerger,
        data: &[u8],
        n: usize,
    ) -> Result<()> {
        let cfg = &self.cfg;
        let r = cfg.record_size;
        let total = (!cfg.folding.is_active()).then_some((n * r) as u64);
        let mut w =
            dest.writer(plan.write_block, plan.write_buffers, cfg.output_io, total, cfg.preallocate, self.counters.output.clone())?;
        if cfg.folding.is_active() {
            let layout = EntryLayout::new(key.len(), data.len());
            let mut sink = FoldSink::new(RecordSink::new(&mut w), key, Framing::Fixed(r), &cfg.folding);
            while let Some(e) = merger.next_entry() {
                let off = layout.offset(e);
                sink.push(&data[off..off + r])?;
            }
            sink.finish()?;
        } else {
            write_merged(&mut w, merger, n)?;
        }
        w.finish()?;
        Ok(())
    }

    /// Merges runs level by level until at most a fan-in's worth remain, then into the output.
    fn merge_all(
        &self,
        key: &ResolvedKey,
        plan: &MemoryPlan,
        runs: Vec<Run>,
        store: &mut TempStore,
        dest: &Destination,
        records: u64,
    ) -> Result<MergeReport> {
        let cfg = &self.cfg;
        let framing = Framing::Fixed(cfg.record_size);
        let svc = ReadService::new(cfg.temp_io.count.clamp(2, crate::config::MAX_IO_COUNT), self.counters.temp_read.clone());
        let job = MergeJob { order: key, framing, plan, temp_io: cfg.temp_io, svc: &svc };
        let mut report = MergeReport::default();
        let (runs, block) = job.reduce(runs, store, &mut report)?;
        self.counters.final_merge.store(true, Ordering::Relaxed);
        let total = (!cfg.folding.is_active()).then_some(records * cfg.record_size as u64);
        let mut w =
            dest.writer(plan.write_block, plan.write_buffers, cfg.output_io, total, cfg.preallocate, self.counters.output.clone())?;
        let mut sink = FoldSink::new(RecordSink::new(&mut w), key, framing, &cfg.folding);
        merge_runs(&runs, key, framing, block, &svc, |rec| sink.push(rec))?;
        sink.finish()?;
        w.finish()?;
        runs.iter().for_each(|run| store.release(run));
        Ok(report)
    }

    #[allow(clippy::too_many_arguments)]
    fn stats(
        &self,
        t0: f64,
        (u0, s0): (f64, f64),
        plan: &MemoryPlan,
        records: u64,
        runs: u64,
        merge: MergeReport,
        samples: Vec<crate::stats::Sample>,
    ) -> SortStats {
        let cfg = &self.cfg;
        let elapsed = epoch().elapsed().as_secs_f64() - t0;
        let (u1, s1) = process_cpu();
        let c = &self.counters;
        let input_request = xsort_io::align_up(cfg.input_io.transfer_size.max(xsort_io::IO_ALIGN));
        let phases = phases_of(c, input_request, plan.write_block, merge.block, t0, &samples, cfg.threads);
        let sort_phase = plan
            .sort_phase_bytes()
            .min((plan.chunk_capacity as u64).saturating_add(records.saturating_mul((cfg.record_size + ENTRY_BYTES_PER_RECORD) as u64)));
        SortStats {
            version: env!("CARGO_PKG_VERSION"),
            records,
            bytes: records * cfg.record_size as u64,
            record_size: cfg.record_size,
            key: describe_key(&cfg.key),
            method: match cfg.method {
                Method::Radix => "radix",
                Method::Merge => "merge",
            },
            threads: cfg.threads,
            passes: 1 + merge.levels,
            runs,
            merge_levels: merge.levels,
            merge_fan_in: merge.fan_in,
            memory_budget_bytes: plan.budget,
            memory_planned_bytes: sort_phase.max(merge.memory),
            peak_rss_bytes: peak_rss_bytes(),
            longest_line_bytes: 0,
            budget_exceeded: None,
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

/// The error "file shrank while being read" when a mapped input was cut short while sorted (its
/// missing part was read as zeros; see [`xsort_io::sigbus`]).
fn mapped_intact(map: &MappedFile, path: &Path) -> Result<()> {
    if map.intact() {
        return Ok(());
    }
    Err(crate::input::shrank(path, map.as_slice().len() as u64))
}

fn describe_key(k: &crate::key::KeySpec) -> String {
    if k.parts().is_empty() {
        return "whole record".into();
    }
    k.parts().iter().map(|p| p.to_string()).collect::<Vec<_>>().join(",")
}
