//! Fuzz target `csv`: runs [`xsort_fuzz::checks::csv`] on every input (the properties are
//! documented there).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| xsort_fuzz::checks::csv(data));
