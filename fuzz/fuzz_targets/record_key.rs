//! Fuzz target `record_key`: runs [`xsort_fuzz::checks::record_key`] on every input (the properties are
//! documented there).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| xsort_fuzz::checks::record_key(data));
