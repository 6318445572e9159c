//! The user's locale: lines order as GNU sort orders them in the locale the environment names
//! (`LC_ALL`, then the category's own variable, then `LANG`), byte for byte, with nothing said on
//! standard error; `--locale-order=bytes` and `LC_ALL=C` order bytes; a locale that is not
//! installed means the C locale, as in GNU. The differential test `gnu_diff` compares many more
//! cases in three locales.

use std::process::Command;

use crate::common::{run_with_stdin, Fixture};

/// `xsort ARGS` in `f` with the locale variables given and every other one removed.
fn under(f: &Fixture, vars: &[(&str, &str)], args: &[&str]) -> Command {
    let mut c = f.cmd();
    c.env_remove("LC_ALL");
    for (var, _) in std::env::vars() {
        if var.starts_with("LC_") || var == "LANG" {
            c.env_remove(var);
        }
    }
    c.envs(vars.iter().copied()).args(args);
    c
}

/// GNU sort's output for `args` on `input` under `vars`.
fn gnu(vars: &[(&str, &str)], args: &[&str], input: &[u8]) -> Vec<u8> {
    let mut c = Command::new("sort");
    c.env_remove("LC_ALL").env_remove("LANG").envs(vars.iter().copied()).args(args);
    let out = run_with_stdin(&mut c, Some(input));
    assert!(out.status.success(), "GNU sort {args:?}: {out:?}");
    out.stdout
}

const WORDS: &[u8] = "b\nB\na\nA\n10\n9\né\ne\nf\nÉcole\necole\nzebra\nångström\nÄrger\n\n-x\n x\n".as_bytes();

/// xsort's output under `vars` with `args`, checked to say nothing on standard error.
fn sorted(f: &Fixture, vars: &[(&str, &str)], args: &[&str], input: &[u8]) -> Vec<u8> {
    let out = run_with_stdin(&mut under(f, vars, args), Some(input));
    assert!(out.status.success(), "{vars:?} {args:?}: {out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stderr), "", "{vars:?} {args:?}");
    out.stdout
}

#[test]
fn lines_order_as_gnu_sort_in_the_environments_locale() {
    if !xsort_testkit::gnu_sort() || !xsort_testkit::locales(&xsort_testkit::TEST_LOCALES) {
        return;
    }
    let f = Fixture::new();
    for name in xsort_testkit::TEST_LOCALES {
        for vars in [[("LANG", name), ("LC_CTYPE", name)], [("LC_ALL", name), ("LANG", "C")], [("LANG", "C"), ("LC_COLLATE", name)]] {
            for args in [&[][..], &["-f"], &["-r"], &["-u"], &["-d", "-s"], &["-k1.2"]] {
                assert_eq!(sorted(&f, &vars, args, WORDS), gnu(&vars, args, WORDS), "{vars:?} {args:?}");
            }
        }
    }
    let en = [("LANG", "en_US.UTF-8")];
    let collated = sorted(&f, &en, &[], WORDS);
    // Case and accents matter only between otherwise equal words; punctuation hardly at all.
    let text = String::from_utf8(collated).unwrap();
    assert!(text.contains("a\nA\nångström\nÄrger\nb\nB\ne\né\necole\nÉcole\nf\n x\n-x\nzebra\n"), "{text}");
    // Numbers: the locale's thousands separator and decimal point; -M: its month names.
    let numbers = b"1,000.5\n999\n2.5\n1.000,5\n".as_slice();
    for (name, args) in [("en_US.UTF-8", &["-n"][..]), ("de_DE.UTF-8", &["-n"]), ("de_DE.UTF-8", &["-g"]), ("sv_SE.UTF-8", &["-h"])] {
        let vars = [("LC_ALL", name)];
        assert_eq!(sorted(&f, &vars, args, numbers), gnu(&vars, args, numbers), "{name} {args:?}");
    }
    let months = "Dez\nMär\nJan\nmai\nOkt\n".as_bytes();
    assert_eq!(sorted(&f, &[("LC_TIME", "de_DE.UTF-8")], &["-M"], months), "Jan\nMär\nmai\nOkt\nDez\n".as_bytes());
}

#[test]
fn bytes_when_asked_or_when_the_locale_is_missing() {
    let f = Fixture::new();
    let mut lines: Vec<&[u8]> = WORDS.split_inclusive(|&b| b == b'\n').collect();
    lines.sort();
    let expect = lines.concat();
    for vars in
        [&[("LANG", "en_US.UTF-8"), ("LC_ALL", "C")][..], &[("LANG", "POSIX")], &[("LC_ALL", "C.UTF-8")], &[("LANG", "xx_XX.UTF-8")], &[]]
    {
        assert_eq!(sorted(&f, vars, &[], WORDS), expect, "{vars:?}");
    }
    assert_eq!(sorted(&f, &[("LANG", "en_US.UTF-8")], &["--locale-order=bytes"], WORDS), expect);
    // --debug says why the order is bytes.
    let out = run_with_stdin(&mut under(&f, &[("LANG", "xx_XX.UTF-8")], &["--debug"]), Some(b"b\na\n"));
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(err.starts_with("xsort: failed to set locale\nxsort: text ordering performed using simple byte comparison\n"), "{err}");
    // Records compare bytes or typed numbers whatever the locale.
    assert_eq!(sorted(&f, &[("LANG", "en_US.UTF-8")], &["--record-size=2"], b"baABab"), b"ABabba");
}

#[test]
fn the_library_takes_a_locale() {
    if !xsort_testkit::locales(&["en_US.UTF-8"]) {
        return;
    }
    let f = Fixture::new();
    let (input, output) = (f.path("in"), f.path("out"));
    std::fs::write(&input, "b\nB\né\na\nA\ne\n").unwrap();
    let locale = xsort_core::Locale::named("en_US.UTF-8").unwrap();
    xsort_core::Sort::lines().locale(locale).input_path(&input).output_path(&output).run().unwrap();
    assert_eq!(std::fs::read_to_string(&output).unwrap(), "a\nA\nb\nB\ne\né\n");
    let err = xsort_core::Locale::named("xx_XX.UTF-8").unwrap_err().to_string();
    assert!(err.contains("not installed"), "{err}");
}
