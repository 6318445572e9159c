//! The properties the fuzz targets check, one function per target, shared by the `cargo fuzz`
//! targets (through the `xsort-fuzz` library) and by the stable test that replays the checked-in
//! seeds and regressions (`crates/core/tests/fuzz_seeds.rs` includes this file with `#[path]`), so
//! CI checks every saved input exactly as the fuzzer did.
//!
//! Every check takes raw bytes and panics when a property fails. Parsers must never panic and must
//! answer the same way twice; orderings must be total preorders (reflexive, antisymmetric,
//! transitive) and agree with the prefixes the sort engine orders by before it compares.
//!
//! Input formats (seeds are plain text, so they can be read and written by hand):
//! - `spec`, `keydef`, `key_bytes`, `size`: the whole input is the text to parse (UTF-8; anything
//!   else is skipped, as a command line that is not UTF-8 never reaches these parsers).
//! - `order_*`: a header line of sort options, then up to [`MAX_LINES`] lines to compare. The header
//!   holds space-separated words: `-kKEYDEF`, `-tC` (C one byte; `-t` alone is a space), `-s`,
//!   `-u`, or `-LETTERS` (global ordering options such as `-nr`). `order_lines` takes the header as
//!   it is; the other `order_*` targets add their ordering letter (`-n`, `-g`, `-h`, `-M`, `-V`) to the
//!   global options, so that every key without options of its own uses it.
//! - `record_key`: a header line `RECORD_SIZE KEY...` (each KEY as `--key-bytes` takes it), then
//!   the records, back to back, [`RECORD_SIZE_LIMIT`] bytes at most each.
//! - `csv`: a header line of `-k` arguments (space-separated; the first byte of the line picks the
//!   separator: `,` tab or `;` by its value mod 3), then a CSV stream. Its records must end at the
//!   same places however the stream is cut into pieces, a strict scan must agree with a lenient one
//!   wherever it finds no fault, and the order of up to [`MAX_LINES`] records by those keys must be
//!   a total preorder that agrees with its prefixes; the records' fields and JSON keys on them must
//!   not panic.

use std::cmp::Ordering;

use xsort_core::key::{ByteOrder, KeyType};
use xsort_core::order::{KeyField, LineOrder, LineOrderConfig, OrderFlags};
use xsort_core::size::{format_bytes, parse_byte_count, parse_memory_size, parse_nsort_memory_size, MemorySize, SizeError};
use xsort_core::spec::{parse_spec, Endian, FieldType, FileSpec, NsortSpec};
use xsort_core::{KeyPart, KeySpec, SortError};

/// A fuzz target's check.
pub type Check = fn(&[u8]);

/// Every target: its name (the `cargo fuzz` target and the folder of its seeds) and its check.
pub const TARGETS: &[(&str, Check)] = &[
    ("spec", spec),
    ("keydef", keydef),
    ("key_bytes", key_bytes),
    ("size", size),
    ("record_key", record_key),
    ("order_lines", order_lines),
    ("order_numeric", order_numeric),
    ("order_general", order_general),
    ("order_human", order_human),
    ("order_month", order_month),
    ("order_version", order_version),
    ("csv", csv),
];

/// Lines an `order_*` input may compare (more are ignored): every ordered triple of them is checked.
pub const MAX_LINES: usize = 4;

/// The largest record a `record_key` input may declare.
pub const RECORD_SIZE_LIMIT: usize = 256;

/// The records a `record_key` input may hold (more are ignored).
const MAX_RECORDS: usize = 4;

// ---------------------------------------------------------------------
// Parsers

/// Nsort statements (`--spec`): no panic, the same answer twice and after a trailing comment, a
/// one-line error, and a spec whose every part is valid and fits its record.
pub fn spec(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let parsed = parse_spec(text);
    assert_eq!(parsed, parse_spec(text), "parse_spec is not deterministic");
    assert_eq!(parsed, parse_spec(&format!("{text}\n# a comment")), "a trailing comment changed the spec");
    match parsed {
        Err(e) => {
            let msg = e.to_string();
            assert!(!msg.is_empty() && !msg.contains('\n'), "spec error is not one line: {msg:?}");
        }
        Ok(s) => check_spec(&s),
    }
}

/// What a successfully parsed spec promises its consumers.
fn check_spec(s: &NsortSpec) {
    assert!(s.processes.is_none_or(|p| p >= 1), "processes {:?}", s.processes);
    if let Some(m) = s.memory {
        check_memory(m);
    }
    assert!(s.record_size.is_none() || s.record_delimiter.is_none(), "both a record size and a delimiter");
    assert!(s.record_size.is_none_or(|r| r >= 1), "record size {:?}", s.record_size);
    for f in &s.fields {
        assert!(f.endian.is_none() || f.field_type.is_binary_number(), "byte order on a text field: {f:?}");
        if f.delimiter.is_some() {
            assert!((f.offset, f.size) == (0, 0) && !f.field_type.is_binary_number(), "delimited field {f:?}");
        } else {
            check_extent(f.offset, f.size, f.field_type, s.record_size);
        }
    }
    for k in &s.keys {
        assert!(k.endian.is_none() || k.field_type.is_binary_number(), "byte order on a text key: {k:?}");
        let field = k.field.as_ref().map(|n| s.fields.iter().find(|f| &f.name == n).expect("a key names a field that exists"));
        // A key of separated records by position names a column, not bytes.
        let column = field.is_none() && s.separator.is_some();
        if !column && field.is_none_or(|f| f.delimiter.is_none()) {
            check_extent(k.offset, k.size, k.field_type, s.record_size);
        }
    }
    for f in &s.summarize {
        assert!(matches!(f.field_type, FieldType::Integer | FieldType::Unsigned) && [1, 2, 4, 8].contains(&f.size), "summed field {f:?}");
    }
    for f in &s.in_files {
        check_file(f);
        assert!(!f.preallocate && !f.sync, "input with output options: {f:?}");
    }
    s.out_file.iter().chain(&s.temp_dirs).for_each(check_file);
    // The keys of fixed-size records must be keys the sorter takes (the CLI maps them so).
    if let (Some(r), None) = (s.record_size, s.record_delimiter) {
        let parts: Vec<KeyPart> =
            s.keys.iter().map(|k| KeyPart::typed(k.offset, k.size, key_type(k.field_type, k.endian), k.descending)).collect();
        if let Err(e) = KeySpec::new(parts).resolve(r) {
            panic!("spec keys {:?} do not resolve against the {r}-byte record: {e}", s.keys);
        }
    }
}

/// A field or key at a fixed place: at least one byte, a size its type allows, inside the record.
fn check_extent(offset: usize, size: usize, t: FieldType, record: Option<usize>) {
    assert!(size >= 1, "empty extent at {offset}");
    let allowed: &[usize] = match t {
        FieldType::Integer | FieldType::Unsigned => &[1, 2, 4, 8],
        FieldType::Float => &[4],
        FieldType::Double => &[8],
        FieldType::Character | FieldType::Decimal | FieldType::Packed | FieldType::Zoned | FieldType::Month => &[],
    };
    assert!(allowed.is_empty() || allowed.contains(&size), "a {t} of {size} bytes");
    let end = offset.checked_add(size).expect("extent overflows");
    assert!(record.is_none_or(|r| end <= r), "extent {offset}..{end} past the {record:?}-byte record");
}

fn check_file(f: &FileSpec) {
    assert!(f.transfer_size.is_none_or(|t| t >= 4096 && t % 4096 == 0), "transfer size {:?}", f.transfer_size);
    assert!(f.count.is_none_or(|c| c >= 1), "count {:?}", f.count);
}

/// The key type the CLI gives a spec's field type (binary numbers without a byte order are native).
fn key_type(t: FieldType, endian: Option<Endian>) -> KeyType {
    let order = match endian {
        Some(Endian::Big) => ByteOrder::Big,
        Some(Endian::Little) => ByteOrder::Little,
        None => ByteOrder::NATIVE,
    };
    match t {
        FieldType::Character => KeyType::Char,
        FieldType::Integer => KeyType::Signed(order),
        FieldType::Unsigned => KeyType::Unsigned(order),
        FieldType::Float | FieldType::Double => KeyType::Float(order),
        FieldType::Decimal => KeyType::Decimal,
        FieldType::Packed => KeyType::Packed,
        FieldType::Zoned => KeyType::Zoned,
        FieldType::Month => KeyType::Month,
    }
}

/// `-k KEYDEF` and the obsolescent `+POS1 -POS2` (the input split at its first space): no panic,
/// the same answer twice, one-line errors, and a key that prints back (in canonical form) to itself.
pub fn keydef(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let parsed = KeyField::parse(text);
    assert_eq!(format!("{parsed:?}"), format!("{:?}", KeyField::parse(text)), "KeyField::parse is not deterministic");
    match parsed {
        Err(e) => check_config_error(&e, text),
        Ok(k) => {
            assert!(!k.is_obsolete());
            let canonical = render_keydef(&k);
            match KeyField::parse(&canonical) {
                Ok(again) => assert_eq!(again, k, "{text:?} printed as {canonical:?} parses to another key"),
                Err(e) => panic!("{text:?} printed as {canonical:?} does not parse: {e}"),
            }
            // Building an order from the key fails only for incompatible options.
            let cfg = LineOrderConfig { keys: vec![k], ..LineOrderConfig::default() };
            if let Err(e) = LineOrder::new(cfg) {
                assert!(e.to_string().contains("are incompatible"), "{text:?}: {e}");
            }
        }
    }
    let (start, end) = text.split_once(' ').map_or((text, None), |(s, e)| (s, Some(e)));
    match KeyField::parse_obsolete(start, end) {
        Ok(Some(k)) => assert!(k.is_obsolete()),
        Ok(None) => {}
        Err(e) => check_config_error(&e, text),
    }
}

/// A key in the canonical `-k` form: `F.C[OPTS][,F.C[b]]`, every option on the start position.
fn render_keydef(k: &KeyField) -> String {
    let (sword, schar, eword, echar) = k.positions();
    let f = k.flags();
    let mut s = if sword == usize::MAX { "1".to_string() } else { format!("{}.{}", sword + 1, schar + 1) };
    for (on, c) in [
        (f.blank_start, 'b'),
        (f.dictionary, 'd'),
        (f.fold, 'f'),
        (f.general_numeric, 'g'),
        (f.human_numeric, 'h'),
        (f.nonprinting, 'i'),
        (f.month, 'M'),
        (f.numeric, 'n'),
        (f.random, 'R'),
        (f.reverse, 'r'),
        (f.version, 'V'),
    ] {
        if on {
            s.push(c);
        }
    }
    if eword != usize::MAX {
        s.push_str(&format!(",{}.{echar}", eword + 1));
        if f.blank_end {
            s.push('b');
        }
    }
    s
}

/// A configuration error: one line, unless the input itself holds a line break (messages quote it).
fn check_config_error(e: &SortError, input: &str) {
    let SortError::BadOption(msg) = e else { panic!("{input:?}: not a configuration error: {e:?}") };
    assert!(!msg.is_empty());
    assert!(input.contains(['\n', '\r']) || !msg.contains('\n'), "error is not one line: {msg:?}");
}

/// `--key-bytes OFFSET:LENGTH[:TYPE][:r]`: no panic, the part printed back parses to itself, its
/// length suits its type, and it resolves against a record just large enough and no smaller.
pub fn key_bytes(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    match KeyPart::parse_key_bytes(text) {
        Err(e) => {
            check_config_error(&e, text);
            assert!(e.to_string().starts_with(&format!("invalid --key-bytes '{text}'")), "{e}");
        }
        Ok(p) => {
            assert!(p.len >= 1 && p.kind.allows_length(p.len), "{text:?} gave {p:?}");
            let printed = p.to_string();
            match KeyPart::parse_key_bytes(&printed) {
                Ok(again) => assert_eq!(again, p, "{text:?} printed as {printed:?}"),
                Err(e) => panic!("{text:?} printed as {printed:?} does not parse: {e}"),
            }
            if let Some(end) = p.offset.checked_add(p.len) {
                let key = KeySpec::new(vec![p]);
                assert!(key.resolve(end).is_ok(), "{p} does not fit a {end}-byte record");
                assert!(key.resolve(end - 1).is_err(), "{p} fits a {}-byte record", end - 1);
            }
        }
    }
}

/// Sizes (`-S`, `-memory=`, `transfer_size=`): no panic; a size is at least a byte and a share of
/// RAM lies in (0, 100]; the three parsers agree (a bare number being KiB, MiB or bytes); and
/// what [`format_bytes`] prints parses back to the size, exactly or within its rounding.
pub fn size(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let memory = parse_memory_size(text);
    let nsort = parse_nsort_memory_size(text);
    let count = parse_byte_count(text);
    for m in [&memory, &nsort].into_iter().flatten() {
        check_memory(*m);
    }
    for e in [memory.as_ref().err(), nsort.as_ref().err(), count.as_ref().err()].into_iter().flatten() {
        let msg = e.to_string();
        assert!(text.contains(['\n', '\r']) || !msg.contains('\n'), "error is not one line: {msg:?}");
    }
    if let Ok(MemorySize::PercentOfRam(p)) = memory {
        assert_eq!(nsort, Ok(MemorySize::PercentOfRam(p)), "{text:?}");
        assert!(matches!(count, Err(SizeError::PercentNotAllowed(_))), "{text:?}: {count:?}");
    }
    if let Ok(n) = count {
        assert!(n >= 1);
        agrees_scaled(text, n, &memory, 1 << 10);
        agrees_scaled(text, n, &nsort, 1 << 20);
        check_format_round_trip(n);
    }
    if let Ok(MemorySize::Bytes(n)) = memory {
        check_format_round_trip(n);
    }
    if data.len() >= 8 {
        check_format_round_trip(u64::from_le_bytes(data[..8].try_into().expect("8 bytes")));
    }
}

fn check_memory(m: MemorySize) {
    match m {
        MemorySize::Bytes(n) => assert!(n >= 1),
        MemorySize::PercentOfRam(p) => assert!(p > 0.0 && p <= 100.0, "{p}% of RAM"),
    }
}

/// `text` is `n` bytes as a byte count; as a memory size whose bare number is worth `bare` bytes it
/// must be the same `n` (it has a unit), or `n.fraction` bare units (it has none), or too large.
fn agrees_scaled(text: &str, n: u64, parsed: &Result<MemorySize, SizeError>, bare: u64) {
    match parsed {
        Ok(MemorySize::Bytes(m)) => {
            let (m, n, bare) = (*m as u128, n as u128, bare as u128);
            assert!(m == n || (m >= n * bare && m < (n + 1) * bare), "{text:?}: {n} bytes, but {m} as a memory size");
        }
        Err(SizeError::TooLarge(_)) => {}
        other => panic!("{text:?}: {n} bytes, but {other:?} as a memory size"),
    }
}

/// [`format_bytes`] prints whole units exactly and others to a tenth of their unit, so it parses
/// back to the same size or one within a twentieth of its unit (hence of itself); only sizes that
/// round up to 16.0 EiB are too large to parse back, and zero ("0 B") is no size.
fn check_format_round_trip(n: u64) {
    let printed = format_bytes(n);
    if n == 0 {
        assert!(matches!(parse_byte_count(&printed), Err(SizeError::Zero(_))), "{printed:?}");
        return;
    }
    match parse_byte_count(&printed) {
        Ok(back) if !printed.contains('.') => assert_eq!(back, n, "{n} printed as {printed:?}"),
        Ok(back) => assert!(back.abs_diff(n) <= n / 20, "{n} printed as {printed:?} reads back as {back}"),
        Err(SizeError::TooLarge(_)) if printed == "16.0 EiB" => {}
        Err(e) => panic!("{n} printed as {printed:?} does not parse: {e}"),
    }
}

// ---------------------------------------------------------------------
// Orderings

/// Splits `data` at its first newline: the header and the rest.
fn header(data: &[u8]) -> (&[u8], &[u8]) {
    match data.iter().position(|&b| b == b'\n') {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[]),
    }
}

/// Binary records under `--key-bytes` keys: the comparison is a total preorder and equals the
/// memcmp order of the normalized keys, whose first bytes are exactly the prefix the entries hold.
pub fn record_key(data: &[u8]) {
    let (head, body) = header(data);
    let Ok(head) = std::str::from_utf8(head) else { return };
    let mut words = head.split(' ');
    let Some(Ok(record)) = words.next().map(str::parse::<usize>) else { return };
    if record == 0 || record > RECORD_SIZE_LIMIT {
        return;
    }
    let Ok(parts) = words.map(KeyPart::parse_key_bytes).collect::<Result<Vec<_>, _>>() else { return };
    let Ok(key) = KeySpec::new(parts).resolve(record) else { return };
    let records: Vec<&[u8]> = body.chunks_exact(record).take(MAX_RECORDS).collect();
    let normalized: Vec<Vec<u8>> = records.iter().map(|r| key.normalized(r)).collect();
    for (r, norm) in records.iter().zip(&normalized) {
        assert_eq!(norm.len(), key.len());
        for n in 1..=16 {
            let mut want = [0u8; 16];
            let take = n.min(norm.len());
            want[..take].copy_from_slice(&norm[..take]);
            assert_eq!(key.prefix(r, n), u128::from_be_bytes(want), "{n}-byte prefix of {r:?}");
        }
    }
    check_total_preorder(&records, |a, b| key.compare(a, b));
    for (i, a) in records.iter().enumerate() {
        for (j, b) in records.iter().enumerate() {
            assert_eq!(key.compare(a, b), normalized[i].cmp(&normalized[j]), "normalized keys order {a:?} {b:?} otherwise");
        }
    }
}

/// Any sort options (see the module documentation for the header).
pub fn order_lines(data: &[u8]) {
    check_lines(data, None);
}

/// `-n` on the header's keys and lines.
pub fn order_numeric(data: &[u8]) {
    check_lines(data, Some('n'));
}

/// `-g` on the header's keys and lines.
pub fn order_general(data: &[u8]) {
    check_lines(data, Some('g'));
}

/// `-h` on the header's keys and lines.
pub fn order_human(data: &[u8]) {
    check_lines(data, Some('h'));
}

/// `-M` on the header's keys and lines.
pub fn order_month(data: &[u8]) {
    check_lines(data, Some('M'));
}

/// `-V` on the header's keys and lines.
pub fn order_version(data: &[u8]) {
    check_lines(data, Some('V'));
}

/// The options of an `order_*` header (see the module documentation); `None` for an invalid key.
fn parse_header(head: &[u8], letter: Option<char>) -> Option<LineOrderConfig> {
    let mut cfg = LineOrderConfig { random_seed: b"xsort fuzz".to_vec(), ..LineOrderConfig::default() };
    let mut global = OrderFlags::default();
    for word in head.split(|&b| b == b' ').filter(|w| !w.is_empty()) {
        match word {
            [b'-', b'k', def @ ..] => cfg.keys.push(KeyField::parse(std::str::from_utf8(def).ok()?).ok()?),
            [b'-', b't'] => cfg.separator = Some(b' '),
            [b'-', b't', t] => cfg.separator = Some(*t),
            b"-s" => cfg.stable = true,
            b"-u" => cfg.unique = true,
            [b'-', letters @ ..] => letters.iter().for_each(|&c| {
                global.set_global(c as char);
            }),
            _ => {}
        }
    }
    if let Some(c) = letter {
        global.set_global(c);
    }
    cfg.global = global;
    Some(cfg)
}

/// The properties of [`LineOrder`] on the lines of an `order_*` input: `compare` is a total
/// preorder; the prefix of a line (and of each comparison level) agrees with it; the levels
/// decide exactly as `compare` does; and --debug's output does not panic.
fn check_lines(data: &[u8], letter: Option<char>) {
    let (head, body) = header(data);
    let Some(cfg) = parse_header(head, letter) else { return };
    let Ok(order) = LineOrder::new(cfg.clone()) else { return };
    let lines: Vec<&[u8]> = if body.is_empty() { vec![] } else { body.split(|&b| b == b'\n').take(MAX_LINES).collect() };
    for key in &cfg.keys {
        check_key_fields(&cfg, key, &lines);
    }
    check_plain_decimals(&lines);
    let _ = order.debug_warnings();
    let mut out = Vec::new();
    for line in &lines {
        order.debug_annotate(line, &mut out);
        assert_eq!(order.prefix(line) as u32, 0, "prefix uses its low 32 bits");
    }
    check_total_preorder(&lines, |a, b| order.compare(a, b));
    let levels = order.levels();
    for a in &lines {
        for b in &lines {
            let c = order.compare(a, b);
            let (pa, pb) = (order.prefix(a), order.prefix(b));
            assert!(pa >= pb || c == Ordering::Less, "prefix {pa:#x} < {pb:#x} but compare({a:?}, {b:?}) = {c:?}");
            assert!(c != Ordering::Equal || pa == pb, "{a:?} == {b:?} but prefixes {pa:#x} {pb:#x}");
            // The first level that differs decides; lines equal at every level are equal.
            let mut decided = false;
            for level in 0..levels {
                let equal = order.level_equal(a, b, level);
                assert_eq!(equal, order.level_equal(b, a, level), "level {level} of {a:?} {b:?} is not symmetric");
                assert_eq!(equal, order.level_matcher(a, level)(b), "level {level}: matcher and level_equal disagree on {a:?} {b:?}");
                let (la, lb) = (order.level_prefix(a, level), order.level_prefix(b, level));
                assert_eq!(la as u32, 0, "level prefix uses its low 32 bits");
                assert!(la >= lb || c == Ordering::Less, "level {level} prefix {la:#x} < {lb:#x} but compare({a:?}, {b:?}) = {c:?}");
                assert!(!equal || la == lb, "{a:?} == {b:?} at level {level} but prefixes {la:#x} {lb:#x}");
                if !equal {
                    assert_ne!(c, Ordering::Equal, "{a:?} {b:?} differ at level {level} but compare is Equal");
                    decided = true;
                    break;
                }
            }
            if !decided {
                assert_eq!(c, Ordering::Equal, "{a:?} {b:?} equal at every level but compare is {c:?}");
            }
            if order.is_memcmp() {
                assert_eq!(c, a.cmp(b), "memcmp order claimed for {a:?} {b:?}");
            }
            if order.is_plain_bytes() && c == Ordering::Equal {
                assert_eq!(a, b, "plain-bytes order claimed, yet different lines compare equal");
            }
        }
    }
}

/// On plain decimals (`-?D+(.D+)?`, at most 9 digits on each side, so at most 18 significant
/// digits, which a long double holds apart) `-n`, `-g` and `-h` agree: three parsers, one order.
fn check_plain_decimals(lines: &[&[u8]]) {
    let plain = |s: &[u8]| {
        let s = s.strip_prefix(b"-").unwrap_or(s);
        let (int, frac) = match s.iter().position(|&c| c == b'.') {
            Some(d) => (&s[..d], Some(&s[d + 1..])),
            None => (s, None),
        };
        let digits = |d: &[u8]| (1..=9).contains(&d.len()) && d.iter().all(u8::is_ascii_digit);
        digits(int) && frac.is_none_or(digits)
    };
    let lines: Vec<&[u8]> = lines.iter().copied().filter(|l| plain(l)).collect();
    if lines.len() < 2 {
        return;
    }
    let order = |c: char| {
        let mut global = OrderFlags::default();
        global.set_global(c);
        LineOrder::new(LineOrderConfig { global, stable: true, ..LineOrderConfig::default() }).expect("one ordering option")
    };
    let (n, g, h) = (order('n'), order('g'), order('h'));
    for a in &lines {
        for b in &lines {
            let by_n = n.compare(a, b);
            assert_eq!(by_n, g.compare(a, b), "-n and -g disagree on {a:?} {b:?}");
            assert_eq!(by_n, h.compare(a, b), "-n and -h disagree on {a:?} {b:?}");
        }
    }
}

/// A key's fields, found independently of the sorter: comparing lines by `key` alone (with `-s`)
/// is comparing, with the same options over whole lines, the bytes [`key_range`] picks out.
fn check_key_fields(cfg: &LineOrderConfig, key: &KeyField, lines: &[&[u8]]) {
    let by_key = LineOrderConfig { keys: vec![key.clone()], stable: true, unique: false, ..cfg.clone() };
    let Ok(by_key) = LineOrder::new(by_key) else { return };
    let mut flags = if key.has_own_flags() { key.flags() } else { cfg.global };
    let (blank_start, blank_end) = (flags.blank_start, flags.blank_end);
    (flags.blank_start, flags.blank_end) = (false, false);
    let whole = LineOrderConfig {
        keys: vec![],
        global: flags,
        separator: None,
        stable: true,
        unique: false,
        random_seed: cfg.random_seed.clone(),
        ..Default::default()
    };
    let Ok(whole) = LineOrder::new(whole) else { return };
    let text = |line: &'_ [u8]| -> Vec<u8> {
        let (b, e) = key_range(line, key.positions(), cfg.separator, blank_start, blank_end);
        line[b..e].to_vec()
    };
    for a in lines {
        for b in lines {
            let (ka, kb) = (text(a), text(b));
            assert_eq!(by_key.compare(a, b), whole.compare(&ka, &kb), "key {:?} of {a:?} {b:?}: fields {ka:?} {kb:?}", key.positions());
        }
    }
}

/// GNU's key range in `line`, from the line's fields as a list: with `-t C` the pieces between the
/// C bytes; without, each run of blanks with the non-blanks after it. A field past the last starts
/// and ends at the line's end. `positions` are [`KeyField::positions`].
fn key_range(line: &[u8], positions: (usize, usize, usize, usize), tab: Option<u8>, blank_start: bool, blank_end: bool) -> (usize, usize) {
    let (sword, schar, eword, echar) = positions;
    let len = line.len();
    let is_blank = |c: u8| matches!(c, b' ' | b'\t' | b'\n');
    let skip_blanks = |mut p: usize| {
        while p < len && is_blank(line[p]) {
            p += 1;
        }
        p
    };
    // The end of each field; field i starts where field i - 1 ends (after its separator with -t).
    let ends: Vec<usize> = match tab {
        Some(t) => line.iter().enumerate().filter(|&(_, &c)| c == t).map(|(i, _)| i).chain([len]).collect(),
        None => {
            let mut ends = Vec::new();
            let mut p = 0;
            while p < len {
                p = skip_blanks(p);
                while p < len && !is_blank(line[p]) {
                    p += 1;
                }
                ends.push(p);
            }
            ends
        }
    };
    let start = |i: usize| match i {
        0 => 0,
        _ => ends.get(i - 1).map_or(len, |&e| (e + usize::from(tab.is_some())).min(len)),
    };
    let end = |i: usize| ends.get(i).copied().unwrap_or(len);
    let mut beg = if sword == usize::MAX { 0 } else { start(sword) };
    if blank_start {
        beg = skip_blanks(beg);
    }
    let beg = beg.saturating_add(schar).min(len);
    let lim = if eword == usize::MAX {
        len
    } else if echar == 0 {
        end(eword)
    } else {
        let p = start(eword);
        let p = if blank_end { skip_blanks(p) } else { p };
        p.saturating_add(echar).min(len)
    };
    (beg, lim.max(beg))
}

/// `cmp` is reflexive, antisymmetric and transitive on `items` (every ordered pair and triple).
pub fn check_total_preorder<T: std::fmt::Debug>(items: &[T], cmp: impl Fn(&T, &T) -> Ordering) {
    for a in items {
        assert_eq!(cmp(a, a), Ordering::Equal, "{a:?} does not equal itself");
        for b in items {
            let ab = cmp(a, b);
            assert_eq!(ab, cmp(b, a).reverse(), "not antisymmetric: {a:?} {b:?}");
            for c in items {
                let (bc, ac) = (cmp(b, c), cmp(a, c));
                if ab != Ordering::Greater && bc != Ordering::Greater {
                    let want = if ab == Ordering::Equal && bc == Ordering::Equal { Ordering::Equal } else { Ordering::Less };
                    assert_eq!(ac, want, "not transitive: {a:?} {ab:?} {b:?} {bc:?} {c:?} but {ac:?}");
                }
            }
        }
    }
}

/// CSV records and their keys (see the module documentation for the input).
pub fn csv(data: &[u8]) {
    use xsort_core::csv::{CsvDialect, Scanner};
    let (head, body) = header(data);
    let separator = [b',', b'\t', b';'][head.first().map_or(0, |&b| b as usize % 3)];
    let lenient = CsvDialect::with_separator(separator);
    // The record ends of the stream scanned in pieces of `piece` bytes.
    let ends = |dialect: CsvDialect, piece: usize| -> Result<Vec<usize>, xsort_core::csv::Fault> {
        let mut scanner = Scanner::new(dialect, b'\n');
        let mut ends = Vec::new();
        for (k, chunk) in body.chunks(piece).enumerate() {
            let mut at = 0;
            while let Some(end) = scanner.find_end(&chunk[at..])? {
                ends.push(k * piece + at + end);
                at += end + 1;
            }
        }
        Ok(ends)
    };
    let whole = ends(lenient, body.len().max(1)).expect("a lenient scan finds no fault");
    for piece in [1, 2, 3, 7] {
        assert_eq!(ends(lenient, piece).expect("lenient"), whole, "pieces of {piece} bytes");
    }
    if let Ok(strict) = ends(CsvDialect { strict: true, ..lenient }, 5) {
        assert_eq!(strict, whole, "a strict scan without faults splits as a lenient one");
    }
    let mut records = Vec::new();
    let mut start = 0;
    for &end in whole.iter().take(MAX_LINES) {
        records.push(&body[start..end]);
        start = end + 1;
    }
    let Ok(text) = std::str::from_utf8(head) else { return };
    let keys: Vec<&str> = text.get(1..).unwrap_or_default().split(' ').filter(|k| !k.is_empty()).collect();
    for rec in &records {
        let _ = xsort_core::csv::values(rec, lenient);
        for path in [".", ".a", ".a[1].b"] {
            let key = xsort_core::json::JsonKey { path: xsort_core::json::JsonKey::parse(path).expect("path"), numeric: true, fold: true };
            let _ = key.text(rec);
        }
        let _ = xsort_core::json::check_line(rec);
    }
    let mut args = Vec::new();
    for k in keys.iter().take(3) {
        args.extend(["-k", k]);
    }
    let Ok(sort) = xsort_core::Sort::lines().csv(lenient).gnu_args(&args) else { return };
    let Ok(xsort_core::Order::Lines(order, _)) = sort.order() else { return };
    check_total_preorder(&records, |a, b| order.compare(a, b));
    for a in &records {
        for b in &records {
            if order.prefix(a) < order.prefix(b) {
                assert_eq!(order.compare(a, b), Ordering::Less, "prefixes disagree with the order: {a:?} {b:?}");
            }
        }
    }
}
