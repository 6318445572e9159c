//! Nsort's merges fed by callbacks (`nsort_merge_define`), the error a callback raises
//! (`nsort_raise_error`) and the index of the thread that calls it (`nsort_get_thread_index`).
//!
//! A merge's streams are the definition's `-in_file` files, in order, then one stream per callback
//! of the `merge_input` array, up to `merge_width` streams in all; each stream is sorted by the
//! keys already and is merged as Nsort's `-merge` merges files, its order checked
//! (`NSORT_MERGE_MISORDERED`). A callback `input(merge_index, buf, size, arg)` fills `buf` with the
//! next bytes of stream `merge_index` (its index among all the streams) and returns how many, 0 at
//! the end of the stream, or a negative number for an error. Callbacks are called from the sort's
//! threads (`nsort_get_thread_index` numbers them), one call at a time, while the program waits in
//! `nsort_return_recs` or goes on with other work; each stream is read to its end before the
//! merge, into the temp directory, as the command copies a merge's standard input.

use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_uint};

use crate::nsort::{nsort_error_callback_t, nsort_merge_callback_t, nsort_merge_input_t, nsort_t, Callback, NSORT_NO_DEFAULTS};
use crate::status::*;

extern "C" {
    /// Calls `f` (see `raise.c`); -1 with `*error` set when the callback raised an error.
    fn xsort_call_merge_input(
        f: unsafe extern "C" fn(c_int, *mut c_char, c_int, *mut std::ffi::c_void) -> c_int,
        merge_index: c_int,
        buf: *mut c_char,
        size: c_int,
        arg: *mut std::ffi::c_void,
        error: *mut *const c_char,
    ) -> c_int;
    /// Jumps back to the trampoline with the message; returns why it cannot.
    fn xsort_raise(err_msg: *const c_char) -> *const c_char;
}

/// One merge stream read through its callback.
struct CallbackStream {
    input: unsafe extern "C" fn(c_int, *mut c_char, c_int, *mut std::ffi::c_void) -> c_int,
    arg: *mut std::ffi::c_void,
    index: c_int,
}

// SAFETY: the callback and its argument are the program's, given for this merge, which calls each
// stream's callback from one thread at a time (one of the sort's), as nsort_merge_define's
// documentation tells the program.
unsafe impl Send for CallbackStream {}

impl std::io::Read for CallbackStream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let size = buf.len().min(1 << 30) as c_int;
        let mut error: *const c_char = std::ptr::null();
        // SAFETY: `input` is the program's merge input function, called as Nsort calls it: with a
        // writable buffer of `size` bytes and the program's argument.
        let n = unsafe { xsort_call_merge_input(self.input, self.index, buf.as_mut_ptr().cast(), size, self.arg, &mut error) };
        if !error.is_null() {
            // SAFETY: raise.c's thread-local copy of the message, NUL-terminated.
            let raised = unsafe { CStr::from_ptr(error) }.to_string_lossy().into_owned();
            return Err(std::io::Error::other(format!("the merge input callback raised an error: {raised}")));
        }
        match n {
            n if n < 0 => Err(std::io::Error::other(format!("the merge input callback returned {n}"))),
            n if n > size => Err(std::io::Error::other(format!("the merge input callback returned {n} bytes for a {size}-byte buffer"))),
            n => Ok(n as usize),
        }
    }
}

/// Nsort's `nsort_merge_define`: a merge of `merge_width` streams, each sorted by the keys: the
/// definition's `-in_file` files, then one stream per entry of the `merge_input` array, whose
/// function is called as `input(merge_index, buf, size, arg)` (`merge_index` counting the files
/// first) from the sort's threads. The merged records are taken with `nsort_return_recs`
/// (no release calls: the merge has its inputs) or written to `-out_file`. A misordered record
/// fails the merge with `NSORT_MERGE_MISORDERED`; a width that does not count the files, with
/// `NSORT_BAD_MERGE_WIDTH`.
///
/// # Safety
/// As `nsort_define`; `merge_input` is NULL or points to as many `nsort_merge_callback_t` as the
/// merge has callback streams, valid until `nsort_end`.
#[no_mangle]
pub unsafe extern "C" fn nsort_merge_define(
    def: *const c_char,
    options: c_uint,
    callbacks: *mut nsort_error_callback_t,
    merge_width: c_int,
    merge_input: *mut nsort_merge_callback_t,
    ctxp: *mut nsort_t,
) -> nsort_msg_t {
    let refusal = (options & !NSORT_NO_DEFAULTS != 0)
        .then(|| Failure::new(NSORT_INVALID_ARGUMENT, format!("merge_define: unknown options {options:#x}")));
    // SAFETY: not NULL (checked by as_ref); the caller promises an nsort_error_callback_t.
    let callback = unsafe { callbacks.as_ref() }.and_then(|c| c.error.map(|error| Callback::new(error, c.arg)));
    let adjust = move |sort: xsort_core::Sort| -> Result<xsort_core::Sort, Failure> {
        let files = sort.input_names().len();
        let streams = usize::try_from(merge_width).unwrap_or(0);
        if streams == 0 || streams < files {
            return Err(Failure::new(
                XSORT_BAD_MERGE_WIDTH,
                format!(
                    "merge_define: merge_width {merge_width} must count the {files} -in_file inputs and the callbacks, and be at least 1"
                ),
            ));
        }
        if streams > files && merge_input.is_null() {
            return Err(Failure::new(XSORT_INVALID_ARGUMENT, "merge_define: merge_input is NULL but the merge has callback streams"));
        }
        let mut sort = sort.statements(&xsort_core::spec::parse_spec("-merge").map_err(xsort_core::SortError::from)?)?;
        for i in files..streams {
            // SAFETY: the caller promises merge_input points to streams - files callbacks.
            let cb = unsafe { &*merge_input.add(i - files) };
            let input: nsort_merge_input_t = cb.input;
            let Some(input) = input else {
                return Err(Failure::new(XSORT_INVALID_ARGUMENT, format!("merge_define: the input function of merge stream {i} is NULL")));
            };
            sort = sort.input_reader(CallbackStream { input, arg: cb.arg, index: i as c_int }, &format!("merge input {i}"));
        }
        Ok(sort)
    };
    // SAFETY: the caller's promises are define's.
    unsafe { crate::define_with("merge_define", def, refusal, callback, ctxp, adjust) }
}

/// Nsort's `nsort_raise_error`: called by a merge input callback or a declared comparison
/// function, fails the merge or sort with `err_msg` (the callback does not go on: this call jumps
/// back to where the library called it). Returns only when called outside a callback, with a
/// message saying so.
///
/// # Safety
/// `err_msg` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn nsort_raise_error(err_msg: *mut c_char) -> *mut c_char {
    // Nothing here has anything to drop: the jump may leave this frame (see raise.c).
    // SAFETY: raise.c takes any string or NULL.
    unsafe { xsort_raise(err_msg) as *mut c_char }
}

/// Nsort's `nsort_get_thread_index`: 1 to N on the sort's N worker threads (where merge input
/// callbacks and comparison functions are called), 0 on any other thread (the program's).
#[no_mangle]
pub extern "C" fn nsort_get_thread_index() -> c_int {
    xsort_core::worker_index().map_or(0, |i| i as c_int + 1)
}
