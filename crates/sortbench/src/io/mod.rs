//! Large-block file I/O for gensort and valsort: direct where it helps,
//! buffered where it must.
//!
//! Regular files are written with `O_DIRECT` from page-aligned buffers of
//! about 8 MiB, several transfers in flight on I/O threads while the calling
//! thread (and its rayon pool) produces the next block. Reads of regular files
//! first take whatever is already in the page cache (`preadv2(RWF_NOWAIT)`,
//! which copies at memory speed) and fetch the rest with `O_DIRECT`, so a
//! cached file is checked at memory speed and an uncached one does not
//! pollute the cache. Where the file system refuses `O_DIRECT` (EINVAL on
//! open or on a transfer), for pipes and character devices, and when asked
//! (`,buf`), plain buffered calls are used instead.
//!
//! Block sizes are multiples of 102,400 bytes, the least common multiple of
//! the record size (100) and the direct-I/O alignment (4096), so every block
//! holds whole records and starts on an aligned offset.
//!
//! # Why this is not `xsort-io`
//!
//! valsort is the independent check of xsort's output: what it reads must
//! not pass through the code that wrote it. A bug in `xsort-io` (a block
//! written twice, a short read taken for the end, a transfer lost when a
//! direct write falls back to buffered) would then hide itself, both sides
//! agreeing on the same wrong bytes. gensort likewise writes the inputs the
//! tests and benchmarks trust. So this crate keeps its own, smaller I/O stack
//! (no temp files, no spill, no mapped inputs: whole-file streams in large
//! blocks), as its record, checksum and order code already are its own; the
//! two stacks share only the kernel's interfaces. The price is the ~1,000
//! lines here, which change rarely.

mod aligned;
mod reader;
mod writer;

pub use aligned::{round_up, AlignedBuf, DIRECT_ALIGN};
pub(crate) use reader::{read_blocks, Input};
pub(crate) use writer::{write_blocks, Output};

use std::os::unix::fs::FileTypeExt;
use std::path::Path;

/// Least common multiple of the record size and the direct-I/O alignment.
pub const BLOCK_GRAIN: usize = 102_400;

/// How files are read and written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoConfig {
    /// Bytes per transfer; rounded up to a multiple of [`BLOCK_GRAIN`].
    pub block_bytes: usize,
    /// Transfers in flight (one I/O thread each) for regular files.
    pub inflight: usize,
    /// Use `O_DIRECT` on regular files where the file system allows it.
    pub direct: bool,
}

impl Default for IoConfig {
    /// 8 MiB (82 grains) per transfer, two in flight, direct.
    fn default() -> Self {
        IoConfig { block_bytes: 82 * BLOCK_GRAIN, inflight: 2, direct: true }
    }
}

impl IoConfig {
    /// The transfer size actually used: a non-zero multiple of [`BLOCK_GRAIN`],
    /// capped at 1 GiB so a typo cannot ask for all of memory per buffer.
    pub fn block_len(&self) -> usize {
        let capped = self.block_bytes.clamp(1, 1 << 30);
        round_up(capped, BLOCK_GRAIN)
    }

    /// Transfers in flight actually used (1 to 64).
    pub fn inflight_len(&self) -> usize {
        self.inflight.clamp(1, 64)
    }
}

/// What kind of object a path or handle refers to, for choosing a strategy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A regular file: positional, possibly direct, transfers.
    Regular,
    /// The null device: nothing needs to be written.
    Null,
    /// Anything else (pipe, socket, terminal, other device): sequential.
    Stream,
}

pub(crate) fn kind_of(path: &Path, meta: &std::fs::Metadata) -> Kind {
    use std::os::unix::fs::MetadataExt;
    let ft = meta.file_type();
    if ft.is_file() {
        Kind::Regular
    } else if path == Path::new("/dev/null") || (ft.is_char_device() && meta.rdev() == libc::makedev(1, 3)) {
        Kind::Null
    } else {
        Kind::Stream
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_len_is_whole_records_and_pages() {
        for bytes in [0usize, 1, 100, 4096, 102_400, 8 << 20, usize::MAX] {
            let cfg = IoConfig { block_bytes: bytes, ..IoConfig::default() };
            let len = cfg.block_len();
            assert!(len > 0, "{bytes}");
            assert_eq!((len % 100, len % DIRECT_ALIGN), (0, 0), "{bytes} -> {len}");
        }
        assert_eq!(IoConfig::default().block_len(), 8_396_800);
    }
}
