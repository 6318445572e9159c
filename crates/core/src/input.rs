//! Reading the inputs into sort buffers.
//!
//! Inputs are read in order into one large aligned buffer per chunk. A regular file is read with
//! large direct transfers; since O_DIRECT needs aligned file offsets and addresses, each file's
//! records start at `file_position % 4096` past an aligned spot in the buffer, and a few KiB of slack
//! per file keep the records of different files apart. Entries carry buffer offsets, so gaps cost
//! nothing. Pipes and terminals are read sequentially; a partial record at the end of a chunk is
//! carried into the next one.

use crate::error::{Result, SortError};
use std::fs::File;
use std::io::Read;
use std::os::unix::io::FromRawFd;
use std::path::PathBuf;
use std::sync::Arc;
use xsort_io::{align_down, align_up, read_region, Access, AlignedBuf, DirectFile, IoCounters, ReadConfig, IO_ALIGN};

use crate::config::{Input, IoSettings};

/// Bytes of a chunk buffer that alignment may waste per input file it holds.
pub const SLACK_PER_FILE: usize = 2 * IO_ALIGN;

enum Source {
    File { file: DirectFile, len: u64, pos: u64 },
    Stream { file: File, name: PathBuf, carry: Vec<u8>, eof: bool },
}

/// The inputs of a sort and how far they have been read.
pub struct InputSet {
    sources: Vec<Source>,
    current: usize,
    record_size: usize,
    read_cfg: ReadConfig,
    counters: Arc<IoCounters>,
}

/// Where a chunk's records lie in its buffer: consecutive records from `start`, `records` of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// Buffer offset of the first record.
    pub start: usize,
    /// Number of records.
    pub records: usize,
}

impl InputSet {
    /// Opens every input and checks the lengths of regular files now, before any output exists.
    pub fn open(inputs: &[Input], record_size: usize, io: IoSettings, counters: Arc<IoCounters>) -> Result<Self> {
        let sources = inputs.iter().map(|i| open_source(i, record_size, io.direct)).collect::<Result<Vec<_>>>()?;
        let read_cfg = ReadConfig { transfer_size: align_up(io.transfer_size.max(IO_ALIGN)), in_flight: io.count.max(1) };
        Ok(InputSet { sources, current: 0, record_size, read_cfg, counters })
    }

    /// Total bytes of the inputs, if every one is a regular file.
    pub fn known_len(&self) -> Option<u64> {
        self.sources.iter().map(|s| match s {
            Source::File { len, .. } => Some(*len),
            Source::Stream { .. } => None,
        }).sum()
    }

    /// Number of input files.
    pub fn file_count(&self) -> usize {
        self.sources.len()
    }

    /// Whether every input has been read to its end.
    pub fn exhausted(&self) -> bool {
        self.current >= self.sources.len()
    }

    /// Fills `buf` with as many whole records as fit, at most `max_records`, calling `on_records(data, start, count)` for each
    /// run of newly complete records as they arrive (so keys are extracted while later blocks are
    /// still being read). Returns the segments holding the chunk's records, in input order.
    pub fn fill(&mut self, buf: &mut AlignedBuf, max_records: usize, mut on_records: impl FnMut(&[u8], usize, usize)) -> Result<Vec<Segment>> {
        let r = self.record_size;
        let cap = buf.capacity();
        let mut at = 0usize;
        let mut segments = Vec::new();
        let mut left = max_records;
        while self.current < self.sources.len() && at < cap && left > 0 {
            let seg = match &mut self.sources[self.current] {
                Source::File { file, len, pos } => {
                    let Some(seg) = fill_from_file(file, *len, pos, r, left, buf, at, self.read_cfg, &self.counters, &mut on_records)? else { break };
                    if *pos == *len {
                        self.current += 1;
                    }
                    seg
                }
                Source::Stream { file, name, carry, eof } => {
                    let seg = fill_from_stream(file, name, carry, eof, r, left, buf, at, &self.counters)?;
                    if seg.records > 0 {
                        on_records(&buf.as_slice()[..seg.start + seg.records * r], seg.start, seg.records);
                    }
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
                segments.push(seg);
            }
        }
        Ok(segments)
    }
}

fn open_source(input: &Input, r: usize, direct: bool) -> Result<Source> {
    let path = match input {
        Input::Stdin => {
            // SAFETY: dup returns a new descriptor we own (or -1, checked); File takes ownership of it.
            let fd = unsafe { libc::dup(0) };
            if fd < 0 {
                return Err(bad(&PathBuf::from("-"), format!("cannot read standard input: {}", std::io::Error::last_os_error())));
            }
            // SAFETY: fd is a valid descriptor owned by nobody else.
            let file = unsafe { File::from_raw_fd(fd) };
            return Ok(Source::Stream { file, name: "-".into(), carry: Vec::new(), eof: false });
        }
        Input::Path(p) => p,
    };
    let md = std::fs::metadata(path).map_err(|e| bad(path, format!("cannot read: {e}")))?;
    if md.is_dir() {
        return Err(bad(path, "is a directory".into()));
    }
    if !md.is_file() {
        let file = File::open(path).map_err(|e| bad(path, format!("cannot read: {e}")))?;
        return Ok(Source::Stream { file, name: path.clone(), carry: Vec::new(), eof: false });
    }
    let len = md.len();
    if len % r as u64 != 0 {
        return Err(bad(path, format!("length {len} is not a multiple of the record size {r} ({} bytes left over)", len % r as u64)));
    }
    let file = DirectFile::open(path, Access::Read, direct).map_err(|e| match e {
        xsort_io::IoError::Open { source, .. } => bad(path, format!("cannot read: {source}")),
        other => other.into(),
    })?;
    Ok(Source::File { file, len, pos: 0 })
}

fn bad(path: &std::path::Path, problem: String) -> SortError {
    SortError::BadInput { path: path.to_owned(), problem }
}

/// Reads whole records of a regular file from `*pos` into `buf` at aligned offset `at`.
#[allow(clippy::too_many_arguments)]
fn fill_from_file(
    file: &DirectFile,
    len: u64,
    pos: &mut u64,
    r: usize,
    max_records: usize,
    buf: &mut AlignedBuf,
    at: usize,
    cfg: ReadConfig,
    counters: &IoCounters,
    on_records: &mut impl FnMut(&[u8], usize, usize),
) -> Result<Option<Segment>> {
    let aligned_pos = align_down(*pos);
    let skew = (*pos - aligned_pos) as usize;
    let room = buf.capacity() - at;
    let fits = (room.saturating_sub(skew) / r) as u64;
    let records = ((len - *pos) / r as u64).min(fits).min(max_records as u64) as usize;
    if records == 0 {
        return Ok(None);
    }
    let want = skew + records * r;
    let start = at + skew;
    let mut done = 0usize;
    let end = at + align_up(want);
    let got = read_region(file, aligned_pos, &mut buf.as_mut_slice()[..end], at, cfg, counters, |filled| {
        let complete = filled.len().min(at + want).saturating_sub(start) / r;
        if complete > done {
            on_records(filled, start + done * r, complete - done);
            done = complete;
        }
    })?;
    if got < want {
        return Err(bad(file.path(), format!("file shrank while being read (expected {len} bytes)")));
    }
    *pos += (records * r) as u64;
    Ok(Some(Segment { start, records }))
}

/// Reads a stream into `buf` from `at` until the buffer is full or the stream ends; whole records form
/// the segment, a partial record is kept in `carry` for the next chunk.
#[allow(clippy::too_many_arguments)]
fn fill_from_stream(
    file: &mut File,
    name: &std::path::Path,
    carry: &mut Vec<u8>,
    eof: &mut bool,
    r: usize,
    max_records: usize,
    buf: &mut AlignedBuf,
    at: usize,
    counters: &IoCounters,
) -> Result<Segment> {
    let room = (buf.capacity() - at).min(max_records.saturating_mul(r));
    if room < r.max(carry.len()) {
        return Ok(Segment { start: at, records: 0 });
    }
    let dst = &mut buf.as_mut_slice()[at..at + room];
    dst[..carry.len()].copy_from_slice(carry);
    let mut filled = carry.len();
    carry.clear();
    while filled < dst.len() {
        let t = std::time::Instant::now();
        let want = (dst.len() - filled).min(8 << 20);
        match file.read(&mut dst[filled..filled + want]) {
            Ok(0) => {
                *eof = true;
                break;
            }
            Ok(n) => {
                counters.record(n as u64, t, false);
                filled += n;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(xsort_io::IoError::read(name, e).into()),
        }
    }
    let records = filled / r;
    carry.extend_from_slice(&dst[records * r..filled]);
    if *eof && !carry.is_empty() {
        return Err(bad(name, format!("length is not a multiple of the record size {r} ({} bytes left over)", carry.len())));
    }
    Ok(Segment { start: at, records })
}
