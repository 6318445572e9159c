//! The statements of record selection: `-condition=name:C,test:(EXPR)` names a condition,
//! `-include=C` / `-omit=C` (or `-include=(EXPR)` inline) select input records by it, in the order
//! written (see [`crate::select`] for what they mean); and `-reformat=F1,F2,...`, which rewrites
//! the records as the named fields. Conditions are parsed as their statements
//! are read and resolved against the fields once the whole spec is known, so statements may come
//! in any order.

use super::statements::{parse_layout, typed_extent, DERIVED_CONTEXT};
use super::{excerpt, FieldDef, FieldType, NsortSpec, Result, SpecError, Statement};
use crate::key::coded::Coding;
use crate::select::{expr, Derivation, DerivedField, Encoding, Expr, FieldAccess, Place, Reformat, Resolver, Selection, Value, ValueKind};

/// A `-condition` as parsed: its statement, name and test.
pub(super) struct NamedCondition {
    statement: String,
    name: String,
    test: Expr,
}

/// An `-include` or `-omit` as parsed: its statement, whether it includes, and its condition.
pub(super) struct SelectStep {
    statement: String,
    include: bool,
    test: Expr,
}

/// Splits a value at its commas outside parentheses and quotes.
fn split_top(value: &str) -> Vec<&str> {
    let (mut items, mut start) = (Vec::new(), 0);
    super::words::nesting(
        value,
        |i, c| {
            if c == ',' {
                items.push(&value[start..i]);
                start = i + 1;
            }
        },
        &mut false,
    );
    items.push(&value[start..]);
    items
}

/// `-condition=name:C,test:(EXPR)`.
pub(super) fn parse_condition(st: &Statement<'_>) -> Result<NamedCondition> {
    let example = "-condition=name:big,test:(amount gt 1000)";
    let (mut name, mut test) = (None, None);
    for item in split_top(st.value(example)?) {
        let (word, value) = item.split_once([':', '=']).unwrap_or((item, ""));
        let twice = |what: &str| st.invalid(format!("the condition's {what} is given twice"));
        match word.trim().to_ascii_lowercase().as_str() {
            "name" if !value.is_empty() => {
                if name.replace(value.trim().to_string()).is_some() {
                    return Err(twice("name"));
                }
            }
            "test" if !value.is_empty() => {
                if test.replace(parse_test(st, value)?).is_some() {
                    return Err(twice("test"));
                }
            }
            w => return Err(st.invalid(format!("'{}' is not a condition option: write {example}", excerpt(w)))),
        }
    }
    match (name, test) {
        (Some(name), Some(test)) => Ok(NamedCondition { statement: st.text.to_string(), name, test }),
        _ => Err(st.invalid(format!("-condition needs a name and a test, as in {example}"))),
    }
}

/// A `-derived` as parsed: its statement, name, value, and its type, size and byte order.
pub(super) struct NamedDerived {
    statement: String,
    name: String,
    value: Value,
    layout: String,
}

/// `-derived=name:D,TYPE[,size:N][,ENDIAN],value:(EXPR)`.
pub(super) fn parse_derived(st: &Statement<'_>) -> Result<NamedDerived> {
    let example = "-derived=name:total,integer,value:(price * count)";
    let (mut name, mut value, mut layout) = (None, None, Vec::new());
    for item in split_top(st.value(example)?) {
        let (word, text) = item.split_once([':', '=']).unwrap_or((item, ""));
        let twice = |what: &str| st.invalid(format!("the derived field's {what} is given twice"));
        match word.trim().to_ascii_lowercase().as_str() {
            "name" if !text.is_empty() => {
                if name.replace(text.trim().to_string()).is_some() {
                    return Err(twice("name"));
                }
            }
            "value" if !text.is_empty() => {
                let v = expr::parse_value(text).map_err(|e| st.invalid(format!("in the value '{}': {e}", excerpt(text))))?;
                if value.replace(v).is_some() {
                    return Err(twice("value"));
                }
            }
            _ => layout.push(item),
        }
    }
    let layout = layout.join(",");
    // Checked now, so that a wrong word is reported where it is written.
    if !layout.is_empty() {
        parse_layout(st, &layout, DERIVED_CONTEXT)?;
    }
    match (name, value) {
        (Some(name), Some(value)) => Ok(NamedDerived { statement: st.text.to_string(), name, value, layout }),
        _ => Err(st.invalid(format!("-derived needs a name and a value, as in {example}"))),
    }
}

/// The spec's derived fields, resolved in the order declared (each may use the fields and the
/// derived fields before it): their definitions as fields (for keys and `-reformat`), the fields
/// as conditions read them (the declared ones, then the derived ones), and the derivation.
pub(super) fn derive(spec: &NsortSpec, derived: &[NamedDerived]) -> Result<(Vec<FieldDef>, Vec<FieldAccess>, Option<Derivation>)> {
    let mut access = field_access(spec);
    let columns = spec.record_size.is_none();
    let separator = access.iter().find_map(|f| match f.place {
        Place::Column { separator, .. } => Some(separator),
        _ => None,
    });
    let (mut defs, mut fields) = (Vec::new(), Vec::new());
    for (j, d) in derived.iter().enumerate() {
        let st = Statement::split(&d.statement)?;
        let invalid = |reason: String| invalid(&d.statement, reason);
        if access.iter().any(|f| f.name == d.name) {
            return Err(invalid(format!("a field named '{}' is already defined", excerpt(&d.name))));
        }
        let layout = if d.layout.is_empty() { super::Layout::default() } else { parse_layout(&st, &d.layout, DERIVED_CONTEXT)? };
        let (field_type, size, endian, encoding, kind) = if columns {
            // Delimited and separated records: text, and numbers written as text.
            let t = layout.field_type.unwrap_or(FieldType::Character);
            let (encoding, kind, t) = match t {
                FieldType::Character => (Encoding::Text(layout.size), ValueKind::Text, t),
                _ => (Encoding::Decimal(layout.size), ValueKind::Decimal, FieldType::Decimal),
            };
            (t, layout.size.unwrap_or(0), None, encoding, kind)
        } else {
            let (t, size, endian) = typed_extent(&st, &layout)?;
            let order = super::mapping::byte_order(endian);
            let (encoding, kind) = match t {
                FieldType::Character => (Encoding::Text(Some(size)), ValueKind::Text),
                FieldType::Decimal => (Encoding::Decimal(Some(size)), ValueKind::Decimal),
                FieldType::Integer => (Encoding::Signed(size, order), ValueKind::Signed(order)),
                FieldType::Unsigned => (Encoding::Unsigned(size, order), ValueKind::Unsigned(order)),
                FieldType::Float | FieldType::Double => (Encoding::Float(size, order), ValueKind::Float(order)),
                t @ (FieldType::Packed | FieldType::Zoned | FieldType::Month) => {
                    return Err(invalid(format!("a derived field is a number or text, not {t}: declare it integer, decimal or character")))
                }
            };
            (t, size, endian, encoding, kind)
        };
        let resolver = Resolver { fields: &access, condition: &|_| None };
        let value = resolver.resolve_value(&d.value).map_err(invalid)?;
        match (&value, kind) {
            (crate::select::Resolved::Text(_), k) if k != ValueKind::Text => {
                return Err(invalid(format!("the value of the numeric field '{}' is text", excerpt(&d.name))))
            }
            (crate::select::Resolved::Number(_), ValueKind::Text) => {
                return Err(invalid(format!(
                    "the value of the character field '{}' is a number: declare it decimal or integer",
                    excerpt(&d.name)
                )))
            }
            _ => {}
        }
        let padded_size = match encoding {
            Encoding::Text(size) => size,
            _ => None,
        };
        access.push(FieldAccess { name: d.name.clone(), place: Place::Derived(j), kind, padded_size });
        let delimiter = separator.filter(|_| columns);
        defs.push(FieldDef { name: d.name.clone(), offset: 0, size, field_type, endian, delimiter, compare: None });
        fields.push(DerivedField { name: d.name.clone(), value, encoding });
    }
    let derivation = (!fields.is_empty()).then(|| Derivation::new(access.clone(), fields));
    Ok((defs, access, derivation))
}

/// `-include=C`, `-include=(EXPR)`, and the same for `-omit`.
pub(super) fn parse_step(st: &Statement<'_>, include: bool) -> Result<SelectStep> {
    let value = st.value("-include=big or -include=(amount gt 1000)")?;
    Ok(SelectStep { statement: st.text.to_string(), include, test: parse_test(st, value)? })
}

fn parse_test(st: &Statement<'_>, text: &str) -> Result<Expr> {
    expr::parse(text).map_err(|e| st.invalid(format!("in the condition '{}': {e}", excerpt(text))))
}

/// The spec's selection, resolved against its fields; None without `-include` or `-omit`. A
/// condition that no step uses must still resolve: an error in it is an error.
pub(super) fn resolve(fields: &[FieldAccess], conditions: &[NamedCondition], steps: &[SelectStep]) -> Result<Option<Selection>> {
    for (i, c) in conditions.iter().enumerate() {
        if conditions[..i].iter().any(|d| d.name == c.name) {
            return Err(invalid(&c.statement, format!("a condition named '{}' is already defined", excerpt(&c.name))));
        }
    }
    let lookup = |name: &str| conditions.iter().find(|c| c.name == name).map(|c| &c.test);
    let resolver = Resolver { fields, condition: &lookup };
    for c in conditions {
        resolver.resolve_named(&c.name, &c.test).map_err(|e| invalid(&c.statement, e))?;
    }
    if steps.is_empty() {
        return Ok(None);
    }
    let resolved = steps
        .iter()
        .map(|s| resolver.resolve(&s.test).map(|c| (s.include, c)).map_err(|e| invalid(&s.statement, e)))
        .collect::<Result<Vec<_>>>()?;
    Ok(Some(Selection::new(fields.to_vec(), resolved)))
}

/// `-reformat=F1,F2,...` applied to a spec whose keys are resolved: the records are rewritten as
/// the named fields as they are read, so the spec's record size, fields and keys become those of
/// the rewritten records. Every key's field must be among them (Nsort's
/// `NSORT_REFORMAT_KEY_MISSING`). Returns the reformat and, for fixed-size records, the size of
/// the records read.
pub(super) fn reformat(
    spec: &mut NsortSpec,
    (statement, names): (&str, &[String]),
    derived: &[FieldDef],
    access: &[FieldAccess],
) -> Result<(Reformat, Option<usize>)> {
    let err = |reason: String| invalid(statement, reason);
    if !spec.summarize.is_empty() {
        return Err(err("-reformat and -summarize do not combine: summarize the fields, or rewrite the records".into()));
    }
    // The declared fields, then the derived ones: as `access` lists them.
    let all: Vec<FieldDef> = spec.fields.iter().chain(derived).cloned().collect();
    let mut kept: Vec<usize> = Vec::with_capacity(names.len());
    for name in names {
        let Some(i) = all.iter().position(|f| &f.name == name) else {
            return Err(err(super::unknown_field(name, &all)));
        };
        if kept.contains(&i) {
            return Err(err(format!("field '{}' is named twice", excerpt(name))));
        }
        kept.push(i);
    }
    let columns = all.iter().any(|f| f.delimiter.is_some());
    let separator = columns.then(|| {
        access
            .iter()
            .find_map(|f| match f.place {
                Place::Column { separator, .. } => Some(separator),
                _ => None,
            })
            .unwrap_or(b'\n')
    });
    for (at, &i) in kept.iter().enumerate() {
        match access[i].place {
            // A field that runs to the end of the record may hold the separator: anywhere but last
            // it would shift the columns after it.
            Place::Column { to_end: true, .. } if at + 1 < kept.len() => {
                return Err(err(format!(
                    "field '{}' runs to the end of the record, so -reformat must write it last",
                    excerpt(&all[i].name)
                )));
            }
            // Fixed places need every field's size; a derived one of delimited records has none.
            Place::Derived(_) if separator.is_none() && all[i].size == 0 => {
                return Err(err(format!(
                    "derived field '{}' needs a size (size:N) to be written among fixed-size fields",
                    excerpt(&all[i].name)
                )));
            }
            _ => {}
        }
    }
    let pieces = kept.iter().map(|&i| access[i].place).collect();
    // The rewritten records' fields: columns in the new order, or bytes packed one after another.
    let mut offset = 0;
    let fields: Vec<super::FieldDef> = kept
        .iter()
        .map(|&i| {
            let mut f = all[i].clone();
            if let Some(sep) = separator {
                f.delimiter = Some(sep);
            } else {
                f.offset = offset;
                offset += f.size;
            }
            f
        })
        .collect();
    for key in &mut spec.keys {
        let name = match (&key.field, spec.separator) {
            (Some(name), _) => name.clone(),
            // A separated record's column by number names the field declared there.
            (None, Some(_)) => match spec.fields.get(key.offset) {
                Some(f) => f.name.clone(),
                None => {
                    return Err(err(format!(
                        "the key on column {} names no declared field, which -reformat would need to keep",
                        key.offset + 1
                    )))
                }
            },
            (None, None) => {
                return Err(err("a key at a byte position does not combine with -reformat: name the key's field, as in -key=NAME".into()))
            }
        };
        let Some(new) = fields.iter().position(|f| f.name == name) else {
            return Err(err(format!(
                "the key's field '{}' is not among the -reformat fields, which the sort needs to order the records",
                excerpt(&name)
            )));
        };
        key.field = Some(name);
        key.offset = fields[new].offset;
    }
    let input_size = spec.record_size;
    if input_size.is_some() {
        spec.record_size = Some(offset);
    }
    spec.fields = fields;
    Ok((Reformat { pieces, separator }, input_size))
}

fn invalid(statement: &str, reason: String) -> SpecError {
    SpecError::Invalid { statement: statement.to_string(), reason }
}

/// The spec's fields as conditions read them: at their bytes in fixed-size records (or at fixed
/// places of delimited ones), or as columns of delimited records, split by their shared delimiter.
fn field_access(spec: &NsortSpec) -> Vec<FieldAccess> {
    let terminator = spec.record_delimiter;
    let separator = spec.fields.iter().filter_map(|f| f.delimiter).find(|&d| Some(d) != terminator).or(terminator).unwrap_or(b'\n');
    spec.fields
        .iter()
        .enumerate()
        .map(|(index, f)| {
            let order = super::mapping::byte_order(f.endian);
            let kind = match f.field_type {
                FieldType::Character => ValueKind::Text,
                FieldType::Decimal => ValueKind::Decimal,
                FieldType::Integer => ValueKind::Signed(order),
                FieldType::Unsigned => ValueKind::Unsigned(order),
                FieldType::Float | FieldType::Double => ValueKind::Float(order),
                FieldType::Packed => ValueKind::Coded(Coding::Packed),
                FieldType::Zoned => ValueKind::Coded(Coding::Zoned),
                FieldType::Month => ValueKind::Coded(Coding::Month),
            };
            let place = match f.delimiter {
                Some(d) => Place::Column { index, separator, to_end: Some(d) == terminator },
                None => Place::Bytes { offset: f.offset, size: f.size },
            };
            let padded_size = match place {
                Place::Bytes { size, .. } => Some(size),
                _ => None,
            };
            FieldAccess { name: f.name.clone(), place, kind, padded_size }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::split_top;

    #[test]
    fn commas_split_outside_parentheses_and_quotes() {
        assert_eq!(split_top("name:c,test:(a eq 'x,y' or (b eq 1, c))"), vec!["name:c", "test:(a eq 'x,y' or (b eq 1, c))"]);
        assert_eq!(split_top(r"test:(a eq 'it\'s,'),name:n"), vec![r"test:(a eq 'it\'s,')", "name:n"]);
    }
}
