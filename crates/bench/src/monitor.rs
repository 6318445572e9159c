//! What the whole machine did while a sort ran: CPU from `/proc/stat`, disk
//! busy time and bytes from `/proc/diskstats`, available memory from
//! `/proc/meminfo`, and energy from the power counters, sampled every 100 ms
//! on a thread of its own.
//!
//! Disk busy % is the `io_ticks` increment (milliseconds with at least one
//! request in flight) over the wall time; CPU busy % is the share of all
//! logical CPUs' time spent in user, nice, system, irq and softirq. Steal
//! (time the hypervisor gave to other guests) and iowait are kept apart. The
//! per-interval maxima show whether anything saturated in bursts.

use std::fs;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::energy::{Meter, Zone};

/// Sampling period.
pub const PERIOD: Duration = Duration::from_millis(100);

/// Cumulative CPU jiffies from the first line of /proc/stat.
#[derive(Clone, Copy, Debug, Default)]
struct Cpu {
    busy: u64,
    idle: u64,
    iowait: u64,
    steal: u64,
}

impl Cpu {
    fn total(&self) -> u64 {
        self.busy + self.idle + self.iowait + self.steal
    }
}

/// Cumulative counters of one block device.
#[derive(Clone, Copy, Debug, Default)]
struct Disk {
    read_bytes: u64,
    write_bytes: u64,
    io_ticks_ms: u64,
}

#[derive(Clone, Debug)]
struct Sample {
    t: Instant,
    cpu: Cpu,
    disks: Vec<Disk>,
    mem_available: u64,
}

/// One device over a run.
#[derive(Clone, Debug, Serialize)]
pub struct DiskUse {
    pub device: String,
    pub busy_pct: f64,
    pub busy_max_pct: f64,
    pub read_bytes: u64,
    pub write_bytes: u64,
}

/// One 100 ms interval, for plots.
#[derive(Clone, Debug, Serialize)]
pub struct Point {
    pub t_s: f64,
    pub cpu_busy_pct: f64,
    /// Busiest of the watched devices in this interval.
    pub disk_busy_pct: f64,
}

/// The machine over one run.
#[derive(Clone, Debug, Serialize)]
pub struct MachineUse {
    pub wall_s: f64,
    pub cpu_busy_pct: f64,
    pub cpu_busy_max_pct: f64,
    pub iowait_pct: f64,
    pub steal_pct: f64,
    pub disks: Vec<DiskUse>,
    pub mem_available_min_bytes: u64,
    /// Joules from the power counters; `None`: not measured.
    pub energy_j: Option<f64>,
    #[serde(skip)]
    pub series: Vec<Point>,
}

/// A running sampler.
pub struct Monitor {
    stop: Arc<AtomicBool>,
    handle: JoinHandle<(Vec<Sample>, Option<Meter>)>,
    devices: Vec<String>,
}

impl Monitor {
    /// Starts sampling `devices` (names as in /proc/diskstats) and, when
    /// given, the power counters. The first sample is taken before returning.
    pub fn start(devices: Vec<String>, energy: Option<Vec<Zone>>) -> Monitor {
        let stop = Arc::new(AtomicBool::new(false));
        let first = sample(&devices);
        let meter = energy.map(Meter::start);
        let flag = Arc::clone(&stop);
        let devs = devices.clone();
        let handle = std::thread::spawn(move || {
            let mut samples = vec![first];
            let mut meter = meter;
            let mut next = Instant::now() + PERIOD;
            loop {
                let now = Instant::now();
                if next > now {
                    std::thread::park_timeout(next - now);
                }
                let stopping = flag.load(Ordering::Acquire);
                if stopping || Instant::now() >= next {
                    samples.push(sample(&devs));
                    if let Some(m) = meter.as_mut() {
                        m.sample();
                    }
                    next += PERIOD;
                }
                if stopping {
                    return (samples, meter);
                }
            }
        });
        Monitor { stop, handle, devices }
    }

    /// Takes a last sample and summarizes.
    pub fn finish(self) -> MachineUse {
        self.stop.store(true, Ordering::Release);
        self.handle.thread().unpark();
        let (samples, meter) = self.handle.join().unwrap_or_default();
        summarize(&self.devices, &samples, meter.as_ref())
    }
}

fn summarize(devices: &[String], s: &[Sample], meter: Option<&Meter>) -> MachineUse {
    let energy_j = meter.and_then(Meter::joules);
    let (Some(a), Some(b)) = (s.first(), s.last()) else {
        return MachineUse {
            wall_s: 0.0,
            cpu_busy_pct: 0.0,
            cpu_busy_max_pct: 0.0,
            iowait_pct: 0.0,
            steal_pct: 0.0,
            disks: Vec::new(),
            mem_available_min_bytes: 0,
            energy_j,
            series: Vec::new(),
        };
    };
    let wall = b.t.duration_since(a.t).as_secs_f64();
    let pct = |x: u64, total: u64| if total == 0 { 0.0 } else { 100.0 * x as f64 / total as f64 };
    let dt = b.cpu.total().saturating_sub(a.cpu.total());
    let mut series = Vec::new();
    let mut cpu_max: f64 = 0.0;
    let mut disk_max = vec![0.0f64; devices.len()];
    for w in s.windows(2) {
        let (p, q) = (&w[0], &w[1]);
        let span = q.t.duration_since(p.t).as_secs_f64();
        // Skip the sliver between the last periodic sample and the final one.
        if span < 0.02 {
            continue;
        }
        let cpu = pct(q.cpu.busy.saturating_sub(p.cpu.busy), q.cpu.total().saturating_sub(p.cpu.total()));
        cpu_max = cpu_max.max(cpu);
        let mut busiest: f64 = 0.0;
        for (i, m) in disk_max.iter_mut().enumerate() {
            let (Some(dp), Some(dq)) = (p.disks.get(i), q.disks.get(i)) else { continue };
            let busy = (dq.io_ticks_ms.saturating_sub(dp.io_ticks_ms) as f64 / (span * 1000.0) * 100.0).min(100.0);
            *m = m.max(busy);
            busiest = busiest.max(busy);
        }
        series.push(Point { t_s: q.t.duration_since(a.t).as_secs_f64(), cpu_busy_pct: cpu, disk_busy_pct: busiest });
    }
    // A run shorter than one period has no full interval: its maxima are its averages.
    let whole = series.is_empty();
    let cpu_busy = pct(b.cpu.busy.saturating_sub(a.cpu.busy), dt);
    let disks = devices
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let (da, db) = (a.disks.get(i).copied().unwrap_or_default(), b.disks.get(i).copied().unwrap_or_default());
            let busy_ms = db.io_ticks_ms.saturating_sub(da.io_ticks_ms) as f64;
            let busy = if wall > 0.0 { (busy_ms / (wall * 1000.0) * 100.0).min(100.0) } else { 0.0 };
            DiskUse {
                device: name.clone(),
                busy_pct: busy,
                busy_max_pct: if whole { busy } else { disk_max[i] },
                read_bytes: db.read_bytes.saturating_sub(da.read_bytes),
                write_bytes: db.write_bytes.saturating_sub(da.write_bytes),
            }
        })
        .collect();
    MachineUse {
        wall_s: wall,
        cpu_busy_pct: cpu_busy,
        cpu_busy_max_pct: if whole { cpu_busy } else { cpu_max },
        iowait_pct: pct(b.cpu.iowait.saturating_sub(a.cpu.iowait), dt),
        steal_pct: pct(b.cpu.steal.saturating_sub(a.cpu.steal), dt),
        disks,
        mem_available_min_bytes: s.iter().map(|x| x.mem_available).min().unwrap_or(0),
        energy_j,
        series,
    }
}

fn sample(devices: &[String]) -> Sample {
    let t = Instant::now();
    let cpu = read_cpu().unwrap_or_default();
    let disks = read_disks(devices);
    let mem_available = crate::context::meminfo("MemAvailable").unwrap_or(0);
    Sample { t, cpu, disks, mem_available }
}

fn read_cpu() -> Option<Cpu> {
    let text = fs::read_to_string("/proc/stat").ok()?;
    let line = text.lines().next()?;
    let v: Vec<u64> = line.split_whitespace().skip(1).filter_map(|x| x.parse().ok()).collect();
    let f = |i: usize| v.get(i).copied().unwrap_or(0);
    // user nice system idle iowait irq softirq steal (guest is inside user)
    Some(Cpu { busy: f(0) + f(1) + f(2) + f(5) + f(6), idle: f(3), iowait: f(4), steal: f(7) })
}

fn read_disks(devices: &[String]) -> Vec<Disk> {
    let text = fs::read_to_string("/proc/diskstats").unwrap_or_default();
    devices
        .iter()
        .map(|d| {
            text.lines()
                .map(|l| l.split_whitespace().collect::<Vec<_>>())
                .find(|f| f.len() > 12 && f[2] == d)
                .map(|f| {
                    let n = |i: usize| f.get(i).and_then(|x| x.parse::<u64>().ok()).unwrap_or(0);
                    Disk { read_bytes: n(5) * 512, write_bytes: n(9) * 512, io_ticks_ms: n(12) }
                })
                .unwrap_or_default()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_a_short_interval() {
        let m = Monitor::start(vec!["no-such-disk".into()], None);
        std::thread::sleep(Duration::from_millis(250));
        let u = m.finish();
        assert!(u.wall_s >= 0.2, "{u:?}");
        assert!(u.series.len() >= 2, "{u:?}");
        assert!((0.0..=100.0).contains(&u.cpu_busy_pct));
        assert_eq!(u.disks[0].busy_pct, 0.0);
        assert_eq!(u.energy_j, None);
    }
}
