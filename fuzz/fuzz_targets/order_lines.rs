//! Fuzz target `order_lines`: runs [`xsort_fuzz::checks::order_lines`] on every input (the properties are
//! documented there).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| xsort_fuzz::checks::order_lines(data));
