//! The library: a sort described by a builder ([`Sort`]) and run file to file ([`Sort::run`]), as a
//! push/pull session ([`Sort::start`], [`Sorting`]), or on records in memory
//! ([`Sort::sort_slice`], [`Sort::sort_into`], [`Sort::sorted_indices`]).
//!
//! A sort is of fixed-size records ([`Sort::records`]: keys are byte ranges, typed or not) or of
//! text lines ([`Sort::lines`]: GNU sort's ordering options, as `sort` under `LC_ALL=C` takes
//! them), or described by Nsort statements ([`Sort::from_spec`]), the language of the `xsort`
//! command's `--spec`. Every sort runs on worker threads of its own ([`Sort::threads`]), within
//! its memory budget ([`Sort::memory`]), spilling sorted runs to its temp directories past it.

mod gnu;
mod job;
mod memory;
mod session;

pub use gnu::GnuOrdering;
use job::Job;
pub use session::{CancelHandle, Sorting};

use crate::config::{self, Handoff, Input, Output, OutputCompression};
use crate::csv::CsvDialect;
use crate::error::{Result, SortError};
use crate::fold::Folding;
use crate::key::{KeyPart, KeySpec};
use crate::order::{LineOrder, LineOrderConfig, Locale};
use crate::size::MemorySize;
use crate::spec::{self, FileSpec, NsortSpec};
use crate::stats::{SortCounters, SortStats};
use crate::text::check::Disorder;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use xsort_kernels::Method;

/// What is sorted.
#[derive(Clone, Debug)]
enum Format {
    /// Fixed-size records.
    Records { record_size: usize, key: Vec<KeyPart>, folding: Folding, touch: bool, merge: bool },
    /// Lines (or Nsort's delimited records, or CSV records) ended by `terminator`, the first
    /// `header` records of each input its header.
    Lines { terminator: u8, order: LineOrderConfig, merge: bool, header: usize },
}

/// A sort, described step by step: what is sorted and how, where from and where to, with what
/// resources. Then [`Sort::run`] sorts named inputs into a named output, [`Sort::start`] starts
/// a push/pull session, and [`Sort::sort_slice`] sorts records in memory.
///
/// File to file:
///
/// ```
/// use xsort_core::Sort;
/// # let dir = tempfile::tempdir()?;
/// # let (input, output) = (dir.path().join("in"), dir.path().join("out"));
/// std::fs::write(&input, b"pear\napple\nfig\n")?;
/// let stats = Sort::lines().input_path(&input).output_path(&output).run()?;
/// assert_eq!(std::fs::read(&output)?, b"apple\nfig\npear\n");
/// assert_eq!(stats.records, 3);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// Records in memory, by a typed key (an unsigned little-endian 32-bit number at offset 4):
///
/// ```
/// use xsort_core::Sort;
///
/// let mut records: Vec<u8> = [30u32, 10, 20].iter().flat_map(|v| [*b"rec:", v.to_le_bytes()].concat()).collect();
/// Sort::records(8).key_bytes("4:4:u32le")?.sort_slice(&mut records)?;
/// let values: Vec<u32> = records.chunks(8).map(|r| u32::from_le_bytes(r[4..].try_into().unwrap())).collect();
/// assert_eq!(values, [10, 20, 30]);
/// # Ok::<(), xsort_core::SortError>(())
/// ```
#[derive(Clone, Debug)]
pub struct Sort {
    format: Format,
    inputs: Vec<Input>,
    output: Option<Output>,
    budget: Option<crate::plan::Budget>,
    threads: Option<usize>,
    temp_dirs: Vec<PathBuf>,
    method: Method,
    /// The transfer statements of the input, output and temp files (Nsort's per-file `direct`,
    /// `transfer_size`, `count`), resolved against the budget when the sort starts.
    io: [Option<FileSpec>; 3],
    /// Bytes per transfer of every stream, over the statements' own.
    transfer_size: Option<u64>,
    /// Transfers through the page cache, whatever the statements say.
    buffered: bool,
    max_fan_in: Option<usize>,
    sync: bool,
    compress_program: Option<String>,
    temp_compression: crate::config::TempCompression,
    decompress: bool,
    output_compression: OutputCompression,
    expected_input_bytes: Option<u64>,
    cancel: Option<Arc<AtomicBool>>,
    counters: Option<Arc<SortCounters>>,
    /// Why the sort cannot start, from a builder call that cannot fail (see [`Sort::key`]).
    refused: Option<String>,
    /// Nsort's `-nowarn`: [`Sort::warnings`] is empty.
    no_warnings: bool,
    /// Nsort's `-out_file=PATH,append` ([`Sort::append`]).
    append: bool,
    /// Nsort's later `-out_file` statements ([`Sort::output_copy`]).
    output_copies: Vec<crate::config::OutputCopy>,
    /// Nsort's `-match[=N]` ([`Sort::mark_matches`]).
    match_mark: Option<crate::fold::MatchMark>,
    /// Nsort's `-derived` fields, which the selection and the reformat read.
    derivation: Option<crate::select::Derivation>,
    /// Nsort's `-include` / `-omit`: the input records kept.
    selection: Option<crate::select::Selection>,
    /// Nsort's `-merge` of lines: each input's order is checked as it is merged.
    merge_check: bool,
    /// Nsort's `-reformat`, and the size of the input records it rewrites (fixed-size records).
    reformat: Option<(crate::select::Reformat, Option<usize>)>,
}

/// Which transfers an [`IoSettings`] of [`Sort`] is for.
const INPUT_IO: usize = 0;
const OUTPUT_IO: usize = 1;
const TEMP_IO: usize = 2;

impl Sort {
    fn of(format: Format) -> Sort {
        Sort {
            format,
            inputs: Vec::new(),
            output: None,
            budget: None,
            threads: None,
            temp_dirs: Vec::new(),
            method: Method::Radix,
            io: [None, None, None],
            transfer_size: None,
            buffered: false,
            max_fan_in: None,
            sync: false,
            compress_program: None,
            temp_compression: crate::config::TempCompression::Auto,
            decompress: true,
            output_compression: OutputCompression::ByName,
            expected_input_bytes: None,
            cancel: None,
            counters: None,
            refused: None,
            no_warnings: false,
            append: false,
            output_copies: Vec::new(),
            match_mark: None,
            derivation: None,
            selection: None,
            reformat: None,
            merge_check: false,
        }
    }

    /// A sort of records of `record_size` bytes, by the whole record until keys are given
    /// ([`Sort::key`], [`Sort::key_bytes`]). Records with equal keys keep their input order.
    pub fn records(record_size: usize) -> Sort {
        Sort::of(Format::Records { record_size, key: Vec::new(), folding: Folding::default(), touch: false, merge: false })
    }

    /// A sort of text lines ended by `\n`, by whole lines in byte order until GNU ordering options
    /// are given ([`Sort::gnu_args`]). A last line without its newline gets one.
    pub fn lines() -> Sort {
        Sort::of(Format::Lines { terminator: b'\n', order: LineOrderConfig::default(), merge: false, header: 0 })
    }

    /// A sort described by Nsort statements, as the `xsort` command's `--spec` takes them: the
    /// record format (`-format=size:N` for fixed-size records, `-format=delimiter:C` for
    /// delimited ones), `-field` and `-key`, `-memory`, `-temp_file`, `-processes`, `-method`,
    /// `-noduplicates`, `-summarize`, and `-in_file` / `-out_file` for a sort that reads or writes
    /// files itself.
    ///
    /// ```
    /// use xsort_core::Sort;
    ///
    /// let sort = Sort::from_spec("-format=size:100 -field=name:k,size:10,off:0,character -key=k -memory=64m")?;
    /// assert_eq!(sort.record_size(), Some(100));
    /// # Ok::<(), xsort_core::SortError>(())
    /// ```
    pub fn from_spec(statements: &str) -> Result<Sort> {
        let spec = spec::parse_spec(statements)?;
        let sort = match (spec.record_size, spec.record_delimiter) {
            (Some(record_size), _) => Sort::records(record_size),
            (None, Some(terminator)) => Sort::delimited(terminator),
            (None, None) => {
                return Err(SortError::BadOption("no record format given: use -format=size:N or -format=delimiter:C".into()));
            }
        };
        sort.statements(&spec)
    }

    /// A sort of Nsort's delimited records: records ended by `terminator`, ordered by the fields
    /// and keys of [`Sort::statements`] (the whole record in byte order until then). Records with
    /// equal keys keep their input order.
    pub fn delimited(terminator: u8) -> Sort {
        let order = LineOrderConfig { stable: true, ..LineOrderConfig::default() };
        Sort::of(Format::Lines { terminator, order, merge: false, header: 0 })
    }

    /// Applies parsed Nsort statements (see [`Sort::from_spec`]) to this sort: the keys of its
    /// record format (after the keys given before), `-noduplicates`, `-summarize`, `-touch`, and
    /// what every format shares: `-in_file` (read before the inputs added later), `-out_file`,
    /// `-memory`, `-temp_file` (after the temp directories added before), `-processes`,
    /// `-method` and the per-file transfer statements. A `-format` statement must describe this
    /// sort's records.
    pub fn statements(mut self, spec: &NsortSpec) -> Result<Sort> {
        let mismatch = || SortError::BadOption("the statements' -format does not describe the sort's records".into());
        match &mut self.format {
            Format::Records { record_size, key, folding, touch, merge } => {
                *merge |= spec.merge;
                if spec.record_delimiter.is_some() || spec.record_size.is_some_and(|r| r != *record_size) {
                    return Err(mismatch());
                }
                key.extend(spec::mapping::record_keys(spec));
                folding.unique |= spec.duplicates == Some(false);
                folding.sums.extend(spec::mapping::sum_fields(spec));
                *touch = spec.touch.unwrap_or(*touch);
            }
            Format::Lines { terminator, order, merge, .. } => {
                *merge |= spec.merge;
                self.merge_check |= spec.merge;
                if spec.record_size.is_some() || spec.record_delimiter.is_some_and(|t| t != *terminator) {
                    return Err(mismatch());
                }
                if !spec.fields.is_empty() || !spec.keys.is_empty() {
                    let (separator, keys) = spec::mapping::line_keys(spec, *terminator)?;
                    order.keys = keys;
                    order.separator = separator;
                    order.stable = true;
                }
                order.unique |= spec.duplicates == Some(false);
            }
        }
        self.inputs.extend(spec.in_files.iter().map(|f| Input::Path(f.path.clone())));
        if let Some(f) = &spec.out_file {
            self.output = Some(Output::Path(f.path.clone()));
            self.sync |= f.sync;
            self.append |= f.append;
        }
        self.output_copies.extend(spec.out_copies.iter().map(|f| crate::config::OutputCopy {
            path: f.path.clone(),
            append: f.append,
            sync: f.sync,
        }));
        self.match_mark = spec.match_mark.or(self.match_mark);
        if let Some(m) = spec.memory {
            self = self.memory_size(m);
        }
        self.threads = spec.processes.or(self.threads);
        self.no_warnings |= spec.nowarn;
        if spec.selection.is_some() {
            self.selection = spec.selection.clone();
        }
        if spec.derivation.is_some() {
            self.derivation = spec.derivation.clone();
        }
        if let Some(r) = &spec.reformat {
            self.reformat = Some((r.clone(), spec.input_record_size));
        }
        self.temp_dirs.extend(spec.temp_dirs.iter().map(|t| t.path.clone()));
        if spec.method == Some(spec::Method::Merge) {
            self.method = Method::Merge;
        }
        let files = [spec.in_files.first(), spec.out_file.as_ref(), spec.temp_dirs.first()];
        for (io, file) in self.io.iter_mut().zip(files) {
            if let Some(f) = file {
                *io = Some(f.clone());
            }
        }
        Ok(self)
    }

    /// Adds a key of fixed-size records (keys compare in the order added). A part of type
    /// [`crate::KeyType::Custom`] is ordered by a function declared with
    /// [`crate::key::custom::declare_comparison`].
    pub fn key(mut self, part: KeyPart) -> Sort {
        match &mut self.format {
            Format::Records { key, .. } => key.push(part),
            // Kept for the start of the sort, which refuses it.
            Format::Lines { .. } => {
                self.refused = Some(format!("key {part} is a key of fixed-size records; lines take GNU keys (gnu_args)"))
            }
        }
        self
    }

    /// Adds a key of fixed-size records in the `xsort` command's `--key-bytes` form:
    /// `OFFSET:LENGTH[:TYPE][:r]` (`0:10`, `8:8:i64le:r`, `16:4:f32be`...).
    pub fn key_bytes(mut self, text: &str) -> Result<Sort> {
        let part = KeyPart::parse_key_bytes(text)?;
        match &mut self.format {
            Format::Records { key, .. } => key.push(part),
            Format::Lines { .. } => {
                return Err(SortError::BadOption(format!("key '{text}' is a key of fixed-size records; lines take GNU keys (-k)")))
            }
        }
        Ok(self)
    }

    /// Orders lines by GNU sort's ordering options, given as `sort` takes them on its command line
    /// (in the sort's [`Locale`], the C locale unless [`Sort::locale`] says otherwise): keys (`-k2,2n`, `--key=1.3,1.5`), the field separator (`-t,`), the
    /// global ordering letters `-b -d -f -g -h -i -M -n -R -r -V` (also grouped, as `-nr`, and in
    /// their long forms), `-s`, `-u`, `-z`, `-m` (merge inputs already sorted) and
    /// `--random-source=FILE`. Other options have builder methods of their own and are refused
    /// here.
    ///
    /// ```
    /// use xsort_core::Sort;
    ///
    /// let mut out = Vec::new();
    /// let mut sorting = Sort::lines().gnu_args(["-t,", "-k2,2nr"])?.start()?;
    /// sorting.push(b"a,1\nb,10\nc,2\n")?;
    /// sorting.write_to(&mut out)?;
    /// assert_eq!(out, b"b,10\nc,2\na,1\n");
    /// # Ok::<(), xsort_core::SortError>(())
    /// ```
    pub fn gnu_args<I, S>(self, args: I) -> Result<Sort>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.gnu_ordering(gnu::parse(args)?)
    }

    /// Orders lines by GNU sort's ordering options given as values ([`GnuOrdering`]), as a
    /// command line's own parser gives them; they are checked here as [`Sort::gnu_args`] checks
    /// them.
    pub fn gnu_ordering(mut self, options: GnuOrdering) -> Result<Sort> {
        let Format::Lines { terminator, order, merge, .. } = &mut self.format else {
            return Err(SortError::BadOption("GNU ordering options apply to text lines; records take keys (key_bytes)".into()));
        };
        let parsed = options.apply(order.clone())?;
        *order = parsed.order;
        *terminator = if parsed.zero_terminated { 0 } else { *terminator };
        *merge |= parsed.merge;
        Ok(self)
    }

    /// Reads the lines as CSV records of `dialect` ([`crate::csv`]): a record ends at a newline
    /// outside quotes, `-k` field numbers count its fields, and keys compare the fields' unquoted
    /// values. Records are written as read. A quote left open at the end of an input (and, for a
    /// strict dialect, a stray quote) is an error naming the file and line.
    ///
    /// ```
    /// use xsort_core::{CsvDialect, Sort};
    ///
    /// let mut out = Vec::new();
    /// let mut sorting = Sort::lines().csv(CsvDialect::CSV).header(1).gnu_args(["-k", "price:n"])?.start()?;
    /// sorting.push(b"name,price\n\"pen, blue\",3\n\"ink \"\"black\"\"\",12\nnib,-1\n")?;
    /// sorting.write_to(&mut out)?;
    /// assert_eq!(out, b"name,price\nnib,-1\n\"pen, blue\",3\n\"ink \"\"black\"\"\",12\n");
    /// # Ok::<(), xsort_core::SortError>(())
    /// ```
    pub fn csv(mut self, dialect: CsvDialect) -> Sort {
        match &mut self.format {
            Format::Lines { order, .. } if order.jsonl => self.refused = Some("lines are CSV records or JSON values, not both".into()),
            Format::Lines { order, .. } => order.csv = Some(dialect),
            Format::Records { .. } => self.refused = Some("CSV applies to text records, not to fixed-size ones".into()),
        }
        self
    }

    /// Reads the lines as JSON values, one per line (JSON lines, [`crate::json`]): keys are paths
    /// into them (`gnu_args(["-k", ".user.age", "-k", ".name:r"])`), values of different types
    /// order as jq orders them with a missing value first, numbers by value, strings by their
    /// unescaped bytes. A line that is not one JSON value (a blank line holds none) is an error
    /// naming the file and line. Lines are written as read.
    ///
    /// ```
    /// use xsort_core::Sort;
    ///
    /// let mut out = Vec::new();
    /// let mut sorting = Sort::lines().jsonl().gnu_args(["-k", ".age"])?.start()?;
    /// sorting.push(b"{\"age\": 30}\n{\"name\": \"x\"}\n{\"age\": 4.5}\n")?;
    /// sorting.write_to(&mut out)?;
    /// assert_eq!(out, b"{\"name\": \"x\"}\n{\"age\": 4.5}\n{\"age\": 30}\n");
    /// # Ok::<(), xsort_core::SortError>(())
    /// ```
    pub fn jsonl(mut self) -> Sort {
        match &mut self.format {
            Format::Lines { order, .. } if order.csv.is_some() => {
                self.refused = Some("lines are CSV records or JSON values, not both".into())
            }
            Format::Lines { order, .. } => order.jsonl = true,
            Format::Records { .. } => self.refused = Some("JSON lines are text records, not fixed-size ones".into()),
        }
        self
    }

    /// Orders text lines in `locale` as GNU sort does there: text by its collation, numbers
    /// (`-n -h -g`) with its decimal point and thousands separator, `-M` by its month names. The
    /// default is the C locale (bytes), whatever the environment says; [`Locale::from_env`] reads
    /// the environment as GNU sort does. JSON lines ignore it.
    pub fn locale(mut self, locale: Locale) -> Sort {
        match &mut self.format {
            Format::Lines { order, .. } => order.locale = locale,
            Format::Records { .. } => self.refused = Some("a locale orders text lines; records compare bytes and typed numbers".into()),
        }
        self
    }

    /// Takes the first `records` records (lines, or CSV records) of each input as its header: the
    /// output starts with the first input's, unsorted; every later input must start with the same
    /// (an error naming the input otherwise), and its header is dropped. Keys may then name a
    /// column by the header's field (`-k price:n`).
    pub fn header(mut self, records: usize) -> Sort {
        match &mut self.format {
            Format::Lines { header, .. } => *header = records,
            Format::Records { .. } => self.refused = Some("a header applies to text records, not to fixed-size ones".into()),
        }
        self
    }

    /// Keeps only the first record (or line) of each group with equal keys.
    pub fn unique(mut self, unique: bool) -> Sort {
        match &mut self.format {
            Format::Records { folding, .. } => folding.unique = unique,
            Format::Lines { order, .. } => order.unique = unique,
        }
        self
    }

    /// The memory budget in bytes for everything the sort allocates (default: half the memory the
    /// process may use now: the smallest of `MemAvailable` and the room its memory cgroup and
    /// `RLIMIT_AS` leave). Past it, the sort spills sorted runs to its temp
    /// directories and merges them.
    pub fn memory(mut self, bytes: u64) -> Sort {
        self.budget = Some(crate::plan::Budget { bytes, basis: String::new(), warning: None });
        self
    }

    /// Worker threads (default: one per CPU). The sort starts them itself, and leaves rayon's
    /// global pool alone.
    pub fn threads(mut self, n: usize) -> Sort {
        self.threads = Some(n.max(1));
        self
    }

    /// Adds a directory for temp runs (default: the system's temp directory). Runs are spread over
    /// the directories round robin.
    pub fn temp_dir(mut self, dir: impl Into<PathBuf>) -> Sort {
        self.temp_dirs.push(dir.into());
        self
    }

    /// Adds an input file, read in order after the inputs added before it (records with equal
    /// keys keep this order).
    pub fn input_path(mut self, path: impl Into<PathBuf>) -> Sort {
        self.inputs.push(Input::Path(path.into()));
        self
    }

    /// Adds an input read from `reader` to its end, named `name` in messages.
    pub fn input_reader(mut self, reader: impl std::io::Read + Send + 'static, name: &str) -> Sort {
        self.inputs.push(Input::Reader(Handoff::new(Box::new(reader), name)));
        self
    }

    /// Adds an input held in memory.
    pub fn input_bytes(self, bytes: impl AsRef<[u8]> + Send + 'static) -> Sort {
        self.input_reader(std::io::Cursor::new(bytes), "(bytes)")
    }

    /// The output file: written beside its target and put in place only when the sort is complete
    /// (an existing file is replaced then, keeping its mode and owner).
    pub fn output_path(mut self, path: impl Into<PathBuf>) -> Sort {
        self.output = Some(Output::Path(path.into()));
        self
    }

    /// Adds the sorted records at the end of the output file rather than replacing it (Nsort's
    /// `-out_file=PATH,append`): once the sort is complete, and only if the file still has the
    /// length it had when the sort began (else the sort fails and appends nothing). A file that
    /// does not exist is created. Standard output and writers are refused.
    pub fn append(mut self, append: bool) -> Sort {
        self.append = append;
        self
    }

    /// Precedes each output record with one byte, `1` when its first `keys` keys (all of them
    /// when None; without keys, the whole record) equal the record's before it, `0` when they do
    /// not and before the first record: Nsort's `-match[=N]`, as Ordinal's SUMP Pump reads it to
    /// find where each group of equal keys starts. Fixed-size records grow by that byte.
    pub fn mark_matches(mut self, keys: Option<usize>) -> Sort {
        self.match_mark = Some(crate::fold::MatchMark { keys });
        self
    }

    /// Adds another output file that gets a copy of the complete sorted output (Nsort's later
    /// `-out_file` statements; [`OutputCopy::append`] and [`OutputCopy::sync`] as for the output
    /// file). The copies are made once the sort is complete, from the output file (so the sort
    /// needs one, and copies are compressed alike), and put in place after it, each as the output
    /// file is: a failed sort leaves them all as they were.
    ///
    /// [`OutputCopy::append`]: crate::OutputCopy::append
    /// [`OutputCopy::sync`]: crate::OutputCopy::sync
    pub fn output_copy(mut self, copy: crate::OutputCopy) -> Sort {
        self.output_copies.push(copy);
        self
    }

    /// The output: `writer` gets the sorted bytes as they are produced (so after a failed sort it
    /// may hold part of them).
    pub fn output_writer(mut self, writer: impl std::io::Write + Send + 'static) -> Sort {
        self.output = Some(Output::Writer(Handoff::new(Box::new(writer), "(writer)")));
        self
    }

    /// The input's expected length in bytes, for inputs that cannot tell it (pushed input, readers):
    /// the sort plans its memory as for a file of that length rather than for its whole budget.
    /// Input up to that length (and within the budget) is sorted in one pass; more is still sorted
    /// correctly, spilling the excess to the temp directories.
    pub fn expected_input_bytes(mut self, bytes: u64) -> Sort {
        self.expected_input_bytes = Some(bytes);
        self
    }

    /// A flag that cancels the sort when set (from any thread): [`Sort::run`], a session and the
    /// in-memory sorts check it between chunks, merge blocks, slices of the extraction and the
    /// gather, and radix buckets, and fail with [`SortError::Cancelled`] within a fraction of a
    /// second, their temp files removed and no output file left; an in-memory sort's output then
    /// holds unspecified contents, and [`Sort::sort_slice`] leaves the records as they were.
    /// (A session also has [`Sorting::cancel_handle`].)
    pub fn cancel_flag(mut self, flag: Arc<AtomicBool>) -> Sort {
        self.cancel = Some(flag);
        self
    }

    /// The in-memory kernel (default: radix sort).
    pub fn method(mut self, method: Method) -> Sort {
        self.method = method;
        self
    }

    /// Stores temp runs through `program` (`program` compresses standard input to standard output,
    /// `program -d` decompresses), as GNU sort's `--compress-program`.
    pub fn compress_program(mut self, program: impl Into<String>) -> Sort {
        self.compress_program = Some(program.into());
        self
    }

    /// Whether temp runs are stored zstd-compressed (default: [`TempCompression::Auto`], only
    /// when the input's length is known and the temp directories' free space would not hold its
    /// runs plainly). Compressed runs stay extents of the shared temp file; a block of each run is
    /// compressed on each of several threads, and the encoder's and each merged run's decoder's
    /// buffers come out of the memory budget. [`TempCompression::Zstd`] with
    /// [`Sort::compress_program`] is refused.
    ///
    /// [`TempCompression::Auto`]: crate::TempCompression::Auto
    /// [`TempCompression::Zstd`]: crate::TempCompression::Zstd
    pub fn compress_temp(mut self, compression: crate::config::TempCompression) -> Sort {
        self.temp_compression = compression;
        self
    }

    /// Whether inputs whose first bytes are those of gzip, zstd, bzip2 or xz data are
    /// decompressed as they are read (default: yes). Files and standard input are; a caller's
    /// reader is read as given.
    pub fn decompress(mut self, decompress: bool) -> Sort {
        self.decompress = decompress;
        self
    }

    /// Whether and how the output is compressed (default: as its file name says, `.gz`, `.zst`,
    /// `.bz2` or `.xz`).
    pub fn compress_output(mut self, compression: OutputCompression) -> Sort {
        self.output_compression = compression;
        self
    }

    /// Makes the output file durable (fsync of the file and its directory) before the sort ends.
    pub fn sync(mut self, sync: bool) -> Sort {
        self.sync = sync;
        self
    }

    /// The memory budget as a size or a share of memory, as `-S` and Nsort's `-memory` give it: a
    /// percentage is of the most memory the process may hold, and a request beyond 90% of what it
    /// may use now is clamped there ([`Sort::warnings`] then says so). The statistics name where
    /// the budget came from.
    pub fn memory_size(mut self, size: MemorySize) -> Sort {
        self.budget = Some(crate::plan::resolve_budget(Some(size)));
        self
    }

    /// What the sort will do otherwise than asked (a memory budget clamped to what the machine
    /// has), for the caller to show before it runs; none after Nsort's `-nowarn`.
    pub fn warnings(&self) -> Vec<String> {
        if self.no_warnings {
            return Vec::new();
        }
        self.budget.iter().filter_map(|b| b.warning.clone()).collect()
    }

    /// Adds standard input as an input.
    pub fn input_stdin(mut self) -> Sort {
        self.inputs.push(Input::Stdin);
        self
    }

    /// The output is standard output.
    pub fn output_stdout(mut self) -> Sort {
        self.output = Some(Output::Stdout);
        self
    }

    /// Bytes per read or write request of every file (default 8 MiB, or what Nsort's per-file
    /// `transfer_size` statements say).
    pub fn transfer_size(mut self, bytes: u64) -> Sort {
        self.transfer_size = Some(bytes);
        self
    }

    /// Reads and writes every file through the page cache, whatever Nsort's `direct` statements
    /// say (by default transfers bypass it where the filesystem allows, once the budget is large
    /// enough for them to pay).
    pub fn buffered(mut self, buffered: bool) -> Sort {
        self.buffered = buffered;
        self
    }

    /// The most runs merged at once (at least 2), as GNU sort's `--batch-size`; more runs are
    /// merged in levels (default: as many as the budget's merge buffers allow).
    pub fn max_fan_in(mut self, runs: usize) -> Sort {
        self.max_fan_in = Some(runs.max(2));
        self
    }

    /// Touches every page of the sort's memory before reading, as Nsort's `-touch` (fixed-size
    /// records only).
    pub fn touch(mut self, touch: bool) -> Sort {
        match &mut self.format {
            Format::Records { touch: t, .. } => *t = touch,
            Format::Lines { .. } if touch => self.refused = Some("touch applies to fixed-size records, not to lines".into()),
            Format::Lines { .. } => {}
        }
        self
    }

    /// Counters the sort updates as it runs (bytes read, spilled, merged and written), for a
    /// progress display on another thread.
    pub fn progress(mut self, counters: Arc<SortCounters>) -> Sort {
        self.counters = Some(counters);
        self
    }

    /// The sort without its selection (Nsort's `-include` / `-omit`), and the selection as a test
    /// of one record (a line without its terminator), for a front end that selects records itself
    /// before they reach the sort (`xsort-mpi`, before its exchange). A sort that also derives
    /// fields or rewrites its records (`-derived`, `-reformat`) is refused: what those compute is
    /// known only to the engine's reader; so is one that marks matches (`-match`), whose marks
    /// run across the whole output.
    pub fn take_selection(mut self) -> Result<(Sort, Option<RecordFilter>)> {
        if self.derivation.is_some() || self.reformat.is_some() {
            return Err(SortError::BadOption(
                "-derived fields and -reformat are applied as the engine reads its inputs; \
                 here only -include and -omit on the fields as they are can be"
                    .into(),
            ));
        }
        if self.match_mark.is_some() {
            return Err(SortError::BadOption("-match marks each record against the one before it in the whole output: one sort's".into()));
        }
        let filter = self.selection.take().map(|s| RecordFilter(Arc::new(s)));
        Ok((self, filter))
    }

    /// Bytes per record of a sort of fixed-size records; None for lines and delimited records.
    pub fn record_size(&self) -> Option<usize> {
        match self.format {
            Format::Records { record_size, .. } => Some(record_size),
            Format::Lines { .. } => None,
        }
    }

    /// Bytes per record the sort takes in (fixed-size records): those of the records a
    /// `-reformat` rewrites, or [`Sort::record_size`].
    pub fn input_record_size(&self) -> Option<usize> {
        self.reformat.as_ref().and_then(|(_, size)| *size).or(self.record_size())
    }

    /// Bytes per record the output holds (fixed-size records): [`Sort::record_size`], and the
    /// byte of [`Sort::mark_matches`].
    pub fn output_record_size(&self) -> Option<usize> {
        self.record_size().map(|r| r + usize::from(self.match_mark.is_some()))
    }

    /// The byte that ends each record of a sort of lines or delimited records; None for
    /// fixed-size records.
    pub fn record_delimiter(&self) -> Option<u8> {
        match self.format {
            Format::Records { .. } => None,
            Format::Lines { terminator, .. } => Some(terminator),
        }
    }

    /// Whether input files were named (then [`Sorting::push`] is refused).
    pub fn has_file_input(&self) -> bool {
        !self.inputs.is_empty()
    }

    /// The inputs' names in messages, in order: their paths, `-` for standard input, and the names
    /// readers were given.
    pub fn input_names(&self) -> Vec<&std::path::Path> {
        self.inputs.iter().map(Input::name).collect()
    }

    /// The output file named, if any.
    pub fn output_file(&self) -> Option<&std::path::Path> {
        if let Some(Output::Path(p)) = &self.output {
            Some(p)
        } else {
            None
        }
    }

    /// Whether an output was named (then [`Sorting::pull`] is refused).
    pub fn has_file_output(&self) -> bool {
        self.output.is_some()
    }

    /// The order the sort puts records (or lines) in, for a caller that partitions or checks data
    /// as the sort would order it.
    pub fn order(&self) -> Result<Order> {
        self.check_refused()?;
        match &self.format {
            Format::Records { record_size, key, .. } => Ok(Order::Records(KeySpec::new(key.clone()).resolve(*record_size)?, *record_size)),
            Format::Lines { terminator, order, .. } => Ok(Order::Lines(LineOrder::new(order.clone())?, *terminator)),
        }
    }

    /// Sorts the named inputs into the named output. On error nothing is left at the output path
    /// and no temp file remains.
    pub fn run(self) -> Result<SortStats> {
        if self.inputs.is_empty() {
            return Err(SortError::Usage("no input: name one (input_path, input_reader, input_bytes), or start() and push".into()));
        }
        if self.output.is_none() {
            return Err(SortError::Usage("no output: name one (output_path, output_writer), or start() and pull".into()));
        }
        self.job()?.run()
    }

    /// Checks that the input is already in order (GNU sort's `-c`) instead of sorting it: returns
    /// the first line out of order, if any (with [`Sort::unique`], a line equal to the one before
    /// it is out of order too). Lines only, from one named input.
    pub fn check(self) -> Result<Option<Disorder>> {
        if self.inputs.len() != 1 {
            return Err(SortError::Usage("a check reads one input: name exactly one".into()));
        }
        let job = self.job()?;
        let cfg = job.0.config();
        let config::Format::Lines(lines) = &cfg.format else {
            return Err(SortError::BadOption("a check applies to lines; fixed-size records are checked by valsort".into()));
        };
        crate::pool::run_in_pool(cfg.threads, || crate::text::check::check_order(&cfg.inputs[0], lines, cfg.decompress, CHECK_CHUNK_BYTES))
    }

    /// Starts the sort as a push/pull session: its input is what [`Sorting::push`] gives it unless
    /// inputs were named, and its output is what [`Sorting::pull`] takes unless an output was named.
    pub fn start(self) -> Result<Sorting> {
        let (pushed, pulled) = (self.inputs.is_empty(), self.output.is_none());
        Sorting::start(self.job()?, pushed, pulled)
    }

    /// The sort's budget (the default one when none was given).
    fn budget(&self) -> crate::plan::Budget {
        self.budget.clone().unwrap_or_else(|| crate::plan::resolve_budget(None))
    }

    /// Refuses a sort that a builder call which cannot fail made impossible (see [`Sort::key`]).
    fn check_refused(&self) -> Result<()> {
        match &self.refused {
            Some(refused) => Err(SortError::BadOption(refused.clone())),
            None => Ok(()),
        }
    }
}

/// A selection as a test of one record (a line without its terminator): whether it keeps it
/// ([`Sort::take_selection`]). Clones share it.
#[derive(Clone)]
pub struct RecordFilter(Arc<crate::select::Selection>);

impl RecordFilter {
    /// Whether the selection keeps `rec`.
    #[inline]
    pub fn keeps(&self, rec: &[u8]) -> bool {
        self.0.keeps(crate::select::Rec::plain(rec))
    }
}

impl std::fmt::Debug for RecordFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RecordFilter(-include/-omit)")
    }
}

/// The order of a [`Sort`]'s records or lines ([`Sort::order`]).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Order {
    /// Fixed-size records of the size given, by their keys.
    Records(crate::key::ResolvedKey, usize),
    /// Lines ended by the byte given, by GNU sort's ordering.
    Lines(LineOrder, u8),
}

impl Order {
    /// How two records (or two lines, without their terminators) compare. The sort is stable:
    /// records that compare equal keep their input order.
    pub fn compare(&self, a: &[u8], b: &[u8]) -> std::cmp::Ordering {
        match self {
            Order::Records(key, _) => key.compare(a, b),
            Order::Lines(order, _) => order.compare(a, b),
        }
    }

    /// Bytes per record, for fixed-size records.
    pub fn record_size(&self) -> Option<usize> {
        match self {
            Order::Records(_, r) => Some(*r),
            Order::Lines(..) => None,
        }
    }

    /// The byte that ends each line, for lines.
    pub fn terminator(&self) -> Option<u8> {
        match self {
            Order::Records(..) => None,
            Order::Lines(_, t) => Some(*t),
        }
    }
}

/// Refuses records of no bytes.
fn check_record_size(record_size: usize) -> Result<()> {
    if record_size == 0 {
        return Err(SortError::BadOption("the record size must be at least 1 byte".into()));
    }
    Ok(())
}

/// Bytes a check reads at a time.
const CHECK_CHUNK_BYTES: usize = 64 << 20;
