//! The sort's output: a new file beside the target that replaces it only when complete.
//!
//! The new file is unnamed (`O_TMPFILE` in the target's directory), so no other user can open it
//! while it is written and nothing is left beside the target whatever happens to the process, even
//! SIGKILL. It has the target's mode before it holds any data (a new target gets `0666` less the
//! umask). On commit it is linked into the directory under a short random name and renamed over the
//! target, so `xsort -o f f` reads `f` to the end first, and a failed or interrupted sort leaves `f`
//! as it was. Where the filesystem refuses `O_TMPFILE`, the file gets a short random name at once
//! (created exclusively, never through a planted link), which SIGINT, SIGTERM and SIGHUP remove.
//! Targets that are not regular files (`/dev/null`, a FIFO, a terminal) are written in place, since
//! renaming over them would be wrong.

use crate::error::{IoError, Result};
use crate::file::DirectFile;
use crate::private::{Linkable, Naming};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// An output file being written.
pub struct AtomicOutput {
    target: PathBuf,
    file: Arc<DirectFile>,
    state: State,
}

/// How the output reaches its target.
enum State {
    /// A device, FIFO or terminal, written in place.
    Special,
    /// A new file in `dir` that is renamed over the target on commit: unnamed until then, or (where
    /// the filesystem has no `O_TMPFILE`) already under `name`.
    Replace { dir: PathBuf, name: Option<PathBuf> },
}

impl AtomicOutput {
    /// Creates the new file beside `target` (or opens a special target in place).
    pub fn create(target: &Path, direct: bool) -> Result<Self> {
        Self::create_with(target, direct, Naming::Unnamed)
    }

    fn create_with(target: &Path, direct: bool, naming: Naming) -> Result<Self> {
        let existing = std::fs::metadata(target).ok();
        if let Some(md) = existing.as_ref().filter(|m| !m.is_file()) {
            if md.is_dir() {
                return Err(IoError::Open { path: target.to_owned(), cause: std::io::ErrorKind::IsADirectory.into() });
            }
            let f = std::fs::OpenOptions::new().write(true).open(target).map_err(|cause| IoError::Open { path: target.to_owned(), cause })?;
            return Ok(AtomicOutput { target: target.to_owned(), file: Arc::new(DirectFile::from_file(f, target.to_owned())), state: State::Special });
        }
        if target.file_name().is_none() {
            return Err(IoError::Open { path: target.to_owned(), cause: std::io::ErrorKind::InvalidInput.into() });
        }
        let dir = parent_dir(target);
        // A new target gets 0666 less the umask, as any file xsort creates; a file that replaces
        // another is made 0600 and given the old one's mode below, before it holds any data.
        let mode = if existing.is_some() { 0o600 } else { 0o666 };
        let made = crate::signals::registering(|register| crate::private::create(&dir, mode, direct, naming, Linkable::Yes, register));
        let made = made.map_err(|cause| IoError::Open { path: target.to_owned(), cause })?;
        // Errors name what the user asked for, not a file that has no name or will not survive.
        let file = Arc::new(DirectFile::from_parts(made.file, target.to_owned(), made.direct));
        let out = AtomicOutput { target: target.to_owned(), file, state: State::Replace { dir, name: made.name } };
        if let Some(md) = existing {
            out.set_mode(md.permissions().mode() & 0o7777)?;
        }
        Ok(out)
    }

    /// Gives the new file the permission bits of the file it replaces.
    fn set_mode(&self, mode: u32) -> Result<()> {
        // SAFETY: fchmod on a descriptor we own.
        if unsafe { libc::fchmod(self.file.as_file().as_raw_fd(), mode as libc::mode_t) } != 0 {
            return Err(IoError::meta(&self.target, "set the mode of the output", std::io::Error::last_os_error()));
        }
        Ok(())
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
        !matches!(self.state, State::Special)
    }

    /// Makes the output durable if asked, then puts it in place: links it into its directory (an
    /// unnamed file) and renames it over the target.
    pub fn commit(mut self, sync: bool) -> Result<()> {
        if sync {
            self.file.sync()?;
        }
        let State::Replace { dir, name } = std::mem::replace(&mut self.state, State::Special) else { return Ok(()) };
        let name = match name {
            Some(n) => n,
            None => crate::signals::registering(|register| crate::private::link_into(self.file.as_file(), &dir, register))
                .map_err(|e| IoError::meta(&self.target, "link the output into its directory", e))?,
        };
        let renamed = std::fs::rename(&name, &self.target).map_err(|e| IoError::meta(&self.target, "rename output into place", e));
        if renamed.is_err() {
            let _ = std::fs::remove_file(&name);
        }
        crate::signals::unregister(&name);
        renamed?;
        if sync {
            let d = std::fs::File::open(&dir).map_err(|e| IoError::meta(&dir, "open directory to fsync", e))?;
            d.sync_all().map_err(|e| IoError::meta(&dir, "fsync directory", e))?;
        }
        Ok(())
    }
}

/// The directory holding `path` (`.` for a bare name).
fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
        _ => PathBuf::from("."),
    }
}

impl Drop for AtomicOutput {
    fn drop(&mut self) {
        // An unnamed file vanishes with its descriptor; a named one is removed.
        if let State::Replace { name: Some(name), .. } = &self.state {
            let _ = std::fs::remove_file(name);
            crate::signals::unregister(name);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    fn check_replaces_only_on_commit(naming: Naming) {
        let dir = tempfile::tempdir().unwrap();
        let t = dir.path().join("out");
        std::fs::write(&t, b"old").unwrap();
        std::fs::set_permissions(&t, std::fs::Permissions::from_mode(0o640)).unwrap();
        let o = AtomicOutput::create_with(&t, false, naming).unwrap();
        assert_eq!(o.file().as_file().metadata().unwrap().mode() & 0o7777, 0o640, "the target's mode from the start");
        o.file().write_all_at(b"new!", 0).unwrap();
        assert_eq!(std::fs::read(&t).unwrap(), b"old");
        let entries = if naming == Naming::Named { 2 } else { 1 };
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), entries);
        o.commit(true).unwrap();
        assert_eq!(std::fs::read(&t).unwrap(), b"new!");
        assert_eq!(std::fs::metadata(&t).unwrap().mode() & 0o7777, 0o640);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn replaces_only_on_commit() {
        check_replaces_only_on_commit(Naming::Unnamed);
    }

    #[test]
    fn named_fallback_replaces_only_on_commit() {
        check_replaces_only_on_commit(Naming::Named);
    }

    #[test]
    fn dropped_output_leaves_target_alone() {
        for naming in [Naming::Unnamed, Naming::Named] {
            let dir = tempfile::tempdir().unwrap();
            let t = dir.path().join("out");
            std::fs::write(&t, b"old").unwrap();
            let o = AtomicOutput::create_with(&t, true, naming).unwrap();
            o.file().write_all_at(b"partial", 0).unwrap();
            drop(o);
            assert_eq!(std::fs::read(&t).unwrap(), b"old");
            assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        }
    }

    #[test]
    fn new_target_in_a_long_name() {
        for naming in [Naming::Unnamed, Naming::Named] {
            let dir = tempfile::tempdir().unwrap();
            let t = dir.path().join("n".repeat(255));
            let o = AtomicOutput::create_with(&t, false, naming).unwrap();
            o.file().write_all_at(b"x", 0).unwrap();
            o.commit(false).unwrap();
            assert_eq!(std::fs::read(&t).unwrap(), b"x");
            assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        }
    }

    #[test]
    fn special_target_written_in_place() {
        let o = AtomicOutput::create(Path::new("/dev/null"), true).unwrap();
        assert!(!o.is_regular());
        o.file().write_all_at(b"x", 0).unwrap();
        o.commit(false).unwrap();
    }
}
