//! Statements given as bytes, as a C program gives them to `xsort_define`. A path on Linux is any
//! bytes but NUL, and the `xsort` command sorts files whose names are not UTF-8, so the statements
//! that name a path (`-in_file`, `-out_file`, `-temp_file`, `-specification`) take such bytes
//! too; the parser itself reads `&str`.
//!
//! [`with_byte_paths`] carries the bytes through it: each byte that is not part of UTF-8 text
//! (always 0x80..=0xFF) is written as a character of Unicode's last private-use block,
//! U+10FF80..=U+10FFFF, and a path value turns those characters back into its bytes. So that
//! the mapping is exact, a character of that block already in the text is written as its UTF-8
//! bytes, each mapped the same way. Elsewhere than in a path, a statement whose bytes are not UTF-8
//! is refused, as it was when all statements had to be UTF-8.
//!
//! The mapping holds only while `with_byte_paths` runs on this thread (a thread-local flag): the C
//! library reaches the parser through `Sort::from_spec`, which takes `&str`, and statements given
//! as `&str` (`xsort --spec`, Python's `Sorter(spec=...)`) must keep every character as written.
//! A bytes entry point on `Sort` (`Sort::from_spec_bytes`) would let the flag go.

use std::cell::Cell;
use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;

/// The character that stands for byte `b` is `ESCAPE_BASE + b`; bytes that need it are >= 0x80.
const ESCAPE_BASE: u32 = 0x10_FF00;

thread_local! {
    /// Whether the statements being parsed on this thread came through [`with_byte_paths`].
    static ACTIVE: Cell<bool> = const { Cell::new(false) };
}

/// Restores the flag when the parse ends, a panicking one included.
struct Restore(bool);

impl Drop for Restore {
    fn drop(&mut self) {
        ACTIVE.with(|a| a.set(self.0));
    }
}

/// Runs `parse` (`Sort::from_spec`, [`super::parse_spec`]) on statements given as bytes: the
/// paths its statements name are those bytes, UTF-8 or not. Its messages hold the escape
/// characters where the bytes were not UTF-8: [`show_bytes`] makes them readable.
pub fn with_byte_paths<T>(statements: &[u8], parse: impl FnOnce(&str) -> T) -> T {
    let text = encode(statements);
    let _restore = Restore(ACTIVE.with(|a| a.replace(true)));
    parse(&text)
}

/// A message made while [`with_byte_paths`] ran, for a person: the escaped bytes back as they
/// were, those that are not UTF-8 as `\xNN`.
pub fn show_bytes(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    for chunk in decode(message).utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

/// Whether statements given as bytes are being parsed on this thread.
pub(super) fn active() -> bool {
    ACTIVE.with(Cell::get)
}

/// A path as a statement writes it: its bytes when they came through [`with_byte_paths`].
pub(super) fn path(text: &str) -> PathBuf {
    if active() {
        PathBuf::from(OsString::from_vec(decode(text)))
    } else {
        PathBuf::from(text)
    }
}

/// The text of a statement that names no path, as written: Err when it came as bytes that are
/// not UTF-8 (the caller refuses the statement), a new string when it held escaped characters of
/// the private-use block, None when it is as it stands.
pub(super) fn plain_text(text: &str) -> Result<Option<String>, ()> {
    if !active() || !text.chars().any(is_escape) {
        return Ok(None);
    }
    String::from_utf8(decode(text)).map(Some).map_err(|_| ())
}

/// A `-specification` file's bytes as statements: escaped as [`with_byte_paths`] escapes them
/// while it runs (the file's paths are bytes too), else UTF-8 or None.
pub(super) fn file_text(bytes: Vec<u8>) -> Option<String> {
    if active() {
        Some(encode(&bytes))
    } else {
        String::from_utf8(bytes).ok()
    }
}

/// The length in bytes of text as written (an escaped byte counts one), for messages.
pub(super) fn written_len(text: &str) -> usize {
    if active() {
        text.chars().map(|c| if is_escape(c) { 1 } else { c.len_utf8() }).sum()
    } else {
        text.len()
    }
}

fn is_escape(c: char) -> bool {
    (ESCAPE_BASE + 0x80..=ESCAPE_BASE + 0xFF).contains(&u32::from(c))
}

fn escape(b: u8) -> char {
    debug_assert!(b >= 0x80, "only bytes outside ASCII are escaped");
    char::from_u32(ESCAPE_BASE + u32::from(b)).unwrap_or(char::REPLACEMENT_CHARACTER)
}

/// Bytes as text: UTF-8 as it is, every other byte (and every byte of a character of the escape
/// block) as its escape character.
fn encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            if is_escape(c) {
                out.extend(c.encode_utf8(&mut [0; 4]).bytes().map(escape));
            } else {
                out.push(c);
            }
        }
        out.extend(chunk.invalid().iter().copied().map(escape));
    }
    out
}

/// The bytes [`encode`] made `text` from.
fn decode(text: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    for c in text.chars() {
        if is_escape(c) {
            out.push((u32::from(c) - ESCAPE_BASE) as u8);
        } else {
            out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_is_exact_for_any_bytes() {
        let cases: [&[u8]; 5] = [b"plain", b"/tmp/\xff\xfe", "caf\u{e9} \u{10FF80}\u{10FFFF}".as_bytes(), b"\xf4\x8f\xbe", b""];
        for bytes in cases {
            assert_eq!(decode(&encode(bytes)), bytes, "{bytes:?}");
        }
        assert_eq!(encode(b"/tmp/x"), "/tmp/x");
        assert_eq!(show_bytes(&encode(b"-temp=/t\xff\xc3\xa9")), "-temp=/t\\xffé");
    }

    #[test]
    fn the_flag_holds_only_inside_and_is_restored() {
        assert!(!active());
        let inner = with_byte_paths(b"\xff", |text| {
            assert_eq!(path(text).into_os_string().into_vec(), b"\xff");
            with_byte_paths(b"", |_| active()) && active()
        });
        assert!(inner);
        assert!(!active());
        assert_eq!(path("\u{10FFFF}"), PathBuf::from("\u{10FFFF}"));
    }
}
