//! How failures read: one `xsort:` line that names the file or directory and gives the cause once,
//! in the C library's words ("No space left on device", "Permission denied"), never Rust's
//! " (os error N)". Full disks are real: a 1 MiB tmpfs mounted inside the test's own directory
//! (the tests run as root, as CI does) and unmounted by a guard whatever happens. Resource limits
//! are real too: a fresh user id under `ulimit -u` cannot start threads.

use crate::common::*;
use std::path::Path;
use std::process::{Command, Stdio};
use xsort_testkit::Tmpfs;

/// Text lines that spill several runs under a 1 MiB budget and do not compress to nothing.
fn incompressible_lines(bytes: usize) -> Vec<u8> {
    let mut rng = Rng::new(42);
    let mut out = Vec::with_capacity(bytes + 100);
    while out.len() < bytes {
        for _ in 0..60 {
            out.push(b'!' + (rng.next_u64() % 90) as u8);
        }
        out.push(b'\n');
    }
    out
}

/// Runs `cmd`, expects status 2 and nothing on stdout; returns stderr's lines.
fn failure_lines(cmd: &mut Command) -> Vec<String> {
    let out = run(cmd);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(out.stdout.is_empty(), "{err}");
    assert!(!err.contains("(os error"), "OS errors are worded as the C library words them: {err}");
    err.lines().map(str::to_owned).collect()
}

#[test]
fn a_full_temp_disk_is_named_with_its_cause() {
    if !xsort_testkit::root() {
        return;
    }
    let fx = Fixture::new();
    let disk = Tmpfs::mount(&fx.path("small"), "1m");
    fx.write("in", &incompressible_lines(6 << 20));
    fx.write("out", b"kept\n");
    let dir = disk.dir().display().to_string();

    // Through gzip: one line, xsort's, names the temp directory, the program and the cause (gzip's
    // own complaint, which says the same, is not repeated).
    let lines = failure_lines(fx.cmd().args(["-S", "1M", "-T", &dir, "--compress-program", "gzip", "-o", "out", "in"]));
    assert_eq!(
        lines,
        [format!("xsort: {dir}: compress program 'gzip' failed writing a temp run: No space left on device (exit status 1)")]
    );

    // A program that fails for a reason of its own: its last line of complaint is quoted in xsort's.
    let failing = fx.write("failing", b"#!/bin/sh\necho 'first line' >&2\necho 'failing: no dictionary' >&2\nexit 3\n");
    std::fs::set_permissions(&failing, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let prog = failing.display().to_string();
    let lines = failure_lines(fx.cmd().args(["-S", "1M", "-T", "tmp", "--compress-program", &prog, "-o", "out", "in"]));
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].ends_with(&format!("compress program '{prog}' failed writing a temp run: exit status 3: failing: no dictionary")),
        "{lines:?}"
    );

    // Without a compress program: the write itself fails, named by the temp directory.
    let lines = failure_lines(fx.cmd().args(["-S", "1M", "-T", &dir, "-o", "out", "in"]));
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].starts_with(&format!("xsort: {dir}")) && lines[0].ends_with(": write error: No space left on device"), "{lines:?}");

    assert_eq!(std::fs::read(fx.path("out")).unwrap(), b"kept\n");
    assert_eq!(std::fs::read_dir(disk.dir()).unwrap().count(), 0, "nothing left on the full disk");
    drop(disk);
    std::fs::remove_dir(fx.path("small")).expect("remove the mount point");
    fx.assert_clean();
}

/// A user id no process runs as, so that `ulimit -u` counts only xsort's own threads.
const LONELY_UID: &str = "61537";
/// Another, for a test that runs beside the one using [`LONELY_UID`] (the limit is per user).
const OTHER_LONELY_UID: &str = "61538";
/// A third, for [`a_sort_refused_four_readers_reads_with_one`].
const THIRD_LONELY_UID: &str = "61539";
/// A user of no thread limit, for [`os_errors_read_the_same_everywhere`]: its processes must not
/// count against [`LONELY_UID`]'s limit when the two tests run at once.
const ANOTHER_USER_UID: &str = "61540";

/// `xsort ARGS` as [`LONELY_UID`] with at most `threads` processes and threads for that user.
fn as_lonely_user(threads: u32, args: &[&str]) -> Command {
    as_user(LONELY_UID, threads, args)
}

/// `xsort ARGS` as `uid` with at most `threads` processes and threads for that user.
fn as_user(uid: &str, threads: u32, args: &[&str]) -> Command {
    let mut c = Command::new("setpriv");
    c.args(["--reuid", uid, "--regid", uid, "--clear-groups", "bash", "-c"])
        .arg(format!("ulimit -u {threads} && exec \"$0\" \"$@\""))
        .arg(bin())
        .args(args);
    c
}

#[test]
fn thread_start_failures_give_their_cause_once() {
    if !xsort_testkit::root() {
        return;
    }
    let lines: Vec<u8> = (0..500).rev().flat_map(|i| format!("{i}\n").into_bytes()).collect();
    let fail_with = |threads: u32| {
        let out = run_with_stdin(as_lonely_user(threads, &["--parallel=1"]).stdin(Stdio::piped()), Some(&lines));
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        String::from_utf8(out.stderr).unwrap()
    };
    // The process alone: the signal thread cannot start.
    assert_eq!(fail_with(1), "xsort: cannot install signal handling: Resource temporarily unavailable\n");
    // The process and its signal thread: the worker cannot start. (rayon's error quotes its cause,
    // which the chain of causes then repeated: "...(os error 11): ...(os error 11)".)
    assert_eq!(fail_with(2), "xsort: cannot start worker threads: Resource temporarily unavailable\n");
}

/// Under every limit on threads, from none beyond the process to more than a sort starts, a
/// sort of a file (readers, writers, workers, the output's gather thread) either succeeds or
/// fails with one line that gives the cause: never "internal error" from a thread that could not
/// start, and never a target or temp file left behind.
#[test]
fn every_thread_limit_gives_a_sort_or_its_cause() {
    if !xsort_testkit::root() {
        return;
    }
    let fx = Fixture::new();
    let work = fx.mkdir("w");
    let mode = |p: &Path, m: u32| std::fs::set_permissions(p, std::os::unix::fs::PermissionsExt::from_mode(m)).unwrap();
    mode(fx.root(), 0o755);
    mode(&work, 0o777);
    let data = random_bytes(20_000 * 100, 7);
    let input = fx.write("in", &data);
    mode(&input, 0o644);
    let mut sorted: Vec<&[u8]> = data.chunks(100).collect();
    sorted.sort_by(|a, b| a[..10].cmp(&b[..10]));
    let expected = sorted.concat();
    let lines = fx.path("lines");
    ok(fx.cmd().args(["-o", lines.to_str().unwrap(), "in"]));
    let expected_lines = std::fs::read(&lines).unwrap();
    let out = work.join("out");
    let (inp, outp, tmp) = (input.to_str().unwrap(), out.to_str().unwrap(), work.to_str().unwrap());
    let records = ["--record-size=100", "--key-bytes=0:10"];
    for threads in 1..=14 {
        for (format, extra) in
            [(&records[..], &[][..]), (&records, &["--buffered"]), (&records, &["-S", "600K"]), (&[], &["-S", "600K"]), (&[], &[])]
        {
            let expected = if format.is_empty() { &expected_lines } else { &expected };
            let mut args = vec!["--no-progress", "-T", tmp, "-o", outp];
            args.extend_from_slice(format);
            args.extend_from_slice(extra);
            args.push(inp);
            let run = run(as_user(OTHER_LONELY_UID, threads, &args).current_dir(fx.root()));
            let err = String::from_utf8_lossy(&run.stderr);
            match run.status.code() {
                Some(0) => assert!(&std::fs::read(&out).unwrap() == expected, "{threads} threads {extra:?}: wrong output"),
                Some(2) => {
                    assert!(err.lines().count() == 1 && err.starts_with("xsort: "), "{threads} threads {extra:?}: {err}");
                    assert!(!err.contains("internal error") && !err.contains("panicked"), "{threads} threads {extra:?}: {err}");
                    assert!(!out.exists(), "{threads} threads {extra:?}: a failed sort left its output");
                }
                other => panic!("{threads} threads {extra:?}: exit {other:?}: {err}"),
            }
            let _ = std::fs::remove_file(&out);
            assert_no_xsort_files(&work);
            let left: Vec<_> = std::fs::read_dir(&work).unwrap().collect();
            assert!(left.is_empty(), "{threads} threads {extra:?}: left {left:?}");
        }
    }
}

/// Reader threads that the system refuses in the number asked for (four, the default `count`)
/// leave the sort one: under any limit on threads, a sort asking four fails for its readers only
/// where one asking one fails for its reader too. The threads of the refused pool must have ended
/// before the one reader starts; they count against the limit until then.
#[test]
fn a_sort_refused_four_readers_reads_with_one() {
    if !xsort_testkit::root() {
        return;
    }
    let fx = Fixture::new();
    let mode = |p: &Path, m: u32| std::fs::set_permissions(p, std::os::unix::fs::PermissionsExt::from_mode(m)).unwrap();
    mode(fx.root(), 0o755);
    let data = random_bytes(20_000 * 100, 9);
    let input = fx.write("in", &data);
    mode(&input, 0o644);
    let expected = reference_sort(&data, 100, &["0:10"]);
    let sort = |threads: u32, count: u32| {
        let spec = format!("-in_file={},count={count}", input.display());
        let args = ["--no-progress", "--parallel=1", "--record-size=100", "--key-bytes=0:10", "--spec", &spec];
        let out = run(as_user(THIRD_LONELY_UID, threads, &args).current_dir(fx.root()));
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        match out.status.code() {
            Some(0) => assert!(out.stdout == expected, "{threads} threads, count={count}: wrong output"),
            Some(2) => assert!(err.lines().count() == 1 && err.starts_with("xsort: "), "{threads} threads, count={count}: {err}"),
            other => panic!("{threads} threads, count={count}: exit {other:?}: {err}"),
        }
        err.contains("reader thread")
    };
    let mut one_started = false;
    for threads in 1..=16 {
        let (four, one) = (sort(threads, 4), sort(threads, 1));
        assert!(!four || one, "{threads} threads: refused four readers, though one could start");
        one_started |= !one;
    }
    assert!(one_started, "one reader never started");
    fx.assert_clean();
}

#[test]
fn os_errors_read_the_same_everywhere() {
    if !xsort_testkit::root() {
        return;
    }
    let fx = Fixture::new();
    fx.write("in", &incompressible_lines(1 << 20));
    let locked = fx.mkdir("locked");
    // The other user must reach the fixture, but not write in `locked`.
    let mode = |p: &Path, m: u32| std::fs::set_permissions(p, std::os::unix::fs::PermissionsExt::from_mode(m)).unwrap();
    mode(fx.root(), 0o755);
    mode(&fx.path("in"), 0o644);
    mode(&locked, 0o555);
    let as_other = |args: &[&str]| {
        let mut c = Command::new("setpriv");
        c.args(["--reuid", ANOTHER_USER_UID, "--regid", ANOTHER_USER_UID, "--clear-groups"]).arg(bin()).args(args).current_dir(fx.root());
        failure_lines(&mut c)
    };
    let json = format!("{}/s.json", locked.display());
    assert_eq!(
        as_other(&["--stats-json", &json, "-o", "/dev/null", "in"]),
        [format!("xsort: {json}: cannot write statistics: Permission denied")]
    );
    let lines = as_other(&["-S", "256K", "-T", "locked", "-o", "/dev/null", "in"]);
    assert!(lines.len() == 1 && lines[0].ends_with(": Permission denied"), "{lines:?}");
    let lines = failure_lines(fx.cmd().args(["-R", "--random-source", "locked", "in"]));
    assert_eq!(lines, ["xsort: locked: read failed: Is a directory"]);
}
