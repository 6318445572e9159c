//! JSON lines: one JSON value per line, sorted by the values found at paths into them
//! (`.user.age`, `.items[0].id`, `."a key".b`).
//!
//! A key's value is found by walking the line's text (no tree is built): objects by member name,
//! arrays by index. It then becomes a byte string whose plain byte order is the order of the
//! values ([`JsonKey::text`]), so that keys compare, and give the sort's prefixes, as plain bytes.
//! Values of different types order as jq orders them, with a missing value first: missing < null
//! < false < true < numbers < strings < arrays < objects. Numbers compare by value (as doubles),
//! strings by their unescaped UTF-8 bytes; arrays and objects by their text as written. A key may
//! ask (`n`) that strings holding a number compare as that number, and (`f`) that strings compare
//! with ASCII letters folded to upper case.
//!
//! Lines are checked as they are read ([`check_line`]); a blank line holds no value (every key
//! of it is missing).

use std::borrow::Cow;

/// One step of a path: a member of an object, or an element of an array.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// `.name` or `."name"`: the member of that name.
    Member(Vec<u8>),
    /// `[N]`: element N (from 0).
    Index(usize),
}

/// A key of JSON lines: the path to its value, and how its strings compare.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JsonKey {
    /// The steps from the line's value to the key's.
    pub path: Vec<Step>,
    /// Strings that hold a JSON number compare as that number.
    pub numeric: bool,
    /// Strings compare with ASCII letters folded to upper case.
    pub fold: bool,
}

/// The type tags of a key's text, in the order of the types.
mod tag {
    pub const MISSING: u8 = 0;
    pub const NULL: u8 = 1;
    pub const FALSE: u8 = 2;
    pub const TRUE: u8 = 3;
    pub const NUMBER: u8 = 4;
    pub const STRING: u8 = 5;
    pub const ARRAY: u8 = 6;
    pub const OBJECT: u8 = 7;
}

impl JsonKey {
    /// Parses a path: `.` (the whole value), `.a.b`, `.a[2].c`, `."a b"`, `.["a b"]`.
    pub fn parse(path: &str) -> Result<Vec<Step>, String> {
        let bad = |why: &str| format!("invalid JSON path '{path}': {why}");
        let b = path.as_bytes();
        if b.first() != Some(&b'.') {
            return Err(bad("it starts with '.'"));
        }
        let mut steps = Vec::new();
        let mut i = 0;
        while i < b.len() {
            match b[i] {
                b'.' if i + 1 == b.len() && steps.is_empty() => i += 1,
                b'.' if b.get(i + 1) == Some(&b'"') => {
                    let (name, end) = quoted(b, i + 1).ok_or_else(|| bad("a quoted name is not closed"))?;
                    steps.push(Step::Member(name));
                    i = end;
                }
                b'.' if b.get(i + 1) == Some(&b'[') => i += 1,
                b'.' => {
                    let start = i + 1;
                    let end = b[start..].iter().position(|&c| c == b'.' || c == b'[').map_or(b.len(), |k| start + k);
                    if end == start {
                        return Err(bad("a name is empty"));
                    }
                    steps.push(Step::Member(b[start..end].to_vec()));
                    i = end;
                }
                b'[' if b.get(i + 1) == Some(&b'"') => {
                    let (name, end) = quoted(b, i + 1).ok_or_else(|| bad("a quoted name is not closed"))?;
                    if b.get(end) != Some(&b']') {
                        return Err(bad("'[\"name\"' is not closed by ']'"));
                    }
                    steps.push(Step::Member(name));
                    i = end + 1;
                }
                b'[' => {
                    let close = b[i..].iter().position(|&c| c == b']').ok_or_else(|| bad("'[' is not closed"))? + i;
                    let n = path[i + 1..close].parse::<usize>().map_err(|_| bad("an index is not a number"))?;
                    steps.push(Step::Index(n));
                    i = close + 1;
                }
                _ => return Err(bad("a step starts with '.' or '['")),
            }
        }
        Ok(steps)
    }

    /// The key's text in `line`: a type tag, then the value in a form whose byte order is the
    /// value's order (see the module documentation).
    #[inline]
    pub fn text<'l>(&self, line: &'l [u8]) -> Cow<'l, [u8]> {
        let Some(at) = find(line, skip_ws(line, 0), &self.path) else { return Cow::Borrowed(&[tag::MISSING]) };
        let end = skip_value(line, at).unwrap_or(line.len());
        let value = &line[at..end];
        let mut out = Vec::with_capacity(value.len() + 1);
        match value.first() {
            None => out.push(tag::MISSING),
            Some(b'n') => out.push(tag::NULL),
            Some(b'f') => out.push(tag::FALSE),
            Some(b't') => out.push(tag::TRUE),
            Some(b'"') => {
                let s = unescape(&value[1..value.len().saturating_sub(1).max(1)]);
                match self.numeric.then(|| number(&s)).flatten() {
                    Some(n) => push_number(&mut out, n),
                    None => {
                        out.push(tag::STRING);
                        out.extend(s.iter().map(|&c| if self.fold { c.to_ascii_uppercase() } else { c }));
                    }
                }
            }
            Some(b'[') => {
                out.push(tag::ARRAY);
                out.extend_from_slice(value);
            }
            Some(b'{') => {
                out.push(tag::OBJECT);
                out.extend_from_slice(value);
            }
            Some(_) => match number(value) {
                Some(n) => push_number(&mut out, n),
                None => out.push(tag::MISSING),
            },
        }
        Cow::Owned(out)
    }
}

/// A JSON number's value.
fn number(text: &[u8]) -> Option<f64> {
    let s = std::str::from_utf8(text).ok()?;
    let ok = s.bytes().all(|c| c.is_ascii_digit() || matches!(c, b'-' | b'+' | b'.' | b'e' | b'E'));
    ok.then(|| s.parse::<f64>().ok()).flatten().filter(|n| n.is_finite())
}

/// Appends a number's tag and its value as 8 bytes in value order (-0 as 0).
fn push_number(out: &mut Vec<u8>, n: f64) {
    let bits = if n == 0.0 { 0f64.to_bits() } else { n.to_bits() };
    let ordered = if bits >> 63 == 1 { !bits } else { bits | 1 << 63 };
    out.push(tag::NUMBER);
    out.extend_from_slice(&ordered.to_be_bytes());
}

/// A quoted name in a path, from the quote at `at`: its bytes and the offset after its closing
/// quote.
fn quoted(b: &[u8], at: usize) -> Option<(Vec<u8>, usize)> {
    let mut i = at + 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return Some((unescape(&b[at + 1..i]).into_owned(), i + 1)),
            _ => i += 1,
        }
    }
    None
}

#[inline]
fn skip_ws(s: &[u8], mut i: usize) -> usize {
    while i < s.len() && matches!(s[i], b' ' | b'\t' | b'\r' | b'\n') {
        i += 1;
    }
    i
}

/// Where the value that starts at `at` ends (lenient: the line was checked when read).
fn skip_value(s: &[u8], at: usize) -> Option<usize> {
    match *s.get(at)? {
        b'"' => skip_string(s, at),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = at;
            while i < s.len() {
                match s[i] {
                    b'"' => {
                        i = skip_string(s, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            None
        }
        _ => {
            Some(at + s[at..].iter().position(|&c| matches!(c, b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n')).unwrap_or(s.len() - at))
        }
    }
}

/// Where the string that starts with the quote at `at` ends (after its closing quote).
fn skip_string(s: &[u8], at: usize) -> Option<usize> {
    let mut i = at + 1;
    loop {
        // A backslash may end an unchecked line (an input of -m): `get`, not an index.
        i += memchr::memchr2(b'"', b'\\', s.get(i..)?)?;
        if s[i] == b'\\' {
            i += 2;
        } else {
            return Some(i + 1);
        }
    }
}

/// Where the value at `path` from the value at `at` starts; None when it is missing.
fn find(s: &[u8], mut at: usize, path: &[Step]) -> Option<usize> {
    for step in path {
        match (step, s.get(at)?) {
            (Step::Member(name), b'{') => at = member(s, at, name)?,
            (Step::Index(n), b'[') => at = element(s, at, *n)?,
            _ => return None,
        }
    }
    (at < s.len()).then_some(at)
}

/// The start of member `name`'s value in the object at `at`.
fn member(s: &[u8], at: usize, name: &[u8]) -> Option<usize> {
    let mut i = skip_ws(s, at + 1);
    loop {
        if *s.get(i)? != b'"' {
            return None;
        }
        let end = skip_string(s, i)?;
        let raw = &s[i + 1..end - 1];
        let matches = if raw.contains(&b'\\') { unescape(raw) == name } else { raw == name };
        i = skip_ws(s, end);
        if *s.get(i)? != b':' {
            return None;
        }
        i = skip_ws(s, i + 1);
        if matches {
            return Some(i);
        }
        i = skip_ws(s, skip_value(s, i)?);
        match *s.get(i)? {
            b',' => i = skip_ws(s, i + 1),
            _ => return None,
        }
    }
}

/// The start of element `n` of the array at `at`.
fn element(s: &[u8], at: usize, n: usize) -> Option<usize> {
    let mut i = skip_ws(s, at + 1);
    if *s.get(i)? == b']' {
        return None;
    }
    for _ in 0..n {
        i = skip_ws(s, skip_value(s, i)?);
        match *s.get(i)? {
            b',' => i = skip_ws(s, i + 1),
            _ => return None,
        }
    }
    Some(i)
}

/// A string's content (between its quotes) with its escapes undone, as UTF-8.
fn unescape(raw: &[u8]) -> Cow<'_, [u8]> {
    if !raw.contains(&b'\\') {
        return Cow::Borrowed(raw);
    }
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        if raw[i] != b'\\' || i + 1 == raw.len() {
            out.push(raw[i]);
            i += 1;
            continue;
        }
        let c = raw[i + 1];
        i += 2;
        let plain = match c {
            b'b' => 8,
            b'f' => 12,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'u' => {
                let mut code = hex4(raw, i).unwrap_or(0xfffd);
                i += 4;
                if (0xd800..0xdc00).contains(&code) && raw.get(i) == Some(&b'\\') && raw.get(i + 1) == Some(&b'u') {
                    if let Some(low @ 0xdc00..=0xdfff) = hex4(raw, i + 2) {
                        code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
                        i += 6;
                    }
                }
                let ch = char::from_u32(code).unwrap_or('\u{fffd}');
                out.extend_from_slice(ch.encode_utf8(&mut [0; 4]).as_bytes());
                continue;
            }
            other => other,
        };
        out.push(plain);
    }
    Cow::Owned(out)
}

/// The four hex digits at `at`, as a number.
fn hex4(s: &[u8], at: usize) -> Option<u32> {
    let digits = std::str::from_utf8(s.get(at..at + 4)?).ok()?;
    u32::from_str_radix(digits, 16).ok()
}

/// Checks that `line` holds one JSON value (or nothing but blanks); the error says what is wrong.
pub fn check_line(line: &[u8]) -> Result<(), String> {
    if skip_ws(line, 0) == line.len() {
        return Ok(());
    }
    serde_json::from_slice::<serde::de::IgnoredAny>(line).map(|_| ()).map_err(|e| {
        // serde_json's own words, without its "at line 1 column N" (the caller names the line).
        let text = e.to_string();
        match text.rfind(" at line ") {
            Some(i) => format!("invalid JSON: {} (column {})", &text[..i], e.column()),
            None => format!("invalid JSON: {text}"),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(path: &str) -> JsonKey {
        JsonKey { path: JsonKey::parse(path).unwrap(), numeric: false, fold: false }
    }

    #[test]
    fn paths_parse() {
        let m = |s: &str| Step::Member(s.as_bytes().to_vec());
        assert_eq!(JsonKey::parse(".a.b").unwrap(), [m("a"), m("b")]);
        assert_eq!(JsonKey::parse(".a[2].c").unwrap(), [m("a"), Step::Index(2), m("c")]);
        assert_eq!(JsonKey::parse(".[0]").unwrap(), [Step::Index(0)]);
        assert_eq!(JsonKey::parse(r#"."a b".c"#).unwrap(), [m("a b"), m("c")]);
        assert_eq!(JsonKey::parse(r#".["x.y"]"#).unwrap(), [m("x.y")]);
        assert_eq!(JsonKey::parse(".").unwrap(), []);
        assert!(JsonKey::parse("a").is_err());
        assert!(JsonKey::parse(".a[x]").is_err());
        assert!(JsonKey::parse(".a..b").is_err());
    }

    #[test]
    fn values_are_found_and_ordered_by_type_then_value() {
        let line = br#"{"a": {"b": [10, "x\u00e9\"", null]}, "n": -2.5e1, "t": true, "s": "12", "o": {"k": 1}}"#;
        let at = |p: &str| key(p).text(line).into_owned();
        assert_eq!(at(".a.b[1]"), [&[tag::STRING][..], "xé\"".as_bytes()].concat());
        assert_eq!(at(".a.b[2]"), [tag::NULL]);
        assert_eq!(at(".missing"), [tag::MISSING]);
        assert_eq!(at(".a.b[9]"), [tag::MISSING]);
        assert_eq!(at(".t"), [tag::TRUE]);
        assert_eq!(at(".o"), [&[tag::OBJECT][..], br#"{"k": 1}"#].concat());
        let order = [".missing", ".a.b[2]", ".t", ".n", ".a.b[0]", ".s", ".a.b[1]", ".a.b", ".o"];
        let texts: Vec<_> = order.iter().map(|p| at(p)).collect();
        assert!(texts.windows(2).all(|w| w[0] < w[1]), "{texts:?}");
        let numeric = JsonKey { numeric: true, ..key(".s") };
        assert!(numeric.text(line) > key(".a.b[0]").text(line) && numeric.text(line) < key(".a.b[1]").text(line));
        // Numbers by value: -1e3 < -2 < -0 = 0 < 0.5 < 3 < 1e20.
        let nums: Vec<_> = ["-1e3", "-2", "-0", "0", "0.5", "3", "1e20"].iter().map(|n| key(".").text(n.as_bytes()).into_owned()).collect();
        assert!(nums.windows(2).all(|w| w[0] <= w[1]) && nums[2] == nums[3]);
    }

    #[test]
    fn unchecked_text_never_panics() {
        // A line that ends inside a string, after a backslash (an -m input is not checked).
        for line in [&br#"{"b": "x\"#[..], br#"{"a": "\"#, br#"["\"#, b"{\"", br#"{"a": [1, {"#] {
            let _ = key(".a").text(line);
            let _ = key(".b").text(line);
            let _ = key(".[0]").text(line);
        }
    }

    #[test]
    fn lines_are_checked() {
        assert!(check_line(br#"{"a": [1, 2]}"#).is_ok());
        assert!(check_line(b"  \r").is_ok());
        assert_eq!(check_line(br#"{"a": }"#).unwrap_err(), "invalid JSON: expected value (column 7)");
        assert!(check_line(br#"{"a": 1} x"#).unwrap_err().starts_with("invalid JSON: trailing characters"));
    }
}
