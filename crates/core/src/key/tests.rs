//! Key normalization checked against reference comparators on decoded values: for every type, the
//! order of the normalized keys, [`ResolvedKey::compare`] and every prefix length agree with the
//! reference, ascending and descending.

use super::coded::{self, Coding};
use super::*;
use proptest::prelude::*;
use ByteOrder::{Big, Little};

fn part(offset: usize, len: usize, descending: bool) -> KeyPart {
    KeyPart::bytes(offset, len, descending)
}

// ------------------------------------------------------------------------------------------------
// Reference comparators, on values decoded independently of the normalization

fn decode_unsigned(f: &[u8], order: ByteOrder) -> u64 {
    let mut v = 0u64;
    let mut push = |b: &u8| v = (v << 8) | u64::from(*b);
    match order {
        Big => f.iter().for_each(&mut push),
        Little => f.iter().rev().for_each(&mut push),
    }
    v
}

fn decode_signed(f: &[u8], order: ByteOrder) -> i64 {
    let shift = 64 - 8 * f.len() as u32;
    ((decode_unsigned(f, order) << shift) as i64) >> shift
}

/// NaNs after everything else and equal to each other; otherwise IEEE order with -0 < +0.
fn float_ref(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        (false, false) => a.total_cmp(&b),
    }
}

fn decode_float(f: &[u8], order: ByteOrder) -> f64 {
    let bits = decode_unsigned(f, order);
    if f.len() == 4 {
        // f32 -> f64 keeps order, signed zeros, infinities and NaN-ness.
        f64::from(f32::from_bits(bits as u32))
    } else {
        f64::from_bits(bits)
    }
}

/// A decimal field as an exact (mantissa, scale) = mantissa / 10^scale, or None when it is not
/// `[blanks][sign]digits[.digits][blanks]`.
fn decode_decimal(f: &[u8]) -> Option<(i128, u32)> {
    let s = std::str::from_utf8(f).ok()?.trim_matches([' ', '\t']);
    let (neg, s) = if let Some(r) = s.strip_prefix('-') { (true, r) } else { (false, s.strip_prefix('+').unwrap_or(s)) };
    let mut halves = s.splitn(2, '.');
    let int = halves.next().unwrap_or("");
    let frac = halves.next().unwrap_or("");
    let digits = format!("{int}{frac}");
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let m: i128 = digits.parse().unwrap();
    Some((if neg { -m } else { m }, frac.len() as u32))
}

fn decimal_ref(a: &[u8], b: &[u8]) -> Ordering {
    match (decode_decimal(a), decode_decimal(b)) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some((ma, sa)), Some((mb, sb))) => (ma * 10i128.pow(sb)).cmp(&(mb * 10i128.pow(sa))),
    }
}

/// The reference order of two fields of type `kind`, ascending.
fn reference(kind: KeyType, a: &[u8], b: &[u8]) -> Ordering {
    match kind {
        KeyType::Char => a.cmp(b),
        KeyType::Unsigned(o) => decode_unsigned(a, o).cmp(&decode_unsigned(b, o)),
        KeyType::Signed(o) => decode_signed(a, o).cmp(&decode_signed(b, o)),
        KeyType::Float(o) => float_ref(decode_float(a, o), decode_float(b, o)),
        KeyType::Decimal => decimal_ref(a, b),
        // The values the fields decode to (not a number first), apart from the byte forms.
        KeyType::Packed => coded::value(Coding::Packed, a).cmp(&coded::value(Coding::Packed, b)),
        KeyType::Zoned => coded::value(Coding::Zoned, a).cmp(&coded::value(Coding::Zoned, b)),
        KeyType::Month => coded::month(a).cmp(&coded::month(b)),
        KeyType::Custom(_) => unreachable!("the generated keys are typed"),
    }
}

fn reference_key(parts: &[KeyPart], a: &[u8], b: &[u8]) -> Ordering {
    for p in parts {
        let r = p.offset..p.offset + p.len;
        let o = reference(p.kind, &a[r.clone()], &b[r]);
        if o != Ordering::Equal {
            return if p.descending { o.reverse() } else { o };
        }
    }
    Ordering::Equal
}

/// The first `n` bytes of `bytes` as the top bytes of a u128.
fn top(bytes: &[u8], n: usize) -> u128 {
    let mut b = [0u8; 16];
    let take = n.min(bytes.len());
    b[..take].copy_from_slice(&bytes[..take]);
    u128::from_be_bytes(b)
}

/// Checks a key on two records against the expected order: `compare`, the normalized bytes, and
/// for every n the prefix (the first n normalized bytes; ordered like `compare` where they differ,
/// equal for equal keys, and the whole order when the key fits).
fn check_pair(key: &ResolvedKey, a: &[u8], b: &[u8], expected: Ordering) -> std::result::Result<(), TestCaseError> {
    prop_assert_eq!(key.compare(a, b), expected, "compare");
    prop_assert_eq!(key.compare(b, a), expected.reverse(), "compare reversed");
    let (na, nb) = (key.normalized(a), key.normalized(b));
    prop_assert_eq!(na.len(), key.len());
    prop_assert_eq!(na.cmp(&nb), expected, "normalized {:02x?} vs {:02x?}", na, nb);
    for n in 0..=16 {
        let (pa, pb) = (key.prefix(a, n), key.prefix(b, n));
        prop_assert_eq!(pa, top(&na, n), "prefix {} of a", n);
        prop_assert_eq!(pb, top(&nb, n), "prefix {} of b", n);
        if pa != pb {
            prop_assert_eq!(pa.cmp(&pb), expected, "prefix {} order", n);
        }
        if expected == Ordering::Equal {
            prop_assert_eq!(pa, pb, "equal keys, different prefixes at n = {}", n);
        }
        if key.len() <= n {
            prop_assert_eq!(pa.cmp(&pb), expected, "prefix {} covers the key", n);
        }
        // Every window of the key is its normalized bytes from there on.
        for skip in 0..=key.len() {
            prop_assert_eq!(key.window(a, skip, n), top(&na[skip..], n), "window {}+{} of a", skip, n);
            prop_assert_eq!(key.window(b, skip, n), top(&nb[skip..], n), "window {}+{} of b", skip, n);
        }
    }
    Ok(())
}

/// Puts two fields at offset 3 of records with other bytes around them and checks one key part of
/// type `kind` over them against the reference.
fn check_fields(kind: KeyType, fa: &[u8], fb: &[u8], descending: bool) -> std::result::Result<(), TestCaseError> {
    assert_eq!(fa.len(), fb.len());
    let len = fa.len();
    let record = |f: &[u8], fill: u8| [&[fill; 3][..], f, &[fill; 2][..]].concat();
    let (a, b) = (record(fa, 0x5A), record(fb, 0xA5));
    let parts = [KeyPart::typed(3, len, kind, descending)];
    let key = KeySpec::new(parts.to_vec()).resolve(len + 5).unwrap();
    check_pair(&key, &a, &b, reference_key(&parts, &a, &b))
}

// ------------------------------------------------------------------------------------------------
// Strategies

const ORDERS: [ByteOrder; 2] = [Big, Little];

/// Integer bit patterns of a given width, extremes favoured.
fn int_bits(width: usize) -> impl Strategy<Value = u64> {
    let bits = 8 * width as u32;
    let mask = u64::MAX >> (64 - bits);
    let sign = 1u64 << (bits - 1);
    prop_oneof![
        4 => any::<u64>(),
        1 => Just(0u64),
        1 => Just(1u64),
        1 => Just(u64::MAX),   // unsigned MAX, signed -1
        1 => Just(sign),       // signed MIN
        1 => Just(sign - 1),   // signed MAX
        1 => Just(sign + 1),
        1 => 0u64..4,
    ]
    .prop_map(move |v| v & mask)
}

fn int_bytes(v: u64, width: usize, order: ByteOrder) -> Vec<u8> {
    let be = v.to_be_bytes()[8 - width..].to_vec();
    match order {
        Big => be,
        Little => be.into_iter().rev().collect(),
    }
}

fn f64_bits() -> impl Strategy<Value = u64> {
    let special = [
        0.0f64,
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::MIN,
        f64::MAX,
        f64::MIN_POSITIVE,
        -f64::MIN_POSITIVE,
        f64::EPSILON,
        1.0,
        -1.0,
        f64::from_bits(1), // smallest subnormal
        -f64::from_bits(1),
        f64::from_bits(0x000F_FFFF_FFFF_FFFF), // largest subnormal
        -f64::from_bits(0x000F_FFFF_FFFF_FFFF),
    ]
    .map(f64::to_bits);
    let nans = [0x7FF8_0000_0000_0000u64, 0xFFF8_0000_0000_0000, 0x7FF0_0000_0000_0001, 0xFFFF_FFFF_FFFF_FFFF, 0x7FF4_0000_0000_0000];
    prop_oneof![
        3 => any::<u64>(),
        2 => proptest::sample::select(special.to_vec()),
        1 => proptest::sample::select(nans.to_vec()),
        1 => any::<f64>().prop_map(f64::to_bits),
    ]
}

fn f32_bits() -> impl Strategy<Value = u64> {
    let special = [
        0.0f32,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::MIN,
        f32::MAX,
        f32::MIN_POSITIVE,
        -f32::MIN_POSITIVE,
        1.0,
        -1.0,
        f32::from_bits(1),
        -f32::from_bits(1),
        f32::from_bits(0x007F_FFFF),
        -f32::from_bits(0x007F_FFFF),
    ]
    .map(|f| u64::from(f.to_bits()));
    let nans = [0x7FC0_0000u64, 0xFFC0_0000, 0x7F80_0001, 0xFFFF_FFFF, 0x7FA0_0000];
    prop_oneof![
        3 => any::<u32>().prop_map(u64::from),
        2 => proptest::sample::select(special.to_vec()),
        1 => proptest::sample::select(nans.to_vec()),
        1 => any::<f32>().prop_map(|f| u64::from(f.to_bits())),
    ]
}

/// Decimal text: blanks, a sign, digits (zeros favoured), an optional fraction, as a string whose
/// length is at most 17 (so an 18-byte field holds it with a blank to spare).
fn decimal_text() -> impl Strategy<Value = Vec<u8>> {
    let digit = prop_oneof![2 => Just(b'0'), 3 => b'0'..=b'9', 1 => Just(b'9')];
    let digits = move |max| proptest::collection::vec(digit.clone(), 0..max);
    let blanks = proptest::collection::vec(prop_oneof![Just(b' '), Just(b'\t')], 0..3);
    let wellformed = (blanks.clone(), prop_oneof![Just(&b""[..]), Just(&b"-"[..]), Just(&b"+"[..])], digits(8), any::<bool>(), digits(7))
        .prop_map(|(lead, sign, int, dot, frac)| {
            let mut s = [&lead[..], sign, &int[..]].concat();
            if dot {
                s.push(b'.');
                s.extend_from_slice(&frac);
            }
            s
        });
    let garbage = proptest::collection::vec(proptest::sample::select(b" \t+-.0123456789x\0".to_vec()), 0..8);
    prop_oneof![5 => wellformed, 2 => garbage]
}

/// Two decimal texts in fields of a common length (the longer one's, or more), each padded with
/// blanks on a side of the test's choosing.
fn decimal_pair() -> impl Strategy<Value = (Vec<u8>, Vec<u8>)> {
    (decimal_text(), decimal_text(), 0usize..3, any::<bool>(), any::<bool>()).prop_map(|(a, b, extra, a_right, b_right)| {
        let len = (a.len().max(b.len()) + extra).clamp(1, 18);
        let pad = |s: Vec<u8>, right: bool| {
            let fill = vec![b' '; len - s.len()];
            if right {
                [fill, s].concat()
            } else {
                [s, fill].concat()
            }
        };
        (pad(a, a_right), pad(b, b_right))
    })
}

// ------------------------------------------------------------------------------------------------
// Tests

#[test]
fn empty_key_is_whole_record() {
    let k = KeySpec::default().resolve(7).unwrap();
    assert_eq!(k.len(), 7);
    assert_eq!(k.prefix(b"abcdefg", 3), u128::from_be_bytes(*b"abc\0\0\0\0\0\0\0\0\0\0\0\0\0"));
}

#[test]
fn key_beyond_record_is_error() {
    let e = KeySpec::new(vec![part(95, 10, false)]).resolve(100).unwrap_err();
    assert_eq!(e.to_string(), "key 95:10 reaches beyond the 100-byte record (bytes 95..105)");
    let e = KeySpec::new(vec![KeyPart::typed(96, 8, KeyType::Unsigned(Little), true)]).resolve(100).unwrap_err();
    assert_eq!(e.to_string(), "key 96:8:u64le:r reaches beyond the 100-byte record (bytes 96..104)");
    assert!(KeySpec::new(vec![part(usize::MAX, 2, false)]).resolve(100).is_err());
    assert!(KeySpec::new(vec![part(0, 0, false)]).resolve(100).is_err());
}

#[test]
fn lengths_must_suit_the_type() {
    let e = KeySpec::new(vec![KeyPart::typed(0, 3, KeyType::Signed(Big), false)]).resolve(100).unwrap_err();
    assert_eq!(e.to_string(), "key 0:3: a signed integer key is 1, 2, 4, 8 bytes long, not 3");
    assert!(KeySpec::new(vec![KeyPart::typed(0, 2, KeyType::Float(Big), false)]).resolve(100).is_err());
    assert!(KeySpec::new(vec![KeyPart::typed(0, 16, KeyType::Unsigned(Little), false)]).resolve(100).is_err());
    assert!(KeySpec::new(vec![KeyPart::typed(0, 99, KeyType::Decimal, false)]).resolve(100).is_ok());
}

#[test]
fn type_names_round_trip() {
    for name in KeyType::names() {
        let (kind, len) = KeyType::from_name(name).unwrap();
        let len = len.unwrap_or(5);
        assert_eq!(kind.name(len), Some(name), "{name}");
        assert_eq!(
            KeyPart::typed(1, len, kind, true).to_string(),
            if kind == KeyType::Char { format!("1:{len}:r") } else { format!("1:{len}:{name}:r") }
        );
    }
    assert_eq!(KeyType::from_name("U64LE"), Some((KeyType::Unsigned(Little), Some(8))));
    assert_eq!(KeyType::from_name("u64"), None);
    assert_eq!(KeyType::Unsigned(Little).name(1), Some("u8"));
    assert_eq!(KeyType::Float(Little).name(2), None);
}

/// Sorts fields by the key and returns them in order.
fn sorted_by_key(kind: KeyType, len: usize, descending: bool, fields: &[&[u8]]) -> Vec<Vec<u8>> {
    let key = KeySpec::new(vec![KeyPart::typed(0, len, kind, descending)]).resolve(len).unwrap();
    let mut v: Vec<Vec<u8>> = fields.iter().map(|f| f.to_vec()).collect();
    v.sort_by_key(|r| key.normalized(r));
    v
}

#[test]
fn decimal_examples() {
    let fields: [&[u8]; 21] = [
        b"    10  ",
        b"  1.    ",
        b"x       ",
        b"-12.5   ",
        b"   -0   ",
        b"-3      ",
        b"1-      ",
        b"  +.5   ",
        b"2       ",
        b"0.000   ",
        b"        ",
        b"01.50   ",
        b"   -.5  ",
        b"1.2.3   ",
        b"- 1     ",
        b".       ",
        b"0       ",
        b"1       ",
        b"\t-1e5   ",
        b"99999999",
        b"-9999999",
    ];
    let asc = sorted_by_key(KeyType::Decimal, 8, false, &fields);
    let expect: [&[u8]; 21] = [
        // not numbers, in input order
        b"x       ",
        b"1-      ",
        b"        ",
        b"1.2.3   ",
        b"- 1     ",
        b".       ",
        b"\t-1e5   ",
        b"-9999999",
        b"-12.5   ",
        b"-3      ",
        b"   -.5  ",
        // zero, -0 included, in input order
        b"   -0   ",
        b"0.000   ",
        b"0       ",
        b"  +.5   ",
        b"  1.    ",
        b"1       ",
        b"01.50   ",
        b"2       ",
        b"    10  ",
        b"99999999",
    ];
    assert_eq!(asc, expect.map(<[u8]>::to_vec));
    // Descending: numbers high to low, then the not-numbers (still in input order: equal keys).
    let desc = sorted_by_key(KeyType::Decimal, 8, true, &fields);
    assert_eq!(&desc[..3], &[b"99999999".to_vec(), b"    10  ".to_vec(), b"2       ".to_vec()]);
    assert_eq!(&desc[14..], &expect[..7].iter().map(|f| f.to_vec()).collect::<Vec<_>>()[..]);
}

#[test]
fn float_examples() {
    let values = [f64::NAN, 1.5, -0.0, f64::INFINITY, -f64::NAN, 0.0, f64::NEG_INFINITY, -1.5, f64::from_bits(1), f64::MIN, f64::MAX];
    let fields: Vec<[u8; 8]> = values.iter().map(|v| v.to_le_bytes()).collect();
    let refs: Vec<&[u8]> = fields.iter().map(|f| &f[..]).collect();
    let sorted: Vec<f64> =
        sorted_by_key(KeyType::Float(Little), 8, false, &refs).iter().map(|f| f64::from_le_bytes(f[..].try_into().unwrap())).collect();
    let bits: Vec<u64> = sorted.iter().map(|v| v.to_bits()).collect();
    let expect = [f64::NEG_INFINITY, f64::MIN, -1.5, -0.0, 0.0, f64::from_bits(1), 1.5, f64::MAX, f64::INFINITY, f64::NAN, -f64::NAN];
    assert_eq!(bits, expect.map(f64::to_bits));
}

#[test]
fn integer_examples() {
    let values: [i16; 7] = [5, -1, i16::MAX, 0, i16::MIN, 256, -256];
    let fields: Vec<[u8; 2]> = values.iter().map(|v| v.to_le_bytes()).collect();
    let refs: Vec<&[u8]> = fields.iter().map(|f| &f[..]).collect();
    let sorted: Vec<i16> =
        sorted_by_key(KeyType::Signed(Little), 2, true, &refs).iter().map(|f| i16::from_le_bytes([f[0], f[1]])).collect();
    assert_eq!(sorted, [i16::MAX, 256, 5, 0, -1, -256, i16::MIN]);
}

proptest! {
    /// The prefix order agrees with the full comparison wherever prefixes differ, and equal keys
    /// have equal prefixes: the invariant the radix sort plus tie-break relies on.
    #[test]
    fn prefix_is_consistent_with_compare(
        a in proptest::collection::vec(0u8..4, 12),
        b in proptest::collection::vec(0u8..4, 12),
        specs in proptest::collection::vec((0usize..12, 1usize..5, any::<bool>()), 0..4),
        n in 1usize..=16,
    ) {
        let parts: Vec<_> = specs.into_iter().filter(|(o, l, _)| o + l <= 12).map(|(o, l, d)| part(o, l, d)).collect();
        let k = KeySpec::new(parts).resolve(12).unwrap();
        let (pa, pb) = (k.prefix(&a, n), k.prefix(&b, n));
        let full = k.compare(&a, &b);
        if pa != pb {
            prop_assert_eq!(pa.cmp(&pb), full);
        }
        if full == Ordering::Equal {
            prop_assert_eq!(pa, pb);
        }
        if k.len() <= n {
            prop_assert_eq!(pa.cmp(&pb), full);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    /// Integers of every width, signedness and byte order order like their decoded values.
    #[test]
    fn integers_order_like_their_values(
        (width, a, b) in proptest::sample::select(vec![1usize, 2, 4, 8]).prop_flat_map(|w| (Just(w), int_bits(w), int_bits(w))),
        signed in any::<bool>(),
        order in proptest::sample::select(ORDERS.to_vec()),
        descending in any::<bool>(),
        same in proptest::bool::weighted(0.1),
    ) {
        let b = if same { a } else { b };
        let kind = if signed { KeyType::Signed(order) } else { KeyType::Unsigned(order) };
        check_fields(kind, &int_bytes(a, width, order), &int_bytes(b, width, order), descending)?;
    }

    /// Extremes of each width (MIN, MAX, 0, -1, ...) against each other.
    #[test]
    fn integer_extremes(
        width in proptest::sample::select(vec![1usize, 2, 4, 8]),
        signed in any::<bool>(),
        order in proptest::sample::select(ORDERS.to_vec()),
        descending in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let values: Vec<u64> = (0..4).map(|i| [0, 1, u64::MAX, 1 << (8 * width - 1), (1 << (8 * width - 1)) - 1, seed][(seed as usize >> (8 * i)) % 6]).collect();
        let mask = u64::MAX >> (64 - 8 * width as u32);
        let kind = if signed { KeyType::Signed(order) } else { KeyType::Unsigned(order) };
        for a in &values {
            for b in &values {
                check_fields(kind, &int_bytes(a & mask, width, order), &int_bytes(b & mask, width, order), descending)?;
            }
        }
    }

    /// Doubles order by value with -0 < +0 and every NaN after +inf, NaNs equal.
    #[test]
    fn doubles_order_with_nans_last(
        a in f64_bits(), b in f64_bits(),
        order in proptest::sample::select(ORDERS.to_vec()),
        descending in any::<bool>(),
    ) {
        check_fields(KeyType::Float(order), &int_bytes(a, 8, order), &int_bytes(b, 8, order), descending)?;
        check_fields(KeyType::Float(order), &int_bytes(a, 8, order), &int_bytes(a, 8, order), descending)?;
    }

    /// Singles likewise.
    #[test]
    fn floats_order_with_nans_last(
        a in f32_bits(), b in f32_bits(),
        order in proptest::sample::select(ORDERS.to_vec()),
        descending in any::<bool>(),
    ) {
        check_fields(KeyType::Float(order), &int_bytes(a, 4, order), &int_bytes(b, 4, order), descending)?;
    }

    /// Decimal text orders by exact value, not-numbers first and equal to each other; the
    /// normalized form is as long as the field (up to 18 bytes, past the 16-byte prefix).
    #[test]
    fn decimals_order_like_their_values((a, b) in decimal_pair(), descending in any::<bool>()) {
        check_fields(KeyType::Decimal, &a, &b, descending)?;
        check_fields(KeyType::Decimal, &a, &a, descending)?;
    }

    /// Character keys are their bytes.
    #[test]
    fn characters_order_like_bytes(
        a in proptest::collection::vec(proptest::sample::select(vec![0u8, 1, 0x7F, 0x80, 0xFF]), 1..20),
        b in proptest::collection::vec(proptest::sample::select(vec![0u8, 1, 0x7F, 0x80, 0xFF]), 20),
        descending in any::<bool>(),
    ) {
        check_fields(KeyType::Char, &a, &b[..a.len()], descending)?;
    }

    /// Keys of several typed parts, at any offsets and in any direction, over records of
    /// number-ish bytes: compare, normalized bytes and prefixes agree with the reference.
    #[test]
    fn mixed_keys_agree_with_the_reference(
        a in proptest::collection::vec(proptest::sample::select(b" -+.0159\0\x7f\x80\xff".to_vec()), 24),
        b in proptest::collection::vec(proptest::sample::select(b" -+.0159\0\x7f\x80\xff".to_vec()), 24),
        specs in proptest::collection::vec((0usize..24, 0usize..20, 1usize..9, any::<bool>()), 1..4),
        shared in proptest::collection::vec(any::<bool>(), 24),
    ) {
        // Share some bytes so that parts often tie and later parts decide.
        let b: Vec<u8> = b.iter().zip(&a).zip(&shared).map(|((&y, &x), &s)| if s { x } else { y }).collect();
        let names: Vec<&str> = KeyType::names().collect();
        let parts: Vec<KeyPart> = specs
            .into_iter()
            .filter_map(|(off, t, len, d)| {
                let (kind, fixed) = KeyType::from_name(names[t]).unwrap();
                let len = fixed.unwrap_or(len);
                (off + len <= 24).then(|| KeyPart::typed(off, len, kind, d))
            })
            .collect();
        prop_assume!(!parts.is_empty());
        let key = KeySpec::new(parts.clone()).resolve(24).unwrap();
        check_pair(&key, &a, &b, reference_key(&parts, &a, &b))?;
    }
}

proptest! {
    /// A plain byte key's prefix is its first `n` bytes, zero-padded, whether the record holds 16
    /// bytes from the key's start (one wide load, then a mask) or not (a copy).
    #[test]
    fn a_byte_key_prefix_is_its_leading_bytes(
        rec in proptest::collection::vec(any::<u8>(), 40),
        offset in 0usize..40,
        len in 1usize..=20,
        n in 0usize..=16,
    ) {
        prop_assume!(offset + len <= 40);
        let k = KeySpec::new(vec![part(offset, len, false)]).resolve(40).unwrap();
        let take = n.min(len);
        let mut expect = [0u8; 16];
        expect[..take].copy_from_slice(&rec[offset..offset + take]);
        prop_assert_eq!(k.prefix(&rec, n), u128::from_be_bytes(expect));
    }
}

#[test]
fn a_declared_comparison_ends_the_normalized_key() {
    let id = custom::declare_comparison(
        "odd_first",
        std::sync::Arc::new(|a: &[u8], b: &[u8]| Ok(a[0].is_multiple_of(2).cmp(&b[0].is_multiple_of(2)).then(a.cmp(b)))),
    )
    .unwrap();
    let part = KeyPart::parse_key_bytes("1:1:compare=odd_first:r").unwrap();
    assert_eq!(part, KeyPart::typed(1, 1, KeyType::Custom(id), true));
    assert_eq!(KeyPart::parse_key_bytes(&part.to_string()).unwrap(), part);
    assert!(KeyPart::parse_key_bytes("1:1:compare=nobody").unwrap_err().to_string().contains("no comparison function named 'nobody'"));
    assert!(custom::declare_comparison("2x", std::sync::Arc::new(|_: &[u8], _: &[u8]| Ok(Ordering::Equal))).is_err());
    // A plain part first: its bytes are the normalized key; the compared part only orders ties.
    let key = KeySpec::new(vec![KeyPart::bytes(0, 1, false), part]).resolve(2).unwrap();
    assert!(!key.is_complete() && !key.exact_within(16));
    assert_eq!((key.len(), key.normalized(b"a3")), (1, b"a".to_vec()));
    assert_eq!(key.prefix(b"a3", 16), key.prefix(b"a4", 16));
    assert_eq!(key.compare(b"a3", b"a4"), Ordering::Greater, "descending: even after odd, reversed");
    assert_eq!(key.compare(b"a4", b"b3"), Ordering::Less);
    // The compared part first: a one-byte normalized key, zero in every record.
    let key = KeySpec::new(vec![KeyPart::typed(1, 1, KeyType::Custom(id), false)]).resolve(2).unwrap();
    assert_eq!((key.len(), key.prefix(b"z9", 16), key.window(b"z9", 0, 1)), (1, 0, 0));
    assert_eq!(key.compare(b"z9", b"a2"), Ordering::Less);
    assert!(key.comparison_failure().is_none());
}
