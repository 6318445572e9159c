//! Reading text inputs into chunks of whole lines.
//!
//! The inputs are read in order, as one stream of lines: a file whose last line lacks its terminator
//! gets one, as GNU sort does. A chunk ends at a line terminator, before the line whose bytes and
//! per-line bookkeeping would take it past the caller's limit; what was read beyond stays in the
//! buffer and starts the next chunk. A line longer than the limit still becomes one chunk: the
//! buffer grows for it, by moving its pages rather than copying them.
//!
//! CSV records ([`crate::csv`]) are lines whose ends are the terminators outside quotes: the reader
//! scans what it reads once, checking it (a quote left open at the end of a file, and under a
//! strict dialect stray quotes, are errors naming the file and line). With a header
//! ([`TextInputs::header`]), each input's first records are taken aside as it is opened: the first
//! input's are the header ([`LineReader::header`]), and every later input must start with the same.

use crate::config::Input;
use crate::csv::{Fault, Scanner};
use crate::error::{Result, SortError};
use crate::framing::Splitter;
use crate::reading::SingleFile;
use crate::select::reader::InputTransform;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use xsort_io::error::os_text;
use xsort_io::{AlignedBuf, IoCounters, OpenedInput};

/// Bytes per read request, at most and at least.
const READ_SIZE: usize = 8 << 20;
const MIN_READ: usize = 16 << 10;
/// Bytes per read while a header is read.
const HEADER_READ: usize = 64 << 10;

/// How text inputs are read.
#[derive(Clone, Copy, Debug)]
pub struct TextInputs {
    /// Where records end.
    pub splitter: Splitter,
    /// Records at the start of each input that are its header, not sorted.
    pub header: usize,
    /// Decompress compressed inputs.
    pub decompress: bool,
    /// Check that every line holds one JSON value (JSON lines).
    pub json: bool,
}

/// An input being read.
struct Open {
    file: xsort_io::StreamReader,
    name: PathBuf,
    /// A regular file's size when opened: reaching its end sooner means that it shrank.
    expected: Option<u64>,
    /// Bytes read so far.
    got: u64,
    /// Bytes read past the header, handed out before the file's next ones.
    ahead: Vec<u8>,
    ahead_at: usize,
    /// CSV: newlines handed out so far (header included), to number the line of a fault.
    newlines: u64,
}

/// The inputs of a sort and how far they have been read.
pub struct LineReader {
    /// The inputs not yet read, each opened once (see [`xsort_io::input`]), in reverse order.
    pending: Vec<OpenedInput>,
    open: Option<Open>,
    shape: TextInputs,
    /// Where the scan of what was read stands (CSV records only).
    scan: Scan,
    /// The first input's header, once read.
    header: Option<Vec<u8>>,
    /// What the last fill read beyond the chunk it returned (whole lines, then the start of a line
    /// whose end has not been read yet): still in that buffer, at these offsets, moved to its front
    /// by the next fill rather than copied aside, so a long line's start is never held twice.
    carry: std::ops::Range<usize>,
    /// The address of that buffer, to check that the next fill is given the same one.
    carry_base: usize,
    counters: Arc<IoCounters>,
    /// Total bytes of the inputs if all are regular files.
    known_len: Option<u64>,
}

/// Finds the records that end in what is read, checking CSV records as it goes (lines need no
/// state: their ends are their terminators).
#[derive(Clone, Copy)]
struct Scan {
    splitter: Splitter,
    csv: Option<Scanner>,
}

impl Scan {
    fn new(splitter: Splitter) -> Scan {
        Scan { splitter, csv: splitter.csv.map(|d| Scanner::new(d, splitter.terminator)) }
    }

    /// Back at a record's start.
    fn reset(&mut self) {
        *self = Scan::new(self.splitter);
    }

    /// The records that end in `data[from..]`, the scan standing at `from`: how many, and the
    /// offset just after the last one's terminator. A fault's offset is in `data`.
    #[inline]
    fn ends(&mut self, data: &[u8], from: usize) -> std::result::Result<(usize, Option<usize>), Fault> {
        self.ends_each(data, from, |_| {})
    }

    /// [`Scan::ends`], giving `each` the offset of each CSV record's terminator in turn (lines are
    /// counted without being visited).
    #[inline]
    fn ends_each(&mut self, data: &[u8], from: usize, mut each: impl FnMut(usize)) -> std::result::Result<(usize, Option<usize>), Fault> {
        let t = self.splitter.terminator;
        let Some(scanner) = &mut self.csv else {
            let fresh = &data[from..];
            return Ok((memchr::memchr_iter(t, fresh).count(), memchr::memrchr(t, fresh).map(|i| from + i + 1)));
        };
        let (mut n, mut last, mut at) = (0, None, from);
        while let Some(end) = scanner.find_end(&data[at..]).map_err(|f| shift(f, at))? {
            each(at + end);
            n += 1;
            at += end + 1;
            last = Some(at);
        }
        Ok((n, last))
    }

    /// The offset just after the terminator of the next record that ends in `data[from..]`.
    fn next_end(&mut self, data: &[u8], from: usize) -> std::result::Result<Option<usize>, Fault> {
        match &mut self.csv {
            None => Ok(memchr::memchr(self.splitter.terminator, &data[from..]).map(|i| from + i + 1)),
            Some(scanner) => Ok(scanner.find_end(&data[from..]).map_err(|f| shift(f, from))?.map(|i| from + i + 1)),
        }
    }

    /// Whether the scan stands in a quoted field (at the end of a file: a quote left open).
    fn in_quotes(&self) -> bool {
        self.csv.is_some_and(|s| s.in_quotes())
    }
}

/// A fault found in `data[at..]`, placed in `data`.
fn shift(f: Fault, at: usize) -> Fault {
    match f {
        Fault::StrayQuote(i) => Fault::StrayQuote(at + i),
        Fault::TextAfterQuote(i) => Fault::TextAfterQuote(at + i),
    }
}

/// The error for a problem in an input at offset `at` of `read`, the input's last bytes read;
/// `newlines` counts the newlines of all it read, so that the problem's line is known.
fn bad_record(name: &Path, newlines: u64, read: &[u8], at: usize, problem: &str) -> SortError {
    let line = newlines - memchr::memchr_iter(b'\n', &read[at.min(read.len())..]).count() as u64 + 1;
    SortError::BadInput { path: name.to_owned(), offset: None, problem: format!("line {line}: {problem}") }
}

/// Checks that each line of `data[range]` (whole lines, the last perhaps without its terminator
/// `t`) holds one JSON value ([`crate::json::check_line`]), in parallel pieces for a large range;
/// the first bad line's offset and problem otherwise.
fn check_json_lines(data: &[u8], range: std::ops::Range<usize>, t: u8) -> std::result::Result<(), (usize, String)> {
    use rayon::prelude::*;
    let check = |from: usize, to: usize| {
        let mut start = from;
        while start < to {
            let end = memchr::memchr(t, &data[start..to]).map_or(to, |i| start + i);
            crate::json::check_line(&data[start..end]).map_err(|problem| (start, problem))?;
            start = end + 1;
        }
        Ok(())
    };
    const PIECE: usize = 1 << 20;
    if range.len() < 2 * PIECE {
        return check(range.start, range.end);
    }
    // Pieces that end after a terminator, checked at once; the first failure in line order wins.
    let mut bounds = vec![range.start];
    let mut at = range.start + PIECE;
    while at < range.end {
        match memchr::memchr(t, &data[at..range.end]) {
            Some(i) => bounds.push(at + i + 1),
            None => break,
        }
        at = bounds[bounds.len() - 1] + PIECE;
    }
    bounds.push(range.end);
    let results: Vec<_> = bounds.par_windows(2).map(|w| check(w[0], w[1].max(w[0]))).collect();
    results.into_iter().collect()
}

/// The problem of a quote left open at the end of a file.
const OPEN_QUOTE: &str = "a quoted field is still open at the end of the file (the record starts on this line)";

impl LineReader {
    /// A reader of `inputs`. Every input is opened now, once (a missing or unreadable file, or a
    /// directory, is an error naming it); a regular file other than the first gives its descriptor
    /// back until its turn, so that any number of inputs works under a low descriptor limit, while
    /// a stream (standard input, a FIFO, a device) keeps its descriptor, since it cannot be opened
    /// again without losing data. Compressed inputs are decompressed when asked (see
    /// [`Input::open`]), and filtered by `select` when given.
    pub fn new(inputs: &[Input], shape: TextInputs, select: Option<&Arc<InputTransform>>, counters: Arc<IoCounters>) -> Result<Self> {
        let mut known_len = Some(0u64);
        let mut pending = Vec::with_capacity(inputs.len());
        for (i, input) in inputs.iter().enumerate() {
            let mut opened = input.open(shape.decompress, select).map_err(cannot_open)?;
            match &mut opened {
                OpenedInput::Regular(r) => {
                    known_len = known_len.map(|n| n + r.len());
                    if i > 0 {
                        r.release();
                    }
                }
                OpenedInput::Stream(_) => known_len = None,
            }
            pending.push(opened);
        }
        pending.reverse();
        let scan = Scan::new(shape.splitter);
        Ok(LineReader { pending, open: None, shape, scan, header: None, carry: 0..0, carry_base: 0, counters, known_len })
    }

    /// The first input's header (its first [`TextInputs::header`] records, each with its
    /// terminator), read now if it was not yet; empty without a header.
    pub fn header(&mut self) -> Result<&[u8]> {
        if self.header.is_none() && self.shape.header > 0 {
            if let Some(OpenedInput::Regular(r)) = self.pending.last_mut() {
                // Read in place, leaving the file's position alone, so that it can still be mapped
                // whole or read from its start.
                let name = r.path().to_owned();
                let mut file = ReadAt { file: r.file().map_err(cannot_open)?, at: 0 };
                // Not counted: the file is read again from its start when its turn comes.
                let (header, ..) = read_header(&mut file, &name, self.shape, &IoCounters::default())?;
                self.header = Some(header);
            } else {
                self.current()?;
            }
        }
        Ok(self.header.as_deref().unwrap_or_default())
    }

    /// The only input, when it is a non-empty regular file (for a mapped strategy).
    pub fn single_file(&mut self) -> Result<Option<SingleFile>> {
        let ([OpenedInput::Regular(r)], None) = (&mut self.pending[..], &self.open) else { return Ok(None) };
        let (len, path) = (r.len(), r.path().to_owned());
        SingleFile::of(r.file().map_err(cannot_open)?, len, &path, None)
    }

    /// Hands over the inputs not yet read, in order, as they were opened (for `-m`, which reads
    /// regular files in place). With a header, each is handed over as a stream past its header
    /// (checked against the first input's).
    pub fn take_inputs(&mut self) -> Result<Vec<OpenedInput>> {
        if self.shape.header == 0 {
            let mut v = std::mem::take(&mut self.pending);
            v.reverse();
            return Ok(v);
        }
        let mut v = Vec::new();
        while self.current()?.is_some() {
            let Some(open) = self.open.take() else { break };
            let rest = std::io::Read::chain(std::io::Cursor::new(open.ahead), open.file);
            v.push(OpenedInput::reader(Box::new(rest), open.name));
        }
        Ok(v)
    }

    /// Checks that every record of `data` (the whole of an input past its header, which held
    /// `header_lines` newlines) is complete and well formed, as a fill would: for inputs that are
    /// not read through the reader (a mapped file). Lines always are.
    /// For CSV records, whose check walks every record, also the chunk's pieces for its parallel
    /// passes ([`super::chunk::PieceCuts`] of `pieces`), which would otherwise take a second walk.
    pub fn check_whole(&self, data: &[u8], header_lines: u64, name: &Path, pieces: usize) -> Result<Option<Vec<usize>>> {
        let newlines = || header_lines + memchr::memchr_iter(b'\n', data).count() as u64;
        if self.shape.json {
            check_json_lines(data, 0..data.len(), self.shape.splitter.terminator)
                .map_err(|(at, problem)| bad_record(name, newlines(), data, at, &problem))?;
        }
        if self.shape.splitter.csv.is_none() {
            return Ok(None);
        }
        let mut scan = Scan::new(self.shape.splitter);
        let mut cuts = super::chunk::PieceCuts::new(data.len(), pieces);
        let (_, last) =
            scan.ends_each(data, 0, |end| cuts.see(end)).map_err(|f| bad_record(name, newlines(), data, f.offset(), f.describe()))?;
        let complete = last.unwrap_or(0);
        if complete < data.len() {
            return Err(bad_record(name, newlines(), data, complete, OPEN_QUOTE));
        }
        Ok(Some(cuts.finish()))
    }

    /// Total bytes of the inputs, if every one is a regular file.
    pub fn known_len(&self) -> Option<u64> {
        self.known_len
    }

    /// Whether every input has been read to its end.
    pub fn exhausted(&self) -> bool {
        self.open.is_none() && self.pending.is_empty() && self.carry.is_empty()
    }

    /// Fills `buf` from its start with whole lines until `full(bytes, lines)` says the chunk is full or
    /// the inputs end, and returns the number of bytes filled (a multiple of whole lines, each with
    /// its terminator). The chunk ends before the first line that would fill it (that line alone
    /// when it is the first), even inside a read: what was read beyond is carried to the next
    /// chunk. `buf` grows when one line does not fit.
    pub fn fill(&mut self, buf: &mut AlignedBuf, full: impl Fn(usize, usize) -> bool) -> Result<usize> {
        let (t, split) = (self.shape.splitter.terminator, self.shape.splitter);
        let carry = std::mem::take(&mut self.carry);
        if !carry.is_empty() && buf.as_slice().as_ptr() as usize != self.carry_base {
            return Err(SortError::Internal("lines carried over in one buffer, the next chunk asked for in another".into()));
        }
        buf.as_mut_slice().copy_within(carry.clone(), 0);
        let mut filled = carry.len();
        let carried = &buf.as_slice()[..filled];
        // What was carried was scanned before; the scan goes over it again from its first record.
        self.scan.reset();
        let (mut lines, last) = self.scan.ends(carried, 0).map_err(|_| SortError::Internal("a fault in lines read before".into()))?;
        let mut complete = last.unwrap_or(0);
        if let Some(end) = full(filled, lines).then(|| first_full(carried, 0, 0, split, &full)).flatten() {
            (self.carry, self.carry_base) = (end..filled, buf.as_slice().as_ptr() as usize);
            return Ok(end);
        }
        loop {
            if complete > 0 && full(filled, lines) {
                break;
            }
            if filled == buf.capacity() {
                if complete > 0 {
                    break;
                }
                grow(buf, filled, filled * 2)?;
            }
            if self.current()?.is_none() {
                break;
            }
            let Some(open) = self.open.as_mut() else { break };
            let want = (buf.capacity() - filled).min(read_size(buf.capacity()));
            let n = open.read_next(&mut buf.as_mut_slice()[filled..filled + want], &self.counters)?;
            if n == 0 {
                // A quote left open would make the rest of the file one record.
                if self.scan.in_quotes() {
                    return Err(bad_record(&open.name, open.newlines, &buf.as_slice()[..filled], complete, OPEN_QUOTE));
                }
                if self.shape.json {
                    let data = &buf.as_slice()[..filled];
                    check_json_lines(data, complete..filled, t)
                        .map_err(|(at, problem)| bad_record(&open.name, open.newlines, data, at, &problem))?;
                }
                self.open = None;
                self.scan.reset();
                // A last line without its terminator gets one.
                if filled > complete {
                    if filled == buf.capacity() {
                        grow(buf, filled, filled + 1)?;
                    }
                    buf.as_mut_slice()[filled] = t;
                    filled += 1;
                    lines += 1;
                    complete = filled;
                }
                continue;
            }
            if split.csv.is_some() {
                open.newlines += memchr::memchr_iter(b'\n', &buf.as_slice()[filled..filled + n]).count() as u64;
            }
            let data = &buf.as_slice()[..filled + n];
            let (before, complete_before) = (lines, complete);
            let (ended, last) =
                self.scan.ends(data, filled).map_err(|f| bad_record(&open.name, open.newlines, data, f.offset(), f.describe()))?;
            lines += ended;
            complete = last.unwrap_or(complete);
            // Short lines cost more in entries than in bytes: a chunk of them may fill within one
            // read, and ends there.
            if let Some(end) = full(filled + n, lines).then(|| first_full(data, complete_before, before, split, &full)).flatten() {
                complete = end;
                filled += n;
                break;
            }
            filled += n;
        }
        (self.carry, self.carry_base) = (complete..filled, buf.as_slice().as_ptr() as usize);
        Ok(complete)
    }

    /// The input being read, taking the next one when needed (and its header aside); None when
    /// all are read.
    fn current(&mut self) -> Result<Option<&mut Open>> {
        if self.open.is_none() {
            let (file, name, expected) = match self.pending.pop() {
                Some(OpenedInput::Stream(s)) => (s.file, s.name, None),
                Some(OpenedInput::Regular(mut r)) => {
                    let file = r.take_file().map_err(cannot_open)?;
                    (Box::new(file) as xsort_io::StreamReader, r.path().to_owned(), Some(r.len()))
                }
                None => return Ok(None),
            };
            let mut open = Open { file, name, expected, got: 0, ahead: Vec::new(), ahead_at: 0, newlines: 0 };
            if self.shape.header > 0 {
                let (header, ahead, read) = read_header(&mut open.file, &open.name, self.shape, &self.counters)?;
                self.check_header(&header, &open.name)?;
                open.got = read;
                open.newlines = memchr::memchr_iter(b'\n', &header).count() as u64;
                open.ahead = ahead;
            }
            self.open = Some(open);
        }
        Ok(self.open.as_mut())
    }

    /// Keeps the first input's header; a later input's must be the same (an empty input has none).
    pub fn check_header(&mut self, header: &[u8], name: &Path) -> Result<()> {
        match &self.header {
            None => self.header = Some(header.to_vec()),
            Some(first) if first == header || header.is_empty() => {}
            Some(_) => {
                return Err(SortError::BadInput {
                    path: name.to_owned(),
                    offset: Some(0),
                    problem: match self.shape.header {
                        1 => "its header (its first record) differs from the first input's".into(),
                        n => format!("its header (its first {n} records) differs from the first input's"),
                    },
                })
            }
        }
        Ok(())
    }
}

impl Open {
    /// Reads into `dst` what comes next: bytes read ahead with the header, or the file's. A regular
    /// file is read up to the size it had when opened, as records are: what is appended meanwhile
    /// (perhaps half a line, mid-write) is not part of this sort; reaching its end sooner is an
    /// error (a file cut short while read would otherwise sort as if it were whole).
    fn read_next(&mut self, dst: &mut [u8], counters: &IoCounters) -> Result<usize> {
        if self.ahead_at < self.ahead.len() {
            let n = dst.len().min(self.ahead.len() - self.ahead_at);
            dst[..n].copy_from_slice(&self.ahead[self.ahead_at..self.ahead_at + n]);
            self.ahead_at += n;
            return Ok(n);
        }
        let left = self.expected.map_or(u64::MAX, |e| e.saturating_sub(self.got));
        let want = dst.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        let started = std::time::Instant::now();
        let n = if want == 0 { 0 } else { read_some(&mut self.file, &self.name, &mut dst[..want])? };
        self.got += n as u64;
        if n == 0 {
            if let Some(expected) = self.expected.filter(|&e| self.got < e) {
                return Err(crate::input::shrank(&self.name, expected));
            }
        } else {
            counters.record(n as u64, started, false);
        }
        Ok(n)
    }
}

/// Reads the first `shape.header` records of an input from `file` (at its start): the header, each
/// record with its terminator (a last one without gets one), the bytes read beyond it, and the
/// bytes read in all. An input shorter than the header is all header.
pub fn read_header(file: &mut dyn std::io::Read, name: &Path, shape: TextInputs, counters: &IoCounters) -> Result<(Vec<u8>, Vec<u8>, u64)> {
    let mut scan = Scan::new(shape.splitter);
    let (mut bytes, mut at, mut found, mut read) = (Vec::new(), 0, 0, 0u64);
    while found < shape.header {
        match scan.next_end(&bytes, at) {
            Ok(Some(end)) => {
                (at, found) = (end, found + 1);
                continue;
            }
            Ok(None) => {}
            Err(f) => {
                let newlines = memchr::memchr_iter(b'\n', &bytes).count() as u64;
                return Err(bad_record(name, newlines, &bytes, f.offset(), f.describe()));
            }
        }
        let start = bytes.len();
        bytes.resize(start + HEADER_READ, 0);
        let started = std::time::Instant::now();
        let n = read_some(file, name, &mut bytes[start..])?;
        bytes.truncate(start + n);
        if n == 0 {
            if scan.in_quotes() {
                let newlines = memchr::memchr_iter(b'\n', &bytes).count() as u64;
                return Err(bad_record(name, newlines, &bytes, at, OPEN_QUOTE));
            }
            if bytes.len() > at {
                bytes.push(shape.splitter.terminator);
                at = bytes.len();
            }
            break;
        }
        read += n as u64;
        counters.record(n as u64, started, false);
    }
    let ahead = bytes.split_off(at);
    Ok((bytes, ahead, read))
}

/// Reads a file from a position of its own, leaving the file's alone.
struct ReadAt<'f> {
    file: &'f std::fs::File,
    at: u64,
}

impl std::io::Read for ReadAt<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = std::os::unix::fs::FileExt::read_at(self.file, buf, self.at)?;
        self.at += n as u64;
        Ok(n)
    }
}

/// Bytes one read asks for into a buffer of `capacity` bytes: a sixteenth of it (within
/// [`MIN_READ`] and [`READ_SIZE`]), so that what a chunk cut inside a read carries over, and the
/// buffer's bytes read beyond the chunk, stay small beside the budget (see [`read_slack`]).
fn read_size(capacity: usize) -> usize {
    (capacity / 16).clamp(MIN_READ, READ_SIZE)
}

/// Memory a reader filling a buffer of `capacity` bytes touches beyond the chunk it returns: the
/// rest of the read that filled it (a line that does not fit a chunk starts the next one).
pub fn read_slack(capacity: usize) -> usize {
    read_size(capacity)
}

/// Where a chunk of `data` that is full ends, looking at the records that start at `from` (a
/// record's start, or 0): before the first record with which `full(bytes, lines)` holds (that
/// record alone when it is the chunk's first), so that a chunk stays within its budget unless one
/// record does not fit it. `before` is the records complete before `from`. None when no record
/// after `from` fills the chunk.
fn first_full(data: &[u8], from: usize, before: usize, split: Splitter, full: &impl Fn(usize, usize) -> bool) -> Option<usize> {
    let (mut lines, mut prev_end) = (before, from);
    split.ends(data, from).find_map(|i| {
        let end = i + 1;
        lines += 1;
        let cut = full(end, lines).then_some(if prev_end > 0 { prev_end } else { end });
        prev_end = end;
        cut
    })
}

/// Reads what is available into `dst`; a failure names the input (in GNU's words, or the
/// decoder's for corrupt compressed data).
fn read_some(file: &mut dyn std::io::Read, name: &Path, dst: &mut [u8]) -> Result<usize> {
    xsort_io::read_stream(file, dst).map_err(|e| match xsort_io::IoError::read(name, e) {
        xsort_io::IoError::Read { path, cause } => {
            SortError::BadInput { path, offset: None, problem: format!("read failed: {}", os_text(&cause)) }
        }
        other => other.into(),
    })
}

/// Grows `buf` to hold at least `at_least` bytes, keeping its contents (its first `_keep` bytes
/// are those that matter). The pages move rather than being copied, so a long line never needs
/// two buffers at once; the capacity doubles as a line grows (pages beyond the data are never
/// touched, so they cost no memory).
fn grow(buf: &mut AlignedBuf, _keep: usize, at_least: usize) -> Result<()> {
    Ok(buf.grow(at_least.max(1 << 20))?)
}

fn cannot_read(path: &Path, e: &std::io::Error) -> SortError {
    SortError::BadInput { path: path.to_owned(), offset: None, problem: format!("{}{}", crate::error::UNREADABLE, os_text(e)) }
}

/// An input that cannot be opened, in GNU's words for a directory.
fn cannot_open(e: xsort_io::IoError) -> SortError {
    match e {
        xsort_io::IoError::Open { path, cause } if cause.raw_os_error() == Some(libc::EISDIR) => {
            SortError::BadInput { path, offset: None, problem: "read failed: Is a directory".into() }
        }
        xsort_io::IoError::Open { path, cause } => cannot_read(&path, &cause),
        other => other.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// Newline-ended lines, `header` of them a header.
    fn lines_of(header: usize) -> TextInputs {
        TextInputs { splitter: Splitter::lines(b'\n'), header, decompress: true, json: false }
    }

    fn reader_of(files: &[&[u8]]) -> (tempfile::TempDir, LineReader) {
        reader_with(files, lines_of(0))
    }

    /// CSV records, `header` of them a header, `strict` or not.
    fn csv_of(header: usize, strict: bool) -> TextInputs {
        let csv = crate::csv::CsvDialect { strict, ..crate::csv::CsvDialect::CSV };
        TextInputs { splitter: Splitter { terminator: b'\n', csv: Some(csv) }, header, decompress: true, json: false }
    }

    fn reader_with(files: &[&[u8]], shape: TextInputs) -> (tempfile::TempDir, LineReader) {
        let dir = tempfile::tempdir().unwrap();
        let inputs = files
            .iter()
            .enumerate()
            .map(|(i, data)| {
                let p = dir.path().join(format!("f{i}"));
                std::fs::File::create(&p).unwrap().write_all(data).unwrap();
                Input::Path(p)
            })
            .collect::<Vec<_>>();
        let r = LineReader::new(&inputs, shape, None, Arc::default()).unwrap();
        (dir, r)
    }

    fn chunks(r: &mut LineReader, cap: usize, max_bytes: usize) -> Vec<Vec<u8>> {
        let mut buf = AlignedBuf::new(cap).unwrap();
        let mut out = Vec::new();
        while !r.exhausted() {
            let n = r.fill(&mut buf, |bytes, _| bytes >= max_bytes).unwrap();
            if n > 0 {
                out.push(buf.as_slice()[..n].to_vec());
            }
        }
        out
    }

    #[test]
    fn files_become_one_stream_of_terminated_lines() {
        let (_d, mut r) = reader_of(&[b"b\na", b"", b"c\n", b"d"]);
        assert_eq!(chunks(&mut r, 4096, usize::MAX).concat(), b"b\na\nc\nd\n");
    }

    #[test]
    fn chunks_end_at_terminators_and_long_lines_grow_the_buffer() {
        let long = vec![b'x'; 3 << 20];
        let mut data = b"ab\ncd\n".to_vec();
        data.extend_from_slice(&long);
        data.extend_from_slice(b"\nef\n");
        let (_d, mut r) = reader_of(&[&data]);
        let got = chunks(&mut r, 4096, 4);
        assert!(got.iter().all(|c| c.ends_with(b"\n")));
        assert_eq!(got.concat(), data);
        assert!(got.iter().any(|c| c.len() > 3 << 20));
    }

    #[test]
    fn a_file_that_shrinks_before_it_is_read_is_an_error() {
        let (d, mut r) = reader_of(&[b"a\nb\nc\n"]);
        std::fs::OpenOptions::new().write(true).open(d.path().join("f0")).unwrap().set_len(2).unwrap();
        let mut buf = AlignedBuf::new(4096).unwrap();
        let e = r.fill(&mut buf, |_, _| false).unwrap_err();
        assert_eq!(e.to_string(), format!("{}: file shrank while being read (expected 6 bytes)", d.path().join("f0").display()));
    }

    #[test]
    fn a_chunk_ends_at_the_line_that_fills_it_even_inside_a_read() {
        // 4-byte lines under a budget of 100 bytes + 10 per line: 7 lines fit a chunk (the 8th
        // would fill it), although one read brings them all.
        let data: Vec<u8> = (0..1000).flat_map(|i| format!("{:03}\n", i % 1000).into_bytes()).collect();
        let (_d, mut r) = reader_of(&[&data]);
        let mut buf = AlignedBuf::new(1 << 20).unwrap();
        let mut got = Vec::new();
        while !r.exhausted() {
            let n = r.fill(&mut buf, |bytes, lines| bytes + lines * 10 >= 100).unwrap();
            assert!(n <= 28, "a chunk of {n} bytes went past its budget");
            got.extend_from_slice(&buf.as_slice()[..n]);
        }
        assert_eq!(got, data);
    }

    #[test]
    fn csv_chunks_end_at_record_ends_whatever_the_reads() {
        // Records with newlines in quotes, cut into chunks of a few bytes: each chunk ends at a
        // record's end, and all together are the input with a last terminator added.
        let data = b"a,\"1\n2\",x\n\"q\"\"\n\",y\r\nb,\"\n\n\"\nlast,\"z\"";
        for max in [1, 3, 8, 100] {
            let (_d, mut r) = reader_with(&[data], csv_of(0, false));
            let got = chunks(&mut r, 4096, max);
            let ends = [b"x\n".as_slice(), b"y\r\n", b"\"\n\n\"\n", b"\"z\"\n"];
            assert!(got.iter().all(|c| ends.iter().any(|e| c.ends_with(e))), "{max}: {got:?}");
            assert_eq!(got.concat(), [&data[..], b"\n"].concat());
        }
    }

    #[test]
    fn csv_faults_name_their_line() {
        let fault = |files: &[&[u8]], shape: TextInputs| {
            let (d, mut r) = reader_with(files, shape);
            let mut buf = AlignedBuf::new(4096).unwrap();
            let e = (|| {
                r.header()?;
                while !r.exhausted() {
                    r.fill(&mut buf, |bytes, _| bytes >= 4)?;
                }
                Ok::<_, SortError>(())
            })()
            .unwrap_err();
            e.to_string().replace(&d.path().display().to_string(), "")
        };
        let open = "line 4: a quoted field is still open at the end of the file (the record starts on this line)";
        assert_eq!(fault(&[b"a\n\"b\nc\"\nd,\"e\nf\n"], csv_of(0, false)), format!("/f0: {open}"));
        assert_eq!(fault(&[b"h\n", b"h\n\"b\nc\"\nd,\"e\nf\n"], csv_of(1, false)), format!("/f1: {open}"));
        let stray = "line 5: a quote inside a field that is not quoted (--strict)";
        assert_eq!(fault(&[b"a\n\"b\nc\"\nd\nx,y\"z\n"], csv_of(0, true)), format!("/f0: {stray}"));
        assert_eq!(fault(&[b"\"h\n\"\n\"x\"y\n"], csv_of(2, true)), "/f0: line 3: text after the quote that closes a field (--strict)");
    }

    #[test]
    fn headers_are_taken_from_each_input_and_must_agree() {
        let (_d, mut r) = reader_with(&[b"h1\nh2\nb\n", b"h1\nh2\na\n", b""], lines_of(2));
        assert_eq!(r.header().unwrap(), b"h1\nh2\n");
        assert_eq!(chunks(&mut r, 4096, usize::MAX).concat(), b"b\na\n");
        let (_d, mut r) = reader_with(&[b"\"h,\n1\",x\nb\n", b"\"h,\n1\",x\na"], csv_of(1, false));
        assert_eq!(r.header().unwrap(), b"\"h,\n1\",x\n");
        assert_eq!(chunks(&mut r, 4096, usize::MAX).concat(), b"b\na\n");
        for other in [b"H\na\n".as_slice(), b"h1\n"] {
            let (d, mut r) = reader_with(&[b"h1\nh2\nb\n", other], lines_of(2));
            let mut buf = AlignedBuf::new(4096).unwrap();
            let e = r.fill(&mut buf, |_, _| false).unwrap_err().to_string();
            assert_eq!(e, format!("{}: its header (its first 2 records) differs from the first input's", d.path().join("f1").display()));
        }
    }

    #[test]
    fn missing_input_is_named() {
        let e = LineReader::new(&[Input::Path("/nonexistent/x".into())], lines_of(0), None, Arc::default()).err().unwrap();
        assert_eq!(e.to_string(), "cannot read: /nonexistent/x: No such file or directory");
    }
}
