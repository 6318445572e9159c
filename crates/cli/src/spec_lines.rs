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
use anyhow::{anyhow, bail, Result};
use xsort_core::order::{KeyField, LineOrder, LineOrderConfig};
use xsort_core::spec::{FieldType, NsortSpec};
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
    if spec.touch == Some(true) {
        bail!("-touch in --spec applies to fixed-size records, not to delimited records");
    }
    if let Some(option) = crate::lines::line_only_option(args) {
        bail!("{option} does not combine with delimited records in --spec: their order comes from the -field and -key statements");
    }
    let (separator, keys) = gnu_keys(spec, terminator)?;
    let unique = args.unique || spec.duplicates == Some(false);
    let order = LineOrder::new(LineOrderConfig { keys, separator, stable: true, unique, ..LineOrderConfig::default() })
        .map_err(|e| anyhow!("--spec: {e}"))?;
    Ok(LineFormat { terminator, order, unique, mode: TextMode::Sort })
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
    use xsort_core::spec;

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
