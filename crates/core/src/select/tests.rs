//! Selection on records: conditions resolved against fields and decided per record.

use super::reader::{InputTransform, SelectFraming};
use super::*;
use std::io::Read;

fn keeps(s: &Selection, record: &[u8]) -> bool {
    s.keeps(Rec::plain(record))
}

fn fixed(name: &str, offset: usize, size: usize, kind: ValueKind) -> FieldAccess {
    FieldAccess { name: name.into(), place: Place::Bytes { offset, size }, kind, padded_size: Some(size) }
}

fn column(name: &str, index: usize) -> FieldAccess {
    FieldAccess {
        name: name.into(),
        place: Place::Column { index, separator: b',', to_end: false },
        kind: ValueKind::Text,
        padded_size: None,
    }
}

fn selection(fields: Vec<FieldAccess>, steps: &[(bool, &str)], named: &[(&str, &str)]) -> Result<Selection, String> {
    let conditions: Vec<(String, Expr)> = named.iter().map(|(n, t)| (n.to_string(), expr::parse(t).unwrap())).collect();
    let lookup = |name: &str| conditions.iter().find(|(n, _)| n == name).map(|(_, e)| e);
    let resolver = Resolver { fields: &fields, condition: &lookup };
    let steps =
        steps.iter().map(|(inc, t)| resolver.resolve(&expr::parse(t).unwrap()).map(|c| (*inc, c))).collect::<Result<Vec<_>, _>>()?;
    Ok(Selection::new(fields.clone(), steps))
}

#[test]
fn fixed_fields_compare_by_type() {
    let fields = vec![
        fixed("name", 0, 4, ValueKind::Text),
        fixed("n", 4, 2, ValueKind::Signed(ByteOrder::Big)),
        fixed("d", 6, 4, ValueKind::Decimal),
    ];
    let rec = |name: &[u8; 4], n: i16, d: &[u8; 4]| [&name[..], &n.to_be_bytes(), d].concat();
    let s = selection(fields.clone(), &[(true, "n lt 0 or d ge 12.5")], &[]).unwrap();
    assert!(keeps(&s, &rec(b"abcd", -3, b"   1")));
    assert!(!keeps(&s, &rec(b"abcd", 3, b"  12")));
    assert!(keeps(&s, &rec(b"abcd", 3, b"  13")));
    // Text constants are padded with blanks to the field's size.
    let s = selection(fields.clone(), &[(true, "name = 'ab'")], &[]).unwrap();
    assert!(keeps(&s, &rec(b"ab  ", 0, b"0000")));
    assert!(!keeps(&s, &rec(b"abc ", 0, b"0000")));
    assert!(selection(fields.clone(), &[(true, "name = 'abcde'")], &[]).unwrap_err().contains("longer than the 4-byte field"));
    assert!(selection(fields.clone(), &[(true, "name = 5")], &[]).unwrap_err().contains("compared with text"));
    assert!(selection(fields.clone(), &[(true, "n matches 'x'")], &[]).unwrap_err().contains("character field"));
    assert!(selection(fields, &[(true, "nope eq 1")], &[]).unwrap_err().contains("no field is named 'nope'"));
}

#[test]
fn steps_decide_in_order_and_includes_omit_the_rest() {
    let fields = vec![column("a", 0), column("b", 1)];
    // Omit only: what no step omits is kept.
    let s = selection(fields.clone(), &[(false, "a eq 'x'")], &[]).unwrap();
    assert!(!keeps(&s, b"x,1") && keeps(&s, b"y,1"));
    // An include present: what no step includes is omitted; the first step that holds decides.
    let s = selection(fields.clone(), &[(false, "b eq '1'"), (true, "a matches '^[xy]'")], &[]).unwrap();
    assert!(!keeps(&s, b"x,1") && keeps(&s, b"y,2") && !keeps(&s, b"z,2"));
    // Missing columns are empty.
    let s = selection(fields.clone(), &[(true, "b eq ''")], &[]).unwrap();
    assert!(keeps(&s, b"x") && keeps(&s, b"x,") && !keeps(&s, b"x,1"));
}

#[test]
fn named_conditions_nest_and_loops_are_refused() {
    let fields = vec![column("a", 0)];
    let s = selection(fields.clone(), &[(true, "not small")], &[("small", "a lt 'm'")]).unwrap();
    assert!(keeps(&s, b"z") && !keeps(&s, b"b"));
    let e = selection(fields.clone(), &[(true, "p")], &[("p", "q"), ("q", "p or a eq 'x'")]).unwrap_err();
    assert!(e.contains("names itself: p -> q -> p"), "{e}");
    assert!(selection(fields, &[(true, "a")], &[]).unwrap_err().contains("alone is not a condition"));
}

#[test]
fn numbers_read_as_their_types() {
    assert_eq!(Num::parse_text(b"  -12"), Num::Int(-12));
    assert_eq!(Num::parse_text(b"+1.5x"), Num::Float(1.5));
    assert_eq!(Num::parse_text(b"abc"), Num::Int(0));
    assert_eq!(Num::parse_text(b"-."), Num::Int(0));
    assert_eq!(Num::parse_constant("1.2.3"), None);
    assert_eq!(Num::parse_constant("-7"), Some(Num::Int(-7)));
    assert_eq!(value(ValueKind::Signed(ByteOrder::Little), &(-2i32).to_le_bytes()), Num::Int(-2));
    assert_eq!(value(ValueKind::Unsigned(ByteOrder::Big), &[0xff, 0xfe]), Num::Int(0xfffe));
    assert_eq!(value(ValueKind::Float(ByteOrder::Little), &2.5f32.to_le_bytes()), Num::Float(2.5));
    assert_eq!(value(ValueKind::Float(ByteOrder::Big), &(-1.0f64).to_be_bytes()), Num::Float(-1.0));
}

#[test]
fn the_reader_passes_on_only_the_records_kept() {
    let s = selection(vec![column("a", 0)], &[(false, "a eq 'drop'")], &[]).unwrap();
    let sel = InputTransform::new(None, Some(s), None, SelectFraming::Terminated(b'\n'));
    let input: Vec<u8> =
        (0..100_000).flat_map(|i| if i % 3 == 0 { b"drop,1\n".to_vec() } else { format!("{i},x\n").into_bytes() }).collect();
    let mut all = input.clone();
    all.extend_from_slice(b"last"); // no terminator
    let mut out = Vec::new();
    sel.filter(Box::new(std::io::Cursor::new(all))).read_to_end(&mut out).unwrap();
    let want: Vec<u8> =
        input.split_inclusive(|&c| c == b'\n').filter(|l| !l.starts_with(b"drop")).flatten().copied().chain(*b"last").collect();
    assert_eq!(out, want);
    assert_eq!(sel.read.load(std::sync::atomic::Ordering::Relaxed), 100_001);
}
