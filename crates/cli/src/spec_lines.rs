//! `--spec` with Nsort's delimited records (`-format=delimiter:C`), sorted by the text-line engine:
//! a record is a line whose terminator is the record delimiter, and the spec's fields and keys
//! become GNU sort keys (see `xsort_core::spec::mapping` for the rules).

use crate::args::Args;
use anyhow::{anyhow, bail, Result};
use xsort_core::order::{LineOrder, LineOrderConfig};
use xsort_core::spec::{self, NsortSpec};
use xsort_core::text::TextMode;
use xsort_core::LineFormat;

/// The line format of a `--spec` that gives delimited records ending in `terminator`; the options
/// that do not apply to them are refused, naming the first one.
pub fn line_format(args: &Args, spec: &NsortSpec, terminator: u8) -> Result<LineFormat> {
    if let Some(n) = args.record_size {
        bail!("--record-size={n} contradicts the delimited records of --spec (-format=delimiter:...)");
    }
    if !args.key_bytes.is_empty() {
        bail!("--key-bytes applies to fixed-size records; delimited records take -key=FIELD in --spec");
    }
    if args.touch {
        bail!("--touch applies to fixed-size records, not to the delimited records of --spec");
    }
    if let Some(option) = crate::lines::line_only_option(args) {
        bail!("{option} does not combine with delimited records in --spec: their order comes from the -field and -key statements");
    }
    let (separator, keys) = spec::mapping::line_keys(spec, terminator)?;
    let unique = args.unique || spec.duplicates == Some(false);
    let order = LineOrder::new(LineOrderConfig { keys, separator, stable: true, unique, ..LineOrderConfig::default() })
        .map_err(|e| anyhow!("--spec: {e}"))?;
    Ok(LineFormat { terminator, order, unique, mode: TextMode::Sort })
}
