//! Command line: raw flags (clap) and the validated [`Settings`] a benchmark runs on.
//!
//! Parsing happens in two stages, ripgrep's habit: clap turns the words into
//! [`Args`], then [`Settings::from_args`] applies each category's defaults
//! (runs, records, record format, time limit), resolves paths, finds the
//! `xsort` binary and rejects options that mean nothing for the category.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand, ValueEnum};
use serde::Serialize;

/// The Sort Benchmark categories xsort-bench runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Category {
    /// 10^6 records disk to disk, process launch included, output synced; N runs.
    Datamation,
    /// The most data sorted within a time limit (60 s), found by a search over sizes.
    Minutesort,
    /// Records per joule at a fixed size, from the machine's power counters.
    Joulesort,
    /// The most data sorted in the time one cent of the system buys (3-year amortization).
    Pennysort,
    /// Any size and record kind, as GB/s and TB/min.
    Throughput,
}

impl Category {
    pub fn name(self) -> &'static str {
        match self {
            Category::Datamation => "datamation",
            Category::Minutesort => "minutesort",
            Category::Joulesort => "joulesort",
            Category::Pennysort => "pennysort",
            Category::Throughput => "throughput",
        }
    }

    /// Whether the category searches over sizes (and so takes `--max-bytes`).
    pub fn searches(self) -> bool {
        matches!(self, Category::Minutesort | Category::Pennysort)
    }
}

/// Page-cache state of the input when xsort starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Cache {
    /// Input read into the page cache before each run.
    Warm,
    /// Input evicted with posix_fadvise(DONTNEED) before each run.
    Cold,
}

/// On or off.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Switch {
    On,
    Off,
}

/// gensort record kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// Binary records (gensort default).
    Binary,
    /// Printable records (gensort -a).
    Ascii,
}

const AFTER_HELP: &str = "\
Every run generates its input with xsort's gensort (checksum kept), sorts it with the xsort binary
as a child process (--stats-json), and validates the output with valsort's logic (order, count and
checksum). Runs that fail validation are reported loudly and excluded from every figure; the exit
status is then 1. Each run also measures the I/O floor: a direct read of the input and a direct
write plus fsync of as many bytes, and xsort's time is given as a multiple of it.

Defaults by category:
  datamation  20 runs of 10^6 binary records
  throughput   3 runs of 10^7 binary records (1 GB)
  joulesort    3 runs of 10^8 ASCII records (10 GB, the smallest JouleSort class)
  minutesort  search up to the time limit (60 s), binary records, 3 confirming runs
  pennysort   search up to the time one cent buys (needs --system-price), ASCII records, 3 runs
Sizes (--max-bytes) take K, M, G, T (powers of 1000) or KiB, MiB, GiB, TiB.

Tools for the bench scripts (bench/*.sh), without a category:
  xsort-bench floor FILE [--scratch DIR] [--json]   the I/O floor of FILE alone, as the runs measure it
  xsort-bench evict FILE...                         drop FILEs from the page cache (cold-cache timings)

Cluster (--ranks N):
  Each run launches `mpirun --oversubscribe -np N xsort-mpi ...` instead of xsort; other mpirun
  options come with --mpirun-arg (a hostfile, say; --dir must then be a path every host shares).
  A trial launch first logs Open MPI's selection, and the report says which ranks ran on which
  hosts, over which interconnect. Outputs are validated as on one machine.

Examples:
  xsort-bench datamation --runs 5 --dir /data --out rep --note 'after the radix change'
  xsort-bench datamation --runs 5 --ranks 4 --out rep-cluster";

/// Raw flags as clap parses them.
#[derive(Debug, Parser)]
#[command(name = "xsort-bench", version, about = "Runs the Sort Benchmark categories end to end with xsort and writes reports with full context", after_help = AFTER_HELP, subcommand_negates_reqs = true, args_conflicts_with_subcommands = true)]
pub struct Args {
    /// Benchmark category.
    #[arg(value_enum, required_unless_present_any = ["generate_man", "generate_completions"])]
    pub category: Option<Category>,
    /// A tool instead of a category.
    #[command(subcommand)]
    pub tool: Option<Tool>,
    /// Measured runs (search categories: confirming runs at the size found).
    #[arg(long, value_name = "N")]
    pub runs: Option<usize>,
    /// Records per run (search categories: the first size tried). Accepts 1000000, 1e6, 10^6.
    #[arg(long, value_name = "N", value_parser = parse_count)]
    pub records: Option<u64>,
    /// Directory for data, output and (by default) temp files.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Directory for report.json, report.md and report.html.
    #[arg(long, value_name = "DIR", default_value = "xsort-bench-report")]
    pub out: PathBuf,
    /// The sort to run (default: the xsort next to this executable; with --ranks, the xsort-mpi).
    #[arg(long, value_name = "PATH")]
    pub xsort: Option<PathBuf>,
    /// Sort on the cluster: launch `mpirun -np N xsort-mpi` instead of xsort (Open MPI's mpirun on PATH).
    #[arg(long, value_name = "N")]
    pub ranks: Option<usize>,
    /// Option for mpirun, before -np (repeatable; default --oversubscribe), e.g. --mpirun-arg=--hostfile --mpirun-arg=hosts.
    #[arg(long = "mpirun-arg", value_name = "ARG", allow_hyphen_values = true)]
    pub mpirun_arg: Vec<String>,
    /// Input in the page cache (warm) or evicted before each run (cold).
    #[arg(long, value_enum, default_value = "cold")]
    pub cache: Cache,
    /// Make xsort's output durable (xsort --sync) before it exits.
    #[arg(long, value_enum, default_value = "on")]
    pub sync: Switch,
    /// Record kind (default: binary; ASCII for joulesort and pennysort, as the rules ask).
    #[arg(long, value_enum)]
    pub format: Option<Format>,
    /// Skewed keys (gensort -s).
    #[arg(short = 's', long)]
    pub skew: bool,
    /// xsort worker threads (--parallel); default: xsort's (all cores).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// xsort memory budget (-S), e.g. 2G or 50%; default: xsort's.
    #[arg(short = 'S', long, value_name = "SIZE")]
    pub memory: Option<String>,
    /// Run xsort with buffered I/O (--buffered) instead of direct I/O.
    #[arg(long)]
    pub buffered: bool,
    /// xsort transfer size (--transfer-size), e.g. 8M.
    #[arg(long, value_name = "SIZE")]
    pub transfer_size: Option<String>,
    /// Temp directories for xsort (-T, repeatable); default: --dir.
    #[arg(short = 'T', long = "temp", value_name = "DIR")]
    pub temp: Vec<PathBuf>,
    /// Extra argument passed to xsort as is (repeatable).
    #[arg(long = "xsort-arg", value_name = "ARG", allow_hyphen_values = true)]
    pub xsort_arg: Vec<String>,
    /// Free text kept in the report: who ran it and why.
    #[arg(long, value_name = "TEXT", default_value = "")]
    pub note: String,
    /// Price of the system in US dollars (pennysort; elsewhere it adds price/performance).
    #[arg(long, value_name = "USD")]
    pub system_price: Option<f64>,
    /// Largest input a search tries (minutesort, pennysort); free disk bounds it too.
    #[arg(long, value_name = "SIZE", value_parser = parse_bytes)]
    pub max_bytes: Option<u64>,
    /// Time limit of minutesort in seconds.
    #[arg(long, value_name = "SECONDS")]
    pub limit_s: Option<f64>,
    /// Transfer size of the I/O floor's direct reads and writes.
    #[arg(long, value_name = "SIZE", value_parser = parse_bytes, default_value = "8MiB")]
    pub floor_transfer: u64,
    /// Transfers in flight for the I/O floor.
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub floor_inflight: usize,
    /// Where the power counters are read (Linux powercap).
    #[arg(long, value_name = "DIR", default_value = "/sys/class/powercap")]
    pub powercap: PathBuf,
    /// Keep the generated input in the work directory.
    #[arg(long)]
    pub keep: bool,
    /// Never show a progress bar.
    #[arg(long)]
    pub no_progress: bool,
    /// Write the manual pages xsort-bench.1, gensort.1 and valsort.1 into DIR, then exit.
    #[arg(long, value_name = "DIR", hide = true)]
    pub generate_man: Option<PathBuf>,
    /// Write bash, zsh and fish completions of xsort-bench, gensort and valsort into DIR, then exit.
    #[arg(long, value_name = "DIR", hide = true)]
    pub generate_completions: Option<PathBuf>,
}

/// The harness's measurements offered alone, for the bench scripts.
#[derive(Debug, Subcommand)]
pub enum Tool {
    /// Measure the I/O floor of FILE: a direct read of it, then a direct write and fsync of as many
    /// bytes to a scratch file (removed after), as every measured run does before its sort.
    Floor(FloorArgs),
    /// Drop FILEs' pages from the page cache (fsync, then posix_fadvise DONTNEED), as --cache cold
    /// does before each run.
    Evict {
        /// Files to evict.
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
    },
}

/// `xsort-bench floor`'s flags.
#[derive(Debug, clap::Args)]
pub struct FloorArgs {
    /// The file to read.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Directory of the scratch file written (default: FILE's directory).
    #[arg(long, value_name = "DIR")]
    pub scratch: Option<PathBuf>,
    /// Transfer size of the direct reads and writes.
    #[arg(long, value_name = "SIZE", value_parser = parse_bytes, default_value = "8MiB")]
    pub transfer: u64,
    /// Transfers in flight.
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub inflight: usize,
    /// Print the measurement as one JSON object (seconds, bytes, MB/s, modes).
    #[arg(long)]
    pub json: bool,
    /// Also read FILE while writing as many bytes, at once (duplex_s): each pass of a spilled sort
    /// does that, so twice it is the two-pass floor.
    #[arg(long)]
    pub duplex: bool,
}

/// Everything a benchmark needs, defaults applied and checked.
#[derive(Clone, Debug)]
pub struct Settings {
    pub category: Category,
    pub runs: usize,
    pub records: u64,
    pub dir: PathBuf,
    pub out: PathBuf,
    pub xsort: PathBuf,
    /// `--ranks`: the number of ranks and the mpirun that launches them.
    pub ranks: Option<(usize, PathBuf)>,
    /// Options for mpirun before `-np`.
    pub mpirun_args: Vec<String>,
    pub cache: Cache,
    pub sync: bool,
    pub format: Format,
    pub skew: bool,
    pub threads: Option<usize>,
    pub memory: Option<String>,
    pub buffered: bool,
    pub transfer_size: Option<String>,
    pub temp: Vec<PathBuf>,
    pub xsort_args: Vec<String>,
    pub note: String,
    pub system_price: Option<f64>,
    pub max_bytes: Option<u64>,
    pub limit_s: Option<f64>,
    pub floor_transfer: usize,
    pub floor_inflight: usize,
    pub powercap: PathBuf,
    pub keep: bool,
    pub progress: bool,
    /// This program's own command line, word for word.
    pub argv: Vec<String>,
}

/// Seconds in the three years over which a system's price is amortized
/// (PennySort: 3 x 365 days).
pub const AMORTIZATION_S: f64 = 3.0 * 365.0 * 86400.0;

impl Settings {
    pub fn from_args(args: Args, argv: Vec<String>) -> Result<Settings> {
        let Some(cat) = args.category else { bail!("no benchmark category given (see --help)") };
        let (runs, records, format) = category_defaults(cat);
        let runs = args.runs.unwrap_or(runs);
        if runs == 0 {
            bail!("--runs must be at least 1");
        }
        let records = args.records.unwrap_or(records);
        if records == 0 {
            bail!("--records must be at least 1");
        }
        if !cat.searches() && args.max_bytes.is_some() {
            bail!("--max-bytes applies to minutesort and pennysort only");
        }
        let limit_s = time_limit(cat, &args)?;
        if args.floor_inflight == 0 || args.floor_transfer < 4096 {
            bail!("--floor-inflight must be at least 1 and --floor-transfer at least 4KiB");
        }
        if args.threads == Some(0) {
            bail!("--threads must be at least 1");
        }
        let (dir, temp) = work_dirs(args.dir.as_deref(), &args.temp)?;
        let ranks = cluster_ranks(&args)?;
        let mpirun_args = if args.mpirun_arg.is_empty() { vec!["--oversubscribe".to_string()] } else { args.mpirun_arg };
        let xsort = sort_binary(args.xsort, ranks.is_some())?;
        Ok(Settings {
            category: cat,
            runs,
            records,
            dir,
            out: args.out,
            xsort,
            ranks,
            mpirun_args: if args.ranks.is_some() { mpirun_args } else { Vec::new() },
            cache: args.cache,
            sync: args.sync == Switch::On,
            format: args.format.unwrap_or(format),
            skew: args.skew,
            threads: args.threads,
            memory: args.memory,
            buffered: args.buffered,
            transfer_size: args.transfer_size,
            temp,
            xsort_args: args.xsort_arg,
            note: args.note,
            system_price: args.system_price,
            max_bytes: args.max_bytes,
            limit_s,
            floor_transfer: usize::try_from(args.floor_transfer).unwrap_or(usize::MAX),
            floor_inflight: args.floor_inflight,
            powercap: args.powercap,
            keep: args.keep,
            progress: !args.no_progress,
            argv,
        })
    }

    /// Temp directories xsort is given: `-T` ones, or the work directory.
    pub fn temp_dirs(&self, work: &Path) -> Vec<PathBuf> {
        if self.temp.is_empty() {
            vec![work.to_path_buf()]
        } else {
            self.temp.clone()
        }
    }
}

/// A category's default runs, records per run and record kind.
fn category_defaults(cat: Category) -> (usize, u64, Format) {
    match cat {
        Category::Datamation => (20, 1_000_000, Format::Binary),
        Category::Throughput => (3, 10_000_000, Format::Binary),
        Category::Joulesort => (3, 100_000_000, Format::Ascii),
        Category::Minutesort => (3, 1_000_000, Format::Binary),
        Category::Pennysort => (3, 1_000_000, Format::Ascii),
    }
}

/// The category's time limit in seconds (minutesort: `--limit-s`, 60 by default; pennysort: the
/// time one cent of `--system-price` buys), after checking the options that set it.
fn time_limit(cat: Category, args: &Args) -> Result<Option<f64>> {
    if cat != Category::Minutesort && args.limit_s.is_some() {
        bail!("--limit-s applies to minutesort only (pennysort's limit comes from --system-price)");
    }
    if let Some(p) = args.system_price {
        if !(p.is_finite() && p > 0.0) {
            bail!("--system-price must be a positive number of US dollars, not {p}");
        }
    }
    let limit_s = match cat {
        Category::Minutesort => Some(args.limit_s.unwrap_or(60.0)),
        Category::Pennysort => {
            let Some(price) = args.system_price else {
                bail!("pennysort needs --system-price USD (the price of this system)");
            };
            Some(AMORTIZATION_S / (price * 100.0))
        }
        _ => None,
    };
    if let Some(l) = limit_s {
        if !(l.is_finite() && l > 0.0) {
            bail!("the time limit must be a positive number of seconds, not {l}");
        }
    }
    Ok(limit_s)
}

/// The work directory (`--dir`, else $TMPDIR, else /tmp) and the `-T` directories, canonical.
fn work_dirs(dir: Option<&Path>, temp: &[PathBuf]) -> Result<(PathBuf, Vec<PathBuf>)> {
    let dir = dir
        .map(Path::to_path_buf)
        .unwrap_or_else(|| std::env::var_os("TMPDIR").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/tmp")));
    let dir = dir.canonicalize().with_context(|| format!("--dir {}: not a usable directory", dir.display()))?;
    let mut dirs = Vec::new();
    for t in temp {
        dirs.push(t.canonicalize().with_context(|| format!("-T {}: not a usable directory", t.display()))?);
    }
    Ok((dir, dirs))
}

/// `--ranks`: the number of ranks and the mpirun that launches them, after checking the options
/// that go with it.
fn cluster_ranks(args: &Args) -> Result<Option<(usize, PathBuf)>> {
    Ok(match args.ranks {
        None if !args.mpirun_arg.is_empty() => bail!("--mpirun-arg applies with --ranks only"),
        None => None,
        Some(0) => bail!("--ranks must be at least 1"),
        Some(n) => {
            // xsort-mpi has neither option: each rank's sort chooses its own I/O.
            if args.buffered || args.transfer_size.is_some() {
                bail!("--buffered and --transfer-size are xsort's options, not xsort-mpi's (--ranks)");
            }
            Some((n, crate::cluster::find_mpirun()?))
        }
    })
}

/// The sort to run: `--xsort`, else the xsort (or with `--ranks` the xsort-mpi) next to this
/// executable; it must be a file.
fn sort_binary(xsort: Option<PathBuf>, cluster: bool) -> Result<PathBuf> {
    let xsort = match xsort {
        Some(p) => p,
        None => default_sort(if cluster { "xsort-mpi" } else { "xsort" })?,
    };
    if !xsort.is_file() {
        bail!("the sort to run, {}, is not a file (use --xsort PATH)", xsort.display());
    }
    Ok(xsort.canonicalize().unwrap_or(xsort))
}

/// `name` (xsort or xsort-mpi) in the directory of this executable (target/release for all).
fn default_sort(name: &str) -> Result<PathBuf> {
    let exe = std::env::current_exe().context("cannot find this executable's path")?;
    let dir = exe.parent().context("this executable has no directory")?;
    let candidate = dir.join(name);
    if candidate.is_file() {
        return Ok(candidate);
    }
    // Integration tests run from target/*/deps; the binaries live one level up.
    if let Some(up) = dir.parent() {
        if up.join(name).is_file() {
            return Ok(up.join(name));
        }
    }
    bail!("no {name} binary next to {} (build it with `cargo build --release -p {name}`, or pass --xsort PATH)", exe.display())
}

/// A record count: `1000000`, `1_000_000`, `1e6` or `10^6`.
pub fn parse_count(s: &str) -> Result<u64, String> {
    let t = s.trim().replace('_', "");
    let bad = || format!("'{s}' is not a record count (examples: 1000000, 1e6, 10^6)");
    let parse_pow = |base: &str, exp: &str| -> Result<u64, String> {
        let b: u64 = base.parse().map_err(|_| bad())?;
        let e: u32 = exp.parse().map_err(|_| bad())?;
        b.checked_pow(e).ok_or_else(bad)
    };
    if let Some((m, e)) = t.split_once(['e', 'E']) {
        let m: u64 = m.parse().map_err(|_| bad())?;
        return m.checked_mul(parse_pow("10", e)?).ok_or_else(bad);
    }
    if let Some((b, e)) = t.split_once('^') {
        return parse_pow(b, e);
    }
    t.parse().map_err(|_| bad())
}

/// A byte size: a number with K, M, G, T (powers of 1000) or KiB, MiB, GiB,
/// TiB (powers of 1024), B optional; fractions allowed (`1.5G`).
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let bad = || format!("'{s}' is not a size (examples: 100M, 1.5G, 8MiB, 4096)");
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let num: f64 = num.parse().map_err(|_| bad())?;
    let mult: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kb" => 1e3,
        "m" | "mb" => 1e6,
        "g" | "gb" => 1e9,
        "t" | "tb" => 1e12,
        "kib" => 1024.0,
        "mib" => 1024.0 * 1024.0,
        "gib" => 1024.0 * 1024.0 * 1024.0,
        "tib" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => return Err(bad()),
    };
    let v = (num * mult).round();
    if !(1.0..9.2e18).contains(&v) {
        return Err(bad());
    }
    Ok(v as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts() {
        assert_eq!(parse_count("1000"), Ok(1000));
        assert_eq!(parse_count("1_000_000"), Ok(1_000_000));
        assert_eq!(parse_count("1e6"), Ok(1_000_000));
        assert_eq!(parse_count("10^6"), Ok(1_000_000));
        assert_eq!(parse_count("5e2"), Ok(500));
        assert!(parse_count("1.5").is_err());
        assert!(parse_count("10^40").is_err());
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_bytes("100M"), Ok(100_000_000));
        assert_eq!(parse_bytes("1.5G"), Ok(1_500_000_000));
        assert_eq!(parse_bytes("8MiB"), Ok(8 << 20));
        assert_eq!(parse_bytes("4096"), Ok(4096));
        assert!(parse_bytes("12X").is_err());
        assert!(parse_bytes("0").is_err());
    }
}
