//! Options of one format on the other: an option that cannot apply to the chosen format (records,
//! text lines, or the delimited records of `--spec`) is refused with one line naming it, exit
//! status 2 and the target untouched; an option that can apply to both does, whichever is sorted.

use crate::common::*;
use serde_json::Value;

const OLD: &[u8] = b"the target before the failed command\n";

/// Runs `args` (with `-o out`) in a fixture holding `in` (lines) and `in.dat` (records), expects the
/// one-line refusal naming `option`, and checks that `out` still holds what it held.
fn refused(args: &[&str], option: &str) {
    let fx = Fixture::new();
    fx.write("in", b"b\na\n");
    fx.write("in.dat", &random_bytes(1000, 7));
    fx.write("out", OLD);
    let msg = fail(fx.cmd().args(args).args(["-o", "out"]));
    assert!(msg.contains(option), "the message should name {option}: {msg}");
    assert_eq!(std::fs::read(fx.path("out")).unwrap(), OLD, "{args:?} touched the target");
    fx.assert_clean();
}

#[test]
fn record_options_are_refused_on_text_lines() {
    refused(&["--key-bytes=0:4", "in"], "--key-bytes");
    refused(&["-n", "--touch", "in"], "--touch");
    let msg = fail(Fixture::new().cmd().args(["--touch", "-"]));
    assert_eq!(msg, "xsort: --touch applies to fixed-size records (--record-size), not to text lines");
}

#[test]
fn record_options_are_refused_on_delimited_records() {
    let spec = "-format=delimiter:newline";
    refused(&["--spec", spec, "--touch", "in"], "--touch");
    refused(&["--spec", &format!("{spec} -touch"), "in"], "-touch");
    refused(&["--spec", spec, "--key-bytes=0:2", "in"], "--key-bytes");
}

#[test]
fn random_source_is_refused_on_records() {
    let fx = Fixture::new();
    fx.write("rs", &[7u8; 64]);
    fx.write("in.dat", &random_bytes(1000, 7));
    let msg = fail(fx.cmd().args(["--record-size=10", "--random-source=rs", "-o", "out", "in.dat"]));
    assert_eq!(msg, "xsort: --random-source applies to text lines; records take --key-bytes (see --help)");
    assert!(!fx.path("out").exists());
}

/// The statistics JSON of a sort of `args` into `out`.
fn stats_of(fx: &Fixture, args: &[&str]) -> Value {
    ok(fx.cmd().args(args).args(["--stats-json", "s.json", "-o", "out"]));
    serde_json::from_slice(&std::fs::read(fx.path("s.json")).unwrap()).unwrap()
}

/// Lines in byte order, as `LC_ALL=C sort` writes them.
fn sorted_lines(data: &[u8]) -> Vec<u8> {
    let mut lines: Vec<&[u8]> = data.split_inclusive(|&b| b == b'\n').collect();
    lines.sort();
    lines.concat()
}

#[test]
fn method_applies_to_text_lines() {
    let fx = Fixture::new();
    let data: Vec<u8> = (0..20_000u32).flat_map(|i| format!("{}\n", i.wrapping_mul(2_654_435_761) % 100_000).into_bytes()).collect();
    fx.write("in", &data);
    for method in ["merge", "radix"] {
        let s = stats_of(&fx, &["--method", method, "in"]);
        assert_eq!(s["method"], method, "--method {method} on lines");
        assert_eq!(std::fs::read(fx.path("out")).unwrap(), sorted_lines(&data));
    }
}

#[test]
fn transfer_size_applies_to_text_lines() {
    let fx = Fixture::new();
    let data: Vec<u8> = (0..100_000u32).flat_map(|i| format!("line {:08}\n", i.wrapping_mul(2_654_435_761)).into_bytes()).collect();
    fx.write("in", &data);
    // Under 8 MiB the output's blocks are 128 KiB (a sixteenth of the budget over four buffers)
    // unless the transfer size is smaller.
    for (args, block) in [(&["-S", "8M"][..], 128 << 10), (&["-S", "8M", "--transfer-size", "64K"], 64 << 10)] {
        let s = stats_of(&fx, &[args, &["in"]].concat());
        assert_eq!(std::fs::read(fx.path("out")).unwrap(), sorted_lines(&data));
        let phase = s["phases"].as_array().unwrap().iter().find(|p| p["name"] == "output write").unwrap_or_else(|| panic!("{s}"));
        assert_eq!(phase["transfer_size"], block, "{args:?}: {phase}");
        assert_eq!(phase["transfers"].as_u64().unwrap() as usize, data.len().div_ceil(block), "{args:?}: {phase}");
    }
}

#[test]
fn batch_size_applies_to_records() {
    let fx = Fixture::new();
    let n = 40_000;
    let sum = gensort(&fx.path("in.dat"), 0, n, false);
    let s = stats_of(&fx, &["--record-size=100", "--key-bytes=0:10", "-S", TINY, "-T", ".", "--batch-size=2", "in.dat"]);
    assert_valsort_clean(&fx.path("out"), n, sum);
    assert!(s["runs"].as_u64().unwrap() > 4, "the sort should spill several runs: {s}");
    assert_eq!(s["merge_fan_in"], 2, "--batch-size=2 caps the fan-in: {s}");
    assert!(s["merge_levels"].as_u64().unwrap() >= 2, "{s}");
}
