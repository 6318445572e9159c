//! Files that no other user can open: unnamed (`O_TMPFILE`) where the filesystem allows it, under an
//! unpredictable name otherwise.
//!
//! A temp run or a partial output holds the user's data, often in a shared directory such as /tmp.
//! An unnamed file has no directory entry at all, so nobody can open it (not even by waiting for
//! it), and SIGKILL cannot leave it behind. Where the filesystem refuses `O_TMPFILE`, the file gets
//! a name as `mkstemp` makes one: random, created with `O_CREAT|O_EXCL|O_NOFOLLOW` (so a planted
//! file or symbolic link is never opened, only skipped for another name) and a narrow mode.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

/// Names tried before giving up on a directory (each collision is a file someone else put there).
const NAME_ATTEMPTS: usize = 100;
/// Random characters in a name: 62^10 names, far beyond guessing.
const RANDOM_CHARS: usize = 10;

/// Whether to try an unnamed file first (production) or go straight to a named one (what a
/// filesystem without `O_TMPFILE` gets; the tests force it to exercise that path here).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Naming {
    /// `O_TMPFILE` first, a random name where it is refused.
    Unnamed,
    /// A random name only.
    Named,
}

/// A file made by [`create`].
#[derive(Debug)]
pub struct Created {
    /// The open file (read and write).
    pub file: File,
    /// Whether it was opened with O_DIRECT.
    pub direct: bool,
    /// Its name, for a named file (None when unnamed).
    pub name: Option<PathBuf>,
}

/// Whether the file can later be given a name ([`link_into`]): an output can, a temp run must not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Linkable {
    /// The file may be linked into the directory later.
    Yes,
    /// `O_EXCL`: an unnamed file can never be linked.
    No,
}

/// Creates a new file in `dir` with permission bits `mode` (the umask applies), direct when
/// `direct` and the filesystem allows it. `on_named` runs for a named file while the name is fresh,
/// before anything else can happen to it (the output registers it for removal on a signal).
pub fn create(
    dir: &Path,
    mode: u32,
    direct: bool,
    naming: Naming,
    linkable: Linkable,
    on_named: &mut dyn FnMut(&Path),
) -> io::Result<Created> {
    if naming == Naming::Unnamed {
        let excl = if linkable == Linkable::No { libc::O_EXCL } else { 0 };
        for d in [direct, false] {
            let extra = if d { libc::O_DIRECT } else { 0 };
            match open_rw(dir, libc::O_TMPFILE | excl | extra, mode) {
                Ok(file) => return Ok(Created { file, direct: d, name: None }),
                // EINVAL may be O_DIRECT's refusal (then buffered is tried) or O_TMPFILE's.
                Err(e) if refuses_tmpfile(&e) => {}
                Err(e) => return Err(e),
            }
            if !direct {
                break;
            }
        }
    }
    let (file, direct, name) = create_named(dir, mode, direct, on_named)?;
    Ok(Created { file, direct, name: Some(name) })
}

/// Errors with which a filesystem (or an old kernel) refuses `O_TMPFILE`.
fn refuses_tmpfile(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EOPNOTSUPP) | Some(libc::EISDIR) | Some(libc::EINVAL))
}

/// A new file under a random name in `dir`, retried on collisions.
fn create_named(dir: &Path, mode: u32, direct: bool, on_named: &mut dyn FnMut(&Path)) -> io::Result<(File, bool, PathBuf)> {
    let base = libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW;
    for _ in 0..NAME_ATTEMPTS {
        let path = dir.join(random_name());
        let mut opened = Err(io::ErrorKind::InvalidInput.into());
        for d in [direct, false] {
            opened = open_rw(&path, base | if d { libc::O_DIRECT } else { 0 }, mode).map(|f| (f, d));
            match &opened {
                Err(e) if d && e.raw_os_error() == Some(libc::EINVAL) => continue,
                _ => break,
            }
        }
        match opened {
            Ok((file, d)) => {
                on_named(&path);
                return Ok((file, d, path));
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(io::ErrorKind::AlreadyExists, format!("no free file name after {NAME_ATTEMPTS} attempts")))
}

fn open_rw(path: &Path, flags: i32, mode: u32) -> io::Result<File> {
    OpenOptions::new().read(true).write(true).custom_flags(flags | libc::O_CLOEXEC).mode(mode).open(path)
}

/// Gives an unnamed file a fresh random name in `dir` (it is put in place by a rename from there:
/// `linkat` cannot replace a file). `on_named` runs while the name is fresh, as for [`create`].
pub fn link_into(file: &File, dir: &Path, on_named: &mut dyn FnMut(&Path)) -> io::Result<PathBuf> {
    // Through /proc/self/fd with AT_SYMLINK_FOLLOW, which needs no privilege; AT_EMPTY_PATH (which
    // needs CAP_DAC_READ_SEARCH) only where /proc is not mounted.
    let proc_path = format!("/proc/self/fd/{}\0", file.as_raw_fd());
    let use_proc = Path::new("/proc/self/fd").is_dir();
    for _ in 0..NAME_ATTEMPTS {
        let path = dir.join(random_name());
        let mut c_path = path.as_os_str().as_bytes().to_vec();
        c_path.push(0);
        // SAFETY: both paths are NUL-terminated byte strings that outlive the call; the descriptor
        // is open (borrowed from `file`).
        let r = unsafe {
            if use_proc {
                libc::linkat(libc::AT_FDCWD, proc_path.as_ptr().cast(), libc::AT_FDCWD, c_path.as_ptr().cast(), libc::AT_SYMLINK_FOLLOW)
            } else {
                libc::linkat(file.as_raw_fd(), c"".as_ptr(), libc::AT_FDCWD, c_path.as_ptr().cast(), libc::AT_EMPTY_PATH)
            }
        };
        if r == 0 {
            on_named(&path);
            return Ok(path);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::AlreadyExists {
            return Err(e);
        }
    }
    Err(io::Error::new(io::ErrorKind::AlreadyExists, format!("no free file name after {NAME_ATTEMPTS} attempts")))
}

/// `.xsort-` and random characters and `.tmp`: short whatever the target's name (a target of 250
/// characters still leaves room), and recognisable as xsort's.
pub fn random_name() -> String {
    const CHARS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let mut bytes = [0u8; RANDOM_CHARS];
    fill_random(&mut bytes);
    let tail: String = bytes.iter().map(|b| CHARS[*b as usize % CHARS.len()] as char).collect();
    format!(".xsort-{tail}.tmp")
}

/// Fills `buf` from the kernel's random source; if that fails (a kernel without getrandom), from
/// the clock, the process id and a counter, which still differ from name to name.
fn fill_random(buf: &mut [u8]) {
    // SAFETY: getrandom writes at most buf.len() bytes into buf.
    let n = unsafe { libc::getrandom(buf.as_mut_ptr().cast(), buf.len(), 0) };
    if n == buf.len() as isize {
        return;
    }
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    let mut x = t ^ (u64::from(std::process::id()) << 32) ^ COUNTER.fetch_add(0x9E37_79B9_7F4A_7C15, std::sync::atomic::Ordering::Relaxed);
    for b in buf.iter_mut() {
        // xorshift64*: enough to spread the seed over the name.
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        *b = (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 56) as u8;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    fn none(_: &Path) {}

    #[test]
    fn unnamed_file_has_no_entry_and_a_narrow_mode() {
        let dir = tempfile::tempdir().unwrap();
        let c = create(dir.path(), 0o600, true, Naming::Unnamed, Linkable::No, &mut none).unwrap();
        assert!(c.name.is_none());
        assert_eq!(c.file.metadata().unwrap().mode() & 0o777, 0o600);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn named_fallback_skips_planted_names_and_is_private() {
        let dir = tempfile::tempdir().unwrap();
        let mut seen = Vec::new();
        let c = create(dir.path(), 0o600, true, Naming::Named, Linkable::No, &mut |p: &Path| seen.push(p.to_owned())).unwrap();
        let name = c.name.clone().unwrap();
        assert_eq!(seen, std::slice::from_ref(&name));
        assert_eq!(std::fs::symlink_metadata(&name).unwrap().permissions().mode() & 0o777, 0o600);
        assert!(name.file_name().unwrap().len() < 24, "{name:?}");
        let other = create(dir.path(), 0o600, false, Naming::Named, Linkable::No, &mut none).unwrap();
        assert_ne!(other.name, c.name);
    }

    #[test]
    fn named_creation_never_follows_a_planted_link() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"keep").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let e = open_rw(&link, libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW, 0o600).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
    }

    #[test]
    fn unnamed_file_is_linked_under_a_fresh_name() {
        let dir = tempfile::tempdir().unwrap();
        let c = create(dir.path(), 0o640, false, Naming::Unnamed, Linkable::Yes, &mut none).unwrap();
        std::os::unix::fs::FileExt::write_all_at(&c.file, b"data", 0).unwrap();
        let p = link_into(&c.file, dir.path(), &mut none).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"data");
        assert!(p.file_name().unwrap().to_string_lossy().starts_with(".xsort-"));
    }

    #[test]
    fn names_differ() {
        let names: std::collections::HashSet<_> = (0..1000).map(|_| random_name()).collect();
        assert_eq!(names.len(), 1000);
    }
}
