//! xsort's fuzz targets' shared code: the property checks in [`checks`], which the `cargo fuzz`
//! targets in `fuzz_targets/` run on libFuzzer's inputs and `crates/core/tests/fuzz_seeds.rs` runs,
//! on stable, on the checked-in seeds and regressions.

pub mod checks;
