//! Reading the inputs into sort buffers.
//!
//! Inputs are read in order into one large aligned buffer per chunk. A regular file is read with
//! large direct transfers; since O_DIRECT needs aligned file offsets and addresses, each file's
//! records start at `file_position % 4096` past an aligned spot in the buffer, and a few KiB of slack
//! per file keep the records of different files apart. Entries carry buffer offsets, so gaps cost
//! nothing. A file's transfers finish in any order, and its records are reported as soon as all
//! their bytes are in (a record across two transfers with the later of them). Pipes and terminals
//! are read sequentially; a partial record at the end of a chunk is carried into the next one.

use crate::error::{Result, SortError};
use std::path::PathBuf;
use std::sync::Arc;
use xsort_io::error::os_text;
use xsort_io::{
    align_down, align_up, page_cache_fraction, read_region, AlignedBuf, DirectFile, Filled, IoCounters, OpenedInput, ReadConfig, Readers,
    RegularInput, IO_ALIGN,
};

use crate::config::{Input, IoSettings};
use crate::reading::{SingleFile, CACHED_ENOUGH};
use crate::select::reader::InputTransform;

/// Bytes of a chunk buffer that alignment may waste per input file it holds.
pub const SLACK_PER_FILE: usize = 2 * IO_ALIGN;

/// A run of consecutive records whose bytes have all been read, as [`InputSet::fill`] reports them.
#[derive(Clone, Copy)]
pub struct Arrived<'a> {
    /// Index of the first of them among the records of the chunk being filled.
    pub first: usize,
    /// How many there are.
    pub count: usize,
    /// Where the first lies in the chunk buffer.
    pub offset: usize,
    /// Their bytes.
    pub records: &'a [u8],
    filled: &'a Filled<'a>,
}

impl<'a> Arrived<'a> {
    /// Bytes of the chunk buffer, when all of them have been read (records of earlier reports
    /// among them); None while some are still being read.
    pub fn bytes(&self, range: std::ops::Range<usize>) -> Option<&'a [u8]> {
        self.filled.get(range)
    }
}

enum Source {
    File(RegularFile),
    Stream { file: xsort_io::StreamReader, name: PathBuf, carry: Vec<u8>, eof: bool },
}

/// A regular input file. Only the first input keeps the descriptor of its first open; the others
/// are opened again (checked to be the same file) when their turn comes and closed when read, so
/// that any number of inputs works under a low descriptor limit.
struct RegularFile {
    input: RegularInput,
    direct: bool,
    /// The share of it in the page cache when opened.
    cached: Option<f64>,
    file: Option<DirectFile>,
    len: u64,
    pos: u64,
    /// The aligned block holding `pos` when a chunk ended inside it: its file offset and bytes. The
    /// next chunk starts from this copy instead of reading the block again.
    boundary: Option<(u64, Vec<u8>)>,
}

/// The inputs of a sort and how far they have been read.
pub struct InputSet {
    sources: Vec<Source>,
    current: usize,
    record_size: usize,
    read_cfg: ReadConfig,
    /// Reader threads for the regular files, started with the inputs (see [`Readers`]).
    readers: Option<Readers>,
    counters: Arc<IoCounters>,
}

/// Where records just read lie in the chunk buffer: consecutive records from `start`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Segment {
    /// Buffer offset of the first record.
    start: usize,
    /// Number of records.
    records: usize,
}

impl InputSet {
    /// Opens every input and checks the lengths of regular files now, before any output exists.
    /// Compressed inputs are decompressed when `decompress` is set (see [`Input::open`]), and
    /// filtered by `select` when given.
    pub fn open(
        inputs: &[Input],
        record_size: usize,
        io: IoSettings,
        (decompress, select): (bool, Option<&Arc<InputTransform>>),
        counters: Arc<IoCounters>,
    ) -> Result<Self> {
        let sources = inputs
            .iter()
            .enumerate()
            .map(|(i, input)| open_source(input, record_size, io.direct, (decompress, select), i == 0))
            .collect::<Result<Vec<_>>>()?;
        let read_cfg = ReadConfig { transfer_size: align_up(io.transfer_size.max(IO_ALIGN)), in_flight: io.count.max(1) };
        let files = sources.iter().any(|s| matches!(s, Source::File(f) if f.len > 0));
        let readers = if files { Some(Readers::start(read_cfg.in_flight)?) } else { None };
        Ok(InputSet { sources, current: 0, record_size, read_cfg, readers, counters })
    }

    /// Total bytes of the inputs, if every one is a regular file.
    pub fn known_len(&self) -> Option<u64> {
        self.sources
            .iter()
            .map(|s| match s {
                Source::File(f) => Some(f.len),
                Source::Stream { .. } => None,
            })
            .sum()
    }

    /// Whether any input is a stream (a pipe, a terminal, a caller's reader): read on the sorting
    /// thread itself, with no reads in flight while records are handled, and of unknown length.
    pub fn any_stream(&self) -> bool {
        self.sources.iter().any(|s| matches!(s, Source::Stream { .. }))
    }

    /// The only input, when it is a non-empty regular file (for a mapped strategy).
    pub fn single_file(&mut self) -> Result<Option<SingleFile>> {
        let [Source::File(f)] = &mut self.sources[..] else { return Ok(None) };
        let cached = f.cached;
        let (len, path) = (f.len, f.input.path().to_owned());
        SingleFile::of(f.input.file().map_err(cannot_read)?, len, &path, cached)
    }

    /// Every input as a run of a merge of presorted inputs (Nsort's `-merge`): a regular file read
    /// in place, a stream copied into the temp store first; each checked for order by the merge
    /// that reads it.
    pub fn take_runs(&mut self, store: &mut crate::runs::TempStore, block: usize) -> Result<Vec<crate::runs::Run>> {
        let mut runs = Vec::with_capacity(self.sources.len());
        for source in self.sources.drain(..) {
            let (mut run, name) = match source {
                Source::File(mut f) => {
                    f.input.release();
                    (crate::runs::Run::input(f.input.path().to_owned(), f.len), f.input.path().to_owned())
                }
                Source::Stream { mut file, name, .. } => (store.spool(&mut file, &name, block, 2)?, name),
            };
            run.order_check = Some(name);
            runs.push(run);
        }
        Ok(runs)
    }

    /// Number of input files.
    pub fn file_count(&self) -> usize {
        self.sources.len()
    }

    /// Whether every input has been read to its end.
    pub fn exhausted(&self) -> bool {
        // Files still ahead that hold nothing (empty ones) do not count.
        self.sources[self.current.min(self.sources.len())..].iter().all(|s| matches!(s, Source::File(f) if f.pos == f.len))
    }

    /// Fills `buf` with as many whole records as fit, at most `max_records`, calling `on_records` for
    /// each run of records as soon as all their bytes have been read, in whatever order reads finish
    /// (so keys are extracted while other blocks are still being read). Returns the number of
    /// records read into the chunk.
    pub fn fill(&mut self, buf: &mut AlignedBuf, max_records: usize, mut on_records: impl FnMut(&Arrived)) -> Result<usize> {
        let r = self.record_size;
        let cap = buf.capacity();
        let mut at = 0usize;
        let mut left = max_records;
        while self.current < self.sources.len() && at < cap && left > 0 {
            // Records of this segment follow those of the segments before it in the chunk.
            let before = max_records - left;
            let on_records = &mut |a: &Arrived| on_records(&Arrived { first: before + a.first, ..*a });
            let seg = match &mut self.sources[self.current] {
                Source::File(f) => {
                    if f.pos < f.len {
                        let readers = self.readers.as_ref().ok_or_else(|| SortError::Internal("no reader threads".into()))?;
                        let Some(seg) = fill_from_file(f, r, left, buf, at, (readers, self.read_cfg), &self.counters, on_records)? else {
                            break; // chunk full
                        };
                        if f.pos == f.len {
                            f.file = None;
                            self.current += 1;
                        }
                        seg
                    } else {
                        self.current += 1; // an empty file
                        continue;
                    }
                }
                Source::Stream { file, name, carry, eof } => {
                    let seg = fill_from_stream(file, name, carry, eof, r, left, buf, at, &self.counters, on_records)?;
                    if *eof {
                        self.current += 1;
                    } else if seg.records == 0 {
                        break; // chunk full
                    }
                    seg
                }
            };
            if seg.records > 0 {
                left -= seg.records;
                at = align_up(seg.start + seg.records * r);
            }
        }
        Ok(max_records - left)
    }
}

/// Opens one input (every input is opened once, here; see [`xsort_io::input`]). A regular file
/// other than the first gives its descriptor back until its turn, so that any number of inputs
/// works under a low descriptor limit.
fn open_source(
    input: &Input,
    r: usize,
    direct: bool,
    (decompress, select): (bool, Option<&Arc<InputTransform>>),
    first: bool,
) -> Result<Source> {
    let mut reg = match input.open(decompress, select).map_err(cannot_read)? {
        OpenedInput::Stream(s) => return Ok(Source::Stream { file: s.file, name: s.name, carry: Vec::new(), eof: false }),
        OpenedInput::Regular(reg) => reg,
    };
    let (len, path) = (reg.len(), reg.path().to_owned());
    if len % r as u64 != 0 {
        let left = len % r as u64;
        let problem = format!("length {len} is not a multiple of the record size {r} ({left} bytes left over)");
        return Err(SortError::BadInput { path, offset: Some(len - left), problem });
    }
    // Direct reads would ignore a copy already in memory: read a mostly cached file through the cache.
    let cached = page_cache_fraction(reg.file().map_err(cannot_read)?);
    let direct = direct && cached.is_none_or(|f| f < CACHED_ENOUGH);
    if !first {
        reg.release();
    }
    Ok(Source::File(RegularFile { input: reg, direct, cached, file: None, len, pos: 0, boundary: None }))
}

/// An input that cannot be opened, in the sort's words ("is a directory" for a directory).
fn cannot_read(e: xsort_io::IoError) -> SortError {
    match e {
        xsort_io::IoError::Open { path, cause } if cause.raw_os_error() == Some(libc::EISDIR) => bad(&path, "is a directory".into()),
        xsort_io::IoError::Open { path, cause } => bad(&path, format!("{}{}", crate::error::UNREADABLE, os_text(&cause))),
        other => other.into(),
    }
}

/// The error for an input that holds less than its size said when it was opened.
pub(crate) fn shrank(path: &std::path::Path, expected: u64) -> SortError {
    bad(path, format!("file shrank while being read (expected {expected} bytes)"))
}

fn bad(path: &std::path::Path, problem: String) -> SortError {
    SortError::BadInput { path: path.to_owned(), offset: None, problem }
}

/// Reads whole records of a regular file from its position into `buf` at aligned offset `at`: the
/// records start `pos % 4096` bytes in, because direct reads need aligned file offsets. Returns None
/// when not one more record fits.
#[allow(clippy::too_many_arguments)]
fn fill_from_file(
    f: &mut RegularFile,
    r: usize,
    max_records: usize,
    buf: &mut AlignedBuf,
    at: usize,
    (readers, cfg): (&Readers, ReadConfig),
    counters: &IoCounters,
    on_records: &mut impl FnMut(&Arrived),
) -> Result<Option<Segment>> {
    let aligned_pos = align_down(f.pos);
    let skew = (f.pos - aligned_pos) as usize;
    let room = buf.capacity() - at;
    let fits = (room.saturating_sub(skew) / r) as u64;
    let records = ((f.len - f.pos) / r as u64).min(fits).min(max_records as u64) as usize;
    if records == 0 {
        return Ok(None);
    }
    if f.file.is_none() {
        f.file = Some(f.input.take_direct(f.direct).map_err(cannot_read)?);
    }
    let file = f.file.as_ref().ok_or_else(|| SortError::Internal("input not open".into()))?;
    let want = skew + records * r;
    let start = at + skew;
    let end = at + align_up(want);
    // The block this chunk starts in may have been read by the previous chunk already.
    let carried = match f.boundary.take() {
        Some((off, bytes)) if off == aligned_pos => {
            buf.as_mut_slice()[at..at + bytes.len()].copy_from_slice(&bytes);
            bytes.len()
        }
        _ => 0,
    };
    let segment = start..at + want;
    // Records in the carried block need no read; the others arrive with the blocks they end in.
    report_complete(&Filled::whole(&buf.as_slice()[..at + carried]), segment.clone(), r, on_records);
    let got = carried
        + read_region(
            readers,
            file,
            aligned_pos + carried as u64,
            &mut buf.as_mut_slice()[..end],
            at + carried,
            cfg,
            counters,
            |filled| report_complete(filled, segment.clone(), r, on_records),
        )?;
    if got < want {
        return Err(shrank(f.input.path(), f.len));
    }
    f.pos += (records * r) as u64;
    let next_block = align_down(f.pos);
    if f.pos < f.len && next_block != f.pos {
        let from = at + (next_block - aligned_pos) as usize;
        let n = (at + got - from).min(IO_ALIGN);
        f.boundary = Some((next_block, buf.as_slice()[from..from + n].to_vec()));
    }
    Ok(Some(Segment { start, records }))
}

/// Reports the records of `segment` (buffer positions, `r` bytes each) that the block just filled
/// completes: those it overlaps whose bytes are now all filled. A record is complete once, when the
/// last block it lies in arrives, so each is reported exactly once.
fn report_complete(filled: &Filled, segment: std::ops::Range<usize>, r: usize, on_records: &mut impl FnMut(&Arrived)) {
    let just = filled.just_filled();
    let (lo, hi) = (just.start.max(segment.start), just.end.min(segment.end));
    if lo >= hi {
        return;
    }
    let at = |k: usize| segment.start + k * r;
    let (mut first, mut end) = ((lo - segment.start) / r, (hi - segment.start).div_ceil(r));
    // Only the records at either edge can lie partly in blocks still being read.
    if filled.get(at(first)..at(first + 1)).is_none() {
        first += 1;
    }
    if end > first && filled.get(at(end - 1)..at(end)).is_none() {
        end -= 1;
    }
    if let Some(records) = filled.get(at(first)..at(end)).filter(|_| end > first) {
        on_records(&Arrived { first, count: end - first, offset: at(first), records, filled });
    }
}

/// Reads a stream into `buf` from `at` until the buffer is full or the stream ends; whole records form
/// the segment, a partial record is kept in `carry` for the next chunk. Records are reported to
/// `on_records` as each read completes them, so that their keys are extracted (and the buffer
/// faulted in ahead of them) while the stream is still being read.
#[allow(clippy::too_many_arguments)]
fn fill_from_stream(
    file: &mut xsort_io::StreamReader,
    name: &std::path::Path,
    carry: &mut Vec<u8>,
    eof: &mut bool,
    r: usize,
    max_records: usize,
    buf: &mut AlignedBuf,
    at: usize,
    counters: &IoCounters,
    on_records: &mut impl FnMut(&Arrived),
) -> Result<Segment> {
    let room = (buf.capacity() - at).min(max_records.saturating_mul(r));
    if room < r.max(carry.len()) {
        return Ok(Segment { start: at, records: 0 });
    }
    buf.as_mut_slice()[at..at + carry.len()].copy_from_slice(carry);
    let mut filled = carry.len();
    carry.clear();
    let mut reported = 0;
    while filled < room {
        let t = std::time::Instant::now();
        let want = (room - filled).min(8 << 20);
        let dst = &mut buf.as_mut_slice()[at + filled..at + filled + want];
        match xsort_io::read_stream(file, dst).map_err(|e| xsort_io::IoError::read(name, e))? {
            0 => {
                *eof = true;
                break;
            }
            n => {
                counters.record(n as u64, t, false);
                filled += n;
                report_read(buf, at, r, filled, &mut reported, on_records);
            }
        }
    }
    // A record carried whole from the last chunk (its partial record and the byte read to look
    // ahead, as with 1-byte records) that no read completed: the stream ended, or the chunk had
    // room for that record alone.
    report_read(buf, at, r, filled, &mut reported, on_records);
    if filled == room && !*eof {
        // A chunk planned for exactly the expected length is full: whether the stream has ended
        // decides between one pass and a spill, so look one byte ahead (carried over: the carry
        // stays within a record, so the next chunk always takes it).
        let mut ahead = [0u8; 1];
        let t = std::time::Instant::now();
        match xsort_io::read_stream(file, &mut ahead).map_err(|e| xsort_io::IoError::read(name, e))? {
            0 => *eof = true,
            n => {
                counters.record(n as u64, t, false);
                carry.extend_from_slice(&ahead[..n]);
            }
        }
    }
    let records = filled / r;
    let partial = buf.as_slice()[at + records * r..at + filled].to_vec();
    carry.splice(0..0, partial);
    if *eof && !carry.is_empty() {
        return Err(bad(name, format!("length is not a multiple of the record size {r} ({} bytes left over)", carry.len())));
    }
    Ok(Segment { start: at, records })
}

/// Reports the records of a stream's segment at `at` that its first `filled` bytes complete, past
/// the `reported` ones.
fn report_read(buf: &AlignedBuf, at: usize, r: usize, filled: usize, reported: &mut usize, on_records: &mut impl FnMut(&Arrived)) {
    let complete = filled / r;
    if complete > *reported {
        let read = &buf.as_slice()[..at + complete * r];
        let (offset, count) = (at + *reported * r, complete - *reported);
        on_records(&Arrived { first: *reported, count, offset, records: &read[offset..], filled: &Filled::whole(read) });
        *reported = complete;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stream's record carried whole into the next chunk (a record size of 1: the byte read to
    /// look past a full chunk) is reported even when no read completes it, because the stream ends
    /// there or because the chunk has room for that record alone.
    #[test]
    fn a_record_carried_whole_from_a_stream_is_reported() {
        for (data, chunks) in [(&b"cab"[..], &[2, 1][..]), (b"cab", &[2, 2]), (b"dcbae", &[2, 1, 2])] {
            let reader: xsort_io::StreamReader = Box::new(std::io::Cursor::new(data.to_vec()));
            let input = Input::Reader(crate::config::Handoff::new(reader, "(bytes)"));
            let io = IoSettings { direct: false, transfer_size: 4096, count: 1 };
            let mut set = InputSet::open(&[input], 1, io, (true, None), Arc::default()).unwrap();
            let mut buf = AlignedBuf::new(4096).unwrap();
            let mut done = 0;
            for &max in chunks {
                let mut seen = vec![None; max];
                let n = set.fill(&mut buf, max, |a| (0..a.count).for_each(|k| seen[a.first + k] = Some(a.records[k]))).unwrap();
                let expected: Vec<_> = data[done..(done + max).min(data.len())].iter().map(|&b| Some(b)).collect();
                assert_eq!((n, &seen[..n]), (expected.len(), &expected[..]), "{data:?} in chunks of {chunks:?}");
                done += n;
            }
            assert_eq!(done, data.len());
            assert!(set.exhausted());
        }
    }

    /// Records straddle the 4 KiB transfers and the files' boundaries; however the reads finish,
    /// every record of the chunk is reported once, at its index, with its own bytes.
    #[test]
    fn every_record_arrives_once_with_its_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let r = 100;
        let record = |i: usize| (0..r).map(|b| (i * 7 + b) as u8).collect::<Vec<u8>>();
        let sizes = [1000, 0, 37, 413];
        let mut inputs = Vec::new();
        let mut expect = Vec::new();
        for (f, &n) in sizes.iter().enumerate() {
            let recs: Vec<Vec<u8>> = (0..n).map(|i| record(expect.len() + i)).collect();
            let path = dir.path().join(format!("in{f}"));
            std::fs::write(&path, recs.concat()).unwrap();
            inputs.push(Input::Path(path));
            expect.extend(recs);
        }
        for in_flight in [1, 4] {
            let io = IoSettings { direct: false, transfer_size: 4096, count: in_flight };
            let mut set = InputSet::open(&inputs, r, io, (true, None), Arc::default()).unwrap();
            let mut buf = AlignedBuf::new(expect.len() * r + 4 * SLACK_PER_FILE).unwrap();
            let mut seen = vec![0u32; expect.len()];
            let n = set
                .fill(&mut buf, expect.len(), |a| {
                    assert_eq!(a.records.len(), a.count * r);
                    assert_eq!(a.bytes(a.offset..a.offset + a.count * r), Some(a.records));
                    for k in 0..a.count {
                        assert_eq!(&a.records[k * r..(k + 1) * r], &expect[a.first + k][..], "record {}", a.first + k);
                        seen[a.first + k] += 1;
                    }
                })
                .unwrap();
            assert_eq!(n, expect.len());
            assert!(seen.iter().all(|&s| s == 1), "{in_flight} in flight: {seen:?}");
            assert!(set.exhausted());
        }
    }
}
