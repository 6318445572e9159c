//! Typed keys through the real `xsort` binary: records with integer, float, double and decimal
//! fields (duplicates, extremes, NaNs, signed zeros, malformed decimals) sorted one pass and spilled,
//! ascending and descending, by `--key-bytes OFFSET:LENGTH:TYPE[:r]` and by Nsort's typed `-field`
//! statements. The output is checked by decoding the keys with the test's own decoders: keys in
//! order, every record there once (count and an order-independent checksum, then the multiset),
//! equal keys in input order (a sequence number in each record), and byte for byte against a
//! stable sort by the same decoders. Bad typed keys fail with one line naming the option.

use crate::common::*;
use std::cmp::Ordering;

/// Record layout of the test data (64 bytes).
const REC: usize = 64;
/// i64 little endian.
const I64LE: usize = 0;
/// f32 big endian.
const F32BE: usize = 8;
/// f64 little endian.
const F64LE: usize = 12;
/// u16 big endian.
const U16BE: usize = 20;
/// Decimal text, 12 bytes.
const DEC: usize = 22;
const DEC_LEN: usize = 12;
/// i32 big endian.
const I32BE: usize = 34;
/// u32 little endian.
const U32LE: usize = 38;
/// i8.
const I8: usize = 42;
/// The record's index in the input (u64 big endian): stability and identity.
const SEQ: usize = 43;
// Bytes 51..64 are random filler.

// ------------------------------------------------------------------------------------------------
// Data

fn pick<T: Copy>(r: &mut Rng, xs: &[T]) -> T {
    xs[r.below(xs.len())]
}

fn f64_value(r: &mut Rng) -> f64 {
    match r.below(4) {
        0 => pick(
            r,
            &[
                0.0,
                -0.0,
                f64::INFINITY,
                f64::NEG_INFINITY,
                f64::NAN,
                -f64::NAN,
                f64::from_bits(0x7FF0_0000_0000_0001),
                f64::MIN,
                f64::MAX,
                f64::MIN_POSITIVE,
                f64::from_bits(1),
                -f64::from_bits(1),
                f64::from_bits(0x000F_FFFF_FFFF_FFFF),
            ],
        ),
        1 => (r.below(9) as f64 - 4.0) * 0.5, // many duplicates
        2 => f64::from_bits(r.next_u64()),
        _ => (r.next_u64() as i64 as f64) / 1e9,
    }
}

fn f32_value(r: &mut Rng) -> f32 {
    match r.below(4) {
        0 => pick(
            r,
            &[
                0.0,
                -0.0,
                f32::INFINITY,
                f32::NEG_INFINITY,
                f32::NAN,
                -f32::NAN,
                f32::MIN,
                f32::MAX,
                f32::from_bits(1),
                -f32::from_bits(0x007F_FFFF),
            ],
        ),
        1 => (r.below(9) as f32 - 4.0) * 0.25,
        2 => f32::from_bits(r.next_u64() as u32),
        _ => r.next_u64() as i32 as f32,
    }
}

fn int_value(r: &mut Rng, bits: u32) -> u64 {
    let mask = u64::MAX >> (64 - bits);
    let sign = 1u64 << (bits - 1);
    let v = match r.below(4) {
        0 => pick(r, &[0, 1, u64::MAX, sign, sign - 1, sign + 1]),
        1 => r.below(7) as u64, // duplicates
        2 => (r.below(7) as u64).wrapping_neg(),
        _ => r.next_u64(),
    };
    v & mask
}

/// Decimal text of at most 12 bytes, blank-padded on either side; some malformed.
fn dec_text(r: &mut Rng) -> [u8; DEC_LEN] {
    let s: String = match r.below(12) {
        0 => pick(r, &["", "abc", "1-2", "--5", "1.2.3", "+", ".", "- 7", "1e5", "0x10"]).to_string(),
        1 => pick(r, &["-0", "+0.000", "0", ".0", "00000", "99999999999", "-9999999999", "-.0000000001", "5.", "+.5"]).to_string(),
        _ => {
            let sign = pick(r, &["", "", "-", "+"]);
            let int: String = (0..r.below(5)).map(|_| char::from(b'0' + r.below(10) as u8)).collect();
            let frac: String = (0..r.below(4)).map(|_| char::from(b'0' + pick(r, &[0u8, 0, 5, 9, 1]))).collect();
            let int = if int.is_empty() && frac.is_empty() { "7".to_string() } else { int };
            if frac.is_empty() && r.below(2) == 0 {
                format!("{sign}{int}")
            } else {
                format!("{sign}{int}.{frac}")
            }
        }
    };
    let pad = DEC_LEN - s.len();
    let lead = r.below(pad + 1);
    let mut f = [b' '; DEC_LEN];
    f[lead..lead + s.len()].copy_from_slice(s.as_bytes());
    if r.below(10) == 0 {
        f[0] = b'\t';
    }
    f
}

/// `n` records with every typed field filled, the sequence number stamped.
fn typed_records(n: usize, seed: u64) -> Vec<u8> {
    let mut r = Rng::new(seed);
    let mut data = random_bytes(n * REC, seed ^ 0xF00D);
    for (i, rec) in data.chunks_exact_mut(REC).enumerate() {
        rec[I64LE..I64LE + 8].copy_from_slice(&int_value(&mut r, 64).to_le_bytes());
        rec[F32BE..F32BE + 4].copy_from_slice(&f32_value(&mut r).to_be_bytes());
        rec[F64LE..F64LE + 8].copy_from_slice(&f64_value(&mut r).to_le_bytes());
        rec[U16BE..U16BE + 2].copy_from_slice(&(int_value(&mut r, 16) as u16).to_be_bytes());
        rec[DEC..DEC + DEC_LEN].copy_from_slice(&dec_text(&mut r));
        rec[I32BE..I32BE + 4].copy_from_slice(&(int_value(&mut r, 32) as u32).to_be_bytes());
        rec[U32LE..U32LE + 4].copy_from_slice(&(int_value(&mut r, 32) as u32).to_le_bytes());
        rec[I8] = int_value(&mut r, 8) as u8;
        rec[SEQ..SEQ + 8].copy_from_slice(&(i as u64).to_be_bytes());
    }
    data
}

// ------------------------------------------------------------------------------------------------
// The test's own decoders and order

/// A decoded key value.
#[derive(Debug, PartialEq)]
enum Val {
    U(u64),
    I(i64),
    /// NaN is None (after every number, NaNs equal).
    F(Option<f64>),
    /// Not-a-number is None (before every number); else mantissa / 10^scale.
    D(Option<(i128, u32)>),
    C(Vec<u8>),
}

impl Val {
    fn order(&self, other: &Val) -> Ordering {
        match (self, other) {
            (Val::U(a), Val::U(b)) => a.cmp(b),
            (Val::I(a), Val::I(b)) => a.cmp(b),
            (Val::F(a), Val::F(b)) => match (a, b) {
                (None, None) => Ordering::Equal,
                (None, Some(_)) => Ordering::Greater,
                (Some(_), None) => Ordering::Less,
                (Some(x), Some(y)) => x.total_cmp(y),
            },
            (Val::D(a), Val::D(b)) => match (a, b) {
                (None, None) => Ordering::Equal,
                (None, Some(_)) => Ordering::Less,
                (Some(_), None) => Ordering::Greater,
                (Some((ma, sa)), Some((mb, sb))) => (ma * 10i128.pow(*sb)).cmp(&(mb * 10i128.pow(*sa))),
            },
            (Val::C(a), Val::C(b)) => a.cmp(b),
            _ => unreachable!("values of different types"),
        }
    }
}

/// A typed key as `--key-bytes OFFSET:LENGTH:TYPE[:r]` writes it.
#[derive(Clone, Debug)]
struct TKey {
    offset: usize,
    len: usize,
    ty: String,
    descending: bool,
}

fn tkey(spec: &str) -> TKey {
    let p: Vec<&str> = spec.split(':').collect();
    TKey {
        offset: p[0].parse().unwrap(),
        len: p[1].parse().unwrap(),
        ty: p.get(2).copied().unwrap_or("char").to_string(),
        descending: p.last() == Some(&"r"),
    }
}

fn decode(k: &TKey, rec: &[u8]) -> Val {
    let f = &rec[k.offset..k.offset + k.len];
    let le = k.ty.ends_with("le");
    let mut bytes = f.to_vec();
    if le {
        bytes.reverse();
    }
    let uint = bytes.iter().fold(0u64, |v, &b| (v << 8) | u64::from(b));
    let bits = 8 * k.len as u32;
    let float = |x: f64| Val::F(if x.is_nan() { None } else { Some(x) });
    match &k.ty[..1] {
        "u" => Val::U(uint),
        "i" => Val::I(((uint << (64 - bits)) as i64) >> (64 - bits)),
        "f" if k.len == 4 => float(f64::from(f32::from_bits(uint as u32))),
        "f" => float(f64::from_bits(uint)),
        "d" => Val::D(decode_decimal(f)),
        _ => Val::C(f.to_vec()),
    }
}

fn decode_decimal(f: &[u8]) -> Option<(i128, u32)> {
    let s = std::str::from_utf8(f).ok()?.trim_matches([' ', '\t']);
    let (neg, s) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    let digits = format!("{int}{frac}");
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let m: i128 = digits.parse().ok()?;
    Some((if neg { -m } else { m }, frac.len() as u32))
}

fn compare_typed(a: &[u8], b: &[u8], keys: &[TKey]) -> Ordering {
    for k in keys {
        let o = decode(k, a).order(&decode(k, b));
        let o = if k.descending { o.reverse() } else { o };
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

fn seq(rec: &[u8]) -> u64 {
    u64::from_be_bytes(rec[SEQ..SEQ + 8].try_into().unwrap())
}

/// An order-independent checksum of the records (sum of a hash of each).
fn checksum(data: &[u8]) -> u128 {
    data.chunks_exact(REC)
        .map(|r| r.iter().fold(0xCBF2_9CE4_8422_2325u64, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01B3)))
        .fold(0u128, |s, h| s.wrapping_add(u128::from(h)))
}

/// Checks that `out` is `input` sorted stably by `keys`: record count, checksum, the multiset,
/// every adjacent pair in key order, equal keys in input order, and equality with a stable sort.
fn assert_typed_sorted(out: &[u8], input: &[u8], keys: &[&str], what: &str) {
    let keys: Vec<TKey> = keys.iter().map(|k| tkey(k)).collect();
    assert_eq!(out.len() % REC, 0, "{what}: partial record in the output");
    assert_eq!(out.len() / REC, input.len() / REC, "{what}: record count");
    assert_eq!(checksum(out), checksum(input), "{what}: checksum (records lost, duplicated or changed)");
    let mut a: Vec<&[u8]> = out.chunks_exact(REC).collect();
    let mut b: Vec<&[u8]> = input.chunks_exact(REC).collect();
    let recs: Vec<&[u8]> = a.clone();
    for (i, w) in recs.windows(2).enumerate() {
        match compare_typed(w[0], w[1], &keys) {
            Ordering::Greater => panic!(
                "{what}: records {i} and {} out of order: {:?} then {:?}",
                i + 1,
                keys.iter().map(|k| decode(k, w[0])).collect::<Vec<_>>(),
                keys.iter().map(|k| decode(k, w[1])).collect::<Vec<_>>()
            ),
            Ordering::Equal => {
                assert!(seq(w[0]) < seq(w[1]), "{what}: records {i} and {} have equal keys but are not in input order", i + 1)
            }
            Ordering::Less => {}
        }
    }
    a.sort_unstable();
    b.sort_unstable();
    assert!(a == b, "{what}: the output is not a permutation of the input");
    let mut expect: Vec<&[u8]> = input.chunks_exact(REC).collect();
    expect.sort_by(|x, y| compare_typed(x, y, &keys));
    assert_same_records(out, &expect.concat(), REC, what);
}

// ------------------------------------------------------------------------------------------------
// Running

/// Sorts `data` with `args` one pass or spilled (checking which happened) and returns the output.
fn sort_with(data: &[u8], args: &[String], spilled: bool) -> Vec<u8> {
    let fx = Fixture::new();
    let input = fx.write("in.dat", data);
    let mut cmd = fx.cmd();
    cmd.args(args);
    if spilled {
        cmd.args(["-S", TINY]);
    }
    cmd.args(["--stats-json", "stats.json", "-o", "out.dat"]).arg(&input);
    ok(&mut cmd);
    let stats = read_stats(&fx.path("stats.json"));
    assert_eq!(stat_u64(&stats, "records"), (data.len() / REC) as u64);
    if spilled {
        assert!(stat_u64(&stats, "runs") >= 2, "{args:?}: the sort should have spilled: {stats}");
    } else {
        assert_eq!(stat_u64(&stats, "runs"), 0, "{args:?}: one pass expected: {stats}");
    }
    let out = std::fs::read(fx.path("out.dat")).unwrap();
    fx.assert_clean();
    out
}

/// Sorts by `--key-bytes` for each of `keys` (one pass and spilled) and checks the output.
fn check_keys(data: &[u8], keys: &[&str]) {
    for spilled in [false, true] {
        let mut args = vec![format!("--record-size={REC}")];
        args.extend(keys.iter().map(|k| format!("--key-bytes={k}")));
        let out = sort_with(data, &args, spilled);
        assert_typed_sorted(&out, data, keys, &format!("keys {keys:?}, spilled {spilled}"));
    }
}

/// 20 000 records: 1.28 MB, enough to spill with the tiny budget.
fn data() -> Vec<u8> {
    typed_records(20_000, 7)
}

#[test]
fn signed_integers_little_and_big_endian() {
    let d = data();
    check_keys(&d, &[&format!("{I64LE}:8:i64le")]);
    check_keys(&d, &[&format!("{I64LE}:8:i64le:r")]);
    check_keys(&d, &[&format!("{I32BE}:4:i32be")]);
    check_keys(&d, &[&format!("{I8}:1:i8:r")]);
}

#[test]
fn unsigned_integers_little_and_big_endian() {
    let d = data();
    check_keys(&d, &[&format!("{U32LE}:4:u32le")]);
    check_keys(&d, &[&format!("{U16BE}:2:u16be:r")]);
    check_keys(&d, &[&format!("{I64LE}:8:u64le")]);
    check_keys(&d, &[&format!("{I8}:1:u8")]);
}

#[test]
fn floats_and_doubles_with_nans_zeros_and_subnormals() {
    let d = data();
    check_keys(&d, &[&format!("{F64LE}:8:f64le")]);
    check_keys(&d, &[&format!("{F64LE}:8:f64le:r")]);
    check_keys(&d, &[&format!("{F32BE}:4:f32be")]);
    check_keys(&d, &[&format!("{F32BE}:4:f32be:r")]);
}

#[test]
fn decimal_text_with_malformed_fields() {
    let d = data();
    check_keys(&d, &[&format!("{DEC}:{DEC_LEN}:dec")]);
    check_keys(&d, &[&format!("{DEC}:{DEC_LEN}:dec:r")]);
    // Malformed fields come first ascending, last descending.
    let out = sort_with(&d, &[format!("--record-size={REC}"), format!("--key-bytes={DEC}:{DEC_LEN}:dec")], false);
    let first = &out[DEC..DEC + DEC_LEN];
    assert!(decode_decimal(first).is_none(), "a malformed decimal should come first: {:?}", String::from_utf8_lossy(first));
}

#[test]
fn several_typed_keys_mixed_with_bytes() {
    let d = data();
    // The small u16 and i8 domains tie often, so the later keys decide.
    check_keys(&d, &[&format!("{I8}:1:i8"), &format!("{F32BE}:4:f32be:r"), &format!("{DEC}:{DEC_LEN}:dec")]);
    check_keys(&d, &[&format!("{DEC}:3"), &format!("{F64LE}:8:f64le"), &format!("{I64LE}:8:i64le:r")]);
    check_keys(&d, &[&format!("{U16BE}:2:u16be:r"), &format!("{I32BE}:4:i32be"), &format!("{SEQ}:8:u64be")]);
}

#[test]
fn one_pass_and_radix_vs_merge_agree() {
    let d = typed_records(3000, 11);
    for method in ["radix", "merge"] {
        let args = vec![
            format!("--record-size={REC}"),
            format!("--key-bytes={F64LE}:8:f64le"),
            format!("--key-bytes={I64LE}:8:i64le:r"),
            format!("--method={method}"),
        ];
        let out = sort_with(&d, &args, false);
        assert_typed_sorted(&out, &d, &[&format!("{F64LE}:8:f64le"), &format!("{I64LE}:8:i64le:r")], method);
    }
}

// ------------------------------------------------------------------------------------------------
// Nsort's typed -field statements

/// Sorts with `--spec` (and the given record size in it) and checks against the equivalent keys.
fn check_spec(data: &[u8], spec: &str, keys: &[&str]) {
    for spilled in [false, true] {
        let out = sort_with(data, &["--spec".to_string(), format!("-format=size:{REC} {spec}")], spilled);
        assert_typed_sorted(&out, data, keys, &format!("spec {spec}, spilled {spilled}"));
    }
}

#[test]
fn nsort_typed_fields() {
    let d = data();
    check_spec(&d, &format!("-field=name:v,size:8,off:{I64LE},integer,little_endian -key=v,descending"), &[&format!("{I64LE}:8:i64le:r")]);
    check_spec(&d, &format!("-field=name:x,off:{F32BE},float,big_endian -key=x"), &[&format!("{F32BE}:4:f32be")]);
    check_spec(&d, &format!("-field=name:d,size:{DEC_LEN},off:{DEC},decimal -key=d,desc"), &[&format!("{DEC}:{DEC_LEN}:dec:r")]);
    check_spec(
        &d,
        &format!("-field=name:u,size:2,off:{U16BE},unsigned,big_endian -field=name:c,size:1,off:{I8},int -key=u -key=c,descending"),
        &[&format!("{U16BE}:2:u16be"), &format!("{I8}:1:i8:r")],
    );
    check_spec(&d, &format!("-key=offset:{I32BE},size:4,integer,big_endian,descending"), &[&format!("{I32BE}:4:i32be:r")]);
}

#[test]
fn nsort_binary_numbers_default_to_the_machine_byte_order() {
    let d = data();
    let (f64_key, u32_key) = if cfg!(target_endian = "little") {
        (format!("{F64LE}:8:f64le"), format!("{U32LE}:4:u32le"))
    } else {
        (format!("{F64LE}:8:f64be"), format!("{U32LE}:4:u32be"))
    };
    check_spec(&d, &format!("-field=name:d,off:{F64LE},double -key=d"), &[&f64_key]);
    check_spec(&d, &format!("-field=name:n,off:{U32LE},unsigned -key=n"), &[&u32_key]);
}

// ------------------------------------------------------------------------------------------------
// Errors

/// Runs with a valid input and `args`; asserts the error contract and that the message contains
/// every string of `names`.
fn fails(args: &[&str], names: &[&str]) -> String {
    let fx = Fixture::new();
    fx.write("in", &typed_records(10, 1));
    fx.write("out", b"kept");
    let msg = fail(fx.cmd().args(args).args(["-o", "out", "in"]));
    for n in names {
        assert!(msg.contains(n), "message should contain '{n}': {msg}\nargs: {args:?}");
    }
    assert_eq!(std::fs::read(fx.path("out")).unwrap(), b"kept", "the target was modified");
    fx.assert_clean();
    msg
}

#[test]
fn typed_key_bytes_errors() {
    let r = "--record-size=64";
    let msg = fails(&[r, "--key-bytes=0:4:u64le"], &["--key-bytes", "0:4:u64le"]);
    assert_eq!(msg, "xsort: invalid --key-bytes '0:4:u64le': a u64le key is 8 bytes long, not 4");
    fails(&[r, "--key-bytes=0:8:f32le"], &["--key-bytes", "0:8:f32le", "4 bytes long, not 8"]);
    fails(&[r, "--key-bytes=0:2:i8"], &["--key-bytes", "0:2:i8", "1 byte long"]);
    let msg = fails(&[r, "--key-bytes=0:8:u64"], &["--key-bytes", "0:8:u64", "unknown type 'u64'", "u64le"]);
    assert!(msg.contains("char dec u8 i8"), "{msg}");
    for bad in ["0:8:u64le:x", "0:8:r:u64le", "0:8:u64le:r:r", "0::u64le", "0:0:dec"] {
        fails(&[r, &format!("--key-bytes={bad}")], &["--key-bytes", bad]);
    }
    // A typed key beyond the record names the key as written.
    fails(&[r, "--key-bytes=60:8:i64le"], &["60:8:i64le", "64-byte record"]);
}

#[test]
fn typed_spec_errors() {
    let spec = |s: &str| format!("-format=size:64 {s}");
    fails(&["--spec", &spec("-field=name:v,size:3,integer -key=v")], &["--spec", "-field=name:v,size:3,integer", "not 3"]);
    fails(&["--spec", &spec("-field=name:v,size:8,decimal,little_endian -key=v")], &["--spec", "byte order"]);
    fails(&["--spec", &spec("-field=name:v,size:4,float -key=w")], &["--spec", "'w'"]);
    fails(&["--spec", &spec("-field=name:v,off:60,double -key=v")], &["--spec", "past the end of the 64-byte record"]);
    fails(&["--spec", &spec("-key=position:1,size:2,double")], &["--spec", "not 2"]);
}
