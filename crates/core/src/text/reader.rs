//! Reading text inputs into chunks of whole lines.
//!
//! The inputs are read in order, as one stream of lines: a file whose last line lacks its terminator
//! gets one, as GNU sort does. A chunk ends at a line terminator; the partial line after it is
//! carried into the next chunk. A chunk is full when its bytes plus the per-line bookkeeping the
//! sorter needs reach the capacity. A line longer than the capacity still becomes one chunk: the
//! buffer grows for it.

use crate::config::Input;
use crate::error::{Result, SortError};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use xsort_io::error::os_text;
use xsort_io::{AlignedBuf, IoCounters, OpenedInput};

/// Bytes per read request.
const READ_SIZE: usize = 8 << 20;

/// An input being read.
struct Open {
    file: File,
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
    /// Bytes of a line whose end has not been read yet.
    carry: Vec<u8>,
    counters: Arc<IoCounters>,
    /// Total bytes of the inputs if all are regular files.
    known_len: Option<u64>,
}

impl LineReader {
    /// A reader of `inputs`. Every input is opened now, once (a missing or unreadable file, or a
    /// directory, is an error naming it); a regular file other than the first gives its descriptor
    /// back until its turn, so that any number of inputs works under a low descriptor limit, while
    /// a stream (standard input, a FIFO, a device) keeps its descriptor, since it cannot be opened
    /// again without losing data.
    pub fn new(inputs: &[Input], terminator: u8, counters: Arc<IoCounters>) -> Result<Self> {
        let mut known_len = Some(0u64);
        let mut pending = Vec::with_capacity(inputs.len());
        for (i, input) in inputs.iter().enumerate() {
            let opened = match input {
                Input::Stdin => OpenedInput::stdin(),
                Input::Path(p) => OpenedInput::open(p),
            };
            let mut opened = opened.map_err(cannot_open)?;
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
        Ok(LineReader { pending, open: None, terminator, carry: Vec::new(), counters, known_len })
    }

    /// The only input's open file and length, when it is a regular file (for mapping it).
    pub fn single_regular(&mut self) -> Result<Option<(File, u64, PathBuf)>> {
        let [OpenedInput::Regular(r)] = &mut self.pending[..] else { return Ok(None) };
        let path = r.path().to_owned();
        // A second descriptor of the same open file (dup), not a second open.
        let file = r.file().map_err(cannot_open)?.try_clone().map_err(|e| cannot_read(&path, &e))?;
        Ok(Some((file, r.len(), path)))
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
    /// its terminator). `buf` grows when one line does not fit.
    pub fn fill(&mut self, buf: &mut AlignedBuf, full: impl Fn(usize, usize) -> bool) -> Result<usize> {
        let t = self.terminator;
        let mut filled = self.carry.len();
        if filled > buf.capacity() {
            grow(buf, 0, filled)?;
        }
        buf.as_mut_slice()[..filled].copy_from_slice(&self.carry);
        self.carry.clear();
        // The carry holds no terminator: nothing is complete yet.
        let (mut lines, mut complete) = (0, 0);
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
            let want = (buf.capacity() - filled).min(READ_SIZE).min(usize::try_from(left).unwrap_or(usize::MAX));
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
            lines += memchr::memchr_iter(t, fresh).count();
            if let Some(i) = memchr::memrchr(t, fresh) {
                complete = filled + i + 1;
            }
            filled += n;
        }
        self.carry.extend_from_slice(&buf.as_slice()[complete..filled]);
        Ok(complete)
    }

    /// The input being read, taking the next one when needed; None when all are read.
    fn current(&mut self) -> Result<Option<&mut Open>> {
        if self.open.is_none() {
            self.open = match self.pending.pop() {
                Some(OpenedInput::Stream(s)) => Some(Open { file: s.file, name: s.name, expected: None, got: 0 }),
                Some(OpenedInput::Regular(mut r)) => {
                    let file = r.take_file().map_err(cannot_open)?;
                    Some(Open { file, name: r.path().to_owned(), expected: Some(r.len()), got: 0 })
                }
                None => None,
            };
        }
        Ok(self.open.as_mut())
    }
}

/// Reads what is available into `dst`; a failure names the input.
fn read_some(file: &mut File, name: &Path, dst: &mut [u8]) -> Result<usize> {
    xsort_io::read_stream(file, dst).map_err(|e| SortError::BadInput { path: name.to_owned(), problem: format!("read failed: {}", os_text(&e)) })
}

/// Replaces `buf` with a larger one holding its first `keep` bytes.
fn grow(buf: &mut AlignedBuf, keep: usize, at_least: usize) -> Result<()> {
    let mut bigger = AlignedBuf::new(at_least.max(1 << 20))?;
    bigger.as_mut_slice()[..keep].copy_from_slice(&buf.as_slice()[..keep]);
    *buf = bigger;
    Ok(())
}

fn cannot_read(path: &Path, e: &std::io::Error) -> SortError {
    SortError::BadInput { path: path.to_owned(), problem: format!("cannot read: {}", os_text(e)) }
}

/// An input that cannot be opened, in GNU's words for a directory.
fn cannot_open(e: xsort_io::IoError) -> SortError {
    match e {
        xsort_io::IoError::Open { path, cause } if cause.raw_os_error() == Some(libc::EISDIR) => {
            SortError::BadInput { path, problem: "read failed: Is a directory".into() }
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
        let r = LineReader::new(&inputs, b'\n', Arc::default()).unwrap();
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
    fn missing_input_is_named() {
        let e = LineReader::new(&[Input::Path("/nonexistent/x".into())], b'\n', Arc::default()).err().unwrap();
        assert_eq!(e.to_string(), "/nonexistent/x: cannot read: No such file or directory");
    }
}
