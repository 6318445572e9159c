//! One benchmark run: generate the input (gensort, checksum kept), measure
//! the I/O floor (measured runs only, not search probes), put the input in
//! the requested cache state, sort it with the `xsort` binary as a child
//! process (launch included in the wall time), and validate the output with
//! valsort's logic.
//!
//! A run is valid only if xsort exited with status 0 and the output has the
//! generator's record count and checksum with no record out of order. An
//! invalid run keeps every fact about it in the report, with its problems
//! spelled out, and is excluded from every figure.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context, Result};
use serde::Serialize;
use xsort_sortbench::{validate_file, ValidateOptions};

use crate::cli::{Cache, Settings};
use crate::cluster::{self, ClusterRun};
use crate::dataset::{self, Dataset};
use crate::energy::Zone;
use crate::floor::{self, Floor};
use crate::monitor::{MachineUse, Monitor};
use crate::progress::Progress;
use crate::xstats::XsortStats;

/// What valsort's logic found in the output.
#[derive(Clone, Debug, Serialize)]
pub struct Validation {
    pub records: u64,
    pub unordered: u64,
    pub first_unordered: Option<u64>,
    pub duplicates: u64,
    pub checksum: String,
}

/// Everything about one run.
#[derive(Clone, Debug, Serialize)]
pub struct Run {
    /// 1-based, in the order runs happened.
    pub index: usize,
    /// "measure" (counts in the figures when valid), "search" (a size probe)
    /// or "confirm" (a confirmation at a size that then failed the limit).
    pub purpose: String,
    pub input: Dataset,
    pub cache: Cache,
    /// Share of the input's pages in the page cache just before the launch.
    pub input_resident_fraction: f64,
    pub floor: Option<Floor>,
    /// The exact command line, shell-quoted.
    pub command: String,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    /// From just before the launch to the child's exit.
    pub wall_s: f64,
    pub child_user_s: f64,
    pub child_system_s: f64,
    pub child_max_rss_bytes: u64,
    pub machine: MachineUse,
    /// wall_s / floor.total_s.
    pub ratio_to_floor: Option<f64>,
    pub valid: bool,
    pub problems: Vec<String>,
    pub validation: Option<Validation>,
    /// Last lines of xsort's standard error when it said anything.
    pub stderr_tail: Option<String>,
    /// xsort's --stats-json, when it wrote one (not on the cluster: see `cluster`).
    pub xsort_stats: Option<XsortStats>,
    /// On the cluster (--ranks), xsort-mpi's --stats-json: each rank's host, share and exchange.
    pub cluster: Option<ClusterRun>,
}

/// Runs cycles in one work directory.
pub struct Runner<'a> {
    pub settings: &'a Settings,
    pub work: PathBuf,
    /// Block devices watched for busy time (those under --dir and -T).
    pub devices: Vec<String>,
    pub energy: Option<Vec<Zone>>,
    pub progress: &'a Progress,
    pub count: usize,
}

impl Runner<'_> {
    fn path(&self, name: &str) -> PathBuf {
        self.work.join(name)
    }

    /// One full cycle on `records` records.
    pub fn run(&mut self, records: u64, purpose: &str) -> Result<Run> {
        self.count += 1;
        let index = self.count;
        let s = self.settings;
        let input = self.path("input.dat");
        let output = self.path("output.dat");
        let stats = self.path("stats.json");
        let stderr = self.path("xsort-stderr.txt");
        for p in [&output, &stats] {
            let _ = fs::remove_file(p);
        }
        let mb = records as f64 * 100.0 / 1e6;
        let (data, fl, resident) = self.prepare_input(index, records, mb, purpose, &input)?;

        let (program, args) = sort_command(s, xsort_args(s, &self.work, &stats, &output, &input));
        let command = shell_words(&program, &args);
        self.progress.step(format!("run {index}: sorting {mb:.1} MB"));
        let err_file = File::create(&stderr).with_context(|| format!("creating {}", stderr.display()))?;
        let monitor = Monitor::start(self.devices.clone(), self.energy.clone());
        let t0 = Instant::now();
        let child = Command::new(&program).args(&args).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::from(err_file)).spawn();
        let waited = child.map_err(anyhow::Error::from).and_then(|c| wait4(c.id()));
        let wall_s = t0.elapsed().as_secs_f64();
        let machine = monitor.finish();
        let (status, usage) = waited.with_context(|| format!("running {}", program.display()))?;

        let (exit_code, signal) = decode_status(status);
        let mut problems = exit_problems(exit_code, signal);
        let stderr_tail = fs::read_to_string(&stderr).ok().map(|t| tail(&t, 10)).filter(|t| !t.is_empty());
        let (xsort_stats, cluster) = read_stats(s, &stats);

        crate::interrupt::check()?;
        self.progress.step(format!("run {index}: validating"));
        let validation = validate(&output, &data, &mut problems);
        let _ = fs::remove_file(&output);
        let _ = fs::remove_file(&stats);
        let valid = problems.is_empty();
        if !valid {
            self.progress.println(format!("INVALID RUN {index}: {} -- excluded from every figure", problems.join("; ")));
        }
        Ok(Run {
            index,
            purpose: purpose.to_string(),
            ratio_to_floor: fl.as_ref().map(|f| wall_s / f.total_s.max(1e-9)),
            input: data,
            cache: s.cache,
            input_resident_fraction: resident,
            floor: fl,
            command,
            exit_code,
            signal,
            wall_s,
            child_user_s: usage.0,
            child_system_s: usage.1,
            child_max_rss_bytes: usage.2,
            machine,
            valid,
            problems,
            validation,
            stderr_tail,
            xsort_stats,
            cluster,
        })
    }

    /// Readies a run's input: generates it, measures its I/O floor (measured runs only) and puts
    /// it in the requested cache state; returns the dataset, the floor and the input's resident
    /// fraction.
    fn prepare_input(&self, index: usize, records: u64, mb: f64, purpose: &str, input: &Path) -> Result<(Dataset, Option<Floor>, f64)> {
        let s = self.settings;
        crate::interrupt::check()?;
        self.progress.step(format!("run {index}: generating {records} records ({mb:.1} MB)"));
        let data = dataset::generate(input, records, s.format, s.skew)?;
        crate::interrupt::check()?;
        // Search probes only need a time; measured runs get their floor.
        let fl = if purpose == "measure" {
            self.progress.step(format!("run {index}: I/O floor"));
            let cfg = floor::Config { transfer: s.floor_transfer, inflight: s.floor_inflight };
            Some(floor::measure(input, &self.path("floor.tmp"), cfg)?)
        } else {
            None
        };
        crate::interrupt::check()?;
        self.progress.step(format!("run {index}: {} cache", if s.cache == Cache::Cold { "evicting; cold" } else { "warming" }));
        // Flush everyone's dirty pages now, not during the timed sort.
        // SAFETY: sync() has no preconditions.
        unsafe { libc::sync() };
        let resident = dataset::prepare(input, s.cache)?;
        Ok((data, fl, resident))
    }
}

/// The problems xsort's exit shows: none for status 0, else the signal or status it ended with.
fn exit_problems(exit_code: Option<i32>, signal: Option<i32>) -> Vec<String> {
    match (exit_code, signal) {
        (Some(0), _) => vec![],
        (_, Some(sig)) => vec![format!("xsort was killed by signal {sig}")],
        (Some(c), _) => vec![format!("xsort exited with status {c}")],
        _ => vec!["xsort ended abnormally".to_string()],
    }
}

/// The sort's --stats-json at `stats`, when it wrote one: xsort's, or on the cluster (--ranks)
/// xsort-mpi's.
fn read_stats(s: &Settings, stats: &Path) -> (Option<XsortStats>, Option<ClusterRun>) {
    match (&s.ranks, fs::read_to_string(stats).ok()) {
        (_, None) => (None, None),
        (Some(_), Some(t)) => (None, ClusterRun::parse(&t)),
        (None, Some(t)) => (serde_json::from_str::<XsortStats>(&t).ok(), None),
    }
}

/// The program and arguments of a run's sort: xsort with `args`, or on the cluster
/// `mpirun ... -np N xsort-mpi` with the same arguments.
fn sort_command(s: &Settings, mut args: Vec<String>) -> (PathBuf, Vec<String>) {
    match &s.ranks {
        Some((n, mpirun)) => {
            let (program, mut prefix) = cluster::launch_prefix(s, *n, mpirun);
            prefix.append(&mut args);
            (program, prefix)
        }
        None => (s.xsort.clone(), args),
    }
}

/// Checks a run's output against the generator's record count and checksum, as valsort does; adds
/// what is wrong to `problems`. None when the output cannot be read.
fn validate(output: &Path, data: &Dataset, problems: &mut Vec<String>) -> Option<Validation> {
    let sum = match validate_file(output, &ValidateOptions::default()) {
        Ok(sum) => sum,
        Err(e) => {
            problems.push(format!("output cannot be validated: {e}"));
            return None;
        }
    };
    let v = Validation {
        records: u64::try_from(sum.records).unwrap_or(u64::MAX),
        unordered: u64::try_from(sum.unordered).unwrap_or(u64::MAX),
        first_unordered: sum.first_unordered.map(|x| u64::try_from(x).unwrap_or(u64::MAX)),
        duplicates: u64::try_from(sum.duplicates).unwrap_or(u64::MAX),
        checksum: format!("{:x}", sum.checksum),
    };
    if v.unordered > 0 {
        problems.push(format!(
            "{} records out of order (first at record {})",
            v.unordered,
            v.first_unordered.map_or("?".into(), |x| x.to_string())
        ));
    }
    if v.records != data.records {
        problems.push(format!("{} records out, {} in", v.records, data.records));
    }
    if sum.checksum != data.checksum_value {
        problems.push(format!("checksum {} differs from the generator's {}", v.checksum, data.checksum));
    }
    Some(v)
}

/// xsort's arguments for one run; the input comes last.
pub fn xsort_args(s: &Settings, work: &Path, stats: &Path, output: &Path, input: &Path) -> Vec<String> {
    let mut a: Vec<String> = vec!["--record-size=100".into(), "--key-bytes=0:10".into()];
    if s.sync {
        a.push("--sync".into());
    }
    if let Some(m) = &s.memory {
        a.extend(["-S".into(), m.clone()]);
    }
    if let Some(t) = s.threads {
        a.extend(["--parallel".into(), t.to_string()]);
    }
    for t in s.temp_dirs(work) {
        a.extend(["-T".into(), t.display().to_string()]);
    }
    if s.buffered {
        a.push("--buffered".into());
    }
    if let Some(t) = &s.transfer_size {
        a.extend(["--transfer-size".into(), t.clone()]);
    }
    a.extend(s.xsort_args.iter().cloned());
    if s.ranks.is_none() {
        // xsort-mpi draws no progress bar.
        a.push("--no-progress".into());
    }
    a.extend(["--stats-json".into(), stats.display().to_string(), "-o".into(), output.display().to_string(), input.display().to_string()]);
    a
}

/// A command line as a shell would need it typed.
pub fn shell_words(program: &Path, args: &[String]) -> String {
    let quote = |w: &str| {
        if !w.is_empty() && w.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,%+@".contains(c)) {
            w.to_string()
        } else {
            format!("'{}'", w.replace('\'', r"'\''"))
        }
    };
    std::iter::once(quote(&program.display().to_string())).chain(args.iter().map(|a| quote(a))).collect::<Vec<_>>().join(" ")
}

/// Waits for the child and returns (status, (user s, system s, max RSS bytes)).
fn wait4(pid: u32) -> Result<(i32, (f64, f64, u64))> {
    let mut status = 0;
    // SAFETY: rusage is plain data; zeroed is a valid value to be overwritten.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: pid is our own unreaped child; both out-pointers are valid.
        let rc = unsafe { libc::wait4(pid as libc::pid_t, &mut status, 0, &mut ru) };
        if rc >= 0 {
            break;
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e).context("wait4");
        }
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Ok((status, (secs(ru.ru_utime), secs(ru.ru_stime), ru.ru_maxrss.max(0) as u64 * 1024)))
}

fn decode_status(status: i32) -> (Option<i32>, Option<i32>) {
    if libc::WIFEXITED(status) {
        (Some(libc::WEXITSTATUS(status)), None)
    } else if libc::WIFSIGNALED(status) {
        (None, Some(libc::WTERMSIG(status)))
    } else {
        (None, None)
    }
}

fn tail(text: &str, lines: usize) -> String {
    let v: Vec<&str> = text.lines().collect();
    v[v.len().saturating_sub(lines)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        let s = shell_words(Path::new("/bin/xsort"), &["-o".into(), "a b".into(), "it's".into()]);
        assert_eq!(s, r"/bin/xsort -o 'a b' 'it'\''s'");
    }

    #[test]
    fn tails() {
        assert_eq!(tail("a\nb\nc\n", 2), "b\nc");
        assert_eq!(tail("", 2), "");
    }
}
