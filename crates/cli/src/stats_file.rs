//! The `--stats-json` file: checked and opened before the sort, written after it.
//!
//! Opening it first means that a path xsort cannot write fails before the output is committed, not
//! after, and that a statistics path that is also the output (the same name, a link to it, or the
//! same file) is refused instead of replacing the sorted output, as is one that is an input. It is not truncated until the
//! statistics are written, so a failed sort leaves an existing file as it was, and a file it
//! created is removed again (by a signal too, until the statistics are in it).

use anyhow::{bail, Context, Result};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use xsort_core::Output;

/// An opened `--stats-json` file.
pub struct StatsFile {
    file: File,
    path: PathBuf,
    created: bool,
}

impl StatsFile {
    /// Opens `path` for the statistics of a sort of `inputs` (the named ones) into `output`.
    pub fn open(path: &Path, output: &Output, inputs: &[PathBuf]) -> Result<Self> {
        if let Output::Path(out) = output {
            if same_file(path, out) {
                bail!("{}: --stats-json names the output file", path.display());
            }
        }
        if inputs.iter().any(|i| same_file(path, i)) {
            bail!("{}: --stats-json names an input file", path.display());
        }
        let cannot = || format!("{}: cannot write statistics", path.display());
        // A file this run creates is registered for removal by a signal, like a partial output.
        let new = xsort_io::signals::registering(|register| {
            let opened = OpenOptions::new().write(true).create_new(true).open(path);
            if opened.is_ok() {
                register(path);
            }
            opened
        });
        let (file, created) = match new {
            Ok(f) => (f, true),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                (OpenOptions::new().write(true).open(path).with_context(cannot)?, false)
            }
            Err(e) => return Err(e).with_context(cannot),
        };
        Ok(StatsFile { file, path: path.to_owned(), created })
    }

    /// Replaces the file's contents with `text`; a signal no longer removes it.
    pub fn write(mut self, text: &str) -> Result<()> {
        let cannot = || format!("{}: cannot write statistics", self.path.display());
        self.file.set_len(0).with_context(cannot)?;
        let written = self.file.write_all(text.as_bytes()).with_context(cannot);
        xsort_io::signals::unregister(&self.path);
        written
    }

    /// After a failed sort: removes the file if this run created it (it is still empty).
    pub fn abandon(self) {
        if self.created {
            let _ = std::fs::remove_file(&self.path);
            xsort_io::signals::unregister(&self.path);
        }
    }
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
    let p = xsort_io::output::resolve_links(p).unwrap_or_else(|_| p.to_owned());
    let dir = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
        _ => PathBuf::from("."),
    };
    match (std::fs::canonicalize(&dir), p.file_name()) {
        (Ok(d), Some(name)) => d.join(name),
        _ => p,
    }
}
