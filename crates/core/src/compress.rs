//! GNU sort's `--compress-program`: temp runs stored through an external program, which compresses
//! its standard input to its standard output and, given `-d`, decompresses.
//!
//! A compressed run has a temp file of its own (buffered: the program writes through the shared
//! descriptor). The run is written into the program's standard input, which writes the file; the
//! merge reads it back from the standard output of `PROG -d`, whose standard input is the file. A
//! program that cannot be started, or that exits with a failure, is an error naming it. Temp files
//! stay anonymous (unlinked at creation), so nothing is left behind whatever the program does.
//!
//! The program's standard error is captured, so that a failure is said once: xsort's one line
//! names the temp directory, the program and the cause, quoting the program's last line of
//! complaint unless the cause is a full disk (which xsort names itself). What a program that
//! succeeds prints there is passed on.
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
    pub(crate) fn compress_into(&self, file: &DirectFile) -> Result<(Compressing, ChildStdin)> {
        let (mut child, errors) = self.spawn(&[], Stdio::piped(), self.rewound(file)?.into())?;
        let stdin = child.stdin.take().ok_or_else(|| SortError::Internal("compress program without standard input".into()))?;
        Ok((Compressing { child, errors, dir: temp_dir_of(file) }, stdin))
    }

    /// Starts decompressing `file`.
    pub(crate) fn decompress(&self, file: &DirectFile) -> Result<Decompression> {
        let (mut child, errors) = self.spawn(&["-d"], self.rewound(file)?.into(), Stdio::piped())?;
        let stdout = child.stdout.take().ok_or_else(|| SortError::Internal("decompressor without standard output".into()))?;
        let name = PathBuf::from(format!("{} -d", self.program));
        Ok(Decompression { child, errors, output: Some(Arc::new(Mutex::new(stdout))), name, dir: temp_dir_of(file) })
    }

    /// Waits for the compressing program to end: an error unless it succeeded.
    pub(crate) fn finish_compressing(&self, mut c: Compressing) -> Result<()> {
        self.wait_for(&mut c.child, &c.errors, "", &c.dir)
    }

    /// Waits for `PROG args` to end: an error unless it succeeded. The error names the temp
    /// directory `dir` and, when its filesystem is full (the usual reason a compressor fails
    /// mid-run), the full disk; otherwise the program's last line on its standard error.
    fn wait_for(&self, child: &mut Child, errors: &Captured, args: &str, dir: &Path) -> Result<()> {
        let status = child.wait().map_err(|e| self.failure(args, dir, &xsort_io::os_text(&e)))?;
        let said = errors.take();
        if status.success() {
            if !said.is_empty() {
                let _ = std::io::Write::write_all(&mut std::io::stderr(), &said);
            }
            return Ok(());
        }
        let how = match (status.code(), std::os::unix::process::ExitStatusExt::signal(&status)) {
            (Some(code), _) => format!("exit status {code}"),
            (None, Some(sig)) => format!("killed by signal {sig}"),
            (None, None) => status.to_string(),
        };
        let said = String::from_utf8_lossy(&said);
        let last = said.lines().rev().find(|l| !l.trim().is_empty()).map(|l| crate::spec::excerpt(l.trim()));
        let why = match (filesystem_full(dir), last) {
            (true, _) => format!("No space left on device ({how})"),
            (false, Some(line)) => format!("{how}: {line}"),
            (false, None) => how,
        };
        Err(self.failure(args, dir, &why))
    }

    /// A new descriptor of `file` at its start (the program's own file position).
    fn rewound(&self, file: &DirectFile) -> Result<std::fs::File> {
        let mut f = file.try_clone_file()?;
        f.seek(SeekFrom::Start(0)).map_err(|e| xsort_io::IoError::meta(file.path(), "seek temp file", e))?;
        Ok(f)
    }

    fn spawn(&self, args: &[&str], stdin: Stdio, stdout: Stdio) -> Result<(Child, Captured)> {
        let mut child =
            Command::new(&self.program).args(args).stdin(stdin).stdout(stdout).stderr(Stdio::piped()).spawn().map_err(|e| {
                SortError::Program(format!("couldn't execute compress program '{}': {}", self.program, xsort_io::os_text(&e)))
            })?;
        let errors = Captured::start(child.stderr.take());
        Ok((child, errors))
    }

    fn failure(&self, args: &str, dir: &Path, what: &str) -> SortError {
        let doing = if args.is_empty() { "writing" } else { "reading" };
        SortError::Program(format!("{}: compress program '{}{args}' failed {doing} a temp run: {what}", dir.display(), self.program))
    }
}

/// Descriptors this process may still open (under the soft `RLIMIT_NOFILE`), when limited and known.
pub(crate) fn free_descriptors() -> Option<usize> {
    let limit = open_file_limit()?;
    // The listing includes the descriptor that reads the directory, closed again after it.
    let open = std::fs::read_dir("/proc/self/fd").ok()?.count().saturating_sub(1);
    Some(limit.saturating_sub(open))
}

/// The last bytes a program wrote on its standard error, read by a thread of their own (so that a
/// talkative program never blocks on a full pipe).
struct Captured {
    /// The bytes kept and whether the pipe has ended, with the signal of its end.
    said: Arc<(Mutex<Said>, std::sync::Condvar)>,
}

/// The bytes kept of a program's standard error, and whether the pipe has ended.
type Said = (Vec<u8>, bool);

impl Captured {
    /// Most bytes kept: the end of what was said, where the reason for a failure is.
    const KEPT: usize = 4096;
    /// How long [`Captured::take`] waits for the end of the pipe once the program has exited (a
    /// child of the program may still hold it open).
    const GRACE: std::time::Duration = std::time::Duration::from_millis(200);

    fn start(stderr: Option<std::process::ChildStderr>) -> Captured {
        let said = Arc::new((Mutex::new((Vec::new(), stderr.is_none())), std::sync::Condvar::new()));
        if let Some(mut pipe) = stderr {
            let shared = said.clone();
            // A thread that cannot be started leaves the pipe unread: the program then blocks only
            // once it has written a pipe's worth (64 KiB) of complaints.
            let _ = std::thread::Builder::new().name("xsort-compress-stderr".into()).spawn(move || {
                let (lock, ended) = &*shared;
                let mut buf = [0u8; 1024];
                while let Ok(n @ 1..) = std::io::Read::read(&mut pipe, &mut buf) {
                    let Ok(mut kept) = lock.lock() else { return };
                    kept.0.extend_from_slice(&buf[..n]);
                    let extra = kept.0.len().saturating_sub(Self::KEPT);
                    kept.0.drain(..extra);
                }
                if let Ok(mut kept) = lock.lock() {
                    kept.1 = true;
                }
                ended.notify_all();
            });
        }
        Captured { said }
    }

    /// What the program said, once its pipe has ended (or after [`Captured::GRACE`]). Called once
    /// the program has exited.
    fn take(&self) -> Vec<u8> {
        let (lock, ended) = &*self.said;
        let Ok(kept) = lock.lock() else { return Vec::new() };
        match ended.wait_timeout_while(kept, Self::GRACE, |k| !k.1) {
            Ok((mut kept, _)) => std::mem::take(&mut kept.0),
            Err(_) => Vec::new(),
        }
    }
}

/// A compress program writing a run into a temp file.
pub(crate) struct Compressing {
    child: Child,
    errors: Captured,
    /// The temp directory of the file, for messages.
    dir: PathBuf,
}

/// The temp directory a temp file is in, for messages: the file's path names it (an unnamed file
/// carries its directory's path; a named one, already unlinked, its own).
fn temp_dir_of(file: &DirectFile) -> PathBuf {
    let p = file.path();
    match p.parent() {
        Some(parent) if !p.is_dir() => parent.to_owned(),
        _ => p.to_owned(),
    }
}

/// Whether the filesystem holding `dir` has (next to) no space left: less than 1 MiB available.
fn filesystem_full(dir: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else { return false };
    // SAFETY: statvfs is plain data, for which all zeroes is a valid value.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: statvfs reads a valid NUL-terminated path and writes into the struct we pass; the
    // result is checked before the struct is read.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return false;
    }
    (st.f_bavail as u128) * (st.f_frsize as u128) < 1 << 20
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
    errors: Captured,
    output: Option<Arc<Mutex<ChildStdout>>>,
    name: PathBuf,
    /// The temp directory of the file, for messages.
    dir: PathBuf,
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
        compressor.wait_for(&mut self.child, &self.errors, " -d", &self.dir)
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
