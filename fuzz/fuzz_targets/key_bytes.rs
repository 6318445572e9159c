//! Fuzz target `key_bytes`: runs [`xsort_fuzz::checks::key_bytes`] on every input (the properties are
//! documented there).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| xsort_fuzz::checks::key_bytes(data));
