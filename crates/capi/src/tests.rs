//! Unit tests of the C layer, calling the entry points from Rust: what the C programs of
//! tests/c cannot provoke (a panic inside a call) or read as simply (the statistics' JSON).

use std::ffi::{CStr, CString};
use std::os::raw::c_int;
use std::ptr::null_mut;

use super::*;

fn message(ctx: &mut xsort_t) -> String {
    // SAFETY: ctx is a valid xsort_t; the message is a NUL-terminated string valid until the next call.
    unsafe { CStr::from_ptr(xsort_message(ctx)) }.to_string_lossy().into_owned()
}

#[test]
fn a_panic_in_a_call_becomes_an_internal_error_of_that_context() {
    let statements = CString::new("-format=size:10").unwrap();
    let (mut ctx, mut other) = (0, 0);
    // SAFETY: valid string and context pointers.
    unsafe {
        assert_eq!(xsort_define(statements.as_ptr(), 0, null_mut(), &mut ctx), XSORT_SUCCESS);
        assert_eq!(xsort_define(statements.as_ptr(), 0, null_mut(), &mut other), XSORT_SUCCESS);
        let code = on_context("test_call", Call::Step, &ctx, |code| code, |_| -> Result<c_int, Failure> { panic!("a bug\non two lines") });
        assert_eq!(code, XSORT_INTERNAL_ERROR);
    }
    assert_eq!(message(&mut ctx), "test_call: internal error: a bug; on two lines");
    let rec = [7u8; 10];
    // SAFETY: valid buffer and context pointers.
    unsafe {
        // The context that panicked is stopped; the other one goes on.
        assert_eq!(xsort_release_recs(rec.as_ptr().cast(), 10, &mut ctx), XSORT_INVALID_PHASE);
        assert!(message(&mut ctx).contains("stopped by an earlier error: test_call: internal error: a bug"), "{}", message(&mut ctx));
        assert_eq!(xsort_release_recs(rec.as_ptr().cast(), 10, &mut other), XSORT_SUCCESS);
        assert_eq!(xsort_end(&mut ctx), XSORT_SUCCESS);
        assert_eq!(xsort_end(&mut other), XSORT_SUCCESS);
    }
    assert_eq!((ctx, other), (0, 0));
}

#[test]
fn messages_of_calls_without_a_context_are_kept_per_thread() {
    let mut bogus: xsort_t = 4_000_000_000;
    // SAFETY: a valid pointer to an id that names no context.
    unsafe { assert_eq!(xsort_release_end(&mut bogus), XSORT_INVALID_CONTEXT) };
    assert!(message(&mut bogus).contains("context 4000000000 is not a sort"));
    let other = std::thread::spawn(|| {
        let mut bogus: xsort_t = 4_000_000_001;
        message(&mut bogus)
    });
    let theirs = other.join().unwrap();
    assert!(theirs.contains("context 4000000001 is not a sort"), "another thread's message: {theirs}");
}

#[test]
fn processes_are_capped_at_the_cpus() {
    // -processes=3000 started 3,005 threads: more threads than CPUs cannot sort faster, and each
    // costs a stack and a start. The cap is the xsort command's (--parallel).
    let statements = CString::new("-format=size:10 -processes=3000 -memory=16m").unwrap();
    let records: Vec<u8> = (0..100u8).rev().flat_map(|i| [i; 10]).collect();
    let mut ctx = 0;
    let mut buf = [0u8; 1000];
    let mut size = buf.len();
    // SAFETY: valid string, buffer, size and context pointers.
    let json = unsafe {
        assert_eq!(xsort_define(statements.as_ptr(), 0, null_mut(), &mut ctx), XSORT_SUCCESS, "{}", message(&mut ctx));
        assert_eq!(xsort_release_recs(records.as_ptr().cast(), records.len(), &mut ctx), XSORT_SUCCESS);
        assert_eq!(xsort_release_end(&mut ctx), XSORT_SUCCESS);
        assert_eq!(xsort_return_recs(buf.as_mut_ptr().cast(), &mut size, &mut ctx), XSORT_SUCCESS);
        assert_eq!((size, buf[0], buf[999]), (1000, 0, 99));
        assert_eq!(xsort_return_recs(buf.as_mut_ptr().cast(), &mut size, &mut ctx), XSORT_END_OF_OUTPUT);
        let json = CStr::from_ptr(xsort_get_stats_json(&mut ctx)).to_string_lossy().into_owned();
        assert_eq!(xsort_end(&mut ctx), XSORT_SUCCESS);
        json
    };
    let stats: serde_json::Value = serde_json::from_str(&json).unwrap();
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert_eq!(stats["threads"].as_u64(), Some(cpus as u64), "{json}");
}
