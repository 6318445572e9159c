//! The error contract of the real `xsort` binary: every failure exits with status 2 and one line
//! `xsort: ...` on stderr that names the file or option at fault; the output target keeps its old
//! contents; no `.xsort-` file (output or temp) is left in the target's directory or the temp
//! directories.

use crate::common::*;
use std::path::PathBuf;

/// What the target held before the failed sort; it must still hold it afterwards.
const KNOWN: &[u8] = b"the previous contents of the target, which a failed sort must not touch\n";

/// A fixture with a pre-existing target `out`, a temp dir `t`, and a few inputs: `good` (3 MB of
/// 100-byte records, enough to spill with a tiny budget), `partial` (one byte short of whole
/// records), a directory `d` and a plain file `afile`.
struct Case {
    fx: Fixture,
    temp: PathBuf,
}

impl Case {
    fn new() -> Case {
        let fx = Fixture::new();
        fx.write("out", KNOWN);
        let temp = fx.mkdir("t");
        fx.write("good", &random_bytes(30_000 * 100, 1));
        fx.write("partial", &random_bytes(1050, 2));
        fx.mkdir("d");
        fx.write("afile", b"not a directory");
        Case { fx, temp }
    }

    /// Runs xsort with `args` (stdin from `stdin`), asserts the error contract and that the
    /// message contains every string of `names`; returns the message.
    fn fails(&self, args: &[&str], stdin: Option<&[u8]>, names: &[&str]) -> String {
        let msg = fail_with_stdin(self.fx.cmd().args(args), stdin);
        for n in names {
            assert!(msg.contains(n), "message should name '{n}': {msg}\nargs: {args:?}");
        }
        self.assert_untouched();
        msg
    }

    fn assert_untouched(&self) {
        assert_eq!(std::fs::read(self.fx.path("out")).unwrap(), KNOWN, "the target was modified");
        assert_dir_empty(&self.temp);
        assert_eq!(std::fs::read(self.fx.path("good")).unwrap(), random_bytes(30_000 * 100, 1), "input modified");
        self.fx.assert_clean();
    }
}

#[test]
fn input_length_not_a_multiple_of_the_record_size() {
    let c = Case::new();
    c.fails(&["--record-size=100", "-o", "out", "partial"], None, &["partial"]);
    // The bad file comes after a good one that alone would spill.
    c.fails(&["--record-size=100", "-S", TINY, "-T", "t", "-o", "out", "good", "partial"], None, &["partial"]);
    // 4097-byte records: 3 MB is not a multiple.
    c.fails(&["--record-size=4097", "-o", "out", "good"], None, &["good"]);
}

#[test]
fn partial_record_at_the_end_of_stdin_after_spilling() {
    let c = Case::new();
    let mut data = random_bytes(5_000 * 100, 3);
    data.extend_from_slice(&[7u8; 50]);
    // The length is unknown until the end: runs are on temp space by then and must go.
    c.fails(&["--record-size=100", "-S", TINY, "-T", "t", "-o", "out"], Some(&data), &["-"]);
    c.fails(&["--record-size=100", "-S", TINY, "-T", "t", "-o", "out", "good", "-"], Some(&data), &["-"]);
    // One pass too.
    c.fails(&["--record-size=100", "-T", "t", "-o", "out", "-"], Some(&data), &["-"]);
}

#[test]
fn missing_input() {
    let c = Case::new();
    c.fails(&["--record-size=100", "-o", "out", "no-such-file"], None, &["no-such-file"]);
    c.fails(&["--record-size=100", "-S", TINY, "-T", "t", "-o", "out", "good", "no-such-file"], None, &["no-such-file"]);
    c.fails(&["--record-size=100", "-o", "out", "nodir/file"], None, &["nodir/file"]);
}

#[test]
fn directory_as_input() {
    let c = Case::new();
    c.fails(&["--record-size=100", "-o", "out", "d"], None, &["d"]);
    c.fails(&["--record-size=100", "-S", TINY, "-T", "t", "-o", "out", "good", "d"], None, &["d"]);
}

#[test]
fn missing_temp_dir() {
    let c = Case::new();
    let msg = c.fails(&["--record-size=100", "-S", TINY, "-T", "no-such-dir", "-o", "out", "good"], None, &["no-such-dir"]);
    assert!(!c.fx.path("no-such-dir").exists(), "xsort created the temp dir: {msg}");
    // The bad one among good ones.
    c.fails(&["--record-size=100", "-S", TINY, "-T", "t", "-T", "no-such-dir", "-o", "out", "good"], None, &["no-such-dir"]);
}

#[test]
fn temp_dir_that_is_a_file() {
    let c = Case::new();
    c.fails(&["--record-size=100", "-S", TINY, "-T", "afile", "-o", "out", "good"], None, &["afile"]);
    assert_eq!(std::fs::read(c.fx.path("afile")).unwrap(), b"not a directory");
}

#[test]
fn key_beyond_the_record() {
    let c = Case::new();
    c.fails(&["--record-size=100", "--key-bytes", "95:10", "-o", "out", "good"], None, &["95:10"]);
    c.fails(&["--record-size=100", "--key-bytes", "0:10", "--key-bytes", "100:1", "-o", "out", "good"], None, &["100:1"]);
    c.fails(&["--record-size=7", "--key-bytes", "0:8", "-o", "out", "good"], None, &["0:8"]);
}

#[test]
fn malformed_key_bytes() {
    let c = Case::new();
    for bad in ["0:0", "a:b", "5", "1:2:x", "1:2:r:3", "-1:2"] {
        let arg = format!("--key-bytes={bad}");
        c.fails(&["--record-size=100", &arg, "-o", "out", "good"], None, &["--key-bytes", bad]);
    }
}

#[test]
fn record_size_zero_or_contradicted() {
    let c = Case::new();
    c.fails(&["--record-size", "0", "-o", "out", "good"], None, &["--record-size"]);
    // Options of text lines do not apply to records.
    c.fails(&["--record-size=100", "-k1,1", "-o", "out", "good"], None, &["-k", "--key-bytes"]);
    c.fails(&["--record-size=100", "--spec", "-format=size:50", "-o", "out", "good"], None, &["--record-size"]);
}

#[test]
fn bad_memory_size() {
    let c = Case::new();
    for bad in ["bogus", "12Q", "1.5.5M", "M", "10%%"] {
        let msg = c.fails(&["--record-size=100", "-S", bad, "-o", "out", "good"], None, &[bad]);
        assert!(msg.contains("memory") || msg.contains("-S"), "message should name the option: {msg}");
    }
}

#[test]
fn other_bad_options() {
    let c = Case::new();
    c.fails(&["--record-size=100", "--method", "quick", "-o", "out", "good"], None, &["--method", "quick"]);
    c.fails(&["--record-size=100", "--parallel", "0", "-o", "out", "good"], None, &["--parallel"]);
    c.fails(&["--record-size=100", "--transfer-size", "lots", "-o", "out", "good"], None, &["--transfer-size", "lots"]);
}

#[test]
fn unknown_option_exits_2() {
    let c = Case::new();
    let out = run(c.fx.cmd().args(["--record-size=100", "--no-such-option", "-o", "out", "good"]));
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("--no-such-option"));
    c.assert_untouched();
}

#[test]
fn output_in_a_missing_directory() {
    let c = Case::new();
    c.fails(&["--record-size=100", "-o", "no-such-dir/out", "good"], None, &["no-such-dir/out"]);
    assert!(!c.fx.path("no-such-dir").exists());
    c.fails(&["--record-size=100", "-S", TINY, "-T", "t", "-o", "no-such-dir/out", "good"], None, &["no-such-dir/out"]);
}

#[test]
fn output_is_a_directory() {
    let c = Case::new();
    c.fails(&["--record-size=100", "-o", "d", "good"], None, &["d"]);
    assert_dir_empty(&c.fx.path("d"));
}

#[test]
fn output_device_full() {
    let c = Case::new();
    let msg = fail(c.fx.cmd().args(["--record-size=100", "-o", "/dev/full", "good"]));
    assert!(msg.contains("/dev/full"), "{msg}");
    c.assert_untouched();
}

/// A full disk without root: a file-size limit (`ulimit -f`, 512-byte blocks in POSIX sh) with
/// SIGXFSZ ignored makes writes past the limit fail with EFBIG, as they would with ENOSPC.
const SMALL_DISK: &str = "trap '' XFSZ; ulimit -f 1000";

#[test]
fn output_file_system_full() {
    let c = Case::new();
    for extra in [&[][..], &["--buffered"][..]] {
        let msg =
            fail(c.fx.cmd_under_sh(SMALL_DISK).args(["--record-size=100", "--key-bytes=0:10"]).args(extra).args(["-o", "out", "good"]));
        // The user named 'out', not the unnamed (or hidden) file that was to replace it.
        assert!(msg.starts_with("xsort: out: "), "message should name the output 'out': {msg}");
        c.assert_untouched();
    }
}

#[test]
fn temp_file_system_full() {
    let c = Case::new();
    let msg = fail(c.fx.cmd_under_sh(SMALL_DISK).args(["--record-size=100", "-S", TINY, "-T", "t", "-o", "out", "good"]));
    assert!(msg.contains('t'), "{msg}");
    c.assert_untouched();
    // The output is standard output: still exit 2 and no temp left.
    let out = run(c.fx.cmd_under_sh(SMALL_DISK).args(["--record-size=100", "-S", TINY, "-T", "t", "good"]));
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    c.assert_untouched();
}

#[test]
fn spec_input_errors_name_the_file() {
    let c = Case::new();
    c.fails(&["--spec", "-format=size:100 -in_file=partial -out_file=out"], None, &["partial"]);
    c.fails(&["--spec", "-format=size:100 -in_file=no-such-file -out_file=out"], None, &["no-such-file"]);
    c.fails(&["--spec", "-format=size:100 -memory=256K -in_file=good -out_file=out -temp=no-such-dir"], None, &["no-such-dir"]);
}
