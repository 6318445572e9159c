//! How a sort reads its input: the strategies both framings choose among, and the mapped input
//! that two of them share.
//!
//! Records ([`crate::records`]) and lines ([`crate::text`]) pick one of four named strategies, in
//! this order, and report the one they used in the statistics (`input_read`):
//!
//! - **mapped whole**: a single regular input (for records, one mostly in the page cache) mapped
//!   read-only and sorted in one pass straight from the mapping into the output: no copy of its
//!   bytes into fresh memory, whose first touch is costly on virtual machines;
//! - **mapped in batches**: the same, for records whose entries and a whole scratch copy do not fit
//!   the budget but their entries and one batch's scratch do: batches sorted, then merged into the
//!   output;
//! - **file batches**: regular files read a chunk at a time into the sort buffer;
//! - **stream**: pipes, terminals and callers' readers, read sequentially on the sorting thread.
//!
//! The mapping, its guard against truncation and the choice between the last two are shared
//! ([`SingleFile`], [`MappedInput`], [`ReadStrategy::batches`]). The file-batch readers stay one per
//! framing, for a reason of layout: records are read with direct transfers placed at aligned spots
//! of the buffer, a few KiB of slack between files and transfers completing in any order
//! ([`crate::input`]), which suits fixed-size records located by offset; lines need each chunk's
//! bytes contiguous and cut at a terminator ([`crate::text::reader`]), which those gaps would break.

use crate::error::Result;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::Instant;
use xsort_io::MappedFile;

/// How the input of a sort was read (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ReadStrategy {
    /// One regular file, mapped and sorted whole from the mapping.
    MappedWhole,
    /// One regular file, mapped, its entries sorted in batches and merged into the output.
    MappedBatches,
    /// Regular files read a chunk at a time.
    #[default]
    FileBatches,
    /// At least one input read sequentially as a stream (a pipe, a terminal, a caller's reader).
    Stream,
}

impl ReadStrategy {
    /// The unmapped strategy for inputs of which some are streams or none is.
    pub(crate) fn batches(any_stream: bool) -> Self {
        if any_stream {
            ReadStrategy::Stream
        } else {
            ReadStrategy::FileBatches
        }
    }

    /// Whether the input was sorted from a mapping.
    pub fn is_mapped(self) -> bool {
        matches!(self, ReadStrategy::MappedWhole | ReadStrategy::MappedBatches)
    }
}

impl std::fmt::Display for ReadStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ReadStrategy::MappedWhole => "mapped, sorted whole",
            ReadStrategy::MappedBatches => "mapped, sorted in batches",
            ReadStrategy::FileBatches => "read in batches",
            ReadStrategy::Stream => "read as a stream",
        })
    }
}

/// The only input of a sort, a non-empty regular file: a second descriptor of it (the reader keeps
/// its own), its length, its name and whether it is mostly in the page cache.
pub(crate) struct SingleFile {
    pub file: File,
    pub len: u64,
    pub path: PathBuf,
    pub cached: bool,
}

/// Share of an input in the page cache above which it counts as cached: read buffered rather than
/// direct, and mapped whatever its size.
pub const CACHED_ENOUGH: f64 = 0.5;

impl SingleFile {
    /// `file` (open, `len` bytes, named `path`) when it is non-empty; `cached` is its share in the
    /// page cache when the reader has measured it.
    pub fn of(file: &File, len: u64, path: &Path, cached: Option<f64>) -> Result<Option<SingleFile>> {
        if len == 0 {
            return Ok(None);
        }
        // A second descriptor of the same open file (dup), not a second open.
        let file = file.try_clone().map_err(|e| xsort_io::IoError::meta(path, "duplicate descriptor", e))?;
        let cached = cached.or_else(|| xsort_io::page_cache_fraction(&file)).is_some_and(|c| c >= CACHED_ENOUGH);
        Ok(Some(SingleFile { file, len, path: path.to_owned(), cached }))
    }
}

/// A single input mapped read-only, for a mapped strategy.
pub(crate) struct MappedInput {
    map: MappedFile,
    path: PathBuf,
    /// Whether the file was mostly in the page cache (its pages then are the cache's, not the
    /// budget's).
    pub cached: bool,
    /// When the mapping began: the input phase's start.
    pub started: Instant,
}

impl MappedInput {
    /// Maps `file`; None when the kernel refuses (the input is then read instead).
    pub fn map(file: SingleFile) -> Result<Option<MappedInput>> {
        let started = Instant::now();
        let Some(map) = MappedFile::map(file.file, file.len, &file.path)? else { return Ok(None) };
        Ok(Some(MappedInput { map, path: file.path, cached: file.cached, started }))
    }

    /// The file's bytes.
    pub fn bytes(&self) -> &[u8] {
        self.map.as_slice()
    }

    /// The error "file shrank while being read" when the file was cut short while mapped: its
    /// missing part reads as zeros (see `xsort_io::sigbus`). Checked after each pass over the
    /// mapping and before the output is committed.
    pub fn intact(&self) -> Result<()> {
        if self.map.intact() {
            return Ok(());
        }
        Err(crate::input::shrank(&self.path, self.bytes().len() as u64))
    }
}
