//! Text lines as the engine sorts them (`crate::engine`): delimited records ordered by GNU sort's
//! rules ([`LineOrder`]).
//!
//! Lines are read in chunks (`reader`) or, for a single file that fits (or is in the page cache and
//! whose line index fits: see [`crate::plan`]), mapped; then indexed and
//! sorted in memory (`chunk`): each line's entry holds a 64-bit prefix of its order (from
//! `RecordOrder::prefix`) and its place, the kernel sorts the entries, and groups of equal
//! prefixes are refined key by key. The kernel hands the sorted entries over in pieces, and each
//! piece is written while the next is sorted. When all the input fits one chunk, the pieces go
//! straight to the output; otherwise each chunk becomes a run on temp space and the runs are merged
//! by the same merge as records (`crate::merge`), with lines as delimited records. `-m` merges the
//! inputs themselves as runs; `-c` checks ([`check`]).

pub mod check;
pub(crate) mod chunk;
pub(crate) mod reader;

use crate::config::{LineFormat, SortConfig};
use crate::engine::{FormatSort, FormatStats, InputShape, Sorted};
use crate::error::{Result, SortError};
use crate::fold::{FoldSink, Folding};
use crate::framing::{Framing, RecordOrder, Splitter};
use crate::merge::MergeReport;
use crate::order::LineOrder;
use crate::output::{sort_while_writing, Destination};
use crate::plan::MemoryPlan;
use crate::reading::{MappedInput, ReadStrategy};
use crate::runs::{RecordSink, Run, TempStore};
use crate::size::format_bytes;
use crate::stats::SortCounters;
use chunk::{ensure_capacity, gather, sort_and_locate, Chunk, BYTES_PER_LINE, MAX_CHUNK_BYTES};
use reader::{LineReader, TextInputs};
use std::cmp::Ordering;
use std::sync::atomic::Ordering as AtomicOrdering;
use std::sync::Arc;
use xsort_io::{AlignedBuf, BlockWriter};

/// What to do with the lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextMode {
    /// Sort them.
    Sort,
    /// Merge inputs that are already sorted (`-m`).
    Merge,
}

/// A sort (or merge) of text lines as the engine drives it ([`crate::engine`]), its inputs opened.
pub(crate) struct LineSort<'a> {
    cfg: &'a SortConfig,
    lines: &'a LineFormat,
    /// The order, its keys that name columns resolved against the header.
    order: LineOrder,
    splitter: Splitter,
    /// The first input's header, written first.
    header: Vec<u8>,
    reader: LineReader,
    folding: Folding,
    counters: &'a Arc<SortCounters>,
    /// The longest line indexed so far, without its terminator.
    longest_line: u64,
    /// The most a chunk held: its lines, their bookkeeping, and what the reader held beside them.
    largest_chunk: u64,
    /// How the input was read, and whether a mapped input was of the page cache (its bytes then not
    /// in the budget).
    read: ReadStrategy,
    mapped_cached: bool,
    /// Bytes of entries and scratch held at most.
    entries_bytes: u64,
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

impl<'a> LineSort<'a> {
    /// Opens every input (checking each) before anything is written.
    pub fn open(cfg: &'a SortConfig, lines: &'a LineFormat, counters: &'a Arc<SortCounters>) -> Result<Self> {
        let splitter = lines.splitter();
        let shape = TextInputs { splitter, header: lines.header, decompress: cfg.decompress, json: lines.order.is_jsonl() };
        let mut reader = LineReader::new(&cfg.inputs, shape, cfg.select.as_ref(), counters.input.clone())?;
        let header = reader.header()?.to_vec();
        let order = lines.order.with_header(first_record(&header, splitter))?;
        let folding = Folding { unique: lines.unique, sums: Vec::new(), mark: lines.mark };
        Ok(LineSort {
            cfg,
            lines,
            order,
            splitter,
            header,
            reader,
            folding,
            counters,
            longest_line: 0,
            largest_chunk: 0,
            read: ReadStrategy::default(),
            mapped_cached: false,
            entries_bytes: 0,
        })
    }

    /// Makes the entries of one chunk of whole lines in `ws` and returns how many lines it has;
    /// None when they are so many that their bookkeeping with the chunk's bytes exceeds `limit`.
    fn index_chunk(&mut self, chunk: Chunk, limit: usize, ws: &mut Workspace, cuts: Option<Vec<usize>>) -> Result<Option<usize>> {
        let Some((n, longest)) = chunk.make_entries(&self.order, &mut ws.entries, limit, cuts)? else {
            return Ok(None);
        };
        self.longest_line = self.longest_line.max(longest as u64);
        ensure_capacity(&mut ws.scratch, n * 16)?;
        self.entries_bytes = self.entries_bytes.max((ws.entries.capacity() + ws.scratch.capacity()) as u64);
        Ok(Some(n))
    }

    /// Sorts the `n` indexed lines of `chunk` and writes them through `writer`, each piece as soon
    /// as it is sorted (see [`sort_and_locate`]); returns the bytes written.
    /// `preamble` goes first.
    fn sort_and_write(&self, chunk: Chunk, n: usize, ws: &mut Workspace, writer: &mut BlockWriter, preamble: &[u8]) -> Result<u64> {
        let (order, method, unique) = (&self.order, self.cfg.method, self.lines.unique);
        let (entries, scratch) = (&mut ws.entries.as_u128_mut()[..n], &mut ws.scratch.as_u128_mut()[..n]);
        let mut out = RecordSink::new(writer);
        out.push(preamble)?;
        // Lines that -u drops take no output bytes: their end is the one before's.
        let mut dropped = 0u64;
        sort_while_writing(
            |emit| sort_and_locate(order, method, unique, chunk, entries, scratch, |locs, len| emit((locs, len))),
            |(locs, len)| {
                if unique {
                    dropped += locs.windows(2).filter(|w| w[0] as u64 == w[1] as u64).count() as u64;
                }
                out.push_with(len, |from, dst| gather(chunk.data, locs, from, dst))
            },
        )?;
        self.counters.records_folded.fetch_add(dropped, std::sync::atomic::Ordering::Relaxed);
        out.flush()?;
        Ok(out.written())
    }

    /// Sorts the `n` indexed lines of `chunk` and passes them one by one through a [`FoldSink`]
    /// into `writer`, each preceded by its Nsort `-match` byte (and with -u's duplicates folded
    /// there), after `preamble`.
    fn sort_and_mark(&self, chunk: Chunk, n: usize, ws: &mut Workspace, writer: &mut BlockWriter, preamble: &[u8]) -> Result<()> {
        let (order, method) = (&self.order, self.cfg.method);
        let (entries, scratch) = (&mut ws.entries.as_u128_mut()[..n], &mut ws.scratch.as_u128_mut()[..n]);
        let mut out = RecordSink::new(writer);
        out.push(preamble)?;
        let mut sink = FoldSink::new(out, order, self.framing(), &self.folding);
        sort_while_writing(
            |emit| sort_and_locate(order, method, false, chunk, entries, scratch, |locs, len| emit((locs, len))),
            |(locs, _)| {
                // Each line's start (top 64 bits) and its end in the piece's output, terminator
                // included (low 64 bits).
                let mut begin = 0u64;
                for &loc in locs {
                    let (start, end) = ((loc >> 64) as usize, loc as u64);
                    let with_terminator = (end - begin) as usize;
                    begin = end;
                    sink.push(&chunk.data[start..start + with_terminator - 1])?;
                }
                Ok(())
            },
        )?;
        sink.finish(self.counters)?;
        Ok(())
    }

    /// Sorts the `n` indexed lines of `chunk` into the output; its size is known (and preallocated)
    /// unless -u drops lines or `-match` marks them.
    fn write_out(&self, plan: &MemoryPlan, dest: &Destination, chunk: Chunk, n: usize, ws: &mut Workspace) -> Result<()> {
        let size = (!self.folding.is_active()).then_some((self.header.len() + chunk.data.len()) as u64);
        let mut w = dest.writer(plan.write_block, plan.write_buffers, self.cfg.output_io, size, true, self.counters.output.clone())?;
        if self.folding.mark.is_some() {
            self.sort_and_mark(chunk, n, ws, &mut w, &self.header)?;
        } else {
            self.sort_and_write(chunk, n, ws, &mut w, &self.header)?;
        }
        w.finish()?;
        Ok(())
    }

    /// A single regular input that ends with a terminator and either fits in memory or is mostly in
    /// the page cache (whatever its size: its pages are the cache's, and only its line index counts
    /// against the budget), mapped rather than read; None when the input is anything else.
    fn map_single_input(&mut self, limit: usize) -> Result<Option<MappedInput>> {
        let Some(file) = self.reader.single_file()? else { return Ok(None) };
        let len = file.len;
        if len >= MAX_CHUNK_BYTES as u64 || (!file.cached && len as usize > limit) {
            return Ok(None);
        }
        // Counting the lines of a mapping touches all its pages; a cached input too big for the
        // budget is mapped only when a sample says that its index may fit.
        if len as usize > limit {
            let index = estimated_lines(&file.file, len, self.lines.terminator).saturating_mul(BYTES_PER_LINE as u64);
            if index > limit as u64 / 4 * 5 || !crate::plan::fits_in_memory(len, index) {
                return Ok(None);
            }
        }
        // A refused mapping is read instead.
        let Some(map) = MappedInput::map(file)? else { return Ok(None) };
        Ok((map.bytes().last() == Some(&self.lines.terminator)).then_some(map))
    }

    /// The bytes of a mapped input past its header, checked as the reader checks what it reads,
    /// and (for CSV records, whose check finds them) the pieces of its parallel passes.
    fn past_header<'m>(&self, map: &'m MappedInput) -> Result<(&'m [u8], Option<Vec<usize>>)> {
        let data = &map.bytes()[self.header.len().min(map.bytes().len())..];
        let header_lines = memchr::memchr_iter(b'\n', &self.header).count() as u64;
        let cuts = self.reader.check_whole(data, header_lines, self.cfg.inputs[0].name(), chunk::piece_count())?;
        Ok((data, cuts))
    }

    /// The mapped fast path: a single input that fits, or is cached, sorted from its mapping into
    /// the output. None when the input is not such a file, or its lines are so many that their
    /// bookkeeping (with the bytes, for an input not cached) overflows the budget (they take the
    /// chunked path).
    fn sort_mapped(&mut self, plan: &MemoryPlan, dest: &Destination, limit: usize, ws: &mut Workspace) -> Result<Option<Sorted>> {
        let Some(map) = self.map_single_input(limit)? else { return Ok(None) };
        let ((data, cuts), cached) = (self.past_header(&map)?, map.cached);
        let chunk = Chunk { data, splitter: self.splitter };
        // The index is checked against the budget with the chunk's bytes: a cached input's are the
        // page cache's, not the budget's, so the check counts the index alone.
        let index_limit = if cached { limit.saturating_add(data.len()) } else { limit };
        let Some(n) = self.index_chunk(chunk, index_limit, ws, cuts)? else { return Ok(None) };
        (self.read, self.mapped_cached) = (ReadStrategy::MappedWhole, cached);
        let held = if cached { 0 } else { data.len() };
        self.largest_chunk = self.largest_chunk.max((held + n * BYTES_PER_LINE) as u64);
        map.intact()?;
        self.counters.input.record(data.len() as u64, map.started, false);
        self.write_out(plan, dest, chunk, n, ws)?;
        map.intact()?;
        Ok(Some(Sorted::Written { records: n as u64, writer: None }))
    }

    /// Reads chunk after chunk, sorting each: a single chunk holding all the input goes straight to
    /// the output, otherwise each becomes a run.
    fn read_and_sort(
        &mut self,
        plan: &MemoryPlan,
        store: &mut TempStore,
        dest: &Destination,
        limit: usize,
        ws: &mut Workspace,
    ) -> Result<Sorted> {
        self.read = ReadStrategy::batches(self.reader.known_len().is_none());
        let known = self.reader.known_len().or(self.cfg.expected_input_bytes);
        let expected = known.map_or(limit, |n| (n as usize).saturating_add(self.cfg.inputs.len() + 1));
        let mut data_buf = AlignedBuf::new(expected.min(limit).max(4096))?;
        // A chunk's lines and bookkeeping leave room for what the reader holds beyond them.
        let room = limit.saturating_sub(reader::read_slack(data_buf.capacity())).max(limit / 2);
        let mut runs = Vec::new();
        let mut total = 0u64;
        loop {
            self.cfg.check_cancelled()?;
            let filled =
                self.reader.fill(&mut data_buf, |bytes, lines| bytes + lines * BYTES_PER_LINE >= room || bytes >= MAX_CHUNK_BYTES / 2)?;
            let chunk = Chunk { data: &data_buf.as_slice()[..filled], splitter: self.splitter };
            // The fill stops at the budget, so the bookkeeping fits (a single huge line aside).
            let n = self.index_chunk(chunk, usize::MAX, ws, None)?.ok_or_else(|| SortError::Internal("chunk over budget".into()))?;
            let held = filled + n * BYTES_PER_LINE + reader::read_slack(data_buf.capacity());
            self.largest_chunk = self.largest_chunk.max(held as u64);
            total += n as u64;
            self.cfg.check_cancelled()?;
            if runs.is_empty() && self.reader.exhausted() {
                self.write_out(plan, dest, chunk, n, ws)?;
                return Ok(Sorted::Written { records: total, writer: None });
            }
            if n > 0 {
                self.counters.spilled.store(true, AtomicOrdering::Relaxed);
                // The run's extent is reserved for every line; -u may leave it shorter.
                let (mut run, mut w) = store.create_run(filled as u64, plan.write_block, plan.write_buffers)?;
                let wrote = self.sort_and_write(chunk, n, ws, &mut w, &[]);
                run.bytes = w.finish_after(wrote)?;
                runs.push(run);
            }
            if self.reader.exhausted() {
                return Ok(Sorted::Spilled { records: total, runs });
            }
        }
    }

    fn plan_block(&self) -> usize {
        xsort_io::align_up(self.cfg.temp_io.transfer_size.clamp(xsort_io::IO_ALIGN, 1 << 20))
    }
}

impl FormatSort for LineSort<'_> {
    type Order = LineOrder;

    fn order(&self) -> &LineOrder {
        &self.order
    }

    fn framing(&self) -> Framing {
        Framing::Delimited(self.splitter)
    }

    fn preamble(&self) -> &[u8] {
        &self.header
    }

    fn folding(&self) -> &Folding {
        &self.folding
    }

    fn input_shape(&self) -> InputShape {
        InputShape { plan_record_size: 1, known_len: self.reader.known_len(), files: self.cfg.inputs.len(), request: 8 << 20 }
    }

    fn sort_or_spill(&mut self, plan: &MemoryPlan, store: &mut TempStore, dest: &Destination) -> Result<Sorted> {
        let pool = (plan.write_block * plan.write_buffers) as u64;
        let limit = plan.budget.saturating_sub(pool).max(64 << 10).min(plan.chunk_data_limit) as usize;
        let mut ws = Workspace::new()?;
        if let Some(sorted) = self.sort_mapped(plan, dest, limit, &mut ws)? {
            return Ok(sorted);
        }
        self.read_and_sort(plan, store, dest, limit, &mut ws)
    }

    /// For `-m`: each input as a run. Regular files are read in place, each opened again only
    /// while it is merged; other inputs (pipes, standard input) are first copied to temp space,
    /// through the descriptor the reader opened them with.
    fn presorted_runs(&mut self, store: &mut TempStore) -> Result<Option<Vec<Run>>> {
        if self.lines.mode != TextMode::Merge {
            return Ok(None);
        }
        let inputs = self.reader.take_inputs()?;
        let mut runs = Vec::with_capacity(inputs.len());
        for input in inputs {
            let name = input.name().to_owned();
            let mut run = match input {
                xsort_io::OpenedInput::Regular(mut r) => {
                    r.release();
                    Run::input(r.path().to_owned(), r.len())
                }
                xsort_io::OpenedInput::Stream(mut s) => store.spool(&mut s.file, &s.name, self.plan_block(), 2)?,
            };
            // Nsort's -merge checks each input's order as it merges it; GNU's -m does not.
            run.order_check = self.cfg.merge_check.then_some(name);
            runs.push(run);
        }
        Ok(Some(runs))
    }

    fn longest_record(&self) -> u64 {
        self.longest_line.max(1)
    }

    fn output_reserve(&self, _records: u64) -> Option<u64> {
        None
    }

    fn stats(&self, plan: &MemoryPlan, lines: u64, runs: u64, merge: &MergeReport) -> FormatStats {
        let bytes = self.counters.input.snapshot().bytes;
        let long_line_needs = long_line_needs(plan, self.largest_chunk, runs, merge, self.longest_record());
        // A cached input sorted from its mapping stays in the page cache: its bytes are not the budget's.
        let held = if self.mapped_cached { 0 } else { bytes };
        FormatStats {
            bytes,
            record_size: 0,
            key: match (self.splitter.csv, self.order.is_jsonl()) {
                (Some(_), _) => "CSV records",
                (None, true) => "JSON lines",
                (None, false) => "text lines",
            }
            .into(),
            // Lines, their bookkeeping and the write pool, up to the budget (a mapped input not in the
            // cache is counted, its pages read in for the sort), or what the longest line needs beyond it.
            memory_planned: (held + lines * BYTES_PER_LINE as u64 + (plan.write_block * plan.write_buffers) as u64)
                .min(plan.budget)
                .max(merge.memory)
                .max(long_line_needs),
            longest_line: self.longest_record(),
            budget_exceeded: (long_line_needs > plan.budget).then(|| {
                let (budget, line, needs) = (format_bytes(plan.budget), format_bytes(self.longest_record()), format_bytes(long_line_needs));
                format!("budget {budget} exceeded: a {line} line needs {needs}")
            }),
            read: self.read,
            entries_bytes: self.entries_bytes,
        }
    }
}

/// The first record of a header (without its terminator): the names of its columns.
pub(crate) fn first_record(header: &[u8], splitter: Splitter) -> &[u8] {
    splitter.first_end(header, 0).map_or(header, |end| &header[..end])
}

/// Bytes read from each of three places of a file (start, middle, end) to estimate its lines.
const LINE_SAMPLE: usize = 256 << 10;

/// The lines of the `len`-byte `file`, estimated from samples of its start, middle and end (0 when
/// they cannot be read: the mapping then counts them).
fn estimated_lines(file: &std::fs::File, len: u64, terminator: u8) -> u64 {
    use std::os::unix::fs::FileExt;
    let mut buf = vec![0u8; LINE_SAMPLE];
    let (mut read, mut lines) = (0u64, 0u64);
    for at in [0, len / 2, len.saturating_sub(LINE_SAMPLE as u64)] {
        let Ok(n) = file.read_at(&mut buf, at) else { return 0 };
        read += n as u64;
        lines += memchr::memchr_iter(terminator, &buf[..n]).count() as u64;
    }
    (lines as u128 * len as u128 / read.max(1) as u128).min(u64::MAX as u128) as u64
}

/// The most the sort held by its plan: the largest chunk (`chunk`: lines, bookkeeping and the
/// reader's slack) with the write pool, and, when runs were merged, the merge's blocks and one
/// longest line per run merged at once (see [`MemoryPlan::merge_shape`]). Chunks end before the
/// line that fills them and merges shrink to fit, so this exceeds the budget only when the
/// longest line does not fit it.
fn long_line_needs(plan: &MemoryPlan, chunk: u64, runs: u64, merge: &MergeReport, longest: u64) -> u64 {
    let pool = (plan.write_block * plan.write_buffers) as u64;
    let merged = if runs > 0 || merge.levels > 0 { plan.merge_bytes(merge.fan_in, merge.block, merge.depth, longest) } else { 0 };
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

    #[inline]
    fn level_bytes<'r>(&self, rec: &'r [u8], level: usize) -> Option<(&'r [u8], bool)> {
        crate::order::LineOrder::level_bytes(self, rec, level)
    }

    fn level_matcher<'a>(&'a self, first: &'a [u8], level: usize) -> crate::framing::Matcher<'a> {
        crate::order::LineOrder::level_matcher(self, first, level)
    }

    #[inline]
    fn level_transform(&self, rec: &[u8], level: usize, out: &mut Vec<u8>) -> Option<bool> {
        crate::order::LineOrder::level_transform(self, rec, level, out)
    }

    fn keys_equal(&self, a: &[u8], b: &[u8], keys: Option<usize>) -> bool {
        crate::order::LineOrder::keys_equal(self, a, b, keys)
    }
}
