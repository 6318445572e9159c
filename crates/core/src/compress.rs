//! GNU sort's `--compress-program`: temp runs stored through an external program, which compresses
//! its standard input to its standard output and, given `-d`, decompresses.
//!
//! A compressed run has a temp file of its own (buffered: the program writes through the shared
//! descriptor). The run is written into the program's standard input, which writes the file; the
//! merge reads it back from the standard output of `PROG -d`, whose standard input is the file. A
//! program that cannot be started, or that exits with a failure, is an error naming it. Temp files
//! stay anonymous (unlinked at creation), so nothing is left behind whatever the program does.
//!
//! Each compressed run holds a descriptor until it is merged, and its merge adds a pipe, so
//! compressed runs and the merge's fan-in each get a quarter of the descriptor limit; beyond it,
//! runs are stored uncompressed, as GNU sort does when it cannot start the program.

use crate::error::{Result, SortError};
use std::io::{Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex};
use xsort_io::DirectFile;

/// The compress program of a sort.
#[derive(Debug)]
pub struct Compressor {
    program: String,
}

impl Compressor {
    /// Compression through `program` (looked up in `PATH` unless it contains a slash).
    pub fn new(program: impl Into<String>) -> Self {
        Compressor { program: program.into() }
    }

    /// Whether one more compressed run keeps this process within its share of the descriptor
    /// limit (see the module documentation).
    pub(crate) fn has_room(&self) -> bool {
        match (open_file_limit(), std::fs::read_dir("/proc/self/fd")) {
            (Some(limit), Ok(open)) => open.count() < limit / 4,
            _ => true,
        }
    }

    /// The largest fan-in for merges of compressed runs: each adds a pipe (see the module doc).
    pub fn max_fan_in() -> usize {
        open_file_limit().map_or(usize::MAX, |limit| (limit / 4).max(2))
    }

    /// The program, as given, for messages.
    pub fn program(&self) -> &str {
        &self.program
    }

    /// Starts compressing into `file` (from its start): the running program and its standard input.
    pub(crate) fn compress_into(&self, file: &DirectFile) -> Result<(Child, ChildStdin)> {
        let mut child = self.spawn(&[], Stdio::piped(), self.rewound(file)?.into())?;
        let stdin = child.stdin.take().ok_or_else(|| SortError::Internal("compress program without standard input".into()))?;
        Ok((child, stdin))
    }

    /// Starts decompressing `file`.
    pub(crate) fn decompress(&self, file: &DirectFile) -> Result<Decompression> {
        let mut child = self.spawn(&["-d"], self.rewound(file)?.into(), Stdio::piped())?;
        let stdout = child.stdout.take().ok_or_else(|| SortError::Internal("decompressor without standard output".into()))?;
        let name = PathBuf::from(format!("{} -d", self.program));
        Ok(Decompression { child, output: Some(Arc::new(Mutex::new(stdout))), name })
    }

    /// Waits for the compressing program to end: an error unless it succeeded.
    pub(crate) fn finish_compressing(&self, mut child: Child) -> Result<()> {
        self.wait_for(&mut child, "")
    }

    /// Waits for `PROG args` to end: an error unless it succeeded.
    fn wait_for(&self, child: &mut Child, args: &str) -> Result<()> {
        let status = child.wait().map_err(|e| self.failure(args, &e.to_string()))?;
        if status.success() {
            Ok(())
        } else {
            Err(self.failure(args, &status.to_string()))
        }
    }

    /// A new descriptor of `file` at its start (the program's own file position).
    fn rewound(&self, file: &DirectFile) -> Result<std::fs::File> {
        let mut f = file.try_clone_file()?;
        f.seek(SeekFrom::Start(0)).map_err(|e| xsort_io::IoError::meta(file.path(), "seek temp file", e))?;
        Ok(f)
    }

    fn spawn(&self, args: &[&str], stdin: Stdio, stdout: Stdio) -> Result<Child> {
        Command::new(&self.program)
            .args(args)
            .stdin(stdin)
            .stdout(stdout)
            .spawn()
            .map_err(|e| SortError::Program(format!("couldn't execute compress program '{}': {}", self.program, xsort_io::os_text(&e))))
    }

    fn failure(&self, args: &str, what: &str) -> SortError {
        SortError::Program(format!("compress program '{}{args}' failed: {what}", self.program))
    }
}

/// Descriptors this process may still open (under the soft `RLIMIT_NOFILE`), when limited and known.
pub(crate) fn free_descriptors() -> Option<usize> {
    let limit = open_file_limit()?;
    // (The count includes the descriptor that reads the directory, which is closed again.)
    let open = std::fs::read_dir("/proc/self/fd").ok()?.count();
    Some(limit.saturating_sub(open))
}

/// Descriptors this process may open (the soft `RLIMIT_NOFILE`), when limited.
fn open_file_limit() -> Option<usize> {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes into the struct we pass; the result is checked.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } == 0;
    (ok && lim.rlim_cur != libc::RLIM_INFINITY).then(|| usize::try_from(lim.rlim_cur).unwrap_or(usize::MAX))
}

/// A running `PROG -d`: its output is read in order by the merge's read service.
pub(crate) struct Decompression {
    child: Child,
    output: Option<Arc<Mutex<ChildStdout>>>,
    name: PathBuf,
}

impl Decompression {
    /// The decompressed stream.
    pub(crate) fn output(&self) -> Arc<Mutex<ChildStdout>> {
        self.output.clone().expect("output taken only by finish")
    }

    /// The program, for error messages.
    pub(crate) fn name(&self) -> &Path {
        &self.name
    }

    /// Waits for the program once its output has been read: an error unless it succeeded.
    pub(crate) fn finish(mut self, compressor: &Compressor) -> Result<()> {
        // Closing our end first: a program with more to say than the run's bytes gets EPIPE rather
        // than waiting for a reader forever.
        self.output = None;
        compressor.wait_for(&mut self.child, " -d")
    }
}

impl Drop for Decompression {
    /// A merge that stops early (an error elsewhere) ends the program rather than leave it waiting.
    fn drop(&mut self) {
        if self.output.is_some() {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}
