//! Fixed-size records as the engine sorts them ([`crate::engine`]): chunks read into one aligned
//! buffer while an entry (normalized key prefix + record offset) is extracted per record, sorted in
//! batches by a kernel, and gathered into the output or a run; a single cached input whose entries
//! fit the budget is mapped and sorted in place instead, whatever its size (see [`crate::plan`]).

use crate::batches::{write_merged, BatchSorter, EntryMerger, SortContext};
use crate::config::{RecordFormat, SortConfig};
use crate::engine::{FormatSort, FormatStats, InputShape, Sorted};
use crate::entry::{extract_at, extract_checked, extract_selected, gather, gather_reformatted, sort_in_pieces, EntryLayout};
use crate::error::{Result, SortError};
use crate::fold::{FoldSink, Folding};
use crate::framing::Framing;
use crate::input::InputSet;
use crate::key::ResolvedKey;
use crate::merge::MergeReport;
use crate::output::{sort_while_writing, Destination};
use crate::plan::{MemoryPlan, ENTRY_BYTES_PER_RECORD};
use crate::reading::{MappedInput, ReadStrategy};
use crate::runs::{RecordSink, Run, RunWriter, TempStore};
use crate::select::reader::InputTransform;
use crate::select::Rec;
use crate::stats::SortCounters;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;
use xsort_io::{AlignedBuf, BlockWriter, Prefault, PrefaultAhead};

/// How far ahead of a stream's reader its chunk's buffers are faulted in (data, entries and
/// scratch together): two of the reader's 8 MiB reads, so that the reads rarely fault, while a
/// stream that ends touches at most this much that it never uses.
const PREFAULT_WINDOW: usize = 16 << 20;

/// A sort of fixed-size records, its inputs opened.
pub(crate) struct RecordSort<'a> {
    cfg: &'a SortConfig,
    rec: &'a RecordFormat,
    key: ResolvedKey,
    inputs: InputSet,
    counters: &'a Arc<SortCounters>,
    /// How the input was read.
    read: ReadStrategy,
    /// Bytes of entries and scratch held at most.
    entries_bytes: u64,
    /// A selection (and a reformat of fixed fields, see [`MappedReformat`]) left to the mapped sort
    /// of the single input, which extracts entries only for the records kept and gathers the
    /// fields written; its input opened unfiltered. If the input is not mapped after all, it is
    /// opened again, filtered and rewritten as it is read.
    mapped_selection: Option<Arc<InputTransform>>,
    /// The reformat of `mapped_selection`, for the mapped sort.
    mapped_reformat: Option<MappedReformat>,
}

/// A `-reformat` of fixed fields applied by the mapped sort as it gathers the output, so that the
/// input is read in place rather than rewritten into fresh memory: the input records' size, each
/// output field's place in an input record, and the key on the input records (each key part lies
/// in one output field, which is a copy of input bytes).
struct MappedReformat {
    in_size: usize,
    pieces: Vec<(usize, usize)>,
    key: ResolvedKey,
}

/// Each output field's place in an input record (offset and length), in output order.
type FieldPieces = [(usize, usize)];

impl MappedReformat {
    /// The mapped form of `t`'s reformat of records sorted as `rec`; None where the reformat is
    /// not of fixed fields, a key part spans fields or is compared by a function, or records are
    /// folded.
    fn of(t: &InputTransform, rec: &RecordFormat) -> Option<MappedReformat> {
        use crate::key::{KeyPart, KeySpec};
        use crate::select::{reader::SelectFraming, Place};
        let (reformat, SelectFraming::Fixed(in_size)) = (t.reformat.as_ref()?, t.framing) else { return None };
        // A key compared by a program's function keeps to the sort's own key, whose failures the
        // engine reports.
        let compared = rec.key.parts().iter().any(|p| matches!(p.kind, crate::key::KeyType::Custom(_)));
        if reformat.separator.is_some() || rec.folding.is_active() || t.derivation.is_some() || compared {
            return None;
        }
        let pieces: Vec<(usize, usize)> = reformat
            .pieces
            .iter()
            .map(|p| match *p {
                Place::Bytes { offset, size } if offset + size <= in_size => Some((offset, size)),
                _ => None,
            })
            .collect::<Option<_>>()?;
        // Each output field's start in the output record, beside its place in the input's.
        let starts: Vec<usize> = pieces.iter().scan(0, |at, p| Some(std::mem::replace(at, *at + p.1))).collect();
        let parts = if rec.key.parts().is_empty() {
            pieces.iter().map(|&(offset, size)| KeyPart::bytes(offset, size, false)).collect()
        } else {
            let moved = |p: &KeyPart| {
                let k = (0..pieces.len()).find(|&k| starts[k] <= p.offset && p.offset + p.len <= starts[k] + pieces[k].1)?;
                Some(KeyPart { offset: pieces[k].0 + (p.offset - starts[k]), ..*p })
            };
            rec.key.parts().iter().map(moved).collect::<Option<Vec<_>>>()?
        };
        let key = KeySpec::new(parts).resolve(in_size).ok()?;
        Some(MappedReformat { in_size, pieces, key })
    }
}

impl<'a> RecordSort<'a> {
    /// Opens the inputs of a format that `Sort` has checked (record size, key, folding, budget).
    pub fn open(cfg: &'a SortConfig, rec: &'a RecordFormat, counters: &'a Arc<SortCounters>) -> Result<Self> {
        let key = rec.key.resolve(rec.record_size)?;
        if let Some(flag) = &cfg.cancel {
            key.cancel_on_comparison_failure(flag.clone());
        }
        // A selection (with no derived fields, and no reformat but of fixed fields) on one file
        // may be applied by the mapped sort, which reads the records in place.
        let mapped_reformat = cfg.select.as_deref().and_then(|t| MappedReformat::of(t, rec));
        let mapped_selection = cfg.select.clone().filter(|t| {
            t.derivation.is_none()
                && (t.reformat.is_none() || mapped_reformat.is_some())
                && !rec.merge
                && matches!(cfg.inputs[..], [crate::config::Input::Path(_)])
        });
        let select = if mapped_selection.is_some() { None } else { cfg.select.as_ref() };
        let mapped_reformat = mapped_reformat.filter(|_| mapped_selection.is_some());
        // Unfiltered, the input's records are as the input has them.
        let size = mapped_reformat.as_ref().map_or(rec.record_size, |m| m.in_size);
        let inputs = InputSet::open(&cfg.inputs, size, rec.input_io, (cfg.decompress, select), counters.input.clone())?;
        let read = ReadStrategy::default();
        Ok(RecordSort { cfg, rec, key, inputs, counters, read, entries_bytes: 0, mapped_selection, mapped_reformat })
    }

    /// The inputs opened again, filtered by the selection as they are read: the mapped sort that
    /// would have applied it is not taken.
    fn filter_inputs(&mut self) -> Result<()> {
        self.mapped_reformat = None;
        if self.mapped_selection.take().is_some() {
            let (cfg, rec) = (self.cfg, self.rec);
            let counters = self.counters.input.clone();
            self.inputs = InputSet::open(&cfg.inputs, rec.record_size, rec.input_io, (cfg.decompress, cfg.select.as_ref()), counters)?;
        }
        Ok(())
    }

    /// Reads chunk after chunk, sorting each; a single chunk that holds all the input goes straight to
    /// the output, otherwise each becomes a run. Files deliver records while later reads are in
    /// flight, so their entries are sorted in batches meanwhile and merged at the end. A stream (a
    /// pipe, a pushed input) is read on this thread, which only extracts keys between its reads; its
    /// chunk is sorted in one parallel pass once filled and gathered in parallel as it is written,
    /// as a mapped file is (sorting it in batches between the reads measured no faster). A file
    /// that spills, when the plan holds two chunks, has each run written on a thread of its own
    /// while the next chunk is read into the other.
    fn read_and_sort(&mut self, plan: &MemoryPlan, store: &mut TempStore, dest: &Destination) -> Result<Sorted> {
        // A copy of the key, which run writer threads borrow while the loop below borrows `self`.
        let (cfg, rec, key) = (self.cfg, self.rec, &self.key.clone());
        let r = rec.record_size;
        self.read = ReadStrategy::batches(self.inputs.any_stream());
        let whole = self.inputs.any_stream() && !rec.folding.is_active();
        // Chunks are unmapped only when `retired` is dropped, after the buffers' prefault guards,
        // whichever thread or error path lets go of them first.
        let retired = Retired::default();
        let mut b = self.phase_buffers(plan, store, whole, &retired)?;
        let layout = EntryLayout::for_key(key, plan.chunk_capacity);
        let ctx = SortContext { method: cfg.method, key, layout, record_size: r };
        let mut records = 0u64;
        std::thread::scope(|scope| {
            let mut spiller = Spiller { writing: None, runs: Vec::new(), record_size: r };
            loop {
                cfg.check_cancelled()?;
                let mut arrived = 0;
                let mut batches = BatchSorter::new(ctx, plan.chunk_records);
                let c: &mut Chunk = &mut b.chunk; // its fields borrowed apart
                let (all_entries, scratch) = (c.entries.as_u128_mut(), b.scratch.as_u128_mut());
                let ahead = &b.ahead;
                let n = self.inputs.fill(&mut c.data, plan.chunk_records, |a| {
                    extract_at(key, layout, a.records, a.offset, r, &mut all_entries[a.first..a.first + a.count]);
                    arrived += a.count;
                    if let Some(ahead) = ahead {
                        ahead.advance(arrived); // a stream's records arrive in order
                    }
                    if !whole {
                        batches.extracted(a.first, a.count, all_entries, scratch, |range| a.bytes(range));
                    }
                })?;
                records += n as u64;
                if self.inputs.exhausted() {
                    b.ahead = None; // nothing more to read: stop faulting pages no record will use
                }
                cfg.check_cancelled()?;
                let one_pass = spiller.runs.is_empty() && spiller.writing.is_none() && self.inputs.exhausted();
                // Writers start now and take buffers from the pool, which the prefault may still be
                // touching; one that a writer drops on an error would be unmapped under it. The
                // prefault is nearly always done by the end of the first chunk's read.
                b.prefault = None;
                if whole {
                    let c: &mut Chunk = &mut b.chunk;
                    let runs = &mut spiller.runs;
                    if let Some(w) = self.sort_whole_chunk(&ctx, plan, c, &mut b.scratch, n, one_pass, (dest, store), runs)? {
                        return Ok(Sorted::Written { records, writer: Some(w) });
                    }
                } else {
                    let c: &mut Chunk = &mut b.chunk;
                    batches.finish(c.data.as_slice(), c.entries.as_u128_mut(), b.scratch.as_u128_mut(), n);
                    if one_pass {
                        let mut merger = batches.merger(&c.entries.as_u128_mut()[..n], c.data.as_slice());
                        let w = self.write_one_pass(plan, dest, &mut merger, c.data.as_slice(), n)?;
                        return Ok(Sorted::Written { records, writer: Some(w) });
                    }
                    if n > 0 {
                        self.counters.spilled.store(true, Ordering::Relaxed);
                        b = spiller.spill(scope, b, batches, n, store, plan)?;
                    }
                }
                if self.inputs.exhausted() {
                    return Ok(Sorted::Spilled { records, runs: spiller.finish()? });
                }
            }
        })
    }

    /// The sort phase's buffers for `plan` (two chunks when it has room for them and `whole`
    /// chunks are not sorted at once), faulted in as the plan asks: all of them before the reads
    /// with `--touch`, else on threads of their own ahead of the reads (see [`PhaseBuffers`]).
    fn phase_buffers<'r>(&mut self, plan: &MemoryPlan, store: &TempStore, whole: bool, retired: &'r Retired) -> Result<PhaseBuffers<'r>> {
        let r = self.rec.record_size;
        let mut chunk = Kept::new(Chunk::new(plan)?, retired);
        // A second chunk when the plan has room for it (a known input that spills): while one chunk's
        // run is written on a thread of its own, the next is read into the other.
        let mut spare = if plan.spill_buffers > 1 && !whole { Some(Kept::new(Chunk::new(plan)?, retired)) } else { None };
        // `--touch` faults in what the plan will use before the clock of the reads starts: the
        // chunks of a known input. The chunk of a stream is sized to the whole budget, of which a
        // short stream uses a sliver: it is touched a window ahead of the reader, as without
        // `--touch` (touching it all took 13.6 s and 7.8 GB for a 32 KB input).
        let known = self.inputs.known_len().is_some();
        let touch_all = self.rec.touch && known;
        if touch_all {
            let started = Instant::now();
            for c in std::iter::once(&mut chunk).chain(spare.as_mut()) {
                c.data.touch();
                self.counters.touch.record(c.data.capacity() as u64, started, false);
            }
        }
        // Batches are sorted one at a time, so their scratch holds one batch, not the chunk; a whole
        // chunk sorted at once (a stream's) needs scratch for all its entries. Mappings cost nothing
        // until touched, so a short stream pays only for the part its records use.
        let scratch_len = if whole { plan.chunk_records } else { BatchSorter::batch_len(plan.chunk_records) };
        let scratch = AlignedBuf::new(scratch_len * 16)?;
        // Fresh memory is faulted in on a thread of its own, ahead of the reads (the spare chunk
        // last: it is filled second). The chunk of an input of unknown length (a stream's) is sized
        // to the whole budget, and faulting all of it in would cost time and memory that a short
        // input never uses: there the thread stays a window of records ahead of the reader.
        let touch = &self.counters.touch;
        let mut regions = vec![&chunk.data, &chunk.entries, &scratch];
        regions.extend(spare.iter().flat_map(|c| [&c.data, &c.entries]));
        let prefault = if !touch_all && known {
            // The writers' buffers last, reserved now: they are needed once the chunk is read.
            Some(store.buffers().reserve(plan.write_buffers, plan.write_block, |kept| {
                Prefault::start(&regions.iter().copied().chain(kept).collect::<Vec<_>>(), touch.clone())
            })?)
        } else {
            None
        };
        drop(regions);
        let window = (PREFAULT_WINDOW / (r + ENTRY_BYTES_PER_RECORD)).max(1);
        let ahead =
            (!known).then(|| PrefaultAhead::start(&[(&chunk.data, r), (&chunk.entries, 16), (&scratch, 16)], window, touch.clone()));
        // A whole chunk's scratch counts as far as its records use it (see `sort_whole_chunk`).
        self.entries_bytes =
            (chunk.entries.capacity() * (1 + spare.is_some() as usize) + if whole { 0 } else { scratch.capacity() }) as u64;
        Ok(PhaseBuffers { prefault, ahead, scratch, spare, chunk })
    }

    /// Sorts the `n` records of a chunk read whole (a stream's) in one parallel pass and gathers
    /// them into the output, when `one_pass` (returning its writer, whose last writes may still be
    /// in flight), or into a new run.
    #[allow(clippy::too_many_arguments)]
    fn sort_whole_chunk(
        &mut self,
        ctx: &SortContext,
        plan: &MemoryPlan,
        c: &mut Chunk,
        scratch: &mut AlignedBuf,
        n: usize,
        one_pass: bool,
        (dest, store): (&Destination, &mut TempStore),
        runs: &mut Vec<Run>,
    ) -> Result<Option<BlockWriter>> {
        let (cfg, r) = (self.cfg, self.rec.record_size);
        let scratch = &mut scratch.as_u128_mut()[..n];
        self.entries_bytes = self.entries_bytes.max((c.entries.capacity() + n * 16) as u64);
        let entries = &mut c.entries.as_u128_mut()[..n];
        if one_pass {
            let total = (n * r) as u64;
            let output = self.counters.output.clone();
            let mut w = dest.writer(plan.write_block, plan.write_buffers, cfg.output_io, Some(total), self.rec.preallocate, output)?;
            write_sorted(ctx, cfg, (c.data.as_slice(), None), entries, scratch, &mut w)?;
            return Ok(Some(w));
        }
        if n > 0 {
            self.counters.spilled.store(true, Ordering::Relaxed);
            let (run, mut w) = store.create_run((n * r) as u64, plan.write_block, plan.write_buffers)?;
            let wrote = write_sorted(ctx, cfg, (c.data.as_slice(), None), entries, scratch, &mut w);
            w.finish_after(wrote)?;
            runs.push(run);
        }
        Ok(None)
    }

    /// The single input, mapped, when it is a regular file mostly in the page cache whose entries
    /// fit the budget ([`mapped_sort`]), whatever its own size: sorting it in place saves copying
    /// it into fresh memory (whose first touch is costly on virtual machines), and a file larger
    /// than the budget sorts in one pass instead of spilling. None otherwise (and with Nsort's
    /// `-touch`, which asks for the buffers to be faulted in).
    fn map_cached_input(&mut self, plan: &MemoryPlan) -> Result<Option<(MappedInput, ReadStrategy)>> {
        let mapped = self.try_map(plan)?;
        if mapped.is_none() {
            self.filter_inputs()?;
        }
        Ok(mapped)
    }

    fn try_map(&mut self, plan: &MemoryPlan) -> Result<Option<(MappedInput, ReadStrategy)>> {
        if self.rec.touch {
            return Ok(None);
        }
        let Some(file) = self.inputs.single_file()?.filter(|f| f.cached) else { return Ok(None) };
        let in_size = self.mapped_reformat.as_ref().map_or(self.rec.record_size, |m| m.in_size);
        let n = (file.len / in_size as u64) as usize;
        let Some(read) = mapped_sort(plan, n, self.rec.folding.is_active()) else { return Ok(None) };
        if self.mapped_reformat.is_some() && read != ReadStrategy::MappedWhole {
            // Only the sort of all the entries at once gathers reformatted records.
            return Ok(None);
        }
        let entries = if read == ReadStrategy::MappedWhole { 32 } else { 17 };
        if !crate::plan::fits_in_memory(file.len, n as u64 * entries) {
            return Ok(None);
        }
        // A refused mapping is read instead.
        Ok(MappedInput::map(file)?.map(|map| (map, read)))
    }

    /// One pass over a mapped input: entries extracted in parallel, sorted whole (or in batches,
    /// then merged) and gathered straight from the mapping into the output. The input phase is the
    /// mapping and the extraction of the entries: that is when the input's bytes are read.
    fn sort_mapped(&mut self, plan: &MemoryPlan, map: &MappedInput, read: ReadStrategy, dest: &Destination) -> Result<Sorted> {
        let (cfg, rec) = (self.cfg, self.rec);
        // A reformat's records are read, and keyed, as the input has them.
        let (key, r) = match &self.mapped_reformat {
            Some(m) => (&m.key, m.in_size),
            None => (&self.key, rec.record_size),
        };
        let data = map.bytes();
        let all = data.len() / r;
        let layout = EntryLayout::for_key(key, data.len());
        let ctx = SortContext { method: cfg.method, key, layout, record_size: r };
        let mut entry_buf = AlignedBuf::new(all * 16)?;
        self.read = read;
        self.entries_bytes = entry_buf.capacity() as u64;
        let entries = &mut entry_buf.as_u128_mut()[..all];
        let n = match self.mapped_selection.as_ref().and_then(|t| t.selection.as_ref().map(|s| (t, s))) {
            Some((t, selection)) => {
                let keeps = |rec: &[u8]| selection.keeps(Rec::plain(rec));
                let n = extract_selected(key, layout, data, r, entries, &keeps, || cfg.check_cancelled())?;
                t.read.fetch_add(all as u64, Ordering::Relaxed);
                t.kept.fetch_add(n as u64, Ordering::Relaxed);
                n
            }
            None => {
                extract_checked(key, layout, data, r, entries, || cfg.check_cancelled())?;
                all
            }
        };
        let entries = &mut entries[..n];
        // Every record has been read once: a file that shrank meanwhile stops the sort here.
        map.intact()?;
        self.counters.input.record(data.len() as u64, map.started, false);
        if read == ReadStrategy::MappedWhole {
            // Nothing to overlap with reading: one parallel sort of all the entries, with each piece
            // of the sorted output gathered and written while the next is sorted.
            let mut scratch_buf = AlignedBuf::new(n * 16)?;
            self.entries_bytes += scratch_buf.capacity() as u64;
            let scratch = &mut scratch_buf.as_u128_mut()[..n];
            let mut w = dest.writer(
                plan.write_block,
                plan.write_buffers,
                cfg.output_io,
                Some((n * rec.record_size) as u64),
                rec.preallocate,
                self.counters.output.clone(),
            )?;
            let pieces = self.mapped_reformat.as_ref().map(|m| &m.pieces[..]);
            write_sorted(&ctx, cfg, (data, pieces), entries, scratch, &mut w)?;
            return Ok(Sorted::Written { records: n as u64, writer: Some(w) });
        }
        let mut scratch_buf = AlignedBuf::new(BatchSorter::batch_len(n) * 16)?;
        self.entries_bytes += scratch_buf.capacity() as u64;
        let mut batches = BatchSorter::new(ctx, n);
        batches.finish(data, entries, scratch_buf.as_u128_mut(), n);
        let mut merger = batches.merger(entries, data);
        let w = self.write_one_pass(plan, dest, &mut merger, data, n)?;
        Ok(Sorted::Written { records: n as u64, writer: Some(w) })
    }

    /// Writes a one-pass sort's merged batches to the output, folding equal keys when asked; the
    /// writer comes back with its last writes in flight.
    fn write_one_pass(
        &self,
        plan: &MemoryPlan,
        dest: &Destination,
        merger: &mut EntryMerger,
        data: &[u8],
        n: usize,
    ) -> Result<BlockWriter> {
        let (cfg, rec, key) = (self.cfg, self.rec, &self.key);
        let r = rec.record_size;
        let total = (!rec.folding.is_active()).then_some((n * r) as u64);
        let mut w =
            dest.writer(plan.write_block, plan.write_buffers, cfg.output_io, total, rec.preallocate, self.counters.output.clone())?;
        if rec.folding.is_active() {
            let layout = EntryLayout::for_key(key, data.len());
            let mut sink = FoldSink::new(RecordSink::new(&mut w), key, Framing::Fixed(r), &rec.folding);
            while let Some(e) = merger.next_entry() {
                let off = layout.offset(e);
                sink.push(&data[off..off + r])?;
            }
            sink.finish(self.counters)?;
        } else {
            write_merged(&mut w, merger, n)?;
        }
        Ok(w)
    }
}

impl FormatSort for RecordSort<'_> {
    type Order = ResolvedKey;

    fn order(&self) -> &ResolvedKey {
        &self.key
    }

    fn framing(&self) -> Framing {
        Framing::Fixed(self.rec.record_size)
    }

    fn folding(&self) -> &Folding {
        &self.rec.folding
    }

    fn input_shape(&self) -> InputShape {
        InputShape {
            plan_record_size: self.rec.record_size,
            known_len: self.inputs.known_len(),
            files: self.inputs.file_count(),
            request: xsort_io::align_up(self.rec.input_io.transfer_size.max(xsort_io::IO_ALIGN)),
        }
    }

    fn sort_or_spill(&mut self, plan: &MemoryPlan, store: &mut TempStore, dest: &Destination) -> Result<Sorted> {
        if let Some((map, read)) = self.map_cached_input(plan)? {
            let sorted = self.sort_mapped(plan, &map, read, dest)?;
            // The output is complete but not committed: nothing of a shrunk input may be.
            map.intact()?;
            return Ok(sorted);
        }
        self.read_and_sort(plan, store, dest)
    }

    fn presorted_runs(&mut self, store: &mut TempStore) -> Result<Option<Vec<Run>>> {
        if self.rec.merge {
            let block = xsort_io::align_up(self.cfg.temp_io.transfer_size.clamp(xsort_io::IO_ALIGN, 1 << 20));
            return self.inputs.take_runs(store, block).map(Some);
        }
        Ok(None)
    }

    fn longest_record(&self) -> u64 {
        self.rec.record_size as u64
    }

    fn output_reserve(&self, records: u64) -> Option<u64> {
        (self.rec.preallocate && !self.rec.folding.is_active()).then_some(records * self.rec.record_size as u64)
    }

    fn stats(&self, plan: &MemoryPlan, records: u64, _runs: u64, merge: &MergeReport) -> FormatStats {
        let r = self.rec.record_size;
        let pool = (plan.write_block * plan.write_buffers) as u64;
        // A mapped input is the page cache's: the sort held its entries and the write pool.
        let sort_phase = if self.read.is_mapped() {
            self.entries_bytes + pool
        } else {
            plan.sort_phase_bytes()
                .min((plan.chunk_capacity as u64).saturating_add(records.saturating_mul((r + ENTRY_BYTES_PER_RECORD) as u64)))
        };
        FormatStats {
            bytes: records * r as u64,
            record_size: r,
            key: describe_key(&self.rec.key),
            memory_planned: sort_phase.max(merge.memory),
            longest_line: 0,
            budget_exceeded: None,
            read: self.read,
            entries_bytes: self.entries_bytes,
        }
    }
}

/// A chunk's records and their entries.
struct Chunk {
    data: AlignedBuf,
    entries: AlignedBuf,
}

impl Chunk {
    /// The plan's chunk: mappings, faulted in when first touched.
    fn new(plan: &MemoryPlan) -> Result<Self> {
        // Entry arrays are page-aligned mappings like the data, returned to the kernel on drop.
        Ok(Chunk { data: AlignedBuf::new(plan.chunk_capacity)?, entries: AlignedBuf::new(plan.chunk_records * 16)? })
    }
}

/// Chunks let go of: kept mapped until the sort's prefault threads have stopped (see
/// [`Prefault`]'s contract), then unmapped together.
type Retired = std::sync::Mutex<Vec<Chunk>>;

/// The buffers of the sort phase of records. The fields drop in order: the prefault threads stop
/// before the buffers they touch go (the chunks only to their [`Retired`]).
struct PhaseBuffers<'r> {
    /// Faults in a known input's buffers (and the writers') ahead of the reads; stopped before the
    /// writers start.
    prefault: Option<Prefault>,
    /// Faults in a stream's chunk a window of records ahead of its reader.
    ahead: Option<PrefaultAhead>,
    /// The kernel's scratch.
    scratch: AlignedBuf,
    /// The chunk read next while a run's chunk is written, when the plan holds two.
    spare: Option<Kept<'r>>,
    /// The chunk being read.
    chunk: Kept<'r>,
}

/// A chunk that goes to its [`Retired`] when dropped, on any thread and any path, instead of
/// being unmapped there.
struct Kept<'r> {
    chunk: Option<Chunk>,
    retired: &'r Retired,
}

impl<'r> Kept<'r> {
    fn new(chunk: Chunk, retired: &'r Retired) -> Self {
        Kept { chunk: Some(chunk), retired }
    }
}

impl std::ops::Deref for Kept<'_> {
    type Target = Chunk;
    fn deref(&self) -> &Chunk {
        self.chunk.as_ref().expect("a kept chunk is present until dropped")
    }
}

impl std::ops::DerefMut for Kept<'_> {
    fn deref_mut(&mut self) -> &mut Chunk {
        self.chunk.as_mut().expect("a kept chunk is present until dropped")
    }
}

impl Drop for Kept<'_> {
    fn drop(&mut self) {
        if let Some(c) = self.chunk.take() {
            self.retired.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push(c);
        }
    }
}

/// The runs of a sort that spills, and the one being written on a thread of its own.
struct Spiller<'scope, 'k> {
    writing: Option<RunWriting<'scope, 'k>>,
    runs: Vec<Run>,
    record_size: usize,
}

impl<'scope, 'k: 'scope> Spiller<'scope, 'k> {
    /// Makes the chunk of `b`, its `n` records sorted in `batches`, a run: written on a thread of
    /// `scope` while the next chunk is read into the spare when the plan holds two, else here and
    /// now. Returns the buffers with the chunk to read next.
    fn spill(
        &mut self,
        scope: &'scope std::thread::Scope<'scope, '_>,
        mut b: PhaseBuffers<'k>,
        batches: BatchSorter<'k>,
        n: usize,
        store: &mut TempStore,
        plan: &MemoryPlan,
    ) -> Result<PhaseBuffers<'k>> {
        // The run before this one must be written before its chunk is read into (and before this
        // run's writer starts: a failed join leaves none behind).
        if let Some(done) = self.writing.take() {
            b.spare = Some(done.join(&mut self.runs)?);
        }
        let (run, w) = store.create_run((n * self.record_size) as u64, plan.write_block, plan.write_buffers)?;
        let job = RunJob { run, writer: w, chunk: b.chunk, batches, records: n };
        match b.spare.take() {
            Some(next) => {
                b.chunk = next;
                self.writing = Some(RunWriting::start(scope, job)?);
            }
            None => {
                let (back, run) = job.write();
                b.chunk = back;
                self.runs.push(run?);
            }
        }
        Ok(b)
    }

    /// The runs, once the last is written.
    fn finish(mut self) -> Result<Vec<Run>> {
        if let Some(done) = self.writing.take() {
            done.join(&mut self.runs)?;
        }
        Ok(self.runs)
    }
}

/// A sorted chunk (its batches sorted) to be written as a run.
struct RunJob<'k> {
    run: Run,
    writer: RunWriter,
    chunk: Kept<'k>,
    batches: BatchSorter<'k>,
    records: usize,
}

impl<'k> RunJob<'k> {
    /// Merges the chunk's batches into its run and waits for the writes: the chunk back, and the
    /// run or why it failed.
    fn write(self) -> (Kept<'k>, Result<Run>) {
        let RunJob { run, mut writer, mut chunk, batches, records } = self;
        let c: &mut Chunk = &mut chunk;
        let mut merger = batches.merger(&c.entries.as_u128_mut()[..records], c.data.as_slice());
        let wrote = write_merged(&mut writer, &mut merger, records);
        let outcome = writer.finish_after(wrote).map(|()| run);
        (chunk, outcome)
    }
}

/// A run being written on a thread of `'scope` while the next chunk is read.
struct RunWriting<'scope, 'k> {
    handle: std::thread::ScopedJoinHandle<'scope, (Kept<'k>, Result<Run>)>,
}

impl<'scope, 'k: 'scope> RunWriting<'scope, 'k> {
    /// Starts writing `job` on a new thread of `scope`.
    fn start<'env>(scope: &'scope std::thread::Scope<'scope, 'env>, job: RunJob<'k>) -> Result<Self> {
        let handle = std::thread::Builder::new()
            .name("xsort-run-writer".into())
            .spawn_scoped(scope, move || job.write())
            .map_err(|e| SortError::Resource(format!("cannot start the run writer thread: {}", xsort_io::os_text(&e))))?;
        Ok(RunWriting { handle })
    }

    /// Waits for the run; gives its chunk back and adds the run to `runs`.
    fn join(self, runs: &mut Vec<Run>) -> Result<Kept<'k>> {
        // A panic dropped the chunk on the writer's thread, into its `Retired`.
        let (chunk, run) = self.handle.join().map_err(|_| SortError::Internal("the run writer panicked".into()))?;
        runs.push(run?);
        Ok(chunk)
    }
}

/// How a mapped input of `n` records is sorted within the plan's budget, which counts its entries
/// and scratch, not its cached bytes (see [`crate::plan`]): whole when its entries and a whole
/// scratch copy fit (32 bytes a record: one parallel sort of them all, the fastest), in batches
/// when its entries and one batch's scratch fit (about 17 bytes a record: batches sorted, then
/// merged into the output, as when records are folded), None when not even those fit.
fn mapped_sort(plan: &MemoryPlan, n: usize, folding: bool) -> Option<ReadStrategy> {
    let whole = (n as u64).saturating_mul(ENTRY_BYTES_PER_RECORD as u64);
    let batched = (n as u64).saturating_add(BatchSorter::batch_len(n) as u64).saturating_mul(16);
    if !folding && plan.mapped_fits(whole) {
        return Some(ReadStrategy::MappedWhole);
    }
    plan.mapped_fits(batched).then_some(ReadStrategy::MappedBatches)
}

/// Sorts all of `entries` (records in `data`) in one parallel pass and writes the records in order
/// through `w`, each piece of the sorted entries gathered in parallel and written while the next is
/// sorted.
fn write_sorted(
    ctx: &SortContext,
    cfg: &SortConfig,
    (data, reformat): (&[u8], Option<&FieldPieces>),
    entries: &mut [u128],
    scratch: &mut [u128],
    w: &mut BlockWriter,
) -> Result<()> {
    let (layout, r) = (ctx.layout, ctx.record_size);
    let out_size = reformat.map_or(r, |pieces| pieces.iter().map(|p| p.1).sum());
    let mut out = RecordSink::new(w);
    sort_while_writing(
        |emit| sort_in_pieces(ctx, data, entries, scratch, emit),
        |piece: &[u128]| {
            cfg.check_cancelled()?;
            out.push_with((piece.len() * out_size) as u64, |from, dst| match reformat {
                Some(pieces) => gather_reformatted(layout, piece, data, (r, pieces), from, dst),
                None => gather(layout, piece, data, r, from, dst),
            })
        },
    )?;
    out.flush()
}

fn describe_key(k: &crate::key::KeySpec) -> String {
    if k.parts().is_empty() {
        return "whole record".into();
    }
    k.parts().iter().map(|p| p.to_string()).collect::<Vec<_>>().join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Format, Input, Output};
    use crate::key::{KeyPart, KeySpec};
    use xsort_io::TempSpace;

    /// A spilled sort that reads the next chunk while the last one's run is written (two chunks)
    /// makes the same runs as one chunk at a time: each run sorted, stable, the input in order.
    #[test]
    fn runs_written_while_the_next_chunk_is_read_hold_the_input() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in");
        // 20,000 records of 100 bytes; 2-byte keys, so many equal keys test stability.
        let n = 20_000usize;
        let mut data = vec![0u8; n * 100];
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for (i, r) in data.chunks_mut(100).enumerate() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            r[..2].copy_from_slice(&x.to_le_bytes()[..2]);
            r[2..10].copy_from_slice(&(i as u64).to_be_bytes());
        }
        std::fs::write(&input, &data).unwrap();
        let mut rec = RecordFormat::new(100);
        rec.key = KeySpec::new(vec![KeyPart::parse_key_bytes("0:2").unwrap()]);
        let mut cfg =
            SortConfig::new(vec![Input::Path(input)], Output::Path(dir.path().join("out")), Format::Records(rec.clone()), 64 << 20);
        cfg.temp_dirs = vec![dir.path().to_path_buf()];
        let mut expected: Vec<&[u8]> = data.chunks(100).collect();
        for buffers in [1, 2] {
            let counters = Arc::default();
            let mut sort = RecordSort::open(&cfg, &rec, &counters).unwrap();
            let mut plan = MemoryPlan::new(cfg.memory_budget, 100, Some(data.len() as u64), 1, cfg.output_io).unwrap();
            (plan.chunk_records, plan.spill_buffers, plan.one_pass) = (3_000, buffers, false);
            plan.chunk_capacity = xsort_io::align_up(3_000 * 100) + crate::input::SLACK_PER_FILE;
            let pool = Arc::new(xsort_io::BufferPool::default());
            let space = TempSpace::new(cfg.temp_dirs.clone(), false).unwrap();
            let mut store = TempStore::new(space, cfg.temp_io, Arc::default(), pool.clone());
            let dest = Destination::open(&cfg, pool, 1).unwrap();
            let Sorted::Spilled { records, runs } = sort.read_and_sort(&plan, &mut store, &dest).unwrap() else {
                panic!("{buffers} chunks: the input fit")
            };
            assert_eq!((records, runs.len()), (n as u64, 7), "{buffers} chunks");
            let mut start = 0;
            for run in &runs {
                let mut buf = AlignedBuf::new(xsort_io::align_up(run.bytes as usize)).unwrap();
                run.open().unwrap().read_at(buf.as_mut_slice(), run.offset).unwrap();
                let got: Vec<&[u8]> = buf.as_slice()[..run.bytes as usize].chunks(100).collect();
                // The run is its chunk of the input, stably sorted by the key.
                let chunk = &mut expected[start..start + got.len()];
                chunk.sort_by_key(|r| [r[0], r[1]]);
                assert!(got == chunk, "{buffers} chunks: the run from record {start} differs");
                start += got.len();
            }
            assert_eq!(start, n);
        }
    }
}
