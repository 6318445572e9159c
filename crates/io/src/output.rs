//! The sort's output: written in full to a new file, then put in place only when complete.
//!
//! The new file is unnamed (`O_TMPFILE` in the target's directory), so no other user can open it
//! while it is written and nothing is left beside the target whatever happens to the process, even
//! SIGKILL. A symbolic link as target is followed to its final destination (a dangling one creates
//! that destination), as GNU sort writes through it. How the complete file reaches the target:
//!
//! - **Replace** (a new target, or one with a single link whose owner and group the new file can
//!   take): the new file gets the target's owner and group before it holds any data, and mode
//!   `0600` until the commit, which gives it the target's mode (a new target: `0666` less the
//!   umask), links it into the directory under a short random name and renames it over the target.
//!   Atomic: readers see the old file or the new one, never a mix; no other user can read the
//!   partial output, even where it has a name.
//! - **Rewrite** (a target with other hard links, or whose owner or group cannot be given to a new
//!   file, as when sorting into another user's file without root): what GNU sort does, once the sort
//!   is complete: the target is truncated and the new file copied into it (`copy_file_range`). The
//!   inode, its links, owner, group and mode stay; the copy is not atomic.
//!
//! - **Append** (Nsort's `-out_file=f,append`, an existing regular target): the complete new file is
//!   copied onto the end of the target on commit, if the target still has the length it had when
//!   the sort began (else nothing is appended: [`IoError::AppendChanged`]); a copy that fails is
//!   cut back off. Like Rewrite, the copy is not atomic.
//!
//! Either way `xsort -o f f` reads `f` to the end before `f` changes, and a failed or interrupted
//! sort leaves `f` as it was. Where the filesystem refuses `O_TMPFILE`, the new file gets a short
//! random name at once (created exclusively, never through a planted link), which SIGINT, SIGTERM
//! and SIGHUP remove. Targets that are not regular files (`/dev/null`, a FIFO, a terminal) are
//! written in place, since renaming over them would be wrong.
//!
//! In a sticky world-writable directory (such as /tmp), another user's file or FIFO at the target's
//! name is refused, as the kernel's `protected_regular` and `protected_fifos` would refuse opening
//! it (whether or not they are on): it may have been planted there to receive the output.

use crate::error::{IoError, Result};
use crate::file::DirectFile;
use crate::private::{Linkable, Naming};
use std::fs::{File, Metadata};
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// An output file being written.
pub struct AtomicOutput {
    /// The path the user gave (messages name it).
    target: PathBuf,
    /// The file the output ends up in: `target` with symbolic links followed.
    real: PathBuf,
    file: Arc<DirectFile>,
    state: State,
}

/// How the output reaches its target.
enum State {
    /// A device, FIFO or terminal, written in place.
    Special,
    /// A new file in `dir` that is renamed over the target on commit: unnamed until then, or (where
    /// the filesystem has no `O_TMPFILE`) already under `name`. It is `0600` until the commit gives
    /// it `mode`.
    Replace { dir: PathBuf, name: Option<PathBuf>, mode: u32 },
    /// The existing target, open for writing, into which the complete new file (named `name` where
    /// the filesystem has no `O_TMPFILE`) is copied on commit.
    Rewrite { target: File, name: Option<PathBuf> },
    /// The existing target, open for writing, onto whose end (`base`, its length when the sort
    /// began) the complete new file is copied on commit.
    Append { target: File, base: u64, name: Option<PathBuf> },
}

impl AtomicOutput {
    /// Creates the new file for `target` (or opens a special target in place). The target must be
    /// writable (as GNU sort requires of a file it opens), even where it will be replaced. Where
    /// its directory refuses a new file but the target exists and may be written, the output waits
    /// in `spare_dir` (the first temp directory) and is copied into the target, as GNU sort would
    /// write into it.
    pub fn create(target: &Path, direct: bool, spare_dir: Option<&Path>) -> Result<Self> {
        Self::create_with(target, direct, spare_dir, Naming::Unnamed)
    }

    fn create_with(target: &Path, direct: bool, spare_dir: Option<&Path>, naming: Naming) -> Result<Self> {
        let open_error = |cause| IoError::Open { path: target.to_owned(), cause };
        let real = resolve_links(target).map_err(open_error)?;
        let existing = match std::fs::metadata(&real) {
            Ok(md) => Some(md),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(open_error(e)),
        };
        if existing.is_none() && std::fs::metadata(target).is_ok_and(|md| !md.is_file() && !md.is_dir()) {
            // A link to what has no name (`/dev/stdout` on a pipe: /proc/self/fd/1 -> pipe:[N])
            // resolves to a path that does not exist; the link itself reaches the pipe or socket.
            return Self::special(target, target.to_owned());
        }
        if let Some(md) = &existing {
            refuse_planted(&real, md).map_err(open_error)?;
        }
        if let Some(md) = existing.as_ref().filter(|m| !m.is_file()) {
            if md.is_dir() {
                return Err(open_error(std::io::ErrorKind::IsADirectory.into()));
            }
            return Self::special(target, real);
        }
        if real.file_name().is_none() {
            return Err(open_error(std::io::ErrorKind::InvalidInput.into()));
        }
        if existing.is_some() {
            writable(&real).map_err(open_error)?;
        }
        let dir = parent_dir(&real);
        // The new file is 0600 until the commit: it may have a name (no O_TMPFILE) while it holds
        // the user's data. It then takes the old file's mode or, for a new target, 0666 less the
        // umask, as any file xsort creates.
        let mode = existing.as_ref().map_or_else(new_file_mode, |md| md.mode() & 0o7777);
        let (made, dir) = match make(&dir, 0o600, direct, naming) {
            Ok(made) => (made, dir),
            Err(e) if existing.is_some() && spare_dir.is_some() && matches!(e.raw_os_error(), Some(libc::EACCES) | Some(libc::EPERM)) => {
                let spare = spare_dir.expect("checked").to_owned();
                let made = make(&spare, 0o600, direct, naming).map_err(|_| IoError::CreateIn { path: target.to_owned(), dir, cause: e })?;
                (made, spare)
            }
            Err(cause) => return Err(IoError::CreateIn { path: target.to_owned(), dir, cause }),
        };
        let rewrite_only = dir != parent_dir(&real);
        // Errors name what the user asked for, not a file that has no name or will not survive.
        let file = Arc::new(DirectFile::from_parts(made.file, target.to_owned(), made.direct));
        let mut out = AtomicOutput { target: target.to_owned(), real, file, state: State::Replace { dir, name: made.name, mode } };
        if let Some(md) = existing {
            if rewrite_only || md.nlink() != 1 || !out.take_owner(&md)? {
                out.rewrite_instead(&md)?;
            }
        }
        Ok(out)
    }

    /// As [`AtomicOutput::create`], but the sorted output is to be added at the end of an existing
    /// regular target rather than replace it (a new target is created; a device or FIFO is
    /// written in place, as always).
    pub fn create_appending(target: &Path, direct: bool, spare_dir: Option<&Path>) -> Result<Self> {
        let mut out = Self::create(target, direct, spare_dir)?;
        let name = match std::mem::replace(&mut out.state, State::Special) {
            State::Rewrite { target: f, name } => {
                release_reserved(&f);
                name
            }
            State::Replace { name, .. } if std::fs::symlink_metadata(&out.real).is_ok() => name,
            state => {
                out.state = state;
                return Ok(out);
            }
        };
        let open_error = |cause| IoError::Open { path: out.target.clone(), cause };
        let f =
            std::fs::OpenOptions::new().write(true).custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC).open(&out.real).map_err(open_error)?;
        let base = f.metadata().map_err(open_error)?.len();
        out.state = State::Append { target: f, base, name };
        Ok(out)
    }

    /// A target that is not a regular file (`/dev/null`, a FIFO, a terminal, a pipe), opened at
    /// `real` and written in place.
    fn special(target: &Path, real: PathBuf) -> Result<Self> {
        let f = std::fs::OpenOptions::new().write(true).open(&real).map_err(|cause| IoError::Open { path: target.to_owned(), cause })?;
        let file = Arc::new(DirectFile::from_file(f, target.to_owned()));
        Ok(AtomicOutput { target: target.to_owned(), real, file, state: State::Special })
    }

    /// Gives the new file the owner and group of the target; false where that is not allowed.
    fn take_owner(&self, target: &Metadata) -> Result<bool> {
        let f = self.file.as_file();
        let md = f.metadata().map_err(|e| IoError::meta(&self.target, "stat the output", e))?;
        if (md.uid(), md.gid()) == (target.uid(), target.gid()) {
            return Ok(true);
        }
        // SAFETY: fchown on a descriptor we own.
        if unsafe { libc::fchown(f.as_raw_fd(), target.uid(), target.gid()) } == 0 {
            return Ok(true);
        }
        let e = std::io::Error::last_os_error();
        match e.raw_os_error() {
            // Not permitted, or an owner this user namespace cannot map.
            Some(libc::EPERM) | Some(libc::EINVAL) => Ok(false),
            _ => Err(IoError::meta(&self.target, "set the owner of the output", e)),
        }
    }

    /// Gives the new file the permission bits it keeps as the target (after its owner: a change of
    /// owner clears the set-user-ID and set-group-ID bits).
    fn set_mode(&self, mode: u32) -> Result<()> {
        // SAFETY: fchmod on a descriptor we own.
        if unsafe { libc::fchmod(self.file.as_file().as_raw_fd(), mode as libc::mode_t) } != 0 {
            return Err(IoError::meta(&self.target, "set the mode of the output", std::io::Error::last_os_error()));
        }
        Ok(())
    }

    /// Switches to copying the output into the target on commit: the target is opened for writing
    /// now (it must still be the file described by `md`), and left as it is until then.
    fn rewrite_instead(&mut self, md: &Metadata) -> Result<()> {
        let open_error = |cause| IoError::Open { path: self.target.clone(), cause };
        let f = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&self.real)
            .map_err(open_error)?;
        let now = f.metadata().map_err(open_error)?;
        if (now.dev(), now.ino()) != (md.dev(), md.ino()) {
            return Err(open_error(std::io::Error::other("replaced while being opened")));
        }
        let State::Replace { name, .. } = std::mem::replace(&mut self.state, State::Special) else { unreachable!("called on a new file") };
        self.state = State::Rewrite { target: f, name };
        Ok(())
    }

    /// Reserves the disk for `len` bytes of output before they are written, so that a full disk
    /// is found first: the new file's blocks, and where the output is to be copied into the
    /// target (a target with other hard links), the target's too, without changing its size or
    /// contents. A device or FIFO reserves nothing.
    pub fn reserve(&self, len: u64) -> Result<()> {
        match &self.state {
            State::Special => Ok(()),
            State::Replace { .. } => self.file.preallocate(len),
            State::Rewrite { target, .. } => {
                self.file.preallocate(len)?;
                reserve_keeping_size(target, 0, len, &self.target)
            }
            State::Append { target, base, .. } => {
                self.file.preallocate(len)?;
                reserve_keeping_size(target, *base, len, &self.target)
            }
        }
    }

    /// The file to write.
    pub fn file(&self) -> &Arc<DirectFile> {
        &self.file
    }

    /// The user's target path.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Whether this output, dropped before anything is written, leaves no trace and can be created
    /// again later alike: a new file without a name (`O_TMPFILE`) that replaces the target.
    pub fn can_recreate(&self) -> bool {
        matches!(self.state, State::Replace { name: None, .. })
    }

    /// Whether the target is a regular file (false for devices and FIFOs).
    pub fn is_regular(&self) -> bool {
        !matches!(self.state, State::Special)
    }

    /// Fails, as the commit would, when this output is to be appended to a target whose length
    /// changed since the sort began: lets a sort with several outputs find that before it puts
    /// any of them in place.
    pub fn check_unchanged(&self) -> Result<()> {
        match &self.state {
            State::Append { target, base, .. } => still_of_length(target, *base, &self.target),
            _ => Ok(()),
        }
    }

    /// Makes this output's new file a copy of `other`'s (a complete output of the same sort, to go
    /// into a further target): its blocks reserved first, so that a full disk is found before
    /// any target changes. The copy is put in place by [`AtomicOutput::commit`], as any output.
    pub fn fill_from(&self, other: &AtomicOutput) -> Result<()> {
        copy_into(&other.file, self.file.as_file(), &self.target, false)
    }

    /// Makes the output durable if asked, then puts it in place: links it into its directory (an
    /// unnamed file) and renames it over the target, or copies it into the target.
    pub fn commit(mut self, sync: bool) -> Result<()> {
        match std::mem::replace(&mut self.state, State::Special) {
            State::Special => {
                if sync {
                    self.file.sync()?;
                }
                Ok(())
            }
            State::Replace { dir, name, mode } => {
                self.set_mode(mode)?;
                self.replace(&dir, name, sync)
            }
            State::Rewrite { target, name } => {
                let copied = copy_into(&self.file, &target, &self.target, sync);
                forget(name);
                copied
            }
            State::Append { target, base, name } => {
                let appended = append_onto(&self.file, &target, base, &self.target, sync);
                forget(name);
                appended
            }
        }
    }

    fn replace(&self, dir: &Path, name: Option<PathBuf>, sync: bool) -> Result<()> {
        if sync {
            self.file.sync()?;
        }
        let name = match name {
            Some(n) => n,
            None => crate::signals::registering(|register| crate::private::link_into(self.file.as_file(), dir, register))
                .map_err(|e| IoError::meta(&self.target, "link the output into its directory", e))?,
        };
        let renamed = std::fs::rename(&name, &self.real).map_err(|e| IoError::meta(&self.target, "rename output into place", e));
        if renamed.is_err() {
            let _ = std::fs::remove_file(&name);
        }
        crate::signals::unregister(&name);
        renamed?;
        if sync {
            let d = File::open(dir).map_err(|e| IoError::meta(dir, "open directory to fsync", e))?;
            d.sync_all().map_err(|e| IoError::meta(dir, "fsync directory", e))?;
        }
        Ok(())
    }
}

impl Drop for AtomicOutput {
    fn drop(&mut self) {
        // A target that was to be rewritten or appended to gives back the blocks reserved for it.
        if let State::Rewrite { target, .. } | State::Append { target, .. } = &self.state {
            release_reserved(target);
        }
        // An unnamed file vanishes with its descriptor; a named one is removed.
        if let State::Replace { name, .. } | State::Rewrite { name, .. } | State::Append { name, .. } = &mut self.state {
            forget(name.take());
        }
    }
}

/// Removes the new file's name, where it has one (no `O_TMPFILE`), and stops watching it.
fn forget(name: Option<PathBuf>) {
    if let Some(n) = name {
        let _ = std::fs::remove_file(&n);
        crate::signals::unregister(&n);
    }
}

/// Copies all of `src` onto the end of `dst` (the target, named `name` in messages), which must
/// still be `base` bytes long; a copy that fails is cut back off.
fn append_onto(src: &DirectFile, dst: &File, base: u64, name: &Path, sync: bool) -> Result<()> {
    if let Err(e) = still_of_length(dst, base, name) {
        release_reserved(dst);
        return Err(e);
    }
    let appended = copy_at(src, dst, base, name).and_then(|_| synced(dst, name, sync));
    if appended.is_err() {
        let _ = dst.set_len(base);
    }
    appended
}

/// Fails with [`IoError::AppendChanged`] unless `file` (the target `name`) is still `base` bytes
/// long, the length it had when the sort began.
fn still_of_length(file: &File, base: u64, name: &Path) -> Result<()> {
    let now = file.metadata().map_err(|e| IoError::meta(name, "stat", e))?.len();
    if now != base {
        return Err(IoError::AppendChanged { path: name.to_owned(), was: base, now });
    }
    Ok(())
}

/// A new file in `dir` for the output (registered for removal on a signal where it has a name).
fn make(dir: &Path, mode: u32, direct: bool, naming: Naming) -> std::io::Result<crate::private::Created> {
    crate::signals::registering(|register| crate::private::create(dir, mode, direct, naming, Linkable::Yes, register))
}

/// The directory holding `path` (`.` for a bare name).
fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
        _ => PathBuf::from("."),
    }
}

/// Most symbolic links followed from one target (the kernel's own limit).
const MAX_LINKS: usize = 40;

/// `path` with symbolic links in its last component followed to the final destination, which need
/// not exist (a dangling link names the file to create). Like the kernel's `protected_symlinks`, a
/// link in a sticky world-writable directory (such as /tmp) is followed only if it belongs to this
/// user or to the directory's owner: another user's link there is refused (EACCES).
pub fn resolve_links(path: &Path) -> std::io::Result<PathBuf> {
    let mut p = path.to_owned();
    for _ in 0..MAX_LINKS {
        let md = match std::fs::symlink_metadata(&p) {
            Ok(md) if md.file_type().is_symlink() => md,
            Ok(_) => return Ok(p),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(p),
            Err(e) => return Err(e),
        };
        let dir = parent_dir(&p);
        let d = std::fs::metadata(&dir)?;
        // SAFETY: geteuid has no preconditions.
        let me = unsafe { libc::geteuid() };
        let sticky_and_open = libc::S_ISVTX | 0o002;
        if d.mode() & sticky_and_open == sticky_and_open && md.uid() != me && md.uid() != d.uid() {
            return Err(std::io::Error::from_raw_os_error(libc::EACCES));
        }
        p = dir.join(std::fs::read_link(&p)?);
    }
    Err(std::io::Error::from_raw_os_error(libc::ELOOP))
}

/// Refuses an existing target (`md`: its metadata) that another user may have planted: a regular
/// file or FIFO in a sticky world-writable directory, owned by neither this user nor the
/// directory's owner. The kernel's `protected_regular` and `protected_fifos` refuse such an open
/// with `O_CREAT` (for root too); xsort refuses it whether or not they are on, since it opens an
/// existing target without `O_CREAT` and renames over it, which those settings do not cover.
pub fn refuse_planted(path: &Path, md: &Metadata) -> std::io::Result<()> {
    let kind = md.file_type();
    if !(kind.is_file() || std::os::unix::fs::FileTypeExt::is_fifo(&kind)) {
        return Ok(());
    }
    let dir = parent_dir(path);
    let d = std::fs::metadata(&dir)?;
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    let sticky_and_open = libc::S_ISVTX | 0o002;
    if d.mode() & sticky_and_open == sticky_and_open && md.uid() != me && md.uid() != d.uid() {
        let what = if kind.is_file() { "file" } else { "FIFO" };
        return Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!("a {what} of another user (uid {}) in the sticky world-writable directory '{}'; refused, as the kernel's protected_regular and protected_fifos refuse it", md.uid(), dir.display()),
        ));
    }
    Ok(())
}

/// The mode of a new file a user names (an output, a statistics file): 0666 less the umask.
pub fn new_file_mode() -> u32 {
    0o666 & !umask()
}

/// The process's umask. Linux shows it in `/proc/self/status` (since 4.7); elsewhere it is read by
/// setting it, to 077 for that moment, so that a file another thread creates then gets a narrower
/// mode, never a wider one.
fn umask() -> u32 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    if let Some(mask) = status.lines().find_map(|l| l.strip_prefix("Umask:")).and_then(|v| u32::from_str_radix(v.trim(), 8).ok()) {
        return mask;
    }
    // SAFETY: umask only swaps the process's file mode creation mask; the old one is put back at
    // once.
    unsafe {
        let old = libc::umask(0o077);
        libc::umask(old);
        old as u32
    }
}

/// Whether this user may write `path` (by the effective IDs, as opening it would decide).
fn writable(path: &Path) -> std::io::Result<()> {
    let bytes = std::os::unix::ffi::OsStrExt::as_bytes(path.as_os_str());
    let c = std::ffi::CString::new(bytes).map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    // SAFETY: faccessat reads a valid NUL-terminated path.
    if unsafe { libc::faccessat(libc::AT_FDCWD, c.as_ptr(), libc::W_OK, libc::AT_EACCESS) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Replaces the contents of `dst` (the target, named `name` in messages) with all of `src`: its
/// blocks reserved first (a full disk leaves the old contents as they were), then overwritten
/// from the start, then cut to the new length, then synced if asked.
pub fn copy_into(src: &DirectFile, dst: &File, name: &Path, sync: bool) -> Result<()> {
    let len = copy_at(src, dst, 0, name)?;
    dst.set_len(len).map_err(|e| IoError::meta(name, "truncate", e))?;
    synced(dst, name, sync)
}

/// Copies all of `src` into `dst` from byte `at` on, its blocks reserved first (a full disk
/// leaves `dst` as it was); returns the bytes copied.
fn copy_at(src: &DirectFile, dst: &File, at: u64, name: &Path) -> Result<u64> {
    // The copy reads through the page cache: O_DIRECT would hold it to aligned transfers.
    if src.is_direct() {
        src.drop_direct()?;
    }
    let len = src.len()?;
    reserve_keeping_size(dst, at, len, name)?;
    copy_all(src, dst, at, name)?;
    Ok(len)
}

/// Syncs `dst` when asked.
fn synced(dst: &File, name: &Path, sync: bool) -> Result<()> {
    if sync {
        dst.sync_all().map_err(|e| IoError::meta(name, "fsync", e))?;
    }
    Ok(())
}

/// Reserves the blocks of bytes `[offset, offset + len)` of `file` without changing its size or
/// contents (`FALLOC_FL_KEEP_SIZE`). A full disk is an error naming `name`; a filesystem without
/// `fallocate` reserves nothing.
pub fn reserve_keeping_size(file: &File, offset: u64, len: u64, name: &Path) -> Result<()> {
    let reserved = crate::file::reserve_blocks(file, offset, len, true, name);
    if reserved.is_err() {
        // What a full disk let it reserve is given back.
        release_reserved(file);
    }
    reserved
}

/// Gives back the blocks reserved past the end of `file` (by [`reserve_keeping_size`]) for an
/// output that will not be copied in: a truncate to its own size frees them (ext4 and tmpfs free
/// blocks past the end on any truncate). Best effort.
pub fn release_reserved(file: &File) {
    if let Ok(md) = file.metadata() {
        let _ = file.set_len(md.len());
    }
}

/// Copies all of `src` into `dst` from byte `at` on with `copy_file_range` (which may share or copy
/// blocks in the kernel), or by reads and writes where the kernel cannot.
fn copy_all(src: &DirectFile, dst: &File, at: u64, name: &Path) -> Result<()> {
    let len = src.len()?;
    let mut off = 0i64;
    while (off as u64) < len {
        let want = ((len - off as u64) as usize).min(1 << 30);
        let mut off_out = off + at as i64;
        // SAFETY: both descriptors are open; the offsets are valid in-out pointers.
        let n = unsafe { libc::copy_file_range(src.as_file().as_raw_fd(), &mut off, dst.as_raw_fd(), &mut off_out, want, 0) };
        if n > 0 {
            continue;
        }
        if n == 0 {
            return Err(ended_early(name));
        }
        let e = std::io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EINTR) => {}
            Some(libc::EXDEV) | Some(libc::EINVAL) | Some(libc::ENOSYS) | Some(libc::EOPNOTSUPP) => {
                return copy_by_reads(src, dst, name, (off as u64, at), len)
            }
            _ => return Err(IoError::write(name, e)),
        }
    }
    Ok(())
}

/// The rest of [`copy_all`], bytes `[from, len)` of `src` to `dst` from `from + shift` on, by
/// reads and writes.
fn copy_by_reads(src: &DirectFile, dst: &File, name: &Path, (from, shift): (u64, u64), len: u64) -> Result<()> {
    let mut buf = vec![0u8; 1 << 20];
    let mut at = from;
    while at < len {
        let n = src.read_at(&mut buf[..((len - at) as usize).min(1 << 20)], at)?;
        if n == 0 {
            return Err(ended_early(name));
        }
        dst.write_all_at(&buf[..n], at + shift).map_err(|e| IoError::write(name, e))?;
        at += n as u64;
    }
    Ok(())
}

fn ended_early(name: &Path) -> IoError {
    IoError::Internal(format!("{}: the sorted output ended early while copied", name.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn check_replaces_only_on_commit(naming: Naming) {
        let dir = tempfile::tempdir().unwrap();
        let t = dir.path().join("out");
        std::fs::write(&t, b"old").unwrap();
        std::fs::set_permissions(&t, std::fs::Permissions::from_mode(0o640)).unwrap();
        let o = AtomicOutput::create_with(&t, false, None, naming).unwrap();
        assert_eq!(o.file().as_file().metadata().unwrap().mode() & 0o7777, 0o600, "nobody else reads the partial output");
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
    fn a_new_target_is_private_until_committed_then_takes_the_umask() {
        for naming in [Naming::Unnamed, Naming::Named] {
            let dir = tempfile::tempdir().unwrap();
            let t = dir.path().join("new");
            let o = AtomicOutput::create_with(&t, false, None, naming).unwrap();
            assert_eq!(o.file().as_file().metadata().unwrap().mode() & 0o7777, 0o600, "{naming:?}");
            if naming == Naming::Named {
                let partial = std::fs::read_dir(dir.path()).unwrap().next().unwrap().unwrap();
                assert_eq!(partial.metadata().unwrap().mode() & 0o777, 0o600, "the named partial output");
            }
            o.commit(false).unwrap();
            assert_eq!(std::fs::metadata(&t).unwrap().mode() & 0o777, new_file_mode());
        }
    }

    #[test]
    fn another_users_file_or_fifo_in_a_sticky_directory_is_refused() {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            assert!(std::env::var_os("CI").is_none(), "CI runs as root");
            eprintln!("NOT RUN: needs root to plant another user's file");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o1777)).unwrap();
        let planted = dir.path().join("out");
        std::fs::write(&planted, b"planted").unwrap();
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o666) }, 0);
        for p in [&planted, &fifo] {
            std::os::unix::fs::chown(p, Some(65534), Some(65534)).unwrap();
            let e = AtomicOutput::create(p, false, None).err().expect("refused").to_string();
            assert!(e.contains("of another user (uid 65534) in the sticky world-writable directory"), "{e}");
            // The directory's owner (root here) may plant nothing: its own files are written.
            std::os::unix::fs::chown(p, Some(0), Some(0)).unwrap();
        }
        AtomicOutput::create(&planted, false, None).unwrap().commit(false).unwrap();
        assert_eq!(std::fs::read(&planted).unwrap(), b"");
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
            let o = AtomicOutput::create_with(&t, true, None, naming).unwrap();
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
            let o = AtomicOutput::create_with(&t, false, None, naming).unwrap();
            o.file().write_all_at(b"x", 0).unwrap();
            o.commit(false).unwrap();
            assert_eq!(std::fs::read(&t).unwrap(), b"x");
            assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        }
    }

    #[test]
    fn symbolic_links_are_written_through() {
        for naming in [Naming::Unnamed, Naming::Named] {
            let dir = tempfile::tempdir().unwrap();
            std::fs::create_dir(dir.path().join("sub")).unwrap();
            std::fs::write(dir.path().join("sub/real"), b"old").unwrap();
            // link -> sub/hop -> real (relative to sub/), and a dangling link -> sub/new
            std::os::unix::fs::symlink("real", dir.path().join("sub/hop")).unwrap();
            std::os::unix::fs::symlink("sub/hop", dir.path().join("link")).unwrap();
            std::os::unix::fs::symlink(dir.path().join("sub/new"), dir.path().join("dangling")).unwrap();
            for (link, real) in [("link", "sub/real"), ("dangling", "sub/new")] {
                let o = AtomicOutput::create_with(&dir.path().join(link), false, None, naming).unwrap();
                o.file().write_all_at(b"new", 0).unwrap();
                o.commit(false).unwrap();
                assert_eq!(std::fs::read(dir.path().join(real)).unwrap(), b"new", "{link} -> {real}");
                assert!(std::fs::symlink_metadata(dir.path().join(link)).unwrap().file_type().is_symlink());
            }
            assert_eq!(std::fs::read_dir(dir.path().join("sub")).unwrap().count(), 3);
        }
    }

    #[test]
    fn link_loops_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink("b", dir.path().join("a")).unwrap();
        std::os::unix::fs::symlink("a", dir.path().join("b")).unwrap();
        let e = AtomicOutput::create(&dir.path().join("a"), false, None).err().unwrap();
        assert!(e.to_string().contains("symbolic links"), "{e}");
    }

    #[test]
    fn hard_linked_target_is_rewritten_in_place() {
        for naming in [Naming::Unnamed, Naming::Named] {
            let dir = tempfile::tempdir().unwrap();
            let (t, other) = (dir.path().join("out"), dir.path().join("other"));
            std::fs::write(&t, b"old contents, longer than the new").unwrap();
            std::fs::hard_link(&t, &other).unwrap();
            let ino = std::fs::metadata(&t).unwrap().ino();
            let o = AtomicOutput::create_with(&t, true, None, naming).unwrap();
            o.file().write_all_at(b"new", 0).unwrap();
            assert_eq!(std::fs::read(&t).unwrap(), b"old contents, longer than the new", "unchanged until commit");
            o.commit(true).unwrap();
            for p in [&t, &other] {
                assert_eq!(std::fs::read(p).unwrap(), b"new");
            }
            assert_eq!(std::fs::metadata(&t).unwrap().ino(), ino);
            assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2, "nothing left beside");
        }
    }

    #[test]
    fn copy_falls_back_to_reads_and_writes() {
        let dir = tempfile::tempdir().unwrap();
        let s = std::fs::File::options().read(true).write(true).create(true).truncate(true).open(dir.path().join("s")).unwrap();
        let src = DirectFile::from_parts(s, "s".into(), false);
        let data: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
        src.write_all_at(&data, 0).unwrap();
        let dst = std::fs::File::options().write(true).create(true).truncate(true).open(dir.path().join("d")).unwrap();
        copy_into(&src, &dst, Path::new("d"), true).unwrap();
        assert_eq!(std::fs::read(dir.path().join("d")).unwrap(), data);
        let at = 1 << 20;
        let dst2 = std::fs::File::options().write(true).create(true).truncate(true).open(dir.path().join("e")).unwrap();
        dst2.write_all_at(&data[..at], 0).unwrap();
        copy_by_reads(&src, &dst2, Path::new("e"), (at as u64, 0), data.len() as u64).unwrap();
        assert_eq!(std::fs::read(dir.path().join("e")).unwrap(), data);
        // Shifted: appended after 5 bytes.
        let dst3 = std::fs::File::options().write(true).create(true).truncate(true).open(dir.path().join("f")).unwrap();
        dst3.write_all_at(b"head:", 0).unwrap();
        copy_by_reads(&src, &dst3, Path::new("f"), (0, 5), data.len() as u64).unwrap();
        assert_eq!(std::fs::read(dir.path().join("f")).unwrap(), [&b"head:"[..], &data].concat());
    }

    #[test]
    fn appends_on_commit_only_to_an_unchanged_target() {
        let dir = tempfile::tempdir().unwrap();
        let t = dir.path().join("out");
        std::fs::write(&t, b"old\n").unwrap();
        let write = |o: &AtomicOutput, data: &[u8]| o.file().write_all_at(data, 0).unwrap();
        // Appended on commit, and not before; the inode stays.
        let ino = std::fs::metadata(&t).unwrap().ino();
        let o = AtomicOutput::create_appending(&t, false, None).unwrap();
        write(&o, b"new\n");
        o.reserve(4).unwrap();
        assert_eq!(std::fs::read(&t).unwrap(), b"old\n");
        o.commit(true).unwrap();
        assert_eq!(std::fs::read(&t).unwrap(), b"old\nnew\n");
        assert_eq!(std::fs::metadata(&t).unwrap().ino(), ino);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        // A target that grew while the sort ran gets nothing.
        let o = AtomicOutput::create_appending(&t, false, None).unwrap();
        write(&o, b"more\n");
        std::io::Write::write_all(&mut std::fs::OpenOptions::new().append(true).open(&t).unwrap(), b"x").unwrap();
        let e = o.commit(false).unwrap_err();
        assert!(matches!(e, IoError::AppendChanged { was: 8, now: 9, .. }), "{e}");
        assert_eq!(std::fs::read(&t).unwrap(), b"old\nnew\nx");
        // Dropped: nothing appended. A new target is created.
        let o = AtomicOutput::create_appending(&t, false, None).unwrap();
        write(&o, b"lost");
        drop(o);
        assert_eq!(std::fs::read(&t).unwrap(), b"old\nnew\nx");
        let fresh = dir.path().join("fresh");
        let o = AtomicOutput::create_appending(&fresh, false, None).unwrap();
        write(&o, b"first\n");
        o.commit(false).unwrap();
        assert_eq!(std::fs::read(&fresh).unwrap(), b"first\n");
    }

    #[test]
    fn special_target_written_in_place() {
        let o = AtomicOutput::create(Path::new("/dev/null"), true, None).unwrap();
        assert!(!o.is_regular());
        o.file().write_all_at(b"x", 0).unwrap();
        o.commit(false).unwrap();
    }
}
