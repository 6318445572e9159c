//! Benchmark inputs: generated with xsort's gensort (checksum kept), and put
//! in the requested page-cache state before each run.
//!
//! Cold: the file is flushed and evicted with `posix_fadvise(DONTNEED)`
//! (no root needed). Warm: it is read through the page cache. Either way the
//! share of its pages actually resident is then measured with `mincore`, so
//! the report states the cache state observed, not the one intended.

use std::fs::File;
use std::io::Read;
use std::os::unix::io::AsRawFd;
use std::path::Path;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use serde::Serialize;
use xsort_sortbench::{generate_with, GenOptions, GenerateJob, REC_SIZE};

use crate::cli::{Cache, Format};

/// A generated input.
#[derive(Clone, Debug, Serialize)]
pub struct Dataset {
    pub records: u64,
    pub bytes: u64,
    /// gensort's checksum (sum of record CRC-32s), as hex.
    pub checksum: String,
    #[serde(skip)]
    pub checksum_value: u128,
    /// Seconds spent generating (not part of any figure).
    pub generate_s: f64,
}

/// Writes `records` gensort records to `path`.
pub fn generate(path: &Path, records: u64, format: Format, skew: bool) -> Result<Dataset> {
    let opts = GenOptions { ascii: format == Format::Ascii, skew };
    let job = GenerateJob::new(0, records, opts);
    let t = Instant::now();
    let sum = generate_with(path, &job).with_context(|| format!("generating {}", path.display()))?;
    Ok(Dataset {
        records,
        bytes: records * REC_SIZE as u64,
        checksum: format!("{sum:x}"),
        checksum_value: sum,
        generate_s: t.elapsed().as_secs_f64(),
    })
}

/// Puts `path` in the page-cache state `cache`; returns the resident share
/// measured afterwards (0 to 1).
pub fn prepare(path: &Path, cache: Cache) -> Result<f64> {
    match cache {
        Cache::Cold => evict(path)?,
        Cache::Warm => warm(path)?,
    }
    resident_fraction(path)
}

/// Flushes and drops the file's pages from the page cache.
pub fn evict(path: &Path) -> Result<()> {
    let f = File::open(path).with_context(|| format!("opening {}", path.display()))?;
    f.sync_data().with_context(|| format!("flushing {}", path.display()))?;
    // SAFETY: a valid open descriptor; fadvise only changes caching.
    let rc = unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    if rc != 0 {
        bail!("posix_fadvise(DONTNEED) on {}: {}", path.display(), std::io::Error::from_raw_os_error(rc));
    }
    Ok(())
}

/// Reads the file through the page cache.
pub fn warm(path: &Path) -> Result<()> {
    let mut f = File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let mut buf = vec![0u8; 4 << 20];
    loop {
        let n = f.read(&mut buf).with_context(|| format!("reading {}", path.display()))?;
        if n == 0 {
            return Ok(());
        }
    }
}

/// Share of the file's pages in the page cache, from `mincore`.
pub fn resident_fraction(path: &Path) -> Result<f64> {
    let f = File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let len = f.metadata().with_context(|| format!("stat {}", path.display()))?.len() as usize;
    if len == 0 {
        return Ok(1.0);
    }
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as usize;
    // SAFETY: a shared read-only mapping of an open file of `len` bytes; it
    // is never dereferenced, only passed to mincore, then unmapped.
    let addr = unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ, libc::MAP_SHARED, f.as_raw_fd(), 0) };
    if addr == libc::MAP_FAILED {
        bail!("mmap of {} for mincore: {}", path.display(), std::io::Error::last_os_error());
    }
    let pages = len.div_ceil(page);
    let mut vec = vec![0u8; pages];
    // SAFETY: addr..addr+len is our mapping; vec holds one byte per page.
    let rc = unsafe { libc::mincore(addr, len, vec.as_mut_ptr()) };
    let err = std::io::Error::last_os_error();
    // SAFETY: unmapping exactly the mapping made above.
    unsafe { libc::munmap(addr, len) };
    if rc != 0 {
        bail!("mincore on {}: {err}", path.display());
    }
    let resident = vec.iter().filter(|&&b| b & 1 != 0).count();
    Ok(resident as f64 / pages as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generate_evict_warm() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("in");
        let d = generate(&p, 1000, Format::Binary, false).expect("generate");
        assert_eq!(d.bytes, 100_000);
        assert_eq!(std::fs::metadata(&p).expect("stat").len(), 100_000);
        assert_eq!(d.checksum_value, xsort_sortbench::generated_checksum(0, 1000, GenOptions::default()));
        let warm = prepare(&p, Cache::Warm).expect("warm");
        assert!(warm > 0.99, "{warm}");
        // Eviction is advisory (tmpfs, for one, keeps its pages): check only that it runs.
        let cold = prepare(&p, Cache::Cold).expect("cold");
        assert!((0.0..=1.0).contains(&cold));
    }
}
