//! Running a sort on a thread of its own while the calling thread, the one Python's signal handlers
//! run on, waits without the GIL and looks for Ctrl-C every [`POLL`]: a KeyboardInterrupt reaches
//! the caller within that time, whatever the sort is doing.
//!
//! The sort is then told to stop through the core's cancel flag and waited for (it stops within a
//! fraction of a second), so its temp files are gone and its threads idle when the exception
//! reaches the caller.

use pyo3::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, RecvTimeoutError};
use std::sync::Arc;
use std::time::Duration;

/// How often the waiting thread looks for signals.
const POLL: Duration = Duration::from_millis(50);

/// Runs `work` on a new thread and returns its result, or the KeyboardInterrupt (or any other
/// exception a signal handler raised) that came first, once `cancel` (the sort's cancel flag) has
/// stopped the work.
pub(crate) fn run<T: Send + 'static>(py: Python<'_>, cancel: Arc<AtomicBool>, work: impl FnOnce() -> T + Send + 'static) -> PyResult<T> {
    let (tx, mut rx) = sync_channel(1);
    std::thread::Builder::new()
        .name("xsort-python".into())
        .spawn(move || {
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)).map_err(|p| xsort_io::error::panic_message(&*p));
            let _ = tx.send(outcome);
        })
        .map_err(|e| crate::raise(py, "SortOSError", format!("cannot start the sort's thread: {}", xsort_io::os_text(&e))))?;
    let outcome = loop {
        // A `&mut` travels to the GIL-free closure: the receiver is Send, not Sync.
        let receiver = &mut rx;
        match py.detach(move || receiver.recv_timeout(POLL)) {
            Ok(outcome) => break outcome,
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break Err("the sort's thread ended without a result".into()),
        }
        if let Err(interrupt) = py.check_signals() {
            cancel.store(true, Ordering::SeqCst);
            let receiver = &mut rx;
            let _ = py.detach(move || receiver.recv());
            return Err(interrupt);
        }
    };
    outcome.map_err(|panic| crate::raise(py, "InternalError", format!("internal error: {panic}")))
}
