//! An unusable temp directory (`-T` or `TMPDIR`) is refused before anything is read, for text
//! lines as for records, whether or not the sort would spill: exit status 2, one line naming the
//! directory, the target untouched, nothing created.

use crate::common::Fixture;

/// Runs xsort with `args` over an input that fits in memory many times over; returns stderr.
fn refused(f: &Fixture, args: &[&str], tmpdir: Option<&str>) -> String {
    let mut c = f.cmd();
    if let Some(t) = tmpdir {
        c.env("TMPDIR", f.path(t));
    }
    let out = crate::common::run(c.args(args).args(["-o", "out", "in"]));
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert_eq!(std::fs::read(f.path("out")).expect("target"), b"old\n", "{args:?} touched the target");
    err
}

#[test]
fn bad_temp_dirs_are_refused_for_lines_and_records_alike() {
    let f = Fixture::new();
    f.write("in", b"bbbb\naaaa\n");
    f.write("out", b"old\n");
    f.write("afile", b"x");
    f.mkdir("good");
    for mode in [&[][..], &["--record-size=5"][..]] {
        let with = |extra: &[&'static str]| mode.iter().copied().chain(extra.iter().copied()).collect::<Vec<_>>();
        let err = refused(&f, &with(&["-T", "no-such-dir"]), None);
        assert_eq!(err, "xsort: no-such-dir: unusable temporary directory: No such file or directory\n", "{mode:?}");
        let err = refused(&f, &with(&["-T", "afile"]), None);
        assert_eq!(err, "xsort: afile: unusable temporary directory: not a directory\n", "{mode:?}");
        // One bad directory among good ones.
        let err = refused(&f, &with(&["-T", "good", "-T", "no-such-dir"]), None);
        assert!(err.contains("no-such-dir: unusable temporary directory"), "{mode:?}: {err}");
        // The default, TMPDIR, is held to the same rule.
        let err = refused(&f, &with(&[]), Some("gone"));
        assert!(err.contains("gone: unusable temporary directory"), "{mode:?}: {err}");
    }
    assert!(!f.path("no-such-dir").exists() && !f.path("gone").exists(), "xsort created a temp dir");
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
