//! Sorts of fixed-size records held in numpy arrays (or any object with numpy's
//! `__array_interface__`): read where they lie, written into an array the caller allocated.
//!
//! The buffers are found through `__array_interface__` rather than the buffer protocol, which the
//! stable ABI offers only from Python 3.11 on; the extension keeps a reference to each array until
//! its sort has ended. Ctrl-C sets the core's cancel flag, and the call returns once the sort has
//! stopped (see [`crate::wait`]).

use crate::wait;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use xsort_core::Sort;

/// The memory of a C-contiguous array: its address and length in bytes.
#[derive(Clone, Copy)]
pub(crate) struct Memory {
    address: usize,
    len: usize,
}

impl Memory {
    /// The memory of `array`, which must be C-contiguous (and writable when `write`).
    pub(crate) fn of(array: &Bound<'_, PyAny>, write: bool) -> PyResult<Memory> {
        let py = array.py();
        let interface = array.getattr("__array_interface__")?;
        let interface = interface.cast::<PyDict>()?;
        let contiguous = interface.get_item("strides")?.is_none_or(|s| s.is_none());
        if !contiguous {
            return Err(crate::raise(py, "UsageError", "the array is not C-contiguous".into()));
        }
        let data = interface.get_item("data")?.ok_or_else(|| crate::raise(py, "UsageError", "the array has no data".into()))?;
        let data = data.cast::<PyTuple>()?;
        let (address, read_only): (usize, bool) = (data.get_item(0)?.extract()?, data.get_item(1)?.extract()?);
        if write && read_only {
            return Err(crate::raise(py, "UsageError", "the output array is read-only".into()));
        }
        let len: usize = array.getattr("nbytes")?.extract()?;
        Ok(Memory { address, len })
    }

    pub(crate) fn len(self) -> usize {
        self.len
    }

    /// The bytes, read.
    ///
    /// # Safety
    /// The array this memory was taken from must stay alive, unresized, while the slice is used.
    pub(crate) unsafe fn bytes<'a>(self) -> &'a [u8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: numpy's address and length of a live C-contiguous array (the caller keeps it
        // alive); a data race with Python code writing the array meanwhile can only garble records.
        unsafe { std::slice::from_raw_parts(self.address as *const u8, self.len) }
    }

    /// The bytes, written.
    ///
    /// # Safety
    /// As [`Memory::bytes`], and nothing else may hold the slice: the caller allocated the array
    /// for this write.
    pub(crate) unsafe fn bytes_mut<'a>(self) -> &'a mut [u8] {
        if self.len == 0 {
            return &mut [];
        }
        // SAFETY: as in `bytes`; the array is writable (checked in `of`) and fresh.
        unsafe { std::slice::from_raw_parts_mut(self.address as *mut u8, self.len) }
    }
}

/// The in-memory sort of records of `record_size` bytes by `keys` (`--key-bytes` strings), which
/// stops when `cancel` is set.
fn records_sort(py: Python<'_>, record_size: usize, keys: &[String], threads: Option<usize>, cancel: &Arc<AtomicBool>) -> PyResult<Sort> {
    let mut sort = Sort::records(record_size).cancel_flag(cancel.clone());
    for key in keys {
        sort = sort.key_bytes(key).map_err(|e| crate::py_error(py, e))?;
    }
    Ok(match threads {
        Some(n) => sort.threads(n),
        None => sort,
    })
}

/// Writes the records of `src`, sorted stably by `keys`, into `dst` (as long as `src`).
#[pyfunction]
#[pyo3(signature = (src, dst, record_size, keys, threads=None))]
pub(crate) fn sort_records(
    py: Python<'_>,
    src: Bound<'_, PyAny>,
    dst: Bound<'_, PyAny>,
    record_size: usize,
    keys: Vec<String>,
    threads: Option<usize>,
) -> PyResult<()> {
    let cancel = Arc::new(AtomicBool::new(false));
    let sort = records_sort(py, record_size, &keys, threads, &cancel)?;
    let (from, to) = (Memory::of(&src, false)?, Memory::of(&dst, true)?);
    let owners = (src.unbind(), dst.unbind());
    let sorted = wait::run(py, cancel, move || {
        let _owners = owners;
        // SAFETY: `_owners` keeps both arrays alive until the sort ends; `dst` is the caller's new
        // array, written by nothing else.
        let (from, to) = unsafe { (from.bytes(), to.bytes_mut()) };
        let populating = Populate::start(to);
        let sorted = sort.sort_into(from, to);
        drop(populating);
        sorted
    })?;
    sorted.map_err(|e| crate::py_error(py, e))
}

/// Writes the stable order of the records of `src` by `keys` into `dst`, an int64 array with one
/// element per record.
#[pyfunction]
#[pyo3(signature = (src, dst, record_size, keys, threads=None))]
pub(crate) fn sorted_indices(
    py: Python<'_>,
    src: Bound<'_, PyAny>,
    dst: Bound<'_, PyAny>,
    record_size: usize,
    keys: Vec<String>,
    threads: Option<usize>,
) -> PyResult<()> {
    let cancel = Arc::new(AtomicBool::new(false));
    let sort = records_sort(py, record_size, &keys, threads, &cancel)?;
    let (from, to) = (Memory::of(&src, false)?, Memory::of(&dst, true)?);
    if record_size == 0 || to.len() != from.len() / record_size * 8 {
        return Err(crate::raise(py, "UsageError", format!("the index array holds {} bytes, not 8 per record", to.len())));
    }
    let owners = (src.unbind(), dst.unbind());
    let sorted = wait::run(py, cancel, move || {
        let _owners = owners;
        // SAFETY: as in `sort_records`.
        let (from, to) = unsafe { (from.bytes(), to.bytes_mut()) };
        let populating = Populate::start(to);
        let indices = sort.sorted_indices(from)?;
        for (d, i) in to.chunks_exact_mut(8).zip(indices) {
            d.copy_from_slice(&i.to_ne_bytes());
        }
        drop(populating);
        Ok(())
    })?;
    sorted.map_err(|e| crate::py_error(py, e))
}

/// Step of [`Populate`]: it keeps ahead of the gather that fills the output.
const POPULATE_STEP: usize = 4 << 20;

/// Populates the pages of a new output array in small pages on a thread of its own while the keys
/// are sorted, as xsort-io's `Prefault` does for the engine's buffers: faulting fresh pages costs
/// as much as the sort on virtual machines. `MADV_POPULATE_WRITE` maps the pages without changing
/// their contents, so the gather may write them meanwhile. Dropping it stops and joins.
struct Populate {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Populate {
    fn start(out: &mut [u8]) -> Populate {
        use std::sync::atomic::{AtomicBool, Ordering};
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let (base, len, page) = (out.as_mut_ptr() as usize, out.len(), 4096);
        // Whole pages inside the array only: madvise takes page-aligned starts.
        let (start, end) = (base.div_ceil(page) * page, (base + len) / page * page);
        if start < end {
            // numpy asks for transparent huge pages on big arrays; where the kernel compacts memory
            // to fault them in (defrag "madvise"), the first touch of a fresh 250 MB array took 0.9 s
            // on the development VM against 0.12 s in small pages.
            // SAFETY: a page-aligned range inside the output array; the advice changes no contents.
            unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_NOHUGEPAGE) };
        }
        let halt = stop.clone();
        let thread = std::thread::Builder::new()
            .name("xsort-populate".into())
            .spawn(move || {
                let mut at = start;
                while at < end && !halt.load(Ordering::Relaxed) {
                    let n = POPULATE_STEP.min(end - at);
                    // SAFETY: the range lies inside the output array, alive until this thread is
                    // joined (Populate is dropped before the sort returns); populating never
                    // changes the contents of a page.
                    if unsafe { libc::madvise(at as *mut libc::c_void, n, libc::MADV_POPULATE_WRITE) } != 0 {
                        return; // a kernel without MADV_POPULATE_WRITE: nothing to gain
                    }
                    at += n;
                }
            })
            .ok();
        Populate { stop, thread }
    }
}

impl Drop for Populate {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
