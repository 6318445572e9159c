//! A rank's share of the input: byte ranges of its input files, whole records or whole lines, read
//! in chunks for the exchange and sampled for the splitters.
//!
//! Every byte of input has a global position: its offset in the concatenation of all the inputs
//! (shared files in command-line order; node-local files in rank order, then command-line order).
//! Positions order equal keys, so the sort stays stable across ranks.
//!
//! Shared files are cut at byte offsets `T*r/N` of the concatenated length `T`: for records, at the
//! record boundary below; for lines, at the first line start at or after it (a line starts at the
//! start of a file or after a terminator). So each line belongs to the rank whose nominal range
//! holds its first byte, and the ranges cover the input exactly once.
//!
//! Compressed data (gzip, zstd, bzip2, xz, recognised by its first bytes as `xsort` recognises it)
//! has no byte ranges to cut: a shared compressed input is refused. A node-local one is the rank's
//! alone, read whole: the rank decompresses it first, with xsort's own decoders
//! ([`xsort_io::codec::decompress`]), into an unnamed temp file in its temp directory, which then
//! stands for the input (its positions, samples, chunks and mappings are the decompressed bytes').

use anyhow::{bail, Context, Result};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// What is read: fixed-size records or lines.
#[derive(Clone, Copy, Debug)]
pub enum Kind {
    Records(usize),
    Lines(u8),
}

/// An input file.
struct Input {
    path: PathBuf,
    file: File,
    len: u64,
    /// Global position of its first byte.
    base: u64,
}

/// A byte range `[start, end)` of input `input`.
#[derive(Clone, Copy, Debug)]
struct Segment {
    input: usize,
    start: u64,
    end: u64,
}

/// A rank's share.
pub struct Share {
    kind: Kind,
    inputs: Vec<Input>,
    segments: Vec<Segment>,
    /// The segment being read, and the offset reached in it.
    cursor: (usize, u64),
}

/// Bytes read at a time when looking for a line's end.
const PROBE: usize = 64 << 10;

/// An error for a shared compressed input: the ranks read byte ranges of the data itself, which a
/// compressed stream does not allow.
fn refuse_compressed(codec: xsort_io::Codec, path: &Path) -> anyhow::Error {
    anyhow::anyhow!(
        "{}: {} data: xsort-mpi's ranks read byte ranges of shared inputs, which compressed data does not allow; decompress it \
first, or give node-local parts ({{rank}} in the path), which each rank decompresses whole",
        path.display(),
        codec.name()
    )
}

/// Where node-local compressed inputs are decompressed: an unnamed temp file in `dir` each, made
/// by up to `threads` inputs at a time.
pub struct Inflate<'a> {
    pub dir: &'a Path,
    pub threads: usize,
}

/// An input decompressed: its temp file and length.
type Inflated = Result<(File, u64)>;

/// Bytes copied at a time from a decoder into its temp file.
const INFLATE_BLOCK: usize = 1 << 20;

/// Decompresses `file` (the input `path`, in `codec`) into an unnamed temp file in `dir`: the
/// file, at its start, and its length. A decoder's error names the input (`in.gz: truncated gzip
/// data: ...`), as `xsort`'s reader names it.
fn inflate_one(file: File, path: &Path, codec: xsort_io::Codec, dir: &Path) -> Inflated {
    use std::io::{Read, Write};
    let read_error = |e: std::io::Error| anyhow::Error::from(xsort_io::IoError::read(path, e));
    let mut decoded = xsort_io::codec::decompress(codec, Box::new(file)).map_err(read_error)?;
    let cannot = |e: std::io::Error| {
        anyhow::anyhow!("{}: cannot decompress into a temp file in {}: {}", path.display(), dir.display(), xsort_io::os_text(&e))
    };
    let mut temp = tempfile::tempfile_in(dir).map_err(cannot)?;
    let mut buf = vec![0u8; INFLATE_BLOCK];
    let mut len = 0u64;
    loop {
        let n = match decoded.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(read_error(e)),
        };
        temp.write_all(&buf[..n]).map_err(cannot)?;
        len += n as u64;
    }
    Ok((temp, len))
}

impl Share {
    /// Opens `paths`, the first byte of the first at global position 0; compressed ones are
    /// decompressed where `inflate` says, or refused where it is None (shared inputs).
    fn open(paths: &[PathBuf], inflate: Option<&Inflate>) -> Result<Vec<Input>> {
        let mut inputs = Vec::new();
        let mut compressed = Vec::new();
        let mut pos = 0;
        for path in paths {
            let not_regular = || anyhow::anyhow!("{}: not a regular file (the ranks read byte ranges of their inputs)", path.display());
            // Looked at before it is opened: opening a FIFO would wait for a writer.
            if std::fs::metadata(path).is_ok_and(|md| !md.is_file()) {
                return Err(not_regular());
            }
            let file = File::open(path).with_context(|| format!("{}: cannot open", path.display()))?;
            let md = file.metadata().with_context(|| format!("{}: cannot read", path.display()))?;
            if !md.is_file() {
                return Err(not_regular());
            }
            if let Some(codec) = xsort_io::Codec::of_file(&file).with_context(|| format!("{}: cannot read", path.display()))? {
                if inflate.is_none() {
                    return Err(refuse_compressed(codec, path));
                }
                compressed.push((inputs.len(), codec));
            }
            inputs.push(Input { path: path.clone(), file, len: md.len(), base: pos });
            pos += md.len();
        }
        if let Some(inflate) = inflate.filter(|_| !compressed.is_empty()) {
            Self::inflate_all(&mut inputs, &compressed, inflate)?;
        }
        Ok(inputs)
    }

    /// Decompresses the inputs listed in `compressed` (index and format), up to `inflate.threads`
    /// at a time (this thread one of them), each replaced by its temp file; the global positions
    /// follow the new lengths. The first failure, in input order, is the error.
    fn inflate_all(inputs: &mut [Input], compressed: &[(usize, xsort_io::Codec)], inflate: &Inflate) -> Result<()> {
        use std::sync::{atomic::AtomicUsize, atomic::Ordering, Mutex, PoisonError};
        let next = AtomicUsize::new(0);
        let made: Vec<Mutex<Option<Inflated>>> = compressed.iter().map(|_| Mutex::new(None)).collect();
        let from: &[Input] = inputs;
        let work = || loop {
            let k = next.fetch_add(1, Ordering::Relaxed);
            let Some(&(i, codec)) = compressed.get(k) else { return };
            let input = &from[i];
            let file = input.file.try_clone().with_context(|| format!("{}: cannot read", input.path.display()));
            let result = file.and_then(|f| inflate_one(f, &input.path, codec, inflate.dir));
            *made[k].lock().unwrap_or_else(PoisonError::into_inner) = Some(result);
        };
        std::thread::scope(|scope| {
            for _ in 1..inflate.threads.clamp(1, compressed.len()) {
                // A thread that cannot start leaves its inputs to the others.
                let _ = std::thread::Builder::new().name("xsort-mpi-inflate".into()).spawn_scoped(scope, work);
            }
            work();
        });
        for (&(i, _), m) in compressed.iter().zip(made) {
            let result = m.into_inner().unwrap_or_else(PoisonError::into_inner);
            let (file, len) = result.context("a decompression thread stopped")??;
            inputs[i].file = file;
            inputs[i].len = len;
        }
        let mut pos = 0;
        for input in inputs.iter_mut() {
            input.base = pos;
            pos += input.len;
        }
        Ok(())
    }

    /// The bytes of all the inputs (decompressed), for node-local inputs, whose ranks add them up.
    pub fn input_len(&self) -> u64 {
        self.inputs.iter().map(|i| i.len).sum()
    }

    /// Moves the share's inputs to global position `base` on (node-local inputs: the lengths of
    /// the lower ranks' inputs).
    pub fn place_at(&mut self, base: u64) {
        for input in &mut self.inputs {
            input.base += base;
        }
    }

    /// All of `paths` as this rank's share (node-local inputs), at global position 0 (see
    /// [`Share::place_at`]), compressed ones decompressed as `inflate` says.
    pub fn whole(paths: &[PathBuf], kind: Kind, inflate: &Inflate) -> Result<Share> {
        let inputs = Share::open(paths, Some(inflate))?;
        if let Kind::Records(r) = kind {
            if let Some(i) = inputs.iter().find(|i| i.len % r as u64 != 0) {
                bail!(partial(&i.path, i.len, r));
            }
        }
        // Empty files have no segment (as in `part`): nothing to read, and nothing to map (a
        // mapping of no bytes fails, which kept node-local records off the in-place path).
        let segments =
            inputs.iter().enumerate().filter(|(_, f)| f.len > 0).map(|(i, f)| Segment { input: i, start: 0, end: f.len }).collect();
        Ok(Share { kind, inputs, segments, cursor: (0, 0) })
    }

    /// Rank `rank`'s share of `ranks` of the shared inputs `paths`.
    pub fn part(paths: &[PathBuf], rank: usize, ranks: usize, kind: Kind) -> Result<Share> {
        let inputs = Share::open(paths, None)?;
        let total: u64 = inputs.iter().map(|i| i.len).sum();
        let nominal = |r: usize| (total as u128 * r as u128 / ranks as u128) as u64;
        let mut share = Share { kind, inputs, segments: Vec::new(), cursor: (0, 0) };
        let (from, to) = match kind {
            Kind::Records(size) => {
                // The rank whose nominal range holds a file's last byte reports its partial record.
                for i in &share.inputs {
                    let owner =
                        if total == 0 { 0 } else { ((i.base + i.len).saturating_sub(1) as u128 * ranks as u128 / total as u128) as usize };
                    if i.len % size as u64 != 0 && owner == rank {
                        bail!(partial(&i.path, i.len, size));
                    }
                }
                (share.record_start(nominal(rank), size), share.record_start(nominal(rank + 1), size))
            }
            Kind::Lines(t) => (share.line_start(nominal(rank), t)?, share.line_start(nominal(rank + 1), t)?),
        };
        for (i, f) in share.inputs.iter().enumerate() {
            let (s, e) = (from.max(f.base), to.min(f.base + f.len));
            if s < e {
                share.segments.push(Segment { input: i, start: s - f.base, end: e - f.base });
            }
        }
        Ok(share)
    }

    /// The first record boundary at or below global position `p` (records never straddle files;
    /// a file's partial record is an error reported by one rank).
    fn record_start(&self, p: u64, size: usize) -> u64 {
        match self.inputs.iter().find(|i| p < i.base + i.len) {
            Some(i) => i.base + (p - i.base) / size as u64 * size as u64,
            None => p,
        }
    }

    /// The first line start at or after global position `p`.
    fn line_start(&self, p: u64, t: u8) -> Result<u64> {
        let Some(i) = self.inputs.iter().find(|i| p < i.base + i.len) else { return Ok(p) };
        if p == i.base {
            return Ok(p);
        }
        // Look from the byte before `p` for the terminator that ends the line holding `p - 1`.
        let mut off = p - 1 - i.base;
        let mut buf = vec![0u8; PROBE];
        while off < i.len {
            let n = read_at(i, &mut buf, off)?;
            if let Some(k) = memchr(t, &buf[..n]) {
                return Ok(i.base + off + k as u64 + 1);
            }
            off += n as u64;
        }
        Ok(i.base + i.len)
    }

    /// Fault injection for the tests (`XSORT_MPI_FAULT=shrink:RANK:ROUND`, see the exchange): cuts
    /// the input being read to the offset reached, as another process truncating it would.
    pub fn shrink_current(&self) {
        let Some(seg) = self.segments.get(self.cursor.0) else { return };
        let input = &self.inputs[seg.input];
        if let Ok(f) = std::fs::OpenOptions::new().write(true).open(&input.path) {
            let _ = f.set_len(seg.start + self.cursor.1);
        }
    }

    /// The share's segments mapped into memory (read-only, populated up front), in order, for the
    /// records path that sorts in place ([`crate::inplace`]); None where one cannot be mapped (the
    /// caller then reads the share). A mapping is guarded against its file shrinking
    /// ([`xsort_io::sigbus`]): ask [`MappedSegment::check`] before committing what was made of it.
    pub fn map(&self) -> Option<Vec<MappedSegment>> {
        let page = 4096u64;
        let mut out = Vec::new();
        for seg in &self.segments {
            let input = &self.inputs[seg.input];
            let from = seg.start / page * page;
            let len = usize::try_from(seg.end - from).ok()?;
            // SAFETY: a read-only private mapping of an open file at a page-aligned offset, no
            // address hint; the result is checked.
            let p = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    libc::PROT_READ,
                    libc::MAP_PRIVATE | libc::MAP_POPULATE,
                    std::os::unix::io::AsRawFd::as_raw_fd(&input.file),
                    from as libc::off_t,
                )
            };
            if p == libc::MAP_FAILED {
                return None;
            }
            let Some(registration) = xsort_io::sigbus::register(p as usize, len) else {
                // SAFETY: unmapping exactly the mapping just made, of which nothing was handed out.
                unsafe { libc::munmap(p, len) };
                return None;
            };
            out.push(MappedSegment {
                mapping: Mapping { ptr: p as *mut u8, len, registration: Some(registration) },
                skip: (seg.start - from) as usize,
                global: input.base + seg.start,
                file: input.file.try_clone().ok()?,
                path: input.path.clone(),
                file_len: input.len,
            });
        }
        Some(out)
    }

    /// Fault injection for the tests on the mapped path: cuts the input holding the share's byte
    /// `at` to that offset.
    pub fn shrink_at(&self, mut at: u64) {
        for seg in &self.segments {
            if at < seg.end - seg.start {
                if let Ok(f) = std::fs::OpenOptions::new().write(true).open(&self.inputs[seg.input].path) {
                    let _ = f.set_len(seg.start + at);
                }
                return;
            }
            at -= seg.end - seg.start;
        }
    }

    /// Whether the whole share has been read.
    pub fn is_read(&self) -> bool {
        self.cursor.0 >= self.segments.len()
    }

    /// Bytes in the share.
    pub fn len(&self) -> u64 {
        self.segments.iter().map(|s| s.end - s.start).sum()
    }

    /// Reads the next chunk of about `size` bytes of whole records or lines into `data` (a line
    /// longer than `size` comes whole), never across files, and returns the global position of its
    /// first byte; None at the end of the share. A last line without its terminator gets one, as
    /// xsort writes it. `data` is the caller's, reused from chunk to chunk: fresh memory is costly,
    /// so only what it has never held before is zeroed.
    pub fn next_chunk(&mut self, size: usize, data: &mut Vec<u8>) -> Result<Option<u64>> {
        let Some(seg) = self.segments.get(self.cursor.0).copied() else { return Ok(None) };
        let input = &self.inputs[seg.input];
        let off = seg.start + self.cursor.1;
        let left = seg.end - off;
        let want = match self.kind {
            Kind::Records(r) => (size / r).max(1) * r,
            Kind::Lines(_) => size.max(1),
        };
        let n = (want as u64).min(left) as usize;
        if data.len() < n {
            data.resize(n, 0);
        }
        data.truncate(n);
        read_exact_at(input, data, off)?;
        if let Kind::Lines(t) = self.kind {
            if (data.len() as u64) < left {
                // Cut after the last terminator, or read on to the end of a line longer than the chunk.
                match memrchr(t, data) {
                    Some(k) => data.truncate(k + 1),
                    None => self.read_line_end(data, off, seg.end, t)?,
                }
            }
        }
        self.cursor.1 += data.len() as u64;
        if self.cursor.1 >= seg.end - seg.start {
            self.cursor = (self.cursor.0 + 1, 0);
            if let Kind::Lines(t) = self.kind {
                if data.last().is_some_and(|&b| b != t) {
                    data.push(t);
                }
            }
        }
        Ok(Some(input.base + off))
    }

    /// Extends `data` (read at `off`, without a terminator) to the end of its line, or of the segment.
    fn read_line_end(&self, data: &mut Vec<u8>, off: u64, end: u64, t: u8) -> Result<()> {
        let input = &self.inputs[self.segments[self.cursor.0].input];
        let mut buf = vec![0u8; PROBE];
        loop {
            let at = off + data.len() as u64;
            if at >= end {
                return Ok(());
            }
            let n = (PROBE as u64).min(end - at) as usize;
            read_exact_at(input, &mut buf[..n], at)?;
            if let Some(k) = memchr(t, &buf[..n]) {
                data.extend_from_slice(&buf[..=k]);
                return Ok(());
            }
            data.extend_from_slice(&buf[..n]);
        }
    }

    /// About `want` items (records, or lines without their terminators) spread evenly over the
    /// share, each with its global position and the bytes it stands for.
    pub fn sample(&self, want: usize) -> Result<Vec<(Vec<u8>, u64)>> {
        let len = self.len();
        let windows = 64usize;
        let per_window = want.div_ceil(windows).max(1);
        let mut out = Vec::new();
        if len == 0 {
            return Ok(out);
        }
        let mut last_end = 0u64;
        for w in 0..windows {
            // The window's start, as an offset into the share, mapped to a segment.
            let mut at = (len as u128 * w as u128 / windows as u128) as u64;
            let Some((seg, off)) = self.segments.iter().find_map(|s| {
                if at < s.end - s.start {
                    Some((*s, s.start + at))
                } else {
                    at -= s.end - s.start;
                    None
                }
            }) else {
                break;
            };
            let input = &self.inputs[seg.input];
            let global = input.base + off;
            if global < last_end {
                continue; // a small share: this window starts inside the last one
            }
            match self.kind {
                Kind::Records(r) => {
                    let first = seg.start + (off - seg.start) / r as u64 * r as u64;
                    let n = (per_window as u64).min((seg.end - first) / r as u64) as usize;
                    let mut buf = vec![0u8; n * r];
                    read_exact_at(input, &mut buf, first)?;
                    out.extend(buf.chunks(r).enumerate().map(|(k, rec)| (rec.to_vec(), input.base + first + (k * r) as u64)));
                    last_end = input.base + first + buf.len() as u64;
                }
                Kind::Lines(t) => {
                    // Read from the byte before, to know whether a line starts at `off`.
                    let from = if off == seg.start { off } else { off - 1 };
                    let n = (PROBE as u64).min(seg.end - from) as usize;
                    let mut buf = vec![0u8; n];
                    read_exact_at(input, &mut buf, from)?;
                    let mut s = if off == seg.start { 0 } else { memchr(t, &buf).map_or(n, |k| k + 1) };
                    let mut taken = 0;
                    while taken < per_window {
                        let Some(k) = memchr(t, &buf[s..]) else { break };
                        out.push((buf[s..s + k].to_vec(), input.base + from + s as u64));
                        s += k + 1;
                        taken += 1;
                    }
                    last_end = input.base + from + s as u64;
                }
            }
        }
        Ok(out)
    }
}

/// The message for a file with a partial record, as xsort gives it.
fn partial(path: &Path, len: u64, r: usize) -> String {
    format!("{}: length {len} is not a multiple of the record size {r} ({} bytes left over)", path.display(), len % r as u64)
}

fn read_at(i: &Input, buf: &mut [u8], off: u64) -> Result<usize> {
    let n = (buf.len() as u64).min(i.len.saturating_sub(off)) as usize;
    read_exact_at(i, &mut buf[..n], off)?;
    Ok(n)
}

fn read_exact_at(i: &Input, buf: &mut [u8], off: u64) -> Result<()> {
    match i.file.read_exact_at(buf, off) {
        Ok(()) => Ok(()),
        // The share was cut from the length the file had when it was opened.
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
            let end = off + buf.len() as u64;
            bail!(
                "{}: shrank while being read: it ended before offset {end} of the {} bytes it had when the sort began",
                i.path.display(),
                i.len
            )
        }
        Err(e) => bail!("{}: read failed at offset {off}: {}", i.path.display(), xsort_io::error::os_text(&e)),
    }
}

fn memchr(t: u8, b: &[u8]) -> Option<usize> {
    memchr::memchr(t, b)
}

fn memrchr(t: u8, b: &[u8]) -> Option<usize> {
    memchr::memrchr(t, b)
}

/// A memory map of part of a file; unmapped (and unregistered first) when dropped.
struct Mapping {
    ptr: *mut u8,
    len: usize,
    registration: Option<xsort_io::sigbus::Registration>,
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // Unregistered first: once unmapped, the range may be reused by another mapping.
        self.registration = None;
        // SAFETY: unmapping exactly the region mapped in `Share::map`; no slice of it outlives self.
        unsafe { libc::munmap(self.ptr as *mut libc::c_void, self.len) };
    }
}

/// One segment of a share, mapped.
pub struct MappedSegment {
    mapping: Mapping,
    /// Bytes of the mapping before the segment (its start rounded down to a page).
    skip: usize,
    /// Global position of the segment's first byte.
    pub global: u64,
    file: File,
    path: PathBuf,
    /// The file's length when the sort began.
    file_len: u64,
}

// SAFETY: the mapping is read-only and owned by this value; sharing &[u8] across threads is sound.
unsafe impl Send for MappedSegment {}
// SAFETY: see above.
unsafe impl Sync for MappedSegment {}

impl MappedSegment {
    /// The segment's bytes (zeros past the point where its file was found to have shrunk).
    pub fn data(&self) -> &[u8] {
        // SAFETY: the mapping is valid for `len` bytes for the life of self and never written.
        let all = unsafe { std::slice::from_raw_parts(self.mapping.ptr, self.mapping.len) };
        &all[self.skip..]
    }

    /// An error if the file shrank while mapped: what was read from it may be zeros, not its bytes.
    pub fn check(&self) -> Result<()> {
        let shrank = self.mapping.registration.as_ref().is_none_or(|r| r.shrank());
        let now = self.file.metadata().map_or(0, |m| m.len());
        if shrank || now < self.file_len {
            bail!(
                "{}: shrank while being read: it has {now} of the {} bytes it had when the sort began",
                self.path.display(),
                self.file_len
            );
        }
        Ok(())
    }
}
