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

mod api;
pub mod batches;
pub mod compress;
pub mod config;
pub mod engine;
pub mod entry;
pub mod error;
pub mod fold;
pub mod framing;
pub mod input;
pub mod key;
pub mod merge;
pub mod order;
pub mod output;
pub mod plan;
mod pool;
mod records;
pub mod runs;
pub mod size;
pub mod spec;
pub mod stats;
pub mod text;

pub use api::{CancelHandle, Order, Sort, Sorting};
pub use config::{Format, Input, IoSettings, LineFormat, Output, RecordFormat, SortConfig, MAX_IO_COUNT};
pub use engine::Engine;
pub use error::{Result, SortError};
pub use key::{ByteOrder, KeyPart, KeySpec, KeyType};
pub use stats::{SortCounters, SortStats};
pub use xsort_kernels::Method;
