//! Fuzz target `size`: runs [`xsort_fuzz::checks::size`] on every input (the properties are
//! documented there).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| xsort_fuzz::checks::size(data));
