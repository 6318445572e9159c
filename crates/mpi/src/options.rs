//! The command line of `xsort-mpi`: xsort's record and line options, parsed into the library's
//! [`Sort`] builder. Parsed by hand, not with the `xsort` command's parser: options of xsort-mpi's
//! own are taken here and every other option is handed to [`Sort::gnu_args`], which parses GNU
//! sort's ordering options (grouped letters, `-k`, `-t`, long forms) as the `xsort` command does.

use anyhow::{anyhow, bail, Context, Result};
use std::path::PathBuf;
use xsort_core::{Order, OutputCompression, RecordFilter, Sort};

/// The text of `--help`.
pub const HELP: &str = "\
Usage: mpirun -np N xsort-mpi [OPTION]... -o OUTPUT INPUT...
Sort INPUT files across the N ranks of an MPI job into OUTPUT, as `xsort` would on one machine.

Shared files (every rank sees the same paths): rank r reads its 1/N of the inputs, the ranks
exchange records by key range, and each writes its range at its offset in the one OUTPUT.
Node-local files: in paths containing {rank}, each rank puts its own rank number: it reads its own
inputs and (when OUTPUT has {rank}) writes its own part; the parts in rank order are the sorted
whole. The output appears only when every rank has finished (a device, such as /dev/null, is
written in place).

Compressed files: node-local inputs in gzip, zstd, bzip2 or xz (known by their first bytes) are
decompressed by their rank into a temp file in its -T first; a shared compressed input is refused
(its ranks read byte ranges). An output or part named .gz, .zst, .bz2 or .xz, or any with
--compress=FORMAT[:LEVEL], is compressed: each part one complete stream of its rank's range, the
shared output each rank's range as whole members or frames, concatenated in rank order.

Records:  --record-size N   --key-bytes OFFSET:LENGTH[:TYPE][:r] (repeatable)   --spec STATEMENTS
Lines:    GNU sort's ordering options: -b -d -f -g -h -i -M -n -R -r -V -k KEYDEF -t SEP -s -u -z
          --sort=WORD --random-source=FILE (and their long forms), in byte order (as LC_ALL=C):
          unlike xsort, xsort-mpi does not follow the environment's locale
Each rank: -S, --memory SIZE (default: half the available memory)   -T, --temporary-directory DIR
          --parallel N (threads)
Output:   -o, --output FILE   --compress=FORMAT[:LEVEL] (gzip, zstd, bzip2, xz; none: plain)
          --sync   --stats   --stats-json FILE (written by rank 0)
";

/// What the command line asked for.
#[derive(Debug)]
pub struct Options {
    /// The sort, without inputs or outputs (every rank builds its own from it).
    pub sort: Sort,
    /// The inputs as given (`{rank}` not yet replaced).
    pub inputs: Vec<String>,
    /// The output as given.
    pub output: String,
    /// `-S` per rank, in bytes (None: a share of the machine's, see [`Options::memory_per_rank`]).
    pub memory: Option<u64>,
    pub temp_dirs: Vec<PathBuf>,
    pub threads: Option<usize>,
    pub sync: bool,
    pub stats: bool,
    pub stats_json: Option<PathBuf>,
    /// How the output (or each part) is compressed: by its name's extension unless
    /// `--compress=FORMAT[:LEVEL]` or `--compress=none` says otherwise.
    pub compress: OutputCompression,
    /// Whether equal keys fold into one record (`-u`, Nsort's `-noduplicates` and `-summarize`):
    /// then equal keys must meet on one rank.
    pub folds: bool,
    /// Whether the output can be smaller than the input (`-u`, `-noduplicates`, `-summarize`): then
    /// its size is known only once it is sorted.
    pub shrinks: bool,
    /// Nsort's `-include` / `-omit`, taken out of the sort: each rank drops the records it refuses
    /// from its share before the exchange.
    pub keep: Option<RecordFilter>,
    /// `--help` or `--version` was asked for: print this and stop.
    pub info: Option<String>,
}

/// The marker that makes a path node-local.
pub const RANK_MARKER: &str = "{rank}";

/// Options that take a value, as (short, long).
const VALUED: [(Option<char>, &str); 10] = [
    (Some('o'), "output"),
    (Some('S'), "memory"),
    (Some('T'), "temporary-directory"),
    (None, "parallel"),
    (None, "record-size"),
    (None, "key-bytes"),
    (None, "spec"),
    (None, "stats-json"),
    (None, "buffer-size"),
    (None, "compress"),
];

/// GNU options whose value may be the next argument.
const GNU_VALUED_LONG: [&str; 4] = ["key", "field-separator", "sort", "random-source"];

impl Options {
    /// Parses the arguments after the program name.
    pub fn parse(args: &[String]) -> Result<Options> {
        let mut own: Vec<(&'static str, String)> = Vec::new();
        let (mut gnu, mut inputs, mut flags) = (Vec::<String>::new(), Vec::new(), Vec::<&'static str>::new());
        let mut it = args.iter();
        while let Some(arg) = it.next() {
            if arg == "--" {
                inputs.extend(it.by_ref().cloned());
                break;
            }
            if let Some(long) = arg.strip_prefix("--") {
                let (name, inline) = long.split_once('=').map_or((long, None), |(n, v)| (n, Some(v.to_owned())));
                if let Some(&(_, canonical)) = VALUED.iter().find(|(_, l)| *l == name) {
                    let v = match inline {
                        Some(v) => v,
                        None => it.next().cloned().ok_or_else(|| anyhow!("option '--{name}' requires an argument"))?,
                    };
                    own.push((canonical, v));
                } else if let Some(&flag) = ["sync", "stats", "help", "version"].iter().find(|f| **f == name) {
                    flags.push(flag);
                } else {
                    gnu.push(arg.clone());
                    if inline.is_none() && GNU_VALUED_LONG.contains(&name) {
                        gnu.extend(it.next().cloned());
                    }
                }
            } else if let Some(short) = arg.strip_prefix('-').filter(|s| !s.is_empty()) {
                let first = short.chars().next().unwrap_or('-');
                if let Some(&(_, canonical)) = VALUED.iter().find(|(s, _)| *s == Some(first)) {
                    let rest = &short[1..];
                    let v = if rest.is_empty() {
                        it.next().cloned().ok_or_else(|| anyhow!("option '-{first}' requires an argument"))?
                    } else {
                        rest.to_owned()
                    };
                    own.push((canonical, v));
                } else {
                    gnu.push(arg.clone());
                    // `-k 2,2` and `-t ,` (alone or ending a group, as `-nk 2`) take the next argument.
                    if short.find(['k', 't']).is_some_and(|i| i + 1 == short.len()) {
                        gnu.extend(it.next().cloned());
                    }
                }
            } else {
                inputs.push(arg.clone());
            }
        }
        if flags.contains(&"help") {
            return Ok(Options::info(HELP.to_owned()));
        }
        if flags.contains(&"version") {
            return Ok(Options::info(format!("xsort-mpi {}\n", env!("CARGO_PKG_VERSION"))));
        }
        Options::build(own, gnu, inputs, flags)
    }

    fn info(text: String) -> Options {
        Options {
            sort: Sort::lines(),
            inputs: Vec::new(),
            output: String::new(),
            memory: None,
            temp_dirs: Vec::new(),
            threads: None,
            sync: false,
            stats: false,
            stats_json: None,
            compress: OutputCompression::ByName,
            folds: false,
            shrinks: false,
            keep: None,
            info: Some(text),
        }
    }

    fn build(own: Vec<(&'static str, String)>, gnu: Vec<String>, inputs: Vec<String>, flags: Vec<&'static str>) -> Result<Options> {
        let all = |name: &str| own.iter().filter(|(n, _)| *n == name).map(|(_, v)| v.clone()).collect::<Vec<_>>();
        let last = |name: &str| all(name).pop();
        let output = last("output").ok_or_else(|| anyhow!("no output: give one with -o FILE"))?;
        if inputs.is_empty() {
            bail!("no input files: every rank reads files (standard input is not shared across ranks)");
        }
        if inputs.iter().any(|i| i == "-") || output == "-" {
            bail!("'-' (standard input or output) cannot be shared across ranks: name files");
        }
        let memory = match last("memory").or_else(|| last("buffer-size")) {
            Some(s) => {
                let size = xsort_core::size::parse_memory_size(&s).map_err(|e| anyhow!("{e}"))?;
                Some(xsort_core::resolve_budget(Some(size)).bytes)
            }
            None => None,
        };
        let threads = match last("parallel") {
            Some(n) => Some(n.parse::<usize>().ok().filter(|n| *n > 0).ok_or_else(|| anyhow!("invalid number of threads '{n}'"))?),
            None => None,
        };
        let compress = match last("compress") {
            Some(c) => OutputCompression::parse(&c).map_err(|e| anyhow!("invalid --compress '{c}': {e}"))?,
            None => OutputCompression::ByName,
        };
        let specs = all("spec");
        let record_size = last("record-size");
        let keys = all("key-bytes");
        let (sort, folds, shrinks) = if !specs.is_empty() {
            if record_size.is_some() || !keys.is_empty() {
                bail!("--spec describes the records itself: give --record-size and --key-bytes as its statements");
            }
            spec_sort(&specs.join(" "), &gnu)?
        } else if let Some(size) = record_size {
            let size: usize = size.parse().ok().filter(|n| *n > 0).ok_or_else(|| anyhow!("invalid record size '{size}'"))?;
            let mut sort = Sort::records(size);
            for k in &keys {
                sort = sort.key_bytes(k).with_context(|| format!("--key-bytes {k}"))?;
            }
            let unique = record_gnu(&gnu)?;
            (sort.unique(unique), unique, unique)
        } else {
            if !keys.is_empty() {
                bail!("--key-bytes is a key of fixed-size records: give --record-size too");
            }
            if let Some(refused) =
                gnu.iter().find(|a| ["-m", "--merge", "-c", "-C", "--check", "--debug"].contains(&a.split('=').next().unwrap_or(a)))
            {
                bail!("{refused} is not supported across ranks (xsort-mpi sorts)");
            }
            if random_order(&gnu) && !gnu.iter().any(|a| a.starts_with("--random-source")) {
                bail!("-R needs --random-source=FILE across ranks: every rank must hash keys with the same seed");
            }
            let sort = Sort::lines().gnu_args(&gnu)?;
            let unique =
                gnu.iter().any(|a| a == "--unique" || (a.starts_with('-') && !a.starts_with("--") && short_letters(a).contains('u')));
            (sort, unique, unique)
        };
        let (sort, keep) = sort.take_selection().context("--spec")?;
        Ok(Options {
            sort,
            inputs,
            output,
            memory,
            temp_dirs: all("temporary-directory").into_iter().map(PathBuf::from).collect(),
            threads,
            sync: flags.contains(&"sync"),
            stats: flags.contains(&"stats"),
            stats_json: last("stats-json").map(PathBuf::from),
            compress,
            folds,
            shrinks,
            keep,
            info: None,
        })
    }

    /// `-S`, or by default xsort's default budget (half the memory the process may use: within its
    /// memory cgroup, see `xsort_core::resolve_budget`) shared by the `local_ranks` ranks on this machine.
    pub fn memory_per_rank(&self, local_ranks: usize) -> u64 {
        self.memory.unwrap_or_else(|| xsort_core::resolve_budget(None).bytes / local_ranks.max(1) as u64)
    }

    /// Worker threads of each rank's local sort: `--parallel`, or the machine's cores shared by
    /// the `local_ranks` ranks on it; never more than the CPUs the rank may use (its affinity and
    /// CPU quota).
    pub fn threads_per_rank(&self, local_ranks: usize) -> usize {
        let all = xsort_core::worker_threads(None);
        self.threads.map_or((all / local_ranks.max(1)).max(1), |n| n.clamp(1, all))
    }

    /// The order of the sort, for sampling and partitioning.
    pub fn order(&self) -> Result<Order> {
        Ok(self.sort.order()?)
    }
}

/// The letters of a group of short options before a `-k` or `-t` value (`-nruk2` gives `nru`).
fn short_letters(arg: &str) -> &str {
    let s = &arg[1..];
    match s.find(['k', 't']) {
        Some(i) => &s[..i],
        None => s,
    }
}

/// Whether GNU options ask for random order (`-R`, `--random-sort`, `--sort=random`, or a key's
/// `R`), which each rank would otherwise seed on its own.
fn random_order(gnu: &[String]) -> bool {
    let mut key_next = false;
    gnu.iter().any(|a| {
        let is_key = std::mem::take(&mut key_next);
        if a == "--random-sort" || a == "--sort=random" || (is_key && a.contains('R')) || a.starts_with("--key=") && a.contains('R') {
            return true;
        }
        key_next = a == "--key" || a.starts_with('-') && !a.starts_with("--") && a.ends_with('k');
        a.starts_with('-')
            && !a.starts_with("--")
            && (short_letters(a).contains('R') || a[1..].split_once('k').is_some_and(|(_, k)| k.contains('R')))
    })
}

/// The GNU options a sort of records takes: `-s` (records are always stable) and `-u`. Returns
/// whether `-u` was given.
fn record_gnu(gnu: &[String]) -> Result<bool> {
    let mut unique = false;
    for a in gnu {
        match a.as_str() {
            "--stable" => {}
            "--unique" => unique = true,
            s if s.starts_with('-') && !s.starts_with("--") && s[1..].chars().all(|c| c == 's' || c == 'u') => unique |= s.contains('u'),
            _ => bail!("{a} applies to text lines; records take --key-bytes"),
        }
    }
    Ok(unique)
}

/// A sort described by Nsort statements, and whether it folds and shrinks.
fn spec_sort(statements: &str, gnu: &[String]) -> Result<(Sort, bool, bool)> {
    let parsed = xsort_core::spec::parse_spec(statements)?;
    if !parsed.in_files.is_empty() || parsed.out_file.is_some() {
        bail!("--spec: give inputs and the output on the command line (-in_file and -out_file are per machine)");
    }
    let unique = parsed.duplicates == Some(false);
    let folds = unique || !parsed.summarize.is_empty();
    let sort = Sort::from_spec(statements)?;
    let mut extra_unique = false;
    if sort.record_size().is_some() {
        extra_unique = record_gnu(gnu)?;
    } else if !gnu.is_empty() {
        bail!("{}: delimited records take their keys from --spec", gnu[0]);
    }
    let sort = if extra_unique { sort.unique(true) } else { sort };
    // Folding (-noduplicates, -summarize, -u) makes the output smaller than the input.
    Ok((sort, folds || extra_unique, folds || extra_unique))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Options> {
        Options::parse(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn own_options_and_gnu_options_are_told_apart() {
        let o = parse(&["-t", ",", "-k2,2n", "-nk", "1,1", "-o", "out", "-S", "64M", "-Ttmp", "--stats", "a", "b"]).unwrap();
        assert_eq!(o.inputs, ["a", "b"]);
        assert_eq!(o.output, "out");
        assert_eq!(o.memory, Some(64 << 20));
        assert_eq!(o.temp_dirs, [PathBuf::from("tmp")]);
        assert!(o.stats && !o.folds);
        assert_eq!(o.order().unwrap().terminator(), Some(b'\n'));
        let o = parse(&["-u", "-z", "-o", "x", "in"]).unwrap();
        assert!(o.folds && o.shrinks);
        assert_eq!(o.order().unwrap().terminator(), Some(0));
    }

    #[test]
    fn records_and_spec() {
        let o = parse(&["--record-size=100", "--key-bytes", "0:10", "-o", "x", "in"]).unwrap();
        assert_eq!(o.order().unwrap().record_size(), Some(100));
        let o = parse(&["--spec", "-format=size:100 -key=offset:0,size:10 -summarize=offset:90,size:4,binary", "-o", "x", "in"]);
        assert!(o.is_err() || o.as_ref().is_ok_and(|o| o.folds && !o.shrinks), "{:?}", o.err());
        assert!(parse(&["--record-size=100", "-n", "-o", "x", "in"]).unwrap_err().to_string().contains("-n applies to text lines"));
        assert!(parse(&["-o", "x"]).unwrap_err().to_string().contains("no input"));
        assert!(parse(&["in"]).unwrap_err().to_string().contains("no output"));
        assert!(parse(&["-m", "-o", "x", "in"]).unwrap_err().to_string().contains("not supported"));
        for random in [&["-R"][..], &["-k", "1,1R"], &["-nk1R"], &["--sort=random"]] {
            let args = [random, &["-o", "x", "in"]].concat();
            assert!(parse(&args).unwrap_err().to_string().contains("--random-source"), "{random:?}");
        }
        assert!(parse(&["-t", "R", "-o", "x", "in"]).is_ok());
    }

    #[test]
    fn compression_by_name_or_by_option() {
        use xsort_io::{Codec, Compression};
        let o = parse(&["-o", "out{rank}.gz", "in"]).unwrap();
        assert_eq!(o.compress.of(Some(std::path::Path::new("out0.gz"))), Some(Compression::new(Codec::Gzip)));
        let o = parse(&["--compress", "zstd:19", "-o", "x", "in"]).unwrap();
        assert_eq!(o.compress, OutputCompression::With(Compression { codec: Codec::Zstd, level: 19 }));
        assert_eq!(parse(&["--compress=none", "-o", "x.gz", "in"]).unwrap().compress, OutputCompression::Plain);
        assert!(parse(&["--compress=gzip:10", "-o", "x", "in"]).unwrap_err().to_string().contains("from 1 to 9"));
    }
}
