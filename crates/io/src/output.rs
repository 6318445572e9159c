//! The sort's output: a new file beside the target that replaces it only when complete.
//!
//! `xsort -o f f` therefore reads `f` to the end while writing `.f.xsort-PID.tmp`, and a failed or
//! interrupted sort leaves `f` as it was. Targets that are not regular files (`/dev/null`, a FIFO, a
//! terminal) are written in place, since renaming over them would be wrong.

use crate::error::{IoError, Result};
use crate::file::{Access, DirectFile};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// An output file being written.
pub struct AtomicOutput {
    target: PathBuf,
    temp: Option<PathBuf>,
    file: Arc<DirectFile>,
}

impl AtomicOutput {
    /// Creates the temporary file beside `target` (or opens a special target in place).
    pub fn create(target: &Path, direct: bool) -> Result<Self> {
        let existing = std::fs::metadata(target).ok();
        if let Some(md) = existing.as_ref().filter(|m| !m.is_file()) {
            if md.is_dir() {
                return Err(IoError::Open { path: target.to_owned(), cause: std::io::ErrorKind::IsADirectory.into() });
            }
            let f = std::fs::OpenOptions::new().write(true).open(target).map_err(|cause| IoError::Open { path: target.to_owned(), cause })?;
            return Ok(AtomicOutput { target: target.to_owned(), temp: None, file: Arc::new(DirectFile::from_file(f, target.to_owned())) });
        }
        let name = target.file_name().ok_or_else(|| IoError::Open { path: target.to_owned(), cause: std::io::ErrorKind::InvalidInput.into() })?;
        let temp = target.with_file_name(format!(".{}.xsort-{}.tmp", name.to_string_lossy(), std::process::id()));
        crate::signals::register(&temp);
        let mut file = match DirectFile::open(&temp, Access::CreateNew, direct) {
            Ok(f) => f,
            Err(IoError::Open { cause, .. }) => {
                crate::signals::unregister(&temp);
                return Err(IoError::Open { path: target.to_owned(), cause });
            }
            Err(e) => return Err(e),
        };
        // Errors name what the user asked for, not a hidden name that will not survive.
        file.set_name(target.to_owned());
        if let Some(md) = existing {
            // Keep the permissions of the file being replaced, as writing into it would have.
            let _ = std::fs::set_permissions(&temp, std::fs::Permissions::from_mode(md.permissions().mode()));
        }
        Ok(AtomicOutput { target: target.to_owned(), temp: Some(temp), file: Arc::new(file) })
    }

    /// The file to write.
    pub fn file(&self) -> &Arc<DirectFile> {
        &self.file
    }

    /// The user's target path.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Whether the target is a regular file that will be replaced (false for devices and FIFOs).
    pub fn is_regular(&self) -> bool {
        self.temp.is_some()
    }

    /// Makes the output durable if asked, then renames it over the target.
    pub fn commit(mut self, sync: bool) -> Result<()> {
        if sync {
            self.file.sync()?;
        }
        let Some(temp) = self.temp.take() else { return Ok(()) };
        let renamed = std::fs::rename(&temp, &self.target).map_err(|e| IoError::meta(&self.target, "rename output into place", e));
        crate::signals::unregister(&temp);
        if renamed.is_err() {
            let _ = std::fs::remove_file(&temp);
        }
        renamed?;
        if sync {
            let dir = match self.target.parent() {
                Some(p) if !p.as_os_str().is_empty() => p,
                _ => Path::new("."),
            };
            let d = std::fs::File::open(dir).map_err(|e| IoError::meta(dir, "open directory to fsync", e))?;
            d.sync_all().map_err(|e| IoError::meta(dir, "fsync directory", e))?;
        }
        Ok(())
    }
}

impl Drop for AtomicOutput {
    fn drop(&mut self) {
        if let Some(temp) = self.temp.take() {
            let _ = std::fs::remove_file(&temp);
            crate::signals::unregister(&temp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_only_on_commit() {
        let dir = tempfile::tempdir().unwrap();
        let t = dir.path().join("out");
        std::fs::write(&t, b"old").unwrap();
        let o = AtomicOutput::create(&t, false).unwrap();
        o.file().write_all_at(b"new!", 0).unwrap();
        assert_eq!(std::fs::read(&t).unwrap(), b"old");
        o.commit(true).unwrap();
        assert_eq!(std::fs::read(&t).unwrap(), b"new!");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn dropped_output_leaves_target_alone() {
        let dir = tempfile::tempdir().unwrap();
        let t = dir.path().join("out");
        std::fs::write(&t, b"old").unwrap();
        let o = AtomicOutput::create(&t, true).unwrap();
        o.file().write_all_at(b"partial", 0).unwrap();
        drop(o);
        assert_eq!(std::fs::read(&t).unwrap(), b"old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn special_target_written_in_place() {
        let o = AtomicOutput::create(Path::new("/dev/null"), true).unwrap();
        assert!(!o.is_regular());
        o.file().write_all_at(b"x", 0).unwrap();
        o.commit(false).unwrap();
    }
}
