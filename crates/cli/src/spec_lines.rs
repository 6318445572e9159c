//! `--spec` with Nsort's delimited records (`-format=delimiter:C`), sorted by the text-line engine:
//! a record is a line whose terminator is the record delimiter, and the spec's fields and keys
//! become GNU sort keys (see `xsort_core::spec::mapping` for the rules).

use crate::args::Args;
use anyhow::{bail, Result};
use xsort_core::Sort;

/// The sort of a `--spec` that gives delimited records ending in `terminator` (its statements are
/// applied by the caller); the options that do not apply to them are refused, naming the first
/// one.
pub fn delimited(args: &Args, terminator: u8) -> Result<Sort> {
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
    Ok(Sort::delimited(terminator))
}
