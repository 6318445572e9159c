//! The rank's launcher (`mpirun`, or Open MPI's `orted` on another host) and the signals by which
//! it ends a job: a rank commits nothing once its launcher is gone or is tearing the job down, so
//! that a caller that saw `mpirun` fail never finds its target replaced afterwards.
//!
//! - **The launcher gone** (`mpirun` killed, or exiting at once on a second Ctrl-C, without
//!   ending the ranks): the kernel sends the rank a signal when its parent dies
//!   (`PR_SET_PDEATHSIG`, set on the main thread, which lives as long as the rank), one that
//!   xsort's signal cleanup catches: the rank removes its named temp files and dies, as when
//!   `mpirun` terminates it. Before the commit the rank also checks that its parent is still the
//!   process that started it.
//! - **The job being torn down**: Open MPI 4.1's `mpirun`, on SIGINT or SIGTERM, sends every rank
//!   SIGCONT at once and SIGTERM only `odls_base_sigkill_timeout` seconds later (1 by default); a
//!   rank that reached its commit in that second used to commit a complete output while `mpirun`
//!   reported failure. So a rank notes when a SIGCONT arrives, and does not commit until that
//!   timeout and a margin have passed since the last one: a teardown's SIGTERM ends it first. A
//!   job that is only resumed after a stop (SIGCONT forwarded by `mpirun`) commits that much later.
//!
//! [`ready_to_commit`] is asked by every rank just before the ranks agree to commit, and again by
//! each rank that renames, right before its rename.

use anyhow::{bail, Result};
use std::sync::atomic::{AtomicI32, AtomicI64, Ordering};
use std::time::Duration;

/// The rank's parent when it started (0: not started by a launcher).
static LAUNCHER: AtomicI32 = AtomicI32::new(0);

/// When the last SIGCONT arrived, in nanoseconds of `CLOCK_MONOTONIC` (-1: none yet).
static LAST_CONTINUE_NS: AtomicI64 = AtomicI64::new(-1);

/// What is waited for past the launcher's kill timeout: its SIGTERM comes a few milliseconds
/// after the timeout; the rest is margin for a loaded machine.
const MARGIN: Duration = Duration::from_secs(1);

/// Open MPI's default `odls_base_sigkill_timeout`, in seconds.
const DEFAULT_KILL_TIMEOUT_S: u64 = 1;

/// Starts watching, when this process was started by a launcher (an MPI job's environment): the
/// parent-death signal and the SIGCONT handler. Call it first in `main`, after xsort's signal
/// cleanup is installed and before any other thread starts (the parent-death signal is the
/// calling thread's).
pub fn watch() -> std::io::Result<()> {
    let launched = ["OMPI_COMM_WORLD_RANK", "PMIX_RANK"].iter().any(|v| std::env::var_os(v).is_some());
    if !launched {
        return Ok(());
    }
    // SAFETY: a zeroed sigaction is valid plain data; the handler only does async-signal-safe
    // work (clock_gettime and an atomic store), and SA_RESTART resumes the calls it interrupts.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_continue as *const () as libc::sighandler_t;
        action.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        if libc::sigaction(libc::SIGCONT, &action, std::ptr::null_mut()) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    // SAFETY: PR_SET_PDEATHSIG takes a signal number; it only sets this thread's parent-death
    // signal.
    if unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, death_signal() as libc::c_ulong, 0, 0, 0) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // Read after the signal is set: a parent that died before would show here as another process
    // (the reaper), and the check before the commit fails; one that dies later sends the signal.
    // (One that died before the rank even ran this far also leaves MPI_Init nothing to reach.)
    // SAFETY: getppid has no preconditions.
    LAUNCHER.store(unsafe { libc::getppid() }, Ordering::Relaxed);
    Ok(())
}

/// The parent-death signal: the first of SIGTERM, SIGHUP and SIGINT that xsort's cleanup catches
/// (one the rank was started with ignored stays ignored, and would be lost); SIGKILL if none is,
/// so the rank still stops, though without removing its named temp files.
fn death_signal() -> libc::c_int {
    let ignored = |sig: libc::c_int| {
        // SAFETY: a zeroed sigaction is valid plain data; a null new action only reads the current one.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            libc::sigaction(sig, std::ptr::null(), &mut old) == 0 && old.sa_sigaction == libc::SIG_IGN
        }
    };
    [libc::SIGTERM, libc::SIGHUP, libc::SIGINT].into_iter().find(|&s| !ignored(s)).unwrap_or(libc::SIGKILL)
}

/// The SIGCONT handler: notes when it came.
extern "C" fn on_continue(_: libc::c_int) {
    LAST_CONTINUE_NS.store(monotonic_ns(), Ordering::Relaxed);
}

/// `CLOCK_MONOTONIC` in nanoseconds (async-signal-safe).
fn monotonic_ns() -> i64 {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec it is given; it is async-signal-safe.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    t.tv_sec * 1_000_000_000 + t.tv_nsec
}

/// How long after a SIGCONT a teardown's SIGTERM may still come: the launcher's kill timeout
/// (`--mca odls_base_sigkill_timeout N` reaches the ranks as `OMPI_MCA_odls_base_sigkill_timeout`)
/// and [`MARGIN`].
fn teardown_window() -> Duration {
    let timeout = std::env::var("OMPI_MCA_odls_base_sigkill_timeout").ok().and_then(|v| v.trim().parse().ok());
    Duration::from_secs(timeout.unwrap_or(DEFAULT_KILL_TIMEOUT_S)) + MARGIN
}

/// Ok when this rank may commit: its launcher is the one that started it, and no SIGCONT came
/// within the teardown window (one that did is waited out first: a teardown's SIGTERM ends the
/// rank meanwhile). Always Ok for a process no launcher started.
pub fn ready_to_commit() -> Result<()> {
    let launcher = LAUNCHER.load(Ordering::Relaxed);
    if launcher == 0 {
        return Ok(());
    }
    let window = teardown_window().as_nanos() as i64;
    loop {
        let last = LAST_CONTINUE_NS.load(Ordering::Relaxed);
        let since = monotonic_ns() - last;
        if last < 0 || since >= window {
            break;
        }
        std::thread::sleep(Duration::from_nanos((window - since) as u64));
    }
    // SAFETY: getppid has no preconditions.
    if unsafe { libc::getppid() } != launcher {
        bail!("the job's launcher (process {launcher}) is gone: nothing is committed");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_continue_signal_holds_the_commit_for_the_teardown_window() {
        // As a launched rank: this process's parent is the test harness, alive throughout.
        // SAFETY: getppid has no preconditions.
        LAUNCHER.store(unsafe { libc::getppid() }, Ordering::Relaxed);
        let t = std::time::Instant::now();
        ready_to_commit().expect("ready");
        assert!(t.elapsed() < Duration::from_millis(100), "no SIGCONT: no wait");
        // A SIGCONT half a window ago: the rest of the window is waited out.
        let window = teardown_window();
        LAST_CONTINUE_NS.store(monotonic_ns() - (window / 2).as_nanos() as i64, Ordering::Relaxed);
        let t = std::time::Instant::now();
        ready_to_commit().expect("ready");
        let waited = t.elapsed();
        assert!(waited >= window / 2 - Duration::from_millis(5) && waited < window, "waited {waited:?}");
        // A launcher that is not the parent (gone, its rank adopted by another) refuses.
        LAUNCHER.store(i32::MAX, Ordering::Relaxed);
        let e = ready_to_commit().expect_err("a gone launcher");
        assert!(e.to_string().contains("launcher"), "{e}");
        LAUNCHER.store(0, Ordering::Relaxed);
    }
}
