//! Nsort's delimited (variable-length) records: `-format=delimiter:C` ends each record at the
//! byte C, and `-field=name:NAME,delimiter:C` ends a field at the byte C. This module holds the
//! pieces of that grammar: the ways to write one character, the quote-aware split of a statement's
//! options (so that `delimiter:','` is one option), and the checks that a delimited layout can be
//! sorted as text lines: the CLI maps it onto GNU sort's `-t SEP -k N,N` keys.
//!
//! # Characters
//!
//! A delimiter is one byte, written as
//! - the character itself, quoted or not: `','` `'|'` `';'` `|` (a comma must be quoted, since
//!   commas separate options; whitespace cannot be written literally, as it separates statements);
//! - a C escape, quoted or not: `'\n'` `'\t'` `'\r'` `'\0'` `'\\'` `'\''` `'\f'` `'\v'` `'\a'`
//!   `'\b'`, `'\xHH'` (hex) or `'\NNN'` (octal);
//! - a name: `newline`, `tab`, `space`, `comma`, `nul` (also `null`), case-insensitive.
//!
//! # What maps onto text lines
//!
//! Field i of a delimited record is GNU sort's field i with `-t` set to the field delimiter, so
//! every delimited field must share one delimiter; the last field may instead end at the record's
//! delimiter (it then runs to the end of the record). Alternatively, the fields (and positional
//! keys) of a delimited record may all sit at fixed byte positions from the record's start. Fields
//! are text: character, decimal or month. Mixing delimited and fixed-position fields, binary numbers, and
//! `-summarize` are refused with the statement quoted.
//!
//! The statement words (`delimiter` in `-format` and `-field`, `maximum_size`) follow Nsort's
//! spelling as remembered; the Nsort User Guide's sections on `-format` and `-field` were not
//! available to check them against, so `record_delimiter` is accepted as well.

use super::{excerpt, FieldDef, FieldType, Layout, NsortSpec, SpecError, Statement};

type Result<T, E = SpecError> = std::result::Result<T, E>;

/// The names a delimiter can be given by.
const NAMES: &[(&str, u8)] = &[("newline", b'\n'), ("tab", b'\t'), ("space", b' '), ("comma", b','), ("nul", 0), ("null", 0)];

/// Parses one delimiter character as written (see the module documentation); the error says why,
/// for the caller to put in a message quoting the statement.
pub(super) fn parse_char(text: &str) -> Result<u8, String> {
    let bad = || {
        format!(
            "'{}' is not a delimiter: write one character (',' or |), a C escape \
             ('\\n', '\\t', '\\x1f', '\\037') or a name (newline, tab, space, comma, nul)",
            excerpt(text)
        )
    };
    let quoted = text.len() >= 2 && text.starts_with('\'') && text.ends_with('\'');
    let inner = if quoted { &text[1..text.len() - 1] } else { text };
    if !quoted {
        if text.starts_with('\'') {
            return Err(format!(
                "'{}' opens a quote that does not close (whitespace ends a statement: \
                 write a space as space or '\\x20')",
                excerpt(text)
            ));
        }
        if let Some(&(_, b)) = NAMES.iter().find(|(n, _)| n.eq_ignore_ascii_case(text)) {
            return Ok(b);
        }
    }
    let Some(esc) = inner.strip_prefix('\\') else {
        return match inner.as_bytes() {
            [b] => Ok(*b),
            [] => Err("an empty quote is not a delimiter: write one character".into()),
            _ => Err(bad()),
        };
    };
    let simple = match esc {
        "n" => Some(b'\n'),
        "t" => Some(b'\t'),
        "r" => Some(b'\r'),
        "f" => Some(0x0c),
        "v" => Some(0x0b),
        "a" => Some(0x07),
        "b" => Some(0x08),
        "\\" => Some(b'\\'),
        "'" => Some(b'\''),
        _ => None,
    };
    if let Some(b) = simple {
        return Ok(b);
    }
    let (digits, radix) = match esc.strip_prefix(['x', 'X']) {
        Some(hex) if (1..=2).contains(&hex.len()) => (hex, 16),
        Some(_) => return Err(bad()),
        None if (1..=3).contains(&esc.len()) => (esc, 8),
        None => return Err(bad()),
    };
    match u32::from_str_radix(digits, radix) {
        Ok(v) if v <= 255 && digits.bytes().all(|b| b.is_ascii_hexdigit()) => Ok(v as u8),
        _ => Err(bad()),
    }
}

/// The type of a delimited field, which has no offset or size and holds text.
pub(super) fn field_type(st: &Statement<'_>, l: &Layout) -> Result<FieldType> {
    if l.offset.is_some() {
        return Err(st.invalid("a delimited field starts where the previous field ends, so it takes no offset"));
    }
    if l.size.is_some() {
        return Err(st.invalid("a field ends after its size or at its delimiter, not both"));
    }
    let t = l.field_type.unwrap_or(FieldType::Character);
    if !t.is_text() || l.endian.is_some() {
        return Err(st.invalid(format!(
            "a delimited field is text: character, decimal or month, not {}",
            if t.is_text() { "a byte order" } else { t.as_str() }
        )));
    }
    Ok(t)
}

/// A delimiter for messages, in the form `parse_char` reads back: `','`, `'\n'`, `'\x1f'`.
pub fn display_char(b: u8) -> String {
    match b {
        b'\n' => "'\\n'".into(),
        b'\t' => "'\\t'".into(),
        b'\r' => "'\\r'".into(),
        0 => "'\\0'".into(),
        b'\\' => "'\\\\'".into(),
        b'\'' => "'\\''".into(),
        0x20..=0x7e => format!("'{}'", b as char),
        _ => format!("'\\x{b:02x}'"),
    }
}

/// Splits a statement's value at its commas, except inside a quoted character: a `'` right after
/// an option's `:` or `=` opens a quote that the next unescaped `'` closes, so `delimiter:','`
/// stays one option and a name like `O'Brien` is taken as written.
pub(super) fn split_items(value: &str) -> Vec<&str> {
    let bytes = value.as_bytes();
    let mut items = Vec::new();
    let (mut start, mut i, mut quoted) = (0, 0, false);
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if quoted => i += 1,
            b'\'' if quoted => quoted = false,
            b'\'' if i > start && matches!(bytes[i - 1], b':' | b'=') => quoted = true,
            b',' if !quoted => {
                items.push(&value[start..i]);
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    items.push(&value[start..]);
    items
}

/// Checks a whole spec's delimited layout once every statement is known: `fields` and `keys` are
/// the statement texts of `spec.fields` and `spec.keys`, `summarize` the first `-summarize`.
pub(super) fn check(spec: &NsortSpec, fields: &[String], keys: &[String], summarize: Option<&str>) -> Result<()> {
    let all: Vec<(&FieldDef, &str)> = spec.fields.iter().zip(fields.iter().map(String::as_str)).collect();
    let Some(rd) = spec.record_delimiter else {
        return no_delimited_field(&all);
    };
    record_options(spec, summarize)?;
    let delimited: Vec<(&FieldDef, &str)> = all.iter().copied().filter(|(f, _)| f.delimiter.is_some()).collect();
    one_kind_of_field(&all, &delimited)?;
    one_separator(&delimited, rd)?;
    text_types(spec, &all, keys, !delimited.is_empty())
}

/// The error of `statement`, for `reason`.
fn invalid(statement: &str, reason: String) -> SpecError {
    SpecError::Invalid { statement: statement.to_string(), reason }
}

/// Fixed-size records: no field ends at a delimiter.
fn no_delimited_field(all: &[(&FieldDef, &str)]) -> Result<()> {
    match all.iter().find(|(f, _)| f.delimiter.is_some()) {
        Some((f, st)) => Err(invalid(
            st,
            format!(
                "field '{}' ends at a delimiter, so the records must be delimited too: \
                 give -format=delimiter:'\\n' (or the records' delimiter)",
                excerpt(&f.name)
            ),
        )),
        None => Ok(()),
    }
}

/// Delimited records: none of the options that only fixed-size records have.
fn record_options(spec: &NsortSpec, summarize: Option<&str>) -> Result<()> {
    if spec.touch == Some(true) {
        return Err(invalid("-touch", "-touch pre-faults the buffer of fixed-size records; delimited records have none to touch".into()));
    }
    if let Some(f) = spec.in_files.iter().find(|f| f.direct == Some(true) || f.transfer_size.is_some() || f.count.is_some()) {
        return Err(invalid(
            &format!("-in_file={}", f.path.display()),
            "-in_file's direct, transfer_size and count apply to fixed-size records; delimited \
             records are read through the page cache"
                .into(),
        ));
    }
    if let Some(st) = summarize {
        return Err(invalid(
            st,
            "-summarize sums binary integer fields of fixed-size records (-format=size:N), \
             not of delimited ones"
                .into(),
        ));
    }
    Ok(())
}

/// The fields of a delimited record are all delimited or all at fixed positions.
fn one_kind_of_field(all: &[(&FieldDef, &str)], delimited: &[(&FieldDef, &str)]) -> Result<()> {
    let (Some((first, first_st)), Some((f, st))) = (delimited.first(), all.iter().find(|(f, _)| f.delimiter.is_none())) else {
        return Ok(());
    };
    Err(invalid(
        st,
        format!(
            "field '{}' has a fixed position but field '{}' ('{}') ends at a \
             delimiter; xsort sorts delimited records as text lines with GNU sort's \
             fields, so the fields of a record must all be delimited or all at fixed \
             positions",
            excerpt(&f.name),
            excerpt(&first.name),
            excerpt(first_st)
        ),
    ))
}

/// Delimited fields share one separator (GNU sort's `-t`), but a last one that ends at the record
/// delimiter `rd`.
fn one_separator(delimited: &[(&FieldDef, &str)], rd: u8) -> Result<()> {
    let mut separator: Option<(u8, &str)> = None;
    for (i, (f, st)) in delimited.iter().enumerate() {
        let d = f.delimiter.unwrap_or(rd);
        if d == rd {
            if i + 1 != delimited.len() {
                return Err(invalid(
                    st,
                    format!(
                        "field '{}' ends at the record delimiter {}, so it runs to the end of \
                         the record and must be the last -field",
                        excerpt(&f.name),
                        display_char(rd)
                    ),
                ));
            }
            continue;
        }
        match separator {
            None => separator = Some((d, st)),
            Some((s, first)) if s != d => {
                return Err(invalid(
                    st,
                    format!(
                        "field '{}' ends at {} but '{}' ends at {}; xsort sorts delimited \
                         records with GNU sort's fields, which have one separator, so every \
                         delimited field (but a last one ending at the record delimiter) must \
                         use the same delimiter",
                        excerpt(&f.name),
                        display_char(d),
                        excerpt(first),
                        display_char(s)
                    ),
                ));
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// Fields and keys of delimited records are text, and keys name fields when fields are delimited.
fn text_types(spec: &NsortSpec, all: &[(&FieldDef, &str)], keys: &[String], delimited: bool) -> Result<()> {
    if let Some((f, st)) = all.iter().find(|(f, _)| !f.field_type.is_text()) {
        return Err(invalid(st, text_only(f.field_type)));
    }
    for (k, st) in spec.keys.iter().zip(keys) {
        // A key of separated records by position is a column.
        if k.field.is_some() || spec.separator.is_some() {
            continue;
        }
        if delimited {
            return Err(invalid(
                st,
                "a key at a byte position cannot be combined with delimited fields: \
                 name a -field, as in -key=NAME"
                    .into(),
            ));
        }
        if !k.field_type.is_text() {
            return Err(invalid(st, text_only(k.field_type)));
        }
    }
    Ok(())
}

fn text_only(t: FieldType) -> String {
    format!(
        "delimited records are sorted as text, so their fields and keys are character, decimal or \
         month, not {t}"
    )
}
