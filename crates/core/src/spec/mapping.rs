//! What Nsort statements mean to the sorter: `-key` statements as key parts of fixed-size records,
//! `-summarize` fields as summed fields, and the keys of delimited records as GNU sort keys.
//!
//! Delimited records (`-format=delimiter:C`) are sorted by the text-line engine: a record is a line
//! whose terminator is the record delimiter, and the spec's fields and keys become GNU sort keys,
//! as `sort -s -t SEP -k I,I[n][r]` would take them:
//!
//! - delimited fields (`-field=name:F,delimiter:','`): field I (1-based, in `-field` order) is GNU
//!   field I with `-t` set to the shared field delimiter, so `-key=F` is `-k I,I`; a last field
//!   that ends at the record delimiter runs to the end of the record: `-k I`;
//! - fixed-position fields and `-key=offset:P,size:N` (all of a record's fields fixed): the
//!   separator is the record delimiter itself, which never occurs inside a record, so field 1 is
//!   the whole record and the key is `-k 1.(P+1),1.(P+N)`;
//! - `decimal` adds GNU's `n` (numeric: leading blanks, sign, digits, a decimal point; text that
//!   is not a number counts as zero), `descending` adds `r`;
//! - no `-key`: the whole record is the key, in byte order;
//! - records with equal keys keep their input order (`-s`: no last-resort comparison);
//!   `-noduplicates` keeps the first of each group of equal keys.
//!
//! The parser has already refused what does not map (see [`super::delimited`]).

use super::{Endian, FieldType, NsortSpec};
use crate::error::{Result, SortError};
use crate::fold::SumField;
use crate::key::{ByteOrder, KeyPart, KeyType};
use crate::order::KeyField;

/// The `-key` statements of fixed-size records as key parts; binary numbers without a byte order
/// are in the machine's order, as in Nsort.
pub fn record_keys(spec: &NsortSpec) -> Vec<KeyPart> {
    spec.keys
        .iter()
        .map(|k| {
            let order = byte_order(k.endian);
            let kind = match k.field_type {
                _ if let Some(id) = k.compare => KeyType::Custom(id),
                FieldType::Character => KeyType::Char,
                FieldType::Integer => KeyType::Signed(order),
                FieldType::Unsigned => KeyType::Unsigned(order),
                FieldType::Float | FieldType::Double => KeyType::Float(order),
                FieldType::Decimal => KeyType::Decimal,
                FieldType::Packed => KeyType::Packed,
                FieldType::Zoned => KeyType::Zoned,
                FieldType::Month => KeyType::Month,
            };
            KeyPart::typed(k.offset, k.size, kind, k.descending)
        })
        .collect()
}

/// The `-summarize` fields, summed over records with equal keys.
pub fn sum_fields(spec: &NsortSpec) -> Vec<SumField> {
    spec.summarize
        .iter()
        .map(|f| SumField {
            name: f.name.clone(),
            offset: f.offset,
            len: f.size,
            signed: f.field_type == FieldType::Integer,
            order: byte_order(f.endian),
        })
        .collect()
}

/// A field's byte order; binary numbers without one are in the machine's order, as in Nsort.
pub(super) fn byte_order(endian: Option<Endian>) -> ByteOrder {
    match endian {
        Some(Endian::Big) => ByteOrder::Big,
        Some(Endian::Little) => ByteOrder::Little,
        None => ByteOrder::NATIVE,
    }
}

/// GNU's `-t` and `-k` keys for the keys of records delimited by `terminator` (see the module
/// documentation).
pub fn line_keys(spec: &NsortSpec, terminator: u8) -> Result<(Option<u8>, Vec<KeyField>)> {
    let delimited = spec.fields.iter().any(|f| f.delimiter.is_some());
    let separator = if let Some(s) = spec.separator {
        Some(s)
    } else if delimited {
        spec.fields.iter().filter_map(|f| f.delimiter).find(|&d| d != terminator)
    } else {
        Some(terminator)
    };
    let mut keys = Vec::with_capacity(spec.keys.len());
    for key in &spec.keys {
        let mut flags = String::new();
        match key.field_type {
            FieldType::Decimal => flags.push('n'),
            FieldType::Month => flags.push('M'),
            _ => {}
        }
        if key.descending {
            flags.push('r');
        }
        let field = key.field.as_ref().and_then(|name| spec.fields.iter().position(|f| &f.name == name));
        let text = match field {
            // Separated records: `-key=position:N` is column N.
            None if spec.separator.is_some() => format!("{0},{0}{flags}", key.offset + 1),
            Some(i) if delimited => match spec.fields[i].delimiter {
                Some(d) if d == terminator => format!("{}{flags}", i + 1),
                _ => format!("{0},{0}{flags}", i + 1),
            },
            _ => format!("1.{},1.{}{flags}", key.offset + 1, key.offset + key.size),
        };
        keys.push(KeyField::parse(&text).map_err(|e| SortError::BadOption(format!("--spec: key {text}: {e}")))?);
    }
    Ok((separator, keys))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::parse_spec;

    #[test]
    fn record_keys_are_typed() {
        let spec = parse_spec(
            "-format=size:32 -field=name:a,size:4,int,big_endian -field=name:b,double,little_endian \
             -field=name:c,size:6,decimal -field=name:d,unsigned,size:2 -field=name:e,float -field=name:f,size:3 \
             -key=a,descending -key=b -key=c -key=d -key=e -key=f,desc",
        )
        .unwrap();
        let n = ByteOrder::NATIVE;
        assert_eq!(
            record_keys(&spec),
            vec![
                KeyPart::typed(0, 4, KeyType::Signed(ByteOrder::Big), true),
                KeyPart::typed(4, 8, KeyType::Float(ByteOrder::Little), false),
                KeyPart::typed(12, 6, KeyType::Decimal, false),
                KeyPart::typed(18, 2, KeyType::Unsigned(n), false),
                KeyPart::typed(20, 4, KeyType::Float(n), false),
                KeyPart::bytes(24, 3, true),
            ]
        );
    }

    /// The GNU KEYDEFs a spec maps to.
    fn mapped(text: &str) -> (Option<u8>, Vec<KeyField>) {
        let spec = parse_spec(text).unwrap();
        line_keys(&spec, spec.record_delimiter.unwrap()).unwrap()
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
        let (sep, keys) = mapped("-format=delimiter:nul -field=name:a,size:3,off:2,decimal -key=a -key=position:1,size:2,desc");
        assert_eq!(sep, Some(0));
        assert_eq!(keys, k(&["1.3,1.5n", "1.1,1.2r"]));
    }

    #[test]
    fn no_key_is_the_whole_record() {
        let (_, keys) = mapped("-format=delimiter:'\\n'");
        assert!(keys.is_empty());
    }
}
