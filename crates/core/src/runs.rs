//! Temp runs: sorted record streams stored as extents of one anonymous temp file per directory.
//!
//! One file per directory, not one per run, so that the number of runs (and the merge's fan-in) is
//! never limited by the descriptor limit. Runs go to the directories round robin; a merged run's
//! extent is punched out so the space returns at once. With a compress program ([`Compressor`]),
//! each run is instead a file of its own, written through the program, for as long as a quarter of
//! the descriptor limit allows; the runs beyond are stored plain. With a built-in codec
//! ([`TempCodec`], `--compress-temp`), each run stays an extent, holding its zstd frames (see
//! [`crate::temp_codec`]). The inputs of `-m` are runs too, read in place and opened only while
//! they are merged (see [`RunSource`]).

use crate::compress::{Compressing, Compressor};
use crate::config::IoSettings;
use crate::error::{Result, SortError};
use crate::framing::Framing;
use crate::temp_codec::{ExtentSink, Packed, TempCodec};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use xsort_io::{align_up, AlignedBuf, BlockWriter, BufferPool, DirectFile, IoCounters, Sink, TempSpace, WriterConfig};

/// A sorted run: on temp space, or a whole input of `-m`.
#[derive(Clone, Debug)]
pub struct Run {
    /// Where its bytes are.
    pub source: RunSource,
    /// Offset of its first byte (aligned).
    pub offset: u64,
    /// Length in bytes (whole records).
    pub bytes: u64,
    /// The program that compressed it, if it is stored compressed (then `bytes` is its length
    /// decompressed, and the file is its own).
    pub compressed: Option<Arc<Compressor>>,
    /// For a run stored zstd-compressed in its extent: the codec and its stored length (then
    /// `bytes` is its length decompressed).
    pub packed: Option<PackedRun>,
    /// For an input of Nsort's `-merge`: its name, and a merge that reads it checks that its
    /// records are in order.
    pub order_check: Option<PathBuf>,
}

/// A run's zstd frames: how they were made, and their length.
#[derive(Clone, Debug)]
pub struct PackedRun {
    /// The codec that wrote them (and reads them back).
    pub codec: Arc<TempCodec>,
    /// Their length, known once the run is written.
    pub len: Arc<Packed>,
}

/// Where a run's bytes are.
#[derive(Clone, Debug)]
pub enum RunSource {
    /// A temp file (its extent is released after merging).
    Temp(Arc<DirectFile>),
    /// A whole input file, merged in place and never released. It is opened only while it is
    /// merged, so that more inputs than the descriptor limit allows can be merged in batches.
    Input(PathBuf),
}

impl Run {
    /// A whole input file of `bytes` bytes, merged in place.
    pub fn input(path: PathBuf, bytes: u64) -> Self {
        Run { source: RunSource::Input(path), offset: 0, bytes, compressed: None, packed: None, order_check: None }
    }

    /// A run in a temp file.
    fn temp(file: Arc<DirectFile>, offset: u64, bytes: u64, compressed: Option<Arc<Compressor>>) -> Self {
        Run { source: RunSource::Temp(file), offset, bytes, compressed, packed: None, order_check: None }
    }

    /// Whether the run is read as a stream (through a decompressor), a block at a time in order,
    /// rather than at offsets.
    pub fn is_stream(&self) -> bool {
        self.compressed.is_some() || self.packed.is_some()
    }

    /// Whether merging the run opens a file of its own (an input), which counts against the
    /// descriptor limit.
    pub fn opens_a_file(&self) -> bool {
        matches!(self.source, RunSource::Input(_))
    }

    /// The file to read the run from: the temp file, or the input, opened now.
    pub fn open(&self) -> Result<Arc<DirectFile>> {
        match &self.source {
            RunSource::Temp(f) => Ok(f.clone()),
            RunSource::Input(p) => Ok(Arc::new(DirectFile::open(p, xsort_io::Access::Read, false)?)),
        }
    }
}

/// Writes a run: a [`BlockWriter`] (which it dereferences to) and, for a compressed run, the
/// program writing the file, which [`RunWriter::finish_after`] waits for.
pub struct RunWriter {
    writer: BlockWriter,
    compressing: Option<(Compressing, Arc<Compressor>)>,
    /// The store's count of run bytes written (before any compression).
    run_bytes: Arc<AtomicU64>,
}

impl RunWriter {
    /// Ends the run after `wrote`, the outcome of writing it: waits for every write and, for a
    /// compressed run, for the program. When the program failed, its failure is the error, since it
    /// also explains a failed write (a broken pipe).
    pub fn finish_after<T>(self, wrote: Result<T>) -> Result<T> {
        let RunWriter { writer, compressing, run_bytes } = self;
        // Finishing the writer (or dropping it, after a failure) closes the program's input, or
        // writes the encoder's last frames.
        let written = match wrote {
            Ok(v) => writer
                .finish()
                .map(|n| {
                    run_bytes.fetch_add(n, Ordering::Relaxed);
                    v
                })
                .map_err(SortError::from),
            Err(e) => {
                drop(writer);
                Err(e)
            }
        };
        if let Some((child, compressor)) = compressing {
            compressor.finish_compressing(child)?;
        }
        written
    }
}

impl std::ops::Deref for RunWriter {
    type Target = BlockWriter;
    fn deref(&self) -> &BlockWriter {
        &self.writer
    }
}

impl std::ops::DerefMut for RunWriter {
    fn deref_mut(&mut self) -> &mut BlockWriter {
        &mut self.writer
    }
}

/// The temp files of one sort and the extents allocated in them.
pub struct TempStore {
    space: TempSpace,
    files: Vec<Option<(Arc<DirectFile>, u64)>>,
    next: usize,
    io: IoSettings,
    counters: Arc<IoCounters>,
    compressor: Option<Arc<Compressor>>,
    /// The built-in codec of the runs written from now on, if any.
    codec: Option<Arc<TempCodec>>,
    /// Bytes of runs written, before any compression.
    run_bytes: Arc<AtomicU64>,
    /// Where run writers take their buffers from and give them back to.
    buffers: Arc<BufferPool>,
}

impl TempStore {
    /// A store over checked temp directories; files are created on first use; run writers take
    /// their buffers from `buffers`.
    pub fn new(space: TempSpace, io: IoSettings, counters: Arc<IoCounters>, buffers: Arc<BufferPool>) -> Self {
        let files = vec![None; space.dirs().len()];
        TempStore { space, files, next: 0, io, counters, compressor: None, codec: None, run_bytes: Arc::default(), buffers }
    }

    /// The pool run writers take their buffers from.
    pub fn buffers(&self) -> &BufferPool {
        &self.buffers
    }

    /// Stores the runs written from now on through `compressor`.
    pub fn compress_with(&mut self, compressor: Option<Compressor>) {
        self.compressor = compressor.map(Arc::new);
    }

    /// Stores the runs written from now on zstd-compressed by `codec` (None: plainly).
    pub fn compress_temp(&mut self, codec: Option<TempCodec>) {
        self.codec = codec.map(Arc::new);
    }

    /// The built-in codec of the runs, if any.
    pub fn codec(&self) -> Option<&TempCodec> {
        self.codec.as_deref()
    }

    /// Bytes of runs written so far, before any compression.
    pub fn run_bytes(&self) -> u64 {
        self.run_bytes.load(Ordering::Relaxed)
    }

    /// Starts writing a run of at most `bytes` bytes: reserves an extent and returns a writer
    /// positioned on it (or, when compressing and descriptors allow, a file of its own and a writer
    /// into the program; or, with a built-in codec, a writer through its encoder into the extent).
    pub fn create_run(&mut self, bytes: u64, block: usize, buffers: usize) -> Result<(Run, RunWriter)> {
        if let Some(codec) = self.codec.clone() {
            return self.create_packed_run(codec, bytes, block, buffers);
        }
        let run_bytes = self.run_bytes.clone();
        if let Some(compressor) = self.compressor.clone().filter(|c| c.has_room()) {
            let file = self.space.create_buffered()?;
            let (child, stdin) = compressor.compress_into(&file)?;
            let name = PathBuf::from(format!("compress program '{}'", compressor.program()));
            let sink = Sink::Stream { out: Box::new(stdin), name };
            let writer = BlockWriter::pooled(sink, WriterConfig::new(block, buffers), self.buffers.clone(), self.counters.clone())?;
            let run = Run::temp(file, 0, bytes, Some(compressor.clone()));
            return Ok((run, RunWriter { writer, compressing: Some((child, compressor)), run_bytes }));
        }
        let (_, file, offset) = self.extent(bytes)?;
        let run = Run::temp(file.clone(), offset, bytes, None);
        let writer = self.extent_writer(file, offset, block, buffers)?;
        Ok((run, RunWriter { writer, compressing: None, run_bytes }))
    }

    /// A run written through `codec`'s encoder into an extent reserved at the most its frames can
    /// take. The writer's own counters see the plain bytes; the sort's temp writes count those the
    /// sink writes.
    fn create_packed_run(&mut self, codec: Arc<TempCodec>, bytes: u64, block: usize, buffers: usize) -> Result<(Run, RunWriter)> {
        let reserved = codec.reserve(bytes);
        let (_, file, offset) = self.extent(reserved)?;
        let len = Arc::new(Packed::new(reserved));
        let sink = ExtentSink::new(file.clone(), offset, len.clone(), codec.block, self.counters.clone())?;
        let name = crate::temp_codec::run_name(&file);
        let encoder = codec.encoder(sink).map_err(|e| xsort_io::IoError::write(&name, e))?;
        let sink = Sink::Compressed { out: encoder, name };
        let writer = BlockWriter::pooled(sink, WriterConfig::new(block, buffers), self.buffers.clone(), Arc::default())?;
        let mut run = Run::temp(file, offset, bytes, None);
        run.packed = Some(PackedRun { codec, len });
        Ok((run, RunWriter { writer, compressing: None, run_bytes: self.run_bytes.clone() }))
    }

    /// Copies a stream to the end of a temp file and returns it as a run (for merging inputs that
    /// cannot be read at offsets, such as pipes). The temp file is the one runs share, so that a
    /// merge under a low descriptor limit holds no descriptor for the copy (GNU's `-m` reads
    /// standard input on descriptor 0). Nothing else may be writing runs meanwhile: the copy's
    /// extent is its length, known only at its end.
    pub fn spool(&mut self, src: &mut dyn std::io::Read, name: &std::path::Path, block: usize, buffers: usize) -> Result<Run> {
        let (slot, file, offset) = self.extent(0)?;
        let mut writer = self.extent_writer(file.clone(), offset, block, buffers)?;
        let mut sink = RecordSink::new(&mut writer);
        let mut piece = vec![0u8; block];
        loop {
            let n = xsort_io::read_stream(src, &mut piece).map_err(|e| xsort_io::IoError::read(name, e))?;
            if n == 0 {
                break;
            }
            sink.push(&piece[..n])?;
        }
        sink.flush()?;
        let bytes = sink.written();
        writer.finish()?;
        if let Some((_, end)) = self.files[slot].as_mut() {
            *end += align_up(bytes as usize) as u64;
        }
        Ok(Run::temp(file, offset, bytes, None))
    }

    /// A new extent of `bytes` at the end of the next temp file (the directories take turns; each
    /// file is created on first use): the file's slot, the file and the extent's offset.
    fn extent(&mut self, bytes: u64) -> Result<(usize, Arc<DirectFile>, u64)> {
        let slot = self.next % self.files.len();
        self.next += 1;
        if self.files[slot].is_none() {
            self.files[slot] = Some((self.space.create()?, 0));
        }
        let (file, end) = self.files[slot].as_mut().expect("created above");
        let offset = *end;
        *end += align_up(bytes as usize) as u64;
        Ok((slot, file.clone(), offset))
    }

    /// A writer of an extent of `file` that starts at `offset`.
    fn extent_writer(&self, file: Arc<DirectFile>, offset: u64, block: usize, buffers: usize) -> Result<BlockWriter> {
        let cfg = WriterConfig {
            start_offset: offset,
            cut_padding: false,
            threads: self.io.count.clamp(1, buffers),
            ..WriterConfig::new(block, buffers)
        };
        Ok(BlockWriter::pooled(Sink::File(file), cfg, self.buffers.clone(), self.counters.clone())?)
    }

    /// Gives a consumed run's space back.
    pub fn release(&self, run: &Run) {
        // A compressed run's file is its own: its space returns when the run is dropped.
        if let (RunSource::Temp(file), None) = (&run.source, &run.compressed) {
            let extent = run.packed.as_ref().map_or(align_up(run.bytes as usize) as u64, |p| p.len.reserved);
            file.punch_hole(run.offset, extent);
        }
    }
}

/// Appends records to a [`BlockWriter`] as one byte stream, splitting records across blocks.
pub struct RecordSink<'w> {
    writer: &'w mut BlockWriter,
    buf: Option<AlignedBuf>,
    len: usize,
    written: u64,
}

impl<'w> RecordSink<'w> {
    /// A sink over `writer`.
    pub fn new(writer: &'w mut BlockWriter) -> Self {
        RecordSink { writer, buf: None, len: 0, written: 0 }
    }

    /// Bytes appended so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Appends one record of a stream framed as `framing`: a line gets its terminator back.
    #[inline]
    pub fn push_record(&mut self, rec: &[u8], framing: Framing) -> Result<()> {
        self.push(rec)?;
        match framing {
            Framing::Fixed(_) => Ok(()),
            Framing::Delimited(s) => self.push(&[s.terminator]),
        }
    }

    /// Appends bytes.
    #[inline]
    pub fn push(&mut self, rec: &[u8]) -> Result<()> {
        self.push_with(rec.len() as u64, |from, dst| {
            let from = from as usize;
            dst.copy_from_slice(&rec[from..from + dst.len()]);
        })
    }

    /// Appends `len` bytes that `fill(from, dst)` writes straight into the blocks, bytes
    /// `[from, from + dst.len())` at a time (a piece of output gathered from a sorted chunk).
    #[inline]
    pub fn push_with(&mut self, len: u64, fill: impl Fn(u64, &mut [u8])) -> Result<()> {
        self.written += len;
        let mut pos = 0u64;
        while pos < len {
            let buf = match &mut self.buf {
                Some(b) => b,
                None => {
                    self.len = 0;
                    self.buf.insert(self.writer.buffer()?)
                }
            };
            let n = ((buf.capacity() - self.len) as u64).min(len - pos) as usize;
            fill(pos, &mut buf.as_mut_slice()[self.len..self.len + n]);
            self.len += n;
            pos += n as u64;
            if self.len == buf.capacity() {
                self.flush()?;
            }
        }
        Ok(())
    }

    /// Submits the partly filled last block.
    pub fn flush(&mut self) -> Result<()> {
        if let Some(b) = self.buf.take() {
            self.writer.submit(b, self.len)?;
        }
        Ok(())
    }
}
