//! The reference tools' command lines, parsed exactly as the 1.5 tools parse
//! them, so that scripts written for those keep working.
//!
//! The reference reads options while the next argument starts with `-`, and
//! looks only at the letter after the dash (`-quiet` is `-q`); numbers are
//! read as far as they are decimal digits (`-b12x` is `-b12`, an empty
//! number is 0), with 128-bit wrap-around; `-tN` is C's `atoi`. Anything it
//! would not accept prints the usage text and exits with status 1. The
//! binaries only add the printing and the exit codes.

pub mod gensort;
pub mod valsort;

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;

use crate::io::IoConfig;

/// The command line is not one the reference accepts: print the usage text
/// and exit with status 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UsageError;

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("invalid command line")
    }
}

impl std::error::Error for UsageError {}

/// Most threads `-tN` will start: more would only exhaust the process.
pub const MAX_THREADS: usize = 1024;

/// The reference's `dec_to_u16`: the leading decimal digits of `s`, mod 2^128.
pub fn parse_decimal(s: &[u8]) -> u128 {
    s.iter().take_while(|b| b.is_ascii_digit()).fold(0u128, |acc, &b| acc.wrapping_mul(10).wrapping_add(u128::from(b - b'0')))
}

/// C's `atoi` (leading blanks, optional sign, digits; saturating instead of
/// undefined on overflow).
pub fn atoi(s: &[u8]) -> i64 {
    let s = match s.iter().position(|b| !b" \t\n\x0b\x0c\r".contains(b)) {
        Some(start) => &s[start..],
        None => return 0,
    };
    let (negative, digits) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let magnitude =
        digits.iter().take_while(|b| b.is_ascii_digit()).fold(0i64, |acc, &b| acc.saturating_mul(10).saturating_add(i64::from(b - b'0')));
    if negative {
        -magnitude
    } else {
        magnitude
    }
}

/// Threads for `-tN`: 0 (all cores) for N <= 0, as the multithreaded build's
/// default; otherwise N, at most [`MAX_THREADS`].
pub fn threads_from(value: &[u8]) -> usize {
    let n = atoi(value);
    if n <= 0 {
        0
    } else {
        usize::try_from(n).unwrap_or(MAX_THREADS).min(MAX_THREADS)
    }
}

/// Splits the multithreaded build's `FILE_NAME[,opts]`: trailing
/// comma-separated items `buf`, `dir`, `trans=N[k|m|g]` and `count=N` are
/// I/O options. The split is taken at the first comma after which every item
/// is such an option; a name with no such tail (`data,v2`) is a plain name.
pub fn split_file_options(spec: &[u8]) -> (PathBuf, IoConfig) {
    let commas = spec.iter().enumerate().filter(|(_, &b)| b == b',').map(|(j, _)| j);
    for at in commas {
        let mut io = IoConfig::default();
        if spec[at + 1..].split(|&b| b == b',').all(|item| apply_file_option(item, &mut io)) {
            return (PathBuf::from(OsString::from_vec(spec[..at].to_vec())), io);
        }
    }
    (PathBuf::from(OsString::from_vec(spec.to_vec())), IoConfig::default())
}

fn apply_file_option(item: &[u8], io: &mut IoConfig) -> bool {
    if item == b"buf" {
        io.direct = false;
    } else if item == b"dir" {
        io.direct = true;
    } else if let Some(value) = item.strip_prefix(b"trans=") {
        match parse_size(value) {
            Some(bytes) => io.block_bytes = bytes,
            None => return false,
        }
    } else if let Some(value) = item.strip_prefix(b"count=") {
        match std::str::from_utf8(value).ok().and_then(|v| v.parse::<usize>().ok()) {
            Some(n) if n > 0 => io.inflight = n,
            _ => return false,
        }
    } else {
        return false;
    }
    true
}

/// `N`, `Nk`, `Nm` or `Ng` (either case) as bytes.
fn parse_size(value: &[u8]) -> Option<usize> {
    let (digits, shift) = match value.last().map(u8::to_ascii_lowercase) {
        Some(b'k') => (&value[..value.len() - 1], 10),
        Some(b'm') => (&value[..value.len() - 1], 20),
        Some(b'g') => (&value[..value.len() - 1], 30),
        _ => (value, 0),
    };
    let n: usize = std::str::from_utf8(digits).ok()?.parse().ok()?;
    n.checked_mul(1 << shift).filter(|&b| b > 0)
}

/// The reference's option scan: the arguments that start with `-`, in order,
/// each paired with the letter after its dash (0 for a lone `-`).
fn option_letter(arg: &[u8]) -> Option<u8> {
    match arg {
        [b'-', rest @ ..] => Some(rest.first().copied().unwrap_or(0)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_like_the_reference() {
        assert_eq!(parse_decimal(b"1000"), 1000);
        assert_eq!(parse_decimal(b"12x3"), 12);
        assert_eq!(parse_decimal(b""), 0);
        assert_eq!(parse_decimal(b"-5"), 0);
        assert_eq!(parse_decimal(b"18446744073709551616"), 1 << 64);
        assert_eq!(parse_decimal(b"340282366920938463463374607431768211457"), 1);
    }

    #[test]
    fn atoi_like_c() {
        assert_eq!(atoi(b"8"), 8);
        assert_eq!(atoi(b"  -3x"), -3);
        assert_eq!(atoi(b""), 0);
        assert_eq!(atoi(b"+7"), 7);
        assert_eq!(threads_from(b"0"), 0);
        assert_eq!(threads_from(b"-2"), 0);
        assert_eq!(threads_from(b"99999999999999999999"), MAX_THREADS);
    }

    #[test]
    fn file_options() {
        let (p, io) = split_file_options(b"out,buf,trans=4m,count=3");
        assert_eq!(p, PathBuf::from("out"));
        assert!(!io.direct);
        assert_eq!((io.block_bytes, io.inflight), (4 << 20, 3));
        let (p, io) = split_file_options(b"data,v2");
        assert_eq!((p, io), (PathBuf::from("data,v2"), IoConfig::default()));
        let (p, io) = split_file_options(b"a,b,dir");
        assert_eq!((p, io.direct), (PathBuf::from("a,b"), true));
        assert_eq!(split_file_options(b"x,trans=0").0, PathBuf::from("x,trans=0"));
    }
}
