//! Keys and their normalization.
//!
//! Every key is turned into a byte string that compares correctly with `memcmp`: the concatenation of
//! its parts' normalized forms, each part's bytes inverted when descending. The sorter keeps only a
//! prefix of it in the 16-byte entry ([`ResolvedKey::prefix`]); when the key is longer than the
//! prefix, entries whose prefixes tie are sorted again by the key's next bytes
//! ([`ResolvedKey::window`]), level by level, and small groups of them by [`ResolvedKey::compare`] on
//! the records themselves.
//!
//! Each part has a [`KeyType`] whose normalized form has exactly the part's length:
//!
//! | type | normalized form |
//! |---|---|
//! | `Char` | the bytes as they are (unsigned byte order) |
//! | `Unsigned` (1, 2, 4, 8 bytes) | the value, big-endian (little-endian input reversed) |
//! | `Signed` (1, 2, 4, 8 bytes) | the value, big-endian, sign bit flipped |
//! | `Float` (4 or 8 bytes, IEEE 754) | non-negative: sign bit set; negative: all bits inverted; every NaN: all ones |
//! | `Decimal` (text) | sign class and fixed-point digits, see the `decimal` module |
//!
//! A part compared by a function the program declared ([`KeyType::Custom`], Nsort's `compare=NAME`:
//! see [`custom`]) has no normalized form: the normalized key ends before it, and records equal
//! there are compared ([`ResolvedKey::is_complete`] is false).
//!
//! Floats thus order `-inf < ... < -0 < +0 < ... < +inf < NaN`: every NaN, whatever its sign and
//! payload, sorts after `+inf` (before `-inf` when descending), NaNs equal to each other (input order
//! kept). A decimal field that is not a number sorts before every number (after, when descending).

pub mod coded;
pub mod custom;
mod decimal;
#[cfg(test)]
mod tests;

use crate::error::{Result, SortError};
use std::cmp::Ordering;
use std::fmt;
use std::sync::Arc;

/// Byte order of a binary number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ByteOrder {
    /// Most significant byte first.
    Big,
    /// Least significant byte first.
    Little,
}

impl ByteOrder {
    /// The order of the machine xsort runs on (Nsort's default for binary numbers).
    pub const NATIVE: ByteOrder = if cfg!(target_endian = "little") { ByteOrder::Little } else { ByteOrder::Big };
}

/// How the bytes of a key part are interpreted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KeyType {
    /// Bytes compared as unsigned bytes (memcmp).
    Char,
    /// Unsigned binary integer of 1, 2, 4 or 8 bytes.
    Unsigned(ByteOrder),
    /// Two's-complement signed binary integer of 1, 2, 4 or 8 bytes.
    Signed(ByteOrder),
    /// IEEE 754 binary float of 4 (single) or 8 (double) bytes.
    Float(ByteOrder),
    /// A decimal number written in ASCII: `[blanks][+|-]digits[.digits][blanks]`.
    Decimal,
    /// Packed decimal (two digits a byte, a sign nibble last: see [`coded`]).
    Packed,
    /// Zoned decimal (a digit a byte, the sign in the last byte's zone: see [`coded`]).
    Zoned,
    /// A month's three-letter name, as GNU's `-M` reads it (see [`coded`]).
    Month,
    /// Compared by a function declared with [`custom::declare_comparison`] (Nsort's
    /// `compare=NAME`), called with the part's bytes in the two records.
    Custom(custom::ComparisonId),
}

/// The `--key-bytes` names of the key types: name, type, required length (None: any).
const TYPE_NAMES: &[(&str, KeyType, Option<usize>)] = {
    use ByteOrder::{Big as B, Little as L};
    use KeyType::*;
    &[
        ("char", Char, None),
        ("dec", Decimal, None),
        ("u8", Unsigned(B), Some(1)),
        ("i8", Signed(B), Some(1)),
        ("u16le", Unsigned(L), Some(2)),
        ("u16be", Unsigned(B), Some(2)),
        ("i16le", Signed(L), Some(2)),
        ("i16be", Signed(B), Some(2)),
        ("u32le", Unsigned(L), Some(4)),
        ("u32be", Unsigned(B), Some(4)),
        ("i32le", Signed(L), Some(4)),
        ("i32be", Signed(B), Some(4)),
        ("u64le", Unsigned(L), Some(8)),
        ("u64be", Unsigned(B), Some(8)),
        ("i64le", Signed(L), Some(8)),
        ("i64be", Signed(B), Some(8)),
        ("f32le", Float(L), Some(4)),
        ("f32be", Float(B), Some(4)),
        ("f64le", Float(L), Some(8)),
        ("f64be", Float(B), Some(8)),
        ("packed", Packed, None),
        ("zoned", Zoned, None),
        ("month", Month, None),
    ]
};

impl KeyType {
    /// Looks up a `--key-bytes` type name (case-insensitive): the type and the length it requires
    /// (None for `char` and `dec`, which take any length).
    pub fn from_name(name: &str) -> Option<(KeyType, Option<usize>)> {
        TYPE_NAMES.iter().find(|(n, _, _)| n.eq_ignore_ascii_case(name)).map(|&(_, t, l)| (t, l))
    }

    /// Every `--key-bytes` type name, for messages and help.
    pub fn names() -> impl Iterator<Item = &'static str> {
        TYPE_NAMES.iter().map(|(n, _, _)| *n)
    }

    /// The `--key-bytes` name of this type at length `len` (`u64le`, `dec`); `None` when the
    /// length does not suit the type.
    pub fn name(self, len: usize) -> Option<&'static str> {
        // One-byte integers have no byte order: both spellings are u8/i8.
        let kind = match self {
            KeyType::Unsigned(_) if len == 1 => KeyType::Unsigned(ByteOrder::Big),
            KeyType::Signed(_) if len == 1 => KeyType::Signed(ByteOrder::Big),
            k => k,
        };
        TYPE_NAMES.iter().find(|&&(_, t, l)| t == kind && l.is_none_or(|l| l == len)).map(|(n, _, _)| *n)
    }

    /// What the type is, in words, for messages.
    pub fn describe(self) -> &'static str {
        match self {
            KeyType::Char => "character",
            KeyType::Unsigned(_) => "unsigned integer",
            KeyType::Signed(_) => "signed integer",
            KeyType::Float(_) => "floating-point",
            KeyType::Decimal => "decimal",
            KeyType::Packed => "packed decimal",
            KeyType::Zoned => "zoned decimal",
            KeyType::Month => "month",
            KeyType::Custom(_) => "user-compared",
        }
    }

    /// The lengths a part of this type may have; empty means any.
    pub fn allowed_lengths(self) -> &'static [usize] {
        match self {
            KeyType::Char | KeyType::Decimal | KeyType::Packed | KeyType::Zoned | KeyType::Month | KeyType::Custom(_) => &[],
            KeyType::Unsigned(_) | KeyType::Signed(_) => &[1, 2, 4, 8],
            KeyType::Float(_) => &[4, 8],
        }
    }

    /// Whether `len` bytes suit this type.
    pub fn allows_length(self, len: usize) -> bool {
        let a = self.allowed_lengths();
        a.is_empty() || a.contains(&len)
    }
}

/// One part of a key: a typed field of the record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyPart {
    /// Offset of the first byte in the record.
    pub offset: usize,
    /// Length in bytes (at least 1; 1, 2, 4 or 8 for integers, 4 or 8 for floats).
    pub len: usize,
    /// Descending order for this part.
    pub descending: bool,
    /// How the bytes are interpreted.
    pub kind: KeyType,
}

impl KeyPart {
    /// A byte range compared as unsigned bytes.
    pub fn bytes(offset: usize, len: usize, descending: bool) -> Self {
        KeyPart { offset, len, descending, kind: KeyType::Char }
    }

    /// A part of the given type.
    pub fn typed(offset: usize, len: usize, kind: KeyType, descending: bool) -> Self {
        KeyPart { offset, len, descending, kind }
    }

    /// Parses `--key-bytes OFFSET:LENGTH[:TYPE][:r]`; TYPE is one of [`KeyType::names`] (default
    /// `char`), case-insensitive, and must suit LENGTH, or `compare=NAME` for a declared comparison
    /// ([`custom::declare_comparison`]). What [`KeyPart`]'s `Display` prints parses
    /// back to the same part. The error message quotes `s` and says what is wrong.
    pub fn parse_key_bytes(s: &str) -> Result<KeyPart> {
        let bad = || {
            SortError::BadOption(format!("invalid --key-bytes '{s}': expected OFFSET:LENGTH[:TYPE][:r], e.g. 0:10, 10:4:r or 8:8:i64le:r"))
        };
        let fields: Vec<&str> = s.split(':').collect();
        let (offset, len, rest) = match fields.as_slice() {
            [o, l, rest @ ..] if rest.len() <= 2 => {
                (o.trim().parse::<usize>().map_err(|_| bad())?, l.trim().parse::<usize>().map_err(|_| bad())?, rest)
            }
            _ => return Err(bad()),
        };
        if len == 0 {
            return Err(bad());
        }
        let is_r = |x: &str| x.eq_ignore_ascii_case("r");
        let (type_name, descending) = match rest {
            [] => (None, false),
            [r] if is_r(r) => (None, true),
            [t] => (Some(*t), false),
            [t, r] if is_r(r) => (Some(*t), true),
            _ => return Err(bad()),
        };
        let Some(name) = type_name else {
            return Ok(KeyPart::bytes(offset, len, descending));
        };
        if let Some(function) = name.strip_prefix("compare=") {
            let Some(id) = custom::declared_comparison(function) else {
                return Err(SortError::BadOption(format!(
                    "invalid --key-bytes '{s}': no comparison function named '{function}' is declared"
                )));
            };
            return Ok(KeyPart::typed(offset, len, KeyType::Custom(id), descending));
        }
        let Some((kind, required)) = KeyType::from_name(name) else {
            let names: Vec<&str> = KeyType::names().collect();
            return Err(SortError::BadOption(format!(
                "invalid --key-bytes '{s}': unknown type '{name}'; the types are {}",
                names.join(" ")
            )));
        };
        if let Some(r) = required.filter(|&r| r != len) {
            let unit = if r == 1 { "byte" } else { "bytes" };
            return Err(SortError::BadOption(format!(
                "invalid --key-bytes '{s}': a {} key is {r} {unit} long, not {len}",
                name.to_ascii_lowercase()
            )));
        }
        Ok(KeyPart::typed(offset, len, kind, descending))
    }
}

impl fmt::Display for KeyPart {
    /// `OFFSET:LENGTH[:TYPE][:r]`, as `--key-bytes` takes it (no type for `char`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.offset, self.len)?;
        match self.kind {
            KeyType::Char => {}
            KeyType::Custom(id) => write!(f, ":compare={}", id.name())?,
            kind => write!(f, ":{}", kind.name(self.len).unwrap_or("?"))?,
        }
        if self.descending {
            f.write_str(":r")?;
        }
        Ok(())
    }
}

/// The key of a sort: parts in priority order. No parts means the whole record, ascending.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeySpec {
    parts: Vec<KeyPart>,
}

impl KeySpec {
    /// A key from parts in priority order.
    pub fn new(parts: Vec<KeyPart>) -> Self {
        KeySpec { parts }
    }

    /// The parts (empty means whole record).
    pub fn parts(&self) -> &[KeyPart] {
        &self.parts
    }

    /// Resolves the key against a record size: an empty key becomes the whole record; parts that
    /// reach beyond the record, or whose length does not suit their type, are an error naming the
    /// part.
    pub fn resolve(&self, record_size: usize) -> Result<ResolvedKey> {
        let mut parts = self.parts.clone();
        if parts.is_empty() {
            parts.push(KeyPart::bytes(0, record_size, false));
        }
        for p in &parts {
            if p.len == 0 {
                return Err(SortError::BadOption(format!("key {}:{}: a key must be at least one byte long", p.offset, p.len)));
            }
            if !p.kind.allows_length(p.len) {
                let list: Vec<String> = p.kind.allowed_lengths().iter().map(usize::to_string).collect();
                return Err(SortError::BadOption(format!(
                    "key {}:{}: a {} key is {} bytes long, not {}",
                    p.offset,
                    p.len,
                    p.kind.describe(),
                    list.join(", "),
                    p.len
                )));
            }
            if p.offset.checked_add(p.len).is_none_or(|end| end > record_size) {
                return Err(SortError::BadOption(format!(
                    "key {p} reaches beyond the {}-byte record (bytes {}..{})",
                    record_size,
                    p.offset,
                    p.offset.saturating_add(p.len)
                )));
            }
        }
        // The normalized key ends before the first part compared by a function; it has at least
        // one byte (zero in every record when that part comes first).
        let normal_parts = parts.iter().position(|p| matches!(p.kind, KeyType::Custom(_))).unwrap_or(parts.len());
        let len = parts[..normal_parts].iter().map(|p| p.len).sum::<usize>().max(1);
        let ids: Vec<custom::ComparisonId> = parts
            .iter()
            .filter_map(|p| match p.kind {
                KeyType::Custom(id) => Some(id),
                _ => None,
            })
            .collect();
        let comparisons = (!ids.is_empty()).then(|| Arc::new(custom::Comparisons::new(&ids)));
        let mut slots = 0..;
        let parts: Vec<Part> = parts.iter().map(|p| Part::new(p, &mut slots)).collect();
        let mode = match parts.as_slice() {
            _ if comparisons.is_some() => Mode::General,
            [p] if matches!(p.norm, Norm::Bytes) && !p.descending => Mode::Bytes,
            [p] if matches!(p.norm, Norm::Int { .. } | Norm::Float { .. }) => Mode::Number,
            _ => Mode::General,
        };
        Ok(ResolvedKey { parts, normal_parts, len, mode, comparisons })
    }
}

/// How a part's bytes become its normalized form.
#[derive(Clone, Copy, Debug)]
enum Norm {
    /// As they are (characters, unsigned big-endian integers).
    Bytes,
    /// A binary integer: loaded as unsigned, then `^ flip` (the sign bit for signed integers).
    Int { order: ByteOrder, flip: u64 },
    /// An IEEE float of `len` bytes.
    Float { order: ByteOrder },
    /// Decimal text.
    Decimal,
    /// Packed or zoned decimal, or a month name.
    Coded(coded::Coding),
    /// None: compared by the key's `slot`th declared function.
    Custom { slot: usize },
}

/// A key part ready for the hot loops.
#[derive(Clone, Copy, Debug)]
struct Part {
    offset: usize,
    len: usize,
    descending: bool,
    norm: Norm,
    /// The low `8 * len` bits set (binary numbers only).
    mask: u64,
    /// The sign bit of a `len`-byte number (binary numbers only).
    sign: u64,
}

impl Part {
    /// The part `p`; a part compared by a function takes the next of `slots`.
    fn new(p: &KeyPart, slots: &mut std::ops::RangeFrom<usize>) -> Part {
        let bits = 8 * p.len.min(8) as u32;
        let mask = u64::MAX >> (64 - bits);
        let sign = 1u64 << (bits - 1);
        let norm = match p.kind {
            KeyType::Char | KeyType::Unsigned(ByteOrder::Big) => Norm::Bytes,
            KeyType::Unsigned(order) => Norm::Int { order, flip: 0 },
            KeyType::Signed(order) => Norm::Int { order, flip: sign },
            KeyType::Float(order) => Norm::Float { order },
            KeyType::Decimal => Norm::Decimal,
            KeyType::Packed => Norm::Coded(coded::Coding::Packed),
            KeyType::Zoned => Norm::Coded(coded::Coding::Zoned),
            KeyType::Month => Norm::Coded(coded::Coding::Month),
            KeyType::Custom(_) => Norm::Custom { slot: slots.next().expect("unbounded") },
        };
        Part { offset: p.offset, len: p.len, descending: p.descending, norm, mask, sign }
    }

    /// The `len`-byte binary number at the part's offset, as an unsigned value.
    #[inline(always)]
    fn load(&self, rec: &[u8], order: ByteOrder) -> u64 {
        let o = self.offset;
        match (self.len, order) {
            (8, ByteOrder::Little) => u64::from_le_bytes(rec[o..o + 8].try_into().unwrap()),
            (8, ByteOrder::Big) => u64::from_be_bytes(rec[o..o + 8].try_into().unwrap()),
            (4, ByteOrder::Little) => u32::from_le_bytes(rec[o..o + 4].try_into().unwrap()) as u64,
            (4, ByteOrder::Big) => u32::from_be_bytes(rec[o..o + 4].try_into().unwrap()) as u64,
            (2, ByteOrder::Little) => u16::from_le_bytes(rec[o..o + 2].try_into().unwrap()) as u64,
            (2, ByteOrder::Big) => u16::from_be_bytes(rec[o..o + 2].try_into().unwrap()) as u64,
            _ => rec[o] as u64,
        }
    }

    /// The ascending normalized form of a binary number part, as an unsigned value of `len` bytes.
    #[inline(always)]
    fn number(&self, rec: &[u8]) -> u64 {
        match self.norm {
            Norm::Int { order, flip } => self.load(rec, order) ^ flip,
            Norm::Float { order } => {
                let v = self.load(rec, order);
                let magnitude = v & !self.sign;
                // Infinity is the largest magnitude that is not a NaN: exponent all ones, no fraction.
                let inf = if self.len == 4 { 0x7F80_0000 } else { 0x7FF0_0000_0000_0000 };
                if magnitude > inf {
                    self.mask
                } else if v & self.sign != 0 {
                    !v & self.mask
                } else {
                    v | self.sign
                }
            }
            Norm::Bytes | Norm::Decimal | Norm::Coded(_) | Norm::Custom { .. } => unreachable!("not a binary number"),
        }
    }

    /// Writes the first `out.len()` (<= len) bytes of the part's ascending normalized form.
    #[inline]
    fn write(&self, rec: &[u8], out: &mut [u8]) {
        let field = &rec[self.offset..self.offset + self.len];
        match self.norm {
            Norm::Bytes => out.copy_from_slice(&field[..out.len()]),
            Norm::Int { .. } | Norm::Float { .. } => {
                let v = self.number(rec) << (64 - 8 * self.len);
                out.copy_from_slice(&v.to_be_bytes()[..out.len()]);
            }
            Norm::Decimal => decimal::encode(field, out),
            Norm::Coded(c) => coded::encode(c, field, out),
            Norm::Custom { .. } => unreachable!("a compared part has no normalized form"),
        }
    }

    /// Writes bytes `[from, from + out.len())` (within `len`) of the part's ascending normalized form.
    #[inline]
    fn write_range(&self, rec: &[u8], from: usize, out: &mut [u8]) {
        match self.norm {
            Norm::Bytes => out.copy_from_slice(&rec[self.offset + from..self.offset + from + out.len()]),
            Norm::Int { .. } | Norm::Float { .. } => {
                let v = self.number(rec) << (64 - 8 * self.len);
                out.copy_from_slice(&v.to_be_bytes()[from..from + out.len()]);
            }
            Norm::Decimal | Norm::Coded(_) | Norm::Custom { .. } if from == 0 => self.write(rec, out),
            Norm::Custom { .. } => unreachable!("a compared part has no normalized form"),
            Norm::Coded(c) => {
                let mut head = vec![0u8; from + out.len()];
                coded::encode(c, &rec[self.offset..self.offset + self.len], &mut head);
                out.copy_from_slice(&head[from..]);
            }
            Norm::Decimal => {
                // The encoding is written from its start: encode up to the range's end, keep the range.
                let mut head = vec![0u8; from + out.len()];
                decimal::encode(&rec[self.offset..self.offset + self.len], &mut head);
                out.copy_from_slice(&head[from..]);
            }
        }
    }

    /// Compares the part of two records, ascending.
    #[inline]
    fn compare(&self, a: &[u8], b: &[u8], comparisons: Option<&custom::Comparisons>) -> Ordering {
        let r = self.offset..self.offset + self.len;
        match self.norm {
            Norm::Custom { slot } => comparisons.expect("a compared part's functions").compare(slot, &a[r.clone()], &b[r]),
            Norm::Bytes => a[r.clone()].cmp(&b[r]),
            Norm::Int { .. } | Norm::Float { .. } => self.number(a).cmp(&self.number(b)),
            Norm::Decimal => decimal::compare(&a[r.clone()], &b[r]),
            Norm::Coded(c) => coded::compare(c, &a[r.clone()], &b[r]),
        }
    }
}

/// Which prefix code a key takes.
#[derive(Clone, Copy, Debug)]
enum Mode {
    /// One ascending part whose bytes are its normalized form.
    Bytes,
    /// One binary number part (either direction).
    Number,
    /// Anything else.
    General,
}

/// A key checked against the record size, ready for the hot loops.
#[derive(Clone, Debug)]
pub struct ResolvedKey {
    parts: Vec<Part>,
    /// How many of `parts`, from the first, the normalized key holds: those before the first part
    /// compared by a function.
    normal_parts: usize,
    /// Bytes of the normalized key.
    len: usize,
    mode: Mode,
    /// The functions of the parts compared by one, shared by the key's clones.
    comparisons: Option<Arc<custom::Comparisons>>,
}

/// The top `n` (<= 16) bytes of a u128 set.
#[inline(always)]
fn top_bytes(n: usize) -> u128 {
    if n >= 16 {
        u128::MAX
    } else {
        !(u128::MAX >> (8 * n))
    }
}

impl ResolvedKey {
    /// Length of the normalized key in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether records with equal normalized keys have equal keys: false when a part is compared
    /// by a function, whose order only [`ResolvedKey::compare`] knows.
    pub fn is_complete(&self) -> bool {
        self.comparisons.is_none()
    }

    /// Whether the first `n` bytes of the normalized key order records by the whole key.
    pub fn exact_within(&self, n: usize) -> bool {
        self.is_complete() && self.len <= n
    }

    /// Sets `flag` (the sort's cancel flag) when a declared comparison fails, so that the sort
    /// stops; [`ResolvedKey::comparison_failure`] then says why.
    pub fn cancel_on_comparison_failure(&self, flag: Arc<std::sync::atomic::AtomicBool>) {
        if let Some(c) = &self.comparisons {
            c.cancel_on_failure(flag);
        }
    }

    /// The message of the first declared comparison that failed, with the function's name.
    pub fn comparison_failure(&self) -> Option<&str> {
        self.comparisons.as_ref().and_then(|c| c.failure())
    }

    /// Whether the key is empty (never, once resolved; for clippy's sake).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Where in a record the key's first byte lies (0 for an empty key).
    pub fn first_offset(&self) -> usize {
        self.parts.first().map_or(0, |p| p.offset)
    }

    /// The first `n` (<= 16) bytes of the normalized key as the top bytes of a u128, zero below.
    #[inline]
    pub fn prefix(&self, rec: &[u8], n: usize) -> u128 {
        match self.mode {
            Mode::Bytes => {
                let p = &self.parts[0];
                let take = n.min(p.len);
                // One 16-byte load and a mask where the record has the bytes, rather than a copy of
                // a length known only at run time (a counting pass of `xsort-mpi` took 5% less).
                if let Some(wide) = rec.get(p.offset..p.offset + 16) {
                    return u128::from_be_bytes(wide.try_into().expect("16 bytes")) & top_bytes(take);
                }
                let mut b = [0u8; 16];
                b[..take].copy_from_slice(&rec[p.offset..p.offset + take]);
                u128::from_be_bytes(b)
            }
            Mode::Number => {
                let p = &self.parts[0];
                let v = p.number(rec) ^ if p.descending { p.mask } else { 0 };
                ((v as u128) << (128 - 8 * p.len)) & top_bytes(n)
            }
            Mode::General => {
                let mut b = [0u8; 16];
                let mut at = 0;
                for p in &self.parts[..self.normal_parts] {
                    if at >= n {
                        break;
                    }
                    let take = (n - at).min(p.len);
                    let out = &mut b[at..at + take];
                    p.write(rec, out);
                    if p.descending {
                        for d in out {
                            *d = !*d;
                        }
                    }
                    at += take;
                }
                u128::from_be_bytes(b)
            }
        }
    }

    /// Bytes `[skip, skip + n)` (n <= 16) of the normalized key as the top bytes of a u128, zero
    /// below and past the key's end: [`ResolvedKey::prefix`] from byte `skip` on. The sort refines
    /// ties of one prefix by the next bytes of the key this way (see `entry::sort_ties`).
    #[inline]
    pub fn window(&self, rec: &[u8], skip: usize, n: usize) -> u128 {
        if skip == 0 {
            return self.prefix(rec, n);
        }
        let end = (skip + n).min(self.len);
        let mut b = [0u8; 16];
        let mut start = 0; // where the current part starts in the normalized key
        for p in &self.parts[..self.normal_parts] {
            let (from, to) = (skip.max(start), end.min(start + p.len));
            if from < to {
                let out = &mut b[from - skip..to - skip];
                p.write_range(rec, from - start, out);
                if p.descending {
                    for d in out {
                        *d = !*d;
                    }
                }
            }
            start += p.len;
            if start >= end {
                break;
            }
        }
        u128::from_be_bytes(b)
    }

    /// Full comparison of two records' keys.
    #[inline]
    pub fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        for p in &self.parts {
            let o = p.compare(a, b, self.comparisons.as_deref());
            if o != Ordering::Equal {
                return if p.descending { o.reverse() } else { o };
            }
        }
        Ordering::Equal
    }

    /// Whether two records are equal in the first `parts` parts of the key (all, when None).
    pub fn parts_equal(&self, a: &[u8], b: &[u8], parts: Option<usize>) -> bool {
        let n = parts.unwrap_or(self.parts.len()).min(self.parts.len());
        self.parts[..n].iter().all(|p| p.compare(a, b, self.comparisons.as_deref()) == Ordering::Equal)
    }

    /// The whole normalized key of a record (for tests and diagnostics; the sorter uses
    /// [`ResolvedKey::prefix`]).
    pub fn normalized(&self, rec: &[u8]) -> Vec<u8> {
        let mut v = vec![0u8; self.len];
        let mut at = 0;
        for p in &self.parts[..self.normal_parts] {
            let out = &mut v[at..at + p.len];
            p.write(rec, out);
            if p.descending {
                for d in out {
                    *d = !*d;
                }
            }
            at += p.len;
        }
        v
    }
}
