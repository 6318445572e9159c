//! Nsort's derived fields (`-derived=name:D,TYPE[,size:N],value:(EXPR)`): values computed from
//! each record's fields as it is read, which conditions may test and `-reformat` may write (and
//! so sort on). A derived field is kept beside the record, encoded as its type says: binary
//! numbers and fixed-size text for fixed-size records, text for delimited and separated ones.

use super::resolve::Resolved;
use super::{Eval, FieldAccess, Num, Rec};
use crate::key::ByteOrder;

/// How a derived value is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// A two's-complement binary integer of this many bytes.
    Signed(usize, ByteOrder),
    /// An unsigned binary integer of this many bytes.
    Unsigned(usize, ByteOrder),
    /// An IEEE 754 float of 4 or 8 bytes.
    Float(usize, ByteOrder),
    /// A number written as decimal text, right-aligned in this many bytes (None: as long as it is).
    Decimal(Option<usize>),
    /// Text, padded with blanks to this many bytes (None: as long as it is).
    Text(Option<usize>),
}

/// A derived field: its name, value and encoding.
#[derive(Debug, Clone, PartialEq)]
pub struct DerivedField {
    /// Its name.
    pub name: String,
    /// What it holds.
    pub value: Resolved,
    /// How it is written.
    pub encoding: Encoding,
}

/// The derived fields of a sort, computed in the order declared (a value may use the fields and
/// the derived fields before it).
#[derive(Debug, Clone, PartialEq)]
pub struct Derivation {
    fields: Vec<FieldAccess>,
    derived: Vec<DerivedField>,
}

impl Derivation {
    /// `derived` over `fields` (which name the derived ones at [`super::Place::Derived`]).
    pub fn new(fields: Vec<FieldAccess>, derived: Vec<DerivedField>) -> Derivation {
        Derivation { fields, derived }
    }

    /// How many there are.
    pub fn len(&self) -> usize {
        self.derived.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.derived.is_empty()
    }

    /// Computes `record`'s derived values into `out` (one buffer per field); the error names the
    /// field and what does not fit.
    pub fn compute(&self, record: &[u8], out: &mut [Vec<u8>]) -> Result<(), String> {
        for (j, d) in self.derived.iter().enumerate() {
            let (done, rest) = out.split_at_mut(j);
            let eval = Eval { fields: &self.fields, rec: Rec { bytes: record, derived: done } };
            let buf = &mut rest[0];
            buf.clear();
            match &d.value {
                Resolved::Text(t) => encode_text(eval.text(t), d.encoding, buf),
                Resolved::Number(n) => encode_number(eval.num(n), d.encoding, buf),
            }
            .map_err(|why| format!("derived field '{}': {why}", d.name))?;
        }
        Ok(())
    }
}

fn encode_text(t: &[u8], encoding: Encoding, out: &mut Vec<u8>) -> Result<(), String> {
    out.extend_from_slice(t);
    if let Encoding::Text(Some(size)) = encoding {
        if t.len() > size {
            return Err(format!("'{}' is longer than its {size} bytes", String::from_utf8_lossy(t)));
        }
        out.resize(size, b' ');
    }
    Ok(())
}

fn encode_number(n: Num, encoding: Encoding, out: &mut Vec<u8>) -> Result<(), String> {
    let whole = |n: Num| -> Result<i128, String> {
        match n {
            Num::Int(i) => Ok(i),
            // As C converts a float: the fraction dropped.
            Num::Float(f) if f.is_finite() && f.abs() < 1e38 => Ok(f.trunc() as i128),
            Num::Float(f) => Err(format!("{f} is not a number it can hold (a division by zero, or too large)")),
        }
    };
    let put = |bytes: &[u8], size: usize, order: ByteOrder, out: &mut Vec<u8>| match order {
        ByteOrder::Big => out.extend_from_slice(&bytes[8 - size..]),
        ByteOrder::Little => out.extend(bytes[8 - size..].iter().rev()),
    };
    match encoding {
        Encoding::Signed(size, order) => {
            let i = whole(n)?;
            let bits = 8 * size as u32;
            if bits < 128 && (i < -(1i128 << (bits - 1)) || i >= 1i128 << (bits - 1)) {
                return Err(format!("{i} does not fit in a {size}-byte integer"));
            }
            put(&(i as i64).to_be_bytes(), size, order, out);
        }
        Encoding::Unsigned(size, order) => {
            let i = whole(n)?;
            if i < 0 || (size < 16 && i >= 1i128 << (8 * size)) {
                return Err(format!("{i} does not fit in a {size}-byte unsigned integer"));
            }
            put(&(i as u64).to_be_bytes(), size, order, out);
        }
        Encoding::Float(4, order) => {
            let f = n.as_f64() as f32;
            out.extend_from_slice(&if order == ByteOrder::Big { f.to_be_bytes() } else { f.to_le_bytes() });
        }
        Encoding::Float(_, order) => {
            let f = n.as_f64();
            out.extend_from_slice(&if order == ByteOrder::Big { f.to_be_bytes() } else { f.to_le_bytes() });
        }
        Encoding::Decimal(size) => {
            let text = match n {
                Num::Int(i) => i.to_string(),
                Num::Float(f) if f.is_finite() => f.to_string(),
                Num::Float(f) => return Err(format!("{f} is not a number it can hold (a division by zero, or too large)")),
            };
            if let Some(size) = size {
                if text.len() > size {
                    return Err(format!("{text} does not fit in {size} bytes"));
                }
                out.resize(size - text.len(), b' ');
            }
            out.extend_from_slice(text.as_bytes());
        }
        Encoding::Text(_) => return Err("a number cannot be a character field's value".into()),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encoded(n: Num, e: Encoding) -> Result<Vec<u8>, String> {
        let mut out = Vec::new();
        encode_number(n, e, &mut out).map(|()| out)
    }

    #[test]
    fn numbers_are_encoded_as_their_type_or_refused() {
        assert_eq!(encoded(Num::Int(-2), Encoding::Signed(2, ByteOrder::Big)).unwrap(), vec![0xff, 0xfe]);
        assert_eq!(encoded(Num::Int(258), Encoding::Unsigned(4, ByteOrder::Little)).unwrap(), vec![2, 1, 0, 0]);
        assert_eq!(encoded(Num::Float(-7.9), Encoding::Signed(1, ByteOrder::Big)).unwrap(), vec![0xf9]);
        assert!(encoded(Num::Int(128), Encoding::Signed(1, ByteOrder::Big)).unwrap_err().contains("does not fit"));
        assert!(encoded(Num::Int(-1), Encoding::Unsigned(8, ByteOrder::Big)).unwrap_err().contains("does not fit"));
        assert!(encoded(Num::Float(f64::NAN), Encoding::Signed(4, ByteOrder::Big)).unwrap_err().contains("division by zero"));
        assert_eq!(encoded(Num::Int(42), Encoding::Decimal(Some(5))).unwrap(), b"   42");
        assert_eq!(encoded(Num::Float(2.5), Encoding::Decimal(None)).unwrap(), b"2.5");
        assert!(encoded(Num::Int(123456), Encoding::Decimal(Some(5))).unwrap_err().contains("does not fit in 5 bytes"));
        assert_eq!(encoded(Num::Float(1.5), Encoding::Float(8, ByteOrder::Little)).unwrap(), 1.5f64.to_le_bytes());
    }
}
