//! The locale warning: a sort of lines that compares text, under a locale that collates
//! (`LC_ALL`, `LC_COLLATE`, `LANG` in that order), prints one warning line and still sorts by
//! bytes; byte-order locales, orders without text, records and `XSORT_NO_LOCALE_WARNING=1` stay
//! silent.

use std::process::Command;

use crate::common::{run_with_stdin, Fixture};

const WARNING: &str = "xsort: warning: LANG=en_US.UTF-8 asks for that locale's collation, but xsort compares text byte by byte, as 'LC_ALL=C sort' does (XSORT_NO_LOCALE_WARNING=1 silences this)\n";

/// `xsort ARGS` in `f` with the locale variables given and every other one removed.
fn under(f: &Fixture, vars: &[(&str, &str)], args: &[&str]) -> Command {
    let mut c = f.cmd();
    for v in ["LC_ALL", "LC_COLLATE", "LANG", "XSORT_NO_LOCALE_WARNING"] {
        c.env_remove(v);
    }
    c.envs(vars.iter().copied()).args(args);
    c
}

const LINES: &[u8] = b"b\nB\na\nA\n10\n9\n";

#[test]
fn a_collating_locale_gets_one_warning_and_byte_order() {
    let f = Fixture::new();
    let out = run_with_stdin(&mut under(&f, &[("LANG", "en_US.UTF-8")], &[]), Some(LINES));
    assert!(out.status.success());
    assert_eq!(out.stdout, b"10\n9\nA\nB\na\nb\n", "byte order, as LC_ALL=C sort");
    assert_eq!(String::from_utf8_lossy(&out.stderr), WARNING);
    // -c compares text too; the warning does not change its status.
    let out = run_with_stdin(&mut under(&f, &[("LANG", "en_US.UTF-8")], &["-c"]), Some(b"a\nb\n"));
    assert_eq!((out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned()), (Some(0), WARNING.to_string()));
    // LC_COLLATE is named when it decides.
    let out = run_with_stdin(&mut under(&f, &[("LANG", "C"), ("LC_COLLATE", "de_DE.UTF-8")], &["-k1,1"]), Some(LINES));
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("xsort: warning: LC_COLLATE=de_DE.UTF-8 asks"), "{out:?}");
}

#[test]
fn silent_when_nothing_would_collate() {
    let f = Fixture::new();
    let quiet = |vars: &[(&str, &str)], args: &[&str], input: &[u8]| {
        let out = run_with_stdin(&mut under(&f, vars, args), Some(input));
        assert!(out.status.success(), "{out:?}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), "", "{vars:?} {args:?}");
    };
    let en = [("LANG", "en_US.UTF-8")];
    quiet(&[("LC_ALL", "C"), ("LANG", "en_US.UTF-8")], &[], LINES);
    quiet(&[("LANG", "C.UTF-8")], &[], LINES);
    quiet(&[("LANG", "POSIX")], &[], LINES);
    quiet(&[], &[], LINES);
    quiet(&[("LANG", "en_US.UTF-8"), ("XSORT_NO_LOCALE_WARNING", "1")], &[], LINES);
    // Numbers alone, with no last-resort comparison of whole lines.
    quiet(&en, &["-s", "-n"], b"10\n9\n");
    quiet(&en, &["-u", "-k1,1g", "-k2,2V"], b"1 a\n2 b\n");
    // Records compare bytes or typed numbers by definition.
    quiet(&en, &["--record-size=4"], b"dcbaabcd");
}

#[test]
fn numeric_keys_with_ties_to_whole_lines_still_warn() {
    // Without -s or -u, lines with equal numbers are ordered by comparing whole lines: text.
    let f = Fixture::new();
    let out = run_with_stdin(&mut under(&f, &[("LANG", "en_US.UTF-8")], &["-n"]), Some(b"1 b\n1 B\n"));
    assert_eq!(out.stdout, b"1 B\n1 b\n");
    assert_eq!(String::from_utf8_lossy(&out.stderr), WARNING);
}
