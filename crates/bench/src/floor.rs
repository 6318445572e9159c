//! The I/O floor: the least time any disk-to-disk sort of a file can take on
//! this machine, measured just before the sort, in the same run of the harness.
//!
//! It is a direct (`O_DIRECT`) read of the input plus a direct write of as
//! many bytes to a new file in the same directory as the output, followed by
//! `fsync`, with page-aligned buffers of `transfer` bytes and `inflight`
//! transfers in flight (one thread each). Direct I/O bypasses the page cache,
//! so this is the disk's floor whatever the cache scenario; a warm-cache sort
//! may beat it on reading. Where a file system refuses `O_DIRECT`, buffered
//! I/O is used instead and the mode says so.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use anyhow::{anyhow, Context, Result};
use serde::Serialize;
use xsort_sortbench::io::AlignedBuf;

/// How the floor is measured.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    pub transfer: usize,
    pub inflight: usize,
}

/// One measurement.
#[derive(Clone, Debug, Serialize)]
pub struct Floor {
    pub bytes: u64,
    pub read_s: f64,
    pub write_s: f64,
    /// read_s + write_s: the one-pass floor.
    pub total_s: f64,
    pub read_mb_per_s: f64,
    pub write_mb_per_s: f64,
    pub transfer_size: usize,
    pub inflight: usize,
    /// "direct" or "buffered" (the file system refused O_DIRECT).
    pub read_mode: String,
    pub write_mode: String,
    /// With `--duplex`: the time to read the input and write as many bytes (and fsync) at once,
    /// each with `inflight` transfers in flight: what a pass of a spilled sort, which reads one
    /// file while it writes another, needs at least. Twice it is the two-pass floor.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duplex_s: Option<f64>,
}

/// Measures the floor for `input`, writing (then deleting) `scratch`.
pub fn measure(input: &Path, scratch: &Path, cfg: Config) -> Result<Floor> {
    let transfer = cfg.transfer.div_ceil(4096).max(1) * 4096;
    let inflight = cfg.inflight.max(1);
    let mut bufs =
        (0..inflight).map(|_| AlignedBuf::new(transfer).map_err(|e| anyhow!("floor buffer: {e}"))).collect::<Result<Vec<_>>>()?;
    let (read_s, bytes, read_mode) = read(input, &mut bufs, transfer)?;
    for b in bufs.iter_mut() {
        xsort_sortbench::fill_records(b, 0, xsort_sortbench::GenOptions::default());
    }
    let write = write(scratch, bytes, &bufs, transfer);
    let _ = std::fs::remove_file(scratch);
    let (write_s, write_mode) = write?;
    let mb = bytes as f64 / 1e6;
    Ok(Floor {
        bytes,
        read_s,
        write_s,
        total_s: read_s + write_s,
        read_mb_per_s: mb / read_s.max(1e-9),
        write_mb_per_s: mb / write_s.max(1e-9),
        transfer_size: transfer,
        inflight,
        read_mode,
        write_mode,
        duplex_s: None,
    })
}

/// Reads `input` while writing as many bytes to `scratch` (then deleted) and syncing them, with
/// `cfg.inflight` transfers in flight each: the seconds until both are done.
pub fn measure_duplex(input: &Path, scratch: &Path, cfg: Config) -> Result<f64> {
    let transfer = cfg.transfer.div_ceil(4096).max(1) * 4096;
    let buffers = || {
        (0..cfg.inflight.max(1)).map(|_| AlignedBuf::new(transfer).map_err(|e| anyhow!("floor buffer: {e}"))).collect::<Result<Vec<_>>>()
    };
    let (mut reads, mut writes) = (buffers()?, buffers()?);
    for b in writes.iter_mut() {
        xsort_sortbench::fill_records(b, 0, xsort_sortbench::GenOptions::default());
    }
    let bytes = std::fs::metadata(input).with_context(|| format!("stat {}", input.display()))?.len();
    let t = Instant::now();
    let (read, write) = std::thread::scope(|s| {
        let writer = s.spawn(|| write(scratch, bytes, &writes, transfer));
        let read = read(input, &mut reads, transfer);
        (read, writer.join().map_err(|_| anyhow!("floor writer panicked")).and_then(|w| w))
    });
    let elapsed = t.elapsed().as_secs_f64();
    let _ = std::fs::remove_file(scratch);
    read?;
    write?;
    Ok(elapsed)
}

fn open_read(path: &Path) -> Result<(File, String)> {
    match OpenOptions::new().read(true).custom_flags(libc::O_DIRECT).open(path) {
        Ok(f) => Ok((f, "direct".into())),
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
            crate::dataset::evict(path)?;
            let f = File::open(path).with_context(|| format!("opening {}", path.display()))?;
            Ok((f, "buffered".into()))
        }
        Err(e) => Err(e).with_context(|| format!("opening {} for the floor's direct read", path.display())),
    }
}

fn read(path: &Path, bufs: &mut [AlignedBuf], transfer: usize) -> Result<(f64, u64, String)> {
    let (file, mode) = open_read(path)?;
    let len = file.metadata().with_context(|| format!("stat {}", path.display()))?.len();
    let next = AtomicU64::new(0);
    let t = Instant::now();
    std::thread::scope(|s| {
        let handles: Vec<_> = bufs
            .iter_mut()
            .map(|buf| {
                let (file, next) = (&file, &next);
                s.spawn(move || -> std::io::Result<()> {
                    loop {
                        let off = next.fetch_add(1, Ordering::Relaxed) * transfer as u64;
                        if off >= len {
                            return Ok(());
                        }
                        let mut done = 0usize;
                        while done < transfer {
                            let n = file.read_at(&mut buf[done..transfer], off + done as u64)?;
                            if n == 0 {
                                break;
                            }
                            done += n;
                        }
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().map_err(|_| anyhow!("floor reader thread panicked"))?.with_context(|| format!("floor read of {}", path.display()))?;
        }
        Ok::<(), anyhow::Error>(())
    })?;
    Ok((t.elapsed().as_secs_f64(), len, mode))
}

fn write(path: &Path, bytes: u64, bufs: &[AlignedBuf], transfer: usize) -> Result<(f64, String)> {
    let total = bytes.div_ceil(4096) * 4096;
    let t = Instant::now();
    let (file, mode) = match OpenOptions::new().write(true).create(true).truncate(true).custom_flags(libc::O_DIRECT).open(path) {
        Ok(f) => (f, "direct"),
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => (
            OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .open(path)
                .with_context(|| format!("creating {}", path.display()))?,
            "buffered",
        ),
        Err(e) => return Err(e).with_context(|| format!("creating {} for the floor's direct write", path.display())),
    };
    let next = AtomicU64::new(0);
    std::thread::scope(|s| {
        let handles: Vec<_> = bufs
            .iter()
            .map(|buf| {
                let (file, next) = (&file, &next);
                s.spawn(move || -> std::io::Result<()> {
                    loop {
                        let off = next.fetch_add(1, Ordering::Relaxed) * transfer as u64;
                        if off >= total {
                            return Ok(());
                        }
                        let n = (total - off).min(transfer as u64) as usize;
                        file.write_all_at(&buf[..n], off)?;
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().map_err(|_| anyhow!("floor writer thread panicked"))?.with_context(|| format!("floor write of {}", path.display()))?;
        }
        Ok::<(), anyhow::Error>(())
    })?;
    file.sync_all().with_context(|| format!("fsync of {}", path.display()))?;
    drop(file);
    Ok((t.elapsed().as_secs_f64(), mode.to_string()))
}

/// `xsort-bench floor`: measures the floor of one file and prints it, as text or JSON.
pub fn run_command(a: &crate::cli::FloorArgs) -> Result<()> {
    if a.inflight == 0 || a.transfer < 4096 {
        anyhow::bail!("--inflight must be at least 1 and --transfer at least 4KiB");
    }
    let dir = match &a.scratch {
        Some(d) => d.clone(),
        None => a.file.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new(".")).to_path_buf(),
    };
    let scratch = dir.join(format!(".xsort-bench-floor-{}.tmp", std::process::id()));
    let cfg = Config { transfer: usize::try_from(a.transfer).unwrap_or(usize::MAX), inflight: a.inflight };
    let mut f = measure(&a.file, &scratch, cfg)?;
    if a.duplex {
        f.duplex_s = Some(measure_duplex(&a.file, &scratch, cfg)?);
    }
    if a.json {
        println!("{}", serde_json::to_string(&f).context("encoding the floor")?);
    } else {
        println!("{}", describe(&a.file, &f));
    }
    Ok(())
}

/// One line saying what was measured.
fn describe(file: &Path, f: &Floor) -> String {
    format!(
        "floor of {}: {} bytes; read {:.3} s ({}, {:.1} MB/s) + write and fsync {:.3} s ({}, {:.1} MB/s) = {:.3} s; {} KiB transfers, {} in flight",
        file.display(),
        f.bytes,
        f.read_s,
        f.read_mode,
        f.read_mb_per_s,
        f.write_s,
        f.write_mode,
        f.write_mb_per_s,
        f.total_s,
        f.transfer_size / 1024,
        f.inflight
    ) + &f.duplex_s.map(|d| format!("; read and write at once {d:.3} s")).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measures_a_small_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let input = dir.path().join("in");
        std::fs::write(&input, vec![7u8; 300_000]).expect("write");
        let f = measure(&input, &dir.path().join("floor"), Config { transfer: 65536, inflight: 2 }).expect("floor");
        assert_eq!(f.bytes, 300_000);
        assert!(f.read_s > 0.0 && f.write_s > 0.0);
        assert!((f.total_s - f.read_s - f.write_s).abs() < 1e-12);
        assert!(!dir.path().join("floor").exists());
        let both = measure_duplex(&input, &dir.path().join("floor"), Config { transfer: 65536, inflight: 2 }).expect("duplex");
        assert!(both > 0.0);
        assert!(!dir.path().join("floor").exists());
    }
}
