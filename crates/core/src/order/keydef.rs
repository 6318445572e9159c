//! `-k KEYDEF` parsing and field location, as GNU sort 9.1 does them.
//!
//! A key is stored as GNU stores it: zero-origin start field `sword` and character `schar`, zero-origin
//! end field `eword` and end character `echar` (0 = the end of field `eword`), with `usize::MAX`
//! meaning "from the line's start" (`-k1` / `-k1.1`) for `sword` and "to the line's end" for `eword`.
//! [`begfield`] and [`limfield`] find those positions in a line exactly as GNU's functions of the
//! same names: fields are separated by each `-t` byte, or else a field is a run of blanks (space,
//! tab, newline) followed by non-blanks.

use super::{Key, OrderFlags, BLANK, NONE};
use crate::error::SortError;
use std::borrow::Cow;

/// One -k KEYDEF.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyField {
    /// Zero-origin start field; `usize::MAX` when the key starts at the line's start.
    sword: usize,
    /// Characters to skip in the start field.
    schar: usize,
    /// Zero-origin end field; `usize::MAX` for the line's end.
    eword: usize,
    /// Characters of the end field to include; 0 for the whole field.
    echar: usize,
    /// The key's own ordering options.
    flags: OrderFlags,
    /// Whether the key had any option letter (then global options do not apply to it).
    has_flags: bool,
    /// Given in the obsolescent `+POS1 -POS2` form (--debug warns about it).
    obsolete: bool,
    /// The header's column this key names (`-k price:n`), and the argument as given: resolved
    /// once the header is read (see [`super::LineOrder::with_header`]).
    column: Option<(String, String)>,
}

impl KeyField {
    /// Parses GNU's `F[.C][OPTS][,F[.C][OPTS]]`; errors carry GNU's message text without the "sort: " prefix, e.g. "invalid number at field start: invalid count at start of '0'" -- check each against the real sort.
    pub fn parse(spec: &str) -> Result<KeyField, SortError> {
        let mut key = KeyField::empty();
        let (n, mut s) = field_count(spec, Some("invalid number at field start"))?;
        if n == 0 {
            return Err(bad_field_spec(spec, "field number is zero"));
        }
        key.sword = n - 1;
        if let Some(rest) = s.strip_prefix('.') {
            let (c, rest) = field_count(rest, Some("invalid number after '.'"))?;
            if c == 0 {
                return Err(bad_field_spec(spec, "character offset is zero"));
            }
            key.schar = c - 1;
            s = rest;
        }
        if key.sword == 0 && key.schar == 0 {
            key.sword = NONE;
        }
        s = key.set_ordering(s, true);
        if let Some(rest) = s.strip_prefix(',') {
            let (e, rest) = field_count(rest, Some("invalid number after ','"))?;
            if e == 0 {
                return Err(bad_field_spec(spec, "field number is zero"));
            }
            key.eword = e - 1;
            s = rest;
            if let Some(rest) = s.strip_prefix('.') {
                let (c, rest) = field_count(rest, Some("invalid number after '.'"))?;
                key.echar = c;
                s = rest;
            }
            s = key.set_ordering(s, false);
        }
        if !s.is_empty() {
            return Err(bad_field_spec(spec, "stray character in field spec"));
        }
        Ok(key)
    }

    /// Parses a `-k` argument: GNU's KEYDEF, or else (when it does not start with a digit) the
    /// name of a header's column, with GNU's ordering letters after a last `:` (`price:nr`). A
    /// name is resolved only with a header; without one, the argument is refused as GNU refuses
    /// it as a KEYDEF (see [`KeyField::keydef_error`]).
    pub fn parse_or_column(spec: &str) -> Result<KeyField, SortError> {
        match KeyField::parse(spec) {
            Err(_) if !spec.is_empty() && !spec.starts_with(|c: char| c.is_ascii_digit()) => Ok(KeyField::column(spec)),
            parsed => parsed,
        }
    }

    /// A key on the column named in `spec` (`NAME` or `NAME:LETTERS`: a `:` followed by ordering
    /// letters only ends the name; any other `:` is part of it).
    fn column(spec: &str) -> KeyField {
        let mut key = KeyField::empty();
        let name = match spec.rsplit_once(':') {
            Some((name, letters)) if !letters.is_empty() && letters.chars().all(|c| "bdfghiMnRrV".contains(c)) => {
                for c in letters.chars() {
                    key.flags.set_letter(c, true, true);
                }
                key.has_flags = true;
                name
            }
            _ => spec,
        };
        key.column = Some((name.to_owned(), spec.to_owned()));
        key
    }

    /// The header column the key names, when it names one.
    pub fn column_name(&self) -> Option<&str> {
        self.column.as_ref().map(|(name, _)| name.as_str())
    }

    /// For a key that names a column: GNU's refusal of its argument as a KEYDEF, the error to give
    /// when there is no header to name columns.
    pub fn keydef_error(&self) -> Option<SortError> {
        let (_, spec) = self.column.as_ref()?;
        KeyField::parse(spec).err()
    }

    /// Parses the obsolescent form `+POS1 [-POS2]`: `start` is POS1 without its '+', `end` POS2
    /// without its '-' (GNU takes the next argument as POS2 when it is '-' and a digit).
    ///
    /// `Ok(None)` when `start` is not a valid position: GNU then takes `+POS1` as a file operand.
    /// An invalid `end` is an error with GNU's message.
    pub fn parse_obsolete(start: &str, end: Option<&str>) -> Result<Option<KeyField>, SortError> {
        let mut key = KeyField::empty();
        let Ok((n, mut s)) = field_count(start, None) else { return Ok(None) };
        key.sword = n;
        if let Some(rest) = s.strip_prefix('.') {
            let Ok((c, rest)) = field_count(rest, None) else { return Ok(None) };
            key.schar = c;
            s = rest;
        }
        if key.sword == 0 && key.schar == 0 {
            key.sword = NONE;
        }
        if !key.set_ordering(s, true).is_empty() {
            return Ok(None);
        }
        if let Some(end) = end {
            let (e, mut s) = field_count(end, Some("invalid number after '-'"))?;
            key.eword = e;
            if let Some(rest) = s.strip_prefix('.') {
                let (c, rest) = field_count(rest, Some("invalid number after '.'"))?;
                key.echar = c;
                s = rest;
            }
            if key.echar == 0 && key.eword != 0 {
                key.eword -= 1;
            }
            if !key.set_ordering(s, false).is_empty() {
                return Err(bad_field_spec(end, "stray character in field spec"));
            }
        }
        key.obsolete = true;
        Ok(Some(key))
    }

    /// The key's own ordering options (global ones apply only when it has none).
    pub fn flags(&self) -> OrderFlags {
        self.flags
    }

    /// Whether the key had any option letter of its own.
    pub fn has_own_flags(&self) -> bool {
        self.has_flags
    }

    /// GNU's zero-origin (sword, schar, eword, echar), `usize::MAX` for "line start" / "line end".
    pub fn positions(&self) -> (usize, usize, usize, usize) {
        (self.sword, self.schar, self.eword, self.echar)
    }

    /// Whether the key came from the obsolescent `+POS1 -POS2` syntax.
    pub fn is_obsolete(&self) -> bool {
        self.obsolete
    }

    fn empty() -> KeyField {
        KeyField {
            sword: 0,
            schar: 0,
            eword: NONE,
            echar: 0,
            flags: OrderFlags::default(),
            has_flags: false,
            obsolete: false,
            column: None,
        }
    }

    /// GNU's set_ordering: consumes option letters, returns the rest.
    fn set_ordering<'a>(&mut self, s: &'a str, start: bool) -> &'a str {
        let mut rest = s;
        while let Some(c) = rest.chars().next() {
            if !self.flags.set_letter(c, start, !start) {
                break;
            }
            self.has_flags = true;
            rest = &rest[1..];
        }
        rest
    }
}

/// GNU's parse_field_count (xstrtoumax, base 10, any suffix): the number and the rest.
/// Overflow saturates to `usize::MAX`; no digits is an error "MSG: invalid count at start of 'S'".
fn field_count<'a>(s: &'a str, msg: Option<&str>) -> Result<(usize, &'a str), SortError> {
    let bytes = s.as_bytes();
    let invalid = || SortError::BadOption(format!("{}: invalid count at start of {}", msg.unwrap_or(""), quote(s.as_bytes())));
    let mut i = 0;
    while i < bytes.len() && is_c_space(bytes[i]) {
        i += 1;
    }
    if bytes.get(i) == Some(&b'-') {
        return Err(invalid());
    }
    if bytes.get(i) == Some(&b'+') {
        i += 1;
    }
    let digits_start = i;
    let mut n: usize = 0;
    while i < bytes.len() && bytes[i].is_ascii_digit() {
        n = n.saturating_mul(10).saturating_add((bytes[i] - b'0') as usize);
        i += 1;
    }
    if i == digits_start {
        return Err(invalid());
    }
    Ok((n, &s[i..]))
}

fn is_c_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

fn bad_field_spec(spec: &str, msg: &str) -> SortError {
    SortError::BadOption(format!("{msg}: invalid field specification {}", quote(spec.as_bytes())))
}

/// gnulib's `quote()` in the C locale: 'text' with C backslash escapes for the quote, the backslash
/// and unprintable bytes.
pub(crate) fn quote(s: &[u8]) -> String {
    let mut out = String::from("'");
    for &c in s {
        match c {
            b'\'' => out.push_str("\\'"),
            b'\\' => out.push_str("\\\\"),
            0x07 => out.push_str("\\a"),
            0x08 => out.push_str("\\b"),
            0x0c => out.push_str("\\f"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            0x0b => out.push_str("\\v"),
            0x20..=0x7e => out.push(c as char),
            _ => out.push_str(&format!("\\{c:03o}")),
        }
    }
    out.push('\'');
    out
}

#[inline]
fn skip_blanks(line: &[u8], mut p: usize, lim: usize) -> usize {
    while p < lim && BLANK[line[p] as usize] {
        p += 1;
    }
    p
}

#[inline]
fn skip_nonblanks(line: &[u8], mut p: usize, lim: usize) -> usize {
    while p < lim && !BLANK[line[p] as usize] {
        p += 1;
    }
    p
}

/// Bytes of a line searched a word at a time before a vectorized search takes over.
const SHORT_FIELD: usize = 64;

/// The first `t` in `s`. Fields are short: eight bytes at a time in a word beats a vectorized
/// search's setup, so the first [`SHORT_FIELD`] bytes are searched that way even in a long line
/// (where most separators are found: a CSV line's fields each take a few bytes of it).
#[inline]
fn find_separator(t: u8, s: &[u8]) -> Option<usize> {
    if s.len() <= SHORT_FIELD {
        return find_in_words(t, s);
    }
    find_in_words(t, &s[..SHORT_FIELD]).or_else(|| memchr::memchr(t, &s[SHORT_FIELD..]).map(|i| SHORT_FIELD + i))
}

/// [`find_separator`] a word at a time.
#[inline]
fn find_in_words(t: u8, s: &[u8]) -> Option<usize> {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    let pattern = ONES * t as u64;
    let mut words = s.chunks_exact(8);
    let mut at = 0;
    for word in &mut words {
        // Zero bytes of `w` are the separators; the lowest flagged byte is the first zero (a flag
        // can be wrong only above a true zero, through the borrow).
        let w = u64::from_le_bytes(word.try_into().expect("8 bytes")) ^ pattern;
        let zeros = w.wrapping_sub(ONES) & !w & HIGHS;
        if zeros != 0 {
            return Some(at + (zeros.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    words.remainder().iter().position(|&b| b == t).map(|i| at + i)
}

/// GNU's begfield and limfield together for a `-t` key whose end lies in a later field than its
/// start (`-k3,3`, `-k2,4`): the end is found by going on from the start field instead of
/// scanning the line again. The separators both functions pass are the same ones, so the result is
/// theirs exactly. None for other keys.
#[inline]
pub(crate) fn tab_range(line: &[u8], key: &Key, t: u8) -> Option<(usize, usize)> {
    let echar = key.echar;
    let eword = if echar == 0 { key.eword.wrapping_add(1) } else { key.eword };
    if key.sword == NONE || key.eword == NONE || key.sword >= eword {
        return None;
    }
    let lim = line.len();
    let mut ptr = 0;
    for _ in 0..key.sword {
        if ptr >= lim {
            break;
        }
        ptr = find_separator(t, &line[ptr..]).map_or(lim, |i| ptr + i + 1);
    }
    let field = ptr;
    let mut beg = field;
    if key.flags.blank_start {
        beg = skip_blanks(line, beg, lim);
    }
    let beg = beg.saturating_add(key.schar).min(lim);
    let mut left = eword - key.sword;
    while ptr < lim && left > 0 {
        left -= 1;
        ptr = find_separator(t, &line[ptr..]).map_or(lim, |i| ptr + i);
        if ptr < lim && (left > 0 || echar > 0) {
            ptr += 1;
        }
    }
    if echar != 0 {
        if key.flags.blank_end {
            ptr = skip_blanks(line, ptr, lim);
        }
        ptr = ptr.saturating_add(echar).min(lim);
    }
    Some((beg, ptr))
}

/// GNU's begfield: where the key starts (`key.sword != NONE`).
#[inline]
pub(crate) fn begfield(line: &[u8], key: &Key, tab: Option<u8>) -> usize {
    let lim = line.len();
    let mut ptr = 0;
    let mut sword = key.sword;
    match tab {
        Some(t) => {
            while ptr < lim && sword > 0 {
                sword -= 1;
                ptr = match find_separator(t, &line[ptr..]) {
                    Some(i) => ptr + i + 1,
                    None => lim,
                };
            }
        }
        None => {
            while ptr < lim && sword > 0 {
                sword -= 1;
                ptr = skip_blanks(line, ptr, lim);
                ptr = skip_nonblanks(line, ptr, lim);
            }
        }
    }
    if key.flags.blank_start {
        ptr = skip_blanks(line, ptr, lim);
    }
    ptr.saturating_add(key.schar).min(lim)
}

/// GNU's limfield: where the key ends (`key.eword != NONE`).
#[inline]
pub(crate) fn limfield(line: &[u8], key: &Key, tab: Option<u8>) -> usize {
    let lim = line.len();
    let mut ptr = 0;
    let echar = key.echar;
    let mut eword = if echar == 0 { key.eword.wrapping_add(1) } else { key.eword };
    match tab {
        Some(t) => {
            while ptr < lim && eword > 0 {
                eword -= 1;
                ptr = match find_separator(t, &line[ptr..]) {
                    Some(i) => ptr + i,
                    None => lim,
                };
                if ptr < lim && (eword > 0 || echar > 0) {
                    ptr += 1;
                }
            }
        }
        None => {
            while ptr < lim && eword > 0 {
                eword -= 1;
                ptr = skip_blanks(line, ptr, lim);
                ptr = skip_nonblanks(line, ptr, lim);
            }
        }
    }
    if echar != 0 {
        if key.flags.blank_end {
            ptr = skip_blanks(line, ptr, lim);
        }
        ptr = ptr.saturating_add(echar).min(lim);
    }
    ptr
}

/// The text a key compares in a CSV record: GNU's begfield and limfield applied to the unquoted
/// values of the record's fields from the key's first, joined by the separator (see
/// [`crate::csv`]), as GNU applies them to the fields of a line. A key without character
/// positions needs only its own fields; one with them may run past its fields, as GNU's does.
#[inline]
pub(crate) fn csv_key<'l>(line: &'l [u8], key: &Key, sep: u8) -> Cow<'l, [u8]> {
    let first = if key.sword == NONE { 0 } else { key.sword };
    if key.eword < first {
        // A key that ends in a field before its first is empty (GNU's, ending at most a few
        // characters into that earlier field, may reach back into the first: not followed here).
        return Cow::Borrowed(&[]);
    }
    let last = if key.schar > 0 || key.echar > 0 { NONE } else { key.eword };
    let joined = crate::csv::field_values(line, first, last, key.eword, sep);
    let lim = joined.text.len();
    let mut beg = 0;
    if key.flags.blank_start {
        beg = skip_blanks(&joined.text, beg, lim);
    }
    let beg = beg.saturating_add(key.schar).min(lim);
    let end = match joined.mark {
        _ if key.eword == NONE => lim,
        None => lim,
        Some((_, end)) if key.echar == 0 => end,
        Some((start, _)) => {
            let p = if key.flags.blank_end { skip_blanks(&joined.text, start, lim) } else { start };
            p.saturating_add(key.echar).min(lim)
        }
    };
    let end = end.max(beg);
    match joined.text {
        Cow::Borrowed(text) => Cow::Borrowed(&text[beg..end]),
        Cow::Owned(mut text) => {
            text.truncate(end);
            text.drain(..beg);
            Cow::Owned(text)
        }
    }
}

/// The names of a header line's columns: its CSV values, its `-t` fields, or its words between
/// blanks.
pub(crate) fn column_names(header: &[u8], csv: Option<crate::csv::CsvDialect>, tab: Option<u8>) -> Vec<Vec<u8>> {
    match (csv, tab) {
        (Some(dialect), _) => crate::csv::values(header, dialect),
        (None, Some(t)) => header.split(|&b| b == t).map(<[u8]>::to_vec).collect(),
        (None, None) => header.split(|b| BLANK[*b as usize]).filter(|w| !w.is_empty()).map(<[u8]>::to_vec).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_separator_matches_a_plain_scan() {
        let mut x = 7u64;
        for len in 0..160 {
            for _ in 0..50 {
                let s: Vec<u8> = (0..len)
                    .map(|_| {
                        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                        [b',', b'+', 0, 0x80, 0xff, b'a'][(x >> 40) as usize % 6]
                    })
                    .collect();
                for t in [b',', 0, 0x80, 0xff, 0x01] {
                    assert_eq!(find_separator(t, &s), s.iter().position(|&b| b == t), "{s:?} {t}");
                }
            }
            // One separator at every place, before, at and past the word-at-a-time head.
            for at in 0..len {
                let mut s = vec![0x80u8; len];
                s[at] = b',';
                assert_eq!(find_separator(b',', &s), Some(at), "len {len} at {at}");
                assert_eq!(find_separator(b',', &s[..at]), None, "len {len} before {at}");
            }
        }
    }

    fn err(spec: &str) -> String {
        match KeyField::parse(spec) {
            Err(SortError::BadOption(m)) => m,
            other => panic!("{spec}: expected an error, got {other:?}"),
        }
    }

    #[test]
    fn parse_errors_match_gnu() {
        assert_eq!(err("0"), "field number is zero: invalid field specification '0'");
        assert_eq!(err(""), "invalid number at field start: invalid count at start of ''");
        assert_eq!(err("1.0"), "character offset is zero: invalid field specification '1.0'");
        assert_eq!(err("1.x"), "invalid number after '.': invalid count at start of 'x'");
        assert_eq!(err("1x"), "stray character in field spec: invalid field specification '1x'");
        assert_eq!(err("1,0"), "field number is zero: invalid field specification '1,0'");
        assert_eq!(err("1,x"), "invalid number after ',': invalid count at start of 'x'");
        assert_eq!(err("1,2x"), "stray character in field spec: invalid field specification '1,2x'");
        assert_eq!(err("-1"), "invalid number at field start: invalid count at start of '-1'");
        assert_eq!(err("1.1.1"), "stray character in field spec: invalid field specification '1.1.1'");
        assert_eq!(err("a'b"), "invalid number at field start: invalid count at start of 'a\\'b'");
        assert_eq!(err("1\t"), "stray character in field spec: invalid field specification '1\\t'");
        assert_eq!(err("a\u{1}b"), "invalid number at field start: invalid count at start of 'a\\001b'");
        assert_eq!(err("0.x"), "field number is zero: invalid field specification '0.x'");
    }

    #[test]
    fn parse_positions_and_flags() {
        let k = KeyField::parse("+1").unwrap();
        assert_eq!(k.positions(), (NONE, 0, NONE, 0));
        let k = KeyField::parse(" 2").unwrap();
        assert_eq!(k.positions(), (1, 0, NONE, 0));
        let k = KeyField::parse("2.3b,4.5nr").unwrap();
        assert_eq!(k.positions(), (1, 2, 3, 5));
        let f = k.flags();
        assert!(f.blank_start && !f.blank_end && f.numeric && f.reverse);
        assert!(k.has_own_flags());
        let k = KeyField::parse("1,1").unwrap();
        assert_eq!(k.positions(), (NONE, 0, 0, 0));
        assert!(!k.has_own_flags());
        let k = KeyField::parse("1.2,3.0b").unwrap();
        assert_eq!(k.positions(), (0, 1, 2, 0));
        assert!(k.flags().blank_end && !k.flags().blank_start);
        let k = KeyField::parse("99999999999999999999999").unwrap();
        assert_eq!(k.positions().0, usize::MAX - 1);
    }

    #[test]
    fn parse_obsolete_positions() {
        let k = KeyField::parse_obsolete("1", Some("2")).unwrap().unwrap();
        assert_eq!(k.positions(), (1, 0, 1, 0));
        assert!(k.is_obsolete());
        let k = KeyField::parse_obsolete("1.2", Some("2.3")).unwrap().unwrap();
        assert_eq!(k.positions(), (1, 2, 2, 3));
        let k = KeyField::parse_obsolete("0", None).unwrap().unwrap();
        assert_eq!(k.positions(), (NONE, 0, NONE, 0));
        assert!(KeyField::parse_obsolete("x", None).unwrap().is_none());
        assert!(KeyField::parse_obsolete("1", Some("2x")).is_err());
    }

    fn key(spec: &str) -> Key {
        let k = KeyField::parse(spec).unwrap();
        let (a, b, c, d) = k.positions();
        Key::new(a, b, c, d, k.flags(), false)
    }

    fn field<'a>(spec: &str, tab: Option<u8>, line: &'a [u8]) -> &'a [u8] {
        let (b, e) = key(spec).range(line, tab);
        &line[b..e]
    }

    #[test]
    fn fields_blank_separated() {
        let l = b"  ab  cd\tef";
        assert_eq!(field("1,1", None, l), b"  ab");
        assert_eq!(field("2,2", None, l), b"  cd");
        assert_eq!(field("2b,2", None, l), b"cd");
        assert_eq!(field("3,3", None, l), b"\tef");
        assert_eq!(field("2.2,2.3", None, l), b" c");
        assert_eq!(field("2.2b,2.3b", None, l), b"d\t");
        assert_eq!(field("4", None, l), b"");
        assert_eq!(field("2,1", None, l), b"");
        assert_eq!(field("1.9,1.2", None, l), b"");
        assert_eq!(field("1b,1", None, l), b"ab");
        assert_eq!(field("1.2", None, l), b" ab  cd\tef");
    }

    #[test]
    fn fields_with_separator() {
        let l = b"a,,bc,d";
        let t = Some(b',');
        assert_eq!(field("1,1", t, l), b"a");
        assert_eq!(field("2,2", t, l), b"");
        assert_eq!(field("3,3", t, l), b"bc");
        assert_eq!(field("3,4", t, l), b"bc,d");
        assert_eq!(field("3.2,3.5", t, l), b"c,d");
        assert_eq!(field("5", t, l), b"");
        assert_eq!(field("2", t, l), b",bc,d");
        assert_eq!(field("4,4.1", t, l), b"d");
    }
}
