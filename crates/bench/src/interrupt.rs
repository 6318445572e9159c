//! Ctrl-C without litter: the first SIGINT or SIGTERM only raises a flag,
//! which the runner checks between steps, so the benchmark stops at the
//! next step and removes its work directory (generated inputs can be
//! gigabytes). xsort, in the same process group, gets the SIGINT too and
//! cleans up after itself. A second signal kills at once (SA_RESETHAND).

use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{bail, Result};

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    // Only an atomic store: async-signal-safe.
    STOP.store(true, Ordering::SeqCst);
}

/// Installs the handler for SIGINT and SIGTERM.
pub fn install() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: sigaction is plain data; zeroed is a valid starting value.
        let mut sa: libc::sigaction = unsafe { std::mem::zeroed() };
        sa.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
        sa.sa_flags = libc::SA_RESETHAND | libc::SA_RESTART;
        // SAFETY: the handler only stores to an atomic; sa is initialised.
        unsafe {
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// Fails once a stop was asked for.
pub fn check() -> Result<()> {
    if STOP.load(Ordering::SeqCst) {
        bail!("interrupted; the work directory is removed");
    }
    Ok(())
}
