//! Strings as fixed-width records for the record sorter: the DataFrame sorts' string columns.
//!
//! Strings of very different lengths would waste a fixed width as wide as the longest, so the
//! Python side (`xsort/_strings.py`) sorts them in rounds: each round sorts records that hold a
//! window of each string's UTF-8 bytes (zero-padded), how many of its bytes remain (capped at the
//! window's width + 1, which orders a string before any longer one that extends it, NUL bytes
//! included), the group of rows still tied from the round before, and the row's index as payload.
//! Only rows whose windows tie and whose strings go on past them take part in the next round.
//!
//! [`utf8_of_objects`] turns a numpy array of `str` objects (pandas' object columns) into one UTF-8
//! buffer and offsets; [`string_windows`] writes the records of one round from such a buffer.

use crate::arrays::Memory;
use pyo3::exceptions::PyTypeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::os::raw::c_char;

extern "C" {
    // In CPython's full API since 3.3 and in the stable ABI since 3.10; the package's abi3 floor
    // is 3.9, whose limited API lacks the declaration but whose interpreter has the function. It
    // returns the str's UTF-8 without a copy (ASCII) or its cached UTF-8 (other text).
    fn PyUnicode_AsUTF8AndSize(unicode: *mut ffi::PyObject, size: *mut ffi::Py_ssize_t) -> *const c_char;
}

/// The UTF-8 bytes of a `str` object, borrowed from it.
///
/// # Safety
/// `object` must be a live `str` object, kept alive while the slice is used.
unsafe fn utf8_of<'a>(py: Python<'_>, object: *mut ffi::PyObject) -> PyResult<&'a [u8]> {
    let mut size: ffi::Py_ssize_t = 0;
    // SAFETY: a live str object (the caller's promise) and a valid out pointer.
    let data = unsafe { PyUnicode_AsUTF8AndSize(object, &mut size) };
    if data.is_null() {
        // A str with lone surrogates has no UTF-8: the exception is set.
        return Err(PyErr::fetch(py));
    }
    // SAFETY: CPython's buffer of `size` bytes, owned by the live str object.
    Ok(unsafe { std::slice::from_raw_parts(data as *const u8, size as usize) })
}

/// The UTF-8 of the `str` objects of `objects`, a C-contiguous numpy object array: the bytes one
/// after another, and the offsets of each one's start and of the end (native int64, `len + 1` of
/// them). An element that is not a `str` raises TypeError naming its position and type.
#[pyfunction]
pub(crate) fn utf8_of_objects<'py>(py: Python<'py>, objects: Bound<'py, PyAny>) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
    if objects.getattr("dtype")?.getattr("kind")?.extract::<String>()? != "O" {
        return Err(PyTypeError::new_err("utf8_of_objects takes an object array"));
    }
    let memory = Memory::of(&objects, false)?;
    // SAFETY: `objects` is alive for the whole call, and the GIL is held throughout, so no Python
    // code resizes it or drops its elements meanwhile.
    let pointers = unsafe { memory.bytes() };
    let mut texts: Vec<&[u8]> = Vec::with_capacity(pointers.len() / 8);
    for (row, pointer) in pointers.chunks_exact(size_of::<usize>()).enumerate() {
        let object = usize::from_ne_bytes(pointer.try_into().expect("pointer-sized chunks")) as *mut ffi::PyObject;
        // SAFETY: an object array holds pointers to live objects (never null); the array keeps them.
        let is_str = !object.is_null() && unsafe { ffi::PyUnicode_Check(object) } != 0;
        if !is_str {
            let name = if object.is_null() {
                "NULL".into()
            } else {
                // SAFETY: a live object, which the array keeps.
                unsafe { Bound::from_borrowed_ptr(py, object) }.get_type().name()?.to_string()
            };
            return Err(PyTypeError::new_err(format!("row {row} holds a {name}, not a str")));
        }
        // SAFETY: a live str object, kept alive by the array, which outlives `texts`.
        texts.push(unsafe { utf8_of(py, object) }?);
    }
    let total: usize = texts.iter().map(|t| t.len()).sum();
    let data = PyBytes::new_with(py, total, |buffer| {
        let mut at = 0;
        for text in &texts {
            buffer[at..at + text.len()].copy_from_slice(text);
            at += text.len();
        }
        Ok(())
    })?;
    let offsets = PyBytes::new_with(py, 8 * (texts.len() + 1), |buffer| {
        let mut at = 0i64;
        buffer[..8].copy_from_slice(&at.to_ne_bytes());
        for (text, slot) in texts.iter().zip(buffer[8..].chunks_exact_mut(8)) {
            at += text.len() as i64;
            slot.copy_from_slice(&at.to_ne_bytes());
        }
        Ok(())
    })?;
    Ok((data, offsets))
}

/// The native int64 values of an int64 array's bytes.
fn int64s(bytes: &[u8]) -> impl Iterator<Item = i64> + '_ {
    bytes.chunks_exact(8).map(|b| i64::from_ne_bytes(b.try_into().expect("8-byte chunks")))
}

/// Writes one round's records into `out` (uint8, C-contiguous, `record_size` bytes per row):
/// for each row of `rows` (int64 row numbers; None: every string in order), the group of `groups`
/// (int64, big-endian so that bytes order it; None: no group field), then the bytes
/// `start..start + width` of the row's string zero-padded, then one byte: how many of its bytes
/// remain from `start`, capped at `width + 1`; zeros up to the last 8 bytes, which hold the row
/// number (native u64). `data` and `offsets` are the strings' UTF-8 and their int64 offsets.
#[pyfunction]
#[pyo3(signature = (data, offsets, rows, groups, start, width, out, record_size))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn string_windows(
    py: Python<'_>,
    data: Bound<'_, PyAny>,
    offsets: Bound<'_, PyAny>,
    rows: Option<Bound<'_, PyAny>>,
    groups: Option<Bound<'_, PyAny>>,
    start: usize,
    width: usize,
    out: Bound<'_, PyAny>,
    record_size: usize,
) -> PyResult<()> {
    let usage = |message: String| crate::raise(py, "UsageError", message);
    let group_size = if groups.is_some() { 8 } else { 0 };
    if width > 254 || record_size < group_size + width + 1 + 8 || !record_size.is_multiple_of(8) {
        return Err(usage(format!("no record of {record_size} bytes holds a window of {width}")));
    }
    let read = |array: &Bound<'_, PyAny>| -> PyResult<&[u8]> {
        // SAFETY: the arrays are arguments of this call, alive until it returns, and the GIL stays
        // held, so no Python code changes them meanwhile.
        Ok(unsafe { Memory::of(array, false)?.bytes() })
    };
    let (data, offsets) = (read(&data)?, read(&offsets)?);
    let rows = rows.as_ref().map(read).transpose()?;
    let groups = groups.as_ref().map(read).transpose()?;
    // SAFETY: as above; `out` is the caller's new array, which nothing else reads meanwhile.
    let out = unsafe { Memory::of(&out, true)?.bytes_mut() };
    let strings = (offsets.len() / 8).saturating_sub(1);
    let count = rows.map_or(strings, |r| r.len() / 8);
    if out.len() != count * record_size || groups.is_some_and(|g| g.len() != count * 8) {
        return Err(usage(format!("the records of {count} rows need {} bytes, not {}", count * record_size, out.len())));
    }
    let offset_at = |i: usize| i64::from_ne_bytes(offsets[8 * i..8 * i + 8].try_into().expect("8 bytes")) as usize;
    let all_rows = 0..strings as i64;
    let row_numbers: Box<dyn Iterator<Item = i64>> = match rows {
        Some(r) => Box::new(int64s(r)),
        None => Box::new(all_rows),
    };
    let mut group_numbers = groups.map(int64s);
    for (record, row) in out.chunks_exact_mut(record_size).zip(row_numbers) {
        let row = usize::try_from(row)
            .ok()
            .filter(|&r| r < strings)
            .ok_or_else(|| usage(format!("row {row} is not one of {strings} strings")))?;
        let (begin, end) = (offset_at(row), offset_at(row + 1));
        if begin > end || end > data.len() {
            return Err(usage(format!("string {row} lies outside the data ({begin}..{end} of {} bytes)", data.len())));
        }
        let text = &data[begin..end];
        let mut at = 0;
        if let Some(numbers) = group_numbers.as_mut() {
            record[..8].copy_from_slice(&numbers.next().expect("one group per row").to_be_bytes());
            at = 8;
        }
        let window = text.get(start..).unwrap_or(&[]);
        let taken = window.len().min(width);
        record[at..at + taken].copy_from_slice(&window[..taken]);
        record[at + taken..record_size - 8].fill(0);
        record[at + width] = window.len().min(width + 1) as u8;
        record[record_size - 8..].copy_from_slice(&(row as u64).to_ne_bytes());
    }
    Ok(())
}
