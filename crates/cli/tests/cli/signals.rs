//! Interrupting the real `xsort` binary: it reads from a FIFO the test holds open (so it waits for
//! more input), the test waits until xsort holds its unnamed output file open in the target's
//! directory (and, when spilling, an unnamed temp file in the -T directory), sends a signal, and
//! checks that xsort died of that signal and left the target's directory and the temp dirs exactly
//! as they were: nothing beside the target, even after SIGKILL.

use crate::common::*;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;
use std::time::{Duration, Instant};

const KNOWN: &[u8] = b"target contents before the interrupted sort\n";

/// Starts a sort of a FIFO into `out`, feeds it `records` records without ever closing it, waits
/// until xsort holds its unnamed output open (and a temp run, when `spill`), sends `signal`, and
/// returns the fixture and xsort's exit status. With `stats`, the sort also writes `--stats-json
/// stats.json`, a file it creates only once the sort is done.
fn interrupt(signal: i32, records: usize, spill: bool, stats: bool) -> (Fixture, std::process::ExitStatus) {
    let fx = Fixture::new();
    fx.write("out", KNOWN);
    let temp = fx.mkdir("t");
    let fifo_path = fx.path("fifo");
    mkfifo(&fifo_path);
    // Held open for reading and writing: xsort's open never blocks, and xsort never sees EOF.
    let mut fifo = std::fs::OpenOptions::new().read(true).write(true).custom_flags(libc::O_NONBLOCK).open(&fifo_path).expect("open FIFO");

    let mut cmd = fx.cmd();
    cmd.args(["--record-size=100", "--key-bytes=0:10", "-T", "t", "-o", "out", "fifo"]);
    if spill {
        cmd.args(["-S", TINY]);
    }
    if stats {
        cmd.args(["--stats-json", "stats.json"]);
    }
    let mut child = cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null()).spawn().expect("spawn xsort");
    let pid = child.id();

    feed(&mut fifo, &random_bytes(records * 100, 42), &mut child);
    // An unnamed file shows in /proc/PID/fd as `DIR/#INODE (deleted)`.
    let out_marker = format!("{}/#", fx.root().display());
    wait_for(&mut child, "the unnamed output file", || deleted_open_files(pid).iter().any(|p| p.starts_with(&out_marker)));
    assert_entries(fx.root(), &["fifo", "out", "t", "tmp"]);
    if spill {
        // (An unlinked named run, on a filesystem without O_TMPFILE, shows as `DIR/NAME (deleted)`.)
        let marker = format!("{}/", temp.display());
        wait_for(&mut child, "a temp run file", || deleted_open_files(pid).iter().any(|p| p.starts_with(&marker)));
        assert_dir_empty(&temp); // runs live in an unlinked file: nothing visible even now
    }

    // SAFETY: kill() with the pid of our own child process, which has not been reaped yet.
    assert_eq!(unsafe { libc::kill(pid as libc::pid_t, signal) }, 0, "kill failed");
    let deadline = Instant::now() + WATCH_WAIT;
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("xsort ignored signal {signal}");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    drop(fifo);
    std::fs::remove_file(&fifo_path).unwrap();
    (fx, status)
}

fn check_cleanup(signal: i32, records: usize, spill: bool) {
    check_cleanup_of(signal, records, spill, false);
}

fn check_cleanup_of(signal: i32, records: usize, spill: bool, stats: bool) {
    let (fx, status) = interrupt(signal, records, spill, stats);
    assert_eq!(status.signal(), Some(signal), "xsort should die of signal {signal}, got {status}");
    assert_entries(fx.root(), &["out", "t", "tmp"]);
    assert_eq!(std::fs::read(fx.path("out")).unwrap(), KNOWN, "target changed");
    assert_dir_empty(&fx.path("t"));
    fx.assert_clean();
}

#[test]
fn sigterm_removes_the_output_temp_file() {
    check_cleanup(libc::SIGTERM, 50, false);
}

#[test]
fn sigterm_leaves_no_stats_file() {
    check_cleanup_of(libc::SIGTERM, 50, false, true);
}

#[test]
fn sigint_removes_the_output_temp_file() {
    check_cleanup(libc::SIGINT, 50, false);
}

#[test]
fn sigterm_while_spilled_leaves_no_temp_file() {
    check_cleanup(libc::SIGTERM, 10_000, true);
}

#[test]
fn sighup_while_spilled_leaves_no_temp_file() {
    check_cleanup(libc::SIGHUP, 10_000, true);
}

#[test]
fn sigkill_leaves_nothing_beside_the_target_and_no_temp_run() {
    // Nothing can clean up after SIGKILL, but the runs and the partial output are unnamed files
    // and the target is only replaced by a rename, so nothing is left and the target survives.
    let (fx, status) = interrupt(libc::SIGKILL, 10_000, true, false);
    assert_eq!(status.signal(), Some(libc::SIGKILL));
    assert_entries(fx.root(), &["out", "t", "tmp"]);
    assert_eq!(std::fs::read(fx.path("out")).unwrap(), KNOWN, "target changed");
    assert_dir_empty(&fx.path("t"));
    assert_dir_empty(&fx.tmp());
}

/// Runs a line sort of standard input into `out` with `signal` ignored by the "parent" (set to
/// SIG_IGN before exec, as `nohup` and a non-interactive shell's background jobs do), sends the
/// signal once xsort holds its output open, then ends the input: the sort must finish normally.
fn ignored_signal_stays_ignored(signal: i32) {
    use std::io::Write;
    use std::os::unix::process::CommandExt;
    let fx = Fixture::new();
    let mut cmd = fx.cmd();
    cmd.args(["-o", "out"]).stdin(Stdio::piped()).stdout(Stdio::null()).stderr(Stdio::piped());
    // SAFETY: signal() is async-signal-safe; the closure runs in the child between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            libc::signal(signal, libc::SIG_IGN);
            Ok(())
        });
    }
    let mut child = cmd.spawn().expect("spawn xsort");
    let pid = child.id();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"b\n").unwrap();
    let out_marker = format!("{}/#", fx.root().display());
    wait_for(&mut child, "the unnamed output file", || deleted_open_files(pid).iter().any(|p| p.starts_with(&out_marker)));
    // SAFETY: kill() with the pid of our own child process, which has not been reaped yet.
    assert_eq!(unsafe { libc::kill(pid as libc::pid_t, signal) }, 0, "kill failed");
    std::thread::sleep(Duration::from_millis(200));
    stdin.write_all(b"a\n").unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "xsort died of an ignored signal {signal}: {} {}", out.status, String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read(fx.path("out")).unwrap(), b"a\nb\n");
    fx.assert_clean();
}

#[test]
fn a_hang_up_ignored_by_the_parent_stays_ignored_as_under_nohup() {
    ignored_signal_stays_ignored(libc::SIGHUP);
}

#[test]
fn an_interrupt_ignored_by_the_parent_stays_ignored_as_in_background_jobs() {
    ignored_signal_stays_ignored(libc::SIGINT);
}
