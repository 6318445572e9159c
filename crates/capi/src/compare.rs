//! Nsort's user comparison functions: `nsort_declare_function(name, func, arg)` names `func`, and
//! a field or key of a later definition uses it with `compare=NAME`.
//!
//! The name goes into the core's process-wide table ([`xsort_core::key::custom`]), as Nsort keeps
//! one global table. The sort calls `func(a, b, len_a, len_b, arg)` with the key part's bytes in
//! two records, from its worker threads (`nsort_get_thread_index` numbers them), for records whose
//! keys tie before that part; it must be safe to call from several threads at once. The function
//! may fail the sort with `nsort_raise_error`, which jumps back through a C trampoline (`raise.c`)
//! as it does for merge input callbacks: the sort stops, leaves no `-out_file` and returns
//! `NSORT_USER_RAISED_ERROR` with the message.

use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_void};
use std::sync::Arc;

use crate::nsort::nsort_compare_t;
use crate::status::*;

type CompareFn = unsafe extern "C" fn(*mut c_void, *mut c_void, c_int, c_int, *mut c_void) -> c_int;

extern "C" {
    /// Calls `f` (see `raise.c`); 0 with `*error` set when the function raised an error.
    fn xsort_call_compare(
        f: CompareFn,
        a: *mut c_void,
        b: *mut c_void,
        len_a: c_int,
        len_b: c_int,
        arg: *mut c_void,
        error: *mut *const c_char,
    ) -> c_int;
}

/// A declared function and its argument.
struct Declared {
    func: CompareFn,
    arg: *mut c_void,
}

// SAFETY: the function and its argument are the program's, declared for comparisons that Nsort
// calls from its sort threads at once; nsort_declare_function's documentation says so.
unsafe impl Send for Declared {}
// SAFETY: as above: the program's function is called from several threads by contract.
unsafe impl Sync for Declared {}

impl Declared {
    /// The order of `a` and `b` by the program's function, or the message it raised.
    fn compare(&self, a: &[u8], b: &[u8]) -> Result<std::cmp::Ordering, String> {
        let mut error: *const c_char = std::ptr::null();
        let (pa, pb) = (a.as_ptr() as *mut c_void, b.as_ptr() as *mut c_void);
        // Key parts lie within a record, whose size the definition gave as a C int.
        let (la, lb) = (a.len().min(c_int::MAX as usize) as c_int, b.len().min(c_int::MAX as usize) as c_int);
        // SAFETY: the program's comparison function, called as Nsort calls it: two values it only
        // reads, their lengths, and its argument.
        let order = unsafe { xsort_call_compare(self.func, pa, pb, la, lb, self.arg, &mut error) };
        if !error.is_null() {
            // SAFETY: raise.c's thread-local copy of the message, NUL-terminated.
            return Err(unsafe { CStr::from_ptr(error) }.to_string_lossy().into_owned());
        }
        Ok(order.cmp(&0))
    }
}

/// Nsort's `nsort_declare_function`: names `func` (called as `func(a, b, len_a, len_b, arg)`, and
/// returning a negative number, zero or a positive number as `a` sorts before, with or after `b`)
/// for `compare=NAME` in the fields and keys of later definitions. Declaring a name again gives it
/// `func` for the definitions that follow; those made before keep theirs. `NSORT_INVALID_ARGUMENT`
/// for a NULL name or function, or a name that is not a word of letters, digits and `_`.
///
/// # Safety
/// `name` is NULL or a NUL-terminated string; `func` stays callable, and `arg` valid for it, as
/// long as a sort may use them; `func` is safe to call from several threads at once.
#[no_mangle]
pub unsafe extern "C" fn nsort_declare_function(name: *const c_char, func: nsort_compare_t, arg: *mut c_void) -> nsort_msg_t {
    let (Some(func), false) = (func, name.is_null()) else {
        return NSORT_INVALID_ARGUMENT;
    };
    // SAFETY: not NULL, and NUL-terminated by the caller's contract.
    let Ok(name) = unsafe { CStr::from_ptr(name) }.to_str() else {
        return NSORT_INVALID_ARGUMENT;
    };
    let declared = Declared { func, arg };
    let declare = || xsort_core::key::custom::declare_comparison(name, Arc::new(move |a, b| declared.compare(a, b)));
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(declare)) {
        Ok(Ok(_)) => NSORT_SUCCESS,
        Ok(Err(_)) => NSORT_INVALID_ARGUMENT,
        Err(_) => XSORT_INTERNAL_ERROR,
    }
}
