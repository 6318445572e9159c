//! Text lines through the real binary: the engine's paths (mapped one pass, read chunks, spilled runs,
//! multi-level merges, `-m` of files and pipes, `-c`, in place, errors), each checked against GNU
//! sort's output for the same options (GNU sort is on every machine) and for leftovers.

use crate::common::*;
use std::process::Command;

/// Random lines: keys drawn from a small alphabet (many ties), numbers, and tabs.
fn random_lines(n: usize, seed: u64) -> Vec<u8> {
    let mut rng = Rng::new(seed);
    let mut out = Vec::new();
    for _ in 0..n {
        let len = rng.below(12);
        for _ in 0..len {
            out.push(b"abcAB \t19-."[rng.below(11)]);
        }
        out.extend_from_slice(format!(" {}\n", rng.below(100_000) as i64 - 50_000).as_bytes());
    }
    out
}

/// GNU sort's output for `args` over `files` (and `stdin`), in the C locale.
fn gnu(fx: &Fixture, args: &[&str], stdin: Option<&[u8]>) -> Vec<u8> {
    let mut c = Command::new("sort");
    c.env("LC_ALL", "C").current_dir(fx.root()).args(args);
    let out = run_with_stdin(&mut c, stdin);
    assert!(out.status.success(), "GNU sort failed: {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

/// Statistics JSON of a run.
fn stats(fx: &Fixture) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(fx.path("stats.json")).expect("stats written")).expect("stats JSON")
}

#[test]
fn one_pass_matches_gnu_for_files_and_stdin() {
    let fx = Fixture::new();
    fx.write("a", &random_lines(5000, 1));
    fx.write("b", b"no final newline\nzz");
    let input = random_lines(300, 2);
    for opts in [&["-n"][..], &["-k2,2n", "-k1,1r"], &["-s", "-k1.2,1.3"], &["-u", "-f"], &["-r"]] {
        let mut args = opts.to_vec();
        args.extend(["a", "-", "b"]);
        let out = ok_with_stdin(fx.cmd().args(&args), Some(&input));
        assert_eq!(out.stdout, gnu(&fx, &args, Some(&input)), "options {opts:?}");
    }
    fx.assert_clean();
}

#[test]
fn large_one_pass_sorts_are_written_in_pieces_as_they_are_sorted() {
    // Enough lines (300,000) for the kernel to hand the output over in pieces, so that writing
    // overlaps sorting; ties, -u and reversed keys must come out as with one piece.
    let fx = Fixture::new();
    let input = random_lines(300_000, 7);
    fx.write("in", &input);
    for opts in [&[][..], &["-u"], &["-k2,2n", "-u"], &["-r", "-s", "-k1,1"], &["-f", "-k2,2nr"]] {
        let mut args = opts.to_vec();
        args.extend(["-o", "out", "in"]);
        ok(fx.cmd().args(&args));
        let expect = gnu(&fx, &[opts, &["in"][..]].concat(), None);
        assert_eq!(std::fs::read(fx.path("out")).unwrap(), expect, "options {opts:?}");
        // Standard input is read into a chunk rather than mapped; standard output is a stream.
        let out = ok_with_stdin(fx.cmd().args(opts), Some(&input));
        assert_eq!(out.stdout, expect, "options {opts:?}, from stdin");
    }
    fx.assert_clean();
}

#[test]
fn spilled_sort_merges_runs_and_leaves_no_temp_files() {
    let fx = Fixture::new();
    fx.write("in", &random_lines(60_000, 3));
    let temp = fx.mkdir("t");
    for (opts, levels) in [(&["-n"][..], 1), (&["--batch-size=2", "-u", "-k2,2n"], 2)] {
        let mut args = vec!["-S", "300K", "-T", "t", "--stats-json", "stats.json", "-o", "out"];
        args.extend_from_slice(opts);
        args.push("in");
        ok(fx.cmd().args(&args));
        let s = stats(&fx);
        assert!(s["runs"].as_u64().unwrap() > 2, "expected several runs: {s}");
        assert!(s["merge_levels"].as_u64().unwrap() >= levels, "expected {levels}+ merge levels: {s}");
        let mut gnu_args = opts.to_vec();
        gnu_args.push("in");
        assert_eq!(std::fs::read(fx.path("out")).unwrap(), gnu(&fx, &gnu_args, None), "options {opts:?}");
        assert_dir_empty(&temp);
    }
    fx.assert_clean();
}

#[test]
fn long_lines_and_nul_terminated_records_spill_correctly() {
    let fx = Fixture::new();
    let mut data = random_lines(2000, 4);
    data.extend(std::iter::repeat_n(b'q', 3 << 20));
    data.extend_from_slice(b"\nshort\n");
    data.extend(std::iter::repeat_n(b'a', 1 << 20));
    fx.write("long", &data);
    let out = ok(fx.cmd().args(["-S", "256K", "long"]));
    assert_eq!(out.stdout, gnu(&fx, &["long"], None));
    let z: Vec<u8> = random_lines(3000, 5)
        .iter()
        .map(|&b| {
            if b == b'\n' {
                0
            } else if b == b'-' {
                b'\n'
            } else {
                b
            }
        })
        .collect();
    fx.write("z", &z);
    let out = ok(fx.cmd().args(["-z", "-S", "256K", "-k2,2n", "z"]));
    assert_eq!(out.stdout, gnu(&fx, &["-z", "-k2,2n", "z"], None));
    fx.assert_clean();
}

#[test]
fn merge_of_sorted_files_and_a_pipe() {
    let fx = Fixture::new();
    let mut names = Vec::new();
    for i in 0..5 {
        let name = format!("s{i}");
        fx.write(&name, &random_lines(2000, 10 + i));
        let sorted = gnu(&fx, &["-k2,2n", &name], None);
        fx.write(&name, &sorted);
        names.push(name);
    }
    let piped = gnu(&fx, &["-k2,2n", "s0"], None);
    let mut args = vec!["-m", "-k2,2n", "--batch-size=2"];
    args.extend(names.iter().map(String::as_str));
    args.push("-");
    let out = ok_with_stdin(fx.cmd().args(&args), Some(&piped));
    assert_eq!(out.stdout, gnu(&fx, &args, Some(&piped)));
    for n in &names {
        assert_eq!(std::fs::read(fx.path(n)).unwrap(), gnu(&fx, &["-k2,2n", n], None), "an input was modified");
    }
    fx.assert_clean();
}

#[test]
fn a_merge_reading_two_blocks_ahead_matches_gnu() {
    // 64 KiB transfers under the default budget: each input is read in many full blocks, two ahead
    // of the one being merged, with several runs' requests queued at once.
    let fx = Fixture::new();
    let mut names = Vec::new();
    for i in 0..4 {
        let name = format!("s{i}");
        fx.write(&name, &random_lines(60_000 + 7_919 * i as usize, 30 + i));
        let sorted = gnu(&fx, &["-s", "-k1,1", &name], None);
        fx.write(&name, &sorted);
        names.push(name);
    }
    let mut args = vec!["-m", "-s", "-k1,1", "--transfer-size=64K"];
    args.extend(names.iter().map(String::as_str));
    let out = ok(fx.cmd().args(&args));
    assert_eq!(out.stdout, gnu(&fx, &args[..3].iter().chain(&args[4..]).copied().collect::<Vec<_>>(), None));
    fx.assert_clean();
}

#[test]
fn check_reports_the_first_disorder() {
    let fx = Fixture::new();
    fx.write("sorted", b"a\nb\nb\nc\n");
    fx.write("unsorted", b"a\nc\nb\nd\n");
    ok(fx.cmd().args(["-c", "sorted"]));
    let out = run(fx.cmd().args(["-c", "unsorted"]));
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "xsort: unsorted:3: disorder: b\n");
    let out = run(fx.cmd().args(["-C", "unsorted"]));
    assert_eq!((out.status.code(), out.stderr.len()), (Some(1), 0));
    let out = run(fx.cmd().args(["-cu", "sorted"]));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "xsort: sorted:3: disorder: b\n");
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn sorts_in_place_and_errors_leave_the_target_alone() {
    let fx = Fixture::new();
    let data = random_lines(3000, 6);
    fx.write("f", &data);
    let expect = gnu(&fx, &["f"], None);
    ok(fx.cmd().args(["-o", "f", "f"]));
    assert_eq!(std::fs::read(fx.path("f")).unwrap(), expect);
    fx.write("out", b"keep me\n");
    let msg = fail(fx.cmd().args(["-o", "out", "f", "missing"]));
    assert!(msg.contains("missing") && msg.contains("No such file"), "{msg}");
    let msg = fail(fx.cmd().args(["-o", "out", "-k0", "f"]));
    assert!(msg.contains("field number is zero"), "{msg}");
    fx.write("big", &random_lines(60_000, 7));
    let msg = fail(fx.cmd().args(["-o", "out", "-S", "300K", "-T", "no-such-dir", "big"]));
    assert!(msg.contains("no-such-dir"), "{msg}");
    assert_eq!(std::fs::read(fx.path("out")).unwrap(), b"keep me\n");
    // A sort that fits in memory ignores a bad -T, as GNU sort does (tests/temp_check.rs).
    ok(fx.cmd().args(["-T", "no-such-dir", "-o", "out", "f"]));
    fx.assert_clean();
}

/// Writes an executable shell script `name` in the fixture.
fn script(fx: &Fixture, name: &str, body: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let path = fx.write(name, format!("#!/bin/sh\n{body}\n").as_bytes());
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.display().to_string()
}

#[test]
fn compress_program_stores_runs_through_it() {
    // A "compressor" that rotates letters (its own inverse) and logs its calls: the runs of a
    // multi-level merge, for lines and for records, go through it and come back intact.
    let fx = Fixture::new();
    let log = fx.path("calls");
    let rot = script(&fx, "rot", &format!("echo \"x$1\" >> '{}'\nexec tr 'A-Za-z' 'N-ZA-Mn-za-m'", log.display()));
    fx.write("in", &random_lines(60_000, 11));
    let temp = fx.mkdir("t");
    let prog = format!("--compress-program={rot}");
    for opts in [&["-n"][..], &["-u", "-k2,2n", "--batch-size=2"]] {
        let _ = std::fs::remove_file(&log);
        let mut args = vec!["-S", "300K", "-T", "t", &prog, "--stats-json", "stats.json", "-o", "out"];
        args.extend_from_slice(opts);
        args.push("in");
        ok(fx.cmd().args(&args));
        assert!(stats(&fx)["merge_levels"].as_u64().unwrap() >= 1, "expected a merge");
        assert_eq!(std::fs::read(fx.path("out")).unwrap(), gnu(&fx, &[opts, &["in"][..]].concat(), None), "options {opts:?}");
        let calls = std::fs::read_to_string(&log).unwrap();
        let (compress, decompress) = (calls.lines().filter(|l| *l == "x").count(), calls.lines().filter(|l| *l == "x-d").count());
        assert!(compress > 2 && compress == decompress, "{compress} compressions, {decompress} decompressions");
        assert_dir_empty(&temp);
    }
    let records = alphabet_records(20_000, 32, b"abcXYZ", 3);
    fx.write("rec", &records);
    ok(fx.cmd().args(["--record-size=32", "--key-bytes=0:6", "-S", "256K", "-T", "t", &prog, "-o", "out", "rec"]));
    assert_sorted_file(&fx.path("out"), &records, 32, &["0:6"]);
    assert_dir_empty(&temp);
    fx.assert_clean();
}

#[test]
fn a_tiny_budget_sorts_in_many_runs_as_gnu_sort_does() {
    // `-S 1k` sizes the chunk as GNU's buffer (the buffers are still at least 256 KiB): a 10 KB
    // input spills, through a compress program even when the parent ignored SIGCHLD
    // (GNU's sort-compress.sh).
    let fx = Fixture::new();
    let sorted: String = (1..=2000).map(|i| format!("{i:04}\n")).collect();
    let reversed: String = sorted.lines().rev().map(|l| format!("{l}\n")).collect();
    fx.write("in", reversed.as_bytes());
    let log = fx.path("calls");
    let prog = script(&fx, "z", &format!("echo \"x$1\" >> {}\nexec cat", log.display()));
    let args = ["-S", "1k", &format!("--compress-program={prog}"), "--stats-json", "stats.json", "-o", "out", "in"];
    ok(fx.cmd_under_sh("trap '' CHLD").args(args));
    assert_eq!(std::fs::read_to_string(fx.path("out")).unwrap(), sorted);
    assert!(stats(&fx)["runs"].as_u64().unwrap() >= 10, "{}", stats(&fx));
    assert!(std::fs::read_to_string(&log).unwrap().lines().any(|l| l == "x-d"), "the runs were not compressed");
    fx.assert_clean();
}

#[test]
fn compressed_runs_read_in_many_blocks_come_back_in_order() {
    // Runs of many 64 KiB blocks under a budget with room to read two ahead: a compressed run's
    // blocks come from one pipe, so they must still be read one at a time, in order.
    let fx = Fixture::new();
    let mut rng = Rng::new(21);
    let lines: String = (0..600_000).map(|i| format!("{:016x} {i}\n", rng.next_u64())).collect();
    fx.write("in", lines.as_bytes());
    fx.mkdir("t");
    let args = ["-S", "4M", "--transfer-size=64K", "-T", "t", "--compress-program=gzip", "--stats-json", "stats.json", "-o", "out", "in"];
    ok(fx.cmd().args(args));
    assert!(stats(&fx)["runs"].as_u64().unwrap() >= 3, "expected runs: {}", stats(&fx));
    assert_eq!(std::fs::read(fx.path("out")).unwrap(), gnu(&fx, &["in"], None));
    fx.assert_clean();
}

#[test]
fn compressed_runs_stay_within_the_descriptor_limit() {
    // More runs than descriptors (ulimit -n 32): compressed runs hold one each until merged, so
    // beyond a quarter of the limit runs are stored plain and merges take fewer at once.
    let fx = Fixture::new();
    let rot = script(&fx, "rot", "exec tr 'A-Za-z' 'N-ZA-Mn-za-m'");
    fx.write("in", &random_lines(1_000_000, 14));
    let temp = fx.mkdir("t");
    let prog = format!("--compress-program={rot}");
    ok(fx.cmd_under_sh("ulimit -n 32").args(["-S", "300K", "-T", "t", &prog, "--stats-json", "stats.json", "-o", "out", "in"]));
    assert!(stats(&fx)["runs"].as_u64().unwrap() > 32, "want more runs than descriptors");
    assert_eq!(std::fs::read(fx.path("out")).unwrap(), gnu(&fx, &["in"], None));
    assert_dir_empty(&temp);
    fx.assert_clean();
}

#[test]
fn compress_program_failures_are_errors() {
    let fx = Fixture::new();
    fx.write("in", &random_lines(60_000, 12));
    fx.write("out", b"keep me\n");
    let sort = |prog: &str| fail(fx.cmd().args(["-S", "300K", "-T", ".", "--compress-program", prog, "-o", "out", "in"]));
    let msg = sort("no-such-compressor");
    assert!(msg.contains("couldn't execute compress program 'no-such-compressor'"), "{msg}");
    let bad = script(&fx, "bad", "[ \"$1\" = -d ] && exit 3\nexec cat");
    let msg = sort(&bad);
    assert!(msg.contains("-d' failed") && msg.contains('3'), "{msg}");
    // A compressor that dies at once: its exit status is the error, not the broken pipe it causes.
    let dead = script(&fx, "dead", "exit 1");
    let msg = sort(&dead);
    assert!(msg.starts_with("xsort: .: compress program") && msg.ends_with("failed writing a temp run: exit status 1"), "{msg}");
    let short = script(&fx, "short", "[ \"$1\" = -d ] && exec head -c 100\nexec cat");
    assert!(sort(&short).contains("gave back less"));
    assert_eq!(std::fs::read(fx.path("out")).unwrap(), b"keep me\n");
    let msg = fail(fx.cmd().args(["--compress-program=a", "--compress-program=b", "in"]));
    assert_eq!(msg, "xsort: multiple compress programs specified");
    // A sort that fits in memory never starts the program.
    ok(fx.cmd().args(["--compress-program=no-such-compressor", "-o", "out", "in"]));
    fx.assert_clean();
}

#[test]
fn a_full_disk_while_writing_in_pieces_is_an_error_and_the_target_stays() {
    // 200,000 lines (1.2 MB, written in pieces as they are sorted) against a 512 KB file-size limit
    // with SIGXFSZ ignored: writes fail with EFBIG as they would with ENOSPC.
    let fx = Fixture::new();
    fx.write("in", &random_lines(200_000, 13));
    fx.write("out", b"keep me\n");
    let msg = fail(fx.cmd_under_sh("trap '' XFSZ; ulimit -f 1000").args(["-o", "out", "in"]));
    assert!(msg.starts_with("xsort: out: "), "the message should name the output: {msg}");
    assert_eq!(std::fs::read(fx.path("out")).unwrap(), b"keep me\n");
    fx.assert_clean();
}

#[test]
fn a_reader_that_goes_away_ends_xsort_silently_by_sigpipe() {
    // `xsort big | head -c 10`: as GNU sort, killed by SIGPIPE with nothing on stderr, rather than
    // a broken-pipe error; for lines and for records alike.
    use std::io::Read;
    use std::os::unix::process::ExitStatusExt;
    let fx = Fixture::new();
    let lines = random_lines(300_000, 15);
    fx.write("in", &lines);
    fx.write("rec", &lines[..lines.len() / 4 * 4]);
    for args in [&["in"][..], &["--record-size=4", "rec"]] {
        let mut child = fx.cmd().args(args).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap();
        let mut head = [0u8; 10];
        child.stdout.take().unwrap().read_exact(&mut head).unwrap(); // then closed
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.signal(), Some(libc::SIGPIPE), "{args:?}: {:?}", out.status);
        assert!(out.stderr.is_empty(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
    fx.assert_clean();
}
