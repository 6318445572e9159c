//! The `--stats-json` file of `xsort` and `xsort-mpi`: checked and opened before the sort, written
//! after it, with the output's rules.
//!
//! - Checked first, so a path that cannot be written fails before the output is committed, not
//!   after; a statistics path that is also the output (the same name, a link to it, or the same
//!   file) or an input is refused instead of overwriting it.
//! - Another user's symbolic link in a sticky world-writable directory (such as /tmp) is never
//!   followed, and another user's file or FIFO planted there is never written (see
//!   [`crate::output::refuse_planted`]): a root sort must not overwrite a file through a name
//!   another user chose.
//! - Only a regular file is written: a FIFO, a device or a directory is refused.
//! - An existing file is opened now, without truncating it (a failed sort leaves it as it was),
//!   and written through that descriptor after the sort. A new file is only tried now (created
//!   exclusively and removed at once) and created exclusively, never through a link, when the
//!   statistics are written: a failed or killed sort leaves none behind.

use crate::error::{IoError, Result};
use crate::output::{refuse_planted, resolve_links};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// An opened `--stats-json` file.
#[derive(Debug)]
pub struct StatsFile {
    /// The path the user gave (messages name it).
    path: PathBuf,
    /// Where the statistics go: `path` with symbolic links followed.
    real: PathBuf,
    /// The existing file, opened for writing; None for a file to create.
    existing: Option<File>,
}

impl StatsFile {
    /// Checks and opens `path` for the statistics of a sort of `inputs` (the named ones) into
    /// `output` (None: standard output).
    pub fn open(path: &Path, output: Option<&Path>, inputs: &[PathBuf]) -> Result<StatsFile> {
        if output.is_some_and(|out| same_file(path, out)) {
            return Err(IoError::StatsClash { path: path.to_owned(), what: "the output file" });
        }
        if inputs.iter().any(|i| same_file(path, i)) {
            return Err(IoError::StatsClash { path: path.to_owned(), what: "an input file" });
        }
        let cannot = |cause| IoError::Statistics { path: path.to_owned(), cause };
        let real = resolve_links(path).map_err(cannot)?;
        let existing = match std::fs::symlink_metadata(&real) {
            Ok(md) => {
                if !md.is_file() {
                    return Err(cannot(std::io::Error::other("not a regular file")));
                }
                refuse_planted(&real, &md).map_err(cannot)?;
                let file = open_no_follow(&real, 0).map_err(cannot)?;
                let now = file.metadata().map_err(cannot)?;
                if (now.dev(), now.ino()) != (md.dev(), md.ino()) {
                    return Err(cannot(std::io::Error::other("replaced while being opened")));
                }
                Some(file)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                // Tried now, so that an unwritable directory fails before the sort; made later.
                open_no_follow(&real, libc::O_CREAT | libc::O_EXCL).map_err(cannot)?;
                std::fs::remove_file(&real).map_err(cannot)?;
                None
            }
            Err(e) => return Err(cannot(e)),
        };
        Ok(StatsFile { path: path.to_owned(), real, existing })
    }

    /// Replaces the file's contents with `text` (creating it exclusively when it did not exist).
    pub fn write(self, text: &str) -> Result<()> {
        let cannot = |cause| IoError::Statistics { path: self.path.clone(), cause };
        let mut file = match self.existing {
            Some(f) => {
                f.set_len(0).map_err(cannot)?;
                f
            }
            None => open_no_follow(&self.real, libc::O_CREAT | libc::O_EXCL).map_err(cannot)?,
        };
        file.write_all(text.as_bytes()).map_err(cannot)
    }
}

/// Opens `path` for writing with `flags`, never through a symbolic link; a new file gets 0666 less
/// the umask, as any file a user names.
fn open_no_follow(path: &Path, flags: i32) -> std::io::Result<File> {
    OpenOptions::new().write(true).mode(0o666).custom_flags(flags | libc::O_NOFOLLOW | libc::O_CLOEXEC).open(path)
}

/// Whether `a` and `b` name the same file: the same file now (links followed, hard links
/// included), or the same name in the same directory once symbolic links are followed.
fn same_file(a: &Path, b: &Path) -> bool {
    let (ra, rb) = (resolved(a), resolved(b));
    if let (Ok(x), Ok(y)) = (std::fs::metadata(&ra), std::fs::metadata(&rb)) {
        return (x.dev(), x.ino()) == (y.dev(), y.ino());
    }
    ra == rb
}

/// `p` with symbolic links in its last component followed and its directory made canonical, as far
/// as they exist.
fn resolved(p: &Path) -> PathBuf {
    let p = resolve_links(p).unwrap_or_else(|_| p.to_owned());
    let dir = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
        _ => PathBuf::from("."),
    };
    match (std::fs::canonicalize(&dir), p.file_name()) {
        (Ok(d), Some(name)) => d.join(name),
        _ => p,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_file_appears_only_with_the_statistics() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.json");
        let f = StatsFile::open(&p, None, &[]).unwrap();
        assert!(!p.exists(), "nothing is left if the sort fails or is killed");
        f.write("{}\n").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"{}\n");
    }

    #[test]
    fn an_existing_file_is_kept_until_written_and_specials_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.json");
        std::fs::write(&p, "old contents, longer than the new\n").unwrap();
        let f = StatsFile::open(&p, None, &[]).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"old contents, longer than the new\n");
        f.write("new\n").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new\n");
        let e = StatsFile::open(Path::new("/dev/null"), None, &[]).unwrap_err().to_string();
        assert_eq!(e, "/dev/null: cannot write statistics: not a regular file");
        let e = StatsFile::open(&p, Some(&p), &[]).unwrap_err().to_string();
        assert!(e.ends_with("--stats-json names the output file"), "{e}");
        let e = StatsFile::open(&p, None, std::slice::from_ref(&p)).unwrap_err().to_string();
        assert!(e.ends_with("--stats-json names an input file"), "{e}");
    }

    #[test]
    fn a_file_planted_after_the_check_is_not_written() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.json");
        let f = StatsFile::open(&p, None, &[]).unwrap();
        std::os::unix::fs::symlink(dir.path().join("victim"), &p).unwrap();
        let e = f.write("{}\n").unwrap_err().to_string();
        assert!(e.contains("cannot write statistics"), "{e}");
        assert!(!dir.path().join("victim").exists(), "the link was followed");
    }
}
