//! Fuzz target `order_version`: runs [`xsort_fuzz::checks::order_version`] on every input (the properties are
//! documented there).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| xsort_fuzz::checks::order_version(data));
