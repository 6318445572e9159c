//! Unit tests of the C layer, calling the entry points from Rust.
