//! Temp runs stored zstd-compressed: `--compress-temp`, or by default when the temp directories'
//! free space would not hold a sort's runs plainly (see [`choose`]).
//!
//! A compressed run stays an extent of the shared temp file, as a plain run is, so that it holds
//! no descriptor of its own and the merge's fan-in is not bound by the descriptor limit (unlike
//! `--compress-program`'s runs, a file and a process each). Its compressed length is known only
//! once it is written, so its extent is reserved at the most it can take ([`TempCodec::reserve`]):
//! the temp file is sparse, and only the bytes written take space.
//!
//! **Writing.** The run's records go into a [`BlockWriter`](xsort_io::BlockWriter) whose stream is
//! an [`Encoder`]: blocks of [`TempCodec::block`] bytes, each compressed on one of the encoder's
//! threads into an independent zstd frame that carries a checksum of its content (so that bytes
//! the disk changed are found when the run is read back, never merged), written in order by an
//! [`ExtentSink`] at the extent's aligned offsets.
//!
//! **Reading.** Each run of a merge has a zstd stream decoder reading the extent through an
//! [`ExtentSource`] (aligned reads); the merge's read service runs the decoders, one block at a
//! time per run, on its threads. Corrupt or truncated data is an error naming the temp directory.
//!
//! **Memory.** The encoder (its blocks in flight, a compression context per thread and the sink's
//! buffer) comes off the sort's budget before the memory plan; each run in a merge adds its
//! decoder ([`TempCodec::decoder_memory`]), which the merge's shape counts beside the run's
//! read-ahead blocks, shrinking the fan-in when they do not fit. Blocks are small under small
//! budgets (64 KiB) and at most 1 MiB, since a decoder's window is a block.

use crate::plan::MemoryPlan;
use crate::size::format_bytes;
use std::io::{BufRead, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use xsort_io::{align_up, AlignedBuf, Compression, DirectFile, Encoder, EncoderBlocks, IoCounters, IoError};

/// Smallest and largest block compressed as one frame.
const MIN_BLOCK: usize = 64 << 10;
const MAX_BLOCK: usize = 1 << 20;

/// What a zstd stream decoder holds beside its window and the source's buffer (a block each):
/// its context (entropy tables, about 100 KiB) and its buffers of a zstd block (128 KiB) in and
/// out.
const DECODER_OVERHEAD: u64 = 384 << 10;

/// How a sort's temp runs are compressed.
#[derive(Clone, Debug)]
pub(crate) struct TempCodec {
    /// zstd's level.
    pub level: u32,
    /// Bytes of a run compressed as one frame.
    pub block: usize,
    /// Threads the encoder compresses on.
    pub threads: usize,
    /// Why the runs are compressed, for the statistics.
    pub reason: String,
}

impl TempCodec {
    /// zstd at `level` for a sort of `budget` bytes on `threads` threads: blocks of about a 256th
    /// of the budget (64 KiB to 1 MiB), and as many encoder threads as a 16th of the budget holds.
    pub fn new(level: u32, budget: u64, threads: usize, reason: String) -> Self {
        let block = ((budget / 256).clamp(MIN_BLOCK as u64, MAX_BLOCK as u64) as usize).next_power_of_two().min(MAX_BLOCK);
        let per_thread = 2 * block as u64 + context_memory(level, block);
        let room = (budget / 16).saturating_sub(4 * block as u64);
        let threads = usize::try_from(room / per_thread).unwrap_or(usize::MAX).clamp(1, threads.max(1));
        TempCodec { level, block, threads, reason }
    }

    /// The format and level, as `--compress` writes them (`zstd:1`).
    pub fn describe(&self) -> String {
        self.compression().to_string()
    }

    fn compression(&self) -> Compression {
        Compression { codec: xsort_io::Codec::Zstd, level: self.level }
    }

    /// Bytes the encoder of the run being written holds: its blocks (see [`Encoder::memory_with`]),
    /// a compression context per thread and the sink's buffer.
    pub fn encoder_memory(&self) -> u64 {
        Encoder::memory_with(self.threads, self.block) + self.threads as u64 * context_memory(self.level, self.block) + self.block as u64
    }

    /// Bytes the decoder of one run in a merge holds: its window (a block, the largest frame),
    /// its own buffers and the source's buffer.
    pub fn decoder_memory(&self) -> u64 {
        2 * self.block as u64 + DECODER_OVERHEAD
    }

    /// Bytes of temp file reserved for a run of `plain` bytes: the most its frames can take
    /// (zstd's bound of each block, and a frame's header and checksum), aligned, and a page more
    /// (the file is sparse: what is not written takes no space).
    pub fn reserve(&self, plain: u64) -> u64 {
        let frames = plain.div_ceil(self.block as u64).max(1);
        let per_frame = zstd::zstd_safe::compress_bound(self.block) as u64 + 32;
        align_up((frames * per_frame) as usize) as u64 + xsort_io::IO_ALIGN as u64
    }

    /// A writer of compressed blocks into `out`.
    pub fn encoder(&self, out: ExtentSink) -> std::io::Result<Encoder> {
        let blocks = EncoderBlocks { size: self.block, zstd_checksum: true };
        Encoder::with_blocks(Box::new(out), self.compression(), self.threads, blocks)
    }

    /// A reader of the decompressed bytes of the run of `packed` bytes at `offset` of `file`.
    pub fn decoder(&self, file: Arc<DirectFile>, offset: u64, packed: &Packed) -> std::io::Result<RunDecoder> {
        let shared = Arc::new(SourceState::default());
        let buf = AlignedBuf::new(self.block).map_err(into_io)?;
        let source = ExtentSource { file, next: offset, end: offset + packed.stored(), buf, at: 0, len: 0, shared: shared.clone() };
        let mut inner = zstd::stream::read::Decoder::with_buffer(source)?;
        // A frame's window is at most a block: a header asking for more is corrupt, and is refused
        // before its window is allocated.
        inner.window_log_max(self.block.trailing_zeros().max(10) + 1)?;
        Ok(RunDecoder { inner, shared })
    }
}

/// Bytes of a compression context for blocks of `block` bytes at `level`: about a block's worth of
/// tables at the fast levels, more at the strong ones (their hash chains and binary trees).
fn context_memory(level: u32, block: usize) -> u64 {
    let factor = match level {
        0..=3 => 1,
        4..=12 => 4,
        _ => 8,
    };
    factor * block as u64 + (64 << 10)
}

/// The stored length of a compressed run, known once its writer has flushed its last frame.
#[derive(Debug, Default)]
pub(crate) struct Packed {
    /// Bytes of temp file reserved for the run (see [`TempCodec::reserve`]).
    pub reserved: u64,
    stored: AtomicU64,
}

impl Packed {
    /// A run given `reserved` bytes.
    pub fn new(reserved: u64) -> Self {
        Packed { reserved, stored: AtomicU64::new(0) }
    }

    /// Compressed bytes stored.
    pub fn stored(&self) -> u64 {
        self.stored.load(Ordering::Acquire)
    }
}

/// Writes a compressed run into its extent: the encoder's output, gathered into aligned blocks
/// written at their place (direct writes need aligned offsets and lengths).
pub(crate) struct ExtentSink {
    file: Arc<DirectFile>,
    /// The extent's first byte, and the file offset of the buffer's first byte.
    start: u64,
    base: u64,
    buf: AlignedBuf,
    len: usize,
    packed: Arc<Packed>,
    counters: Arc<IoCounters>,
}

impl ExtentSink {
    /// A sink into the extent at `start` (aligned) whose length is in `packed`, counting its
    /// writes in `counters`.
    pub fn new(file: Arc<DirectFile>, start: u64, packed: Arc<Packed>, block: usize, counters: Arc<IoCounters>) -> xsort_io::Result<Self> {
        let buf = AlignedBuf::new(align_up(block))?;
        Ok(ExtentSink { file, start, base: start, buf, len: 0, packed, counters })
    }

    /// Writes the buffer's bytes (padded to the alignment) at its place.
    fn write_out(&mut self) -> std::io::Result<()> {
        let n = align_up(self.len).min(self.buf.capacity());
        if self.base + n as u64 > self.start + self.packed.reserved {
            return Err(std::io::Error::other("a compressed temp run outgrew its extent"));
        }
        let t = std::time::Instant::now();
        self.file.write_all_at(&self.buf.as_slice()[..n], self.base).map_err(into_io)?;
        self.counters.record(self.len as u64, t, self.file.is_direct());
        Ok(())
    }
}

impl Write for ExtentSink {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        let n = data.len().min(self.buf.capacity() - self.len);
        self.buf.as_mut_slice()[self.len..self.len + n].copy_from_slice(&data[..n]);
        self.len += n;
        if self.len == self.buf.capacity() {
            self.write_out()?;
            self.base += self.len as u64;
            self.len = 0;
        }
        Ok(n)
    }

    /// Writes the partial last block (padded) and publishes the stored length. The partial block
    /// stays in the buffer, so that bytes written after a flush land after it, and its block is
    /// written again whole.
    fn flush(&mut self) -> std::io::Result<()> {
        if self.len > 0 {
            self.write_out()?;
        }
        self.packed.stored.store(self.base - self.start + self.len as u64, Ordering::Release);
        Ok(())
    }
}

/// An I/O error of the engine as a plain one, for the `Read` and `Write` traits: a full disk keeps
/// its OS error, so that the writer's message says so (naming the temp directory).
fn into_io(e: IoError) -> std::io::Error {
    match e {
        IoError::DiskFull { .. } => std::io::Error::from_raw_os_error(libc::ENOSPC),
        IoError::Write { cause, .. } | IoError::Read { cause, .. } | IoError::Alloc { cause, .. } => cause,
        other => std::io::Error::other(other.to_string()),
    }
}

/// What an [`ExtentSource`] has read and its decoder taken, and whether a read of the file failed
/// (its error is then no sign of corrupt data).
#[derive(Default)]
struct SourceState {
    read: AtomicU64,
    taken: AtomicU64,
    failed: AtomicBool,
}

/// The compressed bytes of a run, read from its extent in aligned blocks.
struct ExtentSource {
    file: Arc<DirectFile>,
    /// File offsets of the next block to read and of the run's end.
    next: u64,
    end: u64,
    buf: AlignedBuf,
    at: usize,
    len: usize,
    shared: Arc<SourceState>,
}

impl Read for ExtentSource {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let avail = self.fill_buf()?;
        let n = avail.len().min(out.len());
        out[..n].copy_from_slice(&avail[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for ExtentSource {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        if self.at == self.len && self.next < self.end {
            let want = align_up((self.end - self.next) as usize).min(self.buf.capacity());
            let got = self.file.read_at(&mut self.buf.as_mut_slice()[..want], self.next).map_err(|e| {
                self.shared.failed.store(true, Ordering::Relaxed);
                into_io(e)
            })?;
            // A file shorter than the run (the disk lost its end) reads short: the decoder then
            // finds its last frame truncated.
            let valid = (got as u64).min(self.end - self.next) as usize;
            self.next = if got < want { self.end } else { self.next + want as u64 };
            (self.at, self.len) = (0, valid);
            self.shared.read.fetch_add(valid as u64, Ordering::Relaxed);
        }
        Ok(&self.buf.as_slice()[self.at..self.len])
    }

    fn consume(&mut self, n: usize) {
        self.at = (self.at + n).min(self.len);
        self.shared.taken.fetch_add(n as u64, Ordering::Relaxed);
    }
}

/// The decompressed bytes of a run. A decoder's failure is an error that says the temp run is
/// corrupt or truncated, and where; a failed read of the file is passed on as it is.
pub(crate) struct RunDecoder {
    inner: zstd::stream::read::Decoder<'static, ExtentSource>,
    shared: Arc<SourceState>,
}

impl RunDecoder {
    /// Compressed bytes taken so far, for a message about a run that ended early.
    pub fn taken(&self) -> u64 {
        self.shared.taken.load(Ordering::Relaxed)
    }
}

impl Read for RunDecoder {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        self.inner.read(out).map_err(|e| {
            if self.shared.failed.load(Ordering::Relaxed) || e.kind() == std::io::ErrorKind::Interrupted {
                return e;
            }
            let (taken, read) = (self.shared.taken.load(Ordering::Relaxed), self.shared.read.load(Ordering::Relaxed));
            let what = match e.kind() {
                std::io::ErrorKind::UnexpectedEof => {
                    format!("truncated zstd data in a temp run: it ends at byte {read} (the disk gave back less than was written)")
                }
                _ => format!(
                    "corrupt zstd data in a temp run, found between bytes {taken} and {read}: {} (the disk gave back other bytes than were written)",
                    xsort_io::os_text(&e)
                ),
            };
            std::io::Error::new(std::io::ErrorKind::InvalidData, what)
        })
    }
}

/// The name a compressed run's reads carry in errors: its temp directory.
pub(crate) fn run_name(file: &DirectFile) -> PathBuf {
    let p = file.path();
    match p.parent() {
        Some(parent) if !p.is_dir() => parent.to_owned(),
        _ => p.to_owned(),
    }
}

/// What [`choose`] needs to know of a sort that spills.
pub(crate) struct SpillShape<'a> {
    /// The input's length.
    pub len: u64,
    /// The plan's chunk, in bytes of data.
    pub chunk_bytes: u64,
    /// The record size the merge plans for (1 for lines).
    pub record_size: u64,
    /// The plan, for the merge's fan-in.
    pub plan: &'a MemoryPlan,
    /// Temp transfers.
    pub temp_io: crate::config::IoSettings,
    /// The output file, when it is one: it is written while the last runs still take their space.
    pub output: Option<&'a Path>,
}

/// Why a spilled sort of a known input should compress its runs, when the temp directories' free
/// space would not hold them plainly: each filesystem must hold its share of the runs (they are
/// spread over the directories round robin), and, when the runs are more than one merge takes, a
/// merged group's run beside its inputs; the output's filesystem also holds the output, written
/// while the last runs still take their space. None when every filesystem has room, or its free
/// space is unknown.
pub(crate) fn choose(dirs: &[PathBuf], free: &[Option<xsort_io::FreeSpace>], shape: &SpillShape<'_>) -> Option<String> {
    let runs = shape.len.div_ceil(shape.chunk_bytes.max(1));
    let merge = shape.plan.merge_shape(usize::try_from(runs).unwrap_or(usize::MAX), shape.temp_io, shape.record_size);
    let group = if runs > merge.fan_in as u64 { shape.len.min(merge.fan_in as u64 * shape.chunk_bytes) } else { 0 };
    let need = shape.len.saturating_add(group);
    let output =
        shape.output.and_then(|p| xsort_io::FreeSpace::of(p.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."))));
    for (i, space) in free.iter().enumerate() {
        let Some(space) = space else { continue };
        // Every directory of this filesystem takes its share; it is checked once, at its first.
        if free[..i].iter().flatten().any(|s| s.filesystem == space.filesystem) {
            continue;
        }
        let sharing = free.iter().flatten().filter(|s| s.filesystem == space.filesystem).count() as u64;
        let mut wanted = (need as u128 * sharing as u128 / dirs.len() as u128) as u64;
        if output.is_some_and(|o| o.filesystem == space.filesystem) {
            wanted = wanted.saturating_add(shape.len);
        }
        if wanted > space.available {
            return Some(format!(
                "{} has {} free, and the runs would take {} plainly",
                dirs[i].display(),
                format_bytes(space.available),
                format_bytes(wanted)
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codec() -> TempCodec {
        TempCodec::new(1, 64 << 20, 2, "test".into())
    }

    /// Writes `data` as a compressed run at `offset` of a temp file; returns the file and the run.
    fn write_run(data: &[u8], offset: u64) -> (tempfile::TempDir, Arc<DirectFile>, Arc<Packed>) {
        let dir = tempfile::tempdir().unwrap();
        let space = xsort_io::TempSpace::new(vec![dir.path().into()], true).unwrap();
        let file = space.create().unwrap();
        let c = codec();
        let packed = Arc::new(Packed::new(c.reserve(data.len() as u64)));
        let sink = ExtentSink::new(file.clone(), offset, packed.clone(), c.block, Arc::default()).unwrap();
        let mut e = c.encoder(sink).unwrap();
        for piece in data.chunks(100_003) {
            e.write_all(piece).unwrap();
        }
        e.finish().unwrap();
        (dir, file, packed)
    }

    fn text(len: usize) -> Vec<u8> {
        (0..len).map(|i| b"abcdefgh\n"[(i * 7 + i / 13) % 9]).collect()
    }

    #[test]
    fn runs_round_trip_and_shrink() {
        let data = text(3 << 20);
        let (_d, file, packed) = write_run(&data, 8192);
        assert!(packed.stored() < data.len() as u64 / 4, "{}", packed.stored());
        assert!(packed.stored() <= packed.reserved);
        let mut out = Vec::new();
        codec().decoder(file, 8192, &packed).unwrap().read_to_end(&mut out).unwrap();
        assert!(out == data);
    }

    #[test]
    fn corrupt_and_truncated_runs_are_errors() {
        let data = text(1 << 20);
        let (_d, file, packed) = write_run(&data, 0);
        // Bytes changed in the middle of a frame: the checksum (or the decoder) finds them.
        let mut page = vec![0u8; 4096];
        file.read_at(&mut page, 4096).unwrap();
        page.iter_mut().for_each(|b| *b ^= 0x55);
        file.write_all_at(&page, 4096).unwrap();
        let e = codec().decoder(file.clone(), 0, &packed).unwrap().read_to_end(&mut Vec::new()).unwrap_err();
        assert!(e.to_string().contains("corrupt zstd data in a temp run"), "{e}");
        // A run shorter than written: inside a frame, the decoder says so; at the end of a frame
        // (these frames are all alike, four of them), it reads short, which the merge finds.
        let (_d, file, packed) = write_run(&data, 0);
        let cut = Packed::new(packed.reserved);
        cut.stored.store(packed.stored() / 2 + 7, Ordering::Relaxed);
        let e = codec().decoder(file.clone(), 0, &cut).unwrap().read_to_end(&mut Vec::new()).unwrap_err();
        assert!(e.to_string().contains("truncated zstd data in a temp run"), "{e}");
        cut.stored.store(packed.stored() / 2, Ordering::Relaxed);
        assert_eq!(codec().decoder(file, 0, &cut).unwrap().read_to_end(&mut Vec::new()).unwrap(), data.len() / 2);
    }

    #[test]
    fn memory_follows_the_budget() {
        let small = TempCodec::new(1, 1 << 20, 8, String::new());
        assert_eq!((small.block, small.threads), (MIN_BLOCK, 1));
        let large = TempCodec::new(1, 4 << 30, 8, String::new());
        assert_eq!((large.block, large.threads), (MAX_BLOCK, 8));
        assert!(large.encoder_memory() < (4u64 << 30) / 16);
        assert!(small.reserve(0) > 0 && small.reserve(1 << 20) > 1 << 20);
    }
}
