//! The files xsort makes, on the real binary: temp runs and the partial output are private to the
//! user (unnamed, or under a random name with a narrow mode), files planted at predictable names do
//! not stop a sort, and nothing is left behind, even by SIGKILL.

mod common;

use common::*;
use std::path::Path;

/// `n` text lines of random letters (1 to 40 of them), each ending in a newline.
fn random_lines(n: usize, seed: u64) -> Vec<u8> {
    let mut g = Rng::new(seed);
    let mut out = Vec::new();
    for _ in 0..n {
        let len = 1 + g.below(40);
        out.extend((0..len).map(|_| b'a' + g.below(26) as u8));
        out.push(b'\n');
    }
    out
}

/// The lines of `data` in byte order (LC_ALL=C sort).
fn sorted_lines(data: &[u8]) -> Vec<u8> {
    let mut lines: Vec<&[u8]> = data.split_inclusive(|&b| b == b'\n').collect();
    lines.sort();
    lines.concat()
}

/// Asserts that `out` holds the lines of `input`, sorted.
fn assert_sorted_lines(out: &Path, input: &[u8]) {
    let got = std::fs::read(out).unwrap_or_else(|e| panic!("read {}: {e}", out.display()));
    assert!(got == sorted_lines(input), "{} is not the sorted input ({} bytes, expected {})", out.display(), got.len(), input.len());
}

#[test]
fn planted_links_at_old_temp_names_do_not_stop_a_spilled_sort() {
    let fx = Fixture::new();
    let input = random_lines(60_000, 1);
    fx.write("in", &input);
    fx.mkdir("t");
    // Links at the names xsort once gave its temp runs (`.xsort-PID-SERIAL.tmp`), made by the shell
    // that then becomes xsort, so PID is xsort's own.
    let plant = "for i in 0 1 2 3 4 5 6 7 8 9; do ln -s /nonexistent t/.xsort-$$-$i.tmp; done";
    ok(fx.cmd_under_sh(plant).args(["-S", TINY, "-T", "t", "-o", "out", "in"]));
    assert_sorted_lines(&fx.path("out"), &input);
    assert_eq!(std::fs::read_dir(fx.path("t")).unwrap().count(), 10, "only the planted links remain");
}
