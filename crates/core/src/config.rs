//! What a sort is asked to do: the validated settings the CLI (or a future C API) hands the sorter.

use crate::error::{Result, SortError};
use crate::fold::Folding;
use crate::key::KeySpec;
use crate::order::LineOrder;
use crate::select::reader::InputTransform;
use crate::text::TextMode;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use xsort_io::{Compression, OpenedInput};
use xsort_kernels::Method;

/// An input operand.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input {
    /// Standard input.
    Stdin,
    /// A named file (a regular file, FIFO or device).
    Path(PathBuf),
    /// A caller's reader (the library's inputs from memory or any `Read`), read once, in order.
    Reader(Handoff<xsort_io::StreamReader>),
}

/// Where the sorted records go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Output {
    /// Standard output.
    Stdout,
    /// A file, replaced only when the sort is complete.
    Path(PathBuf),
    /// A caller's writer (the library's pulled output, or any `Write`); it gets the sorted bytes
    /// as they are produced, so a failed sort may have written part of them.
    Writer(Handoff<Box<dyn std::io::Write + Send>>),
}

/// A further output file (Nsort's later `-out_file` statements): it gets a copy of the complete
/// sorted output, put in place after the first output file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputCopy {
    /// The file.
    pub path: PathBuf,
    /// Whether the sorted records go at its end rather than replace it (`-out_file=PATH,append`).
    pub append: bool,
    /// Whether it is flushed to stable storage before the sort returns (`-out_file=PATH,sync`).
    pub sync: bool,
}

impl OutputCopy {
    /// A copy into `path` that replaces it, without a sync of its own.
    pub fn new(path: impl Into<PathBuf>) -> OutputCopy {
        OutputCopy { path: path.into(), append: false, sync: false }
    }
}

/// A value handed to the sort once, inside a configuration that may be cloned: every clone shares
/// it, the first to take it gets it, and clones compare equal when they share it.
pub struct Handoff<T> {
    name: PathBuf,
    slot: Arc<Mutex<Option<T>>>,
}

impl<T> Handoff<T> {
    /// `value`, named `name` in messages.
    pub fn new(value: T, name: impl Into<PathBuf>) -> Self {
        Handoff { name: name.into(), slot: Arc::new(Mutex::new(Some(value))) }
    }

    /// The name in messages.
    pub fn name(&self) -> &Path {
        &self.name
    }

    /// The value, if no one took it yet.
    pub fn take(&self) -> Option<T> {
        self.slot.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take()
    }
}

impl<T> Clone for Handoff<T> {
    fn clone(&self) -> Self {
        Handoff { name: self.name.clone(), slot: self.slot.clone() }
    }
}

impl<T> PartialEq for Handoff<T> {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.slot, &other.slot)
    }
}

impl<T> Eq for Handoff<T> {}

impl<T> std::fmt::Debug for Handoff<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Handoff({})", self.name.display())
    }
}

impl Input {
    /// The name in messages (`-` for standard input).
    pub fn name(&self) -> &Path {
        match self {
            Input::Stdin => Path::new("-"),
            Input::Path(p) => p,
            Input::Reader(h) => h.name(),
        }
    }

    /// Opens the input (once: see [`xsort_io::input`]); decompressed when `decompress` is set and
    /// its first bytes are those of a compressed format (see [`xsort_io::codec`]), then filtered
    /// by `select` when given. A caller's reader is not decompressed.
    pub(crate) fn open(&self, decompress: bool, select: Option<&Arc<InputTransform>>) -> xsort_io::Result<OpenedInput> {
        let opened = match self {
            Input::Stdin => OpenedInput::stdin()?,
            Input::Path(p) => OpenedInput::open(p)?,
            Input::Reader(h) => match h.take() {
                Some(reader) => OpenedInput::reader(reader, h.name().to_owned()),
                None => {
                    return Err(xsort_io::IoError::Open {
                        path: h.name().to_owned(),
                        cause: std::io::Error::other("already read by another sort"),
                    })
                }
            },
        };
        let opened = if decompress && !matches!(self, Input::Reader(_)) { opened.decompressed()? } else { opened };
        Ok(match select {
            Some(select) => {
                let s = opened.into_stream();
                OpenedInput::reader(select.filter(s.file), s.name)
            }
            None => opened,
        })
    }
}

/// Whether and how the output is compressed (see [`xsort_io::codec`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum OutputCompression {
    /// As the output file's name says: `.gz` gzip, `.zst` zstd, `.bz2` bzip2, `.xz` xz, each at
    /// its tool's default level; any other name, standard output and a caller's writer plain.
    #[default]
    ByName,
    /// Never, whatever the name.
    Plain,
    /// In this format and level, whatever the destination (standard output too).
    With(Compression),
}

impl OutputCompression {
    /// `none`, `FORMAT` or `FORMAT:LEVEL` (`--compress`, Python's `compress=`); the error says
    /// what is wrong.
    pub fn parse(text: &str) -> Result<Self, String> {
        match text {
            "none" => Ok(OutputCompression::Plain),
            c => Compression::parse(c).map(OutputCompression::With),
        }
    }

    /// The compression of an output to `path` (None: standard output or a caller's writer).
    pub fn of(self, path: Option<&Path>) -> Option<Compression> {
        match self {
            OutputCompression::ByName => path.and_then(xsort_io::Codec::of_path).map(Compression::new),
            OutputCompression::Plain => None,
            OutputCompression::With(c) => Some(c),
        }
    }
}

/// Whether temp runs are stored compressed (see `crate::temp_codec`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum TempCompression {
    /// Plain, unless the input's length is known and the temp directories' free space would not
    /// hold its runs plainly: then zstd at level [`TempCompression::DEFAULT_LEVEL`].
    #[default]
    Auto,
    /// Never, whatever the free space.
    Plain,
    /// Always zstd, at this level (1 to 19).
    Zstd(u32),
}

impl TempCompression {
    /// The level of `--compress-temp` without one, and of the automatic choice: zstd's fastest
    /// level compresses text runs to a third or less at several hundred MB/s a thread.
    pub const DEFAULT_LEVEL: u32 = 1;

    /// `zstd` at `level`, when zstd takes that level (1 to 19); the error says which levels do.
    pub fn zstd(level: u32) -> Result<Self, String> {
        let (range, _) = xsort_io::Codec::Zstd.levels();
        match range.contains(&level) {
            true => Ok(TempCompression::Zstd(level)),
            false => Err(format!("zstd levels go from {} to {}, not '{level}'", range.start(), range.end())),
        }
    }
}

/// How one stream of files is transferred (Nsort's per-file `direct`, `transfer_size`, `count`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoSettings {
    /// Bypass the page cache with O_DIRECT where the filesystem allows it.
    pub direct: bool,
    /// Bytes per read or write request.
    pub transfer_size: usize,
    /// Requests in flight.
    pub count: usize,
}

/// Most transfers a stream keeps in flight, whatever a `count=N` statement asks: each is a reader
/// or writer thread, and beyond a few dozen more only cost threads (Nsort's published line asks 64).
pub const MAX_IO_COUNT: usize = 64;

impl IoSettings {
    /// A stream's transfers: Nsort's per-file statement `file` (if any), then `transfer_size` and
    /// `buffered` (the command line's `--transfer-size` and `--buffered`). Without a `direct` or
    /// `buffered` statement, transfers are direct unless `budget` is too small for them to pay
    /// (see [`crate::plan::MIN_DIRECT_BUDGET`]).
    pub fn of_statement(file: Option<&crate::spec::FileSpec>, transfer_size: Option<u64>, buffered: bool, budget: u64) -> Self {
        let d = IoSettings::default();
        let default_direct = d.direct && budget >= crate::plan::MIN_DIRECT_BUDGET;
        IoSettings {
            direct: !buffered && file.and_then(|f| f.direct).unwrap_or(default_direct),
            transfer_size: transfer_size.or(file.and_then(|f| f.transfer_size)).map(|t| t as usize).unwrap_or(d.transfer_size),
            count: file.and_then(|f| f.count).unwrap_or(d.count).min(MAX_IO_COUNT),
        }
    }
}

impl Default for IoSettings {
    fn default() -> Self {
        IoSettings { direct: true, transfer_size: 8 << 20, count: 4 }
    }
}

/// Everything the engine needs; see the CLI's `--help` for the meaning of each setting. The fields
/// here apply to records and lines alike; [`Format`] holds what belongs to one of them.
#[derive(Clone, Debug)]
pub struct SortConfig {
    /// Inputs, read in order (ties keep this order).
    pub inputs: Vec<Input>,
    /// The output.
    pub output: Output,
    /// What the records are and how they order.
    pub format: Format,
    /// Memory budget in bytes for everything the sort allocates.
    pub memory_budget: u64,
    /// Where the budget came from, for the statistics (e.g. "50% of available memory
    /// (MemAvailable) (11.5 GiB)"; see [`crate::plan::Budget`]); empty: given by the caller.
    pub memory_budget_basis: String,
    /// Worker threads; the sort starts them itself (see `pool`).
    pub threads: usize,
    /// Directories for temp runs (spread round robin).
    pub temp_dirs: Vec<PathBuf>,
    /// In-memory kernel.
    pub method: Method,
    /// Output transfers.
    pub output_io: IoSettings,
    /// Temp-file transfers.
    pub temp_io: IoSettings,
    /// Most runs merged at once (GNU sort's `--batch-size`), if limited.
    pub max_fan_in: Option<usize>,
    /// fsync the output file and its directory before returning.
    pub sync: bool,
    /// GNU sort's `--compress-program`: temp runs are stored through it.
    pub compress_program: Option<String>,
    /// Decompress inputs (files and standard input) whose first bytes are those of gzip, zstd,
    /// bzip2 or xz data (on by default; see [`xsort_io::codec`]).
    pub decompress: bool,
    /// Whether and how the output is compressed.
    pub output_compression: OutputCompression,
    /// Whether temp runs are stored compressed.
    pub temp_compression: TempCompression,
    /// The input's expected length in bytes, when its inputs cannot tell (a stream, a pushed input):
    /// memory is planned as for a file of that length. More input than expected spills.
    pub expected_input_bytes: Option<u64>,
    /// Set by the caller to stop the sort; checked between chunks, in merges and while writing.
    pub cancel: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    /// Nsort's `-nowarn`: the statistics carry no warnings.
    pub no_warnings: bool,
    /// Nsort's `-out_file=PATH,append`: the sorted records go at the end of the output file.
    pub output_append: bool,
    /// Further output files, each a copy of the sorted output (with an output file only).
    pub output_copies: Vec<OutputCopy>,
    /// Nsort's `-include` / `-omit`: only the input records it keeps are read into the sort.
    pub select: Option<Arc<InputTransform>>,
    /// Nsort's `-merge` of lines (GNU's `-m` that checks): a merge of the inputs fails on a record
    /// that orders before the one ahead of it in its input.
    pub merge_check: bool,
}

/// The format of the records, with the settings that only it takes.
#[derive(Clone, Debug)]
pub enum Format {
    /// Fixed-size binary records ordered by byte-range keys.
    Records(RecordFormat),
    /// Text lines (or other delimited records) ordered as GNU sort orders them.
    Lines(LineFormat),
}

/// Fixed-size records.
#[derive(Clone, Debug)]
pub struct RecordFormat {
    /// Bytes per record.
    pub record_size: usize,
    /// Key parts in priority order; empty means the whole record.
    pub key: KeySpec,
    /// Records with equal keys folded into one (`-u`, `-noduplicates`, `-summarize`).
    pub folding: Folding,
    /// Input transfers (lines are read through the page cache, in their own request sizes).
    pub input_io: IoSettings,
    /// Reserve the output's disk space before writing.
    pub preallocate: bool,
    /// Pre-fault the sort buffer before reading (Nsort's `-touch`).
    pub touch: bool,
    /// Nsort's `-merge`: the inputs are each sorted already, and are merged (each checked for
    /// order) without a sort pass.
    pub merge: bool,
}

impl RecordFormat {
    /// Records of `record_size` bytes, the whole record as the key, defaults for the rest.
    pub fn new(record_size: usize) -> Self {
        RecordFormat {
            record_size,
            key: KeySpec::default(),
            folding: Folding::default(),
            input_io: IoSettings::default(),
            preallocate: true,
            touch: false,
            merge: false,
        }
    }
}

/// Delimited records: text lines.
#[derive(Clone, Debug)]
pub struct LineFormat {
    /// Line terminator: `\n`, or NUL with `-z` (or a `--spec` record delimiter).
    pub terminator: u8,
    /// The order of lines.
    pub order: LineOrder,
    /// Output only the first of each run of equal lines (`-u`).
    pub unique: bool,
    /// Sort, or merge inputs already sorted (`-m`).
    pub mode: TextMode,
    /// Records at the start of each input that are its header: the first input's are written
    /// first, unsorted; every other input's must be the same, and are dropped.
    pub header: usize,
    /// Nsort's `-match`: each output line preceded by whether its keys match the line's before.
    pub mark: Option<crate::fold::MatchMark>,
}

impl LineFormat {
    /// Where the lines end: at each terminator, or for CSV records at each one outside quotes.
    pub fn splitter(&self) -> crate::framing::Splitter {
        crate::framing::Splitter { terminator: self.terminator, csv: self.order.csv() }
    }
}

impl SortConfig {
    /// A configuration of `format` with defaults for everything but the essentials.
    pub fn new(inputs: Vec<Input>, output: Output, format: Format, memory_budget: u64) -> Self {
        SortConfig {
            inputs,
            output,
            format,
            memory_budget,
            memory_budget_basis: String::new(),
            threads: crate::limits::worker_threads(None),
            temp_dirs: vec![std::env::temp_dir()],
            method: Method::Radix,
            output_io: IoSettings::default(),
            temp_io: IoSettings::default(),
            max_fan_in: None,
            sync: false,
            compress_program: None,
            decompress: true,
            output_compression: OutputCompression::default(),
            temp_compression: TempCompression::default(),
            expected_input_bytes: None,
            cancel: None,
            no_warnings: false,
            output_append: false,
            output_copies: Vec::new(),
            select: None,
            merge_check: false,
        }
    }

    /// Whether the caller has cancelled the sort.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.as_ref().is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// [`SortError::Cancelled`] once the caller has cancelled the sort.
    pub fn check_cancelled(&self) -> Result<()> {
        if self.is_cancelled() {
            return Err(SortError::Cancelled);
        }
        Ok(())
    }
}
