//! Nsort's own entry points (`nsort_define`, `nsort_release_recs`...), with Nsort's signatures and
//! status values, so that a program written for Nsort's subroutine library links against libxsort
//! unchanged. Each is the `xsort_*` call of the same name; only `nsort_define` differs, taking
//! Nsort's error callback and `NSORT_NO_DEFAULTS` option. Declared in `include/nsort.h`.

use std::ffi::CString;
use std::os::raw::{c_char, c_int, c_uint, c_void};

use crate::status::*;
use crate::*;

/// An Nsort context id (`unsigned`), the same ids as `xsort_t`.
#[allow(non_camel_case_types)]
pub type nsort_t = c_uint;

/// Nsort's message handler: called with the handler's `arg`, the status, the context, the
/// definition and offset of a parse error (xsort passes NULL and 0), and `ndetails` further
/// `char *` arguments (xsort passes one: the message `nsort_message` returns).
#[allow(non_camel_case_types)]
pub type nsort_error_t = Option<
    unsafe extern "C" fn(
        arg: *mut c_void,
        msg: nsort_msg_t,
        context: nsort_t,
        definition: *mut c_char,
        offset: c_int,
        ndetails: c_int,
        ...
    ),
>;

/// Nsort's error callback argument of `nsort_define`: a handler and the value passed to it.
#[allow(non_camel_case_types)]
#[repr(C)]
pub struct nsort_error_callback_t {
    /// The handler (NULL: none).
    pub error: nsort_error_t,
    /// Passed to the handler as its first argument.
    pub arg: *mut c_void,
}

/// Nsort's old name for `nsort_error_callback_t` (a `#define` in Nsort's header, a typedef here:
/// both let a program declare `nsort_callback_t cb`).
#[allow(non_camel_case_types)]
pub type nsort_callback_t = nsort_error_callback_t;

/// Nsort's user comparison function, named with `nsort_declare_function` for `compare=NAME`: two
/// values and their lengths, and the argument declared with it; negative, zero or positive as the
/// first sorts before, with or after the second.
#[allow(non_camel_case_types)]
pub type nsort_compare_t =
    Option<unsafe extern "C" fn(p1: *mut c_void, p2: *mut c_void, len1: c_int, len2: c_int, compare_arg: *mut c_void) -> c_int>;

/// Nsort's merge input function (for `nsort_merge_define`): fills `buf` (`size` bytes) with the
/// next bytes of merge stream `merge_index` and returns how many, 0 at the stream's end, or a
/// negative number for an error.
#[allow(non_camel_case_types)]
pub type nsort_merge_input_t =
    Option<unsafe extern "C" fn(merge_index: c_int, buf: *mut c_char, size: c_int, input_arg: *mut c_void) -> c_int>;

/// Nsort's merge input callback: the function and the value passed to it as `input_arg`.
#[allow(non_camel_case_types)]
#[repr(C)]
pub struct nsort_merge_callback_t {
    /// The input function.
    pub input: nsort_merge_input_t,
    /// Passed to it as its last argument.
    pub arg: *mut c_void,
}

/// `nsort_define` option: do not read the system-wide `nsort.params` (xsort reads none anyway).
pub const NSORT_NO_DEFAULTS: c_uint = 0x0001;

/// A context's copy of its error callback.
#[derive(Clone, Copy)]
pub struct Callback {
    error: unsafe extern "C" fn(*mut c_void, nsort_msg_t, nsort_t, *mut c_char, c_int, c_int, ...),
    arg: *mut c_void,
}

// SAFETY: the handler and its argument belong to the C program, which uses a context from one
// thread at a time (each call locks the context); xsort calls the handler only from within the
// program's own calls on that context, never from a thread of its own.
unsafe impl Send for Callback {}

impl Callback {
    /// The handler `error`, called with `arg`.
    pub fn new(error: unsafe extern "C" fn(*mut c_void, nsort_msg_t, nsort_t, *mut c_char, c_int, c_int, ...), arg: *mut c_void) -> Self {
        Callback { error, arg }
    }

    /// Calls the handler with a status and its one-line message, and for a statement that did
    /// not parse the definition and the statement's offset in it. No lock is held: the handler
    /// may call the library, `nsort_message` on the same context included.
    pub fn call(&self, code: nsort_msg_t, context: nsort_t, text: &CString, at: Option<(*const c_char, c_int)>) {
        let (definition, offset) = at.unwrap_or((std::ptr::null(), 0));
        // SAFETY: the program gave this handler for this purpose; the arguments are those of
        // Nsort's nsort_error_t; the message outlives the call, and the definition is the
        // program's own string, which the handler may read (not write, though Nsort's type says
        // char *).
        unsafe { (self.error)(self.arg, code, context, definition.cast_mut(), offset, 1, text.as_ptr()) }
    }
}

/// Where `statement` (as the parser split it: blanks after commas dropped) starts in `definition`:
/// its text, else its keyword (up to the first '=', ':' or ','), as written there.
pub fn offset_in(definition: &[u8], statement: &str) -> Option<c_int> {
    let find = |needle: &[u8]| (!needle.is_empty()).then(|| definition.windows(needle.len()).position(|w| w == needle)).flatten();
    let keyword = statement.split(['=', ':', ',']).next().unwrap_or(statement);
    find(statement.as_bytes()).or_else(|| find(keyword.as_bytes())).and_then(|at| c_int::try_from(at).ok())
}

/// Nsort's `nsort_define`: `xsort_define` with Nsort's error callback (may be NULL) and options
/// (0 or `NSORT_NO_DEFAULTS`).
///
/// # Safety
/// `def` is NULL or a NUL-terminated string; `callbacks` is NULL or points to an
/// `nsort_error_callback_t`; `ctxp` is NULL or points to a writable `nsort_t`.
#[no_mangle]
pub unsafe extern "C" fn nsort_define(
    def: *const c_char,
    options: c_uint,
    callbacks: *mut nsort_error_callback_t,
    ctxp: *mut nsort_t,
) -> nsort_msg_t {
    let refusal =
        (options & !NSORT_NO_DEFAULTS != 0).then(|| Failure::new(NSORT_INVALID_ARGUMENT, format!("define: unknown options {options:#x}")));
    // SAFETY: not NULL (checked by as_ref); the caller promises an nsort_error_callback_t.
    let callback = unsafe { callbacks.as_ref() }.and_then(|c| c.error.map(|error| Callback { error, arg: c.arg }));
    // SAFETY: the caller's promises are define's.
    unsafe { define("define", def, refusal, callback, ctxp) }
}

/// Nsort's `nsort_release_recs`: see `xsort_release_recs`.
///
/// # Safety
/// As `xsort_release_recs`.
#[no_mangle]
pub unsafe extern "C" fn nsort_release_recs(buf: *mut c_void, size: usize, ctxp: *mut nsort_t) -> nsort_msg_t {
    // SAFETY: the same contract.
    unsafe { xsort_release_recs(buf, size, ctxp) }
}

/// Nsort's `nsort_release_end`: see `xsort_release_end`.
///
/// # Safety
/// As `xsort_release_end`.
#[no_mangle]
pub unsafe extern "C" fn nsort_release_end(ctxp: *mut nsort_t) -> nsort_msg_t {
    // SAFETY: the same contract.
    unsafe { xsort_release_end(ctxp) }
}

/// Nsort's `nsort_return_recs`: see `xsort_return_recs`.
///
/// # Safety
/// As `xsort_return_recs`.
#[no_mangle]
pub unsafe extern "C" fn nsort_return_recs(buf: *mut c_void, size: *mut usize, ctxp: *mut nsort_t) -> nsort_msg_t {
    // SAFETY: the same contract.
    unsafe { xsort_return_recs(buf, size, ctxp) }
}

/// Nsort's `nsort_print_stats`: see `xsort_print_stats`.
///
/// # Safety
/// As `xsort_print_stats`.
#[no_mangle]
pub unsafe extern "C" fn nsort_print_stats(ctxp: *mut nsort_t, fp: *mut libc::FILE) -> nsort_msg_t {
    // SAFETY: the same contract.
    unsafe { xsort_print_stats(ctxp, fp) }
}

/// Nsort's `nsort_get_stats`: see `xsort_get_stats`.
///
/// # Safety
/// As `xsort_get_stats`.
#[no_mangle]
pub unsafe extern "C" fn nsort_get_stats(ctxp: *mut nsort_t) -> *const c_char {
    // SAFETY: the same contract.
    unsafe { xsort_get_stats(ctxp) }
}

/// Nsort's `nsort_message`: see `xsort_message`. Not to be written or freed.
///
/// # Safety
/// As `xsort_message`.
#[no_mangle]
pub unsafe extern "C" fn nsort_message(ctxp: *mut nsort_t) -> *mut c_char {
    // SAFETY: the same contract.
    unsafe { xsort_message(ctxp) }.cast_mut()
}

/// Nsort's `nsort_version`: xsort's version string (static; not to be written).
#[no_mangle]
pub extern "C" fn nsort_version() -> *mut c_char {
    xsort_version().cast_mut()
}

/// Nsort's `nsort_end`: see `xsort_end`.
///
/// # Safety
/// As `xsort_end`.
#[no_mangle]
pub unsafe extern "C" fn nsort_end(ctxp: *mut nsort_t) -> nsort_msg_t {
    // SAFETY: the same contract.
    unsafe { xsort_end(ctxp) }
}
