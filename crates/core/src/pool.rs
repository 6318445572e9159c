//! The sort's own worker threads.
//!
//! Every sort runs on a rayon pool of its own with as many threads as its configuration asks, so
//! that a library caller's global pool (or its absence) neither limits nor is touched by the sort.
//! The sort's driver runs on one of the pool's threads and takes part in its parallel work. While
//! a one-pass sort writes its output as it is sorted ([`crate::output::sort_while_writing`]), the
//! writing runs on a thread outside the pool, which hands its parallel gathers to the pool
//! ([`install`]) and waits for them, so that the pool's threads all sort or gather and none waits
//! on the disk.

use crate::error::{Result, SortError};
use std::cell::RefCell;
use std::sync::Arc;

thread_local! {
    /// The pool of the sort this thread works for, if it is the driver or the writer.
    static CURRENT: RefCell<Option<Arc<rayon::ThreadPool>>> = const { RefCell::new(None) };
}

/// Runs `driver` on a new pool of `threads` threads (it runs on one of them), at most the CPUs
/// this process may use ([`crate::limits::worker_threads`]).
pub(crate) fn run_in_pool<T: Send>(threads: usize, driver: impl FnOnce() -> Result<T> + Send) -> Result<T> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(crate::limits::worker_threads(Some(threads)))
        .thread_name(|i| format!("xsort-worker-{i}"))
        .build()
        .map_err(|e| SortError::Resource(format!("cannot start worker threads: {e}")))?;
    let pool = Arc::new(pool);
    let handle = pool.clone();
    pool.install(move || working_for(handle, driver))
}

/// Runs `f` on this thread as a thread of `pool`'s sort (see [`current`] and [`install`]).
pub(crate) fn working_for<T>(pool: Arc<rayon::ThreadPool>, f: impl FnOnce() -> T) -> T {
    let before = CURRENT.with(|c| c.borrow_mut().replace(pool));
    let result = f();
    CURRENT.with(|c| *c.borrow_mut() = before);
    result
}

/// The pool of the sort this thread works for, if any.
pub(crate) fn current() -> Option<Arc<rayon::ThreadPool>> {
    CURRENT.with(|c| c.borrow().clone())
}

/// Runs parallel work `f` on the sort's pool: directly on one of its threads (or outside any sort),
/// or, from a thread outside the pool that works for the sort (its writer), handed to the pool
/// while this thread waits.
pub(crate) fn install<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    match current() {
        Some(pool) if rayon::current_thread_index().is_none() => pool.install(f),
        _ => f(),
    }
}
/// The index of the calling thread among the worker threads of the sort it works for (from 0),
/// or None on any other thread (Nsort's `nsort_get_thread_index` numbers them from 1).
pub fn worker_index() -> Option<usize> {
    rayon::current_thread_index()
}
