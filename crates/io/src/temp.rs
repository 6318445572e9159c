//! Temp space spread over several directories.
//!
//! Each temp file is unnamed (`O_TMPFILE`, mode 0600), so it lives only as long as its descriptor:
//! no other user can open it, whatever happens to the process (error, signal, even SIGKILL) no temp
//! file is left behind, and the space of a consumed run returns as soon as it is closed. Where the
//! filesystem refuses `O_TMPFILE`, the file is made as `mkstemp` makes one (a random name, never an
//! existing file or link, mode 0600) and unlinked at once (see [`crate::private`]).

use crate::error::{IoError, Result};
use crate::file::DirectFile;
use crate::private::{Linkable, Naming};
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// The temp directories of one sort.
#[derive(Debug)]
pub struct TempSpace {
    dirs: Vec<PathBuf>,
    direct: bool,
    next_dir: AtomicUsize,
    naming: Naming,
}

impl TempSpace {
    /// Checks that every directory exists, is a directory and is writable; creates nothing.
    pub fn new(dirs: Vec<PathBuf>, direct: bool) -> Result<Self> {
        let space = TempSpace::unchecked(dirs, direct)?;
        space.check()?;
        Ok(space)
    }

    /// The directories, checked only when a file is made in one (as GNU sort, which looks at them
    /// only when it spills); at least one must be given.
    pub fn unchecked(dirs: Vec<PathBuf>, direct: bool) -> Result<Self> {
        if dirs.is_empty() {
            return Err(IoError::TempDir { path: PathBuf::from("(none)"), reason: "no temporary directory given".into() });
        }
        Ok(TempSpace { dirs, direct, next_dir: AtomicUsize::new(0), naming: Naming::Unnamed })
    }

    /// Checks that every directory exists, is a directory and is writable.
    pub fn check(&self) -> Result<()> {
        self.dirs.iter().try_for_each(|d| check_dir(d))
    }

    /// The directories.
    pub fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }

    /// Each directory's filesystem and the bytes it has free for this process (`statvfs`'s
    /// available blocks), in the order of [`Self::dirs`]; None where the directory cannot be
    /// looked at (it fails, as before, when a file is made there).
    pub fn free_space(&self) -> Vec<Option<FreeSpace>> {
        self.dirs.iter().map(|d| FreeSpace::of(d)).collect()
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
        // A named file is registered as it is made, so that a signal before its unlink removes it.
        let made = crate::signals::registering(|register| crate::private::create(dir, 0o600, direct, self.naming, Linkable::No, register));
        let made = made.map_err(|cause| IoError::TempDir { path: dir.clone(), reason: crate::error::os_text(&cause) })?;
        if let Some(name) = &made.name {
            let unlinked = std::fs::remove_file(name);
            crate::signals::unregister(name);
            unlinked.map_err(|e| IoError::meta(name, "unlink temp file", e))?;
        }
        // Messages name the directory: the file has no name of its own.
        Ok(Arc::new(DirectFile::from_parts(made.file, dir.clone(), made.direct)))
    }
}

/// The free space of the filesystem that holds a directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FreeSpace {
    /// The filesystem's device number: directories with the same one share their space.
    pub filesystem: u64,
    /// Bytes available to unprivileged writers.
    pub available: u64,
}

impl FreeSpace {
    /// The free space where `path` is (a directory or a file), when it can be looked at.
    pub fn of(path: &Path) -> Option<FreeSpace> {
        let c = CString::new(path.as_os_str().as_bytes()).ok()?;
        // SAFETY: statvfs is plain data, for which all zeroes is a valid value.
        let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
        // SAFETY: statvfs reads a valid NUL-terminated path and writes into the struct we pass;
        // the result is checked before the struct is read.
        if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
            return None;
        }
        let available = (st.f_bavail as u128 * st.f_frsize as u128).min(u64::MAX as u128) as u64;
        // The device number, not statvfs's f_fsid, which some filesystems (older tmpfs) leave 0.
        let filesystem = std::os::unix::fs::MetadataExt::dev(&std::fs::metadata(path).ok()?);
        Some(FreeSpace { filesystem, available })
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
    fn named_fallback_is_private_and_leaves_nothing() {
        use std::os::unix::fs::MetadataExt;
        let a = tempfile::tempdir().unwrap();
        let mut t = TempSpace::new(vec![a.path().into()], true).unwrap();
        t.naming = Naming::Named;
        // Files at the names older versions used, and links planted by another user, are skipped.
        for i in 0..4 {
            std::os::unix::fs::symlink("/nonexistent", a.path().join(format!(".xsort-{}-{i}.tmp", std::process::id()))).unwrap();
        }
        let before = std::fs::read_dir(a.path()).unwrap().count();
        let f = t.create().unwrap();
        let g = t.create_buffered().unwrap();
        f.write_all_at(b"hello", 0).unwrap();
        g.write_all_at(b"world", 0).unwrap();
        assert_eq!(f.as_file().metadata().unwrap().mode() & 0o777, 0o600);
        assert_eq!(f.as_file().metadata().unwrap().nlink(), 0, "unlinked at once");
        assert_eq!(std::fs::read_dir(a.path()).unwrap().count(), before);
    }

    #[test]
    fn unnamed_files_are_private() {
        use std::os::unix::fs::MetadataExt;
        let a = tempfile::tempdir().unwrap();
        let t = TempSpace::new(vec![a.path().into()], true).unwrap();
        let f = t.create().unwrap();
        let md = f.as_file().metadata().unwrap();
        assert_eq!((md.mode() & 0o777, md.nlink()), (0o600, 0));
        assert_eq!(f.path(), a.path());
    }

    #[test]
    fn rejects_missing_and_non_dirs() {
        let e = TempSpace::new(vec!["/nonexistent-xsort".into()], false).unwrap_err();
        assert!(e.to_string().contains("cannot create temporary file in '/nonexistent-xsort'"), "{e}");
        let f = tempfile::NamedTempFile::new().unwrap();
        let e = TempSpace::new(vec![f.path().into()], false).unwrap_err();
        assert!(e.to_string().contains("not a directory"), "{e}");
    }
}
