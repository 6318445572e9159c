//! xsort-core: the sort engine, and xsort as a library.
//!
//! Start with [`Sort`]: a builder that describes a sort of fixed-size records, text lines or
//! Nsort statements, then runs it file to file ([`Sort::run`]), as a push/pull session
//! ([`Sort::start`], [`Sorting`]: release records in any chunking, pull them back sorted, spilling
//! to temp space past the memory budget), or on records in memory ([`Sort::sort_slice`]).
//!
//! Underneath, one engine sorts fixed-size records and text lines alike: it reads the inputs chunk
//! by chunk while indexing each record with an entry (normalized key prefix + place), sorts the
//! entries with a kernel from `xsort-kernels`, and gathers the records into the output through
//! write-behind buffers. When the data does not fit the memory budget, each chunk becomes a sorted
//! run on temp space, and the runs are merged (multi-level when there are more than the budget's
//! fan-in). [`SortStats`] reports what happened, phase by phase.
//!
//! The public items are chosen: the builder and what it takes or returns (re-exported here), and
//! the languages xsort parses, which fuzzers, tests and front ends also call on their own: byte
//! keys ([`key`]), GNU sort's order of lines ([`order`]), CSV records ([`csv`]), JSON lines ([`json`]), sizes ([`size`]) and Nsort statements
//! ([`spec`]). The engine, its configuration and its memory plan are the crate's own.

mod api;
mod batches;
mod compress;
mod config;
pub mod csv;
mod engine;
mod entry;
mod error;
mod fold;
mod framing;
mod gather;
mod input;
pub mod json;
pub mod key;
mod limits;
mod merge;
mod narrow;
pub mod order;
mod output;
pub mod pieces;
mod plan;
mod pool;
mod reading;
mod records;
mod refine;
mod runs;
pub mod select;
pub mod size;
pub mod spec;
mod stats;
mod temp_codec;
mod text;

pub use api::{CancelHandle, GnuOrdering, Order, RecordFilter, Sort, Sorting};
pub use config::{OutputCompression, OutputCopy, TempCompression};
pub use csv::CsvDialect;
pub use error::{Result, SortError};
pub use fold::{MatchMark, SumField};
pub use key::{ByteOrder, KeyPart, KeySpec, KeyType};
pub use limits::worker_threads;
pub use order::Locale;
pub use plan::{resolve_budget, Budget};
pub use pool::worker_index;
pub use reading::ReadStrategy;
pub use stats::{PhaseStats, Sample, SortCounters, SortStats};
pub use text::check::Disorder;
pub use xsort_io::{Codec, Compression};
pub use xsort_kernels::Method;
