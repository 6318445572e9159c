//! Statistics in the spirit of Nsort's `-statistics`: per phase (memory touch, input read, temp
//! write, temp read, output write) the elapsed time, bytes, MB/s, transfers and their size, CPU
//! seconds and utilization; plus passes, runs, memory, and a time series sampled every 100 ms.
//!
//! "memory touch" is the first touch of fresh buffers by the helper thread that faults them in
//! ahead of the reads ([`xsort_io::Prefault`]): on virtual machines the kernel's (and the host's)
//! cost of fresh memory is a large part of a big sort, and this phase shows it. Memory the sort's
//! threads fault in themselves (a mapped input's entries, a stream's buffers) has no phase: it
//! shows in `minor_faults`, which counts every page first touched over the whole sort, by any
//! thread, the helper's included.
//!
//! Phases overlap (reading overlaps key extraction, gathering overlaps writing), so a phase's CPU is
//! the whole process's CPU during the phase's wall-clock interval, interpolated from the samples.

use crate::reading::ReadStrategy;
use serde::Serialize;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use xsort_io::{epoch, IoCounters, IoSnapshot};

/// Live counters of one sort, shared with the progress display and the sampler.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct SortCounters {
    /// Input reads.
    pub input: Arc<IoCounters>,
    /// Temp writes.
    pub temp_write: Arc<IoCounters>,
    /// Temp reads.
    pub temp_read: Arc<IoCounters>,
    /// Output writes.
    pub output: Arc<IoCounters>,
    /// Fresh memory faulted in ahead of the reads by the prefault thread: bytes and steps.
    pub touch: Arc<IoCounters>,
    /// Total input bytes when known in advance (0 otherwise), for progress.
    pub input_total: std::sync::atomic::AtomicU64,
    /// Set once the sort spills: the input becomes sorted runs on temp space.
    pub spilled: AtomicBool,
    /// Set when the last merge, the one into the output, begins (after any intermediate levels).
    pub final_merge: AtomicBool,
    /// Records that `-summarize` kept apart from their group, a sum not fitting its field.
    pub summarize_overflows: std::sync::atomic::AtomicU64,
    /// Records folded into another of equal key (`-u`, `-noduplicates`, `-summarize`): not written.
    pub records_folded: std::sync::atomic::AtomicU64,
}

/// One point of the time series.
#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
#[non_exhaustive]
pub struct Sample {
    /// Seconds since the sort started.
    pub t_s: f64,
    /// Cumulative bytes read from the inputs.
    pub input_bytes: u64,
    /// Cumulative bytes written to temp.
    pub temp_write_bytes: u64,
    /// Cumulative bytes read from temp.
    pub temp_read_bytes: u64,
    /// Cumulative bytes written to the output.
    pub output_bytes: u64,
    /// Cumulative process CPU seconds (user + system).
    pub cpu_s: f64,
    /// The whole machine's busy CPU seconds so far, over all its CPUs (`/proc/stat`; 0 where it
    /// cannot be read): with `cpu_s`, it tells a phase short of CPU because other processes had it.
    pub machine_cpu_s: f64,
}

/// The machine's CPUs and their busy seconds since boot (all but idle and I/O wait), from
/// `/proc/stat`; None where it cannot be read.
pub fn machine_cpu() -> Option<(usize, f64)> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let ticks: Vec<f64> = stat.lines().next()?.split_whitespace().skip(1).filter_map(|v| v.parse().ok()).collect();
    let idle = ticks.get(3)? + ticks.get(4).unwrap_or(&0.0);
    let cpus = stat.lines().filter(|l| l.starts_with("cpu") && l.as_bytes().get(3).is_some_and(u8::is_ascii_digit)).count();
    // SAFETY: sysconf takes any name; _SC_CLK_TCK is always defined.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    Some((cpus.max(1), (ticks.iter().sum::<f64>() - idle) / hz))
}

/// Process CPU time used so far: (user, system) seconds.
pub fn process_cpu() -> (f64, f64) {
    let ru = rusage();
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    (secs(ru.ru_utime), secs(ru.ru_stime))
}

/// Peak resident set size of the process in bytes: the kernel's high-water mark of this program's
/// memory (`VmHWM`). Not `getrusage`'s `ru_maxrss`, which also counts the memory of the process
/// before it executed xsort: a shell or test harness of 150 MB made an 8 MB sort report 150 MB.
pub fn peak_rss_bytes() -> u64 {
    let hwm = std::fs::read_to_string("/proc/self/status").ok().and_then(|s| {
        let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
        line.split_whitespace().nth(1)?.parse::<u64>().ok()
    });
    hwm.map_or(rusage().ru_maxrss as u64, |kib| kib) * 1024
}

/// Minor page faults of the process so far: pages it touched that were not mapped yet (fresh
/// memory, or file pages already in the page cache).
pub fn minor_faults() -> u64 {
    rusage().ru_minflt.max(0) as u64
}

fn rusage() -> libc::rusage {
    // SAFETY: getrusage fills the zeroed struct; RUSAGE_SELF is always valid.
    unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru
    }
}

/// Samples the counters every 100 ms on a thread of its own until stopped.
pub struct Sampler {
    samples: Arc<Mutex<Vec<Sample>>>,
    stop: Option<crossbeam_channel::Sender<()>>,
    handle: Option<std::thread::JoinHandle<()>>,
    counters: Arc<SortCounters>,
    t0: f64,
}

impl Sampler {
    /// Starts sampling.
    pub fn start(counters: Arc<SortCounters>) -> Self {
        let samples = Arc::new(Mutex::new(Vec::new()));
        // The thread waits on a channel rather than sleeping, so that stopping it is immediate.
        let (stop, stopped) = crossbeam_channel::bounded::<()>(0);
        let t0 = epoch().elapsed().as_secs_f64();
        let (s, c) = (samples.clone(), counters.clone());
        let handle = std::thread::Builder::new()
            .name("xsort-sampler".into())
            .spawn(move || loop {
                push_sample(&s, &c, t0);
                if stopped.recv_timeout(Duration::from_millis(100)) != Err(crossbeam_channel::RecvTimeoutError::Timeout) {
                    break;
                }
            })
            .ok();
        Sampler { samples, stop: Some(stop), handle, counters, t0 }
    }

    /// Records a sample now (at phase boundaries, so short sorts still get a useful series).
    pub fn mark(&self) {
        push_sample(&self.samples, &self.counters, self.t0);
    }

    /// Stops the thread and returns the series, in time order.
    pub fn finish(mut self) -> Vec<Sample> {
        self.stop = None; // disconnects the channel: the thread wakes and exits
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
        self.mark();
        let mut v = self.samples.lock().map(|g| g.clone()).unwrap_or_default();
        v.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
        v
    }
}

fn push_sample(samples: &Mutex<Vec<Sample>>, c: &SortCounters, t0: f64) {
    let (u, s) = process_cpu();
    let sample = Sample {
        t_s: epoch().elapsed().as_secs_f64() - t0,
        input_bytes: c.input.bytes(),
        temp_write_bytes: c.temp_write.bytes(),
        temp_read_bytes: c.temp_read.bytes(),
        output_bytes: c.output.bytes(),
        cpu_s: u + s,
        machine_cpu_s: machine_cpu().map_or(0.0, |(_, busy)| busy),
    };
    if let Ok(mut v) = samples.lock() {
        v.push(sample);
    }
}

/// Figures of one I/O phase. Phases overlap (the input is read while earlier chunks sort, the
/// output written while later blocks are gathered): each says when it ran on the sort's clock,
/// its CPU is shared with the phases running at the same time (so that the phases' CPU adds up
/// to no more than the sort's), and [`PhaseStats::bound`] says what held it back.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[non_exhaustive]
pub struct PhaseStats {
    /// "memory touch", "input read", "temp write", "temp read" or "output write".
    pub name: &'static str,
    /// When the phase's first transfer started, in seconds from the start of the sort.
    pub start_s: f64,
    /// When its last transfer ended, in seconds from the start of the sort.
    pub end_s: f64,
    /// Wall-clock seconds from the phase's first transfer to the end of its last.
    pub elapsed_s: f64,
    /// Bytes transferred.
    pub bytes: u64,
    /// Bytes / elapsed, in MB/s (10^6 bytes).
    pub mb_per_s: f64,
    /// Read or write calls.
    pub transfers: u64,
    /// Bytes per read or write request, as configured (the last request of a file may be shorter).
    pub transfer_size: u64,
    /// Bytes moved divided by transfers.
    pub avg_transfer_bytes: u64,
    /// Transfers in flight on average: the time spent inside transfers, summed over the threads
    /// that made them, divided by the phase's elapsed time.
    pub in_flight: f64,
    /// The process's CPU seconds while the phase ran, each moment's shared equally among the
    /// phases running then.
    pub cpu_s: f64,
    /// All of the process's CPU while the phase ran (shared or not), divided by elapsed_s * threads.
    pub cpu_utilization: f64,
    /// "direct", "buffered" or "mixed"; "memory" for the memory touch.
    pub io_mode: &'static str,
    /// What bounded the phase: "device" (a transfer was in flight at least 3/4 of the time),
    /// "page cache" (the same, through the page cache), "CPU" (the threads at least 85% busy),
    /// "CPU, one thread" (about one thread busy: serial work), "CPU, some threads" (more than one,
    /// fewer than 85% of them), "CPU, taken by other processes"
    /// (the machine's CPUs at least 85% busy, mostly not with this sort), "page faults" (the memory touch:
    /// the kernel making fresh memory), "waiting on memory touch" (neither, while the memory touch
    /// ran through most of it) or "waiting on other phases" (neither).
    pub bound: &'static str,
}

/// The statistics of a finished sort (`--stats` prints them, `--stats-json` writes them).
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct SortStats {
    /// xsort's version.
    pub version: &'static str,
    /// Records sorted.
    pub records: u64,
    /// With a selection (Nsort's `-include` / `-omit`): the records read, of which `records` were
    /// kept.
    pub records_read: Option<u64>,
    /// Records written to the output: `records` less those folded into another of equal key
    /// (`-u`, `-noduplicates`, `-summarize`).
    pub records_written: u64,
    /// Warnings of the run, one line each (none under Nsort's `-nowarn`): `-summarize` sums that
    /// would have overflowed their fields, their groups kept as several records.
    pub warnings: Vec<String>,
    /// Bytes sorted.
    pub bytes: u64,
    /// Bytes per record.
    pub record_size: usize,
    /// The key, as `offset:length[:r]` parts.
    pub key: String,
    /// In-memory kernel: "radix" or "merge".
    pub method: &'static str,
    /// Worker threads.
    pub threads: usize,
    /// Passes over the data: 1 in memory, 2 with one merge, more with multi-level merges.
    pub passes: u32,
    /// Sorted runs written to temp (0 for a one-pass sort).
    pub runs: u64,
    /// Merge levels (0 for a one-pass sort).
    pub merge_levels: u32,
    /// Largest number of runs merged at once.
    pub merge_fan_in: usize,
    /// Memory budget in bytes.
    pub memory_budget_bytes: u64,
    /// Where the budget came from: a request (`-S`), or the limit that set the default or clamped
    /// the request (physical memory, `MemAvailable`, the memory cgroup, `ulimit -v`), e.g. "50% of
    /// the memory cgroup's limit less its use (1.0 GiB)"; empty when the caller gave bytes.
    pub memory_budget_basis: String,
    /// Bytes the plan allocates at most.
    pub memory_planned_bytes: u64,
    /// Peak resident set size of the process (a mapped input's pages included).
    pub peak_rss_bytes: u64,
    /// Whether the input was sorted from a read-only mapping rather than read into buffers; for an
    /// input in the page cache, without any copy: the budget then held only its entries and the
    /// write pool.
    pub input_mapped: bool,
    /// How the input was read: "mapped_whole", "mapped_batches", "file_batches" or "stream" (see
    /// [`ReadStrategy`]).
    pub input_read: ReadStrategy,
    /// Bytes of sort entries and their scratch (32 per record or line) the sort phase held at most.
    pub entries_bytes: u64,
    /// Minor page faults over the sort: pages of fresh memory (or of a mapped input not populated
    /// up front) first touched by any of its threads, the memory touch's helper included.
    pub minor_faults: u64,
    /// The longest line, without its terminator (0 for fixed-size records).
    pub longest_line_bytes: u64,
    /// Why the sort needed more than its budget, when it did: a line longer than the budget allows
    /// must still be held whole, once while its chunk is sorted and twice in a merge (e.g. "budget
    /// 8 MiB exceeded: a 20.0 MiB line needs 48.1 MiB"); null when the budget sufficed.
    pub budget_exceeded: Option<String>,
    /// Wall-clock seconds of the sort (from opening the inputs to the output being in place).
    pub elapsed_s: f64,
    /// User CPU seconds of the sort.
    pub cpu_user_s: f64,
    /// System CPU seconds of the sort.
    pub cpu_system_s: f64,
    /// (user + system) / (elapsed * threads).
    pub cpu_utilization: f64,
    /// Temp directories.
    pub temp_dirs: Vec<String>,
    /// How temp runs were compressed (`zstd:1`), or null when they were stored plainly (or
    /// through `--compress-program`, or the sort wrote no run).
    pub temp_compression: Option<String>,
    /// Why they were: "asked for (--compress-temp)", or "automatic: DIR has N free, and the runs
    /// would take M plainly".
    pub temp_compression_reason: Option<String>,
    /// Bytes of runs written to temp (every merge level's), before any compression; 0 when none.
    pub temp_run_bytes: u64,
    /// Bytes written to temp files (compressed, when the runs were); 0 when no run was written.
    pub temp_written_bytes: u64,
    /// Per-phase figures, in pipeline order; phases that moved no bytes are left out.
    pub phases: Vec<PhaseStats>,
    /// Counters sampled every 100 ms and at phase boundaries.
    pub samples: Vec<Sample>,
}

/// The figures of the five phases (memory touch, input read, temp write, temp read, output write)
/// that moved bytes, given each phase's request size; `t0` is the sort's start.
pub fn phases_of(
    c: &SortCounters,
    input_request: usize,
    write_block: usize,
    merge_block: usize,
    t0: f64,
    samples: &[Sample],
    threads: usize,
) -> Vec<PhaseStats> {
    let mut phases = [
        ("memory touch", xsort_io::PREFAULT_STEP, &c.touch),
        ("input read", input_request, &c.input),
        ("temp write", write_block, &c.temp_write),
        ("temp read", merge_block, &c.temp_read),
        ("output write", write_block, &c.output),
    ]
    .into_iter()
    .filter_map(|(name, request, k)| phase_stats(name, request as u64, k.snapshot(), t0, samples, threads))
    .collect::<Vec<_>>();
    share_cpu(&mut phases, samples);
    let touch = phases.iter().find(|p| p.name == "memory touch").map(|p| (p.start_s, p.end_s));
    let cpus = machine_cpu().map_or(threads, |(n, _)| n).max(1) as f64;
    for p in &mut phases {
        let machine = interpolate(samples, p.end_s, |s| s.machine_cpu_s) - interpolate(samples, p.start_s, |s| s.machine_cpu_s);
        p.bound = bound(p, threads, touch, machine / (p.elapsed_s * cpus));
    }
    phases
}

/// Builds the figures of one phase from its counters and the CPU time series (its CPU share and
/// bound are set once all phases are known).
pub fn phase_stats(name: &'static str, request: u64, s: IoSnapshot, t0: f64, samples: &[Sample], threads: usize) -> Option<PhaseStats> {
    let start = s.first_start_s? - t0;
    let end = s.last_end_s - t0;
    let elapsed = (end - start).max(1e-9);
    let cpu = (cpu_at(samples, end) - cpu_at(samples, start)).max(0.0);
    Some(PhaseStats {
        name,
        start_s: start,
        end_s: end,
        elapsed_s: elapsed,
        bytes: s.bytes,
        mb_per_s: s.bytes as f64 / elapsed / 1e6,
        transfers: s.transfers,
        transfer_size: request,
        avg_transfer_bytes: s.bytes.checked_div(s.transfers).unwrap_or(0),
        in_flight: s.busy_s / elapsed,
        cpu_s: cpu,
        cpu_utilization: cpu / (elapsed * threads.max(1) as f64),
        io_mode: match (s.direct, s.buffered) {
            _ if name == "memory touch" => "memory",
            (true, false) => "direct",
            (false, true) => "buffered",
            _ => "mixed",
        },
        bound: "",
    })
}

/// Sets each phase's CPU to its share of the process's: the time line is cut where any phase
/// starts or ends, and each piece's CPU is divided equally among the phases running through it.
fn share_cpu(phases: &mut [PhaseStats], samples: &[Sample]) {
    let mut cuts: Vec<f64> = phases.iter().flat_map(|p| [p.start_s, p.end_s]).collect();
    cuts.sort_by(f64::total_cmp);
    cuts.dedup();
    let mut shares = vec![0.0; phases.len()];
    for w in cuts.windows(2) {
        let running: Vec<usize> = (0..phases.len()).filter(|&i| phases[i].start_s <= w[0] && phases[i].end_s >= w[1]).collect();
        let cpu = (cpu_at(samples, w[1]) - cpu_at(samples, w[0])).max(0.0);
        for &i in &running {
            shares[i] += cpu / running.len() as f64;
        }
    }
    for (p, share) in phases.iter_mut().zip(shares) {
        p.cpu_s = share;
    }
}

/// What bounded a phase (see [`PhaseStats::bound`]); `touch` is when the memory touch ran,
/// `machine_busy` the share of the machine's CPUs busy while the phase ran.
fn bound(p: &PhaseStats, threads: usize, touch: Option<(f64, f64)>, machine_busy: f64) -> &'static str {
    let busy_threads = p.cpu_utilization * threads.max(1) as f64;
    let touched = touch.map_or(0.0, |(s, e)| (e.min(p.end_s) - s.max(p.start_s)).max(0.0));
    match p.name {
        "memory touch" => "page faults",
        _ if p.in_flight >= 0.75 && p.io_mode == "buffered" => "page cache",
        _ if p.in_flight >= 0.75 => "device",
        _ if p.cpu_utilization >= 0.85 => "CPU",
        _ if threads > 1 && (0.85..1.5).contains(&busy_threads) => "CPU, one thread",
        _ if busy_threads >= 1.5 => "CPU, some threads",
        _ if machine_busy >= 0.85 => "CPU, taken by other processes",
        _ if touched > p.elapsed_s / 2.0 => "waiting on memory touch",
        _ => "waiting on other phases",
    }
}

/// Process CPU seconds at time `t`, linearly interpolated between samples.
fn cpu_at(samples: &[Sample], t: f64) -> f64 {
    interpolate(samples, t, |s| s.cpu_s)
}

/// `value` of the samples at time `t`, linearly interpolated between them.
fn interpolate(samples: &[Sample], t: f64, value: impl Fn(&Sample) -> f64) -> f64 {
    let i = samples.partition_point(|s| s.t_s < t);
    match (i.checked_sub(1).map(|j| &samples[j]), samples.get(i)) {
        (Some(a), Some(b)) if b.t_s > a.t_s => value(a) + (value(b) - value(a)) * (t - a.t_s) / (b.t_s - a.t_s),
        (Some(a), _) => value(a),
        (None, Some(b)) => value(b),
        (None, None) => 0.0,
    }
}

impl SortStats {
    /// The human report, one phase per line, like Nsort's statistics.
    pub fn render(&self) -> String {
        use crate::size::format_bytes;
        let mut o = String::new();
        let how = if self.passes == 1 {
            "one pass in memory, no temp file".to_string()
        } else {
            format!("{} runs, {} merge level(s), fan-in {}", self.runs, self.merge_levels, self.merge_fan_in)
        };
        o += "xsort statistics\n";
        if self.record_size == 0 {
            o += &format!("  records      {} lines ({}), {}\n", self.records, format_bytes(self.bytes), self.key);
        } else {
            o += &format!(
                "  records      {} of {} bytes ({}), key {}\n",
                self.records,
                self.record_size,
                format_bytes(self.bytes),
                self.key
            );
        }
        if let Some(read) = self.records_read {
            o += &format!("  selected     {} of {read} records read (-include/-omit)\n", self.records);
        }
        if self.records_written != self.records {
            o += &format!("  written      {} records (the others folded into one of equal key)\n", self.records_written);
        }
        for w in &self.warnings {
            o += &format!("  warning      {w}\n");
        }
        o += &format!("  passes       {} ({how})\n", self.passes);
        o += &format!("  input        {}\n", self.input_read);
        let basis = if self.memory_budget_basis.is_empty() { String::new() } else { format!(" ({})", self.memory_budget_basis) };
        o += &format!(
            "  memory       budget {}{basis}, planned {}, peak RSS {}\n",
            format_bytes(self.memory_budget_bytes),
            format_bytes(self.memory_planned_bytes),
            format_bytes(self.peak_rss_bytes)
        );
        if self.input_mapped {
            o += &format!("               input mapped, not copied: entries {}\n", format_bytes(self.entries_bytes));
        } else {
            o += &format!("               entries {}\n", format_bytes(self.entries_bytes));
        }
        o += &format!("               {} minor page faults\n", self.minor_faults);
        if let Some(why) = &self.budget_exceeded {
            o += &format!("               {why}\n");
        }
        if self.temp_run_bytes > 0 {
            let stored = match &self.temp_compression {
                Some(c) => format!(
                    ", {c}: {} written ({:.1}%), {}",
                    format_bytes(self.temp_written_bytes),
                    100.0 * self.temp_written_bytes as f64 / self.temp_run_bytes as f64,
                    self.temp_compression_reason.as_deref().unwrap_or("")
                ),
                None => String::new(),
            };
            o += &format!("  temp runs    {}{stored}\n", format_bytes(self.temp_run_bytes));
        }
        o += &format!("  method       {} with {} threads\n", self.method, self.threads);
        o += &format!(
            "  elapsed      {:.3} s, CPU {:.3} s user + {:.3} s system ({:.0}% of {} threads)\n",
            self.elapsed_s,
            self.cpu_user_s,
            self.cpu_system_s,
            self.cpu_utilization * 100.0,
            self.threads
        );
        o += "\n  Phases overlap: each ran from its start to its end on the sort's clock; its CPU is its\n  \
              share of the process's while it ran; the bound is what held it back.\n";
        o += &format!(
            "  {:<13} {:>7} {:>7} {:>11} {:>8} {:>9} {:>9} {:>6} {:>7} {:>5}  {:<8} {}\n",
            "phase", "start s", "end s", "bytes", "MB/s", "transfers", "xfer size", "flight", "CPU s", "CPU%", "mode", "bound"
        );
        for p in &self.phases {
            o += &format!(
                "  {:<13} {:>7.3} {:>7.3} {:>11} {:>8.1} {:>9} {:>9} {:>6.2} {:>7.3} {:>4.0}%  {:<8} {}\n",
                p.name,
                p.start_s,
                p.end_s,
                p.bytes,
                p.mb_per_s,
                p.transfers,
                format_bytes(p.transfer_size),
                p.in_flight,
                p.cpu_s,
                p.cpu_utilization * 100.0,
                p.io_mode,
                p.bound
            );
        }
        let in_phases: f64 = self.phases.iter().map(|p| p.cpu_s).sum();
        let outside = (self.cpu_user_s + self.cpu_system_s - in_phases).max(0.0);
        o += &format!(
            "  {:<13} {:>7} {:>7} {:>55.3}  (CPU while no phase ran: planning, sorting between reads and writes)\n",
            "other", "", "", outside
        );
        o
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(t_s: f64, cpu_s: f64) -> Sample {
        Sample { t_s, input_bytes: 0, temp_write_bytes: 0, temp_read_bytes: 0, output_bytes: 0, cpu_s, machine_cpu_s: 0.0 }
    }

    #[test]
    fn cpu_is_interpolated() {
        let s = [sample(0.0, 0.0), sample(1.0, 2.0), sample(2.0, 2.0)];
        assert_eq!(cpu_at(&s, 0.5), 1.0);
        assert_eq!(cpu_at(&s, 1.5), 2.0);
        assert_eq!(cpu_at(&s, 5.0), 2.0);
        assert_eq!(cpu_at(&[], 1.0), 0.0);
    }

    fn phase(name: &'static str, start_s: f64, end_s: f64) -> PhaseStats {
        let s = IoSnapshot {
            bytes: 1,
            transfers: 1,
            busy_s: 0.0,
            first_start_s: Some(start_s),
            last_end_s: end_s,
            direct: true,
            buffered: false,
        };
        phase_stats(name, 1, s, 0.0, &[], 2).unwrap()
    }

    #[test]
    fn overlapping_phases_share_the_cpu_of_the_time_they_ran_together() {
        let samples: Vec<Sample> = (0..=4).map(|i| sample(i as f64 * 0.5, i as f64)).collect(); // 2 CPU s a second
        let mut phases = [phase("input read", 0.0, 1.0), phase("output write", 0.5, 1.5)];
        share_cpu(&mut phases, &samples);
        assert_eq!((phases[0].cpu_s, phases[1].cpu_s), (1.5, 1.5));
        assert_eq!((phases[1].start_s, phases[1].end_s, phases[1].elapsed_s), (0.5, 1.5, 1.0));
    }

    #[test]
    fn the_bound_is_what_held_the_phase_back() {
        let with = |in_flight: f64, cpu_utilization: f64, io_mode: &'static str| PhaseStats {
            in_flight,
            cpu_utilization,
            io_mode,
            ..phase("output write", 1.0, 2.0)
        };
        let (none, touch) = (None, Some((0.0, 1.8)));
        assert_eq!(bound(&with(2.5, 0.9, "direct"), 2, none, 1.0), "device");
        assert_eq!(bound(&with(0.8, 0.1, "buffered"), 2, none, 0.1), "page cache");
        assert_eq!(bound(&with(0.2, 0.9, "direct"), 2, none, 0.9), "CPU");
        assert_eq!(bound(&with(0.2, 0.5, "direct"), 2, none, 0.5), "CPU, one thread");
        assert_eq!(bound(&with(0.2, 0.5, "direct"), 8, none, 0.5), "CPU, some threads");
        assert_eq!(bound(&with(0.2, 0.06, "direct"), 16, none, 0.1), "CPU, one thread");
        assert_eq!(bound(&with(0.2, 0.1, "direct"), 2, none, 0.95), "CPU, taken by other processes");
        assert_eq!(bound(&with(0.2, 0.1, "direct"), 2, touch, 0.2), "waiting on memory touch");
        assert_eq!(bound(&with(0.2, 0.1, "direct"), 2, none, 0.2), "waiting on other phases");
        assert_eq!(bound(&PhaseStats { name: "memory touch", ..with(0.0, 0.0, "memory") }, 2, none, 0.0), "page faults");
    }

    #[test]
    fn phase_without_transfers_is_left_out() {
        assert!(phase_stats("temp read", 1 << 20, IoSnapshot::default(), 0.0, &[], 2).is_none());
    }
}
