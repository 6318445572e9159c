//! Machine facts a reader needs to trust a figure, read from /proc, /sys,
//! statvfs and git: CPU, memory, kernel, the file system, mount options and
//! block device of every directory used, free space, and which xsort ran
//! (version, commit, build profile).
//!
//! Everything is best effort: a fact that cannot be read is `null` in the
//! JSON and "unknown" in the text, never guessed.

use std::collections::BTreeSet;
use std::ffi::CString;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::process::Command;

use serde::Serialize;

use crate::cluster::ClusterContext;
use crate::energy::{Probe, Zone};

#[derive(Clone, Debug, Serialize)]
pub struct Cpu {
    pub model: Option<String>,
    pub sockets: usize,
    pub cores: usize,
    /// Logical CPUs online.
    pub threads: usize,
    /// Logical CPUs this process may run on (affinity, cgroup quota).
    pub available_threads: usize,
    pub mhz: Option<f64>,
    pub max_mhz: Option<f64>,
    pub governor: Option<String>,
    /// Hypervisor vendor/product when the CPU reports running virtualized.
    pub hypervisor: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Memory {
    pub total_bytes: u64,
    pub available_bytes: u64,
    /// Page cache (Cached in /proc/meminfo) when the benchmark started.
    pub page_cache_bytes: u64,
    pub swap_total_bytes: u64,
    pub transparent_hugepages: Option<String>,
}

/// A directory the benchmark used and what it lives on.
#[derive(Clone, Debug, Serialize)]
pub struct Dir {
    /// data, output, temp, report.
    pub role: String,
    pub path: String,
    pub fs_type: Option<String>,
    pub mount_point: Option<String>,
    pub mount_options: Option<String>,
    pub source: Option<String>,
    /// Whole-disk name in /sys/block (the partition's parent).
    pub device: Option<String>,
    pub model: Option<String>,
    pub vendor: Option<String>,
    pub scheduler: Option<String>,
    pub rotational: Option<bool>,
    pub free_bytes: Option<u64>,
    pub total_bytes: Option<u64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Build {
    pub path: String,
    pub version: Option<String>,
    pub git_commit: Option<String>,
    /// Uncommitted changes to tracked files when the report was made.
    pub git_dirty: Option<bool>,
    pub build_profile: String,
    /// Modification time of the binary (UTC).
    pub built_utc: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Energy {
    pub measured: bool,
    /// Where the counters are, when there are some.
    pub source: Option<String>,
    pub zones: Vec<Zone>,
    /// Why energy is not measured.
    pub reason: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Context {
    pub hostname: Option<String>,
    pub cpu: Cpu,
    pub memory: Memory,
    pub kernel: Option<String>,
    pub os: Option<String>,
    pub dirs: Vec<Dir>,
    /// Disks in /sys/block (not loop, ram or zram devices, size > 0).
    pub block_devices: Vec<String>,
    pub xsort: Build,
    pub bench: Build,
    pub energy: Energy,
    pub gpu: String,
    /// With --ranks: the cluster's ranks, hosts and interconnect (set after the trial launch).
    pub cluster: Option<ClusterContext>,
}

/// A value from /proc/meminfo in bytes.
pub fn meminfo(key: &str) -> Option<u64> {
    let text = fs::read_to_string("/proc/meminfo").ok()?;
    text.lines().find_map(|l| {
        let rest = l.strip_prefix(key)?.strip_prefix(':')?;
        let kb: u64 = rest.split_whitespace().next()?.parse().ok()?;
        Some(kb * 1024)
    })
}

fn read_trim(path: impl AsRef<Path>) -> Option<String> {
    let s = fs::read_to_string(path).ok()?.trim().to_string();
    (!s.is_empty()).then_some(s)
}

/// Collects the context; `dirs` are (role, path) pairs.
pub fn collect(dirs: &[(&str, &Path)], xsort: &Path, energy: &Probe, powercap: &Path) -> Context {
    let energy = match energy {
        Probe::Available(z) => Energy {
            measured: true,
            source: Some(format!("Linux powercap (RAPL) at {}", powercap.display())),
            zones: z.clone(),
            reason: None,
        },
        Probe::NotMeasured(why) => Energy { measured: false, source: None, zones: Vec::new(), reason: Some(why.clone()) },
    };
    let gpu = if Path::new("/proc/driver/nvidia/gpus").exists() || Path::new("/dev/nvidia0").exists() {
        "an NVIDIA GPU is present; xsort does not use it, so its energy is not counted".to_string()
    } else {
        "none found; xsort does not use a GPU".to_string()
    };
    let bench_exe = std::env::current_exe().unwrap_or_default();
    Context {
        hostname: read_trim("/proc/sys/kernel/hostname"),
        cpu: cpu(),
        memory: Memory {
            total_bytes: meminfo("MemTotal").unwrap_or(0),
            available_bytes: meminfo("MemAvailable").unwrap_or(0),
            page_cache_bytes: meminfo("Cached").unwrap_or(0),
            swap_total_bytes: meminfo("SwapTotal").unwrap_or(0),
            transparent_hugepages: read_trim("/sys/kernel/mm/transparent_hugepage/enabled")
                .and_then(|s| Some(s.split('[').nth(1)?.split(']').next()?.to_string())),
        },
        kernel: read_trim("/proc/sys/kernel/osrelease"),
        os: fs::read_to_string("/etc/os-release")
            .ok()
            .and_then(|t| t.lines().find_map(|l| Some(l.strip_prefix("PRETTY_NAME=")?.trim_matches('"').to_string()))),
        dirs: dirs.iter().map(|(role, p)| dir_info(role, p)).collect(),
        block_devices: block_devices(),
        xsort: build_of(xsort, true),
        bench: build_of(&bench_exe, false),
        energy,
        gpu,
        cluster: None,
    }
}

fn cpu() -> Cpu {
    let text = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let mut model = None;
    let (mut threads, mut mhz_sum, mut mhz_n) = (0usize, 0.0, 0usize);
    let mut sockets = BTreeSet::new();
    let mut cores = BTreeSet::new();
    let mut phys = String::new();
    let mut virt = false;
    for line in text.lines() {
        let Some((k, v)) = line.split_once(':') else { continue };
        let (k, v) = (k.trim(), v.trim());
        match k {
            "processor" => threads += 1,
            "model name" if model.is_none() => model = Some(v.to_string()),
            "cpu MHz" => {
                if let Ok(x) = v.parse::<f64>() {
                    mhz_sum += x;
                    mhz_n += 1;
                }
            }
            "physical id" => {
                phys = v.to_string();
                sockets.insert(phys.clone());
            }
            "core id" => {
                cores.insert((phys.clone(), v.to_string()));
            }
            "flags" => virt |= v.split_whitespace().any(|f| f == "hypervisor"),
            _ => {}
        }
    }
    let threads = threads.max(1);
    let hypervisor = virt.then(|| {
        let parts: Vec<String> = ["/sys/hypervisor/type", "/sys/class/dmi/id/sys_vendor", "/sys/class/dmi/id/product_name"]
            .iter()
            .filter_map(read_trim)
            .collect();
        if parts.is_empty() {
            "virtualized (CPU hypervisor flag)".to_string()
        } else {
            format!("virtualized: {}", parts.join(" / "))
        }
    });
    Cpu {
        model,
        sockets: sockets.len().max(1),
        cores: if cores.is_empty() { threads } else { cores.len() },
        threads,
        available_threads: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(threads),
        mhz: (mhz_n > 0).then(|| mhz_sum / mhz_n as f64),
        max_mhz: read_trim("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")
            .and_then(|s| s.parse::<f64>().ok())
            .map(|khz| khz / 1000.0),
        governor: read_trim("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
        hypervisor,
    }
}

struct Mount {
    dev: (u32, u32),
    point: PathBuf,
    options: String,
    fs_type: String,
    source: String,
}

fn unescape(s: &str) -> String {
    s.replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n").replace("\\134", "\\")
}

fn mounts() -> Vec<Mount> {
    let text = fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    text.lines()
        .filter_map(|l| {
            let (pre, post) = l.split_once(" - ")?;
            let a: Vec<&str> = pre.split(' ').collect();
            let b: Vec<&str> = post.split(' ').collect();
            let (maj, min) = a.get(2)?.split_once(':')?;
            let mut opts: Vec<String> = a.get(5)?.split(',').map(str::to_string).collect();
            for o in b.get(2).unwrap_or(&"").split(',') {
                if !o.is_empty() && !opts.iter().any(|x| x == o) {
                    opts.push(o.to_string());
                }
            }
            Some(Mount {
                dev: (maj.parse().ok()?, min.parse().ok()?),
                point: PathBuf::from(unescape(a.get(4)?)),
                options: opts.join(","),
                fs_type: b.first()?.to_string(),
                source: unescape(b.get(1).unwrap_or(&"")),
            })
        })
        .collect()
}

/// The mount holding `path` (the longest mount point above it; the last one
/// listed wins when several share it).
fn mount_of(path: &Path, all: &[Mount]) -> Option<usize> {
    let mut best: Option<(usize, usize)> = None;
    for (i, m) in all.iter().enumerate() {
        if path.starts_with(&m.point) {
            let depth = m.point.components().filter(|c| matches!(c, Component::Normal(_))).count();
            match best {
                Some((d, _)) if depth < d => {}
                _ => best = Some((depth, i)),
            }
        }
    }
    best.map(|(_, i)| i)
}

/// Whole-disk name in /sys/block for a device number (a partition's parent).
pub fn disk_of(dev: (u32, u32)) -> Option<String> {
    let link = fs::canonicalize(format!("/sys/dev/block/{}:{}", dev.0, dev.1)).ok()?;
    let disk = if link.join("partition").exists() { link.parent()?.to_path_buf() } else { link };
    Some(disk.file_name()?.to_string_lossy().into_owned())
}

/// The whole disk holding `path`, if it is on a block device.
pub fn disk_of_path(path: &Path) -> Option<String> {
    let all = mounts();
    let m = &all[mount_of(path, &all)?];
    if m.dev.0 == 0 {
        return None;
    }
    disk_of(m.dev)
}

fn dir_info(role: &str, path: &Path) -> Dir {
    let path = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let all = mounts();
    let m = mount_of(&path, &all).map(|i| &all[i]);
    let device = m.filter(|m| m.dev.0 != 0).and_then(|m| disk_of(m.dev));
    let sys = |f: &str| device.as_ref().and_then(|d| read_trim(format!("/sys/block/{d}/{f}")));
    let (free, total) = statvfs(&path).map_or((None, None), |(f, t)| (Some(f), Some(t)));
    Dir {
        role: role.to_string(),
        path: path.display().to_string(),
        fs_type: m.map(|m| m.fs_type.clone()),
        mount_point: m.map(|m| m.point.display().to_string()),
        mount_options: m.map(|m| m.options.clone()),
        source: m.map(|m| m.source.clone()),
        model: sys("device/model"),
        vendor: sys("device/vendor"),
        scheduler: sys("queue/scheduler"),
        rotational: sys("queue/rotational").map(|r| r == "1"),
        device,
        free_bytes: free,
        total_bytes: total,
    }
}

/// (available to unprivileged users, total) bytes of the file system holding `path`.
pub fn statvfs(path: &Path) -> Option<(u64, u64)> {
    let c = CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: statvfs is plain data; zeroed is a valid value to be overwritten.
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: c is a valid NUL-terminated path and s a valid out-pointer.
    if unsafe { libc::statvfs(c.as_ptr(), &mut s) } != 0 {
        return None;
    }
    let frsize = s.f_frsize as u64;
    Some((s.f_bavail as u64 * frsize, s.f_blocks as u64 * frsize))
}

fn block_devices() -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir("/sys/block")
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| !(n.starts_with("loop") || n.starts_with("ram") || n.starts_with("zram")))
                .filter(|n| read_trim(format!("/sys/block/{n}/size")).is_some_and(|s| s != "0"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

fn build_of(exe: &Path, ask_version: bool) -> Build {
    let dir = exe.parent().unwrap_or(Path::new("."));
    let git = |args: &[&str]| -> Option<String> {
        let out = Command::new("git").arg("-C").arg(dir).args(args).output().ok()?;
        out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    let version = if ask_version {
        Command::new(exe)
            .arg("--version")
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .filter(|s| !s.is_empty())
    } else {
        Some(format!("xsort-bench {}", env!("CARGO_PKG_VERSION")))
    };
    // A profile's directory lies in the target directory, which cargo tags CACHEDIR.TAG.
    let in_target = dir.parent().is_some_and(|t| t.join("CACHEDIR.TAG").is_file());
    let profile = match dir.file_name() {
        Some(n) if in_target => n.to_string_lossy().into_owned(),
        _ => "unknown (not in a cargo target directory)".to_string(),
    };
    Build {
        path: exe.display().to_string(),
        version,
        git_commit: git(&["rev-parse", "HEAD"]),
        git_dirty: git(&["status", "--porcelain", "--untracked-files=no"]).map(|s| !s.is_empty()),
        build_profile: profile,
        built_utc: fs::metadata(exe)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| utc(d.as_secs())),
    }
}

/// Seconds since the epoch as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn utc(secs: u64) -> String {
    let days = (secs / 86400) as i64;
    let rem = secs % 86400;
    // Civil from days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem / 60 % 60, rem % 60)
}

/// Now as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn utc_now() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    utc(secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(utc(1_700_000_000), "2023-11-14T22:13:20Z");
    }

    #[test]
    fn context_of_tmp() {
        let dir = std::env::temp_dir();
        let c = collect(&[("data", &dir)], Path::new("/bin/true"), &Probe::NotMeasured("x".into()), Path::new("/x"));
        assert!(c.cpu.threads >= 1);
        assert!(c.memory.total_bytes > 0);
        assert!(c.dirs[0].fs_type.is_some());
        assert!(c.dirs[0].free_bytes.is_some());
    }
}
