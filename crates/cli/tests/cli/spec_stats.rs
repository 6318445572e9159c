//! Nsort statements (`--spec`), the statistics report (`--stats`), the statistics JSON
//! (`--stats-json`), memory sizes and the memory budget, on the real `xsort` binary.

use crate::common::*;
use serde_json::Value;

/// The statements published with Nsort's benchmark runs, with IN, OUT and DIR to replace.
const PUBLISHED: &str = "-processes=2 -memory=64M -method=radix -touch -format=size:100 \
-field=name:key,size:10,off:0,character -key=key -statistics \
-in_file=IN,direct,transfer_size=16M,count=4 \
-out_file=OUT,direct,transfer_size=1M,count=4,preallocate \
-temp=DIR,direct,transfer_size=1M,count=2,preallocate";

fn published(input: &str, output: &str, dir: &str) -> String {
    PUBLISHED.replace("IN", input).replace("OUT", output).replace("DIR", dir)
}

const PHASES: [&str; 4] = ["input read", "temp write", "temp read", "output write"];

#[test]
fn spec_published_statements_sort_and_print_statistics() {
    let fx = Fixture::new();
    let n = 20_000;
    let sum = gensort(&fx.path("in.dat"), 0, n, false);
    let before = std::fs::read(fx.path("in.dat")).unwrap();
    let temp = fx.mkdir("t");
    watch_dir(&temp);
    fx.write("out.dat", b"old");
    let out = ok(fx.cmd().arg("--spec").arg(published("in.dat", "out.dat", "t")));
    assert!(out.stdout.is_empty(), "the output goes to -out_file, not stdout");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("xsort statistics"), "-statistics should print the report:\n{err}");
    for p in ["input read", "output write"] {
        assert!(err.contains(p), "report lacks phase '{p}':\n{err}");
    }
    assert!(err.contains("radix"), "report should name the method:\n{err}");
    assert_valsort_clean(&fx.path("out.dat"), n, sum);
    assert_sorted_file(&fx.path("out.dat"), &before, 100, &["0:10"]);
    assert!(!dir_was_used(&temp), "a 2 MB sort with -memory=64M should not touch -temp");
    assert_eq!(std::fs::read(fx.path("in.dat")).unwrap(), before);
    fx.assert_clean();
}

#[test]
fn spec_temp_statement_is_used_when_spilling() {
    let fx = Fixture::new();
    let n = 30_000;
    let sum = gensort(&fx.path("in.dat"), 5, n, false);
    let temp = fx.mkdir("t");
    watch_dir(&temp);
    watch_dir(&fx.tmp());
    // A flag wins over the -memory statement: the sort spills into the -temp directory.
    let out = ok(fx.cmd().args(["-S", TINY, "--stats-json", "s.json", "--spec"]).arg(published("in.dat", "out.dat", "t")));
    let err = String::from_utf8(out.stderr).unwrap();
    for p in PHASES {
        assert!(err.contains(p), "report lacks phase '{p}':\n{err}");
    }
    assert_valsort_clean(&fx.path("out.dat"), n, sum);
    let stats = read_stats(&fx.path("s.json"));
    assert_multilevel(&stats);
    assert_eq!(stat_u64(&stats, "memory_budget_bytes"), 256 << 10, "-S must win over -memory=64M");
    if direct_io_works(&temp) {
        // The statements' `direct` wins over the buffered default of a tiny budget.
        for phase in ["temp write", "temp read", "output write"] {
            assert_eq!(phase_mode(&stats, phase), "direct", "{phase}");
        }
    }
    assert!(dir_was_used(&temp), "-temp directory not used");
    assert!(!dir_was_used(&fx.tmp()), "TMPDIR used instead of -temp");
    assert_dir_empty(&temp);
    fx.assert_clean();
}

#[test]
fn spec_split_over_several_arguments_and_stdin() {
    let fx = Fixture::new();
    let data = alphabet_records(10_000, 20, b"abc", 1);
    let spec =
        ["-format=size:20", "-field=name:a,size:3,off:2,character -field=name:b,size:4,off:10,character", "-key=b,descending -key=a"];
    let mut cmd = fx.cmd();
    for s in spec {
        cmd.arg("--spec").arg(s);
    }
    let out = ok_with_stdin(&mut cmd, Some(&data));
    assert_same_records(&out.stdout, &reference_sort(&data, 20, &["10:4:r", "2:3"]), 20, "spec keys");
    fx.assert_clean();
}

#[test]
fn spec_wrong_statement_fails_quoting_it() {
    let fx = Fixture::new();
    fx.write("in.dat", &random_bytes(100 * 100, 2));
    fx.write("out.dat", b"old");
    for bad in [
        "-method=quick",
        "-bogus=1",
        "-format=size:abc",
        "-key=nokey",
        "-field=name:k,size:10,off:95,character",
        "-memory=lots",
        "-in_file=in.dat,sideways",
    ] {
        let spec = format!("-format=size:100 -field=name:key,size:10,off:0,character -key=key {bad} -out_file=out.dat");
        let msg = fail(fx.cmd().arg("--spec").arg(&spec).arg("in.dat"));
        assert!(msg.contains(&format!("'{bad}'")), "the message should quote the statement {bad}: {msg}");
        assert_eq!(std::fs::read(fx.path("out.dat")).unwrap(), b"old");
    }
    // In the published statements, one word wrong.
    let spec = published("in.dat", "out.dat", "tmp").replace("-method=radix", "-method=radox");
    let msg = fail(fx.cmd().arg("--spec").arg(&spec));
    assert!(msg.contains("'-method=radox'"), "{msg}");
    assert_eq!(std::fs::read(fx.path("out.dat")).unwrap(), b"old");
    fx.assert_clean();
}

// ------------------------------------------------------------------------------------------------
// --stats and --stats-json

/// Sorts `n` gensort records with `extra` options, `--stats` and `--stats-json`; returns the
/// report and the JSON, having checked the output with valsort.
fn sort_with_stats(fx: &Fixture, n: u64, extra: &[&str]) -> (String, Value) {
    let sum = gensort(&fx.path("in.dat"), 0, n, false);
    let out = ok(fx
        .cmd()
        .args(["--record-size=100", "--key-bytes=0:10", "--stats", "--stats-json", "s.json"])
        .args(extra)
        .args(["-o", "out.dat", "in.dat"]));
    assert_valsort_clean(&fx.path("out.dat"), n, sum);
    (String::from_utf8(out.stderr).unwrap(), read_stats(&fx.path("s.json")))
}

#[test]
fn stats_report_names_the_phases() {
    let fx = Fixture::new();
    let (report, _) = sort_with_stats(&fx, 10_000, &[]);
    assert!(report.starts_with("xsort statistics"), "{report}");
    for p in ["input read", "output write"] {
        assert!(report.contains(p), "one-pass report lacks '{p}':\n{report}");
    }
    for p in ["temp write", "temp read"] {
        assert!(!report.contains(p), "one-pass report shows '{p}':\n{report}");
    }
    let (report, _) = sort_with_stats(&fx, 30_000, &["-S", TINY]);
    for p in PHASES {
        assert!(report.contains(p), "spilled report lacks '{p}':\n{report}");
    }
    // Without --stats, nothing on stderr.
    let out = ok(fx.cmd().args(["--record-size=100", "-o", "out2.dat", "in.dat"]));
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    fx.assert_clean();
}

/// Checks the fields every stats JSON must have and that they agree with each other and with the
/// data: `n` records of 100 bytes.
fn check_stats_json(s: &Value, n: u64, spilled: bool) {
    for f in [
        "records",
        "bytes",
        "passes",
        "runs",
        "merge_levels",
        "merge_fan_in",
        "elapsed_s",
        "peak_rss_bytes",
        "memory_budget_bytes",
        "phases",
        "samples",
        "input_mapped",
        "entries_bytes",
        "minor_faults",
    ] {
        assert!(s.get(f).is_some(), "stats JSON lacks '{f}': {s}");
    }
    let bytes = n * 100;
    assert_eq!(stat_u64(s, "records"), n);
    assert_eq!(stat_u64(s, "bytes"), bytes);
    assert!(s["elapsed_s"].as_f64().unwrap() > 0.0);
    assert!(stat_u64(s, "peak_rss_bytes") > 0);
    assert!(stat_u64(s, "memory_budget_bytes") > 0);
    let (passes, runs, levels) = (stat_u64(s, "passes"), stat_u64(s, "runs"), stat_u64(s, "merge_levels"));
    assert_eq!(passes, 1 + levels, "passes = 1 + merge levels: {s}");
    if spilled {
        assert!(runs >= 2 && levels >= 1 && stat_u64(s, "merge_fan_in") >= 2, "{s}");
    } else {
        assert_eq!((passes, runs, levels), (1, 0, 0), "{s}");
    }
    // Each phase: non-negative figures, a known name, in pipeline order.
    let phases = s["phases"].as_array().unwrap();
    let names: Vec<&str> = phases.iter().map(|p| p["name"].as_str().unwrap()).collect();
    let expected: Vec<&str> = if spilled { PHASES.to_vec() } else { vec!["input read", "output write"] };
    // The memory touch (fresh buffers faulted in ahead of the reads) comes first, when it ran.
    let touched = names.first() == Some(&"memory touch");
    assert_eq!(names[usize::from(touched)..], expected[..], "phases");
    if touched {
        assert_eq!(phase_mode(s, "memory touch"), "memory", "{s}");
        assert!(phase_bytes(s, "memory touch").is_some_and(|b| b > 0 && b <= stat_u64(s, "memory_budget_bytes")), "{s}");
    }
    const BOUNDS: &[&str] = &[
        "device",
        "page cache",
        "CPU",
        "CPU, one thread",
        "CPU, some threads",
        "CPU, taken by other processes",
        "page faults",
        "waiting on memory touch",
        "waiting on other phases",
    ];
    let elapsed = s["elapsed_s"].as_f64().unwrap();
    for p in phases {
        for f in ["elapsed_s", "mb_per_s", "cpu_s", "in_flight", "start_s"] {
            assert!(p[f].as_f64().is_some_and(|x| x >= 0.0), "phase field {f}: {p}");
        }
        assert!(p["transfers"].as_u64().unwrap() >= 1, "{p}");
        // When it ran, on the sort's clock.
        let (start, end) = (p["start_s"].as_f64().unwrap(), p["end_s"].as_f64().unwrap());
        assert!(start <= end && end <= elapsed + 1e-6, "phase ran {start}..{end} in a sort of {elapsed} s: {p}");
        assert!(BOUNDS.contains(&p["bound"].as_str().unwrap()), "{p}");
    }
    // The phases share the CPU: theirs adds up to no more than the process's.
    let cpu = s["cpu_user_s"].as_f64().unwrap() + s["cpu_system_s"].as_f64().unwrap();
    let shared: f64 = phases.iter().map(|p| p["cpu_s"].as_f64().unwrap()).sum();
    assert!(shared <= cpu + 0.02, "the phases' CPU {shared} s exceeds the sort's {cpu} s: {s}");
    // The data is read once from the input and written once to the output: no more, no less.
    assert_eq!(phase_bytes(s, "input read"), Some(bytes), "input read bytes should equal the data size: {s:#}");
    assert_eq!(phase_bytes(s, "output write"), Some(bytes), "output write bytes should equal the data size");
    if spilled {
        // All the data goes to temp once as runs; intermediate merge levels rewrite some of it.
        let tw = phase_bytes(s, "temp write").unwrap();
        assert!(tw >= bytes, "temp write {tw} < data {bytes}");
        assert!(phase_bytes(s, "temp read").unwrap() >= tw, "temp read must cover what was written");
    }
    // Samples: time-ordered, cumulative, ending with everything read and written.
    let samples = s["samples"].as_array().unwrap();
    assert!(!samples.is_empty());
    let t: Vec<f64> = samples.iter().map(|x| x["t_s"].as_f64().unwrap()).collect();
    assert!(t.windows(2).all(|w| w[0] <= w[1]), "samples out of time order");
    for f in ["input_bytes", "output_bytes", "temp_write_bytes", "temp_read_bytes"] {
        let v: Vec<u64> = samples.iter().map(|x| x[f].as_u64().unwrap()).collect();
        assert!(v.windows(2).all(|w| w[0] <= w[1]), "sample {f} decreases");
    }
    let last = samples.last().unwrap();
    assert_eq!(last["output_bytes"].as_u64(), Some(bytes), "last sample: {last}");
    assert_eq!(last["input_bytes"].as_u64(), phase_bytes(s, "input read"), "last sample: {last}");
}

#[test]
fn stats_json_one_pass_is_consistent() {
    let fx = Fixture::new();
    let (_, s) = sort_with_stats(&fx, 10_000, &["-S", "64M"]);
    check_stats_json(&s, 10_000, false);
    assert_eq!(stat_u64(&s, "memory_budget_bytes"), 64 << 20);
    assert_eq!(stat_u64(&s, "record_size"), 100);
    assert_eq!(s["key"], "0:10");
    fx.assert_clean();
}

#[test]
fn stats_json_spilled_is_consistent() {
    let fx = Fixture::new();
    let (_, s) = sort_with_stats(&fx, 30_000, &["-S", TINY, "--method", "merge"]);
    check_stats_json(&s, 30_000, true);
    assert_multilevel(&s);
    assert_eq!(s["method"], "merge");
    assert_eq!(stat_u64(&s, "memory_budget_bytes"), 256 << 10);
    fx.assert_clean();
}

#[test]
fn stats_json_for_stdin_and_stdout() {
    let fx = Fixture::new();
    let data = random_bytes(4_000 * 100, 3);
    let out = ok_with_stdin(fx.cmd().args(["--record-size=100", "--key-bytes=0:10", "--stats-json", "s.json"]), Some(&data));
    assert_same_records(&out.stdout, &reference_sort(&data, 100, &["0:10"]), 100, "stdin to stdout");
    check_stats_json(&read_stats(&fx.path("s.json")), 4_000, false);
    fx.assert_clean();
}

// ------------------------------------------------------------------------------------------------
// Memory

fn budget_of(fx: &Fixture, size: &str) -> u64 {
    ok(fx.cmd().args(["--record-size=100", "-S", size, "--stats-json", "s.json", "-o", "out.dat", "in.dat"]));
    stat_u64(&read_stats(&fx.path("s.json")), "memory_budget_bytes")
}

#[test]
fn memory_sizes() {
    let fx = Fixture::new();
    gensort(&fx.path("in.dat"), 0, 1_000, false);
    assert_eq!(budget_of(&fx, "1024"), 1 << 20, "a bare number means KiB");
    assert_eq!(budget_of(&fx, "1M"), 1 << 20);
    assert_eq!(budget_of(&fx, "3K"), 256 << 10, "below the minimum budget, raised to 256 KiB");
    assert_eq!(budget_of(&fx, "2048K"), 2 << 20);
    assert_eq!(budget_of(&fx, "1G"), 1 << 30);
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap();
    let total_kib: u64 = meminfo.lines().find(|l| l.starts_with("MemTotal:")).unwrap().split_whitespace().nth(1).unwrap().parse().unwrap();
    let one_percent = budget_of(&fx, "1%");
    let expected = total_kib * 1024 / 100;
    assert!(one_percent.abs_diff(expected) <= expected / 100 + 4096, "1% of {total_kib} KiB: got {one_percent}");
    // Long option and its GNU alias.
    ok(fx.cmd().args(["--record-size=100", "--memory=2M", "--stats-json", "s.json", "-o", "out.dat", "in.dat"]));
    assert_eq!(stat_u64(&read_stats(&fx.path("s.json")), "memory_budget_bytes"), 2 << 20);
    ok(fx.cmd().args(["--record-size=100", "--buffer-size=3M", "--stats-json", "s.json", "-o", "out.dat", "in.dat"]));
    assert_eq!(stat_u64(&read_stats(&fx.path("s.json")), "memory_budget_bytes"), 3 << 20);
    fx.assert_clean();
}

#[test]
fn peak_rss_stays_within_the_budget() {
    let fx = Fixture::new();
    let n = 100_000; // 10 MB
    let budget: u64 = 4 << 20;
    let (_, s) = sort_with_stats(&fx, n, &["-S", "4M"]);
    assert!(stat_u64(&s, "runs") >= 2, "the sort should spill: {s}");
    assert_eq!(stat_u64(&s, "memory_budget_bytes"), budget);
    let rss = stat_u64(&s, "peak_rss_bytes");
    let limit = budget + budget / 10 + (32 << 20);
    assert!(rss <= limit, "peak RSS {rss} exceeds budget {budget} + 10% + 32 MiB = {limit}");
    assert!(stat_u64(&s, "memory_planned_bytes") <= budget, "the plan exceeds the budget: {s}");
    // One pass with a budget that just holds the data.
    let (_, s) = sort_with_stats(&fx, n, &["-S", "16M"]);
    assert_eq!(stat_u64(&s, "passes"), 1, "{s}");
    let rss = stat_u64(&s, "peak_rss_bytes");
    let budget: u64 = 16 << 20;
    assert!(rss <= budget + budget / 10 + (32 << 20), "peak RSS {rss} over a 16 MiB budget");
    fx.assert_clean();
}
