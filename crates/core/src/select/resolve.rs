//! Conditions and values as written ([`Expr`], [`Value`]) resolved against the fields: names
//! become field indices, constants take the types of the fields they meet, and what cannot work
//! (text against a number, a name that is no field, a condition that names itself) is an error
//! in words for a message.

use super::{Cond, Expr, FieldAccess, Num, NumExpr, Operand, Pattern, TextExpr, Value, ValueKind, MAX_CONDITION_DEPTH};
use crate::select::expr::CmpOp;

/// What resolving a condition needs: the fields, and the conditions by name.
pub struct Resolver<'a> {
    /// The fields, by index.
    pub fields: &'a [FieldAccess],
    /// A named condition's text, if one is so named.
    pub condition: &'a dyn Fn(&str) -> Option<&'a Expr>,
}

/// A value resolved: a number or text, as its operands say.
#[derive(Debug, Clone, PartialEq)]
pub enum Resolved {
    /// A number.
    Number(NumExpr),
    /// Text.
    Text(TextExpr),
}

/// The most tests and values a resolved condition may hold: conditions that name conditions are
/// copied where they are named, and a chain of them that each name the one before twice would
/// double at every step.
pub const MAX_CONDITION_NODES: usize = 100_000;

/// Where resolving is: the condition names being resolved, outermost first (to find a condition
/// that names itself), and the tests and values made so far.
#[derive(Default)]
struct Chain {
    names: Vec<String>,
    nodes: usize,
}

impl Chain {
    /// Counts one more test or value; an error past [`MAX_CONDITION_NODES`].
    fn node(&mut self) -> Result<(), String> {
        self.nodes += 1;
        if self.nodes > MAX_CONDITION_NODES {
            return Err(format!("the conditions expand to more than {MAX_CONDITION_NODES} tests and values"));
        }
        Ok(())
    }
}

impl Resolver<'_> {
    /// `expr` resolved; the error names what is wrong.
    pub fn resolve(&self, expr: &Expr) -> Result<Cond, String> {
        self.cond(expr, &mut Chain::default())
    }

    /// The test of the condition named `name`, resolved (a test that names `name` again, directly
    /// or through others, is an error showing the chain).
    pub fn resolve_named(&self, name: &str, test: &Expr) -> Result<Cond, String> {
        self.cond(test, &mut Chain { names: vec![name.to_string()], nodes: 0 })
    }

    /// A derived field's value, resolved.
    pub fn resolve_value(&self, value: &Value) -> Result<Resolved, String> {
        let chain = &mut Chain::default();
        Ok(if self.is_text(value)? { Resolved::Text(self.text(value, None, chain)?) } else { Resolved::Number(self.num(value, chain)?) })
    }

    fn cond(&self, expr: &Expr, names: &mut Chain) -> Result<Cond, String> {
        names.node()?;
        Ok(match expr {
            Expr::Or(a, b) => Cond::Or(Box::new(self.cond(a, names)?), Box::new(self.cond(b, names)?)),
            Expr::And(a, b) => Cond::And(Box::new(self.cond(a, names)?), Box::new(self.cond(b, names)?)),
            Expr::Not(a) => Cond::Not(Box::new(self.cond(a, names)?)),
            Expr::Named(name) => self.named(name, names)?,
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
            Expr::Compare(l, op, r) => self.compare(l, *op, r, names)?,
        })
    }

    /// Another condition, by its name.
    fn named(&self, name: &str, names: &mut Chain) -> Result<Cond, String> {
        let Some(inner) = (self.condition)(name) else {
            return Err(match self.field(name) {
                Ok(_) => format!("field '{name}' alone is not a condition: compare it, as in {name} ne 0"),
                Err(_) => format!("'{name}' names no condition and no field"),
            });
        };
        if names.names.iter().any(|n| n == name) {
            names.names.push(name.to_string());
            return Err(format!("condition '{name}' names itself: {}", names.names.join(" -> ")));
        }
        if names.names.len() >= MAX_CONDITION_DEPTH {
            return Err(format!("conditions nest more than {MAX_CONDITION_DEPTH} deep"));
        }
        names.names.push(name.to_string());
        let c = self.cond(inner, names)?;
        names.names.pop();
        Ok(c)
    }

    /// The field named `name`.
    pub fn field(&self, name: &str) -> Result<usize, String> {
        self.fields.iter().position(|f| f.name == name).ok_or_else(|| {
            let names: Vec<&str> = self.fields.iter().map(|f| f.name.as_str()).collect();
            if names.is_empty() {
                format!("no field is named '{name}' (no fields are defined)")
            } else {
                format!("no field is named '{name}'; the fields are {} (names are case-sensitive)", names.join(", "))
            }
        })
    }

    /// Whether a value is text (a character field, quoted text, bytes, or a choice of those).
    fn is_text(&self, v: &Value) -> Result<bool, String> {
        Ok(match v {
            Value::Operand(Operand::Field(n)) => self.fields[self.field(n)?].kind == ValueKind::Text,
            Value::Operand(Operand::Text(_) | Operand::Hex(_)) => true,
            Value::Operand(Operand::Number(_)) | Value::Neg(_) | Value::Arith(..) => false,
            Value::If(_, a, b) => {
                let (x, y) = (self.is_text(a)?, self.is_text(b)?);
                if x != y {
                    return Err("the two values of an if differ in type: both text, or both numbers".into());
                }
                x
            }
        })
    }

    /// The size of a value that is a fixed-size character field, which constants it meets take.
    fn fixed_size(&self, v: &Value) -> Result<Option<usize>, String> {
        Ok(match v {
            Value::Operand(Operand::Field(n)) => self.fields[self.field(n)?].padded_size,
            _ => None,
        })
    }

    fn compare(&self, l: &Value, op: CmpOp, r: &Value, names: &mut Chain) -> Result<Cond, String> {
        match (self.is_text(l)?, self.is_text(r)?) {
            (true, true) => {
                let (ls, rs) = (self.fixed_size(l)?, self.fixed_size(r)?);
                let size = ls.or(rs);
                let (left, right) = (self.text(l, size, names)?, self.text(r, size, names)?);
                if let (TextExpr::Const(a), TextExpr::Const(b)) = (&left, &right) {
                    return Ok(Cond::Const(op.holds(Some(super::compare_text(a, b, false)))));
                }
                Ok(Cond::Text { left, op, right, padded: ls.is_some() && rs.is_some() })
            }
            (false, false) => {
                let (left, right) = (self.num(l, names)?, self.num(r, names)?);
                if let (NumExpr::Const(a), NumExpr::Const(b)) = (&left, &right) {
                    return Ok(Cond::Const(op.holds(a.order(*b))));
                }
                Ok(Cond::Number { left, op, right })
            }
            _ => Err("a number is compared with text: compare character fields with 'text' or x'hex', numeric fields with numbers".into()),
        }
    }

    /// A text value; constants padded to `size` (a fixed field's that they meet), which they must
    /// fit.
    fn text(&self, v: &Value, size: Option<usize>, names: &mut Chain) -> Result<TextExpr, String> {
        let (bytes, pad) = match v {
            Value::Operand(Operand::Field(n)) => return self.field(n).map(TextExpr::Field),
            Value::Operand(Operand::Text(t)) => (t, b' '),
            Value::Operand(Operand::Hex(h)) => (h, 0),
            Value::If(c, a, b) => {
                return Ok(TextExpr::If(
                    Box::new(self.cond(c, names)?),
                    Box::new(self.text(a, size, names)?),
                    Box::new(self.text(b, size, names)?),
                ))
            }
            _ => return Err("arithmetic applies to numbers, not text".into()),
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
        Ok(TextExpr::Const(bytes))
    }

    fn num(&self, v: &Value, names: &mut Chain) -> Result<NumExpr, String> {
        names.node()?;
        Ok(match v {
            Value::Operand(Operand::Field(n)) => {
                let i = self.field(n)?;
                if self.fields[i].kind == ValueKind::Text {
                    return Err(format!("'{n}' is a character field: arithmetic and numbers take numeric fields"));
                }
                NumExpr::Field(i)
            }
            Value::Operand(Operand::Number(text)) => {
                NumExpr::Const(Num::parse_constant(text).ok_or_else(|| format!("'{text}' is not a number"))?)
            }
            Value::Operand(_) => return Err("text is used as a number: arithmetic and numbers take numeric fields".into()),
            Value::Neg(a) => NumExpr::Neg(Box::new(self.num(a, names)?)),
            Value::Arith(a, op, b) => NumExpr::Arith(Box::new(self.num(a, names)?), *op, Box::new(self.num(b, names)?)),
            Value::If(c, a, b) => NumExpr::If(Box::new(self.cond(c, names)?), Box::new(self.num(a, names)?), Box::new(self.num(b, names)?)),
        })
    }
}
