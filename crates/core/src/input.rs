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
use std::os::unix::io::FromRawFd;
use std::path::PathBuf;
use std::sync::Arc;
use xsort_io::error::os_text;
use xsort_io::{align_down, align_up, page_cache_fraction, read_region, Access, AlignedBuf, DirectFile, IoCounters, ReadConfig, IO_ALIGN};

use crate::config::{Input, IoSettings};

/// Share of an input in the page cache above which it is read buffered rather than direct.
pub const CACHED_ENOUGH: f64 = 0.5;

/// Bytes of a chunk buffer that alignment may waste per input file it holds.
pub const SLACK_PER_FILE: usize = 2 * IO_ALIGN;

enum Source {
    File(RegularFile),
    Stream { file: File, name: PathBuf, carry: Vec<u8>, eof: bool },
}

/// A regular input file. It is opened when its turn comes and closed when read, so that any number
/// of inputs works under a low descriptor limit.
struct RegularFile {
    path: PathBuf,
    direct: bool,
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
    pub fn open(inputs: &[Input], record_size: usize, io: IoSettings, counters: Arc<IoCounters>) -> Result<Self> {
        let sources = inputs.iter().map(|i| open_source(i, record_size, io.direct)).collect::<Result<Vec<_>>>()?;
        let read_cfg = ReadConfig { transfer_size: align_up(io.transfer_size.max(IO_ALIGN)), in_flight: io.count.max(1) };
        Ok(InputSet { sources, current: 0, record_size, read_cfg, counters })
    }

    /// Total bytes of the inputs, if every one is a regular file.
    pub fn known_len(&self) -> Option<u64> {
        self.sources.iter().map(|s| match s {
            Source::File(f) => Some(f.len),
            Source::Stream { .. } => None,
        }).sum()
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

    /// Fills `buf` with as many whole records as fit, at most `max_records`, calling `on_records(data, start, count)` for each
    /// run of newly complete records as they arrive (so keys are extracted while later blocks are
    /// still being read). Returns the number of records read into the chunk.
    pub fn fill(&mut self, buf: &mut AlignedBuf, max_records: usize, mut on_records: impl FnMut(&[u8], usize, usize)) -> Result<usize> {
        let r = self.record_size;
        let cap = buf.capacity();
        let mut at = 0usize;
        let mut left = max_records;
        while self.current < self.sources.len() && at < cap && left > 0 {
            let seg = match &mut self.sources[self.current] {
                Source::File(f) => {
                    if f.pos < f.len {
                        let Some(seg) = fill_from_file(f, r, left, buf, at, self.read_cfg, &self.counters, &mut on_records)? else {
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
            }
        }
        Ok(max_records - left)
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
    // Opened first: a file that cannot be read is reported as such, before anything is said of its
    // size, and what is checked is what was opened.
    let file = File::open(path).map_err(|e| bad(path, format!("cannot read: {}", os_text(&e))))?;
    let md = file.metadata().map_err(|e| bad(path, format!("cannot read: {}", os_text(&e))))?;
    if md.is_dir() {
        return Err(bad(path, "is a directory".into()));
    }
    if !md.is_file() {
        return Ok(Source::Stream { file, name: path.clone(), carry: Vec::new(), eof: false });
    }
    let len = md.len();
    if len % r as u64 != 0 {
        return Err(bad(path, format!("length {len} is not a multiple of the record size {r} ({} bytes left over)", len % r as u64)));
    }
    // Hold no descriptor of a regular file until its turn.
    drop(file);
    // Direct reads would ignore a copy already in memory: read a mostly cached file through the cache.
    let direct = direct && page_cache_fraction(path).is_none_or(|f| f < CACHED_ENOUGH);
    Ok(Source::File(RegularFile { path: path.clone(), direct, file: None, len, pos: 0, boundary: None }))
}

fn open_regular(path: &std::path::Path, direct: bool) -> Result<DirectFile> {
    DirectFile::open(path, Access::Read, direct).map_err(|e| match e {
        xsort_io::IoError::Open { cause, .. } => bad(path, format!("cannot read: {}", os_text(&cause))),
        other => other.into(),
    })
}

fn bad(path: &std::path::Path, problem: String) -> SortError {
    SortError::BadInput { path: path.to_owned(), problem }
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
    cfg: ReadConfig,
    counters: &IoCounters,
    on_records: &mut impl FnMut(&[u8], usize, usize),
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
        f.file = Some(open_regular(&f.path, f.direct)?);
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
    let mut done = 0usize;
    let mut report = |filled: &[u8]| {
        let complete = filled.len().min(at + want).saturating_sub(start) / r;
        if complete > done {
            on_records(filled, start + done * r, complete - done);
            done = complete;
        }
    };
    let got = carried + read_region(file, aligned_pos + carried as u64, &mut buf.as_mut_slice()[..end], at + carried, cfg, counters, &mut report)?;
    if got < want {
        return Err(bad(&f.path, format!("file shrank while being read (expected {} bytes)", f.len)));
    }
    report(&buf.as_slice()[..at + want]); // records wholly inside the carried block, if any
    f.pos += (records * r) as u64;
    let next_block = align_down(f.pos);
    if f.pos < f.len && next_block != f.pos {
        let from = at + (next_block - aligned_pos) as usize;
        let n = (at + got - from).min(IO_ALIGN);
        f.boundary = Some((next_block, buf.as_slice()[from..from + n].to_vec()));
    }
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
        match xsort_io::read_stream(file, &mut dst[filled..filled + want]).map_err(|e| xsort_io::IoError::read(name, e))? {
            0 => {
                *eof = true;
                break;
            }
            n => {
                counters.record(n as u64, t, false);
                filled += n;
            }
        }
    }
    let records = filled / r;
    carry.extend_from_slice(&dst[records * r..filled]);
    if *eof && !carry.is_empty() {
        return Err(bad(name, format!("length is not a multiple of the record size {r} ({} bytes left over)", carry.len())));
    }
    Ok(Segment { start: at, records })
}
