//! Fuzz target `keydef`: runs [`xsort_fuzz::checks::keydef`] on every input (the properties are
//! documented there).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| xsort_fuzz::checks::keydef(data));
