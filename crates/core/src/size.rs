//! Memory and byte sizes as users write them: `-S/--memory`, Nsort's
//! `-memory=` and `transfer_size=`.
//!
//! # Grammar
//!
//! ```text
//! size    := number [space*] [unit]      (surrounding whitespace is ignored)
//!          | number '%'                  (only where a share of RAM makes sense)
//! number  := digits ['.' digits]         (e.g. 512, 1.5)
//! unit    := 'b'                         bytes
//!          | K | KB | KiB                2^10 bytes
//!          | M | MB | MiB                2^20
//!          | G | GB | GiB                2^30
//!          | T | TB | TiB                2^40
//!          | P | PB | PiB                2^50
//!          | E | EB | EiB                2^60
//! ```
//!
//! Units are case-insensitive and always powers of 1024: `KB` and `MB`
//! mean KiB and MiB, as in GNU sort, because a sort buffer is never sized
//! in powers of ten on purpose. A space may separate the number and the
//! unit, so that what [`format_bytes`] prints (`"1.5 GiB"`) parses back.
//!
//! What a number *without* a unit means depends on where it is written,
//! hence three entry points:
//!
//! | function                   | bare number means | `N%` allowed |
//! |----------------------------|-------------------|--------------|
//! | [`parse_memory_size`]      | KiB (GNU sort `-S`) | yes        |
//! | [`parse_nsort_memory_size`]| MiB (Nsort `-memory=`) | yes     |
//! | [`parse_byte_count`]       | bytes (Nsort `transfer_size=`) | no |
//!
//! A fraction is allowed with any unit (`1.5G`, `0.5`); the result is
//! rounded down to a whole byte. Sizes must be at least one byte and at
//! most `u64::MAX` bytes; percentages must lie in `(0, 100]`.

use thiserror::Error;

/// How much memory the user asked for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MemorySize {
    /// An absolute number of bytes (at least 1).
    Bytes(u64),
    /// A share of physical RAM, in percent: `0 < p <= 100`.
    PercentOfRam(f64),
}

impl MemorySize {
    /// The size in bytes on a machine with `physical_ram` bytes of RAM.
    /// A percentage is rounded down, but never below one byte.
    pub fn to_bytes(&self, physical_ram: u64) -> u64 {
        match *self {
            MemorySize::Bytes(n) => n,
            // f64 loses precision only past 2^53 bytes (8 PiB), far beyond
            // any RAM, and the `as` cast saturates rather than wraps.
            MemorySize::PercentOfRam(p) => ((physical_ram as f64 * p / 100.0) as u64).max(1),
        }
    }
}

/// A size that could not be parsed. Each message quotes the input and is
/// meant to be shown to the user as is.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SizeError {
    /// Nothing but whitespace.
    #[error("empty size: expected a number with an optional unit, as in 512M or 2G")]
    Empty,
    /// A leading minus sign.
    #[error("invalid size '{0}': sizes cannot be negative")]
    Negative(String),
    /// The text does not start with a well-formed number.
    #[error(
        "invalid size '{0}': expected a number with an optional unit \
         (b, K, M, G, T, P, E), as in 512M or 1.5G"
    )]
    NotANumber(String),
    /// The number is followed by something that is not a unit.
    #[error(
        "invalid size '{input}': unknown unit '{unit}'; expected b (bytes) or \
         K, M, G, T, P, E (powers of 1024; KB and KiB mean the same as K)"
    )]
    UnknownUnit {
        /// The whole size as written.
        input: String,
        /// The part after the number.
        unit: String,
    },
    /// Zero, or a fraction that rounds down to zero bytes.
    #[error("invalid size '{0}': must be at least one byte")]
    Zero(String),
    /// More than `u64::MAX` bytes.
    #[error("invalid size '{0}': too large (the limit is 16 EiB)")]
    TooLarge(String),
    /// A percentage outside `(0, 100]`.
    #[error("invalid size '{0}': a percentage of RAM must be more than 0 and at most 100")]
    PercentOutOfRange(String),
    /// A percentage where only a byte count makes sense.
    #[error("invalid size '{0}': a percentage is not allowed here; give a size such as 16M")]
    PercentNotAllowed(String),
}

/// Parses `-S/--memory` the way GNU sort does: a bare number is KiB,
/// `N%` is a share of physical RAM. See the module doc for the grammar.
pub fn parse_memory_size(s: &str) -> Result<MemorySize, SizeError> {
    parse_with_percent(s, KIB)
}

/// Parses Nsort's `-memory=` value: like [`parse_memory_size`], except that
/// a bare number is MiB (Nsort users write `-memory=124000M`, and a bare
/// `-memory=4000` meaning 4000 KiB would almost always be a mistake).
pub fn parse_nsort_memory_size(s: &str) -> Result<MemorySize, SizeError> {
    parse_with_percent(s, MIB)
}

/// Parses a byte count such as Nsort's `transfer_size=16M`: a bare number
/// is bytes and a percentage is an error.
pub fn parse_byte_count(s: &str) -> Result<u64, SizeError> {
    let t = s.trim();
    if t.ends_with('%') {
        check_sign(t)?;
        return Err(SizeError::PercentNotAllowed(t.to_string()));
    }
    parse_scaled(t, 1)
}

/// A short human form of a byte count: `"512 B"`, `"64 MiB"`, `"1.5 GiB"`.
///
/// Whole multiples of a unit print without decimals; anything else prints
/// one decimal, rounded to nearest, so `"1.0 GiB"` means "about 1 GiB"
/// while `"1 GiB"` means exactly 2^30 bytes.
pub fn format_bytes(n: u64) -> String {
    if n < KIB {
        return format!("{n} B");
    }
    let mut exp = (63 - n.leading_zeros()) / 10; // largest unit with n >= 1024^exp
    let mut unit = 1u128 << (10 * exp);
    if n.trailing_zeros() >= 10 * exp {
        // A whole multiple of the unit.
        return format!("{} {}", n as u128 / unit, UNIT_NAMES[exp as usize]);
    }
    let mut tenths = (n as u128 * 10 + unit / 2) / unit;
    // Rounding can reach 1024.0 of a unit: show it as 1.0 of the next one.
    if tenths >= 10240 && (exp as usize) + 1 < UNIT_NAMES.len() {
        exp += 1;
        unit <<= 10;
        tenths = (n as u128 * 10 + unit / 2) / unit;
    }
    format!("{}.{} {}", tenths / 10, tenths % 10, UNIT_NAMES[exp as usize])
}

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;
const UNIT_NAMES: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];

/// Shared body of the two memory parsers; `bare` is the unit of a number
/// written without one.
fn parse_with_percent(s: &str, bare: u64) -> Result<MemorySize, SizeError> {
    let t = s.trim();
    match t.strip_suffix('%') {
        Some(num) => parse_percent(t, num.trim_end()).map(MemorySize::PercentOfRam),
        None => parse_scaled(t, bare).map(MemorySize::Bytes),
    }
}

/// Parses the number of `N%`; `whole` is the full input, for messages.
fn parse_percent(whole: &str, num: &str) -> Result<f64, SizeError> {
    check_sign(whole)?;
    let parts = split_number(num).ok_or_else(|| SizeError::NotANumber(whole.to_string()))?;
    if !parts.rest.is_empty() {
        return Err(SizeError::NotANumber(whole.to_string()));
    }
    // The grammar is checked above, so this only fails on absurd lengths.
    let p: f64 = num.parse().map_err(|_| SizeError::NotANumber(whole.to_string()))?;
    if p > 0.0 && p <= 100.0 {
        Ok(p)
    } else {
        Err(SizeError::PercentOutOfRange(whole.to_string()))
    }
}

/// Parses `number [unit]` (already trimmed) into bytes, a bare number
/// being worth `bare` bytes per unit.
fn parse_scaled(t: &str, bare: u64) -> Result<u64, SizeError> {
    check_sign(t)?;
    let parts = split_number(t).ok_or_else(|| SizeError::NotANumber(t.to_string()))?;
    let unit = parts.rest.trim_start();
    let mult = unit_multiplier(unit, bare).ok_or_else(|| SizeError::UnknownUnit { input: t.to_string(), unit: unit.to_string() })?;
    match scale(parts.int, parts.frac, mult) {
        None => Err(SizeError::TooLarge(t.to_string())),
        Some(0) => Err(SizeError::Zero(t.to_string())),
        Some(n) => Ok(n),
    }
}

/// Rejects empty input and a leading minus sign before the general
/// "not a number" message, because those deserve a sharper one.
fn check_sign(t: &str) -> Result<(), SizeError> {
    if t.is_empty() {
        Err(SizeError::Empty)
    } else if t.starts_with('-') {
        Err(SizeError::Negative(t.to_string()))
    } else {
        Ok(())
    }
}

/// A number split into its digit strings and what follows it.
struct NumberParts<'a> {
    int: &'a str,
    frac: &'a str,
    rest: &'a str,
}

/// Splits `digits ['.' digits] rest`; `None` unless it starts with a
/// digit, or if a '.' is not followed by a digit.
fn split_number(t: &str) -> Option<NumberParts<'_>> {
    let int_len = t.bytes().take_while(u8::is_ascii_digit).count();
    if int_len == 0 {
        return None;
    }
    let (int, after) = t.split_at(int_len);
    let Some(tail) = after.strip_prefix('.') else {
        return Some(NumberParts { int, frac: "", rest: after });
    };
    let frac_len = tail.bytes().take_while(u8::is_ascii_digit).count();
    if frac_len == 0 {
        return None;
    }
    let (frac, rest) = tail.split_at(frac_len);
    Some(NumberParts { int, frac, rest })
}

/// Bytes per unit for a (possibly empty) unit word, case-insensitively.
fn unit_multiplier(unit: &str, bare: u64) -> Option<u64> {
    if unit.is_empty() {
        return Some(bare);
    }
    let lower = unit.to_ascii_lowercase();
    if lower == "b" {
        return Some(1);
    }
    let mut chars = lower.chars();
    let letter = chars.next()?;
    let exp = "kmgtpe".find(letter)? as u32 + 1;
    // After the letter only "", "b" or "ib" may follow (K, KB, KiB).
    matches!(chars.as_str(), "" | "b" | "ib").then(|| 1u64 << (10 * exp))
}

/// `int.frac * mult`, rounded down; `None` if it exceeds `u64::MAX`.
fn scale(int: &str, frac: &str, mult: u64) -> Option<u64> {
    let whole = digits_value(int)?.checked_mul(mult as u128)?;
    // 19 fractional digits keep frac * mult below 2^124 (no u128 overflow)
    // and the error below 2^60 / 10^19 < 1 byte; later digits cannot
    // change the rounded-down result.
    let frac = &frac[..frac.len().min(19)];
    let part = digits_value(frac)? * mult as u128 / 10u128.pow(frac.len() as u32);
    u64::try_from(whole.checked_add(part)?).ok()
}

/// The value of an ASCII digit string; `None` if it exceeds `u64::MAX`
/// (the caller reports that as "too large").
fn digits_value(digits: &str) -> Option<u128> {
    digits.bytes().try_fold(0u128, |acc, d| {
        let v = acc * 10 + u128::from(d - b'0');
        (v <= u128::from(u64::MAX)).then_some(v)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(s: &str) -> u64 {
        match parse_memory_size(s) {
            Ok(MemorySize::Bytes(n)) => n,
            other => panic!("{s:?} gave {other:?}"),
        }
    }

    #[test]
    fn bare_number_is_kib_for_memory() {
        assert_eq!(bytes("1"), 1024);
        assert_eq!(bytes("100"), 100 * 1024);
    }

    #[test]
    fn bare_number_is_mib_for_nsort_memory() {
        assert_eq!(parse_nsort_memory_size("4000"), Ok(MemorySize::Bytes(4000 << 20)));
        assert_eq!(parse_nsort_memory_size("124000M"), Ok(MemorySize::Bytes(124000 << 20)));
        assert_eq!(parse_nsort_memory_size("50%"), Ok(MemorySize::PercentOfRam(50.0)));
    }

    #[test]
    fn bare_number_is_bytes_for_byte_count() {
        assert_eq!(parse_byte_count("4096"), Ok(4096));
        assert_eq!(parse_byte_count("16M"), Ok(16 << 20));
    }

    #[test]
    fn every_unit_spelling() {
        for (letter, exp) in [("k", 1), ("m", 2), ("g", 3), ("t", 4), ("p", 5), ("e", 6)] {
            let want = 3u64 << (10 * exp);
            let upper = letter.to_uppercase();
            for unit in [
                letter.to_string(),
                upper.clone(),
                format!("{letter}b"),
                format!("{upper}B"),
                format!("{upper}iB"),
                format!("{letter}ib"),
                format!("{upper}IB"),
            ] {
                assert_eq!(bytes(&format!("3{unit}")), want, "unit {unit}");
            }
        }
        assert_eq!(bytes("5b"), 5);
        assert_eq!(bytes("5B"), 5);
    }

    #[test]
    fn fractions_and_spaces() {
        assert_eq!(bytes("1.5G"), 3 << 29);
        assert_eq!(bytes("0.5"), 512);
        assert_eq!(bytes("1.5 GiB"), 3 << 29);
        assert_eq!(bytes("  64M \n"), 64 << 20);
        // Rounded down to a whole byte.
        assert_eq!(bytes("1.0001K"), 1024);
        assert_eq!(bytes("2.9b"), 2);
        // Many fractional digits do not overflow.
        assert_eq!(bytes("1.99999999999999999999999999E"), (2u64 << 60) - 1);
    }

    #[test]
    fn percent_of_ram() {
        assert_eq!(parse_memory_size("50%"), Ok(MemorySize::PercentOfRam(50.0)));
        assert_eq!(parse_memory_size("0.5%"), Ok(MemorySize::PercentOfRam(0.5)));
        assert_eq!(parse_memory_size("100%"), Ok(MemorySize::PercentOfRam(100.0)));
        assert_eq!(parse_memory_size("12.5 %"), Ok(MemorySize::PercentOfRam(12.5)));
    }

    #[test]
    fn to_bytes_resolves_percent() {
        assert_eq!(MemorySize::PercentOfRam(50.0).to_bytes(1 << 30), 1 << 29);
        assert_eq!(MemorySize::PercentOfRam(0.001).to_bytes(100), 1);
        assert_eq!(MemorySize::Bytes(7).to_bytes(1 << 30), 7);
    }

    #[test]
    fn limits() {
        assert_eq!(bytes("15E"), 15 << 60);
        assert_eq!(parse_byte_count("18446744073709551615"), Ok(u64::MAX));
        assert_eq!(bytes("15.99999999999999999999E"), u64::MAX);
    }

    fn err(r: Result<impl std::fmt::Debug, SizeError>) -> String {
        r.expect_err("should fail").to_string()
    }

    #[test]
    fn error_messages() {
        let m = err(parse_memory_size(""));
        assert_eq!(m, "empty size: expected a number with an optional unit, as in 512M or 2G");
        assert_eq!(err(parse_memory_size("   ")), m);
        assert_eq!(err(parse_memory_size("-5M")), "invalid size '-5M': sizes cannot be negative");
        assert_eq!(err(parse_memory_size("-5%")), "invalid size '-5%': sizes cannot be negative");
        assert_eq!(err(parse_memory_size("0")), "invalid size '0': must be at least one byte");
        assert_eq!(err(parse_memory_size("0.1b")), "invalid size '0.1b': must be at least one byte");
        assert_eq!(err(parse_memory_size("16E")), "invalid size '16E': too large (the limit is 16 EiB)");
        assert_eq!(err(parse_byte_count("18446744073709551616")), "invalid size '18446744073709551616': too large (the limit is 16 EiB)");
        assert_eq!(
            err(parse_memory_size("99999999999999999999999999999999K")),
            "invalid size '99999999999999999999999999999999K': too large (the limit is 16 EiB)"
        );
        assert_eq!(
            err(parse_memory_size("abc")),
            "invalid size 'abc': expected a number with an optional unit \
             (b, K, M, G, T, P, E), as in 512M or 1.5G"
        );
        assert_eq!(
            err(parse_memory_size("12X")),
            "invalid size '12X': unknown unit 'X'; expected b (bytes) or \
             K, M, G, T, P, E (powers of 1024; KB and KiB mean the same as K)"
        );
        assert!(err(parse_memory_size("1Z")).contains("unknown unit 'Z'"));
        assert!(err(parse_memory_size("1Gx")).contains("unknown unit 'Gx'"));
        assert!(err(parse_memory_size("1bb")).contains("unknown unit 'bb'"));
    }

    #[test]
    fn malformed_numbers() {
        for s in ["1.", ".5", "1..5", "1.5.5G", "+5", "G", "1,5G", "0x10", "%", "1e3"] {
            assert!(parse_memory_size(s).is_err(), "{s:?} should fail");
        }
        assert!(err(parse_memory_size(".5")).contains("expected a number"));
        assert!(err(parse_memory_size("5G%")).contains("expected a number"));
    }

    #[test]
    fn percent_errors() {
        let range = "a percentage of RAM must be more than 0 and at most 100";
        assert_eq!(err(parse_memory_size("0%")), format!("invalid size '0%': {range}"));
        assert_eq!(err(parse_memory_size("0.0%")), format!("invalid size '0.0%': {range}"));
        assert_eq!(err(parse_memory_size("100.5%")), format!("invalid size '100.5%': {range}"));
        assert_eq!(err(parse_byte_count("50%")), "invalid size '50%': a percentage is not allowed here; give a size such as 16M");
    }

    #[test]
    fn format_exact_and_approximate() {
        assert_eq!(format_bytes(0), "0 B");
        assert_eq!(format_bytes(512), "512 B");
        assert_eq!(format_bytes(1023), "1023 B");
        assert_eq!(format_bytes(1024), "1 KiB");
        assert_eq!(format_bytes(64 << 20), "64 MiB");
        assert_eq!(format_bytes(3 << 29), "1.5 GiB");
        assert_eq!(format_bytes(1000), "1000 B");
        assert_eq!(format_bytes(1_000_000), "976.6 KiB");
        assert_eq!(format_bytes((1 << 30) + 1), "1.0 GiB");
        assert_eq!(format_bytes((1 << 20) - 1), "1.0 MiB");
        assert_eq!(format_bytes(u64::MAX), "16.0 EiB");
        assert_eq!(format_bytes(1 << 60), "1 EiB");
    }

    #[test]
    fn format_round_trips_exact_values() {
        for n in [1u64, 512, 4096, 64 << 20, 3 << 29, 1 << 40, 7 << 50] {
            assert_eq!(parse_byte_count(&format_bytes(n)), Ok(n), "{n}");
        }
    }
}
