//! Cluster runs (`--ranks N`): the sort is `mpirun -np N xsort-mpi`, launched, timed and validated
//! as `xsort` is. Before the runs a trial launch sorts a few records with Open MPI's selection
//! logged (`pml_base_verbose`, `btl_base_verbose`), so the report can say what the exchange went
//! over: the point-to-point layer (pml), the transports between ranks (btls) and the hosts. The
//! measured runs are launched without that logging.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use crate::cli::Settings;

/// How the cluster was launched and what connected its ranks (from the trial launch).
#[derive(Clone, Debug, Serialize)]
pub struct ClusterContext {
    pub ranks: usize,
    pub mpirun: String,
    /// `mpirun --version`'s first line.
    pub mpi_version: Option<String>,
    /// Options given to mpirun before `-np`.
    pub mpirun_args: Vec<String>,
    /// Each host and the ranks it ran (xsort-mpi's processor names).
    pub hosts: Vec<Host>,
    /// Open MPI's point-to-point layer, as it logged its selection.
    pub pml: Option<String>,
    /// The transports used between distinct ranks (Open MPI's btls; not `self`).
    pub btls: Vec<String>,
    /// In words.
    pub interconnect: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct Host {
    pub name: String,
    pub ranks: Vec<usize>,
}

/// One rank of a cluster run, from xsort-mpi's `--stats-json`.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct RankRun {
    pub rank: usize,
    pub host: String,
    pub elapsed_s: f64,
    pub sorted_bytes: u64,
    pub output_bytes: u64,
    pub exchange: RankExchange,
    /// The rank's local sort (xsort's engine).
    pub sort: Option<RankSort>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct RankSort {
    pub threads: u64,
    pub memory_budget_bytes: u64,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct RankExchange {
    pub rounds: u64,
    pub sent_bytes: u64,
    pub received_bytes: u64,
    pub wait_s: f64,
}

/// The whole job's figures, from xsort-mpi's `--stats-json`.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct Overall {
    pub ranks: usize,
    pub hosts: Vec<String>,
    pub elapsed_s: f64,
    pub exchange_sent_bytes: u64,
    pub exchange_wait_s_max: f64,
    pub exchange_mb_per_s: f64,
    pub largest_share_over_mean: f64,
}

/// xsort-mpi's statistics for one run.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct ClusterRun {
    pub version: String,
    pub overall: Overall,
    pub per_rank: Vec<RankRun>,
}

impl ClusterRun {
    /// xsort-mpi's stats file; None when it is not one (no ranks in it).
    pub fn parse(text: &str) -> Option<ClusterRun> {
        serde_json::from_str::<ClusterRun>(text).ok().filter(|c| c.overall.ranks > 0 && !c.per_rank.is_empty())
    }
}

/// `mpirun` on PATH.
pub fn find_mpirun() -> Result<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        let p = dir.join("mpirun");
        if is_executable(&p) {
            return Ok(p);
        }
    }
    bail!("--ranks needs Open MPI's mpirun on PATH, and there is none (install openmpi-bin, or run without --ranks)")
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The program and the arguments before the sort's own: `mpirun ARGS -np N SORT`.
pub fn launch_prefix(s: &Settings, ranks: usize, mpirun: &Path) -> (PathBuf, Vec<String>) {
    let mut a = s.mpirun_args.clone();
    a.extend(["-np".into(), ranks.to_string(), s.xsort.display().to_string()]);
    (mpirun.to_path_buf(), a)
}

/// The trial launch: `records` records of `input` sorted across the ranks with Open MPI's
/// selection logged; what it says about the cluster.
pub fn probe(s: &Settings, ranks: usize, mpirun: &Path, work: &Path) -> Result<ClusterContext> {
    let input = work.join("probe.dat");
    crate::dataset::generate(&input, 1000, s.format, false)?;
    let (stats, output) = (work.join("probe-stats.json"), work.join("probe-out.dat"));
    let (program, mut args) = launch_prefix(s, ranks, mpirun);
    // The verbosity options go before -np (they are mpirun's).
    let at = args.len() - 3;
    args.splice(at..at, ["--mca", "pml_base_verbose", "10", "--mca", "btl_base_verbose", "10"].map(String::from));
    args.extend(
        ["--record-size=100", "--key-bytes=0:10", "--stats-json", &stats.display().to_string(), "-o", &output.display().to_string()]
            .map(String::from),
    );
    args.push(input.display().to_string());
    let out = Command::new(&program).args(&args).output().with_context(|| format!("running {}", program.display()))?;
    let text = std::fs::read_to_string(&stats).unwrap_or_default();
    for p in [&input, &stats, &output] {
        let _ = std::fs::remove_file(p);
    }
    let log = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        if log.contains("attempt to run as root") {
            bail!("--ranks {ranks}: mpirun refuses to run as root unless OMPI_ALLOW_RUN_AS_ROOT=1 and OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 are set (or --mpirun-arg=--allow-run-as-root is given)");
        }
        let tail: Vec<&str> = log.lines().filter(|l| !l.contains("mca: base:") && !l.contains("select:")).collect();
        bail!(
            "--ranks {ranks}: the trial launch `{}` failed ({}): {}",
            crate::run::shell_words(&program, &args),
            out.status,
            tail[tail.len().saturating_sub(6)..].join(" / ")
        );
    }
    let stats = ClusterRun::parse(&text).context("--ranks: the trial launch wrote no xsort-mpi statistics (is --xsort xsort-mpi?)")?;
    let (pml, btls) = selection(&log);
    let hosts = hosts_of(&stats.per_rank);
    let interconnect = describe(pml.as_deref(), &btls, hosts.len());
    let version = Command::new(mpirun)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).lines().next().map(str::trim).filter(|l| !l.is_empty()).map(str::to_owned));
    Ok(ClusterContext {
        ranks,
        mpirun: mpirun.display().to_string(),
        mpi_version: version,
        mpirun_args: s.mpirun_args.clone(),
        hosts,
        pml,
        btls,
        interconnect,
    })
}

/// The hosts of the ranks, in order of their first rank.
pub fn hosts_of(ranks: &[RankRun]) -> Vec<Host> {
    let mut hosts: Vec<Host> = Vec::new();
    for r in ranks {
        match hosts.iter_mut().find(|h| h.name == r.host) {
            Some(h) => h.ranks.push(r.rank),
            None => hosts.push(Host { name: r.host.clone(), ranks: vec![r.rank] }),
        }
    }
    hosts
}

/// The pml Open MPI selected and the btls it used between distinct ranks, from its log lines
/// `select: component ob1 selected` and `mca: bml: Using vader btl for send to [[J,1],R] on node H`.
pub fn selection(log: &str) -> (Option<String>, Vec<String>) {
    let mut pml = None;
    let mut btls: Vec<String> = Vec::new();
    for line in log.lines() {
        if let Some(rest) = line.split("select: component ").nth(1) {
            if let Some(name) = rest.strip_suffix(" selected") {
                pml = Some(name.trim().to_owned());
            }
        } else if let Some(rest) = line.split("mca: bml: Using ").nth(1) {
            if let Some(name) = rest.split(" btl ").next().map(str::trim) {
                if name != "self" && !btls.iter().any(|b| b == name) {
                    btls.push(name.to_owned());
                }
            }
        }
    }
    btls.sort();
    (pml, btls)
}

/// What a btl is, in words.
fn btl_words(name: &str) -> &'static str {
    match name {
        "vader" | "sm" => "shared memory",
        "smcuda" => "shared memory (CUDA-aware)",
        "tcp" => "TCP/IP",
        "openib" => "InfiniBand verbs",
        "uct" => "UCX transports",
        "usnic" => "Cisco usNIC",
        "ofi" => "libfabric",
        _ => "a transport of Open MPI's",
    }
}

/// The interconnect in words.
pub fn describe(pml: Option<&str>, btls: &[String], hosts: usize) -> String {
    let pml = pml.map_or("a pml it did not log".to_owned(), |p| format!("pml {p}"));
    let over = if btls.is_empty() {
        "no btl between distinct ranks (one rank, or a pml with transports of its own, as ucx)".to_owned()
    } else {
        btls.iter().map(|b| format!("the {b} btl ({})", btl_words(b))).collect::<Vec<_>>().join(" and ")
    };
    let place = if hosts <= 1 { "all ranks on one host, so the exchange crossed no network" } else { "ranks on several hosts" };
    format!("Open MPI's {pml} over {over}; {place}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selection_from_open_mpi_logs() {
        let log = "[vm:1] select: initializing btl component tcp\n\
                   [vm:1] select: component v not in the include list\n\
                   [vm:1] select: component ob1 selected\n\
                   [vm:2] mca: bml: Using vader btl for send to [[16421,1],0] on node vm\n\
                   [vm:2] mca: bml: Using self btl for send to [[16421,1],1] on node vm\n\
                   [vm:1] mca: bml: Using tcp btl for send to [[16421,1],1] on node b\n";
        assert_eq!(selection(log), (Some("ob1".into()), vec!["tcp".into(), "vader".into()]));
        let d = describe(Some("ob1"), &["vader".into()], 1);
        assert_eq!(d, "Open MPI's pml ob1 over the vader btl (shared memory); all ranks on one host, so the exchange crossed no network");
    }

    #[test]
    fn stats_of_xsort_mpi_and_not_of_xsort() {
        let mpi = r#"{"version":"0.1.0","overall":{"ranks":2,"hosts":["vm"]},"per_rank":[{"rank":0,"host":"vm"},{"rank":1,"host":"vm"}]}"#;
        let c = ClusterRun::parse(mpi).expect("xsort-mpi stats");
        assert_eq!(hosts_of(&c.per_rank).iter().map(|h| (h.name.as_str(), h.ranks.clone())).collect::<Vec<_>>(), [("vm", vec![0, 1])]);
        assert!(ClusterRun::parse(r#"{"version":"0.1.0","records":5,"phases":[]}"#).is_none());
    }
}
