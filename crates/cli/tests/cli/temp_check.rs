//! An unusable temp directory (`-T` or `TMPDIR`) matters only to a sort that spills, as in GNU
//! sort: a sort that fits in memory (or a merge that needs no temp run) ignores it; an input known
//! to spill is refused before anything is read, and one that turns out to spill (standard input,
//! `-m` beyond `--batch-size`) fails when it does; either way with GNU's message, exit status 2,
//! the target untouched, nothing created.

use crate::common::Fixture;

/// Runs xsort with `args` (ending with the inputs) writing `out`, expecting it to fail; returns
/// its one line of stderr.
fn refused(f: &Fixture, args: &[&str], tmpdir: Option<&str>, stdin: Option<&[u8]>) -> String {
    let mut c = f.cmd();
    if let Some(t) = tmpdir {
        c.env("TMPDIR", f.path(t));
    }
    let out = crate::common::run_with_stdin(c.args(["-o", "out"]).args(args), stdin);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert_eq!(std::fs::read(f.path("out")).expect("target"), b"old\n", "{args:?} touched the target");
    err
}

#[test]
fn bad_temp_dirs_fail_the_sorts_that_spill_for_lines_and_records_alike() {
    let f = Fixture::new();
    let big: Vec<u8> = (0..40_000u32).flat_map(|i| format!("{:04}\n", (i * 7919) % 10_000).into_bytes()).collect();
    f.write("big", &big);
    f.write("out", b"old\n");
    f.write("afile", b"x");
    f.mkdir("good");
    for mode in [&["-S", "64K"][..], &["--record-size=5", "-S", "64K"][..]] {
        let with = |extra: &[&'static str]| mode.iter().copied().chain(extra.iter().copied()).collect::<Vec<_>>();
        let err = refused(&f, &with(&["-T", "no-such-dir", "big"]), None, None);
        assert_eq!(err, "xsort: cannot create temporary file in 'no-such-dir': No such file or directory\n", "{mode:?}");
        let err = refused(&f, &with(&["-T", "afile", "big"]), None, None);
        assert_eq!(err, "xsort: cannot create temporary file in 'afile': not a directory\n", "{mode:?}");
        // One bad directory among good ones.
        let err = refused(&f, &with(&["-T", "good", "-T", "no-such-dir", "big"]), None, None);
        assert!(err.contains("in 'no-such-dir'"), "{mode:?}: {err}");
        // The default, TMPDIR, is held to the same rule.
        let err = refused(&f, &with(&["big"]), Some("gone"), None);
        assert!(err.contains("gone"), "{mode:?}: {err}");
        // Standard input turns out to spill: the first temp run fails.
        let err = refused(&f, &with(&["-T", "no-such-dir"]), None, Some(&big));
        assert!(err.starts_with("xsort: cannot create temporary file in 'no-such-dir'"), "{mode:?}: {err}");
    }
    // A merge of more inputs than --batch-size needs temp runs (GNU's nmerge-no).
    f.write("e", b"");
    let err = refused(&f, &["-m", "--batch-size=2", "-T", "no-such-dir", "e", "e", "e", "big"], None, None);
    assert!(err.starts_with("xsort: cannot create temporary file in 'no-such-dir'"), "{err}");
    assert!(!f.path("no-such-dir").exists() && !f.path("gone").exists(), "xsort created a temp dir");
    f.assert_clean();
}

#[test]
fn sorts_that_fit_ignore_a_bad_temp_dir() {
    // GNU's nmerge-yes and batch-size cases, and a sort of standard input that fits.
    let f = Fixture::new();
    f.write("foo", b"foo\n");
    f.write("e", b"");
    f.write("big", &b"aaa\n".repeat(1024));
    let out = crate::common::run(f.cmd().args(["-m", "--batch-size=4", "-T", "does/not/exist", "e", "e", "e", "foo"]));
    assert_eq!((out.status.code(), out.stdout.as_slice()), (Some(0), &b"foo\n"[..]), "{out:?}");
    let out = crate::common::run(f.cmd().args(["--batch-size=16", "-T", "does/not/exist", "big"]));
    assert_eq!((out.status.code(), out.stdout), (Some(0), b"aaa\n".repeat(1024)));
    for mode in [&[][..], &["--record-size=4"][..]] {
        let out = crate::common::run_with_stdin(f.cmd().args(mode).args(["-T", "does/not/exist"]), Some(b"bbb\naaa\n"));
        assert_eq!((out.status.code(), out.stdout.as_slice()), (Some(0), &b"aaa\nbbb\n"[..]), "{mode:?} {out:?}");
    }
    f.assert_clean();
}

#[test]
fn a_good_temp_dir_still_sorts_in_memory_without_touching_it() {
    let f = Fixture::new();
    f.write("in", b"bbbb\naaaa\n");
    let t = f.mkdir("t");
    crate::common::watch_dir(&t);
    for mode in [&["-T", "t"][..], &["--record-size=5", "-T", "t"][..]] {
        crate::common::ok(f.cmd().args(mode).args(["-o", "out", "in"]));
        assert_eq!(std::fs::read(f.path("out")).expect("out"), b"aaaa\nbbbb\n");
    }
    assert!(!crate::common::dir_was_used(&t), "a sort that fits used the temp dir");
    f.assert_clean();
}

#[test]
fn check_mode_uses_no_temp_space() {
    // -c only reads its input: like GNU, it does not look at -T.
    let f = Fixture::new();
    f.write("in", b"a\nb\n");
    crate::common::ok(f.cmd().args(["-c", "-T", "no-such-dir", "in"]));
}
