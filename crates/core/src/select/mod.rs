//! Record selection, Nsort's `-include` and `-omit`: which input records a sort keeps, decided
//! by conditions on their fields before any sort work is spent on them.
//!
//! A [`Selection`] is a list of steps, each an include or an omit with a resolved condition
//! ([`Cond`]). A record is decided by the first step whose condition holds for it: kept by an
//! include, dropped by an omit. A record no step decides is kept when there is no include step
//! and dropped otherwise (as in Nsort and the VMS sort whose language it shares: "after the last
//! include, all records not already included or omitted are omitted").
//!
//! Conditions read fields ([`FieldAccess`]): bytes at fixed places of the record, or the columns
//! of a record split by a separator (Nsort's delimited and separated records). A field's type says
//! how it compares: `character` fields as bytes, numbers (`decimal` text, binary integers and
//! floats) as numbers. Constants take the field's type: text is padded with blanks to a fixed
//! character field's size (and must fit in it), hex constants with zero bytes; columns compare
//! as written. The inputs are filtered as they are read ([`reader`]), so the engine sees only the
//! records kept.

pub mod expr;
pub mod reader;

use std::cmp::Ordering;
use std::fmt;

pub use expr::{CmpOp, Expr, Operand};

use crate::key::ByteOrder;

/// Deepest nesting of conditions named inside conditions.
pub const MAX_CONDITION_DEPTH: usize = 32;

/// Where a field's bytes are in a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// Bytes `offset..offset + size`; a shorter record (a delimited one) gives what it holds.
    Bytes {
        /// The first byte, from 0.
        offset: usize,
        /// How many.
        size: usize,
    },
    /// Column `index` (from 0) of the record split at `separator`; `to_end`: the rest of the
    /// record from the column's start (a last field that ends at the record's end). A missing
    /// column is empty.
    Column {
        /// The column, from 0.
        index: usize,
        /// The byte between columns.
        separator: u8,
        /// Whether the field runs to the end of the record.
        to_end: bool,
    },
}

/// How a field's bytes are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    /// Bytes, compared as unsigned bytes.
    Text,
    /// A decimal number written as text (leading blanks, sign, digits, a point; text that is no
    /// number is zero, as GNU's `-n` takes it).
    Decimal,
    /// A two's-complement binary integer of 1, 2, 4 or 8 bytes.
    Signed(ByteOrder),
    /// An unsigned binary integer of 1, 2, 4 or 8 bytes.
    Unsigned(ByteOrder),
    /// An IEEE 754 float of 4 or 8 bytes.
    Float(ByteOrder),
}

/// A field conditions may name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldAccess {
    /// Its name in the statements.
    pub name: String,
    /// Where it is.
    pub place: Place,
    /// How it reads.
    pub kind: ValueKind,
}

/// A number a condition compares.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Num {
    /// A whole number.
    Int(i128),
    /// A number with a fraction, or too large for [`Num::Int`].
    Float(f64),
}

impl Num {
    fn cmp(self, other: Num) -> Option<Ordering> {
        match (self, other) {
            (Num::Int(a), Num::Int(b)) => Some(a.cmp(&b)),
            (a, b) => a.as_f64().partial_cmp(&b.as_f64()),
        }
    }

    fn as_f64(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Float(f) => f,
        }
    }

    /// A constant as written in a condition: `[+-]digits[.digits]` and nothing else.
    pub fn parse_constant(text: &str) -> Option<Num> {
        let body = text.strip_prefix(['+', '-']).unwrap_or(text);
        let (whole, fraction) = body.split_once('.').unwrap_or((body, ""));
        let digits = |d: &str| d.bytes().all(|c| c.is_ascii_digit());
        (digits(whole) && digits(fraction) && whole.len() + fraction.len() > 0).then(|| Num::parse_text(text.as_bytes()))
    }

    /// `[+-]digits[.digits]` at the start of `text` (after blanks); zero when there is none.
    pub fn parse_text(text: &[u8]) -> Num {
        let start = text.iter().position(|c| !matches!(c, b' ' | b'\t')).unwrap_or(text.len());
        let t = &text[start..];
        let mut end = usize::from(matches!(t.first(), Some(b'+' | b'-')));
        let digits_start = end;
        while t.get(end).is_some_and(u8::is_ascii_digit) {
            end += 1;
        }
        let (whole_end, mut fraction_digits) = (end, 0);
        if t.get(end) == Some(&b'.') {
            end += 1;
            while t.get(end).is_some_and(u8::is_ascii_digit) {
                end += 1;
                fraction_digits += 1;
            }
        }
        if whole_end == digits_start && fraction_digits == 0 {
            return Num::Int(0);
        }
        let s = std::str::from_utf8(&t[..end]).unwrap_or("0");
        if whole_end == end {
            if let Ok(i) = s.parse::<i128>() {
                return Num::Int(i);
            }
        }
        Num::Float(s.parse().unwrap_or(0.0))
    }
}

/// A regular expression, compared by its text.
#[derive(Clone)]
pub struct Pattern(regex::bytes::Regex);

impl PartialEq for Pattern {
    fn eq(&self, other: &Self) -> bool {
        self.0.as_str() == other.0.as_str()
    }
}

impl fmt::Debug for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Pattern({:?})", self.0.as_str())
    }
}

/// Nsort's `-reformat`: each record rewritten as the named fields, in the order named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reformat {
    /// Where each output field is in the input record.
    pub pieces: Vec<Place>,
    /// The byte written between fields (separated and delimited records), or none (fixed places:
    /// the fields' bytes concatenated).
    pub separator: Option<u8>,
}

impl Reformat {
    /// Appends `record`'s reformatted bytes (without a terminator) to `out`.
    pub fn write(&self, record: &[u8], out: &mut Vec<u8>) {
        for (i, &place) in self.pieces.iter().enumerate() {
            if let (Some(sep), true) = (self.separator, i > 0) {
                out.push(sep);
            }
            out.extend_from_slice(field_bytes(place, record));
        }
    }
}

/// A text operand: a field or constant bytes.
#[derive(Debug, Clone, PartialEq)]
pub enum TextTerm {
    /// A field's bytes.
    Field(usize),
    /// Bytes.
    Const(Vec<u8>),
}

/// A numeric operand.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum NumTerm {
    /// A field's value.
    Field(usize),
    /// A number.
    Const(Num),
}

/// A condition resolved against the fields.
#[derive(Debug, Clone, PartialEq)]
pub enum Cond {
    /// Always this.
    Const(bool),
    /// Either.
    Or(Box<Cond>, Box<Cond>),
    /// Both.
    And(Box<Cond>, Box<Cond>),
    /// Not.
    Not(Box<Cond>),
    /// Bytes compared; `padded`: the shorter side compares as if padded with blanks (fixed fields).
    Text {
        /// The left side.
        left: TextTerm,
        /// The operator.
        op: CmpOp,
        /// The right side.
        right: TextTerm,
        /// Whether blanks pad the shorter side.
        padded: bool,
    },
    /// Numbers compared.
    Number {
        /// The left side.
        left: NumTerm,
        /// The operator.
        op: CmpOp,
        /// The right side.
        right: NumTerm,
    },
    /// The regular expression found in the field's bytes.
    Matches {
        /// The field.
        field: usize,
        /// The expression.
        pattern: Pattern,
    },
}

/// What a spec's `-include` and `-omit` statements select.
#[derive(Debug, Clone, PartialEq)]
pub struct Selection {
    fields: Vec<FieldAccess>,
    /// Each step: include (true) or omit, and its condition.
    steps: Vec<(bool, Cond)>,
}

impl Selection {
    /// A selection of `steps` over `fields`.
    pub fn new(fields: Vec<FieldAccess>, steps: Vec<(bool, Cond)>) -> Selection {
        Selection { fields, steps }
    }

    /// Whether `record` (without its terminator) is kept.
    pub fn keeps(&self, record: &[u8]) -> bool {
        for (include, cond) in &self.steps {
            if self.holds(cond, record) {
                return *include;
            }
        }
        !self.steps.iter().any(|(include, _)| *include)
    }

    fn holds(&self, cond: &Cond, rec: &[u8]) -> bool {
        match cond {
            Cond::Const(b) => *b,
            Cond::Or(a, b) => self.holds(a, rec) || self.holds(b, rec),
            Cond::And(a, b) => self.holds(a, rec) && self.holds(b, rec),
            Cond::Not(a) => !self.holds(a, rec),
            Cond::Text { left, op, right, padded } => {
                let (l, r) = (self.text_term(left, rec), self.text_term(right, rec));
                op.holds(Some(compare_text(l, r, *padded)))
            }
            Cond::Number { left, op, right } => op.holds(self.num_term(*left, rec).cmp(self.num_term(*right, rec))),
            Cond::Matches { field, pattern } => pattern.0.is_match(self.bytes(*field, rec)),
        }
    }

    fn text_term<'a>(&self, t: &'a TextTerm, rec: &'a [u8]) -> &'a [u8] {
        match t {
            TextTerm::Field(i) => self.bytes(*i, rec),
            TextTerm::Const(c) => c,
        }
    }

    fn num_term(&self, t: NumTerm, rec: &[u8]) -> Num {
        match t {
            NumTerm::Field(i) => value(self.fields[i].kind, self.bytes(i, rec)),
            NumTerm::Const(n) => n,
        }
    }

    /// Field `i`'s bytes in `rec`.
    fn bytes<'a>(&self, i: usize, rec: &'a [u8]) -> &'a [u8] {
        field_bytes(self.fields[i].place, rec)
    }
}

/// The bytes at `place` in `rec`.
pub fn field_bytes(place: Place, rec: &[u8]) -> &[u8] {
    match place {
        Place::Bytes { offset, size } => &rec[offset.min(rec.len())..offset.saturating_add(size).min(rec.len())],
        Place::Column { index, separator, to_end } => {
            let mut start = 0;
            for _ in 0..index {
                match memchr::memchr(separator, &rec[start..]) {
                    Some(p) => start += p + 1,
                    None => return &[],
                }
            }
            if to_end {
                return &rec[start..];
            }
            let end = memchr::memchr(separator, &rec[start..]).map_or(rec.len(), |p| start + p);
            &rec[start..end]
        }
    }
}

/// The number a field of `kind` holds in `b`.
fn value(kind: ValueKind, b: &[u8]) -> Num {
    let ordered = |order: ByteOrder| -> [u8; 8] {
        let mut w = [0u8; 8];
        match order {
            ByteOrder::Big => w[8 - b.len()..].copy_from_slice(b),
            ByteOrder::Little => w[..b.len()].copy_from_slice(b),
        }
        w
    };
    let unsigned = |order: ByteOrder| match order {
        ByteOrder::Big => u64::from_be_bytes(ordered(order)),
        ByteOrder::Little => u64::from_le_bytes(ordered(order)),
    };
    match kind {
        ValueKind::Text | ValueKind::Decimal => Num::parse_text(b),
        _ if b.is_empty() || b.len() > 8 => Num::Int(0),
        ValueKind::Unsigned(o) => Num::Int(unsigned(o) as i128),
        ValueKind::Signed(o) => {
            let shift = 64 - 8 * b.len() as u32;
            Num::Int((((unsigned(o) << shift) as i64) >> shift) as i128)
        }
        ValueKind::Float(o) if b.len() == 4 => {
            let w: [u8; 4] = b.try_into().unwrap_or_default();
            Num::Float(f64::from(if o == ByteOrder::Big { f32::from_be_bytes(w) } else { f32::from_le_bytes(w) }))
        }
        ValueKind::Float(o) => Num::Float(f64::from_bits(unsigned(o))),
    }
}

/// Bytes compared as unsigned bytes; `padded`: the shorter as if padded with blanks.
fn compare_text(a: &[u8], b: &[u8], padded: bool) -> Ordering {
    let n = a.len().min(b.len());
    match a[..n].cmp(&b[..n]) {
        Ordering::Equal if padded => {
            let blanks = |rest: &[u8]| rest.iter().map(|&c| c.cmp(&b' ')).find(|o| o.is_ne()).unwrap_or(Ordering::Equal);
            if a.len() > n {
                blanks(&a[n..])
            } else {
                blanks(&b[n..]).reverse()
            }
        }
        Ordering::Equal => a.len().cmp(&b.len()),
        o => o,
    }
}

/// What resolving a condition needs: the fields, and the conditions by name.
pub struct Resolver<'a> {
    /// The fields, by index.
    pub fields: &'a [FieldAccess],
    /// A named condition's text, if one is so named.
    pub condition: &'a dyn Fn(&str) -> Option<&'a Expr>,
}

impl Resolver<'_> {
    /// `expr` resolved; the error names what is wrong.
    pub fn resolve(&self, expr: &Expr) -> Result<Cond, String> {
        self.resolve_at(expr, &mut Vec::new())
    }

    /// The test of the condition named `name`, resolved (a test that names `name` again, directly
    /// or through others, is an error showing the chain).
    pub fn resolve_named(&self, name: &str, test: &Expr) -> Result<Cond, String> {
        self.resolve_at(test, &mut vec![name.to_string()])
    }

    fn resolve_at(&self, expr: &Expr, names: &mut Vec<String>) -> Result<Cond, String> {
        Ok(match expr {
            Expr::Or(a, b) => Cond::Or(Box::new(self.resolve_at(a, names)?), Box::new(self.resolve_at(b, names)?)),
            Expr::And(a, b) => Cond::And(Box::new(self.resolve_at(a, names)?), Box::new(self.resolve_at(b, names)?)),
            Expr::Not(a) => Cond::Not(Box::new(self.resolve_at(a, names)?)),
            Expr::Named(name) => {
                let Some(inner) = (self.condition)(name) else {
                    return Err(match self.field(name) {
                        Ok(_) => format!("field '{name}' alone is not a condition: compare it, as in {name} ne 0"),
                        Err(_) => format!("'{name}' names no condition and no field"),
                    });
                };
                if names.contains(name) {
                    names.push(name.clone());
                    return Err(format!("condition '{name}' names itself: {}", names.join(" -> ")));
                }
                if names.len() >= MAX_CONDITION_DEPTH {
                    return Err(format!("conditions nest more than {MAX_CONDITION_DEPTH} deep"));
                }
                names.push(name.clone());
                let c = self.resolve_at(inner, names)?;
                names.pop();
                c
            }
            Expr::Matches(left, pattern) => {
                let Operand::Field(name) = left else { return Err("'matches' tests a field, as in name matches '^A'".into()) };
                let field = self.field(name)?;
                if self.fields[field].kind != ValueKind::Text {
                    return Err(format!("'matches' tests a character field; '{name}' is a number"));
                }
                let re = regex::bytes::RegexBuilder::new(pattern)
                    .unicode(false)
                    .build()
                    .map_err(|e| format!("'{pattern}' is not a regular expression: {}", e.to_string().lines().last().unwrap_or("")))?;
                Cond::Matches { field, pattern: Pattern(re) }
            }
            Expr::Compare(l, op, r) => self.compare(l, *op, r)?,
        })
    }

    fn field(&self, name: &str) -> Result<usize, String> {
        self.fields.iter().position(|f| f.name == name).ok_or_else(|| {
            let names: Vec<&str> = self.fields.iter().map(|f| f.name.as_str()).collect();
            if names.is_empty() {
                format!("no field is named '{name}' (no fields are defined)")
            } else {
                format!("no field is named '{name}'; the fields are {} (names are case-sensitive)", names.join(", "))
            }
        })
    }

    fn compare(&self, l: &Operand, op: CmpOp, r: &Operand) -> Result<Cond, String> {
        let text_field = |o: &Operand| -> Result<Option<usize>, String> {
            match o {
                Operand::Field(n) => self.field(n).map(|i| (self.fields[i].kind == ValueKind::Text).then_some(i)),
                _ => Ok(None),
            }
        };
        let is_text = |o: &Operand| -> Result<bool, String> {
            Ok(match o {
                Operand::Field(_) => text_field(o)?.is_some(),
                Operand::Text(_) | Operand::Hex(_) => true,
                Operand::Number(_) => false,
            })
        };
        match (is_text(l)?, is_text(r)?) {
            (true, true) => {
                let fixed = |o: &Operand| -> Result<Option<usize>, String> {
                    Ok(text_field(o)?.and_then(|i| match self.fields[i].place {
                        Place::Bytes { size, .. } => Some(size),
                        Place::Column { .. } => None,
                    }))
                };
                let size = fixed(l)?.or(fixed(r)?);
                let both_fixed = fixed(l)?.is_some() && fixed(r)?.is_some();
                let (left, right) = (self.text_term(l, size)?, self.text_term(r, size)?);
                if let (TextTerm::Const(a), TextTerm::Const(b)) = (&left, &right) {
                    return Ok(Cond::Const(op.holds(Some(compare_text(a, b, false)))));
                }
                Ok(Cond::Text { left, op, right, padded: both_fixed })
            }
            (false, false) => {
                let (left, right) = (self.num_term(l)?, self.num_term(r)?);
                if let (NumTerm::Const(a), NumTerm::Const(b)) = (left, right) {
                    return Ok(Cond::Const(op.holds(a.cmp(b))));
                }
                Ok(Cond::Number { left, op, right })
            }
            _ => Err("a number is compared with text: compare character fields with 'text' or x'hex', numeric fields with numbers".into()),
        }
    }

    /// A text operand; constants padded to `size` (a fixed field's), which they must fit.
    fn text_term(&self, o: &Operand, size: Option<usize>) -> Result<TextTerm, String> {
        let (bytes, pad) = match o {
            Operand::Field(n) => return self.field(n).map(TextTerm::Field),
            Operand::Text(t) => (t, b' '),
            Operand::Hex(h) => (h, 0),
            Operand::Number(_) => unreachable!("numbers are not text operands"),
        };
        let mut bytes = bytes.clone();
        if let Some(size) = size {
            if bytes.len() > size {
                return Err(format!(
                    "the constant '{}' is {} bytes, longer than the {size}-byte field it is compared with",
                    String::from_utf8_lossy(&bytes),
                    bytes.len()
                ));
            }
            bytes.resize(size, pad);
        }
        Ok(TextTerm::Const(bytes))
    }

    fn num_term(&self, o: &Operand) -> Result<NumTerm, String> {
        match o {
            Operand::Field(n) => self.field(n).map(NumTerm::Field),
            Operand::Number(text) => Num::parse_constant(text).map(NumTerm::Const).ok_or_else(|| format!("'{text}' is not a number")),
            _ => unreachable!("text is not a numeric operand"),
        }
    }
}

#[cfg(test)]
mod tests;
