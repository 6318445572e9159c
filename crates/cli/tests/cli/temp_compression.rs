//! Temp runs stored zstd-compressed: `--compress-temp[=LEVEL]`, `--no-compress-temp`, and the
//! default that compresses them when the temp directory's free space would not hold them plainly
//! (a small tmpfs: CI runs as root; a test that cannot mount fails rather than skips, as in
//! `faults.rs`). Outputs are compared with GNU sort's and with the plain sort's; the statistics
//! show the compressed bytes written against the runs' plain bytes.

use crate::common::*;
use std::process::Command;
use xsort_testkit::Tmpfs;

/// Lines that compress as logs do: a number, then words from a small set.
fn log_lines(n: usize, seed: u64) -> Vec<u8> {
    const WORDS: [&str; 8] = ["GET", "POST", "/index.html", "/api/v1/items", "200", "404", "Mozilla/5.0", "curl/8.1"];
    let mut rng = Rng::new(seed);
    let mut out = Vec::new();
    for _ in 0..n {
        out.extend_from_slice(format!("{} {}", rng.below(100_000), rng.below(1000)).as_bytes());
        for _ in 0..4 {
            out.push(b' ');
            out.extend_from_slice(WORDS[rng.below(WORDS.len())].as_bytes());
        }
        out.push(b'\n');
    }
    out
}

/// GNU sort's output for `args`, in the C locale.
fn gnu(fx: &Fixture, args: &[&str]) -> Vec<u8> {
    let out = run(Command::new("sort").env("LC_ALL", "C").current_dir(fx.root()).args(args));
    assert!(out.status.success(), "GNU sort failed: {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

/// Runs `xsort ARGS --stats-json stats.json -o out` and returns the statistics.
fn sort(fx: &Fixture, args: &[&str]) -> serde_json::Value {
    ok(fx.cmd().args(args).args(["--stats-json", "stats.json", "-o", "out"]));
    read_stats(&fx.path("stats.json"))
}

/// Asserts that the sort's runs were compressed (`why` in the reason) and took less room than plain.
fn assert_compressed(stats: &serde_json::Value, why: &str) {
    assert_eq!(stats["temp_compression"], "zstd:1", "{stats}");
    assert!(stats["temp_compression_reason"].as_str().unwrap().contains(why), "{stats}");
    let (plain, written) = (stat_u64(stats, "temp_run_bytes"), stat_u64(stats, "temp_written_bytes"));
    assert!(plain > 0 && written * 2 < plain, "runs of {plain} bytes took {written} compressed");
}

#[test]
fn compressed_runs_of_lines_sort_as_gnu_and_the_plain_sort_do() {
    let fx = Fixture::new();
    fx.write("in", &log_lines(60_000, 1));
    let temp = fx.mkdir("t");
    for opts in [&["-n"][..], &["-u", "-k2,2n", "--batch-size=2"], &["-r", "-s", "-k3,3"]] {
        let expected = gnu(&fx, &[opts, &["in"]].concat());
        let stats = sort(&fx, &[&["-S", "300K", "-T", "t", "--compress-temp"], opts, &["in"]].concat());
        assert!(std::fs::read(fx.path("out")).unwrap() == expected, "options {opts:?}");
        assert!(stat_u64(&stats, "merge_levels") >= 1, "expected a merge: {stats}");
        if opts.contains(&"--batch-size=2") {
            assert_multilevel(&stats);
        }
        assert_compressed(&stats, "--compress-temp");
        assert_dir_empty(&temp);
        // The plain sort: the same output, runs written as they are.
        let plain = sort(&fx, &[&["-S", "300K", "-T", "t"], opts, &["in"]].concat());
        assert!(std::fs::read(fx.path("out")).unwrap() == expected, "options {opts:?}, plain");
        assert!(plain["temp_compression"].is_null(), "{plain}");
        assert_eq!(stat_u64(&plain, "temp_written_bytes"), stat_u64(&plain, "temp_run_bytes"));
    }
    // Any level; blocks of many read-ahead requests come back in order.
    let stats = sort(&fx, &["-S", "2M", "--transfer-size=64K", "-T", "t", "--compress-temp=6", "in"]);
    assert_eq!(stats["temp_compression"], "zstd:6");
    assert!(std::fs::read(fx.path("out")).unwrap() == gnu(&fx, &["in"]));
    assert_dir_empty(&temp);
    fx.assert_clean();
}

#[test]
fn compressed_runs_of_records_sort_as_the_plain_sort_does() {
    let fx = Fixture::new();
    let records = alphabet_records(40_000, 32, b"abcXYZ", 3);
    fx.write("rec", &records);
    let temp = fx.mkdir("t");
    for extra in [&[][..], &["--batch-size=2"]] {
        let args = [&["--record-size=32", "--key-bytes=0:6", "-S", "256K", "-T", "t", "--compress-temp"], extra, &["rec"]].concat();
        let stats = sort(&fx, &args);
        assert_sorted_file(&fx.path("out"), &records, 32, &["0:6"]);
        assert_compressed(&stats, "--compress-temp");
        assert_dir_empty(&temp);
    }
    // gensort records (random keys, compressible payloads), in several merge levels.
    let checksum = gensort(&fx.path("gen"), 0, 20_000, false);
    let args = ["--record-size=100", "--key-bytes=0:10", "-S", "512K", "--batch-size=3", "-T", "t", "--compress-temp", "gen"];
    let stats = sort(&fx, &args);
    assert_multilevel(&stats);
    assert_valsort_clean(&fx.path("out"), 20_000, checksum);
    assert_eq!(stats["temp_compression"], "zstd:1");
    assert_dir_empty(&temp);
    fx.assert_clean();
}

#[test]
fn merges_of_sorted_inputs_are_unchanged_and_their_batches_compressed() {
    let fx = Fixture::new();
    let mut names = Vec::new();
    for i in 0..6 {
        let name = format!("s{i}");
        let sorted = gnu(&fx, &[fx.write(&name, &log_lines(5000, 10 + i)).to_str().unwrap()]);
        fx.write(&name, &sorted);
        names.push(name);
    }
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let expected = gnu(&fx, &[&["-m"], &names[..]].concat());
    fx.mkdir("t");
    for opts in [&["--compress-temp"][..], &["--compress-temp", "--batch-size=2"]] {
        sort(&fx, &[&["-m", "-T", "t"], opts, &names[..]].concat());
        assert!(std::fs::read(fx.path("out")).unwrap() == expected, "options {opts:?}");
        assert_dir_empty(&fx.path("t"));
    }
    fx.assert_clean();
}

#[test]
fn bad_settings_are_refused_in_one_line() {
    let fx = Fixture::new();
    fx.write("in", b"b\na\n");
    for (args, says) in [
        (&["--compress-temp=0"][..], "invalid --compress-temp '0': zstd levels go from 1 to 19"),
        (&["--compress-temp=20"], "invalid --compress-temp '20': zstd levels go from 1 to 19"),
        (&["--compress-temp=fast"], "invalid --compress-temp 'fast'"),
        (&["--compress-temp", "--compress-program=gzip"], "both by zstd (--compress-temp) and by the compress program 'gzip'"),
    ] {
        let msg = fail(fx.cmd().args(args).arg("in"));
        assert!(msg.contains(says) && msg.lines().count() <= 2, "{args:?}: {msg}");
    }
    // The last of --compress-temp and --no-compress-temp wins.
    fx.write("big", &log_lines(20_000, 2));
    let stats = sort(&fx, &["-S", "300K", "--compress-temp", "--no-compress-temp", "big"]);
    assert!(stats["temp_compression"].is_null() && stat_u64(&stats, "runs") > 1, "{stats}");
    let stats = sort(&fx, &["-S", "300K", "--no-compress-temp", "--compress-temp=2", "big"]);
    assert_eq!(stats["temp_compression"], "zstd:2");
    // A sort in one pass writes no run, compressed or not.
    let stats = sort(&fx, &["--compress-temp", "in"]);
    assert_eq!((stat_u64(&stats, "runs"), &stats["temp_compression"]), (0, &serde_json::Value::Null));
    fx.assert_clean();
}

#[test]
fn runs_are_compressed_by_default_when_the_temp_space_would_not_hold_them() {
    if !xsort_testkit::root() {
        return;
    }
    let fx = Fixture::new();
    let input = log_lines(100_000, 4);
    fx.write("in", &input);
    let expected = gnu(&fx, &["in"]);
    // 2 MiB of temp space for 4.2 MB of runs: plainly they do not fit, compressed they do.
    let _fs = Tmpfs::mount(&fx.path("t"), "2m");
    let stats = sort(&fx, &["-S", "2M", "-T", "t", "--stats", "in"]);
    assert!(std::fs::read(fx.path("out")).unwrap() == expected);
    assert_compressed(&stats, "automatic: t has");
    assert_dir_empty(&fx.path("t"));
    // Forbidden, the sort fills the directory and says so, leaving nothing behind.
    fx.write("out", b"old\n");
    let msg = fail(fx.cmd().args(["-S", "2M", "-T", "t", "--no-compress-temp", "-o", "out", "in"]));
    assert!(msg.starts_with("xsort: t") && msg.contains("No space left on device"), "{msg}");
    assert_eq!(std::fs::read(fx.path("out")).unwrap(), b"old\n");
    assert_dir_empty(&fx.path("t"));
    // Room enough: plain, as before.
    let stats = sort(&fx, &["-S", "2M", "-T", "tmp", "in"]);
    assert!(stats["temp_compression"].is_null(), "{stats}");
    fx.assert_clean();
}

#[test]
fn runs_too_large_even_compressed_fill_the_temp_directory_with_an_error() {
    if !xsort_testkit::root() {
        return;
    }
    let fx = Fixture::new();
    // Random bytes do not compress: 2 MB of them in a 256 KiB temp directory.
    let mut rng = Rng::new(9);
    let lines: String = (0..60_000).map(|_| format!("{:016x}{:016x}\n", rng.next_u64(), rng.next_u64())).collect();
    fx.write("in", lines.as_bytes());
    let _fs = Tmpfs::mount(&fx.path("t"), "256k");
    let msg = fail(fx.cmd().args(["-S", "1M", "-T", "t", "-o", "out", "in"]));
    assert!(msg.starts_with("xsort: t") && msg.contains("No space left on device"), "{msg}");
    assert!(!fx.path("out").exists());
    assert_dir_empty(&fx.path("t"));
    fx.assert_clean();
}
