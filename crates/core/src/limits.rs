//! The memory this process may really use: the smallest of physical memory, the kernel's
//! `MemAvailable`, the room its memory cgroup leaves (a container, a systemd unit's `MemoryMax`, a
//! batch job) and the room `RLIMIT_AS` leaves.
//!
//! A budget taken from the host's memory alone gets a sort killed inside a container: in a cgroup
//! limited to 1 GiB on a 23 GiB host, half of `MemAvailable` is 11.5 GiB, and the first chunk meets
//! the OOM killer. The page cache of a mapped input is charged to the cgroup too, so the choice to
//! map an input must take the same limit, or the sort thrashes.
//!
//! The cgroup's room is its limit less the memory it holds that cannot be given back: its usage
//! less its inactive file pages (the page cache the kernel reclaims first, as `docker stats`
//! counts it). The room of every ancestor cgroup counts too (a child without a limit of its own
//! lives within its parent's), and both hierarchies are read: v2 (`memory.max`, `memory.high`,
//! `memory.current`) and v1 (`memory.limit_in_bytes`, `memory.usage_in_bytes`), found through
//! `/proc/self/cgroup` and `/proc/self/mountinfo`. Reading is best effort: a file that cannot be
//! read or parsed imposes no limit.

use std::path::{Path, PathBuf};

/// Which limit sets the memory this process may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemoryBound {
    /// The machine's physical memory.
    Physical,
    /// The kernel's estimate of memory available without swapping (`MemAvailable`).
    Available,
    /// The room the process's memory cgroup (or an ancestor's) leaves.
    Cgroup,
    /// The address space `RLIMIT_AS` leaves.
    AddressSpace,
}

impl MemoryBound {
    /// Words for messages and statistics.
    pub fn describe(self) -> &'static str {
        match self {
            MemoryBound::Physical => "physical memory",
            MemoryBound::Available => "available memory (MemAvailable)",
            MemoryBound::Cgroup => "the memory cgroup's limit less its use",
            MemoryBound::AddressSpace => "the address-space limit (ulimit -v) less its use",
        }
    }

    /// Words for the limit itself, as [`MemoryLimits::ceiling`] takes it.
    pub fn describe_limit(self) -> &'static str {
        match self {
            MemoryBound::Physical | MemoryBound::Available => "physical memory",
            MemoryBound::Cgroup => "the memory cgroup's limit",
            MemoryBound::AddressSpace => "the address-space limit (ulimit -v)",
        }
    }
}

/// What limits this process's memory, read once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryLimits {
    /// Physical memory.
    pub physical: u64,
    /// `MemAvailable`.
    pub available: u64,
    /// The memory cgroup's room and its limit (the smallest over the hierarchy), if limited.
    pub cgroup: Option<Room>,
    /// The room `RLIMIT_AS` leaves and the limit itself, if limited.
    pub address_space: Option<Room>,
}

/// A limit and the room it leaves now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Room {
    /// The limit.
    pub limit: u64,
    /// The limit less what is held now that cannot be given back.
    pub room: u64,
}

impl MemoryLimits {
    /// Reads the limits of this process now.
    pub fn read() -> Self {
        let (physical, available) = meminfo();
        MemoryLimits { physical, available, cgroup: cgroup_room(Path::new("/")), address_space: address_space_room() }
    }

    /// The memory this process may use now (for the default budget, the clamp of a large budget
    /// and the choice to map an input), and the limit that sets it.
    pub fn usable(&self) -> (u64, MemoryBound) {
        let mut best = (self.physical, MemoryBound::Physical);
        let mut consider = |bytes: u64, bound| {
            if bytes < best.0 {
                best = (bytes, bound);
            }
        };
        consider(self.available, MemoryBound::Available);
        if let Some(c) = self.cgroup {
            consider(c.room, MemoryBound::Cgroup);
        }
        if let Some(a) = self.address_space {
            consider(a.room, MemoryBound::AddressSpace);
        }
        best
    }

    /// The most memory this process may ever hold (the base of `-S N%`): the smallest of physical
    /// memory, the cgroup's limit and the address-space limit, and the limit that sets it.
    pub fn ceiling(&self) -> (u64, MemoryBound) {
        let mut best = (self.physical, MemoryBound::Physical);
        for (limit, bound) in
            [(self.cgroup.map(|c| c.limit), MemoryBound::Cgroup), (self.address_space.map(|a| a.limit), MemoryBound::AddressSpace)]
        {
            if let Some(l) = limit.filter(|&l| l < best.0) {
                best = (l, bound);
            }
        }
        best
    }
}

/// Physical memory and `MemAvailable` in bytes, from /proc/meminfo (sysconf as fallback).
fn meminfo() -> (u64, u64) {
    let text = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let field = |name: &str| field_kib(&text, name);
    // SAFETY: sysconf has no preconditions.
    let pages = unsafe { libc::sysconf(libc::_SC_PHYS_PAGES) }.max(0) as u64;
    // SAFETY: as above.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as u64;
    let total = field("MemTotal:").unwrap_or(pages * page);
    (total, field("MemAvailable:").unwrap_or(total / 2))
}

/// The value in bytes of a `NAME: N kB` line.
fn field_kib(text: &str, name: &str) -> Option<u64> {
    text.lines()
        .find(|l| l.starts_with(name))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse::<u64>().ok())
        .map(|kib| kib.saturating_mul(1024))
}

/// The address space `RLIMIT_AS` leaves (the limit less the process's `VmSize`), if limited.
fn address_space_room() -> Option<Room> {
    // SAFETY: rlimit is plain data and getrlimit fills it.
    let limit = unsafe {
        let mut r: libc::rlimit = std::mem::zeroed();
        (libc::getrlimit(libc::RLIMIT_AS, &mut r) == 0 && r.rlim_cur != libc::RLIM_INFINITY).then_some(r.rlim_cur)
    }?;
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let used = field_kib(&status, "VmSize:").unwrap_or(0);
    Some(Room { limit, room: limit.saturating_sub(used) })
}

/// One cgroup hierarchy's mount: where it is mounted, the cgroup path its root stands for, and
/// whether it is v2.
struct Mount {
    point: PathBuf,
    root: String,
    v2: bool,
}

/// The memory controller's mounts under `root` (`/` outside tests): a v1 hierarchy with the
/// `memory` option and the v2 hierarchy.
fn memory_mounts(root: &Path) -> Vec<Mount> {
    let text = std::fs::read_to_string(root.join("proc/self/mountinfo")).unwrap_or_default();
    let mut mounts = Vec::new();
    for line in text.lines() {
        // ID PARENT MAJ:MIN ROOT POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER_OPTIONS
        let Some((before, after)) = line.split_once(" - ") else { continue };
        let fields: Vec<&str> = before.split(' ').collect();
        let tail: Vec<&str> = after.split(' ').collect();
        let (Some(&mount_root), Some(&point), Some(&fstype)) = (fields.get(3), fields.get(4), tail.first()) else { continue };
        let v2 = fstype == "cgroup2";
        let v1_memory = fstype == "cgroup" && tail.get(2).is_some_and(|o| o.split(',').any(|o| o == "memory"));
        if v2 || v1_memory {
            let point = root.join(unescape_mount(point).trim_start_matches('/'));
            mounts.push(Mount { point, root: unescape_mount(mount_root), v2 });
        }
    }
    mounts
}

/// Undoes mountinfo's octal escapes (`\040` for a space).
fn unescape_mount(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let octal = b.get(i + 1..i + 4).and_then(|d| std::str::from_utf8(d).ok()).and_then(|d| u8::from_str_radix(d, 8).ok());
        match (b[i], octal) {
            (b'\\', Some(v)) => {
                out.push(v);
                i += 4;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// This process's cgroup path in the v2 hierarchy (`0::PATH`) or the v1 memory hierarchy.
fn cgroup_path(root: &Path, v2: bool) -> Option<String> {
    let text = std::fs::read_to_string(root.join("proc/self/cgroup")).ok()?;
    text.lines().find_map(|line| {
        let mut parts = line.splitn(3, ':');
        let (id, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let matches = if v2 { id == "0" && controllers.is_empty() } else { controllers.split(',').any(|c| c == "memory") };
        matches.then(|| path.to_owned())
    })
}

/// The smallest room that the memory cgroups of this process (its own and each ancestor's, in
/// both hierarchies) leave, with that cgroup's limit; None when no cgroup is limited.
fn cgroup_room(root: &Path) -> Option<Room> {
    let mut best: Option<Room> = None;
    for mount in memory_mounts(root) {
        let Some(path) = cgroup_path(root, mount.v2) else { continue };
        // The path is relative to the cgroup namespace's root, which the mount's root names
        // (`/` outside a container's namespace); keep what lies below the mount.
        let below = path.strip_prefix(mount.root.trim_end_matches('/')).unwrap_or(&path);
        let mut dir = mount.point.join(below.trim_start_matches('/'));
        loop {
            if let Some(room) = room_of(&dir, mount.v2) {
                if best.is_none_or(|b| room.room < b.room) {
                    best = Some(room);
                }
            }
            if dir == mount.point || !dir.pop() || !dir.starts_with(&mount.point) {
                break;
            }
        }
    }
    best
}

/// The room one cgroup directory leaves, if it has a limit.
fn room_of(dir: &Path, v2: bool) -> Option<Room> {
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).ok();
    let number = |name: &str| read(name).and_then(|t| t.trim().parse::<u64>().ok());
    let (limit, usage) = if v2 {
        // memory.high throttles a cgroup hard once crossed; memory.max gets it killed.
        let limit = ["memory.max", "memory.high"].into_iter().filter_map(number).min()?;
        (limit, number("memory.current")?)
    } else {
        (number("memory.limit_in_bytes")?, number("memory.usage_in_bytes")?)
    };
    // v1 writes "no limit" as a huge number (PAGE_COUNTER_MAX pages); no machine has 2^60 bytes.
    if limit >= 1 << 60 {
        return None;
    }
    let stat = read("memory.stat").unwrap_or_default();
    let stat_field = |name: &str| {
        stat.lines().find_map(|l| l.strip_prefix(name).and_then(|v| v.strip_prefix(' ')).and_then(|v| v.trim().parse::<u64>().ok()))
    };
    let inactive_file =
        if v2 { stat_field("inactive_file") } else { stat_field("total_inactive_file").or_else(|| stat_field("inactive_file")) };
    let held = usage.saturating_sub(inactive_file.unwrap_or(0));
    Some(Room { limit, room: limit.saturating_sub(held) })
}

/// Worker threads for a request (None: all): at most the CPUs this process may run on, its
/// affinity mask and its cgroup's CPU quota (v1 `cpu.cfs_quota_us`, v2 `cpu.max`; the standard
/// library's `available_parallelism` reads both). More threads than CPUs cannot sort faster, and
/// each costs a stack and a start, so a request for thousands would spend seconds starting threads
/// (or fail to) and gain nothing. Every front end (the command's `--parallel`, the library's
/// `threads`, the C library's `-processes`, Python's `threads=`) takes its count through here.
pub fn worker_threads(requested: Option<usize>) -> usize {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    requested.map_or(cpus, |n| n.clamp(1, cpus))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lays out a fake `/proc/self` and cgroup tree under a temp root.
    fn fake_root(mountinfo: &str, cgroup: &str, files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("proc/self")).unwrap();
        std::fs::write(root.join("proc/self/mountinfo"), mountinfo).unwrap();
        std::fs::write(root.join("proc/self/cgroup"), cgroup).unwrap();
        for (path, text) in files {
            let p = root.join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        dir
    }

    const V1_MOUNTS: &str = "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n\
        35 31 0:31 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n\
        32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n";

    #[test]
    fn a_v1_memory_cgroup_limits_by_its_room_less_reclaimable_page_cache() {
        let d = fake_root(
            V1_MOUNTS,
            "4:memory:/job/step\n1:cpu:/\n0::/\n",
            &[
                ("sys/fs/cgroup/memory/job/step/memory.limit_in_bytes", "9223372036854771712\n"),
                ("sys/fs/cgroup/memory/job/step/memory.usage_in_bytes", "1000\n"),
                ("sys/fs/cgroup/memory/job/memory.limit_in_bytes", "1073741824\n"),
                ("sys/fs/cgroup/memory/job/memory.usage_in_bytes", "300000000\n"),
                ("sys/fs/cgroup/memory/job/memory.stat", "cache 5\ntotal_inactive_file 100000000\n"),
            ],
        );
        // The step has no limit; its parent's limit counts, less what is held and not reclaimable.
        assert_eq!(cgroup_room(d.path()), Some(Room { limit: 1 << 30, room: (1 << 30) - 200_000_000 }));
    }

    #[test]
    fn a_v2_cgroup_in_a_namespace_takes_the_smaller_of_max_and_high() {
        let d = fake_root(
            "30 23 0:26 /ns /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n",
            "0::/ns/app\n",
            &[
                ("sys/fs/cgroup/app/memory.max", "536870912\n"),
                ("sys/fs/cgroup/app/memory.high", "max\n"),
                ("sys/fs/cgroup/app/memory.current", "10000\n"),
                ("sys/fs/cgroup/app/memory.stat", "anon 10000\ninactive_file 0\n"),
                ("sys/fs/cgroup/memory.max", "268435456\n"),
                ("sys/fs/cgroup/memory.current", "268435456\n"),
            ],
        );
        // The namespace root is full: no room left at all, though the app's own limit is larger.
        assert_eq!(cgroup_room(d.path()), Some(Room { limit: 256 << 20, room: 0 }));
    }

    #[test]
    fn no_cgroup_files_or_no_limits_impose_nothing() {
        let d = fake_root("", "", &[]);
        assert_eq!(cgroup_room(d.path()), None);
        let d = fake_root(
            "30 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
            "0::/user.slice\n",
            &[("sys/fs/cgroup/user.slice/memory.max", "max\n"), ("sys/fs/cgroup/user.slice/memory.current", "5\n")],
        );
        assert_eq!(cgroup_room(d.path()), None);
    }

    #[test]
    fn the_smallest_limit_wins_and_is_named() {
        let limits = MemoryLimits {
            physical: 16 << 30,
            available: 12 << 30,
            cgroup: Some(Room { limit: 2 << 30, room: 1 << 30 }),
            address_space: None,
        };
        assert_eq!(limits.usable(), (1 << 30, MemoryBound::Cgroup));
        assert_eq!(limits.ceiling(), (2 << 30, MemoryBound::Cgroup));
        let free = MemoryLimits { cgroup: None, ..limits };
        assert_eq!(free.usable(), (12 << 30, MemoryBound::Available));
        assert_eq!(free.ceiling(), (16 << 30, MemoryBound::Physical));
        let rlimited = MemoryLimits { address_space: Some(Room { limit: 1 << 29, room: 1 << 28 }), ..free };
        assert_eq!(rlimited.usable(), (1 << 28, MemoryBound::AddressSpace));
        assert_eq!(rlimited.ceiling(), (1 << 29, MemoryBound::AddressSpace));
    }

    #[test]
    fn mount_points_with_spaces_are_unescaped() {
        assert_eq!(unescape_mount("/a\\040b"), "/a b");
        assert_eq!(unescape_mount("/plain\\"), "/plain\\");
    }

    #[test]
    fn thread_requests_are_capped_at_the_cpus() {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert_eq!(worker_threads(None), cpus);
        assert_eq!(worker_threads(Some(1_000_000)), cpus);
        assert_eq!(worker_threads(Some(0)), 1);
        assert_eq!(worker_threads(Some(1)), 1);
    }
}
