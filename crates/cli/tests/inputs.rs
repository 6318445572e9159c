//! How the real `xsort` binary opens and reads its inputs: a file it cannot open is reported as
//! such before anything is said of its contents.

mod common;

use common::*;
use std::os::unix::fs::PermissionsExt;
use std::process::Command;

/// `xsort` run as the unprivileged user `nobody` (the tests run as root, who may read anything).
fn as_nobody(fx: &Fixture) -> Command {
    let mut c = Command::new("setpriv");
    c.args(["--reuid=nobody", "--regid=nogroup", "--clear-groups", bin()]).env("TMPDIR", fx.tmp()).current_dir(fx.root());
    c
}

#[test]
fn an_input_that_cannot_be_opened_is_reported_before_its_size() {
    let fx = Fixture::new();
    // nobody may pass through the fixture (and its tmp/) but not read the input.
    for d in [fx.root().to_owned(), fx.tmp()] {
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o711)).unwrap();
    }
    let f = fx.write("f", b"ab");
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o000)).unwrap();
    // Records: 2 bytes are not a multiple of 100, but the file cannot be read in the first place.
    let msg = fail(as_nobody(&fx).args(["--record-size=100", "f"]));
    assert_eq!(msg, "xsort: f: cannot read: Permission denied");
    let msg = fail(as_nobody(&fx).args(["--record-size=1", "f"]));
    assert_eq!(msg, "xsort: f: cannot read: Permission denied");
    // Lines.
    let msg = fail(as_nobody(&fx).arg("f"));
    assert_eq!(msg, "xsort: f: cannot read: Permission denied");
    // A directory nobody may not enter: the same, for the file inside it.
    let d = fx.mkdir("closed");
    std::fs::write(d.join("g"), b"xyz").unwrap();
    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o700)).unwrap();
    let msg = fail(as_nobody(&fx).args(["--record-size=2", "closed/g"]));
    assert_eq!(msg, "xsort: closed/g: cannot read: Permission denied");
    fx.assert_clean();
}
