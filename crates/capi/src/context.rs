//! Sort contexts: the table that maps a context id (`xsort_t`, Nsort's `nsort_t`) to its sort, and
//! the phases a sort goes through (records released, records returned, done). Every check of a
//! call's order and arguments lives here, so the `xsort_*` and `nsort_*` entry points are thin.
//!
//! The global table is locked only to find, add or remove a context; each context has its own
//! lock, held for the whole call, so distinct contexts sort in parallel from different threads and
//! two threads sharing one context take turns.

use std::collections::HashMap;
use std::ffi::CString;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::engine::{Sort, SortStats, Sorting};
use crate::status::*;
use xsort_core::spec::bytes::{show_bytes, with_byte_paths};

/// Bytes pulled at a time from a sort of delimited records, whose returned records are staged so
/// that only whole records reach the caller.
const STAGE_BYTES: usize = 1 << 20;

/// Where a sort is.
enum Phase {
    /// Defined; taking records (or, with `-in_file`, about to read them).
    Input(Box<Sorting>),
    /// The input ended; returning records.
    Output(Box<Sorting>),
    /// The output ended (or the `-out_file` is in place); the sort is gone, its statistics kept.
    Done(Option<Box<SortStats>>),
    /// An error stopped the sort (or it never started); the message says why.
    Failed,
}

/// How records are framed, as the C layer needs to know to hand out and take only whole records.
#[derive(Clone, Copy)]
enum Framing {
    /// Records of this many bytes.
    Fixed(usize),
    /// Records each ended by this byte.
    Delimited(u8),
}

/// One sort, as a C program sees it.
pub struct Context {
    phase: Phase,
    /// How released records are framed.
    framing: Framing,
    /// How returned records are framed: fixed-size records may differ in size from those
    /// released (a `-reformat`, the byte of `-match`).
    out_framing: Framing,
    file_input: bool,
    file_output: bool,
    /// The last error's message (empty before any), returned by `xsort_message`.
    message: CString,
    /// The first error that stopped the sort, repeated by later calls.
    stopped_by: Option<String>,
    /// The statement of the definition that did not parse (see [`Context::failed_statement`]).
    failed_statement: Option<String>,
    /// Returned records of a delimited sort not yet handed out: `stage[staged..]`.
    stage: Vec<u8>,
    staged: usize,
    /// The pulled output ended (delimited records: what is staged is all there is).
    drained: bool,
    /// `xsort_get_stats` / `xsort_get_stats_json`, made on first use, kept until `xsort_end`.
    stats_text: Option<CString>,
    stats_json: Option<CString>,
    /// Nsort's error callback, called with each warning or error code (by lib.rs, unlocked).
    callback: Option<crate::nsort::Callback>,
}

/// The contexts in use. Ids start at 1: 0 is what `xsort_end` leaves in the caller's variable.
static CONTEXTS: Mutex<Option<HashMap<u32, Arc<Mutex<Context>>>>> = Mutex::new(None);
static NEXT_ID: AtomicU32 = AtomicU32::new(1);

fn table() -> MutexGuard<'static, Option<HashMap<u32, Arc<Mutex<Context>>>>> {
    // A panic never happens while the table is locked (only map operations), but a poisoned lock
    // must not turn every later call into a panic either.
    CONTEXTS.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Registers a context and returns its id.
pub fn insert(context: Context) -> u32 {
    let mut id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let mut guard = table();
    let map = guard.get_or_insert_with(HashMap::new);
    // After 2^32 contexts the counter wraps: skip 0 and ids still in use.
    while id == 0 || map.contains_key(&id) {
        id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    }
    map.insert(id, Arc::new(Mutex::new(context)));
    id
}

/// The context with this id, if it exists (the table's lock is released on return).
pub fn find(id: u32) -> Option<Arc<Mutex<Context>>> {
    table().as_ref().and_then(|m| m.get(&id).cloned())
}

/// Removes the context with this id from the table, returning it.
pub fn remove(id: u32) -> Option<Arc<Mutex<Context>>> {
    table().as_mut().and_then(|m| m.remove(&id))
}

/// Locks a context; a call that panicked while holding it left it failed, not unusable.
pub fn lock(context: &Mutex<Context>) -> MutexGuard<'_, Context> {
    context.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Makes a context from statements: a started sort, or (when the statements are refused or the
/// sort cannot start) a failed context whose message says why, with the code to return.
///
/// The statements are bytes, as the C program gives them: a path they name is any bytes, as the
/// `xsort` command's paths are (Linux paths need not be UTF-8); every other statement is text.
///
/// `adjust` changes the sort the statements describe before it starts (a merge adds its callback
/// inputs; a plain sort passes `Ok`).
pub fn define_with(
    statements: &[u8],
    callback: Option<crate::nsort::Callback>,
    adjust: impl FnOnce(Sort) -> Result<Sort, Failure>,
) -> (Context, xsort_msg_t) {
    let mut context = Context::new(callback);
    let started = with_byte_paths(statements, Sort::from_spec).map_err(Failure::from).and_then(adjust).and_then(|sort| {
        let framing = |size: Option<usize>| match (size, sort.record_delimiter()) {
            (Some(n), _) => Framing::Fixed(n),
            (None, delimiter) => Framing::Delimited(delimiter.unwrap_or(b'\n')),
        };
        let framings = (framing(sort.input_record_size()), framing(sort.output_record_size()));
        let (file_input, file_output) = (sort.has_file_input(), sort.has_file_output());
        Ok((sort.start()?, framings, file_input, file_output))
    });
    match started {
        Ok((sorting, (framing, out_framing), file_input, file_output)) => {
            context.phase = Phase::Input(Box::new(sorting));
            context.framing = framing;
            context.out_framing = out_framing;
            context.file_input = file_input;
            context.file_output = file_output;
            (context, XSORT_SUCCESS)
        }
        Err(mut failure) => {
            // The parser's messages hold the bytes that are not UTF-8 as escape characters.
            failure.message = show_bytes(&failure.message);
            let code = context.refuse(failure);
            (context, code)
        }
    }
}

impl Context {
    /// A context with no sort (yet): what `define` starts from, and all a refused definition gets.
    pub fn new(callback: Option<crate::nsort::Callback>) -> Context {
        Context {
            phase: Phase::Failed,
            framing: Framing::Delimited(b'\n'),
            out_framing: Framing::Delimited(b'\n'),
            file_input: false,
            file_output: false,
            message: CString::default(),
            stopped_by: None,
            failed_statement: None,
            stage: Vec::new(),
            staged: 0,
            drained: false,
            stats_text: None,
            stats_json: None,
            callback,
        }
    }

    /// Records a failure: stores its message and, for an error (not a warning), stops the sort,
    /// which removes its temp files. Returns the code. (The caller then calls the error callback,
    /// once the context is unlocked: a handler may well call `nsort_message`.) A sort whose output
    /// has ended has nothing left to stop: it stays done, its statistics kept until `xsort_end`.
    pub fn refuse(&mut self, failure: Failure) -> xsort_msg_t {
        if failure.statement.is_some() {
            self.failed_statement.clone_from(&failure.statement);
        }
        if failure.is_error() && self.stopped_by.is_none() && !matches!(self.phase, Phase::Done(_)) {
            self.stopped_by = Some(one_line(&failure.message));
            self.phase = Phase::Failed;
            self.stage = Vec::new();
        }
        self.report(failure)
    }

    /// Records the refusal of a call that only reads the context (the statistics): its message,
    /// and nothing stopped. Returns the code.
    pub fn report(&mut self, failure: Failure) -> xsort_msg_t {
        self.message = CString::new(one_line(&failure.message)).unwrap_or_default();
        failure.code
    }

    /// The error callback and the message to give it, for a call that just failed.
    pub fn notice(&self) -> Option<(crate::nsort::Callback, CString)> {
        self.callback.map(|cb| (cb, self.message.clone()))
    }

    /// The statement of the definition that did not parse, if that is why the sort failed.
    pub fn failed_statement(&self) -> Option<&str> {
        self.failed_statement.as_deref()
    }

    /// The last error's message ("" when none).
    pub fn message(&self) -> &CString {
        &self.message
    }

    /// The refusal for a call made after an error stopped the sort.
    fn stopped(&self, call: &str) -> Failure {
        let why = self.stopped_by.as_deref().unwrap_or("the sort could not be defined");
        Failure::new(XSORT_INVALID_PHASE, format!("{call}: the sort was stopped by an earlier error: {why}"))
    }

    /// `xsort_release_recs`: takes whole records.
    pub fn release(&mut self, data: &[u8]) -> Result<xsort_msg_t, Failure> {
        let sorting = match &mut self.phase {
            Phase::Input(_) if self.file_input => {
                return Err(Failure::new(
                    XSORT_NO_CLIENT_INPUT,
                    "release_recs: this sort reads its -in_file input; released records are not taken",
                ));
            }
            Phase::Input(s) => s,
            Phase::Failed => return Err(self.stopped("release_recs")),
            Phase::Output(_) | Phase::Done(_) => {
                return Err(Failure::new(XSORT_INVALID_PHASE, "release_recs: called after release_end; records can no longer be released"));
            }
        };
        match self.framing {
            Framing::Fixed(n) if !data.len().is_multiple_of(n) => {
                return Err(Failure::new(
                    XSORT_PARTIAL_RECORD,
                    format!(
                        "release_recs: {} bytes is not a whole number of {n}-byte records ({} records and {} bytes)",
                        data.len(),
                        data.len() / n,
                        data.len() % n
                    ),
                ));
            }
            Framing::Delimited(d) if data.last().is_some_and(|&b| b != d) => {
                return Err(Failure::new(
                    XSORT_PARTIAL_RECORD,
                    format!(
                        "release_recs: the {} bytes released do not end with the record delimiter {}, so the last record is partial",
                        data.len(),
                        show_byte(d)
                    ),
                ));
            }
            _ => {}
        }
        sorting.push(data)?;
        Ok(XSORT_SUCCESS)
    }

    /// `xsort_release_end`: ends the input; a sort that writes `-out_file` runs to its end here.
    pub fn release_end(&mut self) -> Result<xsort_msg_t, Failure> {
        match &self.phase {
            Phase::Input(_) => self.end_input()?,
            Phase::Failed => return Err(self.stopped("release_end")),
            Phase::Output(_) | Phase::Done(_) => return Err(Failure::new(XSORT_INVALID_PHASE, "release_end: called twice")),
        }
        Ok(XSORT_SUCCESS)
    }

    /// Finishes the input; with a file output the sort is then complete.
    fn end_input(&mut self) -> Result<(), Failure> {
        let Phase::Input(mut sorting) = std::mem::replace(&mut self.phase, Phase::Failed) else {
            return Err(Failure::new(XSORT_INTERNAL_ERROR, "internal error: end of input outside the input phase"));
        };
        sorting.finish()?;
        self.phase = if self.file_output { Phase::Done(sorting.stats().cloned().map(Box::new)) } else { Phase::Output(sorting) };
        Ok(())
    }

    /// `xsort_return_recs`: fills `buf` with whole records; `Ok(0)` bytes is the end of the output.
    pub fn return_recs(&mut self, buf: &mut [u8]) -> Result<(xsort_msg_t, usize), Failure> {
        if self.file_output && !matches!(self.phase, Phase::Failed) {
            return Err(Failure::new(
                XSORT_NO_CLIENT_OUTPUT,
                "return_recs: this sort writes its -out_file output; no records are returned",
            ));
        }
        match &self.phase {
            // A sort that reads its -in_file needs no release_end: the first return ends the input.
            Phase::Input(_) if self.file_input => self.end_input()?,
            Phase::Input(_) => {
                return Err(Failure::new(XSORT_INVALID_PHASE, "return_recs: called before release_end; end the input first"))
            }
            Phase::Failed => return Err(self.stopped("return_recs")),
            Phase::Done(_) => return Ok((XSORT_END_OF_OUTPUT, 0)),
            Phase::Output(_) => {}
        }
        let n = match self.out_framing {
            Framing::Fixed(rs) => self.return_fixed(buf, rs)?,
            Framing::Delimited(d) => self.return_delimited(buf, d)?,
        };
        if n > 0 {
            return Ok((XSORT_SUCCESS, n));
        }
        let Phase::Output(sorting) = std::mem::replace(&mut self.phase, Phase::Failed) else { unreachable!("checked above") };
        self.phase = Phase::Done(sorting.stats().cloned().map(Box::new));
        self.stage = Vec::new();
        Ok((XSORT_END_OF_OUTPUT, 0))
    }

    fn sorting(&mut self) -> &mut Sorting {
        match &mut self.phase {
            Phase::Output(s) => s,
            _ => unreachable!("only called in the output phase"),
        }
    }

    /// Fixed-size records go straight from the sort into the caller's buffer.
    fn return_fixed(&mut self, buf: &mut [u8], rs: usize) -> Result<usize, Failure> {
        if buf.len() < rs {
            return Err(Failure::new(
                XSORT_RETURN_BUF_SMALL,
                format!("return_recs: the buffer holds {} bytes, less than one {rs}-byte record", buf.len()),
            ));
        }
        let whole = buf.len() - buf.len() % rs;
        Ok(self.sorting().pull(&mut buf[..whole])?)
    }

    /// Delimited records are pulled into a staging buffer and handed out up to the last whole
    /// record that fits.
    fn return_delimited(&mut self, buf: &mut [u8], d: u8) -> Result<usize, Failure> {
        loop {
            let avail = &self.stage[self.staged..];
            let window = &avail[..avail.len().min(buf.len())];
            let fit = match memchr::memrchr(d, window) {
                Some(i) => Some(i + 1),
                // The output's last record may lack its delimiter.
                None if self.drained && avail.len() <= buf.len() => Some(avail.len()),
                None => None,
            };
            if let Some(n) = fit {
                buf[..n].copy_from_slice(&avail[..n]);
                self.staged += n;
                return Ok(n);
            }
            if let Some(i) = memchr::memchr(d, avail).map(|i| i + 1).or(self.drained.then_some(avail.len())) {
                return Err(Failure::new(
                    XSORT_RETURN_BUF_SMALL,
                    format!("return_recs: the next record is {i} bytes, more than the buffer's {} bytes", buf.len()),
                ));
            }
            // No whole record staged: pull more behind what is left.
            self.stage.drain(..self.staged);
            self.staged = 0;
            let old = self.stage.len();
            self.stage.resize(old + STAGE_BYTES, 0);
            let pulled = match &mut self.phase {
                Phase::Output(s) => s.pull(&mut self.stage[old..]),
                _ => unreachable!("only called in the output phase"),
            };
            let n = pulled?;
            self.stage.truncate(old + n);
            self.drained = n == 0;
        }
    }

    /// The finished sort's statistics, or why there are none yet.
    fn stats(&self, call: &str) -> Result<&SortStats, Failure> {
        match &self.phase {
            Phase::Done(Some(stats)) => Ok(stats),
            Phase::Done(None) => {
                Err(Failure::new(XSORT_INTERNAL_ERROR, format!("{call}: internal error: the finished sort kept no statistics")))
            }
            Phase::Failed => Err(self.stopped(call)),
            Phase::Input(_) | Phase::Output(_) => Err(Failure::new(
                XSORT_INVALID_PHASE,
                format!("{call}: the sort has not finished; statistics come after the end of the output"),
            )),
        }
    }

    /// `xsort_get_stats`: the `--stats` text, kept until `xsort_end`.
    pub fn stats_text(&mut self) -> Result<&CString, Failure> {
        if self.stats_text.is_none() {
            let text = self.stats("get_stats")?.render();
            self.stats_text = Some(CString::new(text).unwrap_or_default());
        }
        Ok(self.stats_text.as_ref().expect("set above"))
    }

    /// `xsort_get_stats_json`: the `--stats-json` document, kept until `xsort_end`.
    pub fn stats_json(&mut self) -> Result<&CString, Failure> {
        if self.stats_json.is_none() {
            let json = serde_json::to_string_pretty(self.stats("get_stats_json")?)
                .map_err(|e| Failure::new(XSORT_INTERNAL_ERROR, format!("get_stats_json: internal error: {e}")))?;
            self.stats_json = Some(CString::new(json).unwrap_or_default());
        }
        Ok(self.stats_json.as_ref().expect("set above"))
    }

    /// `xsort_end`: cancels the sort, if it is still going, and removes its temp files.
    pub fn end(&mut self) {
        self.phase = Phase::Failed;
        self.stage = Vec::new();
    }
}

/// A message as one line: line breaks (a multi-line error) become "; ", NULs are dropped.
fn one_line(message: &str) -> String {
    message.lines().map(str::trim_end).filter(|l| !l.is_empty()).collect::<Vec<_>>().join("; ").replace('\0', "")
}

/// A delimiter byte as a person would write it.
fn show_byte(b: u8) -> String {
    match b {
        b'\n' => "'\\n'".to_string(),
        b'\t' => "'\\t'".to_string(),
        0 => "'\\0'".to_string(),
        b if b.is_ascii_graphic() || b == b' ' => format!("'{}'", b as char),
        b => format!("byte {b}"),
    }
}
