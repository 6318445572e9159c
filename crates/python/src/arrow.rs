//! String columns read through the Arrow PyCapsule interface (`__arrow_c_stream__`), which Polars
//! offers without pyarrow and pandas' Arrow-backed strings offer through pyarrow: the strings'
//! bytes are read from the stream's buffers where they lie and gathered into one UTF-8 buffer with
//! int64 offsets (what `strings::string_windows` reads), so that no Python `str` is made per row.
//!
//! The structures are the Arrow C data and C stream interfaces' (their ABI is fixed by the
//! specification); the formats read are `u` (int32 offsets), `U` (int64 offsets) and `vu` (views,
//! Polars' own layout), and their binary twins `z`, `Z` and `vz`.

use pyo3::exceptions::PyTypeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::ffi::{c_char, c_int, c_void, CStr};

#[repr(C)]
struct ArrowSchema {
    format: *const c_char,
    name: *const c_char,
    metadata: *const c_char,
    flags: i64,
    n_children: i64,
    children: *mut *mut ArrowSchema,
    dictionary: *mut ArrowSchema,
    release: Option<unsafe extern "C" fn(*mut ArrowSchema)>,
    private_data: *mut c_void,
}

#[repr(C)]
struct ArrowArray {
    length: i64,
    null_count: i64,
    offset: i64,
    n_buffers: i64,
    n_children: i64,
    buffers: *mut *const c_void,
    children: *mut *mut ArrowArray,
    dictionary: *mut ArrowArray,
    release: Option<unsafe extern "C" fn(*mut ArrowArray)>,
    private_data: *mut c_void,
}

#[repr(C)]
struct ArrowArrayStream {
    get_schema: Option<unsafe extern "C" fn(*mut ArrowArrayStream, *mut ArrowSchema) -> c_int>,
    get_next: Option<unsafe extern "C" fn(*mut ArrowArrayStream, *mut ArrowArray) -> c_int>,
    get_last_error: Option<unsafe extern "C" fn(*mut ArrowArrayStream) -> *const c_char>,
    release: Option<unsafe extern "C" fn(*mut ArrowArrayStream)>,
    private_data: *mut c_void,
}

/// A stream moved out of its capsule: ours to release, once.
struct Stream(ArrowArrayStream);

impl Drop for Stream {
    fn drop(&mut self) {
        if let Some(release) = self.0.release {
            // SAFETY: the producer's release callback of a stream we own and have not released.
            unsafe { release(&mut self.0) };
        }
    }
}

impl Stream {
    /// The producer's message for a failed call.
    fn error(&mut self, what: &str, code: c_int) -> PyErr {
        let message = self
            .0
            .get_last_error
            // SAFETY: a live stream; the message, when there is one, is a C string it owns.
            .map(|f| unsafe { f(&mut self.0) })
            .filter(|m| !m.is_null())
            // SAFETY: non-null, NUL-terminated per the specification.
            .map(|m| unsafe { CStr::from_ptr(m) }.to_string_lossy().into_owned())
            .unwrap_or_else(|| format!("error {code}"));
        PyTypeError::new_err(format!("the Arrow stream failed to give its {what}: {message}"))
    }

    /// The format string of the stream's schema.
    fn format(&mut self) -> PyResult<String> {
        // SAFETY: an all-zero schema (null pointers, no release) is the "empty" value the
        // producer overwrites.
        let mut schema: ArrowSchema = unsafe { std::mem::zeroed() };
        let get_schema = self.0.get_schema.ok_or_else(|| PyTypeError::new_err("the Arrow stream has no get_schema"))?;
        // SAFETY: a live stream and a schema to fill.
        let code = unsafe { get_schema(&mut self.0, &mut schema) };
        if code != 0 {
            return Err(self.error("schema", code));
        }
        // SAFETY: a filled schema's format is a NUL-terminated string it owns.
        let format = unsafe { CStr::from_ptr(schema.format) }.to_string_lossy().into_owned();
        if let Some(release) = schema.release {
            // SAFETY: the schema's own release callback, called once.
            unsafe { release(&mut schema) };
        }
        Ok(format)
    }

    /// The next array of the stream, or None at its end.
    fn next(&mut self) -> PyResult<Option<Array>> {
        // SAFETY: as for the schema: zeroes are the empty value.
        let mut array: ArrowArray = unsafe { std::mem::zeroed() };
        let get_next = self.0.get_next.ok_or_else(|| PyTypeError::new_err("the Arrow stream has no get_next"))?;
        // SAFETY: a live stream and an array to fill.
        let code = unsafe { get_next(&mut self.0, &mut array) };
        if code != 0 {
            return Err(self.error("next array", code));
        }
        Ok(array.release.is_some().then_some(Array(array)))
    }
}

/// An array of the stream, released when dropped.
struct Array(ArrowArray);

impl Drop for Array {
    fn drop(&mut self) {
        if let Some(release) = self.0.release {
            // SAFETY: the array's own release callback, called once.
            unsafe { release(&mut self.0) };
        }
    }
}

impl Array {
    /// Buffer `i` as a pointer (null where absent, as a validity buffer of an array without nulls).
    fn buffer(&self, i: usize) -> *const u8 {
        if i as i64 >= self.0.n_buffers {
            return std::ptr::null();
        }
        // SAFETY: `buffers` holds `n_buffers` pointers.
        unsafe { *self.0.buffers.add(i) as *const u8 }
    }

    /// Whether element `i` (from the array's offset) is valid.
    fn valid(&self, i: usize) -> bool {
        let bits = self.buffer(0);
        let at = self.0.offset as usize + i;
        // SAFETY: a validity buffer holds a bit per element from the start of its buffers.
        bits.is_null() || self.0.null_count == 0 || unsafe { *bits.add(at / 8) } >> (at % 8) & 1 == 1
    }

    /// The bytes of element `i` (from the array's offset) in the `u`/`z` (`wide`: `U`/`Z`) layouts.
    ///
    /// # Safety
    /// The array must be of that layout, and `i` below its length.
    unsafe fn offset_bytes(&self, i: usize, wide: bool) -> &[u8] {
        let at = self.0.offset as usize + i;
        let offsets = self.buffer(1);
        // SAFETY: the layout's offsets buffer holds length + offset + 1 offsets (caller's promise).
        let (start, end) = unsafe {
            if wide {
                let o = offsets as *const i64;
                (o.add(at).read_unaligned() as usize, o.add(at + 1).read_unaligned() as usize)
            } else {
                let o = offsets as *const i32;
                (o.add(at).read_unaligned() as usize, o.add(at + 1).read_unaligned() as usize)
            }
        };
        // SAFETY: the data buffer holds the bytes its offsets point at.
        unsafe { std::slice::from_raw_parts(self.buffer(2).add(start), end - start) }
    }

    /// The bytes of element `i` (from the array's offset) in the `vu`/`vz` layout.
    ///
    /// # Safety
    /// The array must be of that layout, and `i` below its length.
    unsafe fn view_bytes(&self, i: usize) -> &[u8] {
        let at = self.0.offset as usize + i;
        // SAFETY: 16-byte views, one per element; inline data (up to 12 bytes) follows the length,
        // longer strings name a data buffer (from buffer 2 on) and an offset in it.
        unsafe {
            let view = self.buffer(1).add(16 * at);
            let len = (view as *const u32).read_unaligned() as usize;
            if len <= 12 {
                return std::slice::from_raw_parts(view.add(4), len);
            }
            let buffer = (view.add(8) as *const u32).read_unaligned() as usize;
            let offset = (view.add(12) as *const u32).read_unaligned() as usize;
            std::slice::from_raw_parts(self.buffer(2 + buffer).add(offset), len)
        }
    }
}

/// The strings of an Arrow stream `capsule` (the PyCapsule `__arrow_c_stream__` returns) of
/// strings or binaries: their bytes one after another, the offsets of each one's start and of the
/// end (native int64), and one byte per row, 1 where the row is null (its string then empty).
#[pyfunction]
pub(crate) fn strings_of_arrow<'py>(
    py: Python<'py>,
    capsule: Bound<'py, PyAny>,
) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
    let name = c"arrow_array_stream";
    // SAFETY: a capsule of that name holds an ArrowArrayStream (the interface's contract); a
    // wrong object or name returns null with an exception set.
    let pointer = unsafe { ffi::PyCapsule_GetPointer(capsule.as_ptr(), name.as_ptr()) } as *mut ArrowArrayStream;
    if pointer.is_null() {
        return Err(PyErr::fetch(py));
    }
    // The consumer moves the stream out and marks the capsule's copy released, so that the
    // capsule's destructor leaves it alone (the interface's rule).
    // SAFETY: a valid stream, which nothing else reads while the GIL is held.
    let mut stream = Stream(unsafe { pointer.read() });
    // SAFETY: as above.
    unsafe { (*pointer).release = None };
    let format = stream.format()?;
    let (view, wide) = match format.as_str() {
        "u" | "z" => (false, false),
        "U" | "Z" => (false, true),
        "vu" | "vz" => (true, false),
        other => return Err(PyTypeError::new_err(format!("Arrow format {other:?} is not strings"))),
    };
    let (mut data, mut offsets, mut nulls) = (Vec::new(), vec![0i64], Vec::new());
    while let Some(array) = stream.next()? {
        let length = usize::try_from(array.0.length).map_err(|_| PyTypeError::new_err("an Arrow array of negative length"))?;
        offsets.reserve(length);
        nulls.reserve(length);
        for i in 0..length {
            let valid = array.valid(i);
            if valid {
                // SAFETY: the layout the schema named, and `i` below the array's length.
                let bytes = unsafe {
                    if view {
                        array.view_bytes(i)
                    } else {
                        array.offset_bytes(i, wide)
                    }
                };
                data.extend_from_slice(bytes);
            }
            offsets.push(data.len() as i64);
            nulls.push(u8::from(!valid));
        }
    }
    let offsets: Vec<u8> = offsets.iter().flat_map(|o| o.to_ne_bytes()).collect();
    Ok((PyBytes::new(py, &data), PyBytes::new(py, &offsets), PyBytes::new(py, &nulls)))
}
