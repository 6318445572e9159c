//! Absurd numbers on the command line: thread counts and record sizes far beyond what the machine
//! has. Each is either served within bounds or refused with one line naming the option; none may
//! hang, start thousands of threads or allocate beyond the budget. Every command runs under a
//! short deadline, so a hang fails the test instead of blocking it.

use crate::common::*;
use std::io::Read;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Longest any command here may take: each does a few kilobytes of work.
const DEADLINE: Duration = Duration::from_secs(10);

/// Runs `cmd` with stdin from /dev/null; kills it and fails the test past [`DEADLINE`].
fn run_briefly(cmd: &mut Command) -> Output {
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn xsort");
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = r.read_to_end(&mut v);
            v
        })
    };
    let out = drain(Box::new(child.stdout.take().expect("stdout")));
    let err = drain(Box::new(child.stderr.take().expect("stderr")));
    let started = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().expect("wait") {
            break st;
        }
        if started.elapsed() > DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            panic!("xsort still running after {DEADLINE:?} (killed): {:?}", cmd.get_args().collect::<Vec<_>>());
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Output { status, stdout: out.join().expect("stdout"), stderr: err.join().expect("stderr") }
}

/// Runs `cmd` briefly and asserts the error contract: status 2, no stdout, one line `xsort: ...`
/// (which a value the command line parser refuses follows with GNU's "Try 'xsort --help'" line).
/// Returns the first line.
fn refused(cmd: &mut Command) -> String {
    let out = run_briefly(cmd);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "expected status 2, stderr: {err}");
    assert!(out.stdout.is_empty(), "stdout on error: {err}");
    let lines: Vec<&str> = err.lines().collect();
    let try_help = lines.get(1) == Some(&"Try 'xsort --help' for more information.");
    assert!(lines.len() == 1 || (lines.len() == 2 && try_help), "one line expected: {err}");
    assert!(lines[0].starts_with("xsort: ") && !err.contains("panicked"), "{err}");
    lines[0].to_string()
}

fn cpus() -> u64 {
    std::thread::available_parallelism().map_or(1, |n| n.get()) as u64
}

#[test]
fn parallel_beyond_the_cpus_is_served_with_the_cpus() {
    let fx = Fixture::new();
    let lines: Vec<u8> = (0..200).rev().flat_map(|i| format!("{i:03}\n").into_bytes()).collect();
    fx.write("in", &lines);
    let records = random_bytes(200 * 8, 7);
    fx.write("rec", &records);
    let cases: [&[&str]; 4] = [
        &["--parallel=10000", "in"],
        &["--parallel", "1000000", "-S", TINY, "in"],
        &["--record-size=8", "--parallel=10000", "rec"],
        &["--spec", "-format=size:8 -processes=10000", "rec"],
    ];
    for args in cases {
        let out = run_briefly(fx.cmd().args(args).arg("--stats-json=s.json").arg("-o").arg("out"));
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        let threads = stat_u64(&read_stats(&fx.path("s.json")), "threads");
        assert!(threads >= 1 && threads <= cpus(), "{args:?}: {threads} threads on {} CPUs", cpus());
        let got = std::fs::read(fx.path("out")).unwrap();
        if args.contains(&"in") {
            let mut want: Vec<&[u8]> = lines.split_inclusive(|&b| b == b'\n').collect();
            want.sort();
            assert_eq!(got, want.concat(), "{args:?}");
        } else {
            assert_same_records(&got, &reference_sort(&records, 8, &[]), 8, "records");
        }
    }
    // Zero and unparsable counts stay errors (GNU's words for lines).
    assert!(refused(fx.cmd().args(["--parallel=0", "in"])).contains("number in parallel must be nonzero"));
    assert!(refused(fx.cmd().args(["--parallel=0", "--record-size=8", "rec"])).contains("--parallel"));
    assert!(refused(fx.cmd().args(["--parallel=lots", "in"])).contains("--parallel"));
    fx.assert_clean();
}

#[test]
fn records_too_large_for_the_budget_are_refused_naming_option_and_budget() {
    let fx = Fixture::new();
    fx.write("out", b"kept\n");
    // Sizes whose arithmetic used to wrap: one spun forever on an empty input, one reported a
    // wrapped allocation size.
    for size in ["18446744073709550000", "18446744073709551615", "4611686018427387904"] {
        let msg = refused(fx.cmd().arg(format!("--record-size={size}")).args(["-o", "out"]));
        assert!(msg.contains(&format!("--record-size={size}")) && msg.contains("too large"), "{msg}");
        assert!(!msg.contains("allocate"), "{msg}");
    }
    // 4 GiB records under a 10 MiB budget took 12.5 GB; now the budget is a limit.
    let msg = refused(fx.cmd().args(["--record-size=4294967296", "-S", "10M", "-o", "out"]));
    assert!(msg.contains("--record-size=4294967296") && msg.contains("16.0 GiB") && msg.contains("10 MiB (-S 10M)"), "{msg}");
    let msg = refused(fx.cmd().args(["--spec", "-format=size:1000000000 -memory=100M", "-o", "out"]));
    assert!(msg.contains("-format=size:1000000000") && msg.contains("100 MiB (-memory in --spec)"), "{msg}");
    // Refused before any input is read: the input's bad length is not what is reported.
    fx.write("odd", b"abc");
    let msg = refused(fx.cmd().args(["--record-size=100000", "-S", "256K", "-o", "out", "odd"]));
    assert!(msg.contains("--record-size=100000") && msg.contains("256 KiB (-S 256K)"), "{msg}");
    assert_eq!(std::fs::read(fx.path("out")).unwrap(), b"kept\n");

    // The same records with room for a few sort exactly.
    let data = random_bytes(3 * 100_000, 11);
    fx.write("big", &data);
    let out = run_briefly(fx.cmd().args(["--record-size=100000", "-S", "1M", "-o", "out", "big"]));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_sorted_file(&fx.path("out"), &data, 100_000, &[]);
    fx.assert_clean();
}

#[test]
fn io_counts_beyond_reason_start_no_thread_storm() {
    let fx = Fixture::new();
    let data = random_bytes(10_000 * 100, 5);
    fx.write("in", &data);
    let temp = fx.mkdir("t");
    // 20,000 transfers in flight was 20,000 reader threads: the spawn failed and xsort panicked.
    let spec = format!("-format=size:100 -in_file=in,count=20000,transfer_size=4K -temp={},count=20000", temp.display());
    let out = run_briefly(fx.cmd().args(["--spec", &spec, "-S", TINY, "-o", "out", "--stats-json", "s.json"]));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(stat_u64(&read_stats(&fx.path("s.json")), "runs") > 1, "the sort should spill");
    assert_sorted_file(&fx.path("out"), &data, 100, &[]);
    assert_dir_empty(&temp);
}
