//! `-k` values the user types that look like xsort's internal rewrite of GNU's obsolete `+POS1
//! -POS2` keys (a marker, then the operands): they are ordinary KEYDEFs, rejected with GNU's
//! message, never a panic. Found while writing the fuzz targets: `&start[1..]` on an empty or
//! non-'+' operand panicked.

use crate::common::*;

#[test]
fn marker_lookalike_keys_are_plain_keydef_errors() {
    let fx = Fixture::new();
    let input = fx.write("in", b"b\na\n");
    for k in ["\u{1}obsolete:", "\u{1}obsolete:+1 ", "\u{1}obsolete:\u{e9}1", "\u{1}obsolete:+1 \u{e9}"] {
        let msg = fail(fx.cmd().arg("-k").arg(k).arg(&input));
        assert!(msg.starts_with("xsort: invalid number at field start: invalid count at start of '\\001obsolete:"), "{k:?}: {msg}");
    }
    // The real rewrite still works: +1 -2 is -k2,2.
    fx.write("f", b"x b\ny a\n");
    let out = ok(fx.cmd().args(["+1", "-2"]).arg(fx.path("f")));
    assert_eq!(out.stdout, b"y a\nx b\n");
}
