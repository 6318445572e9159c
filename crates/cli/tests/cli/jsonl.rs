//! JSON lines (`--jsonl`): keys by paths into each line's value, against an independent reference
//! on Python's `json` module (`jsonl_reference.py`, next to this file: random nested values,
//! numbers in every JSON form, escaped and non-ASCII strings, blank lines, CRLF, keys with n, f,
//! r, several keys, -s, -r, a spilled sort, and an invalid line named by its number); and the
//! edges through the command: standard input, several inputs, compressed input, `-m`, `-c`, the
//! refusals.

use crate::common::*;
use std::path::PathBuf;
use std::process::Command;

#[test]
fn jsonl_orders_random_lines_as_the_reference_does() {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/cli/jsonl_reference.py");
    let out = Command::new("python3")
        .arg(&script)
        .args(["--xsort", bin(), "--seeds", "12"])
        .output()
        .unwrap_or_else(|e| panic!("python3 {}: {e} (the test needs Python 3 on PATH)", script.display()));
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "jsonl_reference.py failed ({}):\n{stdout}\n{stderr}", out.status);
}

#[test]
fn json_lines_from_several_places_merge_check_and_refusals() {
    let fx = Fixture::new();
    fx.write("a.jsonl", b"{\"t\": 3, \"m\": \"c\"}\n{\"t\": 1}\n");
    fx.write("b.jsonl", b"{\"t\": 2.5}\n{\"m\": \"a\"}\n");
    let out = ok_with_stdin(fx.cmd().args(["--jsonl", "-k", ".t", "a.jsonl", "-", "b.jsonl"]), Some(b"{\"t\": -1}\n"));
    assert_eq!(out.stdout, b"{\"m\": \"a\"}\n{\"t\": -1}\n{\"t\": 1}\n{\"t\": 2.5}\n{\"t\": 3, \"m\": \"c\"}\n");
    fx.write("s.jsonl", &out.stdout);
    ok(fx.cmd().args(["--jsonl", "-c", "-k", ".t", "s.jsonl"]));
    let out = run(fx.cmd().args(["--jsonl", "-c", "-k", ".t:r", "s.jsonl"]));
    assert_eq!(out.status.code(), Some(1));
    fx.write("c.jsonl", b"{\"t\": 0}\n{\"t\": 9}\n");
    let out = ok(fx.cmd().args(["--jsonl", "-m", "-k", ".t", "s.jsonl", "c.jsonl"]));
    assert_eq!(out.stdout, b"{\"m\": \"a\"}\n{\"t\": -1}\n{\"t\": 0}\n{\"t\": 1}\n{\"t\": 2.5}\n{\"t\": 3, \"m\": \"c\"}\n{\"t\": 9}\n");
    let mut gzip = Command::new("gzip").args(["-c", "-q", "a.jsonl"]).current_dir(fx.root()).output().unwrap();
    assert!(gzip.status.success());
    fx.write("a.jsonl.gz", &std::mem::take(&mut gzip.stdout));
    let out = ok(fx.cmd().args(["--jsonl", "-k", ".t:r", "a.jsonl.gz"]));
    assert_eq!(out.stdout, b"{\"t\": 3, \"m\": \"c\"}\n{\"t\": 1}\n");
    fx.write("bad.jsonl", b"{\"t\": 1}\n\n[1, 2\n");
    assert_eq!(
        fail(fx.cmd().args(["--jsonl", "bad.jsonl", "-o", "out"])),
        "xsort: bad.jsonl: line 3: invalid JSON: EOF while parsing a list (column 5)"
    );
    assert!(!fx.path("out").exists());
    assert_eq!(
        fail(fx.cmd().args(["--jsonl", "-k2,2", "a.jsonl"])),
        "xsort: keys of JSON lines are paths into their values, as -k .user.age or -k '.items[0].id:nr', not field numbers"
    );
    assert_eq!(
        fail(fx.cmd().args(["--jsonl", "-k", ".t:M", "a.jsonl"])),
        "xsort: a key of JSON lines takes the ordering letters n, f and r, not 'M'"
    );
    assert_eq!(fail(fx.cmd().args(["--jsonl", "-k", ".a[x]", "a.jsonl"])), "xsort: invalid JSON path '.a[x]': an index is not a number");
    assert_eq!(
        fail(fx.cmd().args(["--jsonl", "--csv", "a.jsonl"])),
        "xsort: --jsonl reads JSON lines, not CSV records: give one of --jsonl and --csv"
    );
    fx.assert_clean();
}
