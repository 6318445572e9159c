//! What a sort is asked to do: the validated settings the CLI (or a future C API) hands the sorter.

use crate::fold::Folding;
use crate::key::KeySpec;
use std::path::PathBuf;
use xsort_kernels::Method;

/// An input operand.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input {
    /// Standard input.
    Stdin,
    /// A named file (a regular file, FIFO or device).
    Path(PathBuf),
}

/// Where the sorted records go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Output {
    /// Standard output.
    Stdout,
    /// A file, replaced only when the sort is complete.
    Path(PathBuf),
}

/// How one stream of files is transferred (Nsort's per-file `direct`, `transfer_size`, `count`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoSettings {
    /// Bypass the page cache with O_DIRECT where the filesystem allows it.
    pub direct: bool,
    /// Bytes per read or write request.
    pub transfer_size: usize,
    /// Requests in flight.
    pub count: usize,
}

/// Most transfers a stream keeps in flight, whatever a `count=N` statement asks: each is a reader
/// or writer thread, and beyond a few dozen more only cost threads (Nsort's published line asks 64).
pub const MAX_IO_COUNT: usize = 64;

impl Default for IoSettings {
    fn default() -> Self {
        IoSettings { direct: true, transfer_size: 8 << 20, count: 4 }
    }
}

/// Everything the sorter needs; see the CLI's `--help` for the meaning of each setting.
#[derive(Clone, Debug)]
pub struct SortConfig {
    /// Inputs, read in order (ties keep this order).
    pub inputs: Vec<Input>,
    /// The output.
    pub output: Output,
    /// Bytes per record.
    pub record_size: usize,
    /// Key parts in priority order; empty means the whole record.
    pub key: KeySpec,
    /// Memory budget in bytes for everything the sort allocates.
    pub memory_budget: u64,
    /// Worker threads (the rayon pool must already be sized to this).
    pub threads: usize,
    /// Directories for temp runs (spread round robin).
    pub temp_dirs: Vec<PathBuf>,
    /// In-memory kernel.
    pub method: Method,
    /// Input transfers.
    pub input_io: IoSettings,
    /// Output transfers.
    pub output_io: IoSettings,
    /// Temp-file transfers.
    pub temp_io: IoSettings,
    /// Reserve the output's disk space before writing.
    pub preallocate: bool,
    /// Pre-fault the sort buffer before reading (Nsort's `-touch`).
    pub touch: bool,
    /// fsync the output file and its directory before returning.
    pub sync: bool,
    /// GNU sort's `--compress-program`: temp runs are stored through it.
    pub compress_program: Option<String>,
    /// Records with equal keys folded into one (`-u`, `-noduplicates`, `-summarize`).
    pub folding: Folding,
}

impl SortConfig {
    /// A configuration with defaults for everything but the essentials.
    pub fn new(inputs: Vec<Input>, output: Output, record_size: usize, memory_budget: u64) -> Self {
        SortConfig {
            inputs,
            output,
            record_size,
            key: KeySpec::default(),
            memory_budget,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            temp_dirs: vec![std::env::temp_dir()],
            method: Method::Radix,
            input_io: IoSettings::default(),
            output_io: IoSettings::default(),
            temp_io: IoSettings::default(),
            preallocate: true,
            touch: false,
            sync: false,
            compress_program: None,
            folding: Folding::default(),
        }
    }
}
