//! Fuzz target `order_general`: runs [`xsort_fuzz::checks::order_general`] on every input (the properties are
//! documented there).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| xsort_fuzz::checks::order_general(data));
