//! A push/pull sort: the caller pushes input in any chunking, ends it, and pulls the sorted output.
//!
//! The sort runs on a thread of its own, exactly as a file sort runs (same memory plan, same spill
//! to temp space past the budget, same merge); its input is a reader and its output a writer that
//! borrow the caller's buffers across threads. A pushed slice is lent to the sort, which copies it
//! straight into its own buffers, and `push` returns when the sort has read all of it; an output
//! block is lent to the caller, whose `pull` copies it out, and the sort's writer waits until it
//! has been read to its end. So the bytes are copied once each way, as a file sort would read and
//! write them.

use super::Job;
use crate::error::{Result, SortError};
use crate::stats::{SortCounters, SortStats};
use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;

/// What one side of a [`Loan`] channel sends: a lent slice, the end of the stream, or (from a
/// [`CancelHandle`]) word that the sort was cancelled.
enum Message {
    Lent(Loan),
    End,
    Cancelled,
}

/// A slice lent to the other thread until it acknowledges having read all of it.
struct Loan {
    ptr: *const u8,
    len: usize,
}

// SAFETY: a loan is read only by the thread that receives it, while the lender blocks until the
// reader acknowledges it (or drops its end of the channels), so the slice outlives every access
// and is not written meanwhile (see `Lender::lend`).
unsafe impl Send for Loan {}

/// The lending side: lends slices one at a time and waits until each is read.
struct Lender {
    loans: Sender<Message>,
    acks: Receiver<()>,
}

/// The borrowing side: reads lent slices in order.
struct Borrower {
    loans: Receiver<Message>,
    acks: Sender<()>,
    current: Option<(Loan, usize)>,
    ended: bool,
}

/// Why a borrower has nothing more.
#[derive(Debug, PartialEq, Eq)]
enum Drained {
    /// The lender ended the stream.
    Ended,
    /// The lender went away without ending it.
    Gone,
    /// The sort was cancelled.
    Cancelled,
}

fn loan_channel() -> (Lender, Borrower) {
    let (loans, loans_rx) = channel();
    let (acks_tx, acks) = channel();
    (Lender { loans, acks }, Borrower { loans: loans_rx, acks: acks_tx, current: None, ended: false })
}

impl Lender {
    /// Lends `data` and returns once it has been read to its end; false when the borrower went
    /// away (it then no longer touches `data`).
    fn lend(&self, data: &[u8]) -> bool {
        if data.is_empty() {
            return true;
        }
        if self.loans.send(Message::Lent(Loan { ptr: data.as_ptr(), len: data.len() })).is_err() {
            return false;
        }
        // The borrower acknowledges after its last read of the slice, or drops its sender: either
        // way the slice is no longer accessed when `recv` returns.
        self.acks.recv().is_ok()
    }

    /// Ends the stream.
    fn end(&self) {
        let _ = self.loans.send(Message::End);
    }
}

impl Borrower {
    /// Copies the next lent bytes into `dst` (waiting for a loan if none is current); Ok(0) only
    /// when `dst` is empty.
    fn read_into(&mut self, dst: &mut [u8]) -> std::result::Result<usize, Drained> {
        if dst.is_empty() {
            return Ok(0);
        }
        loop {
            if let Some((loan, pos)) = &mut self.current {
                let n = (loan.len - *pos).min(dst.len());
                // SAFETY: the lender keeps the slice alive and unchanged until acknowledged (below),
                // and `pos + n <= len`.
                let src = unsafe { std::slice::from_raw_parts(loan.ptr.add(*pos), n) };
                dst[..n].copy_from_slice(src);
                *pos += n;
                if *pos == loan.len {
                    self.current = None;
                    let _ = self.acks.send(());
                }
                return Ok(n);
            }
            if self.ended {
                return Err(Drained::Ended);
            }
            match self.loans.recv() {
                Ok(Message::Lent(loan)) => self.current = Some((loan, 0)),
                Ok(Message::End) => self.ended = true,
                Ok(Message::Cancelled) => return Err(Drained::Cancelled),
                Err(_) => return Err(Drained::Gone),
            }
        }
    }
}

/// The sort's input: what the caller pushes.
struct PushedInput(Borrower);

impl Read for PushedInput {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self.0.read_into(buf) {
            Ok(n) => Ok(n),
            Err(Drained::Ended) => Ok(0),
            Err(Drained::Gone) => Err(std::io::Error::other("the input was abandoned before its end")),
            Err(Drained::Cancelled) => Err(std::io::Error::other("the sort was cancelled")),
        }
    }
}

/// The sort's output: what the caller pulls.
struct PulledOutput(Lender);

impl Write for PulledOutput {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.0.lend(buf) {
            Ok(buf.len())
        } else {
            Err(std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the output was abandoned before its end"))
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Cancels a session's sort from any thread ([`Sorting::cancel_handle`]): the sort stops within a
/// fraction of a second (a sort waiting for pushes at once), removes its temp files and leaves no
/// output file; the session's calls then fail with [`SortError::Cancelled`].
#[derive(Clone)]
pub struct CancelHandle {
    flag: Arc<AtomicBool>,
    /// Wakes a sort waiting for pushed input.
    input: Option<Sender<Message>>,
}

impl CancelHandle {
    /// Cancels the sort (again: nothing more happens).
    pub fn cancel(&self) {
        self.flag.store(true, Ordering::Relaxed);
        if let Some(input) = &self.input {
            // Queued behind any slice being read, which is read to its end first.
            let _ = input.send(Message::Cancelled);
        }
    }

    /// Whether the sort was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.flag.load(Ordering::Relaxed)
    }
}

impl std::fmt::Debug for CancelHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CancelHandle").field("cancelled", &self.is_cancelled()).finish()
    }
}

/// Where a session is.
#[derive(Debug)]
enum Phase {
    /// Taking input.
    Pushing,
    /// The input has ended; the output is being pulled (or written to its file).
    Pulling,
    /// All the output has been pulled (or committed to its file).
    Done,
    /// The sort failed with this message; nothing more comes of it.
    Failed(String),
}

/// A sort in progress, fed by [`Sorting::push`] and drained by [`Sorting::pull`]; made by
/// [`Sort::start`](super::Sort::start).
///
/// Push the input in any chunking, call [`Sorting::finish`], then pull the sorted output until
/// `pull` returns 0. A sort whose builder named input files reads them itself (`push` is then an
/// error), and one that named an output file writes it itself (`finish` then waits for the sort to
/// end, and `pull` is an error). Past its memory budget the sort spills to its temp directories,
/// as the `xsort` command does.
///
/// Dropping a session before its end cancels the sort: it stops, removes its temp files and leaves
/// no output file behind.
///
/// ```
/// use xsort_core::Sort;
///
/// let mut sorting = Sort::records(4).start()?;
/// sorting.push(b"dddd")?;
/// sorting.push(b"bbbbaa")?; // chunks need not hold whole records
/// sorting.push(b"aacccc")?;
/// sorting.finish()?;
/// let (mut out, mut buf) = (Vec::new(), [0u8; 10]); // room for two records
/// loop {
///     let n = sorting.pull(&mut buf)?;
///     if n == 0 {
///         break;
///     }
///     out.extend_from_slice(&buf[..n]);
/// }
/// assert_eq!(out, b"aaaabbbbccccdddd");
/// assert_eq!(sorting.stats().unwrap().records, 4);
/// # Ok::<(), xsort_core::SortError>(())
/// ```
pub struct Sorting {
    record_size: Option<usize>,
    input: Option<Lender>,
    output: Option<Borrower>,
    worker: Option<JoinHandle<Result<SortStats>>>,
    counters: Arc<SortCounters>,
    phase: Phase,
    stats: Option<SortStats>,
    /// Whether the input is pushed (`input` is gone once it has ended).
    takes_pushes: bool,
    /// Cancels the sort.
    cancel: CancelHandle,
}

impl Sorting {
    /// Starts `job` on a thread of its own; `pushed` / `pulled` say whether its input and output are
    /// the caller's (they are then wired to the `Sorting` returned).
    pub(super) fn start(mut job: Job, pushed: bool, pulled: bool) -> Result<Sorting> {
        let input = pushed.then(|| {
            let (lender, borrower) = loan_channel();
            job.set_input(crate::config::Input::Reader(crate::config::Handoff::new(Box::new(PushedInput(borrower)), "(pushed input)")));
            lender
        });
        let output = pulled.then(|| {
            let (lender, borrower) = loan_channel();
            job.set_output(crate::config::Output::Writer(crate::config::Handoff::new(Box::new(PulledOutput(lender)), "(pulled output)")));
            borrower
        });
        let (record_size, counters) = (job.record_size(), job.counters());
        let cancel = CancelHandle { flag: job.cancel_flag(), input: input.as_ref().map(|l| l.loans.clone()) };
        let worker = std::thread::Builder::new()
            .name("xsort-driver".into())
            .spawn(move || job.run())
            .map_err(|e| SortError::Resource(format!("cannot start the sort's thread: {}", xsort_io::os_text(&e))))?;
        let phase = if pushed { Phase::Pushing } else { Phase::Pulling };
        Ok(Sorting { record_size, input, output, worker: Some(worker), counters, phase, stats: None, takes_pushes: pushed, cancel })
    }

    /// Bytes per output record of a sort of fixed-size records (each pull returns whole ones);
    /// None for lines and delimited records.
    pub fn record_size(&self) -> Option<usize> {
        self.record_size
    }

    /// Whether the sort takes its input from [`Sorting::push`] (rather than from named files).
    pub fn takes_pushes(&self) -> bool {
        self.takes_pushes
    }

    /// Whether the sort's output is pulled with [`Sorting::pull`] (rather than written to a file).
    pub fn gives_pulls(&self) -> bool {
        self.output.is_some()
    }

    /// A handle that cancels the sort from any thread (a Ctrl-C handler, a watchdog).
    pub fn cancel_handle(&self) -> CancelHandle {
        self.cancel.clone()
    }

    /// Live counters of the sort's progress (bytes read, written...).
    pub fn counters(&self) -> Arc<SortCounters> {
        self.counters.clone()
    }

    /// Gives `data` to the sort. Any chunking works: records (or lines) may straddle pushes. The
    /// sort copies `data` before `push` returns.
    pub fn push(&mut self, data: &[u8]) -> Result<()> {
        self.usable()?;
        if !self.takes_pushes {
            return Err(SortError::Usage("this sort reads its input from files; nothing can be pushed to it".into()));
        }
        let (Phase::Pushing, Some(input)) = (&self.phase, &self.input) else {
            return Err(SortError::Usage("push after the input was finished".into()));
        };
        if input.lend(data) {
            return Ok(());
        }
        // The sort stopped reading: it failed, and says why.
        Err(self.outcome().err().unwrap_or_else(|| SortError::Internal("the sort stopped reading its input".into())))
    }

    /// Ends the input: the sort goes on to its output. When the output is a named file, this waits
    /// for the sort to end and commit it. Calling it again does nothing.
    pub fn finish(&mut self) -> Result<()> {
        self.usable()?;
        if let Phase::Pushing = self.phase {
            if let Some(input) = self.input.take() {
                input.end();
            }
            self.phase = Phase::Pulling;
        }
        if self.output.is_none() && matches!(self.phase, Phase::Pulling) {
            self.outcome()?;
        }
        Ok(())
    }

    /// Copies sorted output into `buf` and returns how many bytes it holds: as much as fits, and
    /// for fixed-size records only whole records. 0 means the output has ended (the statistics are
    /// then ready). A buffer smaller than one record is an error.
    pub fn pull(&mut self, buf: &mut [u8]) -> Result<usize> {
        self.usable()?;
        if self.output.is_none() {
            return Err(SortError::Usage("this sort writes its output to a file; nothing can be pulled from it".into()));
        }
        match self.phase {
            Phase::Pushing => return Err(SortError::Usage("pull before the input was finished".into())),
            Phase::Done => return Ok(0),
            _ => {}
        }
        let limit = match self.record_size {
            Some(r) if buf.len() < r => {
                return Err(SortError::Usage(format!("a buffer of {} bytes cannot hold a record of {r} bytes", buf.len())));
            }
            Some(r) => buf.len() / r * r,
            None => buf.len(),
        };
        let Some(output) = &mut self.output else { return Ok(0) };
        let mut filled = 0;
        while filled < limit {
            match output.read_into(&mut buf[filled..limit]) {
                Ok(n) => filled += n,
                Err(_) => {
                    // The sort has written all its output (or failed): its outcome says which.
                    self.outcome()?;
                    break;
                }
            }
        }
        Ok(filled)
    }

    /// Pulls all the output into `out`; returns the bytes written.
    pub fn write_to(&mut self, out: &mut impl Write) -> Result<u64> {
        self.finish()?;
        let name = std::path::Path::new("(writer)");
        let mut buf = vec![0u8; self.record_size.map_or(1 << 20, |r| r.max((1 << 20) / r * r))];
        let mut total = 0;
        loop {
            let n = self.pull(&mut buf)?;
            if n == 0 {
                return Ok(total);
            }
            out.write_all(&buf[..n]).map_err(|e| xsort_io::IoError::write(name, e))?;
            total += n as u64;
        }
    }

    /// The statistics, once the sort has ended (all output pulled or committed).
    pub fn stats(&self) -> Option<&SortStats> {
        self.stats.as_ref()
    }

    /// An error when the sort has failed before, or has been cancelled (the sort is then stopped
    /// and waited for).
    fn usable(&mut self) -> Result<()> {
        if self.cancel.is_cancelled() && !matches!(self.phase, Phase::Done) {
            self.input.take();
            self.output.take();
            // A sort that stopped itself (a declared comparison failed, which sets the flag) says
            // why, as does one that had failed before the flag was set.
            if let Err(e @ SortError::Comparison(_)) = self.outcome() {
                return Err(e);
            }
            if let Phase::Failed(message) = &self.phase {
                if *message != SortError::Cancelled.to_string() {
                    return Err(SortError::Usage(format!("the sort failed before: {message}")));
                }
            }
            self.phase = Phase::Failed(SortError::Cancelled.to_string());
            return Err(SortError::Cancelled);
        }
        match &self.phase {
            Phase::Failed(message) => Err(SortError::Usage(format!("the sort failed before: {message}"))),
            _ => Ok(()),
        }
    }

    /// Waits for the sort's thread and keeps its outcome: the statistics, or the error (which
    /// later calls repeat).
    fn outcome(&mut self) -> Result<()> {
        let Some(worker) = self.worker.take() else { return Ok(()) };
        let result = worker.join().unwrap_or_else(|panic| Err(SortError::Internal(xsort_io::error::panic_message(&*panic))));
        match result {
            Ok(stats) => {
                self.stats = Some(stats);
                self.phase = Phase::Done;
                Ok(())
            }
            Err(e) => {
                self.phase = Phase::Failed(e.to_string());
                Err(e)
            }
        }
    }
}

impl Drop for Sorting {
    fn drop(&mut self) {
        // Unfinished input and unread output make the sort fail, which removes its temp files and
        // any partial output; wait for that, so nothing is left when the session is gone. (The
        // cancel handle keeps the input channel open: a sort waiting for input hears of the
        // cancel instead of its end.)
        if self.worker.is_some() {
            self.cancel.cancel();
        }
        self.input.take();
        self.output.take();
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
    }
}
