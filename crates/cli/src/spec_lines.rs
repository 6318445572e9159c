//! `--spec` with Nsort's delimited records (`-format=delimiter:C`), sorted by the text-line engine:
//! a record is a line whose terminator is the record delimiter, and the spec's fields and keys
//! become GNU sort keys, as `sort -s -t SEP -k I,I[n][r]` would take them:
//!
//! - delimited fields (`-field=name:F,delimiter:','`): field I (1-based, in `-field` order) is GNU
//!   field I with `-t` set to the shared field delimiter, so `-key=F` is `-k I,I`; a last field
//!   that ends at the record delimiter runs to the end of the record: `-k I`;
//! - fixed-position fields and `-key=position:P,size:N` (all of a record's fields fixed): the
//!   separator is the record delimiter itself, which never occurs inside a record, so field 1 is
//!   the whole record and the key is `-k 1.(P+1),1.(P+N)`;
//! - `decimal` adds GNU's `n` (numeric: leading blanks, sign, digits, a decimal point; text that
//!   is not a number counts as zero), `descending` adds `r`;
//! - no `-key`: the whole record is the key, in byte order;
//! - records with equal keys keep their input order (`-s`: no last-resort comparison);
//!   `-noduplicates` (or `-u`) keeps the first of each group of equal keys.
//!
//! The core's parser has already refused what does not map (see `xsort_core::spec::delimited`).

use crate::args::Args;
use crate::settings::Common;
use anyhow::{anyhow, bail, Result};
use std::path::PathBuf;
use xsort_core::order::{KeyField, LineOrder, LineOrderConfig};
use xsort_core::spec::{self, FieldType, NsortSpec};
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

    let (separator, keys) = gnu_keys(&spec, terminator)?;
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

/// GNU's `-t` and `-k` keys for the spec's keys (see the module documentation).
fn gnu_keys(spec: &NsortSpec, terminator: u8) -> Result<(Option<u8>, Vec<KeyField>)> {
    let delimited = spec.fields.iter().any(|f| f.delimiter.is_some());
    let separator = if delimited { spec.fields.iter().filter_map(|f| f.delimiter).find(|&d| d != terminator) } else { Some(terminator) };
    let mut keys = Vec::with_capacity(spec.keys.len());
    for key in &spec.keys {
        let mut flags = String::new();
        if key.field_type == FieldType::Decimal {
            flags.push('n');
        }
        if key.descending {
            flags.push('r');
        }
        let field = key.field.as_ref().and_then(|name| spec.fields.iter().position(|f| &f.name == name));
        let text = match field {
            Some(i) if delimited => match spec.fields[i].delimiter {
                Some(d) if d == terminator => format!("{}{flags}", i + 1),
                _ => format!("{0},{0}{flags}", i + 1),
            },
            _ => format!("1.{},1.{}{flags}", key.offset + 1, key.offset + key.size),
        };
        keys.push(KeyField::parse(&text).map_err(|e| anyhow!("--spec: key {text}: {e}"))?);
    }
    Ok((separator, keys))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The GNU KEYDEFs a spec maps to, as text.
    fn mapped(text: &str) -> (Option<u8>, Vec<KeyField>) {
        let spec = spec::parse_spec(text).unwrap();
        gnu_keys(&spec, spec.record_delimiter.unwrap()).unwrap()
    }

    fn k(defs: &[&str]) -> Vec<KeyField> {
        defs.iter().map(|d| KeyField::parse(d).unwrap()).collect()
    }

    #[test]
    fn delimited_fields_are_gnu_fields() {
        let (sep, keys) = mapped(
            "-format=delimiter:'\\n' -field=name:a,delimiter:',' -field=name:b,delimiter:',',decimal \
             -field=name:c,delimiter:newline -key=b,descending -key=c -key=a",
        );
        assert_eq!(sep, Some(b','));
        assert_eq!(keys, k(&["2,2nr", "3", "1,1"]));
    }

    #[test]
    fn fixed_positions_use_the_terminator_as_separator() {
        let (sep, keys) = mapped("-format=delimiter:nul -field=name:a,size:3,off:2,decimal -key=a -key=position:0,size:2,desc");
        assert_eq!(sep, Some(0));
        assert_eq!(keys, k(&["1.3,1.5n", "1.1,1.2r"]));
    }

    #[test]
    fn no_key_is_the_whole_record() {
        let (_, keys) = mapped("-format=delimiter:'\\n'");
        assert!(keys.is_empty());
    }
}
