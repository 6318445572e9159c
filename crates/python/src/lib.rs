//! `xsort._xsort`: the native half of the `xsort` Python package, on xsort-core's library API.
//! The Python half (`python/xsort/`) maps numpy dtypes to keys, checks arguments and documents the
//! API; this half sorts, with the GIL released and Ctrl-C heard (see the `wait` module).
//!
//! Errors become the exceptions of `xsort._errors`, with the one-line message the `xsort` command
//! prints after "xsort: ".

mod arrays;
mod arrow;
mod files;
mod strings;
mod wait;

use pyo3::prelude::*;
use pyo3::types::PyModule;
use xsort_core::SortError;

/// A core error as the Python exception of its kind, worded as the CLI words it.
pub(crate) fn py_error(py: Python<'_>, e: SortError) -> PyErr {
    let class = match &e {
        SortError::BadInput { .. } => "InputError",
        SortError::BadOption(_)
        | SortError::InvalidArgument { .. }
        | SortError::RecordTooLarge { .. }
        | SortError::Spec(_)
        | SortError::Usage(_) => "UsageError",
        SortError::Io(_) | SortError::Resource(_) | SortError::Program(_) => "SortOSError",
        // A sort is cancelled only after Ctrl-C, whose KeyboardInterrupt the caller gets instead.
        SortError::Internal(_) | SortError::Cancelled => "InternalError",
        _ => "InternalError",
    };
    let err = raise(py, class, xsort_io::error::without_os_error_numbers(&e.to_string()));
    if let SortError::BadInput { path, offset, .. } = &e {
        // Where the input is bad, for programs: the exception's `path` and `offset`.
        let value = err.value(py);
        if let Err(e) = value.setattr("path", path.to_string_lossy()).and_then(|_| value.setattr("offset", *offset)) {
            return e;
        }
    }
    err
}

/// An exception of `xsort._errors` by its class name.
pub(crate) fn raise(py: Python<'_>, class: &str, message: String) -> PyErr {
    match py.import("xsort._errors").and_then(|m| m.getattr(class)) {
        Ok(class) => PyErr::from_type(class.cast_into().expect("xsort._errors holds exception classes"), message),
        Err(e) => e,
    }
}

#[pymodule]
fn _xsort(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(arrays::sort_records, m)?)?;
    m.add_function(wrap_pyfunction!(arrays::sorted_indices, m)?)?;
    m.add_function(wrap_pyfunction!(strings::utf8_of_objects, m)?)?;
    m.add_function(wrap_pyfunction!(arrow::strings_of_arrow, m)?)?;
    m.add_function(wrap_pyfunction!(strings::string_windows, m)?)?;
    m.add_function(wrap_pyfunction!(files::sort_file, m)?)?;
    m.add_class::<files::Session>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
