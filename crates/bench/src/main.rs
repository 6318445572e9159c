//! xsort-bench: runs the Sort Benchmark categories (datamation, minutesort,
//! joulesort, pennysort, throughput) end to end with the `xsort` binary and
//! writes reports that say what was measured, on what, and how.
//!
//! `main` only dispatches: flags ([`cli`]) -> machine facts ([`context`],
//! [`energy`]) -> the category's runs ([`categories`], each one a
//! generate -> floor -> sort -> validate cycle in [`run`], on the cluster
//! with `--ranks` ([`cluster`])) -> figures and
//! reports ([`report`]). Exit status: 0 when every run was valid, 1 when
//! some run failed validation (reports are still written, loudly), 2 on
//! any other trouble.

mod categories;
mod cli;
mod cluster;
mod context;
mod dataset;
mod energy;
mod floor;
mod interrupt;
mod manual;
mod monitor;
mod progress;
mod report;
mod run;
mod stats;
mod xstats;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, Result};
use clap::Parser;

use crate::cli::{Args, Settings, Tool};
use crate::energy::Probe;
use crate::progress::Progress;
use crate::report::Report;
use crate::run::Runner;

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().collect();
    let args = Args::parse();
    match bench(args, argv) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("xsort-bench: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// The work directory under --dir; removed when dropped unless kept.
struct WorkDir {
    path: PathBuf,
    keep: bool,
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        if self.keep {
            // The output and scratch files are removed after each run; the input stays.
            eprintln!("xsort-bench: kept {}", self.path.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// Runs the benchmark; Ok(false) when some run was invalid.
fn bench(args: Args, argv: Vec<String>) -> Result<bool> {
    if args.generate_man.is_some() || args.generate_completions.is_some() {
        if let Some(dir) = &args.generate_man {
            manual::write_man(dir)?;
        }
        if let Some(dir) = &args.generate_completions {
            manual::write_completions(dir)?;
        }
        return Ok(true);
    }
    match &args.tool {
        Some(Tool::Floor(f)) => return floor::run_command(f).map(|()| true),
        Some(Tool::Evict { files }) => {
            for f in files {
                dataset::evict(f)?;
            }
            return Ok(true);
        }
        None => {}
    }
    let s = Settings::from_args(args, argv)?;
    interrupt::install();
    let started = context::utc_now();
    std::fs::create_dir_all(&s.out).with_context(|| format!("creating the report directory {}", s.out.display()))?;
    let work = WorkDir { path: s.dir.join(format!("xsort-bench-{}", std::process::id())), keep: s.keep };
    std::fs::create_dir_all(&work.path).with_context(|| format!("creating {}", work.path.display()))?;

    let probe = energy::probe(&s.powercap);
    let zones = match &probe {
        Probe::Available(z) => Some(z.clone()),
        Probe::NotMeasured(_) => None,
    };
    let temps = s.temp_dirs(&work.path);
    let mut devices: Vec<String> =
        std::iter::once(work.path.as_path()).chain(temps.iter().map(PathBuf::as_path)).filter_map(context::disk_of_path).collect();
    devices.sort();
    devices.dedup();
    let temp_is_work = temps.iter().any(|t| t == &work.path);
    let mut dirs: Vec<(&str, &Path)> = vec![(if temp_is_work { "data, output and temp" } else { "data and output" }, work.path.as_path())];
    dirs.extend(temps.iter().filter(|t| *t != &work.path).map(|t| ("temp", t.as_path())));
    dirs.push(("reports", s.out.as_path()));
    let mut ctx = context::collect(&dirs, &s.xsort, &probe, &s.powercap);
    if let Some((ranks, mpirun)) = &s.ranks {
        ctx.cluster = Some(cluster::probe(&s, *ranks, mpirun, &work.path)?);
    }

    let progress = Progress::new(s.progress, (!s.category.searches()).then_some(s.runs as u64));
    let mut runner = Runner { settings: &s, work: work.path.clone(), devices, energy: zones, progress: &progress, count: 0 };
    let outcome = categories::execute(&s, &mut runner);
    progress.finish();
    let outcome = outcome?;
    let all_valid = outcome.runs.iter().all(|r| r.valid);

    let report = Report::build(&s, ctx, outcome, started, &work.path);
    let files = report.write(&s.out)?;
    println!("{}", report.summary());
    println!("  reports: {}", files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>().join(" "));
    Ok(all_valid)
}
