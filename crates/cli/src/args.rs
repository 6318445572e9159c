//! The command line as typed: flags parsed by clap, not yet checked against each other.

use clap::{ArgAction, Parser};
use std::path::PathBuf;

const ABOUT: &str = "Sort text lines (GNU sort's options, in the user's locale) and fixed-size binary records";

const LONG_ABOUT: &str = "\
Sort text lines (GNU sort's options and output, in the user's locale) and fixed-size binary records, in one
pass in memory when they fit the budget and by merging sorted runs from temp files when not. No
FILE, or '-': standard input.";

/// The closing text of `--help`: what the one-line entries above it leave out.
const SHORT_AFTER_HELP: &str = "\
--locale-order=bytes orders bytes, not as the locale (LC_ALL, LANG). SIZE: N[K|M|G|T] (bare: KiB).
--compress-temp[=LEVEL] stores temp runs zstd-compressed (by default when the temp space is short);
--no-compress-temp never. KEYDEF: F[.C][OPTS][,F[.C][OPTS]]. Exit: 0; 1 on disorder; 2 on trouble.";

const AFTER_HELP: &str = "\
Text lines (no --record-size):
  xsort is a drop-in for GNU sort: it sorts newline-terminated lines (NUL with -z) with GNU sort's
  options and output. Text orders as GNU sort orders it in the locale the environment names
  (LC_ALL, then LC_COLLATE, LC_NUMERIC or LC_TIME, then LANG): the locale's collation (strcoll),
  its decimal point and thousands separator for -n/-h/-g, its month names for -M. A locale that
  is not installed means the C locale, as in GNU; --locale-order=bytes (or LC_ALL=C) orders bytes,
  which is fastest. UTF-8 and 8-bit locales are taken. JSON lines ignore the locale. KEYDEF is
  F[.C][OPTS][,F[.C][OPTS]] (fields from 1, characters from 1; OPTS among bdfghiMnRrV); the
  obsolete +POS1 -POS2 also works. Unless -s or -u is given, lines whose keys compare equal are
  ordered by a last-resort comparison of whole lines.
  -m merges inputs already sorted; -c/-C/--check checks one input (exit 1 on disorder); -u keeps
  the first of lines that compare equal. -R orders by a keyed hash of the keys (equal keys
  together; the same --random-source gives the same order). --debug sorts in memory and underlines
  the keys. A file's last line without a terminator gets one.

Records and keys:
  xsort sorts fixed-size binary records (--record-size). Each --key-bytes OFFSET:LENGTH[:TYPE][:r]
  is a key, in priority order; ':r' sorts it descending. Without a key the whole record is the key.
  Ties keep input order: xsort is always stable. TYPE (default char):
    char                  bytes compared as unsigned bytes (memcmp), any LENGTH
    u8 i8                 unsigned / signed 1-byte integers
    u16le u16be i16le i16be u32le u32be i32le i32be u64le u64be i64le i64be
                          unsigned (u) / signed (i) integers of 2, 4, 8 bytes, little or big endian
    f32le f32be f64le f64be
                          IEEE floats (4 bytes) and doubles (8): -inf < ... < -0 < +0 < ... < +inf
                          < NaN; every NaN sorts after +inf (first when descending), NaNs equal
    dec                   ASCII decimal text, any LENGTH: [blanks][+|-]digits[.digits][blanks];
                          a field that is not such a number (all blanks included) sorts before
                          every number (after them when descending), in input order
  LENGTH must be the type's size for integers and floats. Nsort's -field types in --spec (character,
  integer, unsigned, float, double, decimal; big_endian or little_endian, else the machine's order)
  are the same keys. -u keeps the first record of each group of equal keys.

Memory:
  -S/--memory takes a size with a K, M, G or T suffix (powers of 1024; a bare number means KiB, as
  in GNU sort) or N% of the most memory xsort may hold (physical memory, or a memory cgroup's
  limit or ulimit -v when smaller). The default is 50% of the memory xsort may use now: the
  smallest of the kernel's MemAvailable, the room left by its memory cgroup (a container, a
  systemd unit's MemoryMax, a batch job) and by ulimit -v. A budget beyond 90% of that is clamped
  there, with a warning; --stats names the limit that chose the budget. When the input fits the
  budget, xsort sorts it in one pass with no temp file; otherwise it writes sorted runs to the
  temp directories and merges them. Records need a budget that holds four of them with their sort
  entries (32 bytes each) and 64 KiB: larger records are refused. A line longer than the budget is
  still held whole (about three times its length at most, beside the budget); --stats says when
  that happened.

I/O:
  Regular files are read and written with direct I/O (O_DIRECT), 8 MiB requests, 4 in flight,
  falling back to buffered I/O where the filesystem refuses it; an input mostly in the page cache
  is read through the cache, and a budget under 16 MiB (whose small transfers would pay the
  device's latency each time) uses the page cache unless a statement says `direct`. The output is
  preallocated, written beside the target and renamed over it when complete; temp runs live in
  unlinked files and never outlive the process.

Nsort statements (--spec):
  -processes=N -memory=SIZE -method=radix|merge -touch -statistics -format=size:N
  -field=name:NAME,size:N,off:N,character  -key=NAME[,descending]
  -in_file=PATH[,direct|buffered][,transfer_size=SIZE][,count=N]
  -out_file=PATH[,...][,preallocate][,sync][,append] (again: a copy)   -temp=DIR[,...] (several)
  -noduplicates (one record per key)   -summarize=FIELD[,FIELD]   (sum integer fields per key)
  Delimited records: -format=delimiter:'\\n' -field=name:F,delimiter:','[,decimal] -key=F[,descending]
  sort as 'LC_ALL=C sort -s -t, -k I,I[n][r]' does (I: the field's place among the -field
  statements; a last field ending at the record delimiter runs to the record's end). Delimiters:
  ',' '|' '\\t' '\\0' '\\x1f' '\\037' or tab, newline, space, comma, nul. One field delimiter per
  spec, and fields all delimited or all at fixed positions; text types only (character, decimal).
  Separated records: -format=separator:',' -field=name:A -field=name:N,integer -key=N (fields are
  the columns in order; -key=position:3 is column 3).
  Selection: -condition=name:C,test:(N gt 10 and A ne 'x') -include=C -omit=(A matches '^#'):
  the first include/omit whose condition holds decides; with any -include, the rest are dropped.
  -derived=name:D,integer,value:(A * B) computes a field for conditions and -reformat.
  -reformat=F1,F2 writes each record as those fields (the keys' fields among them). -merge merges
  inputs each sorted by the keys, and fails naming the first record out of order. -match[=N] puts
  '1' before each record whose first N keys (all) equal the record's before it, '0' before others.
  Run as 'nsort' (a link to xsort), it takes statements, sort options and files in any order.
  Keywords may be shortened to an unambiguous prefix; '=' or ':' follow a keyword. Blanks and line
  breaks may follow a comma inside a statement; '#' starts a comment. -specification=FILE reads
  statements from FILE (files may name files, 16 deep; a loop is an error). Options given as flags
  take precedence over statements.

Exit status: 0 on success; 1 when -c/-C finds disorder (and, as GNU sort, for an invalid --check or
--sort argument); 2 on any other trouble (bad option, bad input, I/O error).

Examples:
  xsort -k2,2n -t, -o sorted.csv data.csv           (lines, as GNU sort would)
  xsort -u -S 2G -T /ssd big.log > uniq.log
  xsort --record-size=100 --key-bytes=0:10 -o sorted.dat input.dat
  xsort --record-size=100 -S 1G -T /ssd1 -T /ssd2 --stats -o out in
  xsort --spec '-format=size:100 -field=name:key,size:10,off:0,character -key=key' -o out in";

/// xsort: sort text lines (as GNU sort, in the user's locale) and files of fixed-size records, in memory
/// when they fit and by merging runs when not.
///
/// `--help` prints a summary that fits a screen (`-h` is GNU sort's --human-numeric-sort, so it
/// cannot be the short help as in most clap programs); `--help-all` prints every detail, as the
/// manual page does.
#[derive(Parser, Debug)]
#[command(name = "xsort", version, about = ABOUT, long_about = LONG_ABOUT, after_help = SHORT_AFTER_HELP, after_long_help = AFTER_HELP, disable_help_flag = true, disable_version_flag = true, args_override_self = true, infer_long_args = true)]
pub struct Args {
    /// Lines: ignore leading blanks.
    #[arg(short = 'b', long = "ignore-leading-blanks", help_heading = "Ordering of lines (as GNU sort)")]
    pub ignore_leading_blanks: bool,

    /// Lines: consider only blanks and alphanumeric characters.
    #[arg(short = 'd', long = "dictionary-order", help_heading = "Ordering of lines (as GNU sort)")]
    pub dictionary_order: bool,

    /// Lines: fold lower case to upper case characters.
    #[arg(short = 'f', long = "ignore-case", help_heading = "Ordering of lines (as GNU sort)")]
    pub ignore_case: bool,

    /// Lines: compare according to general numerical value (floating point).
    #[arg(short = 'g', long = "general-numeric-sort", help_heading = "Ordering of lines (as GNU sort)")]
    pub general_numeric: bool,

    /// Lines: compare human readable numbers (e.g., 2K 1G).
    #[arg(short = 'h', long = "human-numeric-sort", help_heading = "Ordering of lines (as GNU sort)")]
    pub human_numeric: bool,

    /// Lines: consider only printable characters.
    #[arg(short = 'i', long = "ignore-nonprinting", help_heading = "Ordering of lines (as GNU sort)")]
    pub ignore_nonprinting: bool,

    /// Lines: compare (unknown) < 'JAN' < ... < 'DEC'.
    #[arg(short = 'M', long = "month-sort", help_heading = "Ordering of lines (as GNU sort)")]
    pub month: bool,

    /// Lines: compare according to string numerical value.
    #[arg(short = 'n', long = "numeric-sort", help_heading = "Ordering of lines (as GNU sort)")]
    pub numeric: bool,

    /// Lines: shuffle, but group identical keys (see --random-source).
    #[arg(short = 'R', long = "random-sort", help_heading = "Ordering of lines (as GNU sort)")]
    pub random: bool,

    /// Lines: reverse the result of comparisons.
    #[arg(short = 'r', long = "reverse", help_heading = "Ordering of lines (as GNU sort)")]
    pub reverse: bool,

    /// Lines: natural sort of (version) numbers within text.
    #[arg(short = 'V', long = "version-sort", help_heading = "Ordering of lines (as GNU sort)")]
    pub version_sort: bool,

    /// Lines: sort according to WORD (see --help-all).
    #[arg(
        long = "sort",
        value_name = "WORD",
        help_heading = "Ordering of lines (as GNU sort)",
        long_help = "Lines: sort according to WORD: general-numeric -g, human-numeric -h, month -M, numeric -n, random -R, version -V."
    )]
    pub sort_word: Vec<String>,

    /// Lines: get random bytes from FILE (for -R).
    #[arg(long = "random-source", value_name = "FILE", help_heading = "Ordering of lines (as GNU sort)")]
    pub random_source: Option<PathBuf>,

    /// Lines: order text as the locale does (default) or by bytes.
    #[arg(
        long = "locale-order",
        value_name = "WHICH",
        value_parser = ["locale", "bytes"],
        hide_short_help = true,
        help_heading = "Ordering of lines (as GNU sort)",
        long_help = "'locale' (the default): order text as GNU sort does in the locale that LC_ALL, \
LC_COLLATE/LC_NUMERIC/LC_TIME or LANG name (its collation, decimal point, thousands separator and \
month names). 'bytes': order as in the C locale (LC_ALL=C), whatever the environment says."
    )]
    pub locale_order: Option<String>,

    /// Lines: sort via a key; KEYDEF gives location and type.
    #[arg(
        short = 'k',
        long = "key",
        value_name = "KEYDEF",
        help_heading = "Lines: keys and modes (as GNU sort)",
        long_help = "Lines: sort via a key; KEYDEF gives location and type (F[.C][OPTS][,F[.C][OPTS]])."
    )]
    pub keys: Vec<String>,

    /// Lines: fields end at SEP, not at blanks.
    #[arg(
        short = 't',
        long = "field-separator",
        value_name = "SEP",
        allow_hyphen_values = true,
        help_heading = "Lines: keys and modes (as GNU sort)",
        long_help = "Lines: use SEP instead of non-blank to blank transition to find fields."
    )]
    pub separator: Vec<String>,

    /// Lines are CSV records (RFC 4180): -k counts CSV fields.
    #[arg(
        long = "csv",
        help_heading = "CSV, TSV and JSON lines",
        long_help = "Read lines as CSV records (RFC 4180): a quoted field may hold commas, doubled quotes and \
newlines, a record ends at a newline outside quotes, -k field numbers count CSV fields and keys \
compare their unquoted values. Records are written as read."
    )]
    pub csv: bool,

    /// Lines are TSV records: CSV quoting, fields end at tabs.
    #[arg(long = "tsv", help_heading = "CSV, TSV and JSON lines", long_help = "As --csv, with tab between fields.")]
    pub tsv: bool,

    /// CSV records with fields ending at C (as --csv).
    #[arg(
        long = "csv-separator",
        value_name = "C",
        help_heading = "CSV, TSV and JSON lines",
        long_help = "As --csv, with the byte C between fields ('\\t' or 'tab' for a tab)."
    )]
    pub csv_separator: Option<String>,

    /// Lines are JSON values: -k takes paths (.user.age:n).
    #[arg(
        long = "jsonl",
        help_heading = "CSV, TSV and JSON lines",
        long_help = "Read lines as JSON values (JSON lines): -k takes paths into them (-k .user.age, \
-k '.items[0].id:r'; letters n, f, r); values order as jq orders them, a missing one first, \
numbers by value, strings by their unescaped bytes. A line that is not JSON is an error naming it."
    )]
    pub jsonl: bool,

    /// The first N records (default 1) of each input are a header.
    #[arg(
        long = "header",
        value_name = "N",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "1",
        help_heading = "CSV, TSV and JSON lines",
        long_help = "The first N records (default 1) of each input are its header: the output starts with the \
first input's, unsorted; every other input must start with the same one, which is dropped. Then \
-k NAME[:OPTS] (or --key=NAME:OPTS) sorts by the column whose header field is NAME."
    )]
    pub header: Option<String>,

    /// CSV: a stray quote is an error.
    #[arg(
        long = "strict",
        help_heading = "CSV, TSV and JSON lines",
        long_help = "CSV: refuse a quote inside an unquoted field and text after a closing quote (by default \
they are ordinary bytes, as for most CSV readers). A quote left open is always an error."
    )]
    pub strict: bool,

    /// Lines: output only the first of lines with equal keys.
    #[arg(
        short = 'u',
        long = "unique",
        help_heading = "Lines: keys and modes (as GNU sort)",
        long_help = "Lines: output only the first of lines with equal keys (with -c, check for strict order)."
    )]
    pub unique: bool,

    /// Lines: line delimiter is NUL, not newline.
    #[arg(short = 'z', long = "zero-terminated", help_heading = "Lines: keys and modes (as GNU sort)")]
    pub zero_terminated: bool,

    /// Lines: merge already sorted files; do not sort.
    #[arg(short = 'm', long = "merge", help_heading = "Lines: keys and modes (as GNU sort)")]
    pub merge: bool,

    /// Lines: check for sorted input; do not sort.
    #[arg(
        short = 'c',
        help_heading = "Lines: keys and modes (as GNU sort)",
        long_help = "Lines: check for sorted input; do not sort (diagnose the first disorder)."
    )]
    pub check_diagnose: bool,

    /// Lines: like -c, but do not report the first bad line.
    #[arg(short = 'C', help_heading = "Lines: keys and modes (as GNU sort)")]
    pub check_quiet: bool,

    /// Lines: check; WHEN: diagnose-first, quiet, silent.
    #[arg(long = "check", value_name = "WHEN", num_args = 0..=1, require_equals = true, default_missing_value = "diagnose-first", help_heading = "Lines: keys and modes (as GNU sort)", long_help = "Lines: check for sorted input; WHEN is diagnose-first (default), quiet or silent.")]
    pub check: Option<String>,

    /// Lines: annotate the keys, warn about questionable usage.
    #[arg(
        long = "debug",
        help_heading = "Lines: keys and modes (as GNU sort)",
        long_help = "Lines: annotate the part of the line used to sort, and warn about questionable usage."
    )]
    pub debug: bool,

    /// Lines: read the NUL-terminated input names in F.
    #[arg(
        long = "files0-from",
        value_name = "F",
        help_heading = "Lines: keys and modes (as GNU sort)",
        long_help = "Lines: read input from the files named by NUL-terminated names in file F ('-': standard input)."
    )]
    pub files0_from: Option<PathBuf>,

    /// Merge at most N runs or inputs at once (lines and records).
    #[arg(long = "batch-size", value_name = "N")]
    pub batch_size: Option<String>,

    /// Input files, read in order; none or '-': standard input.
    #[arg(value_name = "FILE")]
    pub inputs: Vec<PathBuf>,

    /// Write the result to FILE, which may be an input.
    #[arg(short = 'o', long = "output", value_name = "FILE", action = ArgAction::Append, long_help = "Write the result to FILE instead of standard output; FILE may be one of the inputs.")]
    pub outputs: Vec<PathBuf>,

    /// Memory budget: SIZE or N% of memory.
    #[arg(
        short = 'S',
        long = "memory",
        visible_alias = "buffer-size",
        value_name = "SIZE",
        long_help = "Memory budget: SIZE[K|M|G|T] or N% of physical memory (or of a smaller cgroup or ulimit -v limit)."
    )]
    pub memory: Option<String>,

    /// Worker threads (default and most: the CPUs available).
    #[arg(long = "parallel", value_name = "N")]
    pub parallel: Option<usize>,

    /// Temp directory (repeatable; default $TMPDIR, /tmp).
    #[arg(
        short = 'T',
        long = "temporary-directory",
        value_name = "DIR",
        long_help = "Directory for temp runs; repeat to spread temp I/O over several (default: $TMPDIR or /tmp)."
    )]
    pub temp_dirs: Vec<PathBuf>,

    /// Compress temp runs with PROG (PROG -d expands).
    #[arg(long = "compress-program", value_name = "PROG", action = ArgAction::Append, long_help = "Compress temp runs with PROG; decompress them with PROG -d (as GNU sort).")]
    pub compress_program: Vec<String>,

    /// Store temp runs zstd-compressed (LEVEL 1-19, default 1).
    #[arg(
        long = "compress-temp",
        value_name = "LEVEL",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "1",
        hide_short_help = true,
        overrides_with = "no_compress_temp",
        long_help = "Store temp runs compressed with zstd at LEVEL (1 to 19; default 1, zstd's fastest), each run's \
blocks compressed on several threads and decompressed as the runs are merged; the compressor's buffers and one \
decoder per merged run come out of the memory budget. Without this option, runs are compressed (at level 1) only \
when the input's length is known and the temp directories' free space would not hold them plainly; --stats says \
so. Not with --compress-program; the last of --compress-temp and --no-compress-temp given wins."
    )]
    pub compress_temp: Option<String>,

    /// Never compress temp runs, whatever the free space.
    #[arg(
        long = "no-compress-temp",
        hide_short_help = true,
        overrides_with = "compress_temp",
        long_help = "Store temp runs plainly even when the temp directories' free space looks too small for them \
(a sort that fills a temp directory fails, naming it)."
    )]
    pub no_compress_temp: bool,

    /// Compress the output in gzip, zstd, bzip2 or xz, or none.
    #[arg(
        long = "compress",
        value_name = "FORMAT[:LEVEL]",
        long_help = "Compress the output in FORMAT (gzip, zstd, bzip2 or xz) at LEVEL (default: the format's tool's), \
whatever its name, standard output too; 'none' writes it plain. Without this option an output file \
named .gz, .zst, .bz2 or .xz is compressed in that format. Blocks are compressed on every worker \
thread; each tool reads the result."
    )]
    pub compress: Option<String>,

    /// Read compressed inputs as they are (no decompression).
    #[arg(
        long = "no-decompress",
        long_help = "Read every input as it is. By default an input (a file or standard input) whose first bytes are \
those of gzip, zstd, bzip2 or xz data is decompressed as it is read, on a thread of its own."
    )]
    pub no_decompress: bool,

    /// Lines: no last-resort comparison of whole lines.
    #[arg(short = 's', long = "stable", long_help = "Lines: disable the last-resort comparison of whole lines. (Records: always stable.)")]
    pub stable: bool,

    /// Bytes per fixed-size record.
    #[arg(long = "record-size", value_name = "N", help_heading = "Fixed-size records")]
    pub record_size: Option<usize>,

    /// Key OFF:LEN[:TYPE][:r] (repeatable; see --help-all).
    #[arg(
        long = "key-bytes",
        value_name = "KEY",
        help_heading = "Fixed-size records",
        long_help = "Key OFFSET:LENGTH[:TYPE][:r]: LENGTH bytes at OFFSET of TYPE (char, dec, u8, i64le, f64be...: see below), ':r' descending; repeat for several keys in priority order."
    )]
    pub key_bytes: Vec<String>,

    /// In-memory sort kernel (lines and records).
    #[arg(long = "method", value_name = "radix|merge")]
    pub method: Option<String>,

    /// Nsort statements (repeatable; see --help-all).
    #[arg(
        long = "spec",
        value_name = "STATEMENTS",
        allow_hyphen_values = true,
        help_heading = "Fixed-size records",
        long_help = "Nsort statements, e.g. '-format=size:100 -key=...' (repeatable)."
    )]
    pub spec: Vec<String>,

    /// Print statistics to standard error after the sort.
    #[arg(long = "stats")]
    pub stats: bool,

    /// Write the statistics as JSON to FILE.
    #[arg(long = "stats-json", value_name = "FILE")]
    pub stats_json: Option<PathBuf>,

    /// Show progress even when stderr is not a terminal.
    #[arg(
        long = "progress",
        conflicts_with = "no_progress",
        long_help = "Show progress even when standard error is not a terminal: there, one line per second and a last line when done (on a terminal: a bar redrawn in place, from the first second)."
    )]
    pub progress: bool,

    /// Never show a progress bar.
    #[arg(long = "no-progress")]
    pub no_progress: bool,

    /// Make the output durable (fsync) before exiting.
    #[arg(long = "sync", long_help = "Make the output durable (fsync of the file and its directory) before exiting.")]
    pub sync: bool,

    /// Use the page cache for every file instead of direct I/O.
    #[arg(long = "buffered")]
    pub buffered: bool,

    /// Bytes per read or write request (default 8M).
    #[arg(
        long = "transfer-size",
        value_name = "SIZE",
        long_help = "Bytes per read or write request for input, output and temp files (default 8M)."
    )]
    pub transfer_size: Option<String>,

    /// Pre-fault the sort buffer before reading (Nsort's -touch).
    #[arg(long = "touch")]
    pub touch: bool,

    /// Print this summary (--help-all: every detail).
    #[arg(long = "help", action = ArgAction::HelpShort)]
    pub help: Option<bool>,

    // Not clap's long help, which prints where it stands: `--help-all --help` prints the summary,
    // as any option followed by `--help` does in GNU's tools (main prints the full help).
    /// Print the full help: every option, key type and statement.
    #[arg(long = "help-all")]
    pub help_all: bool,

    /// Print the version.
    #[arg(long = "version", action = ArgAction::Version)]
    pub version: Option<bool>,

    /// Write the manual page xsort.1 into DIR, then exit (scripts/install.sh uses it).
    #[arg(long = "generate-man", value_name = "DIR", hide = true)]
    pub generate_man: Option<PathBuf>,

    /// Write bash, zsh and fish completions into DIR, then exit (scripts/install.sh uses it).
    #[arg(long = "generate-completions", value_name = "DIR", hide = true)]
    pub generate_completions: Option<PathBuf>,
}

impl Args {
    /// The `-o` file: given several times, it must be the same each time (as in GNU sort).
    pub fn output(&self) -> anyhow::Result<Option<&PathBuf>> {
        match self.outputs.split_first() {
            None => Ok(None),
            Some((first, rest)) if rest.iter().all(|o| o == first) => Ok(Some(first)),
            Some(_) => anyhow::bail!("multiple output files specified"),
        }
    }
}
