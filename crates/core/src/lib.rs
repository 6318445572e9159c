//! xsort-core: the sort engine, and xsort as a library.
//!
//! Start with [`Sort`]: a builder that describes a sort of fixed-size records, text lines or
//! Nsort statements, then runs it file to file ([`Sort::run`]), as a push/pull session
//! ([`Sort::start`], [`Sorting`]: release records in any chunking, pull them back sorted, spilling
//! to temp space past the memory budget), or on records in memory ([`Sort::sort_slice`]).
//!
//! Underneath, one [`Engine`] sorts fixed-size records and text lines alike (the config's
//! [`Format`]): it reads the inputs chunk by chunk while indexing each record with an entry
//! (normalized key prefix + place), sorts the entries with a kernel from `xsort-kernels`, and
//! gathers the records into the output through write-behind buffers. When the data does not fit the
//! memory budget, each chunk becomes a sorted run on temp space, and the runs are merged
//! (multi-level when there are more than the budget's fan-in). [`SortStats`] reports what happened,
//! phase by phase.

// The library's API (`Sort`, `Sorting`) and what it is made of are re-exported below; the modules
// that stay public are the engine's settings (`config`, for the `xsort` command, which builds them
// from its flags), the languages xsort parses (`spec`, `order`, `key`, `size`), the memory plan's
// limits (`plan`), the statistics (`stats`) and the text-line tools the command adds (`text`).
mod api;
mod batches;
mod compress;
pub mod config;
mod engine;
mod entry;
mod error;
mod fold;
mod framing;
mod input;
pub mod key;
pub mod limits;
mod merge;
mod narrow;
pub mod order;
mod output;
pub mod plan;
mod pool;
mod records;
mod runs;
pub mod size;
pub mod spec;
pub mod stats;
pub mod text;

pub use api::{CancelHandle, Order, Sort, Sorting};
pub use config::{Format, Input, IoSettings, LineFormat, Output, RecordFormat, SortConfig, MAX_IO_COUNT};
pub use engine::Engine;
pub use error::{Result, SortError};
pub use fold::{Folding, SumField};
pub use key::{ByteOrder, KeyPart, KeySpec, KeyType};
pub use stats::{SortCounters, SortStats};
pub use xsort_kernels::Method;
