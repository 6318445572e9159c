//! The second stage of option parsing: flags and Nsort statements checked against each other and
//! turned into the engine's one [`SortConfig`], in one place for every format: [`Common`] takes
//! what records and lines share, and the format part comes from the record options here, from GNU
//! sort's options ([`crate::lines`]) or from a `--spec` of delimited records ([`crate::spec_lines`]).
//! Flags win over statements; an output given both ways, two different record sizes, or an option
//! that does not apply to the chosen format, is an error.

use crate::args::Args;
use anyhow::{anyhow, bail, Context, Result};
use std::io::IsTerminal;
use std::path::PathBuf;
use xsort_core::order::LineOrder;
use xsort_core::size::{parse_byte_count, parse_memory_size};
use xsort_core::spec::{self, FileSpec, NsortSpec};
use xsort_core::{Format, Input, IoSettings, KeyPart, KeySpec, Method, Output, RecordFormat, SortConfig};

/// What an invocation does.
pub enum Job {
    /// Sort (or merge, `-m`) into the output.
    Sort(SortConfig),
    /// Check one input's order (`-c`, `-C`); `quiet` reports nothing; `unique` makes equal lines
    /// disorder.
    Check { input: Input, quiet: bool, unique: bool, terminator: u8, order: LineOrder },
    /// Sort lines in memory and annotate the keys (`--debug`).
    Debug(SortConfig),
}

/// Everything main needs: the job and how to report on it.
pub struct Settings {
    /// The job.
    pub job: Job,
    /// Worker threads.
    pub threads: usize,
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
            return Self::gnu_lines(args);
        }
        let spec = parse_specs(&args.spec)?;
        let format = match spec.record_delimiter {
            Some(terminator) => Format::Lines(crate::spec_lines::line_format(&args, &spec, terminator)?),
            None => {
                if let Some(option) = crate::lines::line_only_option(&args) {
                    bail!("{option} applies to text lines; records take --key-bytes (see --help)");
                }
                Format::Records(record_format(&args, &spec)?)
            }
        };
        let c = Common::of(&args, &spec, Dialect::Nsort)?;
        if let Format::Records(rec) = &format {
            check_record_budget(&args, &spec, rec.record_size, c.budget)?;
        }
        let (threads, stats, progress, warnings) = (c.threads, c.stats, c.progress, c.warnings.clone());
        Ok(Settings { job: Job::Sort(c.config(format)), threads, stats, stats_json: args.stats_json, progress, warnings })
    }

    /// A text-line invocation with GNU sort's options: sort, merge, check or debug.
    fn gnu_lines(args: Args) -> Result<Self> {
        if let Some(option) = records_only_option(&args) {
            bail!("{option} applies to fixed-size records (--record-size), not to text lines");
        }
        let (lines, check) = crate::lines::line_format(&args)?;
        let c = Common::of(&args, &NsortSpec::default(), Dialect::Gnu)?;
        let (threads, stats, progress) = (c.threads, c.stats, c.progress);
        let mut warnings = c.warnings.clone();
        warnings.extend(crate::locale::warning_here(&lines.order));
        let job = match check {
            Some(quiet) => {
                if c.output_given {
                    bail!("options '-{}o' are incompatible", if quiet { 'C' } else { 'c' });
                }
                let mut inputs = c.inputs.into_iter();
                let input = inputs.next().unwrap_or(Input::Stdin);
                if let Some(extra) = inputs.next() {
                    let name = extra.name().display().to_string();
                    bail!("extra operand '{name}' not allowed with -{}", if quiet { 'C' } else { 'c' });
                }
                Job::Check { input, quiet, unique: lines.unique, terminator: lines.terminator, order: lines.order }
            }
            None if args.debug => Job::Debug(c.config(Format::Lines(lines))),
            None => Job::Sort(c.config(Format::Lines(lines))),
        };
        Ok(Settings { job, threads, stats, stats_json: args.stats_json, progress, warnings })
    }
}

/// The first option given that only fixed-size records take, if any (for a text-line sort's error).
fn records_only_option(args: &Args) -> Option<&'static str> {
    let used = [(!args.key_bytes.is_empty(), "--key-bytes"), (args.touch, "--touch")];
    used.into_iter().find(|(on, _)| *on).map(|(_, name)| name)
}

/// The record format from `--record-size`, `--key-bytes`, `-u`, `--touch` and the spec's format,
/// keys, `-noduplicates`, `-summarize` and `-touch`.
fn record_format(args: &Args, spec: &NsortSpec) -> Result<RecordFormat> {
    let mut rec = RecordFormat::new(record_size(args, spec)?);
    let mut key = args.key_bytes.iter().map(|k| parse_key_bytes(k)).collect::<Result<Vec<_>>>()?;
    key.extend(spec::mapping::record_keys(spec));
    rec.key = KeySpec::new(key);
    rec.touch = args.touch || spec.touch.unwrap_or(false);
    rec.folding.unique = args.unique || spec.duplicates == Some(false);
    rec.folding.sums = spec::mapping::sum_fields(spec);
    Ok(rec)
}

/// What a sort takes alike from flags and Nsort statements, whatever its records: flags win, and an
/// output given both ways is an error.
pub struct Common {
    /// Inputs: the `-in_file` statements, then the operands or the `--files0-from` names (standard
    /// input if none).
    pub inputs: Vec<Input>,
    /// The output.
    pub output: Output,
    /// Whether the output was named (`-o` or `-out_file`).
    pub output_given: bool,
    /// Memory budget in bytes.
    pub budget: u64,
    /// Where the budget came from (see [`xsort_core::plan::Budget`]).
    pub budget_basis: String,
    /// Worker threads.
    pub threads: usize,
    /// In-memory kernel.
    pub method: Method,
    /// Temp directories.
    pub temp_dirs: Vec<PathBuf>,
    /// Most runs merged at once (`--batch-size`).
    pub max_fan_in: Option<usize>,
    /// Input transfers (records only: lines are read through the page cache).
    pub input_io: IoSettings,
    /// Output transfers.
    pub output_io: IoSettings,
    /// Temp transfers.
    pub temp_io: IoSettings,
    /// Make the output durable.
    pub sync: bool,
    /// `--compress-program`.
    pub compress_program: Option<String>,
    /// Print statistics.
    pub stats: bool,
    /// Show a progress bar.
    pub progress: bool,
    /// Warnings to print before sorting.
    pub warnings: Vec<String>,
}

impl Common {
    /// Checks the flags and statements every sort shares; `dialect` picks the parsing (and the
    /// messages) of `-S` and `--parallel`.
    pub fn of(args: &Args, spec: &NsortSpec, dialect: Dialect) -> Result<Self> {
        let mut inputs: Vec<Input> = spec.in_files.iter().map(|f| input_of(&f.path)).collect();
        inputs.extend(crate::lines::operands(args)?);
        if inputs.is_empty() {
            inputs.push(Input::Stdin);
        }
        let output = match (args.output()?, &spec.out_file) {
            (Some(_), Some(_)) => bail!("the output is given twice (-o and -out_file)"),
            (Some(p), None) => Some(output_of(p)),
            (None, Some(f)) => Some(output_of(&f.path)),
            (None, None) => None,
        };
        let memory = match (&args.memory, dialect) {
            (Some(s), Dialect::Gnu) => Some(crate::lines::memory_size(s)?),
            (Some(s), Dialect::Nsort) => Some(parse_memory_size(s).with_context(|| format!("invalid --memory '{s}'"))?),
            (None, _) => spec.memory,
        };
        let xsort_core::plan::Budget { bytes: budget, basis: budget_basis, warning: clamp_warning } =
            xsort_core::plan::resolve_budget(memory);
        let threads = match (args.parallel, spec.processes, dialect) {
            (Some(0), _, Dialect::Gnu) => bail!("number in parallel must be nonzero"),
            (Some(0), _, Dialect::Nsort) => bail!("--parallel must be at least 1"),
            (n, p, _) => xsort_core::limits::worker_threads(n.or(p)),
        };
        let max_fan_in = args.batch_size.as_deref().map(crate::lines::batch_size).transpose()?;
        let method = match args.method.as_deref() {
            Some("radix") => Method::Radix,
            Some("merge") => Method::Merge,
            Some(m) => bail!("invalid --method '{m}': expected radix or merge"),
            None => match spec.method {
                Some(spec::Method::Merge) => Method::Merge,
                _ => Method::Radix,
            },
        };
        let transfer = match &args.transfer_size {
            Some(s) => Some(parse_byte_count(s).with_context(|| format!("invalid --transfer-size '{s}'"))?),
            None => None,
        };
        let io = |f: Option<&FileSpec>| IoSettings::of_statement(f, transfer, args.buffered, budget);
        let mut temp_dirs = args.temp_dirs.clone();
        temp_dirs.extend(spec.temp_dirs.iter().map(|t| t.path.clone()));
        if temp_dirs.is_empty() {
            temp_dirs.push(std::env::temp_dir());
        }
        Ok(Common {
            inputs,
            output_given: output.is_some(),
            output: output.unwrap_or(Output::Stdout),
            budget,
            budget_basis,
            threads,
            method,
            temp_dirs,
            max_fan_in,
            input_io: io(spec.in_files.first()),
            output_io: io(spec.out_file.as_ref()),
            temp_io: io(spec.temp_dirs.first()),
            sync: args.sync || spec.out_file.as_ref().is_some_and(|f| f.sync),
            compress_program: compress_program(args)?,
            stats: args.stats || spec.statistics.unwrap_or(false),
            progress: !args.no_progress && (args.progress || std::io::stderr().is_terminal()),
            warnings: clamp_warning.into_iter().collect(),
        })
    }

    /// The engine's configuration of these settings and `format`.
    pub fn config(self, mut format: Format) -> SortConfig {
        if let Format::Records(rec) = &mut format {
            rec.input_io = self.input_io;
        }
        let mut cfg = SortConfig::new(self.inputs, self.output, format, self.budget);
        cfg.memory_budget_basis = self.budget_basis;
        cfg.threads = self.threads;
        cfg.temp_dirs = self.temp_dirs;
        cfg.method = self.method;
        cfg.output_io = self.output_io;
        cfg.temp_io = self.temp_io;
        cfg.max_fan_in = self.max_fan_in;
        cfg.sync = self.sync;
        cfg.compress_program = self.compress_program;
        cfg
    }
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

/// Refuses records too large for the budget (see [`xsort_core::plan::min_budget`]) before anything
/// is opened, naming the option that sized them and where the budget came from.
fn check_record_budget(args: &Args, spec: &NsortSpec, record_size: usize, budget: u64) -> Result<()> {
    let budget = budget.max(xsort_core::plan::MIN_BUDGET);
    let floor = xsort_core::plan::min_budget(record_size);
    if floor.is_some_and(|f| f <= budget) {
        return Ok(());
    }
    let option = match args.record_size {
        Some(_) => format!("--record-size={record_size}"),
        None => format!("-format=size:{record_size}"),
    };
    let mut msg = xsort_core::plan::record_too_large(&format!("records of {option}"), floor, budget);
    if floor.is_some() {
        let source = match (&args.memory, spec.memory) {
            (Some(s), _) => format!("-S {s}"),
            (None, Some(_)) => "-memory in --spec".to_string(),
            (None, None) => "the default: half the memory xsort may use".to_string(),
        };
        msg.push_str(&format!(" ({source})"));
    }
    bail!(msg)
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

/// An operand or statement path as an input (`-` is standard input).
pub fn input_of(p: &std::path::Path) -> Input {
    if p.as_os_str() == "-" {
        Input::Stdin
    } else {
        Input::Path(p.to_owned())
    }
}

/// A path as the output (`-` is standard output).
pub fn output_of(p: &std::path::Path) -> Output {
    if p.as_os_str() == "-" {
        Output::Stdout
    } else {
        Output::Path(p.to_owned())
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
