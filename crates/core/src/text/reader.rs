//! Reading text inputs into chunks of whole lines.
//!
//! The inputs are read in order, as one stream of lines: a file whose last line lacks its terminator
//! gets one, as GNU sort does. A chunk ends at a line terminator, before the line whose bytes and
//! per-line bookkeeping would take it past the caller's limit; what was read beyond stays in the
//! buffer and starts the next chunk. A line longer than the limit still becomes one chunk: the
//! buffer grows for it, by moving its pages rather than copying them.

use crate::config::Input;
use crate::error::{Result, SortError};
use crate::reading::SingleFile;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use xsort_io::error::os_text;
use xsort_io::{AlignedBuf, IoCounters, OpenedInput};

/// Bytes per read request, at most and at least.
const READ_SIZE: usize = 8 << 20;
const MIN_READ: usize = 16 << 10;

/// An input being read.
struct Open {
    file: xsort_io::StreamReader,
    name: PathBuf,
    /// A regular file's size when opened: reaching its end sooner means that it shrank.
    expected: Option<u64>,
    /// Bytes read so far.
    got: u64,
}

/// The inputs of a sort and how far they have been read.
pub struct LineReader {
    /// The inputs not yet read, each opened once (see [`xsort_io::input`]), in reverse order.
    pending: Vec<OpenedInput>,
    open: Option<Open>,
    terminator: u8,
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

impl LineReader {
    /// A reader of `inputs`. Every input is opened now, once (a missing or unreadable file, or a
    /// directory, is an error naming it); a regular file other than the first gives its descriptor
    /// back until its turn, so that any number of inputs works under a low descriptor limit, while
    /// a stream (standard input, a FIFO, a device) keeps its descriptor, since it cannot be opened
    /// again without losing data. Compressed inputs are decompressed when `decompress` is set (see
    /// [`Input::open`]).
    pub fn new(inputs: &[Input], terminator: u8, decompress: bool, counters: Arc<IoCounters>) -> Result<Self> {
        let mut known_len = Some(0u64);
        let mut pending = Vec::with_capacity(inputs.len());
        for (i, input) in inputs.iter().enumerate() {
            let mut opened = input.open(decompress).map_err(cannot_open)?;
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
        Ok(LineReader { pending, open: None, terminator, carry: 0..0, carry_base: 0, counters, known_len })
    }

    /// The only input, when it is a non-empty regular file (for a mapped strategy).
    pub fn single_file(&mut self) -> Result<Option<SingleFile>> {
        let [OpenedInput::Regular(r)] = &mut self.pending[..] else { return Ok(None) };
        let (len, path) = (r.len(), r.path().to_owned());
        SingleFile::of(r.file().map_err(cannot_open)?, len, &path, None)
    }

    /// Hands over the inputs not yet read, in order, as they were opened (for `-m`, which reads
    /// regular files in place).
    pub fn take_inputs(&mut self) -> Vec<OpenedInput> {
        let mut v = std::mem::take(&mut self.pending);
        v.reverse();
        v
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
        let t = self.terminator;
        let carry = std::mem::take(&mut self.carry);
        if !carry.is_empty() && buf.as_slice().as_ptr() as usize != self.carry_base {
            return Err(SortError::Internal("lines carried over in one buffer, the next chunk asked for in another".into()));
        }
        buf.as_mut_slice().copy_within(carry.clone(), 0);
        let mut filled = carry.len();
        let carried = &buf.as_slice()[..filled];
        let mut lines = memchr::memchr_iter(t, carried).count();
        let mut complete = memchr::memrchr(t, carried).map_or(0, |i| i + 1);
        if let Some(end) = full(filled, lines).then(|| first_full(carried, 0, 0, 0, t, &full)).flatten() {
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
            let Some(open) = self.current()? else { break };
            // A regular file is read up to the size it had when opened, as records are: what is
            // appended meanwhile (perhaps half a line, mid-write) is not part of this sort.
            let left = open.expected.map_or(u64::MAX, |e| e.saturating_sub(open.got));
            let want = (buf.capacity() - filled).min(read_size(buf.capacity())).min(usize::try_from(left).unwrap_or(usize::MAX));
            let started = std::time::Instant::now();
            let n = if want == 0 { 0 } else { read_some(&mut open.file, &open.name, &mut buf.as_mut_slice()[filled..filled + want])? };
            open.got += n as u64;
            if n == 0 {
                // A regular file cut short while read would otherwise sort as if it were whole.
                if let Some(expected) = open.expected.filter(|&e| open.got < e) {
                    return Err(crate::input::shrank(&open.name, expected));
                }
                self.open = None;
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
            self.counters.record(n as u64, started, false);
            let fresh = &buf.as_slice()[filled..filled + n];
            let (before, complete_before) = (lines, complete);
            lines += memchr::memchr_iter(t, fresh).count();
            if let Some(i) = memchr::memrchr(t, fresh) {
                complete = filled + i + 1;
            }
            // Short lines cost more in entries than in bytes: a chunk of them may fill within one
            // read, and ends there.
            if let Some(end) = full(filled + n, lines)
                .then(|| first_full(&buf.as_slice()[..filled + n], filled, before, complete_before, t, &full))
                .flatten()
            {
                complete = end;
                filled += n;
                break;
            }
            filled += n;
        }
        (self.carry, self.carry_base) = (complete..filled, buf.as_slice().as_ptr() as usize);
        Ok(complete)
    }

    /// The input being read, taking the next one when needed; None when all are read.
    fn current(&mut self) -> Result<Option<&mut Open>> {
        if self.open.is_none() {
            self.open = match self.pending.pop() {
                Some(OpenedInput::Stream(s)) => Some(Open { file: s.file, name: s.name, expected: None, got: 0 }),
                Some(OpenedInput::Regular(mut r)) => {
                    let file = r.take_file().map_err(cannot_open)?;
                    Some(Open { file: Box::new(file), name: r.path().to_owned(), expected: Some(r.len()), got: 0 })
                }
                None => None,
            };
        }
        Ok(self.open.as_mut())
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

/// Where a chunk of `data` that is full ends, looking at the lines after offset `from`: before
/// the first line with which `full(bytes, lines)` holds (that line alone when it is the chunk's
/// first), so that a chunk stays within its budget unless one line does not fit it. `before` is
/// the lines complete before `from` and `prev_end` where the last of them ends (0: none). None
/// when no line after `from` fills the chunk.
fn first_full(data: &[u8], from: usize, before: usize, prev_end: usize, t: u8, full: &impl Fn(usize, usize) -> bool) -> Option<usize> {
    let (mut lines, mut prev_end) = (before, prev_end);
    memchr::memchr_iter(t, &data[from..]).find_map(|i| {
        let end = from + i + 1;
        lines += 1;
        let cut = full(end, lines).then_some(if prev_end > 0 { prev_end } else { end });
        prev_end = end;
        cut
    })
}

/// Reads what is available into `dst`; a failure names the input (in GNU's words, or the
/// decoder's for corrupt compressed data).
fn read_some(file: &mut xsort_io::StreamReader, name: &Path, dst: &mut [u8]) -> Result<usize> {
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
    SortError::BadInput { path: path.to_owned(), offset: None, problem: format!("cannot read: {}", os_text(e)) }
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

    fn reader_of(files: &[&[u8]]) -> (tempfile::TempDir, LineReader) {
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
        let r = LineReader::new(&inputs, b'\n', true, Arc::default()).unwrap();
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
    fn missing_input_is_named() {
        let e = LineReader::new(&[Input::Path("/nonexistent/x".into())], b'\n', true, Arc::default()).err().unwrap();
        assert_eq!(e.to_string(), "/nonexistent/x: cannot read: No such file or directory");
    }
}
