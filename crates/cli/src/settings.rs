//! The second stage of option parsing: flags and Nsort statements checked against each other and
//! turned into one [`Sort`], the library's builder, in one place for every format. The format
//! comes from the record options here, from GNU sort's options ([`crate::lines`]) or from a
//! `--spec` of delimited records ([`crate::spec_lines`]); [`shared`] adds what every format
//! takes. Flags win over statements; an output given both ways, two different record sizes, or an
//! option that does not apply to the chosen format, is an error. What the sort itself checks (a
//! key beyond the record, records too large for the budget) it checks when it starts.

use crate::args::Args;
use anyhow::{anyhow, bail, Context, Result};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use xsort_core::size::{parse_byte_count, parse_memory_size};
use xsort_core::spec::{self, NsortSpec};
use xsort_core::{KeyPart, Method, OutputCompression, Sort, SortError, TempCompression};

/// What an invocation does.
pub enum Job {
    /// Sort (or merge, `-m`) into the output.
    Sort(Sort),
    /// Check one input's order (`-c`, `-C`); `quiet` reports nothing.
    Check { sort: Sort, quiet: bool },
    /// Sort lines in memory and annotate the keys (`--debug`).
    Debug { sort: Sort, merge: bool, unique: bool },
}

/// Everything main needs: the job and how to report on it.
pub struct Settings {
    /// The job.
    pub job: Job,
    /// How to report on it.
    pub report: Report,
    /// How the command line named the record size and the budget, for the sort's refusal of
    /// records too large for it.
    records_named: Option<(String, String)>,
}

/// How an invocation reports on its job.
pub struct Report {
    /// Print statistics to stderr.
    pub stats: bool,
    /// Write statistics JSON here.
    pub stats_json: Option<PathBuf>,
    /// Show a progress bar.
    pub progress: bool,
    /// Warnings to print before sorting.
    pub warnings: Vec<String>,
}

/// How the command line reads: which format it sorts, and so whose conventions its options follow.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// Text lines with GNU sort's options (no `--record-size`, no `--spec`): GNU's messages.
    Gnu,
    /// Fixed-size records, or delimited records given by `--spec`.
    Nsort,
}

impl Settings {
    /// Validates `args`.
    pub fn from_args(args: Args) -> Result<Self> {
        if args.record_size.is_none() && args.spec.is_empty() {
            return Self::gnu_lines(args, &NsortSpec::default());
        }
        let spec = parse_specs(&args.spec)?;
        // Statements that describe plain lines, with GNU's ordering options (`nsort
        // -format=maximum_size:65535 -k1 -T /opt -o OUT IN`): the options order the lines.
        if args.record_size.is_none() && is_plain_lines(&spec) && crate::lines::line_only_option(&args).is_some() {
            return Self::gnu_lines(args, &spec);
        }
        let (sort, records_named) = match spec.record_delimiter {
            Some(terminator) => (crate::spec_lines::delimited(&args, terminator)?, None),
            None => {
                if let Some(option) = crate::lines::line_only_option(&args) {
                    bail!("{option} applies to text lines; records take --key-bytes (see --help)");
                }
                records(&args, &spec)?
            }
        };
        let sort = with_temp_dirs(sort, &args).statements(&spec).map_err(|e| anyhow!("--spec: {e}"))?;
        let sort = if args.unique { sort.unique(true) } else { sort };
        let sort = if args.touch { sort.touch(true) } else { sort };
        let (sort, report) = shared(sort, &args, &spec, Dialect::Nsort)?;
        Ok(Settings { job: Job::Sort(sort), report, records_named })
    }

    /// A text-line invocation with GNU sort's options: sort, merge, check or debug; `spec` holds
    /// statements that describe plain lines (memory, files, temp directories...), if any.
    fn gnu_lines(args: Args, spec: &NsortSpec) -> Result<Self> {
        if let Some(option) = records_only_option(&args) {
            bail!("{option} applies to fixed-size records (--record-size), not to text lines");
        }
        let sort = crate::lines::csv_and_header(Sort::lines(), &args)?.locale(crate::lines::locale(&args)?);
        let sort = sort.gnu_ordering(crate::lines::ordering(&args)?)?;
        if args.debug && (args.csv || args.tsv || args.csv_separator.is_some() || args.header.is_some() || args.jsonl) {
            bail!("--debug annotates plain lines; it does not take --csv, --tsv, --jsonl or --header");
        }
        // The ordering's own errors (incompatible letters, a bad key) come before the other settings'.
        sort.order()?;
        let check = crate::lines::check_mode(&args)?;
        let sort = with_temp_dirs(sort, &args).statements(spec).map_err(|e| anyhow!("--spec: {e}"))?;
        let (sort, report) = shared(sort, &args, spec, Dialect::Gnu)?;
        let job = match check {
            Some(quiet) => {
                let letter = if quiet { 'C' } else { 'c' };
                if !args.outputs.is_empty() {
                    bail!("options '-{letter}o' are incompatible");
                }
                if let Some(extra) = sort.input_names().get(1) {
                    bail!("extra operand '{}' not allowed with -{letter}", extra.display());
                }
                Job::Check { sort, quiet }
            }
            None if args.debug => Job::Debug { sort, merge: args.merge, unique: args.unique },
            None => Job::Sort(sort),
        };
        Ok(Settings { job, report, records_named: None })
    }

    /// The error of a sort, worded with the command line's names where the sort's own words would
    /// not say which option to change.
    pub fn explain(&self, e: SortError) -> anyhow::Error {
        match (&e, &self.records_named) {
            (SortError::RecordTooLarge { floor, .. }, Some((option, source))) => {
                let mut msg = e.records_named(&format!("records of {option}")).unwrap_or_else(|| e.to_string());
                // A budget too small names where it came from; records no budget fits do not.
                if floor.is_some() {
                    msg.push_str(&format!(" ({source})"));
                }
                anyhow!(msg)
            }
            _ => e.into(),
        }
    }
}

/// Whether a spec describes newline-ended records (or gives no record format at all: GNU's
/// options then say the records are lines) and nothing of their order or content (no fields,
/// keys, selection, reformat or folding), so that GNU's options may order them.
fn is_plain_lines(spec: &NsortSpec) -> bool {
    matches!(spec.record_delimiter, Some(b'\n') | None)
        && spec.record_size.is_none()
        && spec.separator.is_none()
        && spec.fields.is_empty()
        && spec.keys.is_empty()
        && spec.selection.is_none()
        && spec.reformat.is_none()
        && spec.derivation.is_none()
        && spec.summarize.is_empty()
        && spec.duplicates.is_none()
}

/// The first option given that only fixed-size records take, if any (for a text-line sort's error).
fn records_only_option(args: &Args) -> Option<&'static str> {
    let used = [(!args.key_bytes.is_empty(), "--key-bytes"), (args.touch, "--touch")];
    used.into_iter().find(|(on, _)| *on).map(|(_, name)| name)
}

/// A sort of fixed-size records from `--record-size` or the spec's format, with the `--key-bytes`
/// keys (before the spec's); and how the command line named its record size and budget.
fn records(args: &Args, spec: &NsortSpec) -> Result<(Sort, Option<(String, String)>)> {
    let size = record_size(args, spec)?;
    let mut sort = Sort::records(size);
    for k in &args.key_bytes {
        sort = sort.key(parse_key_bytes(k)?);
    }
    let option = match args.record_size {
        Some(_) => format!("--record-size={size}"),
        None => format!("-format=size:{size}"),
    };
    let source = match (&args.memory, spec.memory) {
        (Some(s), _) => format!("-S {s}"),
        (None, Some(_)) => "-memory in --spec".to_string(),
        (None, None) => "the default: half the memory xsort may use".to_string(),
    };
    Ok((sort, Some((option, source))))
}

/// Adds the `-T` directories (before the spec's `-temp_file` ones).
fn with_temp_dirs(sort: Sort, args: &Args) -> Sort {
    args.temp_dirs.iter().fold(sort, |sort, d| sort.temp_dir(d))
}

/// Adds to `sort` what every format takes alike from flags and Nsort statements (flags win, and
/// an output given both ways is an error): the inputs (after the `-in_file` statements: the
/// operands or the `--files0-from` names, standard input if none), the output, memory, threads,
/// transfers and the rest; `dialect` picks the parsing (and the messages) of `-S` and
/// `--parallel`. Returns the sort and how to report on it.
pub fn shared(mut sort: Sort, args: &Args, spec: &NsortSpec, dialect: Dialect) -> Result<(Sort, Report)> {
    for p in crate::lines::operands(args)? {
        sort = with_input(sort, &p);
    }
    if sort.input_names().is_empty() {
        sort = sort.input_stdin();
    }
    sort = match (args.output()?, sort.has_file_output()) {
        (Some(_), true) => bail!("the output is given twice (-o and -out_file)"),
        (Some(p), false) if p.as_os_str() == "-" => sort.output_stdout(),
        (Some(p), false) => sort.output_path(p),
        (None, true) => sort,
        (None, false) => sort.output_stdout(),
    };
    let memory = match (&args.memory, dialect) {
        (Some(s), Dialect::Gnu) => Some(crate::lines::memory_size(s)?),
        (Some(s), Dialect::Nsort) => Some(parse_memory_size(s).with_context(|| format!("invalid --memory '{s}'"))?),
        (None, _) => None,
    };
    if let Some(m) = memory {
        sort = sort.memory_size(m);
    }
    sort = match (args.parallel, dialect) {
        (Some(0), Dialect::Gnu) => bail!("number in parallel must be nonzero"),
        (Some(0), Dialect::Nsort) => bail!("--parallel must be at least 1"),
        (Some(n), _) => sort.threads(n),
        (None, _) => sort,
    };
    if let Some(b) = &args.batch_size {
        sort = sort.max_fan_in(crate::lines::batch_size(b)?);
    }
    sort = match args.method.as_deref() {
        Some("radix") => sort.method(Method::Radix),
        Some("merge") => sort.method(Method::Merge),
        Some(m) => bail!("invalid --method '{m}': expected radix or merge"),
        None => sort,
    };
    if let Some(s) = &args.transfer_size {
        sort = sort.transfer_size(parse_byte_count(s).with_context(|| format!("invalid --transfer-size '{s}'"))?);
    }
    if args.buffered {
        sort = sort.buffered(true);
    }
    if args.sync {
        sort = sort.sync(true);
    }
    if let Some(program) = compress_program(args)? {
        sort = sort.compress_program(program);
    }
    if let Some(t) = temp_compression(args)? {
        sort = sort.compress_temp(t);
    }
    if let Some(c) = &args.compress {
        sort = sort.compress_output(OutputCompression::parse(c).map_err(|e| anyhow!("invalid --compress '{c}': {e}"))?);
    }
    sort = sort.decompress(!args.no_decompress);
    let report = Report {
        stats: args.stats || spec.statistics.unwrap_or(false),
        stats_json: args.stats_json.clone(),
        progress: !args.no_progress && (args.progress || std::io::stderr().is_terminal()),
        warnings: sort.warnings(),
    };
    Ok((sort, report))
}

/// The statements of every `--spec`, parsed together.
pub fn parse_specs(texts: &[String]) -> Result<NsortSpec> {
    let joined = texts.join("\n");
    spec::parse_spec(&joined).map_err(|e| anyhow!("--spec: {e}"))
}

fn record_size(args: &Args, spec: &NsortSpec) -> Result<usize> {
    match (args.record_size, spec.record_size) {
        (Some(a), Some(b)) if a != b => bail!("--record-size={a} contradicts -format=size:{b} in --spec"),
        (Some(0), _) => bail!("--record-size must be at least 1"),
        (Some(a), _) => Ok(a),
        (None, Some(b)) => Ok(b),
        (None, None) => bail!("no record format given: use --record-size=N, or -format=size:N or -format=delimiter:C in --spec (without --record-size and --spec, xsort sorts text lines)"),
    }
}

/// Parses `OFFSET:LENGTH[:TYPE][:r]` (the parser lives in the core, where the fuzz targets reach it).
pub fn parse_key_bytes(s: &str) -> Result<KeyPart> {
    Ok(KeyPart::parse_key_bytes(s)?)
}

/// `--compress-program`: given again, it must name the same program (as GNU sort requires).
pub fn compress_program(args: &Args) -> Result<Option<String>> {
    let mut given = args.compress_program.iter();
    let first = given.next();
    if given.any(|p| Some(p) != first) {
        bail!("multiple compress programs specified");
    }
    Ok(first.cloned())
}

/// `--compress-temp[=LEVEL]` and `--no-compress-temp` (None: neither, the automatic choice).
fn temp_compression(args: &Args) -> Result<Option<TempCompression>> {
    if args.no_compress_temp {
        return Ok(Some(TempCompression::Plain));
    }
    let Some(level) = &args.compress_temp else { return Ok(None) };
    let parsed = level.parse::<u32>().map_err(|_| anyhow!("invalid --compress-temp '{level}': a zstd level from 1 to 19 is expected"))?;
    Ok(Some(TempCompression::zstd(parsed).map_err(|e| anyhow!("invalid --compress-temp '{level}': {e}"))?))
}

/// Adds an operand or statement path as an input (`-` is standard input).
pub fn with_input(sort: Sort, p: &Path) -> Sort {
    if p.as_os_str() == "-" {
        sort.input_stdin()
    } else {
        sort.input_path(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xsort_core::key::{ByteOrder, KeyType};

    #[test]
    fn key_bytes_forms() {
        assert_eq!(parse_key_bytes("0:10").unwrap(), KeyPart::bytes(0, 10, false));
        assert_eq!(parse_key_bytes("10:4:r").unwrap(), KeyPart::bytes(10, 4, true));
        assert_eq!(parse_key_bytes("10:4:char:R").unwrap(), KeyPart::bytes(10, 4, true));
        assert_eq!(parse_key_bytes("8:8:u64le").unwrap(), KeyPart::typed(8, 8, KeyType::Unsigned(ByteOrder::Little), false));
        assert_eq!(parse_key_bytes("1:2:I16BE:r").unwrap(), KeyPart::typed(1, 2, KeyType::Signed(ByteOrder::Big), true));
        assert_eq!(parse_key_bytes("0:4:f32le").unwrap(), KeyPart::typed(0, 4, KeyType::Float(ByteOrder::Little), false));
        assert_eq!(parse_key_bytes("3:12:dec:r").unwrap(), KeyPart::typed(3, 12, KeyType::Decimal, true));
        assert_eq!(parse_key_bytes("3:1:i8").unwrap(), KeyPart::typed(3, 1, KeyType::Signed(ByteOrder::Big), false));
        for bad in ["", "5", "a:b", "1:0", "1:2:x", "1:2:r:3", "-1:2", "1:2:r:r", "1:8:u64le:r:r", "1:8:r:u64le", "1:0:dec", "1:2:i16le:x"]
        {
            let e = parse_key_bytes(bad).unwrap_err().to_string();
            assert!(e.starts_with(&format!("invalid --key-bytes '{bad}'")), "{e}");
        }
        let e = parse_key_bytes("0:4:u64le").unwrap_err().to_string();
        assert_eq!(e, "invalid --key-bytes '0:4:u64le': a u64le key is 8 bytes long, not 4");
        let e = parse_key_bytes("0:2:u8").unwrap_err().to_string();
        assert_eq!(e, "invalid --key-bytes '0:2:u8': a u8 key is 1 byte long, not 2");
        let e = parse_key_bytes("0:8:u64").unwrap_err().to_string();
        assert!(e.starts_with("invalid --key-bytes '0:8:u64': unknown type 'u64'; the types are char dec u8 i8 u16le"), "{e}");
    }
}
