//! The `xsort` command's tests: one test binary, one module per subject (linking one binary rather
//! than one per file is most of what a test build saves). Each module runs the real `xsort`
//! binary on real files; `common` holds their fixtures.

mod common;

mod bounds;
mod compressed;
mod containers;
mod csv;
mod csv_random;
mod errors;
mod faults;
mod files;
mod fold;
mod gnu_diff;
mod help;
mod inputs;
mod jsonl;
mod keydef_marker;
mod lines;
mod locale;
mod mapped;
mod memory;
mod messages;
mod mode_options;
mod progress;
mod signals;
mod sort;
mod spec_delimited;
mod spec_files;
mod spec_stats;
mod temp_check;
mod temp_compression;
mod typed_keys;
