//! The progress display as a person sees it: `--progress` into a pipe gives one line per second
//! and a last "done" line; on a terminal (a pseudo-terminal made by util-linux's `script`) the bar
//! is redrawn in place and cleared at the end. Every frame names its phase, and a phase's total is
//! the data's size, not the sum of all phases.
//!
//! The sorts are made to last a few seconds without being big: the first reads its sorted output
//! slowly from a pipe, so writing takes its time; the second spills through a compress program
//! that pauses before each run it stores or reads back.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::common::{gensort, Fixture};

/// The phase names a frame may start with (after "xsort: ").
const PHASES: [&str; 6] = ["reading", "forming runs", "sorting", "writing", "merging runs", "merging"];

/// The phase a progress line names, if it is one.
fn phase_of(line: &str) -> Option<&'static str> {
    let rest = line.strip_prefix("xsort: ")?;
    // "merging runs" before "merging": the longest name that fits.
    PHASES.iter().filter(|p| rest.starts_with(**p)).max_by_key(|p| p.len()).copied()
}

/// A rate on a frame, in MiB/s, if it shows one.
fn rate_mib(line: &str) -> Option<f64> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words.iter().position(|w| w.ends_with("/s"))?;
    let n: f64 = words[at - 1].parse().ok()?;
    Some(match words[at] {
        "B/s" => n / 1048576.0,
        "KiB/s" => n / 1024.0,
        "MiB/s" => n,
        "GiB/s" => n * 1024.0,
        other => panic!("implausible rate unit {other} in {line:?}"),
    })
}

#[test]
fn progress_into_a_pipe_is_a_line_per_second() {
    let f = Fixture::new();
    let input = f.path("in");
    gensort(&input, 0, 200_000, false); // 20,000,000 bytes = 19.1 MiB
    let mut child = f
        .cmd()
        .args(["--record-size=100", "--key-bytes=0:10", "--progress"])
        .arg(&input)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn xsort");
    let mut err = child.stderr.take().expect("stderr");
    let errors = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    // Take the output slowly: 1 MiB every 100 ms after a pause, about 3 s in all.
    let mut out = child.stdout.take().expect("stdout");
    std::thread::sleep(Duration::from_millis(1200));
    let mut sorted = Vec::new();
    loop {
        // A pipe hands over at most 64 KiB a read: gather the MiB, then pause.
        let n = (&mut out).take(1 << 20).read_to_end(&mut sorted).expect("read output");
        if n == 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let status = child.wait().expect("wait");
    let stderr = errors.join().expect("stderr reader");
    assert!(status.success(), "{stderr}");
    assert_eq!(sorted.len(), 20_000_000);
    assert!(!stderr.contains('\r') && !stderr.contains('\x1b'), "no terminal codes into a pipe: {stderr:?}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert!(lines.len() >= 3, "a line per second over about 3 s, and the last: {stderr}");
    let (last, frames) = lines.split_last().expect("lines");
    assert!(last.starts_with("xsort: done") && last.contains("19.1 MiB in "), "last line: {last:?}");
    for line in frames {
        let phase = phase_of(line).unwrap_or_else(|| panic!("a frame names no phase: {line:?}"));
        // Each phase is measured against the data, 19.1 MiB: never twice or four times that.
        if phase != "sorting" {
            assert!(line.contains("/19.1 MiB "), "{phase} frame not out of the data's size: {line:?}");
        }
        if let Some(r) = rate_mib(line) {
            assert!(r > 0.0 && r < 100_000.0, "implausible rate in {line:?}");
        }
    }
    assert!(frames.iter().any(|l| phase_of(l) == Some("writing")), "the slow output shows as writing: {stderr}");
}

#[test]
fn no_progress_into_a_pipe_unless_asked() {
    let f = Fixture::new();
    let input = f.path("in");
    gensort(&input, 0, 20_000, false);
    let out = crate::common::run(f.cmd().args(["--record-size=100", "-o", "out"]).arg(&input));
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

/// A compress program that pauses 0.3 s before passing its data through, both ways.
fn slow_compressor(f: &Fixture) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let p = f.write("slowz", b"#!/bin/sh\nsleep 0.3\nexec cat\n");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    p
}

#[test]
fn progress_on_a_terminal_is_redrawn_in_place_and_cleared() {
    let f = Fixture::new();
    let input = f.path("in");
    gensort(&input, 0, 40_000, false); // 4,000,000 bytes = 3.8 MiB
    let z = slow_compressor(&f);
    let temp = f.mkdir("t");
    // script(1) runs the command on a new pseudo-terminal and copies what it prints to stdout.
    let cmdline = format!(
        "{} --record-size=100 -S 1M -T {} --compress-program={} -o {} {}",
        crate::common::bin(),
        temp.display(),
        z.display(),
        f.path("out").display(),
        input.display()
    );
    let out = Command::new("script")
        .args(["-qec", &cmdline, "/dev/null"])
        .env("TMPDIR", f.tmp())
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .output()
        .expect("run script (util-linux)");
    let screen = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{screen}");
    assert_eq!(std::fs::metadata(f.path("out")).expect("output").len(), 4_000_000);
    let frames: Vec<&str> = screen.split('\r').map(|s| s.trim_end_matches("\x1b[K")).filter(|s| !s.is_empty()).collect();
    assert!(frames.len() >= 3, "the bar is redrawn several times: {screen:?}");
    for frame in &frames {
        let phase = phase_of(frame).unwrap_or_else(|| panic!("a frame names no phase: {frame:?}"));
        if phase != "merging runs" && phase != "sorting" {
            assert!(frame.contains("/3.8 MiB "), "{phase} frame not out of the data's size: {frame:?}");
            assert!(frame.contains(" [") && frame.contains("] "), "a bar on a terminal: {frame:?}");
        }
    }
    assert!(frames.iter().any(|l| phase_of(l) == Some("forming runs")), "{screen:?}");
    assert!(frames.iter().any(|l| phase_of(l).is_some_and(|p| p.starts_with("merging"))), "{screen:?}");
    assert!(screen.ends_with("\r\x1b[K"), "the bar is cleared at the end: {screen:?}");
    assert!(!screen.contains('\n') && !screen.contains("done"), "nothing but the bar: {screen:?}");
}
