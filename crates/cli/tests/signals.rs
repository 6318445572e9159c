//! Interrupting the real `xsort` binary: it reads from a FIFO the test holds open (so it waits for
//! more input), the test waits for the `.OUT.xsort-PID.tmp` output beside the target (and, when
//! spilling, for an unlinked temp file in the -T directory), sends a signal, and checks that xsort
//! died of that signal, removed its output temp file, and left the target and temp dirs as they were.

mod common;

use common::*;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

const KNOWN: &[u8] = b"target contents before the interrupted sort\n";
const WAIT: Duration = Duration::from_secs(20);

fn mkfifo(path: &Path) {
    let st = std::process::Command::new("mkfifo").arg(path).status().expect("run mkfifo");
    assert!(st.success(), "mkfifo {}", path.display());
}

/// Polls `cond` until it holds; fails (killing `child`) after [`WAIT`] or if `child` exits first.
fn wait_for(child: &mut Child, what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + WAIT;
    while !cond() {
        if let Some(st) = child.try_wait().unwrap() {
            panic!("xsort exited ({st}) while the test waited for {what}");
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("timed out waiting for {what}");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The paths of the deleted files `pid` holds open (unlinked temp files show as `PATH (deleted)`).
fn deleted_open_files(pid: u32) -> Vec<String> {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else { return Vec::new() };
    fds.filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .map(|l| l.to_string_lossy().into_owned())
        .filter(|l| l.ends_with(" (deleted)"))
        .collect()
}

/// Writes all of `data` into the non-blocking FIFO, waiting while it is full; fails if `child`
/// exits first.
fn feed(fifo: &mut std::fs::File, data: &[u8], child: &mut Child) {
    let mut at = 0;
    let deadline = Instant::now() + WAIT;
    while at < data.len() {
        match fifo.write(&data[at..]) {
            Ok(n) => at += n,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if let Some(st) = child.try_wait().unwrap() {
                    panic!("xsort exited ({st}) while being fed");
                }
                assert!(Instant::now() < deadline, "timed out feeding the FIFO");
                std::thread::sleep(Duration::from_millis(1));
            }
            Err(e) => panic!("write to FIFO: {e}"),
        }
    }
}

/// Starts a sort of a FIFO into `out`, feeds it `records` records without ever closing it, waits
/// until the output temp file exists (and a temp run, when `spill`), sends `signal`, and returns
/// the fixture, xsort's exit status and its output temp path.
fn interrupt(signal: i32, records: usize, spill: bool) -> (Fixture, std::process::ExitStatus, PathBuf) {
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
    let mut child = cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null()).spawn().expect("spawn xsort");
    let pid = child.id();
    let out_temp = fx.path(&format!(".out.xsort-{pid}.tmp"));

    feed(&mut fifo, &random_bytes(records * 100, 42), &mut child);
    wait_for(&mut child, "the output temp file", || out_temp.exists());
    if spill {
        // An unnamed temp file shows as `DIR/#INODE (deleted)`, an unlinked named one as `DIR/NAME (deleted)`.
        let marker = format!("{}/", temp.display());
        wait_for(&mut child, "a temp run file", || deleted_open_files(pid).iter().any(|p| p.starts_with(&marker)));
        assert_dir_empty(&temp); // runs live in an unlinked file: nothing visible even now
    }

    // SAFETY: kill() with the pid of our own child process, which has not been reaped yet.
    assert_eq!(unsafe { libc::kill(pid as libc::pid_t, signal) }, 0, "kill failed");
    let deadline = Instant::now() + WAIT;
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
    (fx, status, out_temp)
}

fn check_cleanup(signal: i32, records: usize, spill: bool) {
    let (fx, status, out_temp) = interrupt(signal, records, spill);
    assert_eq!(status.signal(), Some(signal), "xsort should die of signal {signal}, got {status}");
    assert!(!out_temp.exists(), "{} left behind", out_temp.display());
    assert_eq!(std::fs::read(fx.path("out")).unwrap(), KNOWN, "target changed");
    assert_dir_empty(&fx.path("t"));
    fx.assert_clean();
}

#[test]
fn sigterm_removes_the_output_temp_file() {
    check_cleanup(libc::SIGTERM, 50, false);
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
fn sigkill_leaves_no_temp_run_and_the_target_intact() {
    // Nothing can clean up after SIGKILL, but the runs are in unlinked files and the target is
    // only replaced by a rename, so both survive; only the output temp file may remain.
    let (fx, status, _) = interrupt(libc::SIGKILL, 10_000, true);
    assert_eq!(status.signal(), Some(libc::SIGKILL));
    assert_eq!(std::fs::read(fx.path("out")).unwrap(), KNOWN, "target changed");
    assert_dir_empty(&fx.path("t"));
    assert_dir_empty(&fx.tmp());
}
