//! Temp space spread over several directories.
//!
//! Each temp file is created with a unique name and unlinked at once, so it lives only as long as its
//! descriptor: whatever happens to the process (error, signal, even SIGKILL) no temp file is left
//! behind, and the space of a consumed run returns as soon as it is closed.

use crate::error::{IoError, Result};
use crate::file::{Access, DirectFile};
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

/// The temp directories of one sort.
#[derive(Debug)]
pub struct TempSpace {
    dirs: Vec<PathBuf>,
    direct: bool,
    next_dir: AtomicUsize,
    serial: AtomicU64,
}

impl TempSpace {
    /// Checks that every directory exists, is a directory and is writable; creates nothing.
    pub fn new(dirs: Vec<PathBuf>, direct: bool) -> Result<Self> {
        if dirs.is_empty() {
            return Err(IoError::TempDir { path: PathBuf::from("(none)"), reason: "no temporary directory given".into() });
        }
        for d in &dirs {
            check_dir(d)?;
        }
        Ok(TempSpace { dirs, direct, next_dir: AtomicUsize::new(0), serial: AtomicU64::new(0) })
    }

    /// The directories.
    pub fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }

    /// Creates an anonymous temp file in the next directory, round robin, so temp traffic is spread
    /// over all of them.
    pub fn create(&self) -> Result<Arc<DirectFile>> {
        self.create_with(self.direct)
    }

    /// [`Self::create`] without direct I/O, for a file that another program writes through a shared
    /// descriptor (O_DIRECT would hold its writes to aligned sizes).
    pub fn create_buffered(&self) -> Result<Arc<DirectFile>> {
        self.create_with(false)
    }

    fn create_with(&self, direct: bool) -> Result<Arc<DirectFile>> {
        let dir = &self.dirs[self.next_dir.fetch_add(1, Ordering::Relaxed) % self.dirs.len()];
        let name = format!(".xsort-{}-{}.tmp", std::process::id(), self.serial.fetch_add(1, Ordering::Relaxed));
        let path = dir.join(name);
        let f = DirectFile::open(&path, Access::CreateNewReadWrite, direct).map_err(|e| match e {
            IoError::Open { cause, .. } => IoError::TempDir { path: dir.clone(), reason: crate::error::os_text(&cause) },
            other => other,
        })?;
        std::fs::remove_file(&path).map_err(|e| IoError::meta(&path, "unlink temp file", e))?;
        Ok(Arc::new(f))
    }
}

fn check_dir(d: &Path) -> Result<()> {
    let bad = |reason: &str| IoError::TempDir { path: d.to_owned(), reason: reason.to_owned() };
    let md = std::fs::metadata(d).map_err(|e| bad(&crate::error::os_text(&e)))?;
    if !md.is_dir() {
        return Err(bad("not a directory"));
    }
    let c = CString::new(d.as_os_str().as_bytes()).map_err(|_| bad("path contains a NUL byte"))?;
    // SAFETY: access() reads a valid NUL-terminated path.
    if unsafe { libc::access(c.as_ptr(), libc::W_OK | libc::X_OK) } != 0 {
        return Err(bad(&std::io::Error::last_os_error().to_string()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_anonymous_and_spread() {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let t = TempSpace::new(vec![a.path().into(), b.path().into()], true).unwrap();
        let f1 = t.create().unwrap();
        let _f2 = t.create().unwrap();
        f1.write_all_at(b"hello", 0).unwrap();
        let mut r = [0u8; 5];
        f1.read_at(&mut r, 0).unwrap();
        assert_eq!(&r, b"hello");
        assert_eq!(std::fs::read_dir(a.path()).unwrap().count(), 0);
        assert_eq!(std::fs::read_dir(b.path()).unwrap().count(), 0);
    }

    #[test]
    fn rejects_missing_and_non_dirs() {
        let e = TempSpace::new(vec!["/nonexistent-xsort".into()], false).unwrap_err();
        assert!(e.to_string().contains("/nonexistent-xsort: unusable temporary directory"), "{e}");
        let f = tempfile::NamedTempFile::new().unwrap();
        let e = TempSpace::new(vec![f.path().into()], false).unwrap_err();
        assert!(e.to_string().contains("not a directory"), "{e}");
    }
}
