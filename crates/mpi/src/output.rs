//! Where the ranks write: one shared file, each rank at its offset, or one part per rank
//! (node-local). Either way nothing reaches its target name before every rank has written its
//! range: the shared file is written under a temp name beside the target (every rank opens it by
//! name, so it cannot be unnamed; its owner's alone, 0600, until it takes its final mode in the
//! commit) and rank 0 renames it over the target after the ranks agree
//! (over the file a symbolic link names, keeping the link; a target with other hard links gets the
//! new contents copied in; a device such as `/dev/null` is written in place, as `xsort` writes
//! one); a part is xsort's atomic output (unnamed until committed), and every rank commits its part
//! after the ranks agree.
//!
//! The temp name is registered with xsort's signal cleanup on every rank, so whichever ranks
//! `mpirun` terminates after a failure remove it; a rank's drop removes it too unless committed.
//!
//! A compressed output ([`CompressedRange`]) is written as a stream, in order, through xsort's
//! block encoder ([`Encoder`]): a part is one complete compressed stream of its rank's range; for
//! the shared output each rank compresses its range into an unnamed temp file first (its size,
//! and so the offsets, are known only then), and the ranks then copy those in at their offsets.
//! Every format's members or frames concatenate into one valid stream, so the shared output is
//! the sorted whole, compressed.

use anyhow::{Context, Result};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use xsort_io::output::AtomicOutput;
use xsort_io::{align_up, AlignedBuf, Compression, DirectFile, Encoder, IO_ALIGN};

/// A rank's output.
pub enum Target {
    /// The shared output file, open under its temp name.
    Shared(SharedFile),
    /// This rank's part.
    Part(AtomicOutput),
    /// This rank's range, compressed: into its part, or into a temp file for the shared output.
    Compressed(Box<CompressedRange>),
}

/// A rank's range compressed as it is written: its bytes must come in order, from offset 0 of the
/// range. [`CompressedRange::finish`] ends the stream.
pub struct CompressedRange {
    stream: Mutex<Stream>,
    /// Compressed bytes written so far.
    written: Arc<AtomicU64>,
    dest: Dest,
    /// The output as named for this rank (for messages).
    name: PathBuf,
}

/// The encoder (None once finished) and the uncompressed bytes it has been given.
struct Stream {
    encoder: Option<Encoder>,
    at: u64,
}

/// Where a compressed range goes.
pub enum Dest {
    /// The rank's part, committed as a plain part is.
    Part(AtomicOutput),
    /// An unnamed temp file, to be copied into the shared output at the rank's offset.
    Staged(Arc<DirectFile>),
}

/// The encoder's destination: a file written from its start on.
struct Sink {
    file: Arc<DirectFile>,
    written: Arc<AtomicU64>,
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let at = self.written.load(Ordering::Relaxed);
        self.file.write_all_at(buf, at).map_err(std::io::Error::other)?;
        self.written.store(at + buf.len() as u64, Ordering::Relaxed);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl CompressedRange {
    /// The rank's part `out`, compressed with `compression` on `threads` threads.
    pub fn part(out: AtomicOutput, compression: Compression, threads: usize) -> Result<CompressedRange> {
        let (file, name) = (out.file().clone(), out.target().to_owned());
        Self::start(file, Dest::Part(out), name, compression, threads)
    }

    /// The rank's range of the shared output `name`, compressed into an unnamed temp file in `dir`.
    pub fn staged(dir: &Path, name: &Path, compression: Compression, threads: usize) -> Result<CompressedRange> {
        let temp = tempfile::tempfile_in(dir).with_context(|| format!("{}: cannot write a temp file", dir.display()))?;
        let file = Arc::new(DirectFile::from_file(temp, dir.to_owned()));
        Self::start(file.clone(), Dest::Staged(file), name.to_owned(), compression, threads)
    }

    fn start(file: Arc<DirectFile>, dest: Dest, name: PathBuf, compression: Compression, threads: usize) -> Result<CompressedRange> {
        let written = Arc::new(AtomicU64::new(0));
        let sink = Sink { file, written: written.clone() };
        let encoder = Encoder::new(Box::new(sink), compression, threads)
            .with_context(|| format!("{}: cannot start the output's compression threads", name.display()))?;
        Ok(CompressedRange { stream: Mutex::new(Stream { encoder: Some(encoder), at: 0 }), written, dest, name })
    }

    /// Compresses `data`, the range's bytes from `offset` (the bytes given so far: the writes of a
    /// range come in order, see [`RangeWriter::run`]).
    fn write(&self, data: &[u8], offset: u64) -> Result<()> {
        let mut s = self.stream.lock().map_err(|_| anyhow::anyhow!("{}: a write to the output failed", self.name.display()))?;
        anyhow::ensure!(offset == s.at, "{}: the compressed output's writes came out of order (internal error)", self.name.display());
        let encoder = s.encoder.as_mut().context("the compressed output was finished")?;
        encoder.write_all(data).map_err(|e| self.error(e))?;
        s.at += data.len() as u64;
        Ok(())
    }

    /// Ends the stream: the last blocks compressed and written.
    pub fn finish(&self) -> Result<()> {
        let mut s = self.stream.lock().map_err(|_| anyhow::anyhow!("{}: a write to the output failed", self.name.display()))?;
        match s.encoder.take() {
            Some(e) => e.finish().map_err(|e| self.error(e)),
            None => Ok(()),
        }
    }

    /// Where the finished stream went, and its compressed length.
    pub fn into_dest(self) -> (Dest, u64) {
        (self.dest, self.written.load(Ordering::Relaxed))
    }

    /// An encoder's error: a failed write names its file already; a failed compression, the output.
    fn error(&self, e: std::io::Error) -> anyhow::Error {
        if e.get_ref().is_some_and(|r| r.is::<xsort_io::IoError>()) {
            if let Some(Ok(io)) = e.into_inner().map(|r| r.downcast::<xsort_io::IoError>()) {
                return anyhow::Error::from(*io);
            }
            return anyhow::anyhow!("{}: write error", self.name.display());
        }
        anyhow::anyhow!("{}: cannot compress the output: {}", self.name.display(), xsort_io::os_text(&e))
    }

    /// Copies the finished stream from its temp file (`len` bytes of `staged`) into the shared
    /// output `target` at `offset`, as a range is written (whole pages direct, shared ones through
    /// the page cache).
    pub fn copy_into(staged: &DirectFile, len: u64, target: &Target, offset: u64, plan: WritePlan) -> Result<()> {
        let mut done = 0u64;
        RangeWriter::run(target, offset, plan, 0, |out| {
            while done < len {
                let space = out.space();
                let want = (space.len() as u64).min(len - done) as usize;
                let k = staged.read_at(&mut space[..want], done)?;
                anyhow::ensure!(k > 0, "a temp file ended early");
                out.filled(k)?;
                done += k as u64;
            }
            Ok(())
        })
    }
}

/// The shared output under its temp name.
pub struct SharedFile {
    /// The output as the user named it (for messages).
    target: PathBuf,
    /// The file it names once symbolic links are followed: the file replaced or rewritten.
    real: PathBuf,
    /// The file the ranks write: the temp name beside `real`, or `real` itself for a device.
    temp: PathBuf,
    file: Option<File>,
    /// The same file opened with O_DIRECT (None where the filesystem refuses it), for the pages
    /// that lie wholly inside this rank's range.
    direct: Option<File>,
    placement: Placement,
    /// The permission bits the output takes at the commit (the temp file has [`PRIVATE_MODE`]
    /// until then); rank 0's, which creates the file and commits it.
    mode: u32,
    committed: bool,
}

/// The temp file's mode while the ranks write it: its owner's alone.
const PRIVATE_MODE: u32 = 0o600;

/// How the written output takes the target's place, as `xsort` puts its own output in place.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Placement {
    /// The temp file is renamed over the target (a symbolic link to it stays a link).
    Rename,
    /// The target has other names (hard links), which must see the output too: its contents are
    /// replaced by the temp file's, which is then removed.
    Rewrite,
    /// The target is a device (`/dev/null`, a disk): the ranks write it in place; there is no
    /// temp file, and nothing to commit or remove.
    InPlace,
}

impl Placement {
    /// The placement for a target with `existing` metadata (None: no file there yet; a directory,
    /// FIFO or socket was refused by [`resolve_output`]).
    fn of(existing: Option<&std::fs::Metadata>) -> Placement {
        match existing {
            Some(md) if !md.is_file() => Placement::InPlace,
            Some(md) if md.nlink() > 1 => Placement::Rewrite,
            _ => Placement::Rename,
        }
    }
}

/// The temp file opened again with O_DIRECT, if the filesystem allows it.
fn open_direct(temp: &Path) -> Option<File> {
    OpenOptions::new().write(true).custom_flags(libc::O_DIRECT).open(temp).ok()
}

/// Bytes of the target's name kept in its temp name: with `.` before and `.xsort-mpi-` and 16
/// hex digits after, the temp name stays within a name's 255 bytes whatever the target's length.
const TEMP_NAME_KEEPS: usize = 200;

/// The temp name of the shared output `target` for the job `nonce`: `.NAME.xsort-mpi-NONCE`
/// beside it, NAME cut to its first [`TEMP_NAME_KEEPS`] bytes.
pub fn temp_name(target: &Path, nonce: u64) -> PathBuf {
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    let name = target.file_name().map_or(&b"output"[..], |n| n.as_bytes());
    let mut temp = b".".to_vec();
    temp.extend_from_slice(&name[..name.len().min(TEMP_NAME_KEEPS)]);
    temp.extend_from_slice(format!(".xsort-mpi-{nonce:016x}").as_bytes());
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
        _ => PathBuf::from("."),
    };
    dir.join(std::ffi::OsString::from_vec(temp))
}

/// The file the output `target` (shared, or a rank's part) names with symbolic links followed,
/// and what is there now. A directory, a FIFO or a socket cannot take the ranks' byte ranges (their
/// positioned writes): an error naming `target`.
pub fn resolve_output(target: &Path) -> Result<(PathBuf, Option<std::fs::Metadata>)> {
    let cannot = || format!("{}: cannot open", target.display());
    let real = xsort_io::output::resolve_links(target).with_context(cannot)?;
    let existing = match std::fs::metadata(&real) {
        Ok(md) => Some(md),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(cannot),
    };
    if let Some(md) = &existing {
        xsort_io::output::refuse_planted(&real, md).with_context(cannot)?;
        let kind = md.file_type();
        if kind.is_dir() {
            anyhow::bail!("{}: cannot open: is a directory", target.display());
        }
        if !kind.is_file() && !kind.is_char_device() && !kind.is_block_device() {
            anyhow::bail!("{}: not a regular file or a device: the ranks write byte ranges of one output", target.display());
        }
    }
    Ok((real, existing))
}

impl SharedFile {
    /// Rank 0: creates the temp file beside the file `target` names (never through an existing
    /// name), readable and writable by its owner only while the ranks write it, owned, where
    /// allowed, by that file's owner; or opens a device in place. It takes the mode the target
    /// should have only at the commit ([`SharedFile::commit`]).
    pub fn create(target: &Path, nonce: u64) -> Result<SharedFile> {
        let (real, existing) = resolve_output(target)?;
        let placement = Placement::of(existing.as_ref());
        if placement == Placement::InPlace {
            return Self::in_place(target, real);
        }
        let temp = temp_name(&real, nonce);
        // The name is in the target's directory, where other users may look: with the target's
        // mode (0644 for a new file) any of them could open it during the job and keep reading the
        // sorted data, or what it held before, through that descriptor. 0600 until the commit.
        let file = xsort_io::signals::registering(|register| {
            let f = OpenOptions::new().write(true).create_new(true).mode(PRIVATE_MODE).open(&temp);
            if f.is_ok() {
                register(&temp);
            }
            f
        })
        .with_context(|| format!("{}: cannot create the output beside it", target.display()))?;
        if let (Placement::Rename, Some(md)) = (placement, &existing) {
            // Best effort, as for xsort's own output: a user may not give a file away. (The
            // set-user-ID and set-group-ID bits a change of owner clears come with the mode at
            // the commit.)
            // SAFETY: fchown on a descriptor this rank holds open.
            unsafe { libc::fchown(file.as_raw_fd(), md.uid(), md.gid()) };
        }
        // A new target gets 0666 less the umask, as xsort's output (and any file it creates); a
        // replaced one keeps its mode. A copied-in output (hard links) leaves the target's mode.
        let mode = existing.as_ref().map_or_else(xsort_io::output::new_file_mode, |m| m.mode() & 0o7777);
        let direct = open_direct(&temp);
        Ok(SharedFile { target: target.to_owned(), real, temp, file: Some(file), direct, placement, mode, committed: false })
    }

    /// The other ranks: opens the temp file rank 0 created (or the device, in place).
    pub fn open(target: &Path, nonce: u64) -> Result<SharedFile> {
        let (real, existing) = resolve_output(target)?;
        let placement = Placement::of(existing.as_ref());
        if placement == Placement::InPlace {
            return Self::in_place(target, real);
        }
        let temp = temp_name(&real, nonce);
        let file = xsort_io::signals::registering(|register| {
            register(&temp);
            OpenOptions::new().write(true).open(&temp)
        });
        let direct = open_direct(&temp);
        let mut shared = SharedFile { target: target.to_owned(), real, temp, file: None, direct, placement, mode: 0, committed: false };
        shared.file =
            Some(file.with_context(|| format!("{}: cannot open the output's temp file {}", target.display(), shared.temp.display()))?);
        Ok(shared)
    }

    /// The device at `real`, opened for writing in place.
    fn in_place(target: &Path, real: PathBuf) -> Result<SharedFile> {
        let file = OpenOptions::new().write(true).open(&real).with_context(|| format!("{}: cannot open", target.display()))?;
        let direct = open_direct(&real);
        Ok(SharedFile {
            target: target.to_owned(),
            temp: real.clone(),
            real,
            file: Some(file),
            direct,
            placement: Placement::InPlace,
            mode: 0,
            committed: false,
        })
    }

    /// Rank 0, after every rank has written and synced its range: puts the file in place.
    pub fn commit(&mut self, sync: bool) -> Result<()> {
        if self.placement == Placement::Rename {
            // Its final mode, only now that every rank has written it (see `create`).
            let f = self.file.as_ref().context("the output is closed")?;
            f.set_permissions(std::fs::Permissions::from_mode(self.mode))
                .with_context(|| format!("{}: cannot set the mode of the output", self.target.display()))?;
        }
        self.file.take();
        self.direct.take();
        match self.placement {
            Placement::InPlace => {}
            Placement::Rename => std::fs::rename(&self.temp, &self.real)
                .with_context(|| format!("{}: cannot rename the output into place", self.target.display()))?,
            Placement::Rewrite => self.rewrite(sync)?,
        }
        self.committed = true;
        xsort_io::signals::unregister(&self.temp);
        if sync && self.placement == Placement::Rename {
            let dir = self.real.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
            File::open(dir).and_then(|d| d.sync_all()).with_context(|| format!("{}: cannot fsync the directory", dir.display()))?;
        }
        Ok(())
    }

    /// Replaces the target's contents with the temp file's, as `xsort` does (all of its names
    /// see them; its blocks reserved first, so a full disk leaves the old contents), then removes
    /// the temp file.
    fn rewrite(&self, sync: bool) -> Result<()> {
        let from = File::open(&self.temp).with_context(|| format!("{}: cannot read the output's temp file", self.target.display()))?;
        let to = self.open_real()?;
        xsort_io::output::copy_into(&xsort_io::DirectFile::from_file(from, self.temp.clone()), &to, &self.target, sync)?;
        std::fs::remove_file(&self.temp).with_context(|| format!("{}: cannot remove", self.temp.display()))
    }

    /// The target itself, opened for writing (to be rewritten).
    fn open_real(&self) -> Result<File> {
        OpenOptions::new().write(true).open(&self.real).with_context(|| format!("{}: cannot open", self.target.display()))
    }

    /// The other ranks, once rank 0 has committed: the name is no longer theirs to remove.
    pub fn forget(&mut self) {
        self.file.take();
        self.direct.take();
        self.committed = true;
        xsort_io::signals::unregister(&self.temp);
    }
}

impl Drop for SharedFile {
    fn drop(&mut self) {
        if !self.committed && self.placement == Placement::Rewrite {
            // The blocks this rank reserved in the target for its range are given back.
            if let Ok(f) = self.open_real() {
                xsort_io::output::release_reserved(&f);
            }
        }
        if !self.committed && self.placement != Placement::InPlace {
            let _ = std::fs::remove_file(&self.temp);
            xsort_io::signals::unregister(&self.temp);
        }
    }
}

impl Target {
    /// Writes `data` at `offset` of this rank's output.
    pub fn write_at(&self, data: &[u8], offset: u64) -> Result<()> {
        match self {
            Target::Shared(s) => {
                let f = s.file.as_ref().context("the output is closed")?;
                f.write_all_at(data, offset).with_context(|| format!("{}: write error", s.target.display()))
            }
            Target::Part(p) => Ok(p.file().write_all_at(data, offset)?),
            Target::Compressed(c) => c.write(data, offset),
        }
    }

    /// Whether the output is a stream, whose writes must come in order (a compressed range).
    pub fn is_stream(&self) -> bool {
        matches!(self, Target::Compressed(_))
    }

    /// Ends a compressed range's stream; nothing to do for a plain output.
    pub fn finish(&self) -> Result<()> {
        match self {
            Target::Compressed(c) => c.finish(),
            _ => Ok(()),
        }
    }

    /// Writes whole pages: `data`'s address, length and `offset` are multiples of [`IO_ALIGN`].
    /// They go with direct I/O where the file has it (a refusal falls back to the page cache).
    pub fn write_pages_at(&self, data: &[u8], offset: u64) -> Result<()> {
        match self {
            Target::Shared(s) => match &s.direct {
                Some(d) => match d.write_all_at(data, offset) {
                    Err(e) if e.raw_os_error() == Some(libc::EINVAL) => self.write_at(data, offset),
                    r => r.with_context(|| format!("{}: write error", s.target.display())),
                },
                None => self.write_at(data, offset),
            },
            Target::Part(p) => Ok(p.file().write_all_at(data, offset)?),
            Target::Compressed(c) => c.write(data, offset),
        }
    }

    /// Reserves the disk blocks of this rank's range, `len` bytes at `offset`, before it is
    /// written, as `xsort` reserves its output's: a full disk is found before the rounds, not in
    /// the middle of them, and the direct writes then fill blocks already allocated instead of
    /// allocating as they go (on ext4 such writes into one file hold its lock in turn, and a rank
    /// whose writes waited for the other's made both wait in the exchange). Filesystems without
    /// `fallocate` are left alone.
    pub fn reserve(&self, offset: u64, len: u64) -> Result<()> {
        match self {
            // A device has its blocks already.
            Target::Shared(s) if s.placement == Placement::InPlace => Ok(()),
            Target::Shared(s) => {
                if s.placement == Placement::Rewrite {
                    // The output will be copied into the target too: its blocks are reserved as
                    // well (its size and contents unchanged), so a full disk is found now, not in
                    // the commit.
                    xsort_io::output::reserve_keeping_size(&s.open_real()?, offset, len, &s.target)?;
                }
                let file = s.file.as_ref().context("the output is closed")?;
                Ok(xsort_io::file::reserve_blocks(file, offset, len, false, &s.target)?)
            }
            // A part is the rank's range alone, from its start.
            Target::Part(p) => Ok(p.reserve(offset + len)?),
            // Its compressed size is known only once written.
            Target::Compressed(_) => Ok(()),
        }
    }

    /// Makes what this rank wrote durable (before the ranks agree to commit).
    pub fn sync(&self) -> Result<()> {
        match self {
            Target::Shared(s) => match &s.file {
                Some(f) => f.sync_all().with_context(|| format!("{}: fsync failed", s.target.display())),
                None => Ok(()),
            },
            Target::Part(p) => Ok(p.file().sync()?),
            Target::Compressed(c) => match &c.dest {
                Dest::Part(p) => Ok(p.file().sync()?),
                // Copied into the shared output, which is synced.
                Dest::Staged(_) => Ok(()),
            },
        }
    }
}

/// Writes a rank's range from its offset on, as the sort gives it. The pages wholly inside the
/// range go with direct I/O from a page-aligned buffer; the partial pages at its two ends, which
/// the neighbouring ranks share, go through the page cache. Buffered writes of two ranks into one
/// file ran at about 120 MB/s a rank here (fresh page-cache pages, and the file's lock taken by
/// both), a fifth of what the single-node xsort writes with direct I/O.
///
/// The whole pages go from threads of their own, a few buffers at a time (see [`WritePlan`])
/// while another fills: a direct write waits for the disk, and the sort's output can be pulled
/// meanwhile.
///
/// `buf[i]` stands for the file's byte `base + i`, `base` a page boundary, so the buffer's pages
/// are the file's; `buf[start..fill]` is what is not yet written.
pub struct RangeWriter<'a> {
    target: &'a Target,
    buf: AlignedBuf,
    base: u64,
    start: usize,
    fill: usize,
    /// Flush when less room than this is left (and never pull into less).
    room: usize,
    /// The page writers' queue and the buffers they give back; at most `writes` are in flight.
    pages: mpsc::SyncSender<PageJob>,
    returned: mpsc::Receiver<Result<AlignedBuf>>,
    in_flight: usize,
    writes: usize,
    spare: Option<AlignedBuf>,
}

/// A page write handed to the page writers: a buffer, its range to write, the file offset of its
/// byte 0.
type PageJob = (AlignedBuf, usize, usize, u64);

/// Direct writes a rank keeps in flight at most, as many as `xsort`'s write-behind. On the
/// development VM the disk wrote 1 GB in 8 MiB blocks in 1.05 s from one writer and 0.89-0.93 s
/// from two or four (`dd oflag=direct`); 10^7 records with `-np 2`, alternating builds, medians:
/// one write in flight a rank 1.36 s, two 1.27-1.31 s, four 1.24-1.26 s.
const MAX_WRITES_IN_FLIGHT: usize = 4;

/// The largest direct write, and the smallest (the block of a tiny `-S`).
const MAX_BLOCK: usize = 8 << 20;
const MIN_BLOCK: usize = 64 << 10;

/// How a rank's range writer buffers its output, chosen from the rank's memory so that its
/// buffers stay a small part of `-S`: blocks (direct writes) of a 64th of the memory, 64 KiB to
/// 8 MiB, and up to [`MAX_WRITES_IN_FLIGHT`] of them in flight while their buffers take at most a
/// 32nd of the memory, at least one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WritePlan {
    /// Bytes of a direct write.
    pub block: usize,
    /// Direct writes kept in flight.
    pub writes: usize,
}

impl WritePlan {
    /// The plan for a rank with `memory` bytes (its `-S`).
    pub fn for_memory(memory: u64) -> WritePlan {
        let block = (memory / 64).clamp(MIN_BLOCK as u64, MAX_BLOCK as u64) as usize / IO_ALIGN * IO_ALIGN;
        let buffer = Self::buffer_len(block, 0) as u64;
        WritePlan { block, writes: (memory / 32 / buffer).clamp(1, MAX_WRITES_IN_FLIGHT as u64) as usize }
    }

    /// Bytes its buffers take at most (the one filling and those in flight), for items (records)
    /// of `item` bytes.
    pub fn bytes(&self, item: usize) -> u64 {
        (self.writes as u64 + 1) * Self::buffer_len(self.block, item) as u64
    }

    /// Room kept free at a buffer's end to pull into: an eighth of a block, at least two items.
    fn room(block: usize, item: usize) -> usize {
        (block / 8).max(2 * item)
    }

    fn buffer_len(block: usize, item: usize) -> usize {
        block + Self::room(block, item) + IO_ALIGN
    }
}

impl<'a> RangeWriter<'a> {
    /// Writes the range from `offset` with what `body` puts in (through [`RangeWriter::space`] and
    /// [`RangeWriter::filled`]), buffering and writing as `plan` says; `item` is the largest item
    /// the sort gives whole (a record), 0 for lines.
    pub fn run(
        target: &Target,
        offset: u64,
        plan: WritePlan,
        item: usize,
        body: impl FnOnce(&mut RangeWriter) -> Result<()>,
    ) -> Result<()> {
        // A stream takes its writes in order: one page writer, which takes them in turn.
        let writes = if target.is_stream() { 1 } else { plan.writes.max(1) };
        let room = WritePlan::room(plan.block, item);
        let buf = AlignedBuf::new(WritePlan::buffer_len(plan.block, item))?;
        let start = (offset % IO_ALIGN as u64) as usize;
        std::thread::scope(|scope| {
            let (pages, jobs) = mpsc::sync_channel::<PageJob>(writes);
            let jobs = std::sync::Arc::new(std::sync::Mutex::new(jobs));
            let (back, returned) = mpsc::channel();
            for _ in 0..writes {
                let (jobs, back) = (jobs.clone(), back.clone());
                std::thread::Builder::new()
                    .name("xsort-mpi-write".into())
                    .spawn_scoped(scope, move || loop {
                        // The lock is held only to take a job: the writes themselves overlap.
                        let job = jobs.lock().map_err(|_| ()).and_then(|j| j.recv().map_err(|_| ()));
                        let Ok((buf, from, to, base)) = job else { break };
                        let written = target.write_pages_at(&buf.as_slice()[from..to], base + from as u64).map(|_| buf);
                        if back.send(written).is_err() {
                            break;
                        }
                    })
                    .context("cannot start the output's page writer threads")?;
            }
            drop(back);
            let mut w = RangeWriter {
                target,
                buf,
                base: offset - start as u64,
                start,
                fill: start,
                room,
                pages,
                returned,
                in_flight: 0,
                writes,
                spare: None,
            };
            body(&mut w)?;
            w.flush(true)
            // Dropping `w` closes the queue; the page writers end and the scope joins them.
        })
    }

    /// A buffer to fill next: the spare, one already written, a new one while fewer than `writes`
    /// are in flight, or else the first in flight once written.
    fn take_buffer(&mut self) -> Result<AlignedBuf> {
        if let Some(b) = self.spare.take() {
            return Ok(b);
        }
        if let Ok(written) = self.returned.try_recv() {
            self.in_flight -= 1;
            return written;
        }
        if self.in_flight < self.writes {
            return Ok(AlignedBuf::new(self.buf.capacity())?);
        }
        self.wait_written()
    }

    /// Waits for a page write in flight; its buffer.
    fn wait_written(&mut self) -> Result<AlignedBuf> {
        self.in_flight -= 1;
        self.returned.recv().map_err(|_| anyhow::anyhow!("the output's page writers stopped"))?
    }

    /// Waits for the page writes in flight.
    fn drain(&mut self) -> Result<()> {
        while self.in_flight > 0 {
            let b = self.wait_written()?;
            self.spare = Some(b);
        }
        Ok(())
    }

    /// The free part of the buffer, to pull into; then [`RangeWriter::filled`].
    pub fn space(&mut self) -> &mut [u8] {
        let fill = self.fill;
        &mut self.buf.as_mut_slice()[fill..]
    }

    /// Takes `k` bytes put at the start of [`RangeWriter::space`].
    pub fn filled(&mut self, k: usize) -> Result<()> {
        self.fill += k;
        if self.buf.capacity() - self.fill < self.room {
            self.flush(false)?;
        }
        Ok(())
    }

    /// Writes what is held: whole pages, and with `last` the partial ones too.
    pub fn flush(&mut self, last: bool) -> Result<()> {
        let a = IO_ALIGN;
        let data = self.buf.as_slice();
        // The range's first, partial page, once it is complete (or the range ends in it).
        let first_boundary = align_up(self.start);
        if !self.start.is_multiple_of(a) && (self.fill >= first_boundary || last) {
            let end = first_boundary.min(self.fill);
            self.target.write_at(&data[self.start..end], self.base + self.start as u64)?;
            self.start = end;
        }
        let pages_end = self.fill / a * a;
        if self.start.is_multiple_of(a) && pages_end > self.start {
            if last {
                self.drain()?;
                self.target.write_pages_at(&self.buf.as_slice()[self.start..pages_end], self.base + self.start as u64)?;
                self.start = pages_end;
            } else {
                // The pages go to the page writers; what follows them moves to the next buffer.
                let mut next = self.take_buffer()?;
                let rest = self.fill - pages_end;
                next.as_mut_slice()[..rest].copy_from_slice(&self.buf.as_slice()[pages_end..self.fill]);
                let full = std::mem::replace(&mut self.buf, next);
                self.pages
                    .send((full, self.start, pages_end, self.base))
                    .map_err(|_| anyhow::anyhow!("the output's page writers stopped"))?;
                self.in_flight += 1;
                self.base += pages_end as u64;
                self.start = 0;
                self.fill = rest;
                return Ok(());
            }
        }
        if last {
            self.drain()?;
            let data = self.buf.as_slice();
            if self.fill > self.start {
                self.target.write_at(&data[self.start..self.fill], self.base + self.start as u64)?;
            }
            self.start = self.fill;
            return Ok(());
        }
        // Keep what is left at the same place in its page, at the buffer's front.
        let keep_from = self.start / a * a;
        if keep_from > 0 {
            self.buf.as_mut_slice().copy_within(keep_from..self.fill, 0);
            self.base += keep_from as u64;
            self.start -= keep_from;
            self.fill -= keep_from;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_follow_the_memory() {
        let plan = |memory: u64| WritePlan::for_memory(memory);
        // A tiny budget still writes, from buffers within a 13th of it.
        assert_eq!(plan(2 << 20), WritePlan { block: MIN_BLOCK, writes: 1 });
        assert!(plan(2 << 20).bytes(100) <= (2 << 20) / 13);
        assert_eq!(plan(64 << 20), WritePlan { block: 1 << 20, writes: 1 });
        assert_eq!(plan(1 << 30), WritePlan { block: MAX_BLOCK, writes: 3 });
        assert_eq!(plan(6 << 30), WritePlan { block: MAX_BLOCK, writes: MAX_WRITES_IN_FLIGHT });
        // Blocks are whole pages, and the buffers stay within a 13th of the memory from 2 MiB on.
        for memory in [(2u64 << 20) + 12_345, 100 << 20, (3 << 30) + 7] {
            let p = plan(memory);
            assert_eq!(p.block % IO_ALIGN, 0);
            assert!(p.bytes(100) <= memory / 13, "{memory}: {p:?}");
        }
        // Records larger than the room get room for two.
        assert!(plan(2 << 20).bytes(1 << 20) >= 2 * (2 << 20));
    }

    /// The temp file is its owner's alone while the ranks write it; the committed output has the
    /// mode xsort gives it (a new file: 0666 less the umask; a replaced one: its own).
    #[test]
    fn the_temp_file_is_private_until_the_commit() {
        let dir = tempfile::tempdir_in(std::env::temp_dir()).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().mode() & 0o7777;
        let (new, old) = (dir.path().join("new"), dir.path().join("old"));
        std::fs::write(&old, b"old").unwrap();
        std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o640)).unwrap();
        for (target, nonce, want) in [(&new, 1, xsort_io::output::new_file_mode()), (&old, 2, 0o640)] {
            let mut f = SharedFile::create(target, nonce).unwrap();
            assert_eq!(mode(&temp_name(target, nonce)), PRIVATE_MODE, "{}", target.display());
            f.commit(false).unwrap();
            assert_eq!(mode(target), want, "{}", target.display());
        }
    }

    /// Ranges at offsets on and off page boundaries, written by writers of tiny blocks (many
    /// flushes, partial pages at both ends shared with the neighbours), give back the bytes.
    #[test]
    fn ranges_written_in_pages_and_partial_pages_make_the_whole() {
        let dir = tempfile::tempdir_in(std::env::temp_dir()).unwrap();
        let target = dir.path().join("out");
        let whole: Vec<u8> = (0..300_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
        for cuts in [&[0usize, 4096, 150_000, 300_000][..], &[0, 1, 4095, 4097, 123_457, 299_999, 300_000], &[0, 300_000]] {
            let shared = Target::Shared(SharedFile::create(&target, 7).unwrap());
            for w in cuts.windows(2) {
                RangeWriter::run(&shared, w[0] as u64, WritePlan { block: 4096, writes: 3 }, 100, |out| {
                    let mut at = w[0];
                    // Pulls of uneven sizes, as a sort gives them.
                    for k in [1usize, 99, 4096, 5000, 777].iter().cycle() {
                        let k = (*k).min(w[1] - at).min(out.space().len());
                        if k == 0 {
                            return Ok(());
                        }
                        out.space()[..k].copy_from_slice(&whole[at..at + k]);
                        out.filled(k)?;
                        at += k;
                    }
                    Ok(())
                })
                .unwrap();
            }
            let Target::Shared(mut f) = shared else { unreachable!() };
            f.commit(false).unwrap();
            assert!(std::fs::read(&target).unwrap() == whole, "cuts {cuts:?}");
        }
    }
}
