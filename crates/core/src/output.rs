//! The sort's destination (a file replaced atomically, or standard output), and the writing of a
//! one-pass sort's output while later parts of it are still being sorted.

use crate::config::{Format, Handoff, IoSettings, Output, SortConfig};
use crate::error::{Result, SortError};
use crate::text::TextMode;
use std::fs::File;
use std::os::unix::io::FromRawFd;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use xsort_io::{AtomicOutput, BlockWriter, BufferPool, Compression, Encoder, IoCounters, Sink, WriterConfig};

/// An opened destination, and the sort's pool of write buffers, which its writer takes from.
pub struct Destination {
    target: Target,
    /// Further output files (a file target only), each with its own sync: copies of the output,
    /// made and put in place on commit.
    copies: Vec<(AtomicOutput, bool)>,
    buffers: Arc<BufferPool>,
    /// The output's compression, and the threads that compress it.
    compression: Option<(Compression, usize)>,
}

enum Target {
    /// A file written beside its target and renamed over it on commit. For a merge of presorted
    /// inputs (`-m`), whose merges hold a descriptor for each input, an unnamed new file (the usual
    /// case) is checked when the destination opens but made only when it is first needed (its
    /// writer, or the commit of an empty output), as GNU sort opens its output only for the last
    /// merge: the merges before it may then use every descriptor the limit allows.
    File { path: PathBuf, direct: bool, append: bool, spare_dir: Option<PathBuf>, opened: Mutex<Option<AtomicOutput>> },
    /// Standard output.
    Stdout,
    /// A caller's writer, handed to the output's writer when it starts.
    Writer(Handoff<Box<dyn std::io::Write + Send>>),
}

impl Destination {
    /// Opens the destination now, so that an unwritable target fails before any work is done.
    /// `temp_dirs`: where the output waits when the target's directory allows no new file (see
    /// [`AtomicOutput::create`]). A compressed output is compressed on `threads` threads.
    pub fn open(cfg: &SortConfig, buffers: Arc<BufferPool>, threads: usize) -> Result<Self> {
        let path = match &cfg.output {
            Output::Path(p) => Some(p.as_path()),
            _ => None,
        };
        let compression = cfg.output_compression.of(path);
        let mut copies = Vec::with_capacity(cfg.output_copies.len());
        let target = match &cfg.output {
            Output::Stdout => {
                xsort_io::stdio::stdout_output()?;
                Target::Stdout
            }
            Output::Path(p) => {
                // A compressor writes its blocks in order, of any length: no direct transfers.
                let direct = cfg.output_io.direct && compression.is_none();
                let spare_dir = cfg.temp_dirs.first().cloned();
                let append = cfg.output_append;
                if !cfg.output_copies.is_empty() {
                    check_several_outputs(cfg, p, compression)?;
                }
                let output = create(p, direct, append, spare_dir.as_deref())?;
                for copy in &cfg.output_copies {
                    copies.push((create(&copy.path, false, copy.append, spare_dir.as_deref())?, copy.sync));
                }
                let merges_inputs = matches!(&cfg.format, Format::Lines(l) if l.mode == TextMode::Merge);
                let opened = Mutex::new((!(merges_inputs && output.can_recreate())).then_some(output));
                Target::File { path: p.clone(), direct, append, spare_dir, opened }
            }
            Output::Writer(w) => Target::Writer(w.clone()),
        };
        Ok(Destination { target, copies, buffers, compression: compression.map(|c| (c, threads.max(1))) })
    }

    /// Bytes of memory the output's compressor holds (0 when it is not compressed).
    pub fn codec_memory(&self) -> u64 {
        self.compression.map_or(0, |(_, threads)| Encoder::memory(threads))
    }

    /// A write-behind pipeline into the destination; `total` (when known) is preallocated.
    pub fn writer(
        &self,
        block: usize,
        buffers: usize,
        io: IoSettings,
        total: Option<u64>,
        preallocate: bool,
        counters: Arc<IoCounters>,
    ) -> Result<BlockWriter> {
        let sink = match &self.target {
            Target::File { .. } => {
                let mut opened = self.file_output()?;
                let o = opened.as_mut().expect("file_output makes it");
                if self.compression.is_some() || !o.is_regular() {
                    // A compressed output is a stream of compressed blocks, into whatever the target
                    // is; devices and FIFOs take plain sequential writes: no positions, padding or
                    // truncation.
                    Sink::Stream { out: Box::new(o.file().try_clone_file()?), name: o.target().to_owned() }
                } else {
                    if let (true, Some(n)) = (preallocate, total) {
                        o.reserve(n)?;
                    }
                    Sink::File(o.file().clone())
                }
            }
            Target::Stdout => {
                // SAFETY: dup returns a new descriptor (checked) that File then owns and closes.
                let fd = unsafe { libc::dup(1) };
                if fd < 0 {
                    return Err(SortError::Io(xsort_io::IoError::write("-".as_ref(), std::io::Error::last_os_error())));
                }
                // SAFETY: fd is a fresh descriptor owned by nobody else.
                let out = Box::new(unsafe { File::from_raw_fd(fd) });
                Sink::Stream { out, name: "-".into() }
            }
            Target::Writer(w) => {
                let out = w.take().ok_or_else(|| SortError::Internal("the output writer was already taken".into()))?;
                Sink::Stream { out, name: w.name().to_owned() }
            }
        };
        let sink = match (sink, self.compression) {
            (Sink::Stream { out, name }, Some((compression, threads))) => {
                let out = Encoder::new(out, compression, threads)
                    .map_err(|e| SortError::Resource(format!("cannot start the output's compressor: {}", xsort_io::os_text(&e))))?;
                Sink::Compressed { out, name }
            }
            (sink, _) => sink,
        };
        let cfg = WriterConfig { threads: io.count.clamp(1, buffers), ..WriterConfig::new(block, buffers) };
        Ok(BlockWriter::pooled(sink, cfg, self.buffers.clone(), counters)?)
    }

    /// Puts a complete output in place (synced first when asked), then its copies. Each copy is
    /// made, and each target to be appended to checked, before any target changes (a full disk,
    /// or an appended file that changed, fails the sort with every target as it was); a signal
    /// that comes while they are put in place takes effect once they all are.
    pub fn commit(self, sync: bool) -> Result<()> {
        if let Target::File { .. } = self.target {
            let output = self.file_output()?.take().expect("file_output makes it");
            for (copy, _) in &self.copies {
                copy.fill_from(&output)?;
            }
            let copies = self.copies;
            xsort_io::signals::uninterrupted(|| -> xsort_io::Result<()> {
                for out in std::iter::once(&output).chain(copies.iter().map(|(c, _)| c)) {
                    out.check_unchanged()?;
                }
                output.commit(sync)?;
                for (copy, copy_sync) in copies {
                    copy.commit(sync || copy_sync)?;
                }
                Ok(())
            })?;
        }
        Ok(())
    }

    /// The file output, made now if it was not yet (see [`Target::File`]).
    fn file_output(&self) -> Result<std::sync::MutexGuard<'_, Option<AtomicOutput>>> {
        let Target::File { path, direct, append, spare_dir, opened } = &self.target else {
            return Err(SortError::Internal("the output is not a file".into()));
        };
        let mut opened = opened.lock().map_err(|_| SortError::Internal("the output's lock is poisoned".into()))?;
        if opened.is_none() {
            *opened = Some(create(path, *direct, *append, spare_dir.as_deref())?);
        }
        Ok(opened)
    }
}

/// Refuses, before any of them is opened, output files that are one file under two names (a
/// path given twice, a link, `./out` beside `out`), outputs that are not regular files (a device
/// or a FIFO, whose opening may wait for a reader) and copies compressed otherwise than the first
/// output (`compression`): several output files are copies of the first, made from it once the
/// sort is complete.
fn check_several_outputs(cfg: &SortConfig, first: &std::path::Path, compression: Option<Compression>) -> Result<()> {
    let mut seen: Vec<(FileIdentity, &std::path::Path)> = Vec::new();
    for path in std::iter::once(first).chain(cfg.output_copies.iter().map(|c| c.path.as_path())) {
        if cfg.output_compression.of(Some(path)) != compression {
            return Err(SortError::BadOption(format!(
                "the output files '{}' and '{}' would be compressed differently: further output files are copies of the first",
                first.display(),
                path.display()
            )));
        }
        let identity = match std::fs::metadata(path) {
            Ok(md) if !md.is_file() => {
                return Err(SortError::BadOption(format!(
                    "'{}' is not a regular file: with several output files, each is a regular file (the copies are made from the first)",
                    path.display()
                )));
            }
            Ok(md) => FileIdentity::Existing(std::os::unix::fs::MetadataExt::dev(&md), std::os::unix::fs::MetadataExt::ino(&md)),
            // A file to be made: where its links lead, in its directory's canonical path.
            Err(_) => {
                let real = xsort_io::output::resolve_links(path).unwrap_or_else(|_| path.to_owned());
                let dir = real.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
                let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_owned());
                FileIdentity::New(dir.join(real.file_name().unwrap_or_default()))
            }
        };
        if let Some((_, earlier)) = seen.iter().find(|(id, _)| *id == identity) {
            let how = if *earlier == path { String::new() } else { format!(" (as '{}')", earlier.display()) };
            return Err(SortError::BadOption(format!("'{}' is already an output file{how}", path.display())));
        }
        seen.push((identity, path));
    }
    Ok(())
}

/// One file, however it is named: an existing one's device and inode, or the path a new one will
/// have.
#[derive(PartialEq, Eq)]
enum FileIdentity {
    Existing(u64, u64),
    New(PathBuf),
}

/// The output file for `path`: replacing it, or to be appended to it.
fn create(path: &std::path::Path, direct: bool, append: bool, spare_dir: Option<&std::path::Path>) -> Result<AtomicOutput> {
    Ok(if append { AtomicOutput::create_appending(path, direct, spare_dir)? } else { AtomicOutput::create(path, direct, spare_dir)? })
}

/// Runs `sort` on this thread and `write`s, on a helper thread, each piece of output that it hands
/// to its `emit` argument, as soon as it comes: a sort that fits in memory is otherwise bound by
/// its write, which could only start at the end. Pieces must come in output order. In a sort's own
/// pool (see `crate::pool`), the sort's parallel work runs on the pool with this thread taking
/// part, and the writer hands its parallel gathers to the pool too. After a failed `write`, later
/// pieces are dropped and the error is returned once the sort ends.
pub fn sort_while_writing<P: Send>(sort: impl FnOnce(&mut dyn FnMut(P)), write: impl FnMut(P) -> Result<()> + Send) -> Result<()> {
    let pool = crate::pool::current();
    // Waiting for the writer on the pool's only thread would leave its gathers no thread to run
    // on; nor can this thread wait on another pool's thread: sort, then write.
    let alone = match &pool {
        Some(p) => p.current_num_threads() < 2,
        None => rayon::current_thread_index().is_some(),
    };
    if alone {
        let mut pieces = Vec::new();
        sort(&mut |piece| pieces.push(piece));
        return pieces.into_iter().try_for_each(write);
    }
    let (pieces, sorted) = std::sync::mpsc::channel();
    std::thread::scope(|s| {
        let writer = std::thread::Builder::new()
            .name("xsort-gather".into())
            .spawn_scoped(s, move || {
                let run = move || sorted.into_iter().try_for_each(write);
                match pool {
                    Some(pool) => crate::pool::working_for(pool, run),
                    None => run(),
                }
            })
            .map_err(|e| SortError::Resource(format!("cannot start the output thread: {}", xsort_io::os_text(&e))))?;
        sort(&mut |piece| {
            // A failed send means that writing failed and stopped listening; its error is reported.
            let _ = pieces.send(piece);
        });
        drop(pieces);
        match writer.join() {
            Ok(written) => written,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}
