//! The second stage of option parsing: flags and Nsort statements checked against each other and
//! turned into the sorter's [`SortConfig`]. Flags win over statements; an output given both ways, or
//! two different record sizes, is an error.

use crate::args::Args;
use anyhow::{anyhow, bail, Context, Result};
use std::io::IsTerminal;
use std::path::PathBuf;
use xsort_core::size::{parse_byte_count, parse_memory_size};
use xsort_core::spec::{self, FieldType, FileSpec, NsortSpec};
use xsort_core::{Input, IoSettings, KeyPart, KeySpec, Method, Output, SortConfig};

/// Everything main needs: the sort and how to report on it.
pub struct Settings {
    /// The sort.
    pub config: SortConfig,
    /// Print statistics to stderr.
    pub stats: bool,
    /// Write statistics JSON here.
    pub stats_json: Option<PathBuf>,
    /// Show a progress bar.
    pub progress: bool,
    /// Warnings to print before sorting.
    pub warnings: Vec<String>,
}

impl Settings {
    /// Validates `args`.
    pub fn from_args(args: Args) -> Result<Self> {
        let spec = parse_specs(&args.spec)?;
        let record_size = record_size(&args, &spec)?;
        let mut key = args.key_bytes.iter().map(|k| parse_key_bytes(k)).collect::<Result<Vec<_>>>()?;
        key.extend(spec_keys(&spec)?);

        let mut inputs: Vec<Input> = spec.in_files.iter().map(|f| input_of(&f.path)).collect();
        inputs.extend(args.inputs.iter().map(|p| input_of(p)));
        if inputs.is_empty() {
            inputs.push(Input::Stdin);
        }
        let output = match (&args.output, &spec.out_file) {
            (Some(_), Some(_)) => bail!("the output is given twice (-o and -out_file)"),
            (Some(p), None) => output_of(p),
            (None, Some(f)) => output_of(&f.path),
            (None, None) => Output::Stdout,
        };

        let memory = match &args.memory {
            Some(s) => Some(parse_memory_size(s).with_context(|| format!("invalid --memory '{s}'"))?),
            None => spec.memory,
        };
        let (budget, clamp_warning) = xsort_core::plan::resolve_budget(memory);
        let threads = args.parallel.or(spec.processes).unwrap_or_else(default_threads);
        if threads == 0 {
            bail!("--parallel must be at least 1");
        }
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
        let io = |f: Option<&FileSpec>| io_settings(f, transfer, args.buffered);

        let mut temp_dirs = args.temp_dirs.clone();
        temp_dirs.extend(spec.temp_dirs.iter().map(|t| t.path.clone()));
        if temp_dirs.is_empty() {
            temp_dirs.push(std::env::temp_dir());
        }

        let mut config = SortConfig::new(inputs, output, record_size, budget);
        config.key = KeySpec::new(key);
        config.threads = threads;
        config.temp_dirs = temp_dirs;
        config.method = method;
        config.input_io = io(spec.in_files.first());
        config.output_io = io(spec.out_file.as_ref());
        config.temp_io = io(spec.temp_dirs.first());
        config.touch = args.touch || spec.touch.unwrap_or(false);
        config.sync = args.sync || spec.out_file.as_ref().is_some_and(|f| f.sync);

        let progress = !args.no_progress && (args.progress || std::io::stderr().is_terminal());
        Ok(Settings {
            config,
            stats: args.stats || spec.statistics.unwrap_or(false),
            stats_json: args.stats_json,
            progress,
            warnings: clamp_warning.into_iter().collect(),
        })
    }
}

fn parse_specs(texts: &[String]) -> Result<NsortSpec> {
    let joined = texts.join("\n");
    spec::parse_spec(&joined).map_err(|e| anyhow!("--spec: {e}"))
}

fn record_size(args: &Args, spec: &NsortSpec) -> Result<usize> {
    match (args.record_size, spec.record_size) {
        (Some(a), Some(b)) if a != b => bail!("--record-size={a} contradicts -format=size:{b} in --spec"),
        (Some(0), _) => bail!("--record-size must be at least 1"),
        (Some(a), _) => Ok(a),
        (None, Some(b)) => Ok(b),
        (None, None) => bail!("no record format given: use --record-size=N (or -format=size:N in --spec); sorting text lines is not supported yet"),
    }
}

/// Parses `OFFSET:LENGTH[:r]`.
pub fn parse_key_bytes(s: &str) -> Result<KeyPart> {
    let bad = || anyhow!("invalid --key-bytes '{s}': expected OFFSET:LENGTH[:r], e.g. 0:10 or 10:4:r");
    let mut it = s.split(':');
    let offset = it.next().and_then(|x| x.trim().parse::<usize>().ok()).ok_or_else(bad)?;
    let len = it.next().and_then(|x| x.trim().parse::<usize>().ok()).ok_or_else(bad)?;
    let descending = match it.next() {
        None => false,
        Some("r") | Some("R") => true,
        Some(_) => return Err(bad()),
    };
    if it.next().is_some() || len == 0 {
        return Err(bad());
    }
    Ok(KeyPart::bytes(offset, len, descending))
}

fn spec_keys(spec: &NsortSpec) -> Result<Vec<KeyPart>> {
    spec.keys
        .iter()
        .map(|k| {
            if k.field_type != FieldType::Character {
                bail!("--spec: key at offset {} has type {:?}; only character keys are supported yet", k.offset, k.field_type);
            }
            Ok(KeyPart::bytes(k.offset, k.size, k.descending))
        })
        .collect()
}

fn io_settings(f: Option<&FileSpec>, transfer: Option<u64>, buffered: bool) -> IoSettings {
    let d = IoSettings::default();
    IoSettings {
        direct: !buffered && f.and_then(|f| f.direct).unwrap_or(d.direct),
        transfer_size: transfer.or(f.and_then(|f| f.transfer_size)).map(|t| t as usize).unwrap_or(d.transfer_size),
        count: f.and_then(|f| f.count).unwrap_or(d.count),
    }
}

fn input_of(p: &std::path::Path) -> Input {
    if p.as_os_str() == "-" {
        Input::Stdin
    } else {
        Input::Path(p.to_owned())
    }
}

fn output_of(p: &std::path::Path) -> Output {
    if p.as_os_str() == "-" {
        Output::Stdout
    } else {
        Output::Path(p.to_owned())
    }
}

fn default_threads() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_bytes_forms() {
        assert_eq!(parse_key_bytes("0:10").unwrap(), KeyPart::bytes(0, 10, false));
        assert_eq!(parse_key_bytes("10:4:r").unwrap(), KeyPart::bytes(10, 4, true));
        for bad in ["", "5", "a:b", "1:0", "1:2:x", "1:2:r:3", "-1:2"] {
            let e = parse_key_bytes(bad).unwrap_err().to_string();
            assert!(e.starts_with(&format!("invalid --key-bytes '{bad}'")), "{e}");
        }
    }
}
