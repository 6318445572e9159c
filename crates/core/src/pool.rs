//! The sort's own worker threads.
//!
//! Every sort runs on a rayon pool of its own, sized by its configuration, so that a library
//! caller's global pool (or its absence) neither limits nor is touched by the sort. The sort's
//! driver runs on one of the pool's threads and the kernels' parallel work on the others: the pool
//! has one thread more than the configured workers, because the driver spends the sort's
//! overlapped phases writing (see [`crate::output::sort_while_writing`]) while the workers sort.

use crate::error::{Result, SortError};
use std::cell::RefCell;
use std::sync::Arc;

thread_local! {
    /// The pool of the sort whose driver runs on this thread.
    static CURRENT: RefCell<Option<Arc<rayon::ThreadPool>>> = const { RefCell::new(None) };
}

/// Runs `driver` on a new pool of `threads` workers (and the driver's own thread).
pub(crate) fn run_in_pool<T: Send>(threads: usize, driver: impl FnOnce() -> Result<T> + Send) -> Result<T> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1) + 1)
        .thread_name(|i| format!("xsort-worker-{i}"))
        .build()
        .map_err(|e| SortError::Resource(format!("cannot start worker threads: {e}")))?;
    let pool = Arc::new(pool);
    let handle = pool.clone();
    pool.install(move || {
        CURRENT.with(|c| *c.borrow_mut() = Some(handle));
        let result = driver();
        CURRENT.with(|c| c.borrow_mut().take());
        result
    })
}

/// The pool of the sort whose driver runs on this thread, if any.
pub(crate) fn current() -> Option<Arc<rayon::ThreadPool>> {
    CURRENT.with(|c| c.borrow().clone())
}
