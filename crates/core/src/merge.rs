//! K-way merge of sorted runs with a loser tree and read-ahead per run.
//!
//! Each run has the block being consumed and the next one or more (the shape's depth), already
//! requested from the read service, so the merge reads in large transfers while it compares, and
//! with several requests queued the service keeps every one of its reads busy. Records that straddle two
//! blocks are assembled in a staging buffer. Runs hold fixed-size records or delimited lines (see
//! [`Framing`]). Each head's key prefix is cached as a u128, so most comparisons are one integer
//! compare; ties in the prefix fall back to the full order, then to the run index, which keeps the
//! merge stable (runs are numbered in input order).

use crate::compress::{Compressor, Decompression};
use crate::config::IoSettings;
use crate::error::{Result, SortError};
use crate::framing::{Framing, RecordOrder, Splitter};
use crate::plan::{MemoryPlan, MergeShape};
use crate::runs::{RecordSink, Run, TempStore};
use crate::temp_codec::RunDecoder;
use crossbeam_channel::Receiver;
use std::cmp::Ordering;
use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use xsort_io::{AlignedBuf, DirectFile, ReadService};
use xsort_kernels::prefetch::prefetch_record_l1;
use xsort_kernels::LoserTree;

type Pending = Receiver<xsort_io::Result<(AlignedBuf, usize)>>;

/// Largest staging buffer a run keeps between records; a longer record's is given back.
const STAGING_KEEP: usize = 1 << 20;

/// A record assembled from the blocks it straddles. Its memory is mapped and grows by moving pages
/// ([`AlignedBuf::grow`]), never by copying into a new allocation: a 50 MB line assembled block by
/// block in a heap vector took its size again in copies and freed chunks the allocator kept.
#[derive(Default)]
struct Staging {
    buf: Option<AlignedBuf>,
    len: usize,
}

impl Staging {
    fn clear(&mut self) {
        self.len = 0;
    }

    fn len(&self) -> usize {
        self.len
    }

    fn as_slice(&self) -> &[u8] {
        self.buf.as_ref().map_or(&[][..], |b| &b.as_slice()[..self.len])
    }

    /// Appends `bytes`; the capacity at least doubles when it grows.
    fn extend(&mut self, bytes: &[u8]) -> Result<()> {
        let need = self.len + bytes.len();
        match &mut self.buf {
            Some(b) if b.capacity() >= need => {}
            Some(b) => b.grow(need.max(2 * b.capacity()))?,
            None => self.buf = Some(AlignedBuf::new(need.max(xsort_io::IO_ALIGN))?),
        }
        let b = self.buf.as_mut().expect("made above");
        b.as_mut_slice()[self.len..need].copy_from_slice(bytes);
        self.len = need;
        Ok(())
    }

    /// Gives the memory back if a long record made it large.
    fn shrink(&mut self) {
        if self.buf.as_ref().is_some_and(|b| b.capacity() > STAGING_KEEP) {
            *self = Staging::default();
        }
    }
}

/// Reads one run record by record.
struct RunCursor {
    run: Run,
    /// The file the run is read from (an input of `-m` is open only while its cursor lives).
    file: Arc<DirectFile>,
    block: usize,
    framing: Framing,
    /// Run-relative offset of the next block to request.
    next_request: u64,
    /// The block being consumed, its run-relative start and valid length.
    cur: Option<AlignedBuf>,
    cur_start: u64,
    cur_len: usize,
    pos: usize,
    /// The blocks in flight, in run order, and their run-relative starts.
    pending: VecDeque<(Pending, u64)>,
    staging: Staging,
    /// The head record: in the current block at this offset and length, or (None) in `staging`.
    head_at: Option<(usize, usize)>,
    /// The head's prefix and whether the run is used up, copied into the merge's dense array.
    key: HeadKey,
    /// For a compressed run, the program decompressing it: its output is read in order.
    decompression: Option<Decompression>,
    /// For a run of zstd frames, its decoder (read in order) and the temp directory, for errors.
    unpacking: Option<(Arc<Mutex<RunDecoder>>, PathBuf)>,
    /// For an input of Nsort's `-merge`: the check of its order.
    check: Option<OrderCheck>,
}

/// What the cursor of an input of Nsort's `-merge` keeps to check that its records are in order:
/// a copy of the record before the head, and where the head is.
struct OrderCheck {
    name: PathBuf,
    prev: Vec<u8>,
    /// Records read so far (the head is the last of them).
    records: u64,
    /// The head's first byte in the input.
    offset: u64,
}

impl OrderCheck {
    /// Notes that `head` is the record after the one kept (its bytes `step` in the input past its
    /// start), failing when it orders before it.
    fn next(&mut self, head: &[u8], step: u64, order: &impl RecordOrder) -> Result<()> {
        self.records += 1;
        if self.records > 1 {
            self.offset += step;
            if order.compare(&self.prev, head) == Ordering::Greater {
                return Err(SortError::MergeMisordered { path: self.name.clone(), record: self.records, offset: self.offset });
            }
        }
        self.prev.clear();
        self.prev.extend_from_slice(head);
        Ok(())
    }
}

impl RunCursor {
    fn open(run: Run, shape: MergeShape, framing: Framing, svc: &ReadService) -> Result<Self> {
        let block = shape.block;
        let file = run.open()?;
        let mut c = RunCursor {
            run,
            file,
            block,
            framing,
            next_request: 0,
            cur: None,
            cur_start: 0,
            cur_len: 0,
            pos: 0,
            pending: VecDeque::new(),
            staging: Staging::default(),
            head_at: None,
            key: HeadKey { prefix: 0, exhausted: false },
            decompression: None,
            unpacking: None,
            check: None,
        };
        c.check = c.run.order_check.clone().map(|name| OrderCheck { name, prev: Vec::new(), records: 0, offset: 0 });
        if let (Some(compressor), true) = (&c.run.compressed, c.run.bytes > 0) {
            c.decompression = Some(compressor.decompress(&c.file)?);
        }
        if let (Some(packed), true) = (&c.run.packed, c.run.bytes > 0) {
            let name = crate::temp_codec::run_name(&c.file);
            let decoder = packed.codec.decoder(c.file.clone(), c.run.offset, &packed.len).map_err(|e| xsort_io::IoError::read(&name, e))?;
            c.unpacking = Some((Arc::new(Mutex::new(decoder)), name));
        }
        if c.run.bytes > 0 {
            // A compressed run is read from its program's pipe or its decoder, whose next bytes go
            // to whichever request a reader serves first: one request in flight at a time keeps
            // them in order.
            let depth = if c.run.is_stream() { 1 } else { shape.depth.max(1) };
            for _ in 0..depth {
                c.request(AlignedBuf::new(block)?, svc)?;
            }
            c.next_block(svc, Some(AlignedBuf::new(block)?))?;
        }
        Ok(c)
    }

    fn request(&mut self, buf: AlignedBuf, svc: &ReadService) -> Result<()> {
        if self.next_request < self.run.bytes {
            let rest = (self.run.bytes - self.next_request) as usize;
            let rx = match (&self.decompression, &self.unpacking) {
                // A stream is asked for exactly what is left, never for bytes beyond the run.
                (Some(d), _) => svc.request_stream(d.output(), d.name(), rest.min(self.block), buf)?,
                (None, Some((decoder, name))) => svc.request_stream(decoder.clone(), name, rest.min(self.block), buf)?,
                // The last block of a run asks only for the run's rest (aligned), not the next extent's data.
                (None, None) => {
                    svc.request(self.file.clone(), self.run.offset + self.next_request, xsort_io::align_up(rest).min(self.block), buf)?
                }
            };
            self.pending.push_back((rx, self.next_request));
            self.next_request += self.block as u64;
        }
        Ok(())
    }

    /// Makes the block in flight current and sends the finished one (or `spare`) to be refilled.
    fn next_block(&mut self, svc: &ReadService, spare: Option<AlignedBuf>) -> Result<()> {
        let (rx, start) = self.pending.pop_front().ok_or_else(|| SortError::Internal("merge read past the end of a run".into()))?;
        let (buf, n) = rx.recv().map_err(|_| SortError::Internal("read service vanished".into()))??;
        let len = (n as u64).min(self.run.bytes - start) as usize;
        if len == 0 {
            if let (Some(d), Some(c)) = (self.decompression.take(), &self.run.compressed) {
                // The program's failure explains a short run; a success here is still a short run.
                d.finish(c)?;
                return Err(SortError::Program(format!("compress program '{} -d' gave back less than was compressed", c.program())));
            }
            if let Some((decoder, name)) = &self.unpacking {
                return Err(self.short_packed_run(decoder, name, start));
            }
            return Err(SortError::Internal(format!("run in {} is shorter than expected", self.file.path().display())));
        }
        let old = self.cur.replace(buf);
        (self.cur_start, self.cur_len, self.pos) = (start, len, 0);
        if let Some(b) = old.or(spare) {
            self.request(b, svc)?;
        }
        Ok(())
    }

    /// The error of a run of zstd frames that decoded to fewer bytes than were written (whole
    /// frames lost: the disk gave back less than was written).
    fn short_packed_run(&self, decoder: &Mutex<RunDecoder>, name: &std::path::Path, got: u64) -> SortError {
        let taken = decoder.lock().map_or(0, |d| d.taken());
        let what = format!(
            "truncated zstd data in a temp run: it ends at byte {taken}, after {got} of its {} bytes (the disk gave back less than was written)",
            self.run.bytes
        );
        SortError::from(xsort_io::IoError::read(name, std::io::Error::new(std::io::ErrorKind::InvalidData, what)))
    }

    fn at_run_end(&self) -> bool {
        self.cur_start + self.pos as u64 == self.run.bytes
    }

    fn block_bytes(&self) -> &[u8] {
        self.cur.as_ref().map_or(&[][..], |c| &c.as_slice()[self.pos..self.cur_len])
    }

    /// Moves to the next record.
    fn advance(&mut self, order: &impl RecordOrder, svc: &ReadService) -> Result<()> {
        // The head just emitted is no longer needed: a long one's staging memory goes back now
        // rather than staying with this run for the rest of the merge.
        self.staging.shrink();
        if self.run.bytes == 0 || self.at_run_end() {
            self.key.exhausted = true;
            if let (Some(d), Some(c)) = (self.decompression.take(), &self.run.compressed) {
                d.finish(c)?;
            }
            return Ok(());
        }
        match self.framing {
            Framing::Fixed(r) if self.pos + r <= self.cur_len => {
                self.head_at = Some((self.pos, r));
                self.pos += r;
            }
            Framing::Fixed(r) => self.stage_fixed(r, svc)?,
            Framing::Delimited(s) => match s.first_end(self.block_bytes(), 0) {
                Some(i) => {
                    self.head_at = Some((self.pos, i));
                    self.pos += i + 1;
                }
                None => self.stage_delimited(s, svc)?,
            },
        }
        self.key.prefix = order.prefix(self.head());
        if let Some(mut check) = self.check.take() {
            // The step from the record before: its bytes, and its terminator.
            let step = check.prev.len() as u64 + u64::from(matches!(self.framing, Framing::Delimited(_)));
            check.next(self.head(), step, order)?;
            self.check = Some(check);
        }
        self.prefetch_next();
        Ok(())
    }

    /// Asks the CPU to fetch the record after the head while other runs' records are merged. With
    /// many runs the hardware prefetcher loses track of their streams, and each head would be a
    /// cache miss when it is keyed and again when it is copied out: with 141 runs, copying records
    /// into the output took most of the merge's time.
    #[inline]
    fn prefetch_next(&self) {
        let Some(cur) = &self.cur else { return };
        let bytes = &cur.as_slice()[..self.cur_len];
        // The key and a short record whole (up to 256 bytes); the hardware prefetcher follows a
        // longer one as it is copied. A line's length is not known until it is found.
        let len = match self.framing {
            Framing::Fixed(r) => r,
            Framing::Delimited(_) => usize::MAX,
        };
        prefetch_record_l1(bytes, self.pos, len);
    }

    /// Assembles a fixed-size record that straddles blocks.
    fn stage_fixed(&mut self, r: usize, svc: &ReadService) -> Result<()> {
        self.staging.clear();
        while self.staging.len() < r {
            if self.pos == self.cur_len {
                if self.at_run_end() {
                    // An input of -merge read as a stream (standard input, a filtered file) was
                    // copied whole: its last record is partial.
                    if let Some(check) = &self.check {
                        let problem = format!("its length is not a multiple of the record size {r} (its last record is partial)");
                        return Err(SortError::BadInput { path: check.name.clone(), offset: None, problem });
                    }
                    return Err(SortError::Internal(format!("run in {} ends inside a record", self.file.path().display())));
                }
                self.next_block(svc, None)?;
            }
            let n = (r - self.staging.len()).min(self.cur_len - self.pos);
            let from = self.pos;
            self.pos += n;
            let cur = self.cur.as_ref().ok_or_else(|| SortError::Internal("no current block".into()))?;
            self.staging.extend(&cur.as_slice()[from..from + n])?;
        }
        self.head_at = None;
        Ok(())
    }

    /// Assembles a line that straddles blocks (a run's last line may lack its terminator).
    fn stage_delimited(&mut self, splitter: Splitter, svc: &ReadService) -> Result<()> {
        self.staging.clear();
        let mut finder = splitter.finder();
        loop {
            let avail = self.cur.as_ref().map_or(&[][..], |c| &c.as_slice()[self.pos..self.cur_len]);
            let found = finder.find(avail);
            let n = found.unwrap_or(avail.len());
            self.staging.extend(&avail[..n])?;
            self.pos += n;
            if found.is_some() {
                self.pos += 1;
                break;
            }
            if self.at_run_end() {
                break;
            }
            self.next_block(svc, None)?;
        }
        self.head_at = None;
        Ok(())
    }

    #[inline]
    fn head(&self) -> &[u8] {
        match (self.head_at, &self.cur) {
            (Some((at, len)), Some(cur)) => &cur.as_slice()[at..at + len],
            _ => self.staging.as_slice(),
        }
    }
}

/// What a comparison of two runs' heads reads first, kept in one dense array beside the cursors:
/// with a hundred runs or more, the cursors themselves span more than the L1 cache, and a replay of
/// the tree reads two of them per level.
#[derive(Clone, Copy)]
struct HeadKey {
    prefix: u128,
    exhausted: bool,
}

/// Strict order of two runs' heads; exhausted runs last, ties by run index.
#[inline]
fn less(keys: &[HeadKey], c: &[RunCursor], order: &impl RecordOrder, exact: bool, a: usize, b: usize) -> bool {
    let (x, y) = (keys[a], keys[b]);
    if x.exhausted || y.exhausted {
        return !x.exhausted;
    }
    let o = x.prefix.cmp(&y.prefix);
    let o = if o == Ordering::Equal && !exact { order.compare(c[a].head(), c[b].head()) } else { o };
    o.then(a.cmp(&b)) == Ordering::Less
}

/// Merges `runs` (sorted, in input order), handing each record to `emit` in order (for lines,
/// without the terminator).
pub fn merge_runs(
    runs: &[Run],
    order: &impl RecordOrder,
    framing: Framing,
    shape: MergeShape,
    svc: &ReadService,
    mut emit: impl FnMut(&[u8]) -> Result<()>,
) -> Result<()> {
    let mut cursors = runs.iter().map(|r| RunCursor::open(r.clone(), shape, framing, svc)).collect::<Result<Vec<_>>>()?;
    for c in &mut cursors {
        c.advance(order, svc)?;
    }
    let mut keys = cursors.iter().map(|c| c.key).collect::<Vec<_>>();
    let exact = order.prefix_is_exact();
    let mut tree = LoserTree::new(cursors.len(), |a, b| less(&keys, &cursors, order, exact, a, b));
    loop {
        let w = tree.winner();
        if keys[w].exhausted {
            break;
        }
        emit(cursors[w].head())?;
        cursors[w].advance(order, svc)?;
        keys[w] = cursors[w].key;
        tree.replay(|a, b| less(&keys, &cursors, order, exact, a, b));
    }
    Ok(())
}

/// What the merge phase did.
#[derive(Clone, Copy, Debug, Default)]
pub struct MergeReport {
    /// Merge levels, the last one into the output included.
    pub levels: u32,
    /// Largest number of runs merged at once.
    pub fan_in: usize,
    /// Largest memory the merge planned for.
    pub memory: u64,
    /// Read-ahead block per run in the last level.
    pub block: usize,
    /// Blocks each run read ahead in the last level.
    pub depth: usize,
}

/// Runs being merged into fewer: their order, format, and where intermediate runs go.
pub struct MergeJob<'a, O: RecordOrder> {
    /// The order.
    pub order: &'a O,
    /// The runs' format.
    pub framing: Framing,
    /// The memory plan (budget, write pool).
    pub plan: &'a MemoryPlan,
    /// The longest record sorted: a merge holds up to one per run (see [`MemoryPlan::merge_shape`]).
    pub longest: u64,
    /// Temp transfers.
    pub temp_io: IoSettings,
    /// The read-ahead service.
    pub svc: &'a ReadService,
    /// The sort's configuration, for its cancel flag.
    pub cfg: &'a crate::config::SortConfig,
}

impl<O: RecordOrder> MergeJob<'_, O> {
    /// Merges intermediate levels until one merge of at most the fan-in remains; returns those runs
    /// and the shape of the final merge. Groups are consecutive runs, which keeps run
    /// order (and so stability).
    pub fn reduce(&self, mut runs: Vec<Run>, store: &mut TempStore, report: &mut MergeReport) -> Result<(Vec<Run>, MergeShape)> {
        let plan = self.plan;
        loop {
            // Each run of zstd frames in a merge holds its decoder beside its blocks, as it holds
            // its head record: the shape plans for both.
            let decoder = runs.iter().filter_map(|r| r.packed.as_ref()).map(|p| p.codec.decoder_memory()).max().unwrap_or(0);
            let per_run = self.longest.saturating_add(decoder);
            let mut shape = plan.merge_shape(runs.len(), self.temp_io, per_run);
            if runs.iter().any(|r| r.compressed.is_some()) {
                // Each compressed run in a merge holds a pipe from its decompressor.
                shape.fan_in = shape.fan_in.min(Compressor::max_fan_in());
            }
            if runs.iter().any(Run::opens_a_file) {
                // Each input of -m holds a descriptor while it is merged: half of those still
                // free, leaving the rest to temp files, the output and compress programs' pipes.
                // Beyond that, inputs are merged in batches into temp runs, as GNU sort does.
                let free = crate::compress::free_descriptors().unwrap_or(usize::MAX);
                shape.fan_in = shape.fan_in.min((free / 2).max(2));
            }
            report.fan_in = report.fan_in.max(shape.fan_in.min(runs.len()));
            report.memory = report.memory.max(plan.merge_bytes(shape.fan_in.min(runs.len()), shape.block, shape.depth, per_run));
            report.levels += 1;
            (report.block, report.depth) = (shape.block, shape.depth);
            if runs.len() <= shape.fan_in {
                return Ok((runs, shape));
            }
            runs = self.merge_level(runs, shape, store)?;
        }
    }

    fn merge_level(&self, runs: Vec<Run>, shape: MergeShape, store: &mut TempStore) -> Result<Vec<Run>> {
        let mut excess = runs.len() - shape.fan_in;
        let mut next = Vec::new();
        let mut i = 0;
        while i < runs.len() {
            let g = (excess + 1).min(shape.fan_in).min(runs.len() - i);
            if g < 2 {
                next.push(runs[i].clone());
                i += 1;
                continue;
            }
            let group = &runs[i..i + g];
            let bytes = group.iter().map(|x| x.bytes).sum::<u64>() + self.missing_terminators(group);
            let (mut run, mut w) = store.create_run(bytes, self.plan.write_block, self.plan.write_buffers)?;
            let mut sink = RecordSink::new(&mut w);
            let mut merged = 0u64;
            let wrote = merge_runs(group, self.order, self.framing, shape, self.svc, |rec| {
                merged += 1;
                if merged.is_multiple_of(crate::engine::CANCEL_CHECK_RECORDS) {
                    self.cfg.check_cancelled()?;
                }
                sink.push_record(rec, self.framing)
            })
            .and_then(|()| sink.flush())
            .map(|()| sink.written());
            run.bytes = w.finish_after(wrote)?;
            group.iter().for_each(|x| store.release(x));
            next.push(run);
            excess -= g - 1;
            i += g;
        }
        Ok(next)
    }

    /// Upper bound of terminators a merge adds to lines that lacked one (runs of `-m` inputs).
    fn missing_terminators(&self, runs: &[Run]) -> u64 {
        match self.framing {
            Framing::Fixed(_) => 0,
            Framing::Delimited(_) => runs.len() as u64,
        }
    }
}
