//! The memory budget, measured: the peak resident set of the real `xsort` process (the child's
//! `ru_maxrss`, from `wait4`) for text whose lines are far longer than the budget, and for text
//! whose lines are so short that their bookkeeping outweighs their bytes. A line longer than the
//! budget must still be held whole, but never in more than a small multiple of its length, and the
//! statistics say so.

use crate::common::*;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const MIB: u64 = 1 << 20;

/// Runs `cmd` (stdin and stdout closed to /dev/null, stderr to `err`) and returns its exit status
/// and its peak resident set in bytes: the kernel's high-water mark (`VmHWM` in /proc/PID/status),
/// read every few milliseconds while it runs (it only grows), and as xsort itself reads it at the
/// end of the sort (`peak_rss_bytes` in `stats`, the file of its `--stats-json`). (`wait4`'s
/// `ru_maxrss` would not do: it keeps the size of this test process, of which xsort's process was
/// a copy before it executed xsort.) Fails the test past `limit`.
fn peak_rss(cmd: &mut Command, err: &std::path::Path, stats: &std::path::Path, limit: Duration) -> (i32, u64) {
    let stderr = std::fs::File::create(err).unwrap();
    let mut child = cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(stderr).spawn().expect("spawn xsort");
    let status_file = format!("/proc/{}/status", child.id());
    let hwm = || -> Option<u64> {
        let text = std::fs::read_to_string(&status_file).ok()?;
        let line = text.lines().find(|l| l.starts_with("VmHWM:"))?;
        Some(line.split_whitespace().nth(1)?.parse::<u64>().ok()? * 1024)
    };
    let (started, mut peak) = (Instant::now(), 0);
    let status = loop {
        peak = peak.max(hwm().unwrap_or(0));
        if let Some(st) = child.try_wait().expect("wait") {
            break st;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("xsort still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let code = status.code().unwrap_or_else(|| panic!("xsort died of a signal: {status:?}"));
    if code == 0 {
        peak = peak.max(stat_u64(&read_stats(stats), "peak_rss_bytes"));
    }
    (code, peak)
}

/// `n` lines of `len` bytes, each one repeated letter, starting at `first`.
fn long_lines(n: usize, len: usize, first: u8) -> Vec<Vec<u8>> {
    (0..n).map(|i| vec![first + (i as u8 * 7) % 26; len]).collect()
}

#[test]
fn lines_longer_than_the_budget_take_a_small_multiple_of_their_length() {
    let fx = Fixture::new();
    // Six 10 MiB lines among 3,000 short ones: with an 8 MiB budget every long line spills in a
    // run of its own, and one merge met all six at once, each assembled in a growing vector
    // (75 MiB peak).
    let long = 10 * MIB as usize;
    let mut lines: Vec<Vec<u8>> = (0..3000).map(|i| format!("{:08}", (i * 7919) % 3000).into_bytes()).collect();
    for (k, l) in long_lines(6, long, b'c').into_iter().enumerate() {
        lines.insert(300 + k * 450, l);
    }
    let mut input = Vec::with_capacity(6 * long + 40_000);
    for l in &lines {
        input.extend_from_slice(l);
        input.push(b'\n');
    }
    fx.write("in", &input);
    drop(input);
    // Read from disk: cached, the input would sort in one pass from its mapping (its few lines'
    // index fits the budget), and the long lines would never be held in the budget's buffers.
    evict(&fx.path("in"));
    let temp = fx.mkdir("t");
    let budget = 8 * MIB;

    let (status, peak) = peak_rss(
        fx.cmd().args(["-S", "8M", "-T", "t", "--stats", "--stats-json", "s.json", "-o", "out", "in"]),
        &fx.path("err"),
        &fx.path("s.json"),
        Duration::from_secs(60),
    );
    let report = std::fs::read_to_string(fx.path("err")).unwrap();
    assert_eq!(status, 0, "{report}");
    // The aim: the budget, three times the longest line, and a small constant (the process itself).
    let bound = budget + 3 * long as u64 + 16 * MIB;
    assert!(peak <= bound, "peak RSS {} MiB for 10 MiB lines under an 8 MiB budget (bound {} MiB)", peak / MIB, bound / MIB);

    // The statistics say that the budget was exceeded, and why.
    let stats = read_stats(&fx.path("s.json"));
    assert!(stat_u64(&stats, "runs") >= 6, "{stats}");
    assert_eq!(stat_u64(&stats, "longest_line_bytes"), long as u64);
    let why = stats["budget_exceeded"].as_str().unwrap_or_else(|| panic!("no budget_exceeded: {stats}"));
    assert!(why.starts_with("budget 8 MiB exceeded: a 10 MiB line needs "), "{why}");
    assert!(report.contains(why), "--stats should say it too:\n{report}");
    let planned = stat_u64(&stats, "memory_planned_bytes");
    assert!(planned > budget && planned <= bound, "planned {planned}");

    lines.sort();
    let mut want = Vec::new();
    for l in &lines {
        want.extend_from_slice(l);
        want.push(b'\n');
    }
    assert!(std::fs::read(fx.path("out")).unwrap() == want, "the output is not the sorted input");
    assert_dir_empty(&temp);
    fx.assert_clean();
}

#[test]
fn short_lines_keep_their_bookkeeping_within_the_budget() {
    let fx = Fixture::new();
    // 4 million 8-byte lines: 36 MB of text whose entries (32 bytes a line) take 128 MB. A chunk
    // read in 8 MiB pieces used to hold a whole read's entries past the budget (43 MiB peak).
    let mut rng = Rng::new(9);
    let mut input = Vec::with_capacity(36 << 20);
    for _ in 0..4_000_000 {
        input.extend_from_slice(format!("{:08}\n", rng.next_u64() % 100_000_000).as_bytes());
    }
    fx.write("in", &input);
    fx.mkdir("t");
    let (status, peak) = peak_rss(
        fx.cmd().args(["-S", "8M", "-T", "t", "--stats-json", "s.json", "-o", "out", "in"]),
        &fx.path("err"),
        &fx.path("s.json"),
        Duration::from_secs(60),
    );
    assert_eq!(status, 0, "{}", std::fs::read_to_string(fx.path("err")).unwrap());
    assert!(peak <= 8 * MIB + 10 * MIB, "peak RSS {} MiB under an 8 MiB budget", peak / MIB);
    let stats = read_stats(&fx.path("s.json"));
    assert!(stats["budget_exceeded"].is_null(), "short lines fit the budget: {stats}");
    assert_eq!(stat_u64(&stats, "longest_line_bytes"), 8);
    let mut lines: Vec<&[u8]> = input.split_inclusive(|&b| b == b'\n').collect();
    lines.sort();
    assert!(std::fs::read(fx.path("out")).unwrap() == lines.concat(), "the output is not the sorted input");
    fx.assert_clean();
}

/// Feeds `data` into the new FIFO `path` from a thread: its first `pause_after` bytes, then, after
/// `pause`, the rest (a producer that is slow for a while, as a pipe's often is).
fn feed_fifo(path: &std::path::Path, data: Vec<u8>, pause_after: usize, pause: Duration) -> std::thread::JoinHandle<()> {
    let st = Command::new("mkfifo").arg(path).status().expect("run mkfifo");
    assert!(st.success(), "mkfifo {}", path.display());
    let p = path.to_owned();
    std::thread::spawn(move || {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new().write(true).open(&p).expect("open FIFO for writing");
        f.write_all(&data[..pause_after]).expect("write FIFO");
        std::thread::sleep(pause);
        f.write_all(&data[pause_after..]).expect("write FIFO");
    })
}

#[test]
fn a_small_stream_under_a_large_budget_touches_only_what_it_holds() {
    let fx = Fixture::new();
    // 30 MB of records through a FIFO that pauses for half a second, under a 2 GiB budget: the chunk
    // of an input of unknown length is sized to the budget, and faulting all of it in ahead of the
    // reads (as for a file of known length) took the process to 1.8 GiB.
    let records = 300_000u64;
    let sum = gensort(&fx.path("in"), 0, records, false);
    let data = std::fs::read(fx.path("in")).unwrap();
    let bytes = data.len() as u64;
    fx.mkdir("t");
    let writer = feed_fifo(&fx.path("p"), data, 10 << 20, Duration::from_millis(500));
    let (status, peak) = peak_rss(
        fx.cmd().args(["--record-size=100", "--key-bytes=0:10", "-S", "2G", "-T", "t", "--stats-json", "s.json", "-o", "out", "p"]),
        &fx.path("err"),
        &fx.path("s.json"),
        Duration::from_secs(60),
    );
    writer.join().expect("FIFO writer");
    assert_eq!(status, 0, "{}", std::fs::read_to_string(fx.path("err")).unwrap());
    // The records, their entries and scratch (32 bytes a record), the write pool and the process.
    let bound = bytes + records * 32 + 48 * MIB;
    assert!(peak <= bound, "peak RSS {} MiB for {} MiB of records from a FIFO (bound {} MiB)", peak / MIB, bytes / MIB, bound / MIB);
    assert_valsort_clean(&fx.path("out"), records, sum);

    // The same stream under a budget that spills it: each chunk sorted whole, merged from runs.
    std::fs::remove_file(fx.path("p")).unwrap();
    let writer = feed_fifo(&fx.path("p"), std::fs::read(fx.path("in")).unwrap(), 10 << 20, Duration::from_millis(50));
    let out = fx
        .cmd()
        .args(["--record-size=100", "--key-bytes=0:10", "-S", "4M", "-T", "t", "--stats-json", "s.json", "-o", "out", "p"])
        .output()
        .unwrap();
    writer.join().expect("FIFO writer");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(stat_u64(&read_stats(&fx.path("s.json")), "runs") >= 2);
    assert_valsort_clean(&fx.path("out"), records, sum);
    std::fs::remove_file(fx.path("p")).unwrap();
    assert_dir_empty(&fx.path("t"));
    fx.assert_clean();
}

#[test]
fn touch_with_a_short_stream_touches_what_the_records_use_not_the_budget() {
    let fx = Fixture::new();
    // 32 KB of records on standard input under a 2 GiB budget with --touch: faulting in the
    // stream's chunk, which is sized to the budget, took 13.6 s and 7.8 GB under the default one.
    let data = random_bytes(32 * 1024, 9);
    fx.write("in", &data);
    let mut cmd = fx.cmd();
    cmd.args(["--record-size=64", "--touch", "-S", "2G", "--stats-json", "s.json", "-o", "out"]);
    cmd.stdin(std::fs::File::open(fx.path("in")).unwrap());
    let started = Instant::now();
    let out = cmd.stdout(Stdio::null()).stderr(Stdio::piped()).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stats = read_stats(&fx.path("s.json"));
    let peak = stat_u64(&stats, "peak_rss_bytes");
    assert!(peak < 128 * MIB, "peak RSS {} MiB for 32 KB of records (took {:?})", peak / MIB, started.elapsed());
    assert_sorted_file(&fx.path("out"), &data, 64, &["0:64"]);
    fx.assert_clean();
}
