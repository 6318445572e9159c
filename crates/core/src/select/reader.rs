//! Inputs filtered and rewritten as they are read: a reader that passes on only the records a
//! [`Selection`] keeps, each as a [`Reformat`] rewrites it, so the sort engine never indexes,
//! sorts or writes the others, nor the bytes a reformat drops.

use super::{Derivation, Rec, Reformat, Selection};
use std::io::Read;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use xsort_io::StreamReader;

/// Bytes read from the input at a time.
const READ_BYTES: usize = 1 << 20;

/// How the filtered input splits into records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SelectFraming {
    /// Records of this many bytes (a last partial record is passed on, for the engine to refuse).
    Fixed(usize),
    /// Records ended by this byte (a last record without it is decided like any other).
    Terminated(u8),
}

/// What a sort does to the records of all of its inputs as they are read, with the counts of what
/// it decided.
#[derive(Debug)]
pub struct InputTransform {
    /// The derived fields that the selection and the reformat read (none, when None).
    pub derivation: Option<Derivation>,
    /// What is kept (all, when None).
    pub selection: Option<Selection>,
    /// How kept records are rewritten (not at all, when None).
    pub reformat: Option<Reformat>,
    /// How the inputs split into records.
    pub framing: SelectFraming,
    /// Records read, over every input.
    pub read: AtomicU64,
    /// Records kept.
    pub kept: AtomicU64,
}

impl InputTransform {
    /// `derivation`, `selection` and `reformat` applied to inputs framed as `framing`.
    pub fn new(
        derivation: Option<Derivation>,
        selection: Option<Selection>,
        reformat: Option<Reformat>,
        framing: SelectFraming,
    ) -> Arc<Self> {
        Arc::new(InputTransform { derivation, selection, reformat, framing, read: AtomicU64::new(0), kept: AtomicU64::new(0) })
    }

    /// `input`, filtered.
    pub fn filter(self: &Arc<Self>, input: StreamReader) -> StreamReader {
        Box::new(Selecting { input, select: self.clone(), pending: Vec::new(), out: Vec::new(), out_at: 0, eof: false, records: 0 })
    }

    /// Decides the whole records at the start of `data` (all of them when `last`: the input has
    /// ended), appending those kept to `out`, rewritten; returns the bytes decided, or what is
    /// wrong with the input.
    /// `before`: the records of this input decided before `data` (for messages).
    fn decide(&self, data: &[u8], last: bool, out: &mut Vec<u8>, before: u64) -> Result<(usize, u64), String> {
        let (mut read, mut kept) = (0u64, 0u64);
        let mut derived = vec![Vec::new(); self.derivation.as_ref().map_or(0, Derivation::len)];
        // `whole`: the record with its terminator, if it has one.
        let mut keep = |bytes: &[u8], whole: &[u8]| -> Result<(), String> {
            read += 1;
            if let Some(d) = &self.derivation {
                d.compute(bytes, &mut derived).map_err(|e| format!("record {}: {e}", before + read))?;
            }
            let rec = Rec { bytes, derived: &derived };
            if self.selection.as_ref().is_none_or(|s| s.keeps(rec)) {
                kept += 1;
                match &self.reformat {
                    Some(r) => {
                        r.write(rec, out);
                        out.extend_from_slice(&whole[bytes.len()..]);
                    }
                    None => out.extend_from_slice(whole),
                }
            }
            Ok(())
        };
        let used = match self.framing {
            SelectFraming::Fixed(r) => {
                let whole = data.len() / r * r;
                for rec in data[..whole].chunks_exact(r) {
                    keep(rec, rec)?;
                }
                if last && whole < data.len() {
                    // Passed on as it is, for the engine to refuse as a partial record (a reformat
                    // refuses it here: its output would hide which input record was cut).
                    if self.reformat.is_some() {
                        return Err(format!(
                            "its length is not a multiple of the record size {r} ({} bytes left over)",
                            data.len() - whole
                        ));
                    }
                    out.extend_from_slice(&data[whole..]);
                    data.len()
                } else {
                    whole
                }
            }
            SelectFraming::Terminated(t) => {
                let mut start = 0;
                for end in memchr::memchr_iter(t, data) {
                    keep(&data[start..end], &data[start..=end])?;
                    start = end + 1;
                }
                if last && start < data.len() {
                    keep(&data[start..], &data[start..])?;
                    start = data.len();
                }
                start
            }
        };
        self.read.fetch_add(read, Ordering::Relaxed);
        self.kept.fetch_add(kept, Ordering::Relaxed);
        Ok((used, read))
    }
}

/// The reader [`InputTransform::filter`] makes.
struct Selecting {
    input: StreamReader,
    select: Arc<InputTransform>,
    /// Bytes read and not yet decided (a record's start, waiting for its end).
    pending: Vec<u8>,
    /// Records kept and not yet returned, from `out_at`.
    out: Vec<u8>,
    out_at: usize,
    eof: bool,
    /// Records of this input decided so far.
    records: u64,
}

impl Read for Selecting {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.out_at == self.out.len() {
            if self.eof {
                return Ok(0);
            }
            self.out.clear();
            self.out_at = 0;
            let have = self.pending.len();
            self.pending.resize(have + READ_BYTES, 0);
            let n = loop {
                match self.input.read(&mut self.pending[have..]) {
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    other => break other,
                }
            };
            let n = n.inspect_err(|_| self.pending.truncate(have))?;
            self.pending.truncate(have + n);
            self.eof = n == 0;
            let (used, decided) =
                self.select.decide(&self.pending, self.eof, &mut self.out, self.records).map_err(std::io::Error::other)?;
            self.records += decided;
            self.pending.drain(..used);
        }
        let n = buf.len().min(self.out.len() - self.out_at);
        buf[..n].copy_from_slice(&self.out[self.out_at..self.out_at + n]);
        self.out_at += n;
        Ok(n)
    }
}
