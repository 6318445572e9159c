//! Inside a container's limits: the real `xsort` binary run in a memory cgroup far smaller than the
//! machine (as a container, a systemd unit's `MemoryMax` or a batch job holds it), and in a CPU
//! cgroup with a quota of one CPU. With a budget taken from the host's memory, the sort is killed
//! by the OOM killer; it must instead take its default budget from the cgroup's room, finish, and
//! say in its statistics which limit chose the budget.
//!
//! Making a cgroup needs root and a writable cgroup file system (v1 or v2). CI runs as root and
//! must have one (CI set: a missing one fails the test); elsewhere the tests say that they did not
//! run and why.

use crate::common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A child cgroup of this process's own, removed on drop (its processes have exited by then).
struct Cgroup {
    dir: PathBuf,
}

impl Cgroup {
    /// A new child cgroup of this process's cgroup in the hierarchy of `controller` (`memory` or
    /// `cpu`), with `files` written into it; None (with the reason) when that cannot be done.
    fn new(controller: &str, files: &[(&str, String)]) -> Result<Cgroup, String> {
        let own = std::fs::read_to_string("/proc/self/cgroup").map_err(|e| format!("/proc/self/cgroup: {e}"))?;
        let v1 = own.lines().find_map(|l| {
            let mut p = l.splitn(3, ':');
            let (_, c, path) = (p.next()?, p.next()?, p.next()?);
            c.split(',').any(|c| c == controller).then(|| path.to_owned())
        });
        let base = match v1 {
            Some(path) => {
                let mount = ["/sys/fs/cgroup/", controller].concat();
                let alt = if controller == "cpu" { "/sys/fs/cgroup/cpu,cpuacct" } else { "" };
                let mount = if Path::new(&mount).is_dir() || alt.is_empty() { mount } else { alt.to_owned() };
                PathBuf::from(mount).join(path.trim_start_matches('/'))
            }
            None => {
                let path = own.lines().find_map(|l| l.strip_prefix("0::")).ok_or("no cgroup of this process")?;
                PathBuf::from("/sys/fs/cgroup").join(path.trim_start_matches('/'))
            }
        };
        let dir = base.join(format!("xsort-test-{}-{}", std::process::id(), rand_suffix()));
        std::fs::create_dir(&dir).map_err(|e| format!("cannot make a cgroup at {}: {e}", dir.display()))?;
        let cg = Cgroup { dir };
        for (name, value) in files {
            std::fs::write(cg.dir.join(name), value).map_err(|e| format!("cannot write {name} of {}: {e}", cg.dir.display()))?;
        }
        Ok(cg)
    }

    /// `cmd` (an `xsort` under `sh`, see [`Fixture::cmd_under_sh`]) with the shell entering this
    /// cgroup before it executes xsort.
    fn prelude(&self) -> String {
        format!("echo $$ > '{}'", self.dir.join("cgroup.procs").display())
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        // The cgroup can be removed once its last process has exited; that takes a moment.
        for _ in 0..100 {
            if std::fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}

fn rand_suffix() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos() as u64)
}

/// The cgroup with the v1 `files` (or, failing that, the v2 ones), or None after saying why the
/// test did not run (a failure in CI: `xsort_testkit::not_run`).
fn cgroup_or_skip(controller: &str, v1: &[(&str, String)], v2: &[(&str, String)]) -> Option<Cgroup> {
    if !xsort_testkit::root() {
        return None;
    }
    match Cgroup::new(controller, v1).or_else(|_| Cgroup::new(controller, v2)) {
        Ok(cg) => Some(cg),
        Err(why) => {
            xsort_testkit::not_run(&format!("needs a writable {controller} cgroup: {why}"));
            None
        }
    }
}

const MIB: u64 = 1 << 20;

/// Runs `args` under the default budget in a memory cgroup of `limit` bytes, and returns the
/// statistics; the sort must finish (not be killed) with a budget of at most `percent`% of the
/// cgroup's limit.
fn sort_in_memory_cgroup(fx: &Fixture, limit: u64, args: &[&str], percent: u64) -> serde_json::Value {
    let (v1, v2) = ([("memory.limit_in_bytes", limit.to_string())], [("memory.max", limit.to_string())]);
    let Some(cg) = cgroup_or_skip("memory", &v1, &v2) else {
        return serde_json::Value::Null;
    };
    let mut cmd: Command = fx.cmd_under_sh(&cg.prelude());
    cmd.args(args).args(["--stats-json", "stats.json"]);
    let out = run(&mut cmd);
    assert!(out.status.success(), "xsort in a {} MiB cgroup: {:?} {}", limit / MIB, out.status, String::from_utf8_lossy(&out.stderr));
    let stats = read_stats(&fx.path("stats.json"));
    let budget = stat_u64(&stats, "memory_budget_bytes");
    assert!(budget <= limit / 100 * percent, "budget {budget} in a cgroup of {limit}: {stats}");
    let basis = stats["memory_budget_basis"].as_str().unwrap_or_default();
    assert!(basis.contains("memory cgroup"), "the statistics must say the cgroup chose the budget: {basis:?}");
    stats
}

#[test]
fn records_in_a_memory_cgroup_far_below_the_machine_take_their_budget_from_it() {
    let fx = Fixture::new();
    // 150 MB of records in a 64 MiB cgroup: a budget from the host's memory sorts them in one pass
    // and is killed; the cgroup's room spills them.
    let input = fx.path("in");
    let checksum = gensort(&input, 0, 1_500_000, false);
    let stats = sort_in_memory_cgroup(&fx, 64 * MIB, &["--record-size=100", "--key-bytes=0:10", "-o", "out", "in"], 50);
    if stats.is_null() {
        return;
    }
    assert!(stat_u64(&stats, "runs") > 1, "{stats}");
    assert_valsort_clean(&fx.path("out"), 1_500_000, checksum);
    fx.assert_clean();
}

#[test]
fn lines_in_a_memory_cgroup_far_below_the_machine_are_not_mapped_beyond_it() {
    let fx = Fixture::new();
    let mut text = Vec::new();
    let mut rng = Rng::new(7);
    while text.len() < 120 << 20 {
        let len = 10 + rng.below(60);
        text.extend((0..len).map(|_| b'a' + rng.below(26) as u8));
        text.push(b'\n');
    }
    let input = fx.write("in", &text);
    evict(&input);
    let stats = sort_in_memory_cgroup(&fx, 64 * MIB, &["-o", "out", "in"], 50);
    if stats.is_null() {
        return;
    }
    assert_eq!(stats["input_mapped"], serde_json::Value::Bool(false), "{stats}");
    let mut lines: Vec<&[u8]> = text.split_inclusive(|&b| b == b'\n').collect();
    lines.sort();
    assert!(std::fs::read(fx.path("out")).unwrap() == lines.concat(), "output differs from the sorted lines");
    fx.assert_clean();
}

#[test]
fn a_cpu_quota_of_one_cpu_gives_one_worker_thread() {
    if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        xsort_testkit::not_run("one CPU only, so a quota of one CPU changes nothing");
        return;
    }
    let fx = Fixture::new();
    let v1 = [("cpu.cfs_period_us", "100000".to_owned()), ("cpu.cfs_quota_us", "100000".to_owned())];
    let Some(cg) = cgroup_or_skip("cpu", &v1, &[("cpu.max", "100000 100000".to_owned())]) else {
        return;
    };
    fx.write("in", b"b\na\n");
    for extra in [&[][..], &["--parallel=64"]] {
        let mut cmd = fx.cmd_under_sh(&cg.prelude());
        cmd.args(["-o", "out", "--stats-json", "stats.json", "in"]).args(extra);
        ok(&mut cmd);
        assert_eq!(stat_u64(&read_stats(&fx.path("stats.json")), "threads"), 1, "{extra:?}");
    }
}
