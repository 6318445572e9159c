//! Cleanup on SIGINT, SIGTERM and SIGHUP.
//!
//! A signal that the parent left ignored stays ignored (POSIX asks it of utilities, and GNU sort
//! does it): `nohup xsort ... &` must outlive the hang-up, and a background job of a non-interactive
//! shell, started with SIGINT ignored, must outlive Ctrl-C. Only the signals not ignored at start
//! are caught.
//!
//! [`install`] blocks the caught signals in the calling thread (every thread started later inherits the
//! mask) and starts one thread that waits for them with `sigwait`. On a signal it removes every path
//! registered by [`registering`] (a named partial output, or a named temp file before its unlink)
//! and then dies of the same signal, so the exit status tells the parent what happened. Doing the
//! cleanup in an ordinary thread, not in a signal handler, lets it take locks and allocate safely.
//! Unnamed files (temp runs, the output where the filesystem has `O_TMPFILE`) need no registration:
//! they have no name to remove. A name is registered in the same step that makes it, so a signal can
//! never fall between a file's creation and its registration.
//!
//! Outputs being put in place hold the signals off until they are ([`uninterrupted`]): a sort with
//! several output files, or one that appends, never dies between two of those steps.
//!
//! SIGCHLD gets its default action back, as GNU sort gives it: a parent that left it ignored
//! (`trap '' CHLD`) would have the kernel reap the compress programs before xsort waits for them,
//! and every wait would fail.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

static REGISTERED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Held while a sort's outputs are put in place ([`uninterrupted`]); the cleanup takes it first.
static COMMITTING: Mutex<()> = Mutex::new(());

/// Runs `commit` with the cleanup signals held off: one that comes meanwhile ends the process only
/// once `commit` has returned, so that outputs being put in place (renamed over their targets,
/// copied onto them) are all put in place or, if the signal came before, none. SIGKILL aside.
pub fn uninterrupted<T>(commit: impl FnOnce() -> T) -> T {
    let _gate = COMMITTING.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    commit()
}

/// Runs `make` with the registry locked, giving it a function that registers a path: a file that
/// `make` creates and registers at once is removed by a signal that comes at any time after (the
/// cleanup waits for the lock).
pub fn registering<T>(make: impl FnOnce(&mut dyn FnMut(&Path)) -> T) -> T {
    match REGISTERED.lock() {
        Ok(mut v) => make(&mut |p: &Path| v.push(p.to_owned())),
        Err(_) => make(&mut |_: &Path| {}),
    }
}

/// Forgets a path registered by [`registering`] (it was renamed into place or removed).
pub fn unregister(path: &Path) {
    if let Ok(mut v) = REGISTERED.lock() {
        v.retain(|p| p != path);
    }
}

/// The signals whose default action ends the process and that a user sends to stop a job.
const CLEANUP_SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// Whether `sig`'s action is "ignore" (inherited from the parent across exec).
fn is_ignored(sig: libc::c_int) -> bool {
    // SAFETY: sigaction is plain data; a null new action only queries the current one.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(sig, std::ptr::null(), &mut old) == 0 && old.sa_sigaction == libc::SIG_IGN
    }
}

/// The cleanup signals this process catches: those not ignored at start.
fn caught_signals() -> Vec<libc::c_int> {
    CLEANUP_SIGNALS.into_iter().filter(|&s| !is_ignored(s)).collect()
}

fn signal_set(signals: &[libc::c_int]) -> libc::sigset_t {
    // SAFETY: sigset_t is plain data; sigemptyset/sigaddset initialise it.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for &s in signals {
            libc::sigaddset(&mut set, s);
        }
        set
    }
}

/// Installs the cleanup thread for the signals not ignored at start (an ignored one stays ignored),
/// and restores SIGCHLD's default action. Call it first thing in `main`, before any other thread
/// exists.
pub fn install() -> std::io::Result<()> {
    // SAFETY: sets a standard disposition for a valid signal, before any other thread exists.
    if unsafe { libc::signal(libc::SIGCHLD, libc::SIG_DFL) } == libc::SIG_ERR {
        return Err(std::io::Error::last_os_error());
    }
    let signals = caught_signals();
    if signals.is_empty() {
        return Ok(());
    }
    let set = signal_set(&signals);
    // SAFETY: changes only this thread's signal mask, with a valid set.
    let r = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
    if r != 0 {
        return Err(std::io::Error::from_raw_os_error(r));
    }
    std::thread::Builder::new().name("xsort-signals".into()).spawn(move || wait_and_clean(set))?;
    Ok(())
}

fn wait_and_clean(set: libc::sigset_t) {
    let mut sig: libc::c_int = 0;
    // SAFETY: set is a valid signal set blocked in every thread; sig is a valid out pointer.
    if unsafe { libc::sigwait(&set, &mut sig) } != 0 {
        return;
    }
    // Outputs being put in place finish first (see `uninterrupted`); the process dies holding it.
    let _gate = COMMITTING.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Ok(v) = REGISTERED.lock() {
        for p in v.iter() {
            let _ = std::fs::remove_file(p);
        }
    }
    // Die of the same signal: restore its default action, unblock it here and raise it.
    // SAFETY: standard signal calls with valid arguments; raise targets this thread, which now has
    // the signal unblocked, and the default action terminates the process.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        let mut one: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut one);
        libc::sigaddset(&mut one, sig);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &one, std::ptr::null_mut());
        libc::raise(sig);
    }
    std::process::exit(128 + sig);
}
