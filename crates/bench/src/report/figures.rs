//! The figures of a report, computed from the valid measured runs only:
//! wall-time statistics, the I/O floor and xsort's ratio to it, throughput,
//! energy (or "not measured"), price/performance, the search result, and
//! machine use.

use serde::Serialize;

use crate::categories::{Outcome, Search};
use crate::cli::{Category, Settings, AMORTIZATION_S};
use crate::context::Context;
use crate::run::Run;
use crate::stats::Summary;

/// Energy figures.
#[derive(Clone, Debug, Serialize)]
pub struct Energy {
    pub measured: bool,
    /// One line for people: the figure, or "energy: not measured (why)".
    pub text: String,
    pub joules: Option<Summary>,
    pub records_per_joule: Option<f64>,
}

/// Price figures (with --system-price).
#[derive(Clone, Debug, Serialize)]
pub struct Price {
    pub system_price_usd: f64,
    pub amortization_s: f64,
    pub seconds_per_cent: f64,
    /// Cost of the median valid run's wall time.
    pub cost_per_run_usd: Option<f64>,
    pub records_per_cent: Option<f64>,
}

/// The speed goal of the datamation category.
#[derive(Clone, Debug, Serialize)]
pub struct Target {
    pub ratio_limit: f64,
    pub ratio_aim: f64,
    pub ratio: f64,
    pub met: bool,
    pub aim_met: bool,
}

#[derive(Clone, Debug, Serialize)]
pub struct Figures {
    pub measured_runs: usize,
    pub valid_runs: usize,
    pub invalid_runs: usize,
    /// Which runs the figures are over, in words.
    pub over: String,
    pub records: Option<u64>,
    pub bytes: Option<u64>,
    pub wall_s: Option<Summary>,
    pub floor_s: Option<Summary>,
    pub floor_read_s: Option<Summary>,
    pub floor_write_s: Option<Summary>,
    /// Median wall time over median floor.
    pub ratio_to_floor: Option<f64>,
    pub ratio_per_run: Option<Summary>,
    /// Bytes over the median wall time, 10^9 bytes per GB.
    pub gb_per_s: Option<f64>,
    pub tb_per_min: Option<f64>,
    pub records_per_s: Option<f64>,
    pub cpu_busy_pct: Option<Summary>,
    pub disk_busy_pct: Option<Summary>,
    pub xsort_cpu_utilization: Option<Summary>,
    pub energy: Energy,
    pub price: Option<Price>,
    pub search: Option<Search>,
    pub target: Option<Target>,
}

/// Valid runs that count ("measure" purpose).
pub fn counted(runs: &[Run]) -> Vec<&Run> {
    runs.iter().filter(|r| r.purpose == "measure" && r.valid).collect()
}

/// Run numbers with consecutive ones as ranges: "1-5, 7, 9-10".
pub fn list(idx: &[usize]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < idx.len() {
        let mut j = i;
        while j + 1 < idx.len() && idx[j + 1] == idx[j] + 1 {
            j += 1;
        }
        parts.push(if j > i { format!("{}-{}", idx[i], idx[j]) } else { idx[i].to_string() });
        i = j + 1;
    }
    parts.join(", ")
}

pub fn compute(s: &Settings, ctx: &Context, out: &Outcome) -> Figures {
    let measured: Vec<&Run> = out.runs.iter().filter(|r| r.purpose == "measure").collect();
    let valid = counted(&out.runs);
    let invalid: Vec<usize> = measured.iter().filter(|r| !r.valid).map(|r| r.index).collect();
    let mut over = format!(
        "the {} valid of {} measured runs (runs {})",
        valid.len(),
        measured.len(),
        list(&valid.iter().map(|r| r.index).collect::<Vec<_>>())
    );
    if !invalid.is_empty() {
        over += &format!("; invalid runs {} excluded", list(&invalid));
    }
    if let Some(se) = &out.search {
        over += &format!("; the {} search probes are not counted", se.steps.len());
        let failed = out.runs.iter().filter(|r| r.purpose == "confirm").count();
        if failed > 0 {
            over += &format!(", nor the {failed} runs of failed confirmations at larger sizes");
        }
    }
    let col = |f: &dyn Fn(&Run) -> Option<f64>| Summary::of(&valid.iter().filter_map(|r| f(r)).collect::<Vec<_>>());
    let wall = col(&|r| Some(r.wall_s));
    let floor = col(&|r| r.floor.as_ref().map(|f| f.total_s));
    let records = valid.first().map(|r| r.input.records);
    let bytes = valid.first().map(|r| r.input.bytes);
    let ratio = match (wall, floor) {
        (Some(w), Some(f)) if f.median > 0.0 => Some(w.median / f.median),
        _ => None,
    };
    let gbs = match (wall, bytes) {
        (Some(w), Some(b)) if w.median > 0.0 => Some(b as f64 / 1e9 / w.median),
        _ => None,
    };
    let energy = energy(ctx, &valid, records);
    let price = s.system_price.map(|p| {
        let usd_per_s = p / AMORTIZATION_S;
        let cost = wall.map(|w| w.median * usd_per_s);
        Price {
            system_price_usd: p,
            amortization_s: AMORTIZATION_S,
            seconds_per_cent: 0.01 / usd_per_s,
            cost_per_run_usd: cost,
            records_per_cent: match (cost, records) {
                (Some(c), Some(n)) if c > 0.0 => Some(n as f64 / (c * 100.0)),
                _ => None,
            },
        }
    });
    let target = match (s.category, ratio) {
        (Category::Datamation, Some(r)) => Some(Target { ratio_limit: 1.5, ratio_aim: 1.25, ratio: r, met: r <= 1.5, aim_met: r <= 1.25 }),
        _ => None,
    };
    Figures {
        measured_runs: measured.len(),
        valid_runs: valid.len(),
        invalid_runs: invalid.len(),
        over,
        records,
        bytes,
        wall_s: wall,
        floor_s: floor,
        floor_read_s: col(&|r| r.floor.as_ref().map(|f| f.read_s)),
        floor_write_s: col(&|r| r.floor.as_ref().map(|f| f.write_s)),
        ratio_to_floor: ratio,
        ratio_per_run: col(&|r| r.ratio_to_floor),
        gb_per_s: gbs,
        tb_per_min: gbs.map(|g| g * 60.0 / 1000.0),
        records_per_s: match (wall, records) {
            (Some(w), Some(n)) if w.median > 0.0 => Some(n as f64 / w.median),
            _ => None,
        },
        cpu_busy_pct: col(&|r| Some(r.machine.cpu_busy_pct)),
        disk_busy_pct: col(&|r| r.machine.disks.iter().map(|d| d.busy_pct).reduce(f64::max)),
        xsort_cpu_utilization: col(&|r| r.xsort_stats.as_ref().map(|x| x.cpu_utilization)),
        energy,
        price,
        search: out.search.clone(),
        target,
    }
}

fn energy(ctx: &Context, valid: &[&Run], records: Option<u64>) -> Energy {
    if !ctx.energy.measured {
        let why = ctx.energy.reason.clone().unwrap_or_else(|| "no power counter".into());
        return Energy { measured: false, text: format!("energy: not measured ({why})"), joules: None, records_per_joule: None };
    }
    let j: Vec<f64> = valid.iter().filter_map(|r| r.machine.energy_j).collect();
    let Some(sum) = Summary::of(&j) else {
        return Energy {
            measured: false,
            text: "energy: not measured (no valid run with a complete counter reading)".into(),
            joules: None,
            records_per_joule: None,
        };
    };
    let rpj = records.filter(|_| sum.median > 0.0).map(|n| n as f64 / sum.median);
    let zones: Vec<&str> = ctx.energy.zones.iter().map(|z| z.name.as_str()).collect();
    Energy {
        measured: true,
        text: format!(
            "energy: {:.1} J per run (median of {}), {} records per joule; counters {} (CPU packages and DRAM only: disks, fans and power supply are not counted)",
            sum.median,
            sum.n,
            rpj.map_or("?".into(), |x| format!("{x:.0}")),
            zones.join(" + ")
        ),
        joules: Some(sum),
        records_per_joule: rpj,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn run_lists() {
        assert_eq!(super::list(&[1, 2, 3, 5, 7, 8]), "1-3, 5, 7-8");
        assert_eq!(super::list(&[4]), "4");
        assert_eq!(super::list(&[]), "");
    }
}
