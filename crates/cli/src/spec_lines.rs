//! `--spec` with Nsort's delimited records (`-format=delimiter:C`), sorted by the text-line engine:
//! a record is a line whose terminator is the record delimiter, and the spec's fields and keys
//! become GNU sort keys (see `xsort_core::spec::mapping` for the rules).

use crate::args::Args;
use crate::settings::Common;
use anyhow::{anyhow, bail, Result};
use std::path::PathBuf;
use xsort_core::order::{LineOrder, LineOrderConfig};
use xsort_core::spec;
use xsort_core::text::{LineSorter, TextConfig, TextMode};

/// A checked sort of delimited records.
pub struct SpecLines {
    cfg: TextConfig,
    order: LineOrder,
    stats: bool,
    stats_json: Option<PathBuf>,
    progress: bool,
    warnings: Vec<String>,
}

/// The text-line sort that `--spec` asks for when it gives delimited records; `None` when it gives
/// fixed-size records (or no format), which take the record path.
pub fn settings(args: &Args) -> Result<Option<SpecLines>> {
    if args.spec.is_empty() {
        return Ok(None);
    }
    let spec = spec::parse_spec(&args.spec.join("\n")).map_err(|e| anyhow!("--spec: {e}"))?;
    let Some(terminator) = spec.record_delimiter else {
        return Ok(None);
    };
    if let Some(n) = args.record_size {
        bail!("--record-size={n} contradicts the delimited records of --spec (-format=delimiter:...)");
    }
    if !args.key_bytes.is_empty() {
        bail!("--key-bytes applies to fixed-size records; delimited records take -key=FIELD in --spec");
    }
    if let Some(option) = crate::lines::line_only_option(args) {
        bail!("{option} does not combine with delimited records in --spec: their order comes from the -field and -key statements");
    }

    let (separator, keys) = spec::mapping::line_keys(&spec, terminator)?;
    let unique = args.unique || spec.duplicates == Some(false);
    let order = LineOrder::new(LineOrderConfig { keys, separator, stable: true, unique, ..LineOrderConfig::default() })
        .map_err(|e| anyhow!("--spec: {e}"))?;

    let c = Common::of(args, &spec)?;
    let mut cfg = TextConfig::new(c.inputs, c.output, c.budget);
    cfg.terminator = terminator;
    cfg.mode = TextMode::Sort;
    cfg.unique = unique;
    cfg.threads = c.threads;
    cfg.temp_dirs = c.temp_dirs;
    cfg.method = c.method;
    cfg.output_io = c.output_io;
    cfg.temp_io = c.temp_io;
    cfg.sync = c.sync;
    cfg.compress_program = c.compress_program;

    Ok(Some(SpecLines { cfg, order, stats: c.stats, stats_json: args.stats_json.clone(), progress: c.progress, warnings: c.warnings }))
}

/// Sorts; returns the exit status.
pub fn run(s: SpecLines) -> Result<u8> {
    crate::warn(&s.warnings);
    let output = s.cfg.output.clone();
    let sorter = LineSorter::new(s.cfg, s.order);
    crate::sort_and_report(s.progress, sorter.counters(), s.stats, s.stats_json.as_deref(), &output, || sorter.run())
}
