//! Tests of [`LineOrder`] as a whole: option resolution, -r/-s/-u, errors and --debug output
//! (expected texts taken from GNU sort 9.1).

use std::cmp::Ordering::{self, *};

use super::*;

fn order(keys: &[&str], global: &str, tab: Option<u8>, stable: bool, unique: bool) -> LineOrder {
    let mut g = OrderFlags::default();
    for c in global.chars() {
        assert!(g.set_global(c));
    }
    LineOrder::new(LineOrderConfig {
        keys: keys.iter().map(|k| KeyField::parse(k).unwrap()).collect(),
        global: g,
        separator: tab,
        stable,
        unique,
        random_seed: b"seed".to_vec(),
        ..Default::default()
    })
    .unwrap()
}

fn sorted(o: &LineOrder, lines: &[&str]) -> Vec<String> {
    let mut v: Vec<&str> = lines.to_vec();
    v.sort_by(|a, b| o.compare(a.as_bytes(), b.as_bytes()));
    v.into_iter().map(String::from).collect()
}

fn cmp(o: &LineOrder, a: &str, b: &str) -> Ordering {
    o.compare(a.as_bytes(), b.as_bytes())
}

#[test]
fn reverse_semantics() {
    // sort -r: last resort reversed.
    let o = order(&[], "r", None, false, false);
    assert_eq!(sorted(&o, &["a", "c", "b"]), ["c", "b", "a"]);
    // sort -nr: numeric key and last resort reversed.
    let o = order(&[], "nr", None, false, false);
    assert_eq!(sorted(&o, &["1", "01", "2"]), ["2", "1", "01"]);
    // sort -n: last resort ascending.
    let o = order(&[], "n", None, false, false);
    assert_eq!(sorted(&o, &["1", "01", "2"]), ["01", "1", "2"]);
    // sort -k1,1r: key reversed, last resort not.
    let o = order(&["1,1r"], "", None, false, false);
    assert_eq!(sorted(&o, &["a y", "b x", "a x"]), ["b x", "a x", "a y"]);
    // sort -r -k1,1: key inherits -r, last resort reversed too.
    let o = order(&["1,1"], "r", None, false, false);
    assert_eq!(sorted(&o, &["a y", "b x", "a x"]), ["b x", "a y", "a x"]);
    // sort -s -r -k1,1: no last resort.
    let o = order(&["1,1"], "r", None, true, false);
    assert_eq!(sorted(&o, &["a y", "b x", "a x"]), ["b x", "a y", "a x"]);
    assert_eq!(cmp(&o, "a y", "a x"), Equal);
}

#[test]
fn stable_unique_without_keys_still_compare_lines() {
    let o = order(&[], "", None, true, true);
    assert_eq!(cmp(&o, "a", "b"), Less);
    let o = order(&[], "n", None, false, true);
    assert_eq!(cmp(&o, "01", "1"), Equal);
    let o = order(&[], "n", None, false, false);
    assert_eq!(cmp(&o, "01", "1"), Less);
}

#[test]
fn global_flags_apply_only_to_keys_without_their_own() {
    let o = order(&["1,1", "2,2r"], "n", None, true, false);
    // key 1 numeric, key 2 text reversed (not numeric).
    assert_eq!(cmp(&o, "2 a", "10 a"), Less);
    assert_eq!(cmp(&o, "1 10", "1 9"), Greater);
    // -b global applies to key 1 without its own flags.
    let o = order(&["2"], "b", None, true, false);
    assert_eq!(cmp(&o, "x  b", "x a"), Greater);
}

#[test]
fn incompatible_options() {
    let err = |keys: &[&str], global: &str| {
        let mut g = OrderFlags::default();
        for c in global.chars() {
            g.set_global(c);
        }
        let cfg = LineOrderConfig { keys: keys.iter().map(|k| KeyField::parse(k).unwrap()).collect(), global: g, ..Default::default() };
        match LineOrder::new(cfg) {
            Err(SortError::BadOption(m)) => m,
            Ok(_) => "ok".to_string(),
            Err(e) => panic!("{e}"),
        }
    };
    assert_eq!(err(&[], "gn"), "options '-gn' are incompatible");
    assert_eq!(err(&[], "nd"), "options '-dn' are incompatible");
    assert_eq!(err(&[], "brMh"), "options '-hM' are incompatible");
    assert_eq!(err(&["1n"], "g"), "ok");
    assert_eq!(err(&["1"], "gn"), "options '-gn' are incompatible");
    assert_eq!(err(&["1Vn"], ""), "options '-nV' are incompatible");
    assert_eq!(err(&["1dRVif"], ""), "ok");
    assert_eq!(err(&["1,1Mi"], ""), "options '-iM' are incompatible");
    assert!(!OrderFlags::default().set_global('x'));
}

#[test]
fn prefix_is_consistent_on_simple_cases() {
    for (keys, global) in [(&[][..], ""), (&[][..], "r"), (&["2n"][..], ""), (&["1,1"][..], "f"), (&[][..], "M")] {
        let o = order(keys, global, None, false, false);
        let lines = ["a 1", "b 2", "A 10", "jan 3", "feb -1", "", " x", "a 1"];
        for a in lines {
            for b in lines {
                let (pa, pb) = (o.prefix(a.as_bytes()), o.prefix(b.as_bytes()));
                assert_eq!(pa & 0xffff_ffff, 0);
                if pa < pb {
                    assert_eq!(cmp(&o, a, b), Less, "{keys:?} {global} {a:?} {b:?}");
                }
                if cmp(&o, a, b) == Equal {
                    assert_eq!(pa, pb);
                }
            }
        }
    }
}

#[test]
fn plain_bytes_flags() {
    assert!(order(&[], "", None, false, false).is_memcmp());
    assert!(!order(&[], "r", None, false, false).is_memcmp());
    assert!(order(&["1n"], "", None, false, false).is_plain_bytes());
    assert!(!order(&["1n"], "", None, true, false).is_plain_bytes());
    assert!(order(&[], "", None, true, true).is_plain_bytes());
}

fn annotate(o: &LineOrder, line: &[u8]) -> String {
    let mut out = Vec::new();
    o.debug_annotate(line, &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

#[test]
fn debug_annotations_match_gnu() {
    let o = order(&["1.3"], "", None, false, false);
    assert_eq!(annotate(&o, b"a\x01b\tc\xe9d"), "a\x01b>c\u{fffd}d\n _____\n______\n");
    assert_eq!(annotate(&o, b""), "\n^ no match for key\n^ no match for key\n");
    let o = order(&["1.5,1.2", "2,1"], "", None, false, false);
    assert_eq!(annotate(&o, b"abcdef"), "abcdef\n    ^ no match for key\n      ^ no match for key\n______\n");
    let o = order(&["1n", "1g", "1M", "1h"], "b", None, false, false);
    assert_eq!(annotate(&o, b" -12.5e3 x"), " -12.5e3 x\n _____\n _______\n ^ no match for key\n _____\n__________\n");
    assert_eq!(annotate(&o, b"Jan"), "Jan\n^ no match for key\n^ no match for key\n___\n^ no match for key\n___\n");
    let o = order(&[], "", None, true, false);
    assert_eq!(annotate(&o, b"x"), "x\n_\n");
    let o = order(&["1"], "", None, true, false);
    assert_eq!(annotate(&o, b"x"), "x\n_\n");
}

#[test]
fn debug_warnings_match_gnu() {
    let w = |o: &LineOrder| o.debug_warnings()[1..].to_vec();
    let o = order(&["1n", "1g", "1M", "1h"], "b", None, false, false);
    assert_eq!(
        w(&o),
        [
            "key 1 is numeric and spans multiple fields",
            "key 2 is numeric and spans multiple fields",
            "key 4 is numeric and spans multiple fields",
            "note numbers use '.' as a decimal point in this locale",
            "option '-b' is ignored",
        ]
    );
    assert_eq!(order(&["1.3"], "", None, false, false).debug_warnings()[0], "text ordering performed using simple byte comparison");
    assert_eq!(w(&order(&["1.5,1.2", "2,1"], "", None, false, false)), ["key 2 has zero width and will be ignored"]);
    assert_eq!(
        w(&order(&["1,1n"], "r", None, false, false)),
        ["note numbers use '.' as a decimal point in this locale", "option '-r' only applies to last-resort comparison"]
    );
    assert_eq!(
        w(&order(&["1,1n"], "r", None, true, false)),
        ["note numbers use '.' as a decimal point in this locale", "option '-r' is ignored"]
    );
    assert_eq!(
        w(&order(&["1,1r"], "nfd", None, true, false)),
        ["leading blanks are significant in key 1; consider also specifying 'b'", "options '-dfn' are ignored"]
    );
    assert_eq!(
        w(&order(&["1,2n"], "", Some(b'.'), false, false)),
        ["key 1 is numeric and spans multiple fields", "field separator '.' is treated as a decimal point in numbers"]
    );
    assert_eq!(
        w(&order(&["1,2g"], "", Some(b'-'), false, false)),
        [
            "key 1 is numeric and spans multiple fields",
            "field separator '-' is treated as a minus sign in numbers",
            "note numbers use '.' as a decimal point in this locale"
        ]
    );
    assert_eq!(
        w(&order(&["1,2g"], "", Some(b'+'), false, false)),
        [
            "key 1 is numeric and spans multiple fields",
            "field separator '+' is treated as a plus sign in numbers",
            "note numbers use '.' as a decimal point in this locale"
        ]
    );
    let k = KeyField::parse_obsolete("1", Some("2")).unwrap().unwrap();
    let o = LineOrder::new(LineOrderConfig { keys: vec![k], ..Default::default() }).unwrap();
    assert_eq!(
        w(&o),
        [
            "obsolescent key '+1 -2' used; consider '-k 2,2' instead",
            "leading blanks are significant in key 1; consider also specifying 'b'"
        ]
    );
    let k = KeyField::parse_obsolete("1.2", Some("2.3")).unwrap().unwrap();
    let o = LineOrder::new(LineOrderConfig { keys: vec![k], ..Default::default() }).unwrap();
    assert_eq!(w(&o)[0], "obsolescent key '+1 -3' used; consider '-k 2,3' instead");
    let k = KeyField::parse_obsolete("0", None).unwrap().unwrap();
    let o = LineOrder::new(LineOrderConfig { keys: vec![k], ..Default::default() }).unwrap();
    assert_eq!(w(&o)[0], "obsolescent key '+0' used; consider '-k 1' instead");
}

#[test]
fn line_order_is_send_sync() {
    fn check<T: Send + Sync>() {}
    check::<LineOrder>();
}
