//! Fuzz target `order_human`: runs [`xsort_fuzz::checks::order_human`] on every input (the properties are
//! documented there).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| xsort_fuzz::checks::order_human(data));
