//! The parsers of single statements' values: `-format`, `-field` and `-key` layouts, and the
//! file statements with their I/O options, plus the type and size rules they share. Each takes a
//! [`Statement`] already split by the caller and returns what it said; the [`super::Builder`]
//! checks statements against each other once the whole spec is read.

use super::words::{canonical, or_list, FileWord, FormatWord, LayoutWord, FILE_WORDS, FORMAT_WORDS, LAYOUT_WORDS};
use super::{bytes, delimited, excerpt, Endian, FieldType, FileSpec, KeyDef, Layout, PendingKey, Result, SpecError, Statement};
use crate::size;

/// Stores `v` in `slot` unless it already holds a different value: a
/// repeated option is harmless, a contradictory one is a mistake.
fn set_once<T: PartialEq>(stmt: &Statement<'_>, slot: &mut Option<T>, v: T, label: &str) -> Result<()> {
    match slot {
        Some(old) if *old != v => Err(stmt.invalid(format!("{label} is given twice, with different values"))),
        _ => {
            *slot = Some(v);
            Ok(())
        }
    }
}

/// Parses `-format`: (record size, record delimiter, maximum size), exactly one of the first two.
pub(super) fn parse_format(st: &Statement<'_>) -> Result<Format> {
    let (mut size, mut delimiter, mut maximum, mut separator) = (None, None, None, None);
    for item in st.items(st.value("-format=size:100")?)? {
        let text = item.value.unwrap_or_default();
        match st.word(FORMAT_WORDS, "format option", &item, |_| true)? {
            FormatWord::RecordSize => {
                let n = st.positive("the record size", text)?;
                set_once(st, &mut size, n, "the record size")?;
            }
            FormatWord::Delimiter => {
                let d = delimited::parse_char(text).map_err(|e| st.invalid(e))?;
                set_once(st, &mut delimiter, d, "the record delimiter")?;
            }
            FormatWord::MaximumSize => {
                let n = st.positive("the maximum size", text)?;
                set_once(st, &mut maximum, n, "the maximum size")?;
            }
            FormatWord::Separator => {
                let d = delimited::parse_char(text).map_err(|e| st.invalid(e))?;
                set_once(st, &mut separator, d, "the separator")?;
            }
        }
    }
    // Separated records are lines unless a delimiter says otherwise.
    if separator.is_some() {
        if size.is_some() {
            return Err(st.invalid("separated records end at a delimiter (a newline unless given), not at a size"));
        }
        if delimiter == separator {
            return Err(st.invalid("the separator between fields cannot be the delimiter that ends a record"));
        }
        delimiter = delimiter.or(Some(b'\n'));
    }
    let format = Format { size, delimiter, maximum, separator };
    match (size, delimiter, maximum) {
        (Some(_), Some(_), _) => Err(st.invalid("a record has a fixed size or ends at a delimiter, not both")),
        (Some(_), None, Some(_)) => Err(st.invalid("maximum_size applies to delimited records; fixed-size records have size:N")),
        // Nsort's lines: `-format=maximum_size:N` alone is records ended by a newline.
        (None, None, Some(_)) => Ok(Format { delimiter: Some(b'\n'), ..format }),
        (None, None, None) => Err(st.invalid(
            "-format needs the record size or delimiter, as in -format=size:100 \
             or -format=delimiter:'\\n'",
        )),
        _ => Ok(format),
    }
}

/// What `-format` said.
pub(super) struct Format {
    pub(super) size: Option<usize>,
    pub(super) delimiter: Option<u8>,
    pub(super) maximum: Option<usize>,
    pub(super) separator: Option<u8>,
}

/// Which layout words a statement accepts.
#[derive(Clone, Copy)]
pub(super) struct LayoutContext {
    what: &'static str,
    allows: fn(LayoutWord) -> bool,
}

/// A derived field's type, size and byte order (its name and value are items of their own).
pub(super) const DERIVED_CONTEXT: LayoutContext =
    LayoutContext { what: "derived field option", allows: |w| matches!(w, LayoutWord::Type(_) | LayoutWord::Endian(_) | LayoutWord::Size) };
pub(super) const FIELD_CONTEXT: LayoutContext = LayoutContext { what: "field option", allows: |w| !matches!(w, LayoutWord::Descending(_)) };
/// After `-key=NAME,` only a direction can follow, so `d` means descending.
const NAMED_KEY_CONTEXT: LayoutContext = LayoutContext { what: "key option", allows: |w| matches!(w, LayoutWord::Descending(_)) };
/// Keys give delimiters only through the fields they name.
const KEY_CONTEXT: LayoutContext =
    LayoutContext { what: "key option", allows: |w| !matches!(w, LayoutWord::Delimiter | LayoutWord::MaximumSize) };
/// What a derived field, a separated field and a delimited field do not take.
pub(super) fn refuse_compare(st: &Statement<'_>, l: &Layout) -> Result<()> {
    match l.compare {
        Some(_) => Err(st.invalid("compare=NAME applies to the fields and keys of fixed-size records (-format=size:N)")),
        None => Ok(()),
    }
}

/// Parses the items of a `-field` or `-key` value into a [`Layout`].
pub(super) fn parse_layout(st: &Statement<'_>, value: &str, ctx: LayoutContext) -> Result<Layout> {
    let table: Vec<(&'static str, LayoutWord)> = LAYOUT_WORDS.iter().copied().filter(|&(_, w)| (ctx.allows)(w)).collect();
    let mut l = Layout::default();
    for item in st.items(value)? {
        let word = st.word(&table, ctx.what, &item, LayoutWord::takes_value)?;
        apply_layout_word(st, &mut l, word, item.value.unwrap_or_default())?;
    }
    Ok(l)
}

fn apply_layout_word(st: &Statement<'_>, l: &mut Layout, word: LayoutWord, text: &str) -> Result<()> {
    match word {
        LayoutWord::Name => set_once(st, &mut l.name, text.to_string(), "the name"),
        LayoutWord::Offset => set_once(st, &mut l.offset, st.number("the offset", text)?, "the offset"),
        // Nsort's position counts from 1 (its NSORT_POSITION_POSITIVE refuses 0).
        LayoutWord::Position => {
            let position = st.number("the position", text)?;
            if position == 0 {
                return Err(st.invalid("position:N counts bytes from 1, but N was zero (offset:N counts from 0)"));
            }
            set_once(st, &mut l.offset, position - 1, "the offset")
        }
        LayoutWord::Size => set_once(st, &mut l.size, st.positive("the size", text)?, "the size"),
        LayoutWord::Type(t) => set_once(st, &mut l.field_type, t, "the type"),
        LayoutWord::Endian(e) => set_once(st, &mut l.endian, e, "the byte order"),
        LayoutWord::Descending(d) => set_once(st, &mut l.descending, d, "the direction"),
        LayoutWord::Delimiter => {
            let d = delimited::parse_char(text).map_err(|e| st.invalid(e))?;
            set_once(st, &mut l.delimiter, d, "the delimiter")
        }
        LayoutWord::MaximumSize => {
            let n = st.positive("the maximum size", text)?;
            set_once(st, &mut l.maximum_size, n, "the maximum size")
        }
        LayoutWord::Compare => {
            let Some(id) = crate::key::custom::declared_comparison(text) else {
                return Err(SpecError::UndeclaredComparison { statement: st.text.to_string(), name: text.to_string() });
            };
            set_once(st, &mut l.compare, id, "the comparison function")
        }
    }
}

/// Parses a `-key` value: `NAME[,ascending|descending]` or options.
pub(super) fn parse_key(st: &Statement<'_>, separated: bool) -> Result<PendingKey> {
    let value = st.value("-key=key or -key=position:1,size:10")?;
    let (first, rest) = match value.split_once(',') {
        Some((f, r)) => (f, Some(r)),
        None => (value, None),
    };
    // A bare first word names a field unless options with values follow,
    // so that `-key=descending,position:1,size:4` stays positional.
    let named = !first.contains(['=', ':']) && !rest.unwrap_or_default().contains(['=', ':']);
    let mut l = match rest {
        Some(r) if named => parse_layout(st, r, NAMED_KEY_CONTEXT)?,
        _ if named => Layout::default(),
        _ => parse_layout(st, value, KEY_CONTEXT)?,
    };
    if named {
        set_once(st, &mut l.name, first.to_string(), "the name")?;
    }
    let statement = st.text.to_string();
    let descending = l.descending.unwrap_or(false);
    match l.name.take() {
        Some(name) => {
            check_named_key(st, &l)?;
            Ok(PendingKey::Named { statement, name, descending })
        }
        None if separated => Ok(PendingKey::Positional { statement, key: separated_key(st, &l, descending)? }),
        None => Ok(PendingKey::Positional { statement, key: positional_key(st, &l, descending)? }),
    }
}

/// The type of a field (or key) of separated records: text, and numbers written as text.
pub(super) fn separated_type(st: &Statement<'_>, l: &Layout) -> Result<FieldType> {
    if l.size.is_some() || l.delimiter.is_some() || l.endian.is_some() {
        return Err(st.invalid(
            "the fields of separated records are their columns, in the order declared: \
             they take a name, a type and maximum_size, not a size, delimiter or byte order",
        ));
    }
    refuse_compare(st, l)?;
    match l.field_type.unwrap_or(FieldType::Character) {
        FieldType::Character => Ok(FieldType::Character),
        FieldType::Decimal | FieldType::Integer | FieldType::Unsigned => Ok(FieldType::Decimal),
        FieldType::Month => Ok(FieldType::Month),
        t => Err(st.invalid(format!("separated fields are text: character, or numbers written as decimal or integer, not {t}"))),
    }
}

/// `-key=position:N` of separated records: column N (from 1), compared as its type says.
fn separated_key(st: &Statement<'_>, l: &Layout, descending: bool) -> Result<KeyDef> {
    let Some(column) = l.offset else {
        return Err(st.invalid("-key needs a field name or a field number, as in -key=position:3"));
    };
    let field_type = separated_type(st, l)?;
    Ok(KeyDef { field: None, offset: column, size: 0, field_type, endian: None, descending, compare: None })
}

/// A key naming a field takes its layout from the field and nothing else.
fn check_named_key(st: &Statement<'_>, l: &Layout) -> Result<()> {
    if l.offset.is_some() || l.size.is_some() || l.field_type.is_some() || l.endian.is_some() {
        return Err(st.invalid(
            "a key that names a field takes its position, size and type from the field; \
             give either a field name or position and size",
        ));
    }
    Ok(())
}

fn positional_key(st: &Statement<'_>, l: &Layout, descending: bool) -> Result<KeyDef> {
    let Some(offset) = l.offset else {
        return Err(st.invalid("-key needs a field name or a position, as in -key=position:1,size:10"));
    };
    let (field_type, size, endian) = typed_extent(st, l)?;
    Ok(KeyDef { field: None, offset, size, field_type, endian, descending, compare: l.compare })
}

/// Applies type defaults to a layout and checks size and byte order
/// against the type: returns (type, size, endian).
pub(super) fn typed_extent(st: &Statement<'_>, l: &Layout) -> Result<(FieldType, usize, Option<Endian>)> {
    let t = l.field_type.unwrap_or(FieldType::Character);
    if l.endian.is_some() && !t.is_binary_number() {
        return Err(st.invalid(format!(
            "a byte order applies only to binary numbers \
             (integer, unsigned, float, double), not {t}"
        )));
    }
    let size = type_size(t, l.size).map_err(|reason| st.invalid(reason))?;
    Ok((t, size, l.endian))
}

/// The size of a value of type `t`: the given one if the type allows it,
/// else the type's default; character and decimal have no default.
fn type_size(t: FieldType, given: Option<usize>) -> Result<usize, String> {
    let (default, allowed): (Option<usize>, &[usize]) = match t {
        FieldType::Character | FieldType::Decimal | FieldType::Packed | FieldType::Zoned | FieldType::Month => (None, &[]),
        FieldType::Integer | FieldType::Unsigned => (Some(4), &[1, 2, 4, 8]),
        FieldType::Float => (Some(4), &[4]),
        FieldType::Double => (Some(8), &[8]),
    };
    match (given, default) {
        (None, Some(d)) => Ok(d),
        (None, None) => Err(format!("a {t} field or key needs a size, as in size:10")),
        (Some(n), _) if allowed.is_empty() || allowed.contains(&n) => Ok(n),
        (Some(n), _) => {
            let list: Vec<String> = allowed.iter().map(usize::to_string).collect();
            Err(format!("{t} values are {} bytes, not {n}", or_list(&list)))
        }
    }
}

/// Which file statement a file's options belong to.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum FileRole {
    Input,
    Temp,
    Output,
}

/// Parses `PATH[,OPTS]` of a file statement in `role`; for `-in_file`,
/// `preallocate` and `sync` mean nothing.
pub(super) fn parse_file(st: &Statement<'_>, role: FileRole) -> Result<FileSpec> {
    let value = st.value(&format!("{}=/path", st.name()))?;
    let (path, opts) = match value.split_once(',') {
        Some((p, o)) => (p, Some(o)),
        None => (value, None),
    };
    if path.is_empty() {
        return Err(st.invalid(format!("{} needs a path before the options", st.name())));
    }
    let mut f = FileSpec {
        path: bytes::path(path),
        direct: None,
        transfer_size: None,
        count: None,
        preallocate: false,
        sync: false,
        append: false,
    };
    let items = match opts {
        Some(o) => st.items(o)?,
        None => Vec::new(),
    };
    for item in &items {
        let word = st.word(FILE_WORDS, "file option", item, FileWord::takes_value)?;
        apply_file_word(st, &mut f, word, item.value.unwrap_or_default(), role)?;
    }
    Ok(f)
}

fn apply_file_word(st: &Statement<'_>, f: &mut FileSpec, word: FileWord, text: &str, role: FileRole) -> Result<()> {
    match word {
        FileWord::Direct(d) => set_once(st, &mut f.direct, d, "direct or buffered")?,
        FileWord::TransferSize => set_once(st, &mut f.transfer_size, transfer_size(st, text)?, "transfer_size")?,
        FileWord::Count => set_once(st, &mut f.count, st.positive("count", text)?, "count")?,
        FileWord::Append if role != FileRole::Output => {
            return Err(st.invalid("'append' applies only to -out_file"));
        }
        FileWord::Append => f.append = true,
        FileWord::Preallocate | FileWord::Sync if role == FileRole::Input => {
            let w = canonical(FILE_WORDS, word);
            return Err(st.invalid(format!("'{w}' applies only to -out_file and -temp_file")));
        }
        FileWord::Preallocate => f.preallocate = true,
        FileWord::Sync => f.sync = true,
    }
    Ok(())
}

/// Direct I/O needs transfers aligned to the device's blocks; 4 KiB
/// covers every common device, so require multiples of it.
fn transfer_size(st: &Statement<'_>, text: &str) -> Result<u64> {
    let n = size::parse_byte_count(text).map_err(|e| st.size_error(e))?;
    if n < 4096 || n % 4096 != 0 {
        return Err(st.invalid(format!(
            "transfer_size must be at least 4 KiB and a multiple of 4 KiB (4096 bytes) \
             to keep direct I/O aligned, not {} ({})",
            excerpt(text),
            size::format_bytes(n)
        )));
    }
    Ok(n)
}
