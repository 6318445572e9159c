//! CSV and TSV records (RFC 4180): where a record ends, and the values of its fields.
//!
//! A field that starts with `"` is quoted: it ends at the next lone `"`, a doubled `""` inside
//! stands for one quote, and separators and line ends inside are part of its value. So a record
//! ends at the first terminator (newline) outside quotes, and may span several lines. A record
//! that ends with `\r\n` keeps its `\r` as read (it is written back unchanged), but the `\r` is not
//! part of the last field's value.
//!
//! Records are found by [`Scanner`], which jumps from quote to terminator with `memchr` (separators
//! only matter where a quote opens a field), and can be fed a stream piece by piece. Keys take a
//! field's value by `field_values`: a slice of the record when the value needs no unescaping
//! (most fields), a fresh copy when it holds doubled quotes or text after its closing quote.
//!
//! As Python's `csv` module and most readers do, a quote inside an unquoted field (`5"`) is an
//! ordinary byte, and text after a closing quote (`"a"b`) joins the value; under
//! [`CsvDialect::strict`] both are errors, as is, always, a quote left open at the end of a file.

use std::borrow::Cow;

/// The quote of quoted fields.
pub const QUOTE: u8 = b'"';

/// How a CSV file separates its fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CsvDialect {
    /// The byte between fields: `,` for CSV, tab for TSV.
    pub separator: u8,
    /// Refuse a quote inside an unquoted field and text after a closing quote.
    pub strict: bool,
}

impl CsvDialect {
    /// Comma-separated values.
    pub const CSV: CsvDialect = CsvDialect { separator: b',', strict: false };
    /// Tab-separated values, quoted as CSV's are.
    pub const TSV: CsvDialect = CsvDialect { separator: b'\t', strict: false };

    /// CSV with this separator.
    pub fn with_separator(separator: u8) -> CsvDialect {
        CsvDialect { separator, ..CsvDialect::CSV }
    }
}

/// What is wrong with a record, found by a [`Scanner`] of a strict dialect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// A quote inside a field that did not start with one (`ab"c`), at this offset.
    StrayQuote(usize),
    /// Text after the quote that closes a quoted field (`"ab"c`), at this offset.
    TextAfterQuote(usize),
}

impl Fault {
    /// Where the fault is, in the data scanned.
    pub fn offset(self) -> usize {
        match self {
            Fault::StrayQuote(at) | Fault::TextAfterQuote(at) => at,
        }
    }

    /// The fault, in words.
    pub fn describe(self) -> &'static str {
        match self {
            Fault::StrayQuote(_) => "a quote inside a field that is not quoted (--strict)",
            Fault::TextAfterQuote(_) => "text after the quote that closes a field (--strict)",
        }
    }
}

/// Where a [`Scanner`] stands in the record it scans.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum State {
    /// At the start of a field.
    #[default]
    FieldStart,
    /// In a field that did not start with a quote (or after a quoted one's close, when not strict).
    Unquoted,
    /// Inside a quoted field.
    Quoted,
    /// Just after a quote inside a quoted field: the field's end unless the next byte is a quote.
    QuoteSeen,
    /// Strict: just after a closing quote; only a separator, a terminator or `\r\n` may follow.
    Closed,
    /// Strict: a `\r` after a closing quote; only a terminator may follow.
    ClosedCr,
}

/// Finds where CSV records end in a stream of bytes given piece by piece.
#[derive(Clone, Copy, Debug)]
pub struct Scanner {
    dialect: CsvDialect,
    terminator: u8,
    state: State,
    /// The last byte scanned, to tell whether a quote found at the start of a piece opens a field.
    last: u8,
}

impl Scanner {
    /// A scanner at the start of a record ended by `terminator`.
    pub fn new(dialect: CsvDialect, terminator: u8) -> Scanner {
        Scanner { dialect, terminator, state: State::FieldStart, last: terminator }
    }

    /// The offset in `data` of the terminator that ends the record being scanned, which started
    /// in `data` or in the pieces before it; after it the scanner is at the start of the next
    /// record. None when `data` ends first (the scanner then goes on with the next piece).
    #[inline]
    pub fn find_end(&mut self, data: &[u8]) -> Result<Option<usize>, Fault> {
        let (sep, term, strict) = (self.dialect.separator, self.terminator, self.dialect.strict);
        let mut i = 0;
        loop {
            if i == data.len() {
                if let Some(&b) = data.last() {
                    self.last = b;
                }
                return Ok(None);
            }
            match self.state {
                State::FieldStart if data[i] == QUOTE => {
                    self.state = State::Quoted;
                    i += 1;
                }
                State::FieldStart => self.state = State::Unquoted,
                State::Unquoted => match memchr::memchr2(term, QUOTE, &data[i..]) {
                    None => i = data.len(),
                    Some(k) if data[i + k] == term => return Ok(Some(self.ended(i + k))),
                    Some(k) => {
                        let at = i + k;
                        let before = if at > 0 { data[at - 1] } else { self.last };
                        if before == sep {
                            self.state = State::Quoted;
                        } else if strict {
                            return Err(Fault::StrayQuote(at));
                        }
                        i = at + 1;
                    }
                },
                State::Quoted => match memchr::memchr(QUOTE, &data[i..]) {
                    None => i = data.len(),
                    Some(k) => {
                        self.state = State::QuoteSeen;
                        i += k + 1;
                    }
                },
                State::QuoteSeen if data[i] == QUOTE => {
                    self.state = State::Quoted;
                    i += 1;
                }
                State::QuoteSeen => self.state = if strict { State::Closed } else { State::Unquoted },
                State::Closed | State::ClosedCr => {
                    let b = data[i];
                    if b == term {
                        return Ok(Some(self.ended(i)));
                    }
                    self.state = match (self.state, b) {
                        (State::Closed, _) if b == sep => State::FieldStart,
                        (State::Closed, b'\r') => State::ClosedCr,
                        _ => return Err(Fault::TextAfterQuote(i)),
                    };
                    i += 1;
                }
            }
        }
    }

    /// Back at the start of a record, after the terminator at `at`.
    #[inline]
    fn ended(&mut self, at: usize) -> usize {
        self.state = State::FieldStart;
        self.last = self.terminator;
        at
    }

    /// Whether the scan stands inside a quoted field: at the end of a file, a quote left open.
    pub fn in_quotes(&self) -> bool {
        self.state == State::Quoted
    }

    /// Whether the scan stands at the start of a record.
    pub fn at_record_start(&self) -> bool {
        self.state == State::FieldStart && self.last == self.terminator
    }
}

/// One field of a record: where its text lies, and whether its value is that text as it stands.
#[derive(Clone, Copy, Debug)]
struct Field {
    /// The field's bytes, quotes included.
    start: usize,
    end: usize,
    /// It starts with a quote.
    quoted: bool,
    /// Its value is not a plain slice: it holds doubled quotes, or text after the closing quote.
    escaped: bool,
}

impl Field {
    /// The value's bytes within the record when it needs no unescaping.
    fn plain(self) -> (usize, usize) {
        if self.quoted {
            (self.start + 1, self.end.saturating_sub(1).max(self.start + 1))
        } else {
            (self.start, self.end)
        }
    }

    /// Appends the field's value to `out`.
    fn push_value(self, rec: &[u8], out: &mut Vec<u8>) {
        if !self.escaped {
            let (b, e) = self.plain();
            out.extend_from_slice(&rec[b..e]);
            return;
        }
        // Quoted, with doubled quotes or text after the close: unquote byte by byte.
        let mut i = self.start + 1;
        let mut inside = true;
        while i < self.end {
            let b = rec[i];
            if inside && b == QUOTE {
                if rec.get(i + 1) == Some(&QUOTE) && i + 1 < self.end {
                    out.push(QUOTE);
                    i += 2;
                    continue;
                }
                inside = false;
            } else {
                out.push(b);
            }
            i += 1;
        }
    }
}

/// The field of `rec` that starts at `at` (at most `rec.len()`), and where the next one starts.
#[inline]
fn field_at(rec: &[u8], at: usize, sep: u8) -> (Field, Option<usize>) {
    if rec.get(at) != Some(&QUOTE) {
        return match memchr::memchr(sep, &rec[at..]) {
            Some(k) => (Field { start: at, end: at + k, quoted: false, escaped: false }, Some(at + k + 1)),
            None => (Field { start: at, end: rec.len(), quoted: false, escaped: false }, None),
        };
    }
    let mut i = at + 1;
    let mut escaped = false;
    // The closing quote: the first lone quote.
    let close = loop {
        match memchr::memchr(QUOTE, &rec[i..]) {
            Some(k) if rec.get(i + k + 1) == Some(&QUOTE) => {
                escaped = true;
                i += k + 2;
            }
            Some(k) => break Some(i + k),
            None => break None,
        }
    };
    let Some(close) = close else {
        // Open to the record's end (only in a file whose records were not checked, as `-m` inputs).
        return (Field { start: at, end: rec.len(), quoted: true, escaped: true }, None);
    };
    match memchr::memchr(sep, &rec[close + 1..]) {
        Some(k) => {
            let end = close + 1 + k;
            (Field { start: at, end, quoted: true, escaped: escaped || end > close + 1 }, Some(end + 1))
        }
        None => (Field { start: at, end: rec.len(), quoted: true, escaped: escaped || rec.len() > close + 1 }, None),
    }
}

/// The record without the `\r` of a `\r\n` ending.
#[inline]
fn content(rec: &[u8]) -> &[u8] {
    rec.strip_suffix(b"\r").unwrap_or(rec)
}

/// The values of fields `first..=last` of `rec` (to the record's end for `last` = `usize::MAX`),
/// joined by the separator, and where field `mark` lies in that text (see [`Joined`]): a slice
/// of the record when no value needs unescaping, a copy otherwise; empty when the record has no
/// field `first`.
#[inline]
pub(crate) fn field_values(rec: &[u8], first: usize, last: usize, mark: usize, sep: u8) -> Joined<'_> {
    let rec = content(rec);
    let mut at = Some(0);
    // A key's field number may be as large as a usize (`-k 18446744073709551615`): the walk stops
    // at the record's last field.
    for _ in 0..first {
        at = match at {
            Some(a) => field_at(rec, a, sep).1,
            None => break,
        };
    }
    let Some(start) = at else { return Joined { text: Cow::Borrowed(&[]), mark: None } };
    let (mut field, mut next) = field_at(rec, start, sep);
    if first == last && !field.escaped {
        let (b, e) = field.plain();
        return Joined { text: Cow::Borrowed(&rec[b..e]), mark: (mark == first).then_some((0, e - b)) };
    }
    // Several fields: a slice of the record while none is quoted, a copy once one is.
    let mut parts = vec![field];
    let mut n = first;
    while n < last {
        let Some(at) = next else { break };
        (field, next) = field_at(rec, at, sep);
        parts.push(field);
        n += 1;
    }
    let marked = mark.checked_sub(first).and_then(|i| parts.get(i));
    if parts.iter().all(|f| !f.quoted) {
        let base = parts[0].start;
        let text = &rec[base..parts[parts.len() - 1].end];
        return Joined { text: Cow::Borrowed(text), mark: marked.map(|f| (f.start - base, f.end - base)) };
    }
    let mut text = Vec::new();
    let mut mark_at = None;
    for (i, f) in parts.iter().enumerate() {
        if i > 0 {
            text.push(sep);
        }
        let start = text.len();
        f.push_value(rec, &mut text);
        if first + i == mark {
            mark_at = Some((start, text.len()));
        }
    }
    Joined { text: Cow::Owned(text), mark: mark_at }
}

/// The values of a range of fields, joined by their separator ([`field_values`]).
pub(crate) struct Joined<'r> {
    /// The text.
    pub text: Cow<'r, [u8]>,
    /// Where the marked field's value starts and ends in the text; None when the record ends
    /// before it.
    pub mark: Option<(usize, usize)>,
}

/// Every field's value of a record (a header's column names).
pub fn values(rec: &[u8], dialect: CsvDialect) -> Vec<Vec<u8>> {
    let rec = content(rec);
    let mut out = Vec::new();
    let mut at = Some(0);
    while let Some(a) = at {
        let (field, next) = field_at(rec, a, dialect.separator);
        let mut value = Vec::new();
        field.push_value(rec, &mut value);
        out.push(value);
        at = next;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The records of `data`, each without its terminator, as the scanner finds them.
    fn records(data: &[u8], dialect: CsvDialect, piece: usize) -> Result<Vec<Vec<u8>>, Fault> {
        let mut scanner = Scanner::new(dialect, b'\n');
        let (mut out, mut current) = (Vec::new(), Vec::new());
        for chunk in data.chunks(piece.max(1)) {
            let mut at = 0;
            while let Some(end) = scanner.find_end(&chunk[at..])? {
                current.extend_from_slice(&chunk[at..at + end]);
                out.push(std::mem::take(&mut current));
                at += end + 1;
            }
            current.extend_from_slice(&chunk[at..]);
        }
        if !current.is_empty() {
            out.push(current);
        }
        Ok(out)
    }

    #[test]
    fn records_end_at_newlines_outside_quotes_in_any_pieces() {
        let data = b"a,\"b\nc\",d\n\"x\"\"\ny\",z\r\nplain,5\"in,\"\"\n,\n\"\",\"\"\"\"\n";
        let want: Vec<&[u8]> = vec![b"a,\"b\nc\",d", b"\"x\"\"\ny\",z\r", b"plain,5\"in,\"\"", b",", b"\"\",\"\"\"\""];
        for piece in [1, 2, 3, 5, 7, 100] {
            assert_eq!(records(data, CsvDialect::CSV, piece).unwrap(), want, "pieces of {piece}");
        }
    }

    #[test]
    fn strict_refuses_stray_quotes_and_text_after_a_close() {
        let strict = CsvDialect { strict: true, ..CsvDialect::CSV };
        assert_eq!(records(b"a,b\"c\n", strict, 100), Err(Fault::StrayQuote(3)));
        assert_eq!(records(b"\"ab\"c,d\n", strict, 100), Err(Fault::TextAfterQuote(4)));
        assert!(records(b"\"ab\"\r\n\"a\"\"b\",c\n", strict, 1).is_ok());
        assert!(records(b"a,b\"c\n\"ab\"c,d\n", CsvDialect::CSV, 100).is_ok());
    }

    #[test]
    fn an_open_quote_is_seen_at_the_end() {
        let mut s = Scanner::new(CsvDialect::CSV, b'\n');
        assert_eq!(s.find_end(b"a,\"b\nc"), Ok(None));
        assert!(s.in_quotes());
        let mut s = Scanner::new(CsvDialect::CSV, b'\n');
        assert_eq!(s.find_end(b"a,\"b\"\"\""), Ok(None));
        assert!(!s.in_quotes());
    }

    fn joined(rec: &[u8], first: usize, last: usize) -> (Vec<u8>, usize, bool) {
        let j = field_values(rec, first, last, last, b',');
        (j.text.into_owned(), j.mark.map_or(0, |m| m.0), j.mark.is_some())
    }

    #[test]
    fn field_values_are_unquoted() {
        let rec = b"1,\"a,b\",\"say \"\"hi\"\"\",plain,\"x\"tail\r";
        assert_eq!(joined(rec, 0, 0).0, b"1");
        assert_eq!(joined(rec, 1, 1).0, b"a,b");
        assert_eq!(joined(rec, 2, 2).0, b"say \"hi\"");
        assert_eq!(joined(rec, 3, 3).0, b"plain");
        assert_eq!(joined(rec, 4, 4).0, b"xtail");
        assert_eq!(joined(rec, 1, 3), (b"a,b,say \"hi\",plain".to_vec(), 13, true));
        assert_eq!(joined(rec, 3, usize::MAX), (b"plain,xtail".to_vec(), 0, false));
        assert_eq!(joined(rec, 5, 5), (Vec::new(), 0, false));
        // A field number beyond any record's is found missing at once, however large.
        assert_eq!(joined(rec, usize::MAX - 1, usize::MAX - 1), (Vec::new(), 0, false));
        assert_eq!(joined(b"a,b,c", 0, 1), (b"a,b".to_vec(), 2, true));
        assert!(matches!(field_values(b"a,b,c", 0, 1, 1, b',').text, Cow::Borrowed(_)));
        // A marked field inside the range, as a key with character positions needs.
        assert_eq!(field_values(b"a,\"b\"\"\",c", 0, usize::MAX, 1, b',').mark, Some((2, 4)));
        assert_eq!(joined(b"\"open", 0, 0).0, b"open");
        assert_eq!(values(b"id,\"na,me\",\r", CsvDialect::CSV), [b"id".to_vec(), b"na,me".to_vec(), Vec::new()]);
    }
}
