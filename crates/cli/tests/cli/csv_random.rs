//! CSV mode (`--csv`, `--tsv`, `--csv-separator`) against an independent reference:
//! `csv_reference.py`, next to this file (Python 3, standard library only), writes seeded random
//! delimited files (quoted fields holding separators, doubled quotes, newlines and CRs; CRLF and LF
//! endings mixed; empty, short and long records; non-ASCII text; numeric columns with ties; a last
//! record without its newline; header records), sorts them itself by GNU's key semantics on the
//! fields' unquoted values, and compares the bytes xsort writes under fixed and random option sets
//! (-k forms and flags, -s, -u, -r, --header, `-k NAME`, several inputs sharing a header, -m, -c,
//! now and then a sort that spills). It also checks the errors: an unclosed quote, a stray quote
//! under --strict, a later input's differing header, `-k NAME` without --header.
//!
//! The script's reference is itself checked against GNU sort (`sort -t SEP`) on files without
//! quotes, where both must give the same order: a wrong reference would otherwise pass or fail
//! xsort for the wrong reason.
//!
//! A failure prints the seed, the options, the first differing record, a minimized input and the
//! directory it keeps; `python3 crates/cli/tests/cli/csv_reference.py --xsort target/testing/xsort
//! --only-seed S` reruns that seed alone. Environment:
//! - `XSORT_CSV_RANDOM_SEEDS=N`  number of seeds (default [`DEFAULT_SEEDS`]);
//! - `XSORT_CSV_RANDOM_SEED=S`   the first seed (default 1).

use crate::common::bin;
use std::path::PathBuf;
use std::process::Command;

/// Seeds per run by default: each some 25 xsort runs on a few hundred records; about ten seconds on
/// two cores, most of it starting processes.
const DEFAULT_SEEDS: u64 = 30;
/// Seeds of the reference's own check: it sorts each case twice (one comparator sort, one pass per
/// key) and runs GNU sort, and its semantics do not change from one xsort commit to the next.
const REFERENCE_SEEDS: u64 = 10;

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/cli/csv_reference.py")
}

/// Runs the script with `args` and the seed variables (`default_seeds` unless set); fails the test
/// with its whole output (the reports of the mismatches) unless it exits 0.
fn run_script(args: &[&str], default_seeds: u64) {
    let seeds = xsort_testkit::env_number("XSORT_CSV_RANDOM_SEEDS").unwrap_or(default_seeds).to_string();
    let base = xsort_testkit::env_number("XSORT_CSV_RANDOM_SEED").unwrap_or(1).to_string();
    let out = Command::new("python3")
        .arg(script())
        .args(args)
        .args(["--seeds", &seeds, "--seed-base", &base])
        .output()
        .unwrap_or_else(|e| panic!("python3 {}: {e} (the test needs Python 3 on PATH)", script().display()));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "csv_reference.py {args:?} failed ({}):\n{stdout}\n{stderr}", out.status);
    eprintln!("{}", stdout.trim_end());
}

#[test]
fn csv_mode_orders_random_files_as_the_reference_does() {
    run_script(&["--xsort", bin()], DEFAULT_SEEDS);
}

#[test]
fn the_reference_orders_quote_free_files_as_gnu_sort_does() {
    // GNU sort 9.1 is the oracle of the key semantics (where `xsort_testkit` says it is missing,
    // this test does not run; under CI that fails).
    if !xsort_testkit::gnu_sort() {
        return;
    }
    run_script(&["--check-reference", "--sort", "sort"], REFERENCE_SEEDS);
}
