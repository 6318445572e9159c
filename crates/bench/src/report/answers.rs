//! The questions every report answers, one line each, from the measured
//! facts: cluster or not, cost, maximal configuration, workload, data size
//! against memory and page cache, how each figure was calculated, whether
//! the machine was fully used, and whether anything else saturated.

use serde::Serialize;

use super::{bytes, ibytes, Report};
use crate::cli::{Cache, Format};
use crate::cluster::{hosts_of, ClusterContext, RankRun, RankSort};
use crate::report::figures::counted;
use crate::run::{shell_words, Run};
use crate::stats::{median, METHOD};
use std::path::Path;

#[derive(Clone, Debug, Serialize)]
pub struct Answer {
    pub question: String,
    pub answer: String,
}

pub fn answer(r: &Report) -> Vec<Answer> {
    let valid = counted(&r.runs);
    let qa = |q: &str, a: String| Answer { question: q.to_string(), answer: a };
    vec![
        qa("Is this a cluster?", cluster(r)),
        qa("What did the hardware cost and what is the price/performance?", price(r)),
        qa("Is it a maximal configuration?", maximal(r, &valid)),
        qa("What is the workload?", workload(r)),
        qa("How does the data size compare with memory and page cache?", memory(r, &valid)),
        qa("How was each figure calculated (over which runs)?", method(r)),
        qa("Was the machine fully used?", used(r, &valid)),
        qa("Was anything saturated besides the thing measured?", saturated(r, &valid)),
    ]
}

fn cluster(r: &Report) -> String {
    if let Some(c) = &r.context.cluster {
        return on_cluster(r, c);
    }
    format!(
        "No: one machine ({}), one xsort process per run{}.",
        r.context.hostname.as_deref().unwrap_or("hostname unknown"),
        r.context.cpu.hypervisor.as_ref().map_or(String::new(), |h| format!("; the machine is a virtual one ({h})"))
    )
}

/// The answer for `--ranks`: the ranks, the hosts that ran them (as the measured runs' xsort-mpi
/// reported them; the trial launch's where no run did) and the interconnect.
fn on_cluster(r: &Report, c: &ClusterContext) -> String {
    let mut ranks: Vec<RankRun> = r.runs.iter().filter_map(|x| x.cluster.as_ref()).flat_map(|x| x.per_rank.iter().cloned()).collect();
    ranks.sort_by(|a, b| (a.rank, &a.host).cmp(&(b.rank, &b.host)));
    ranks.dedup_by(|a, b| (a.rank, &a.host) == (b.rank, &b.host));
    let mut hosts = hosts_of(&ranks);
    if hosts.is_empty() {
        hosts = c.hosts.clone();
    }
    let list = |v: &[usize]| v.iter().map(usize::to_string).collect::<Vec<_>>().join(", ");
    let on = hosts
        .iter()
        .map(|h| format!("{} (rank{} {})", h.name, if h.ranks.len() == 1 { "" } else { "s" }, list(&h.ranks)))
        .collect::<Vec<_>>();
    format!(
        "Yes: {} rank{} of xsort-mpi per run, launched by {} ({}), on {} host{}: {}; interconnect: {}{}.",
        c.ranks,
        if c.ranks == 1 { "" } else { "s" },
        shell_words(Path::new(&c.mpirun), &[&c.mpirun_args[..], &["-np".into(), c.ranks.to_string()]].concat()),
        c.mpi_version.as_deref().unwrap_or("version unknown"),
        hosts.len(),
        if hosts.len() == 1 { "" } else { "s" },
        on.join(", "),
        c.interconnect,
        r.context.cpu.hypervisor.as_ref().map_or(String::new(), |h| format!("; this machine is a virtual one ({h})"))
    )
}

fn price(r: &Report) -> String {
    match &r.figures.price {
        None => "Not stated (pass --system-price USD); no price/performance is computed.".into(),
        Some(p) => format!(
            "${:.2} as stated with --system-price (not verified); amortized over 3 years one cent buys {:.1} s; the median run cost ${:.6}, i.e. {} records per cent.",
            p.system_price_usd,
            p.seconds_per_cent,
            p.cost_per_run_usd.unwrap_or(f64::NAN),
            p.records_per_cent.map_or("?".into(), |x| format!("{x:.0}"))
        ),
    }
}

fn devices_used(r: &Report) -> Vec<String> {
    let mut v: Vec<String> = r.context.dirs.iter().filter(|d| d.role != "report").filter_map(|d| d.device.clone()).collect();
    v.sort();
    v.dedup();
    v
}

fn maximal(r: &Report, valid: &[&Run]) -> String {
    let c = &r.context;
    // On the cluster, the ranks' local sorts together (all on this machine when the answer to the
    // cluster question says one host).
    let ranks_sum = |f: &dyn Fn(&RankSort) -> u64| {
        valid.iter().filter_map(|v| v.cluster.as_ref()).map(|c| c.per_rank.iter().filter_map(|x| x.sort.as_ref()).map(f).sum::<u64>()).max()
    };
    let threads = valid
        .iter()
        .filter_map(|v| v.xsort_stats.as_ref())
        .map(|x| x.threads as usize)
        .max()
        .or(ranks_sum(&|x| x.threads).map(|t| t as usize))
        .or(r.settings.threads);
    let budget =
        valid.iter().filter_map(|v| v.xsort_stats.as_ref()).map(|x| x.memory_budget_bytes).max().or(ranks_sum(&|x| x.memory_budget_bytes));
    let used = devices_used(r);
    let all_threads = threads.is_some_and(|t| t >= c.cpu.available_threads);
    let all_disks = !c.block_devices.is_empty() && c.block_devices.iter().all(|d| used.contains(d));
    format!(
        "{}: xsort used {} of {} logical CPUs, a memory budget of {} of {} RAM, and {} of the {} disk(s) ({}); {}.",
        if all_threads && all_disks { "Yes for this machine" } else { "No" },
        threads.map_or("?".into(), |t| t.to_string()),
        c.cpu.available_threads,
        budget.map_or("?".into(), ibytes),
        ibytes(c.memory.total_bytes),
        used.len(),
        c.block_devices.len(),
        if c.block_devices.is_empty() { "none found".into() } else { c.block_devices.join(", ") },
        if c.cpu.hypervisor.is_some() { "but it is a virtual machine, not a hardware maximum" } else { "one machine, as configured" }
    )
}

fn workload(r: &Report) -> String {
    let s = &r.settings;
    format!(
        "{} records of {} bytes ({}), key = the first 10 bytes compared as unsigned bytes; {} gensort records, {} keys; the sort is told the layout on its command line (general-purpose, Daytona-style).",
        r.figures.records.unwrap_or(s.records),
        s.record_size,
        bytes(r.figures.bytes.unwrap_or(s.records * 100)),
        if s.format == Format::Ascii { "ASCII (gensort -a)" } else { "binary" },
        s.distribution
    )
}

fn memory(r: &Report, valid: &[&Run]) -> String {
    let m = &r.context.memory;
    let b = r.figures.bytes.unwrap_or(r.settings.records * 100);
    let stats: Vec<_> = valid.iter().filter_map(|v| v.xsort_stats.as_ref()).collect();
    let passes = match stats.first() {
        Some(x) if x.passes <= 1 => format!("xsort's budget {} held it: one pass, no temp file", ibytes(x.memory_budget_bytes)),
        Some(x) => format!(
            "beyond xsort's budget {}: {} passes, {} runs spilled, {} merge level(s)",
            ibytes(x.memory_budget_bytes),
            x.passes,
            x.runs,
            x.merge_levels
        ),
        None => "xsort reported no memory plan".into(),
    };
    let resident = median(&valid.iter().map(|v| v.input_resident_fraction * 100.0).collect::<Vec<_>>());
    let disk_read = median(&valid.iter().map(|v| v.machine.disks.iter().map(|d| d.read_bytes).sum::<u64>() as f64).collect::<Vec<_>>());
    format!(
        "The input, {}, is {:.1}% of the {} of RAM; {passes}; the page cache held {} at the start; input resident in the page cache at launch: {} ({}); the disk delivered {} per sort (median), {} of the input; the output was {}.",
        bytes(b),
        b as f64 / m.total_bytes.max(1) as f64 * 100.0,
        ibytes(m.total_bytes),
        ibytes(m.page_cache_bytes),
        resident.map_or("?".into(), |x| format!("{x:.0}% (median)")),
        if r.settings.cache == Cache::Cold { "cold scenario: evicted with posix_fadvise(DONTNEED)" } else { "warm scenario: read through the cache" },
        disk_read.map_or("?".into(), |x| bytes(x as u64)),
        disk_read.map_or("?".into(), |x| format!("{:.0}%", x / b.max(1) as f64 * 100.0)),
        if r.settings.sync { "synced to disk before xsort exited (--sync)" } else { "not synced (it may still have been in the page cache at exit)" }
    )
}

fn method(r: &Report) -> String {
    let s = &r.settings;
    let mut a = format!(
        "Wall time runs from just before spawning xsort to its exit (process launch included), over {}; {METHOD}. The I/O floor is measured just before each run: direct read of the input plus direct write and fsync of as many bytes ({} transfers, {} in flight); ratio = median wall time / median floor. Throughput = bytes / median wall time (1 GB = 10^9 bytes, 1 TB = 10^12).",
        r.figures.over,
        ibytes(s.floor_transfer_bytes as u64),
        s.floor_inflight
    );
    if r.figures.search.is_some() {
        a += " The size is found by probing (one run per size), then confirmed by the measured runs.";
    }
    if r.figures.energy.measured {
        a += " Energy is the counter increment over each run's wall time; records per joule = records / median joules.";
    }
    a
}

fn used(r: &Report, valid: &[&Run]) -> String {
    let f = &r.figures;
    let cpu_max = median(&valid.iter().map(|v| v.machine.cpu_busy_max_pct).collect::<Vec<_>>());
    let disk_max =
        median(&valid.iter().filter_map(|v| v.machine.disks.iter().map(|d| d.busy_max_pct).reduce(f64::max)).collect::<Vec<_>>());
    let devs = devices_used(r);
    format!(
        "CPU busy {} of all {} logical CPUs over the sort (median over runs; busiest 100 ms: {}); xsort's own CPU utilization {}; disk {} busy {} of the wall time (busiest 100 ms: {}){}.",
        pct(f.cpu_busy_pct.map(|s| s.median)),
        r.context.cpu.threads,
        pct(cpu_max),
        f.xsort_cpu_utilization.map_or("?".into(), |s| format!("{:.0}%", s.median * 100.0)),
        if devs.is_empty() { "(none watched)".into() } else { devs.join(", ") },
        pct(f.disk_busy_pct.map(|s| s.median)),
        pct(disk_max),
        coarse(r)
    )
}

/// A caveat for runs too short for /proc's 10 ms CPU ticks.
fn coarse(r: &Report) -> &'static str {
    match r.figures.wall_s {
        Some(w) if w.median < 0.5 => {
            " (runs under 0.5 s: /proc counts CPU time in 10 ms ticks, so these shares are good to a few percent only)"
        }
        _ => "",
    }
}

fn pct(x: Option<f64>) -> String {
    x.map_or("?".into(), |v| format!("{v:.0}%"))
}

fn saturated(r: &Report, valid: &[&Run]) -> String {
    if valid.is_empty() {
        return "Unknown: no valid run.".into();
    }
    let n = r.context.cpu.threads as f64;
    let mut notes = Vec::new();
    let steal = median(&valid.iter().map(|v| v.machine.steal_pct).collect::<Vec<_>>()).unwrap_or(0.0);
    let others = median(
        &valid
            .iter()
            .map(|v| {
                let all = v.machine.cpu_busy_pct / 100.0 * n * v.machine.wall_s;
                let mine = v.child_user_s + v.child_system_s;
                ((all - mine) / (n * v.machine.wall_s.max(1e-9)) * 100.0).max(0.0)
            })
            .collect::<Vec<_>>(),
    )
    .unwrap_or(0.0);
    let cpu_peak = valid.iter().map(|v| v.machine.cpu_busy_max_pct).fold(0.0, f64::max);
    let disk_peak = valid.iter().flat_map(|v| v.machine.disks.iter().map(|d| d.busy_max_pct)).fold(0.0, f64::max);
    let mem_min = valid.iter().map(|v| v.machine.mem_available_min_bytes).min().unwrap_or(0);
    let total = r.context.memory.total_bytes.max(1);
    notes.push(if cpu_peak >= 90.0 {
        format!("CPU reached {cpu_peak:.0}% in some 100 ms intervals")
    } else {
        format!("CPU never above {cpu_peak:.0}%")
    });
    notes.push(if disk_peak >= 90.0 {
        format!("the disk reached {disk_peak:.0}% busy (expected: the sort is disk to disk)")
    } else {
        format!("the disk never above {disk_peak:.0}% busy")
    });
    notes.push(format!("other processes took {others:.0}% of the CPUs"));
    notes.push(format!("hypervisor steal {steal:.1}%"));
    notes.push(format!(
        "memory available never below {} ({:.0}% of RAM){}",
        ibytes(mem_min),
        mem_min as f64 / total as f64 * 100.0,
        if (mem_min as f64) < 0.05 * total as f64 { ": memory was nearly exhausted" } else { "" }
    ));
    let short = r.figures.wall_s.is_some_and(|w| w.median < 0.1);
    let verdict = if short {
        "Too short to tell reliably"
    } else if steal > 5.0 || others > 10.0 || (mem_min as f64) < 0.05 * total as f64 {
        "Yes, interference"
    } else {
        "No sign of it"
    };
    format!("{verdict}: {}{}.", notes.join("; "), coarse(r))
}
