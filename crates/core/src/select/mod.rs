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

pub mod derive;
pub mod expr;
pub mod reader;
mod resolve;

use std::cmp::Ordering;
use std::fmt;

pub use derive::{Derivation, DerivedField, Encoding};
pub use expr::{ArithOp, CmpOp, Expr, Operand, Value};
pub use resolve::{Resolved, Resolver};

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
    /// Derived field `i`'s value (see [`Derivation`]).
    Derived(usize),
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
    /// Packed or zoned decimal, or a month name (its number; not a number reads as 0).
    Coded(crate::key::coded::Coding),
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
    /// The size of a fixed-size character field (at a fixed place, or derived with a size), which
    /// text constants compared with it are padded to; None for a column.
    pub padded_size: Option<usize>,
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
    /// The order of two numbers; None when one is not a number (NaN).
    pub fn order(self, other: Num) -> Option<Ordering> {
        match (self, other) {
            (Num::Int(a), Num::Int(b)) => Some(a.cmp(&b)),
            (a, b) => a.as_f64().partial_cmp(&b.as_f64()),
        }
    }

    /// The number as a float.
    pub fn as_f64(self) -> f64 {
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
    /// Appends `rec`'s reformatted bytes (without a terminator) to `out`.
    pub fn write(&self, rec: Rec<'_>, out: &mut Vec<u8>) {
        for (i, &place) in self.pieces.iter().enumerate() {
            if let (Some(sep), true) = (self.separator, i > 0) {
                out.push(sep);
            }
            out.extend_from_slice(rec.at(place));
        }
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

/// A text value: a field's bytes, constant bytes, or a choice between two.
#[derive(Debug, Clone, PartialEq)]
pub enum TextExpr {
    /// A field's bytes.
    Field(usize),
    /// Bytes.
    Const(Vec<u8>),
    /// The first when the condition holds, else the second.
    If(Box<Cond>, Box<TextExpr>, Box<TextExpr>),
}

/// A numeric value.
#[derive(Debug, Clone, PartialEq)]
pub enum NumExpr {
    /// A field's value.
    Field(usize),
    /// A number.
    Const(Num),
    /// Negated.
    Neg(Box<NumExpr>),
    /// Two values combined.
    Arith(Box<NumExpr>, ArithOp, Box<NumExpr>),
    /// The first when the condition holds, else the second.
    If(Box<Cond>, Box<NumExpr>, Box<NumExpr>),
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
        left: TextExpr,
        /// The operator.
        op: CmpOp,
        /// The right side.
        right: TextExpr,
        /// Whether blanks pad the shorter side.
        padded: bool,
    },
    /// Numbers compared.
    Number {
        /// The left side.
        left: NumExpr,
        /// The operator.
        op: CmpOp,
        /// The right side.
        right: NumExpr,
    },
    /// The regular expression found in the field's bytes.
    Matches {
        /// The field.
        field: usize,
        /// The expression.
        pattern: Pattern,
    },
}

/// A record as conditions and values read it: its bytes and its derived fields' values.
#[derive(Clone, Copy)]
pub struct Rec<'a> {
    /// The record, without its terminator.
    pub bytes: &'a [u8],
    /// The values of the derived fields computed so far.
    pub derived: &'a [Vec<u8>],
}

impl<'a> Rec<'a> {
    /// A record without derived fields.
    pub fn plain(bytes: &'a [u8]) -> Self {
        Rec { bytes, derived: &[] }
    }

    /// The bytes at `place`.
    pub fn at(&self, place: Place) -> &'a [u8] {
        match place {
            Place::Derived(i) => self.derived.get(i).map_or(&[], Vec::as_slice),
            p => field_bytes(p, self.bytes),
        }
    }
}

/// Conditions and values evaluated on one record.
pub(crate) struct Eval<'a> {
    pub(crate) fields: &'a [FieldAccess],
    pub(crate) rec: Rec<'a>,
}

impl<'a> Eval<'a> {
    pub(crate) fn holds(&self, cond: &Cond) -> bool {
        match cond {
            Cond::Const(b) => *b,
            Cond::Or(a, b) => self.holds(a) || self.holds(b),
            Cond::And(a, b) => self.holds(a) && self.holds(b),
            Cond::Not(a) => !self.holds(a),
            Cond::Text { left, op, right, padded } => op.holds(Some(compare_text(self.text(left), self.text(right), *padded))),
            Cond::Number { left, op, right } => op.holds(self.num(left).order(self.num(right))),
            Cond::Matches { field, pattern } => pattern.0.is_match(self.bytes(*field)),
        }
    }

    pub(crate) fn text<'e>(&self, t: &'e TextExpr) -> &'e [u8]
    where
        'a: 'e,
    {
        match t {
            TextExpr::Field(i) => self.bytes(*i),
            TextExpr::Const(c) => c,
            TextExpr::If(c, a, b) => self.text(if self.holds(c) { a } else { b }),
        }
    }

    /// A number; arithmetic on whole numbers stays whole (a quotient rounded toward zero) until it
    /// overflows, then goes on in floating point; a division by zero is not a number (NaN).
    pub(crate) fn num(&self, e: &NumExpr) -> Num {
        match e {
            NumExpr::Field(i) => value(self.fields[*i].kind, self.bytes(*i)),
            NumExpr::Const(n) => *n,
            NumExpr::Neg(a) => match self.num(a) {
                Num::Int(i) => i.checked_neg().map_or(Num::Float(-(i as f64)), Num::Int),
                Num::Float(f) => Num::Float(-f),
            },
            NumExpr::Arith(a, op, b) => arith(self.num(a), *op, self.num(b)),
            NumExpr::If(c, a, b) => self.num(if self.holds(c) { a } else { b }),
        }
    }

    /// Field `i`'s bytes.
    fn bytes(&self, i: usize) -> &'a [u8] {
        self.rec.at(self.fields[i].place)
    }
}

fn arith(a: Num, op: ArithOp, b: Num) -> Num {
    if let (Num::Int(x), Num::Int(y)) = (a, b) {
        let whole = match op {
            ArithOp::Add => x.checked_add(y),
            ArithOp::Sub => x.checked_sub(y),
            ArithOp::Mul => x.checked_mul(y),
            ArithOp::Div if y == 0 => return Num::Float(f64::NAN),
            ArithOp::Div => x.checked_div(y),
        };
        if let Some(n) = whole {
            return Num::Int(n);
        }
    }
    let (x, y) = (a.as_f64(), b.as_f64());
    Num::Float(match op {
        ArithOp::Add => x + y,
        ArithOp::Sub => x - y,
        ArithOp::Mul => x * y,
        ArithOp::Div => x / y,
    })
}

/// What a spec's `-include` and `-omit` statements select.
#[derive(Debug, Clone, PartialEq)]
pub struct Selection {
    fields: Vec<FieldAccess>,
    /// Each step: include (true) or omit, and its condition.
    steps: Vec<(bool, Cond)>,
    /// Whether a record no step decides is kept: when there is no include step.
    keeps_undecided: bool,
}

impl Selection {
    /// A selection of `steps` over `fields`.
    pub fn new(fields: Vec<FieldAccess>, steps: Vec<(bool, Cond)>) -> Selection {
        let keeps_undecided = !steps.iter().any(|(include, _)| *include);
        Selection { fields, steps, keeps_undecided }
    }

    /// Whether `rec` is kept.
    pub fn keeps(&self, rec: Rec<'_>) -> bool {
        let eval = Eval { fields: &self.fields, rec };
        let Some(((include, cond), first)) = self.steps.split_last() else { return true };
        for (include, cond) in first {
            if eval.holds(cond) {
                return *include;
            }
        }
        // The last step without a branch on its outcome: a selection that keeps a fair share of
        // the records would have it mispredicted at every other record.
        let holds = eval.holds(cond);
        (holds & *include) | (!holds & self.keeps_undecided)
    }
}

/// The bytes at `place` (not a derived field's) in `rec`.
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
        Place::Derived(_) => &[],
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
        ValueKind::Coded(c) => Num::Int(crate::key::coded::value(c, b).unwrap_or(0)),
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
    match compare_bytes(&a[..n], &b[..n]) {
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

/// Two byte strings of the same length compared as unsigned bytes: up to 8 bytes as one word,
/// in a register (conditions mostly test short fields against constants, once per record,
/// where a call to `memcmp` would cost more than the test).
#[inline]
fn compare_bytes(a: &[u8], b: &[u8]) -> Ordering {
    debug_assert_eq!(a.len(), b.len());
    if a.len() <= 8 {
        // Byte by byte into a register: a copy into a stack buffer would call `memcpy` and then
        // stall reading back what it stored.
        let word = |s: &[u8]| s.iter().fold(0u64, |w, &c| (w << 8) | u64::from(c));
        word(a).cmp(&word(b))
    } else {
        a.cmp(b)
    }
}

#[cfg(test)]
mod tests;
