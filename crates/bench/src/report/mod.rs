//! The report: one [`Report`] value, serialized as `report.json` (schema
//! `xsort-bench/1`, documented in the crate README and in
//! `report.schema.json`), and rendered as `report.md` and a self-contained
//! `report.html` with inline SVG plots, plus a short terminal summary.

mod answers;
mod document;
pub mod figures;
mod plots;

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use serde::Serialize;

use crate::categories::Outcome;
use crate::cli::{Cache, Category, Format, Settings};
use crate::context::Context;
use crate::monitor::Point;
use crate::run::{shell_words, Run};
pub use answers::Answer;
pub use figures::Figures;

/// Version of the report.json layout.
pub const SCHEMA: &str = "xsort-bench/1";

/// The settings as the report states them.
#[derive(Clone, Debug, Serialize)]
pub struct SettingsOut {
    pub runs: usize,
    pub records: u64,
    pub dir: String,
    pub out: String,
    pub xsort: String,
    /// --ranks (null: one machine, one xsort process).
    pub ranks: Option<usize>,
    /// mpirun's options before -np (empty without --ranks).
    pub mpirun_args: Vec<String>,
    pub cache: Cache,
    pub sync: bool,
    pub format: Format,
    /// "uniform" or "skewed".
    pub distribution: String,
    pub record_size: u64,
    pub key: String,
    pub threads: Option<usize>,
    pub memory: Option<String>,
    pub buffered: bool,
    pub transfer_size: Option<String>,
    pub temp_dirs: Vec<String>,
    pub xsort_extra_args: Vec<String>,
    pub system_price_usd: Option<f64>,
    pub max_bytes: Option<u64>,
    pub limit_s: Option<f64>,
    pub floor_transfer_bytes: usize,
    pub floor_inflight: usize,
    pub powercap: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub schema: String,
    pub category: Category,
    pub started_utc: String,
    pub finished_utc: String,
    pub note: String,
    /// xsort-bench's own command line, shell-quoted.
    pub command_line: String,
    pub settings: SettingsOut,
    pub context: Context,
    pub figures: Figures,
    pub answers: Vec<Answer>,
    /// Loud problems: invalid runs, unmet cache state, missing stats.
    pub warnings: Vec<String>,
    /// The valid measured run closest to the median, shown over time.
    pub representative_run: Option<usize>,
    /// Machine CPU and disk use every 100 ms during the representative run.
    pub representative_machine_series: Vec<Point>,
    pub runs: Vec<Run>,
}

impl Report {
    pub fn build(s: &Settings, ctx: Context, out: Outcome, started: String, work: &Path) -> Report {
        let figures = figures::compute(s, &ctx, &out);
        let rep = representative(&out.runs, &figures);
        let series = rep.and_then(|i| out.runs.iter().find(|r| r.index == i)).map(|r| r.machine.series.clone()).unwrap_or_default();
        let warnings = warnings(s, &out.runs);
        let settings = SettingsOut {
            runs: s.runs,
            records: s.records,
            dir: s.dir.display().to_string(),
            out: s.out.display().to_string(),
            xsort: s.xsort.display().to_string(),
            ranks: s.ranks.as_ref().map(|(n, _)| *n),
            mpirun_args: s.mpirun_args.clone(),
            cache: s.cache,
            sync: s.sync,
            format: s.format,
            distribution: if s.skew { "skewed" } else { "uniform" }.into(),
            record_size: 100,
            key: "bytes 0..10, unsigned (memcmp) order".into(),
            threads: s.threads,
            memory: s.memory.clone(),
            buffered: s.buffered,
            transfer_size: s.transfer_size.clone(),
            temp_dirs: s.temp_dirs(work).iter().map(|p| p.display().to_string()).collect(),
            xsort_extra_args: s.xsort_args.clone(),
            system_price_usd: s.system_price,
            max_bytes: s.max_bytes,
            limit_s: s.limit_s,
            floor_transfer_bytes: s.floor_transfer,
            floor_inflight: s.floor_inflight,
            powercap: s.powercap.display().to_string(),
        };
        let program = PathBuf::from(s.argv.first().cloned().unwrap_or_else(|| "xsort-bench".into()));
        let mut report = Report {
            schema: SCHEMA.into(),
            category: s.category,
            started_utc: started,
            finished_utc: crate::context::utc_now(),
            note: s.note.clone(),
            command_line: shell_words(&program, s.argv.get(1..).unwrap_or(&[])),
            settings,
            context: ctx,
            figures,
            answers: Vec::new(),
            warnings,
            representative_run: rep,
            representative_machine_series: series,
            runs: out.runs,
        };
        report.answers = answers::answer(&report);
        report
    }

    /// Writes report.json, report.md and report.html into `dir`.
    pub fn write(&self, dir: &Path) -> Result<Vec<PathBuf>> {
        fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let json = serde_json::to_string_pretty(self).context("serializing the report")?;
        let doc = document::build(self);
        let plots = plots::all(self).context("drawing the plots")?;
        let files = [("report.json", json), ("report.md", document::markdown(&doc)), ("report.html", document::html(self, &doc, &plots))];
        let mut written = Vec::new();
        for (name, text) in files {
            let p = dir.join(name);
            fs::write(&p, text).with_context(|| format!("writing {}", p.display()))?;
            written.push(p);
        }
        Ok(written)
    }

    /// A few lines for the terminal.
    pub fn summary(&self) -> String {
        let f = &self.figures;
        let mut out = vec![format!(
            "{}: {} of {} measured runs valid{}, cache {}, output {}",
            self.category.name(),
            f.valid_runs,
            f.measured_runs,
            f.records.map_or(String::new(), |n| format!(", {n} records ({})", bytes(n * 100))),
            if self.settings.cache == Cache::Cold { "cold" } else { "warm" },
            if self.settings.sync { "synced" } else { "not synced" },
        )];
        if let Some(w) = f.wall_s {
            out.push(format!(
                "  wall time  min {:.3}  median {:.3}  mean {:.3}  p90 {:.3}  max {:.3}  sd {:.3} s",
                w.min, w.median, w.mean, w.p90, w.max, w.stddev
            ));
        }
        if let (Some(fl), Some(r)) = (f.floor_s, f.ratio_to_floor) {
            out.push(format!("  I/O floor  median {:.3} s (direct read + direct write and fsync): xsort = {r:.2}x the floor", fl.median));
        }
        if let (Some(g), Some(t)) = (f.gb_per_s, f.tb_per_min) {
            out.push(format!("  throughput {g:.3} GB/s = {t:.4} TB/min"));
        }
        if let Some(se) = &f.search {
            out.push(match se.result_bytes {
                Some(b) => format!(
                    "  {}: {} sorted within {:.1} s{}",
                    self.category.name(),
                    bytes(b),
                    se.limit_s,
                    if se.hit_cap { " (the cap stopped the search)" } else { "" }
                ),
                None => format!("  {}: no size confirmed within {:.1} s ({})", self.category.name(), se.limit_s, se.note),
            });
        }
        if let Some(p) = &f.price {
            out.push(format!("  price: one cent buys {:.1} s of this ${:.0} system", p.seconds_per_cent, p.system_price_usd));
        }
        out.push(format!("  {}", f.energy.text));
        if let Some(t) = &f.target {
            out.push(format!(
                "  target: median <= {:.2}x the floor: {} ({:.2}x; aim {:.2}x {})",
                t.ratio_limit,
                if t.met { "met" } else { "NOT met" },
                t.ratio,
                t.ratio_aim,
                if t.aim_met { "met" } else { "not met" }
            ));
        }
        for w in &self.warnings {
            out.push(format!("  WARNING: {w}"));
        }
        out.join("\n")
    }
}

fn representative(runs: &[Run], f: &Figures) -> Option<usize> {
    let m = f.wall_s?.median;
    figures::counted(runs).into_iter().min_by(|a, b| (a.wall_s - m).abs().total_cmp(&(b.wall_s - m).abs())).map(|r| r.index)
}

fn warnings(s: &Settings, runs: &[Run]) -> Vec<String> {
    let mut w = Vec::new();
    let bad: Vec<&Run> = runs.iter().filter(|r| !r.valid).collect();
    if !bad.is_empty() {
        w.push(format!(
            "{} of {} runs INVALID and excluded from every figure: {}",
            bad.len(),
            runs.len(),
            bad.iter().map(|r| format!("run {} ({})", r.index, r.problems.join("; "))).collect::<Vec<_>>().join(", ")
        ));
    }
    let off: Vec<String> = runs
        .iter()
        .filter(|r| match s.cache {
            Cache::Cold => r.input_resident_fraction > 0.05,
            Cache::Warm => r.input_resident_fraction < 0.95,
        })
        .map(|r| format!("run {} ({:.0}% resident)", r.index, r.input_resident_fraction * 100.0))
        .collect();
    if !off.is_empty() {
        w.push(format!(
            "the input was not {} as asked in {}",
            if s.cache == Cache::Cold { "evicted" } else { "fully cached" },
            off.join(", ")
        ));
    }
    if s.cache == Cache::Warm {
        let reread: Vec<String> = runs
            .iter()
            .filter(|r| r.input_resident_fraction > 0.95)
            .filter(|r| r.machine.disks.iter().map(|d| d.read_bytes).sum::<u64>() as f64 > 0.5 * r.input.bytes as f64)
            .map(|r| r.index.to_string())
            .collect();
        if !reread.is_empty() {
            w.push(format!(
                "the input was in the page cache, yet the disk delivered at least half its size during the sort in runs {} (direct reads bypass the cache): this warm scenario measured disk reads",
                reread.join(", ")
            ));
        }
    }
    let no_stats: Vec<String> =
        runs.iter().filter(|r| r.xsort_stats.is_none() && r.cluster.is_none()).map(|r| r.index.to_string()).collect();
    if !no_stats.is_empty() {
        w.push(format!("no xsort statistics (--stats-json) from runs {}", no_stats.join(", ")));
    }
    w
}

/// Decimal byte size: 100.0 MB, 1.00 GB.
pub fn bytes(b: u64) -> String {
    let x = b as f64;
    match x {
        x if x >= 1e12 => format!("{:.2} TB", x / 1e12),
        x if x >= 1e9 => format!("{:.2} GB", x / 1e9),
        x if x >= 1e6 => format!("{:.1} MB", x / 1e6),
        x if x >= 1e3 => format!("{:.1} kB", x / 1e3),
        _ => format!("{b} B"),
    }
}

/// Binary byte size for memory: 23.4 GiB.
pub fn ibytes(b: u64) -> String {
    let x = b as f64;
    let g = 1024.0 * 1024.0 * 1024.0;
    if x >= g {
        format!("{:.1} GiB", x / g)
    } else {
        format!("{:.1} MiB", x / (1024.0 * 1024.0))
    }
}
