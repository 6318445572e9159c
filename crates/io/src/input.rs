//! Inputs, each opened once.
//!
//! Every input is opened when the sort starts, and what is learnt of it comes from that open
//! descriptor (fstat, fstatfs), never from the path again. A FIFO, a character device or standard
//! input can be read only once, as a stream: a second open of a FIFO finds the data gone to the
//! first (or waits for a writer that has left), so the first descriptor is kept and read to the
//! end. So is a regular file of a pseudo filesystem (procfs, sysfs and their kin), whose reported
//! size is not its content (`/proc/cpuinfo` says 0 bytes, sysfs files 4096) and which cannot be
//! mapped or read with O_DIRECT. A regular file of a real filesystem is seekable and its size is
//! true: it may be closed after the check, so that any number of inputs works under a low
//! descriptor limit, and is opened again when its turn comes, with its identity (device and inode)
//! checked, so that a file replaced in between is an error rather than another file's data.

use crate::codec::{self, Codec};
use crate::error::{IoError, Result};
use crate::file::DirectFile;
use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::os::unix::io::{AsRawFd, FromRawFd};
use std::path::{Path, PathBuf};

/// An input as it was opened.
pub enum OpenedInput {
    /// A regular file: seekable, of a known size.
    Regular(RegularInput),
    /// Anything read in order to its end: standard input, a FIFO, a device.
    Stream(StreamInput),
}

/// A regular input file.
#[derive(Debug)]
pub struct RegularInput {
    path: PathBuf,
    len: u64,
    dev: u64,
    ino: u64,
    /// The descriptor of the first open, until [`RegularInput::release`].
    file: Option<File>,
}

/// A stream an input is read from: a descriptor, or a reader the caller supplies.
pub type StreamReader = Box<dyn std::io::Read + Send>;

/// An input read in order, through the descriptor it was opened with (or a caller's reader).
pub struct StreamInput {
    /// The open descriptor or reader.
    pub file: StreamReader,
    /// The name in messages (`-` for standard input).
    pub name: PathBuf,
}

impl std::fmt::Debug for StreamInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamInput").field("name", &self.name).finish_non_exhaustive()
    }
}

impl std::fmt::Debug for OpenedInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OpenedInput::Regular(r) => f.debug_tuple("Regular").field(r).finish(),
            OpenedInput::Stream(s) => f.debug_tuple("Stream").field(s).finish(),
        }
    }
}

impl OpenedInput {
    /// Opens `path` for reading. A directory is an [`IoError::Open`] with `EISDIR`.
    pub fn open(path: &Path) -> Result<Self> {
        let open_err = |cause| IoError::Open { path: path.to_owned(), cause };
        let file = File::open(path).map_err(open_err)?;
        let md = file.metadata().map_err(open_err)?;
        if md.is_dir() {
            return Err(open_err(std::io::Error::from_raw_os_error(libc::EISDIR)));
        }
        if !md.is_file() || size_is_unreliable(&file, md.len()) {
            return Ok(OpenedInput::Stream(StreamInput { file: Box::new(file), name: path.to_owned() }));
        }
        Ok(OpenedInput::Regular(RegularInput { path: path.to_owned(), len: md.len(), dev: md.dev(), ino: md.ino(), file: Some(file) }))
    }

    /// Standard input, on a descriptor of its own (a duplicate of 0), named `-`; an error when it
    /// was closed when the process started.
    pub fn stdin() -> Result<Self> {
        crate::stdio::stdin_input()?;
        let name = PathBuf::from("-");
        // SAFETY: dup returns a new descriptor we own (or -1, checked); File takes ownership of it.
        let fd = unsafe { libc::dup(0) };
        if fd < 0 {
            return Err(IoError::Open { path: name, cause: std::io::Error::last_os_error() });
        }
        // SAFETY: fd is a valid descriptor owned by nobody else.
        Ok(OpenedInput::Stream(StreamInput { file: Box::new(unsafe { File::from_raw_fd(fd) }), name }))
    }

    /// A caller's reader, read in order to its end, named `name` in messages.
    pub fn reader(file: StreamReader, name: PathBuf) -> Self {
        OpenedInput::Stream(StreamInput { file, name })
    }

    /// The name in messages.
    pub fn name(&self) -> &Path {
        match self {
            OpenedInput::Regular(r) => &r.path,
            OpenedInput::Stream(s) => &s.name,
        }
    }

    /// This input, decompressed when its first bytes are those of a compressed format (see
    /// [`crate::codec`]). A compressed regular file becomes a stream of its decompressed bytes,
    /// which gives its descriptor back and opens the file again on its first read, like any
    /// regular input not yet reached; a stream is looked at on its first read.
    pub fn decompressed(self) -> Result<Self> {
        match self {
            OpenedInput::Stream(s) => Ok(OpenedInput::Stream(StreamInput { file: codec::sniffed(s.file), name: s.name })),
            OpenedInput::Regular(mut input) => {
                let Some(codec) = Codec::of_file(input.file()?).map_err(|e| IoError::read(&input.path, e))? else {
                    return Ok(OpenedInput::Regular(input));
                };
                input.release();
                let name = input.path.clone();
                Ok(OpenedInput::Stream(StreamInput { file: Box::new(Deferred { input, codec: Some(codec), reader: None }), name }))
            }
        }
    }

    /// This input as a stream, read in order: a regular file gives its descriptor back and opens
    /// the file again on its first read, like any regular input not yet reached.
    pub fn into_stream(self) -> StreamInput {
        match self {
            OpenedInput::Stream(s) => s,
            OpenedInput::Regular(mut input) => {
                input.release();
                let name = input.path.clone();
                StreamInput { file: Box::new(Deferred { input, codec: None, reader: None }), name }
            }
        }
    }
}

/// A regular file read as a stream, opened again (checked to be the same file) on its first read,
/// and decompressed then when it is compressed.
struct Deferred {
    input: RegularInput,
    codec: Option<Codec>,
    reader: Option<StreamReader>,
}

impl std::io::Read for Deferred {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let reader = match &mut self.reader {
            Some(reader) => reader,
            None => {
                let file = self.input.take_file().map_err(std::io::Error::other)?;
                self.reader.insert(match self.codec {
                    Some(c) => codec::decompress(c, Box::new(file))?,
                    None => Box::new(file),
                })
            }
        };
        reader.read(buf)
    }
}

/// Filesystems whose regular files are generated when read: their size says nothing of their
/// content, and mapping or direct reads are refused. (proc, sysfs, debugfs, tracefs, securityfs,
/// configfs, cgroup, cgroup2, bpf, pstore, efivarfs, selinuxfs, smackfs, binfmt_misc.)
const PSEUDO_FILESYSTEMS: [u32; 14] = [
    0x9fa0,
    0x6265_6572,
    0x6462_6720,
    0x7472_6163,
    0x7363_6673,
    0x6265_6570,
    0x0027_e0eb,
    0x6367_7270,
    0xcafe_4a11,
    0x6165_676c,
    0xde5e_81e4,
    0xf97c_ff8c,
    0x4341_5d53,
    0x4249_4e4d,
];
/// FUSE: its files are usually true to their size, but some (lxcfs's `/proc` files in containers)
/// say 0 bytes while holding text.
const FUSE: u32 = 0x6573_5546;

/// Whether a regular file's size cannot be trusted, from the filesystem it lives on.
fn size_is_unreliable(file: &File, len: u64) -> bool {
    // SAFETY: statfs is plain data, filled by fstatfs on a descriptor we own; the result is checked.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::fstatfs(file.as_raw_fd(), &mut st) } != 0 {
        return false;
    }
    // f_type is a word of either sign by platform; the magic numbers are 32-bit.
    let magic = st.f_type as u32;
    PSEUDO_FILESYSTEMS.contains(&magic) || (magic == FUSE && len == 0)
}

impl RegularInput {
    /// The path it was opened by.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Its size when opened.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether it was empty when opened.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Closes the descriptor until the file's turn ([`RegularInput::file`] opens it again).
    pub fn release(&mut self) {
        self.file = None;
    }

    /// The open file: the first descriptor while it is held, otherwise the same file opened again.
    pub fn file(&mut self) -> Result<&File> {
        if self.file.is_none() {
            let file = File::open(&self.path).map_err(|cause| IoError::Open { path: self.path.clone(), cause })?;
            self.check_same(&file)?;
            self.file = Some(file);
        }
        self.file.as_ref().ok_or_else(|| IoError::Internal("input not open".into()))
    }

    /// The open file as a [`DirectFile`] for positional reads, direct when asked and allowed; the
    /// descriptor moves into it.
    pub fn take_direct(&mut self, want_direct: bool) -> Result<DirectFile> {
        self.file()?;
        let file = self.file.take().ok_or_else(|| IoError::Internal("input not open".into()))?;
        Ok(DirectFile::from_read_file(file, self.path.clone(), want_direct))
    }

    /// The open file as a plain [`File`] (read in order from its start); the descriptor moves into it.
    pub fn take_file(&mut self) -> Result<File> {
        self.file()?;
        self.file.take().ok_or_else(|| IoError::Internal("input not open".into()))
    }

    fn check_same(&self, file: &File) -> Result<()> {
        let md = file.metadata().map_err(|e| IoError::meta(&self.path, "stat", e))?;
        if (md.dev(), md.ino()) != (self.dev, self.ino) {
            let cause = std::io::Error::other("the file was replaced while the sort ran");
            return Err(IoError::Open { path: self.path.clone(), cause });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regular_files_are_reopened_only_if_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, b"abc").unwrap();
        let OpenedInput::Regular(mut r) = OpenedInput::open(&p).unwrap() else { panic!("not regular") };
        assert_eq!(r.len(), 3);
        r.release();
        assert_eq!(std::io::read_to_string(r.take_file().unwrap()).unwrap(), "abc");
        r.release();
        // Another file takes the name (made while the first still exists, so its inode differs).
        std::fs::write(dir.path().join("g"), b"other").unwrap();
        std::fs::rename(dir.path().join("g"), &p).unwrap();
        let e = r.file().unwrap_err().to_string();
        assert!(e.contains("replaced"), "{e}");
    }

    #[test]
    fn directories_and_missing_files_are_open_errors() {
        let dir = tempfile::tempdir().unwrap();
        let e = OpenedInput::open(dir.path()).unwrap_err();
        assert!(matches!(&e, IoError::Open { cause, .. } if cause.raw_os_error() == Some(libc::EISDIR)), "{e}");
        assert!(matches!(OpenedInput::open(&dir.path().join("none")), Err(IoError::Open { .. })));
    }

    #[test]
    fn pseudo_files_are_streams() {
        // /proc/version says 0 bytes; a sysfs file says 4096.
        for p in ["/proc/version", "/sys/devices/system/cpu/possible"] {
            let opened = OpenedInput::open(Path::new(p)).unwrap();
            assert!(matches!(opened, OpenedInput::Stream(_)), "{p}: {opened:?}");
        }
    }

    #[test]
    fn a_fifo_is_a_stream() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("p");
        let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: mkfifo with a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let writer = {
            let p = p.clone();
            std::thread::spawn(move || std::fs::write(p, b"data"))
        };
        let OpenedInput::Stream(s) = OpenedInput::open(&p).unwrap() else { panic!("not a stream") };
        assert_eq!(std::io::read_to_string(s.file).unwrap(), "data");
        writer.join().unwrap().unwrap();
    }
}
