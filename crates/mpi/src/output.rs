//! Where the ranks write: one shared file, each rank at its offset, or one part per rank
//! (node-local). Either way nothing reaches its target name before every rank has written its
//! range: the shared file is written under a temp name beside the target (every rank opens it by
//! name, so it cannot be unnamed) and rank 0 renames it over the target after the ranks agree;
//! a part is xsort's atomic output (unnamed until committed), and every rank commits its part
//! after the ranks agree.
//!
//! The temp name is registered with xsort's signal cleanup on every rank, so whichever ranks
//! `mpirun` terminates after a failure remove it; a rank's drop removes it too unless committed.

use anyhow::{Context, Result};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use xsort_io::output::AtomicOutput;

/// A rank's output.
pub enum Target {
    /// The shared output file, open under its temp name.
    Shared(SharedFile),
    /// This rank's part.
    Part(AtomicOutput),
}

/// The shared output under its temp name.
pub struct SharedFile {
    target: PathBuf,
    temp: PathBuf,
    file: Option<File>,
    committed: bool,
}

/// The temp name of the shared output `target` for the job `nonce`.
pub fn temp_name(target: &Path, nonce: u64) -> PathBuf {
    let name = target.file_name().map_or_else(|| "output".into(), |n| n.to_string_lossy().into_owned());
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
        _ => PathBuf::from("."),
    };
    dir.join(format!(".{name}.xsort-mpi-{nonce:016x}"))
}

impl SharedFile {
    /// Rank 0: creates the temp file (never through an existing name), with the target's mode
    /// when it exists.
    pub fn create(target: &Path, nonce: u64) -> Result<SharedFile> {
        let temp = temp_name(target, nonce);
        let mode = std::fs::metadata(target).map_or(0o666, |m| m.permissions().mode() & 0o7777);
        let file = xsort_io::signals::registering(|register| {
            let f = OpenOptions::new().write(true).create_new(true).mode(mode).open(&temp);
            if f.is_ok() {
                register(&temp);
            }
            f
        })
        .with_context(|| format!("{}: cannot create the output beside it", target.display()))?;
        Ok(SharedFile { target: target.to_owned(), temp, file: Some(file), committed: false })
    }

    /// The other ranks: opens the temp file rank 0 created.
    pub fn open(target: &Path, nonce: u64) -> Result<SharedFile> {
        let temp = temp_name(target, nonce);
        let file = xsort_io::signals::registering(|register| {
            register(&temp);
            OpenOptions::new().write(true).open(&temp)
        });
        let mut shared = SharedFile { target: target.to_owned(), temp, file: None, committed: false };
        shared.file =
            Some(file.with_context(|| format!("{}: cannot open the output's temp file {}", target.display(), shared.temp.display()))?);
        Ok(shared)
    }

    /// Rank 0, after every rank has written and synced its range: puts the file in place.
    pub fn commit(&mut self, sync: bool) -> Result<()> {
        self.file.take();
        std::fs::rename(&self.temp, &self.target)
            .with_context(|| format!("{}: cannot rename the output into place", self.target.display()))?;
        self.committed = true;
        xsort_io::signals::unregister(&self.temp);
        if sync {
            let dir = self.target.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
            File::open(dir).and_then(|d| d.sync_all()).with_context(|| format!("{}: cannot fsync the directory", dir.display()))?;
        }
        Ok(())
    }

    /// The other ranks, once rank 0 has committed: the name is no longer theirs to remove.
    pub fn forget(&mut self) {
        self.file.take();
        self.committed = true;
        xsort_io::signals::unregister(&self.temp);
    }
}

impl Drop for SharedFile {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.temp);
            xsort_io::signals::unregister(&self.temp);
        }
    }
}

impl Target {
    /// Writes `data` at `offset` of this rank's output.
    pub fn write_at(&self, data: &[u8], offset: u64) -> Result<()> {
        match self {
            Target::Shared(s) => {
                let f = s.file.as_ref().context("the output is closed")?;
                f.write_all_at(data, offset).with_context(|| format!("{}: write failed", s.target.display()))
            }
            Target::Part(p) => Ok(p.file().write_all_at(data, offset)?),
        }
    }

    /// Makes what this rank wrote durable (before the ranks agree to commit).
    pub fn sync(&self) -> Result<()> {
        match self {
            Target::Shared(s) => match &s.file {
                Some(f) => f.sync_all().with_context(|| format!("{}: fsync failed", s.target.display())),
                None => Ok(()),
            },
            Target::Part(p) => Ok(p.file().sync()?),
        }
    }
}
