//! The size search of minutesort and pennysort: the most data sorted within
//! a time limit, bounded by `--max-bytes` and free disk.
//!
//! 1. Grow: from `--records`, each probe that finishes (valid) within the
//!    limit scales the size by the time left (limit x 0.95 / time, clamped
//!    to 1.5x..8x, since time grows about linearly), up to the cap.
//! 2. Narrow: once a probe fails (too slow, or invalid), bisect
//!    geometrically between the largest size that passed and the smallest
//!    that failed until they are within 5%, at most [`MAX_PROBES`] probes in
//!    all.
//! 3. Confirm: `--runs` runs at the size found; their median (valid runs
//!    only) must be within the limit, else the size steps down 10% and is
//!    confirmed again (twice at most). Only the runs of the last attempt
//!    are "measure" runs; earlier attempts are kept as "confirm" runs.
//!
//! The cap is the smaller of `--max-bytes` and a third of the free space of
//! the work directory (input, output and temp runs may all be there).

use anyhow::Result;
use serde::Serialize;

use crate::cli::Settings;
use crate::context::statvfs;
use crate::run::{Run, Runner};
use crate::stats::median;

/// Most probes before confirming.
pub const MAX_PROBES: usize = 12;

/// One probe.
#[derive(Clone, Debug, Serialize)]
pub struct Step {
    pub run_index: usize,
    pub records: u64,
    pub bytes: u64,
    pub wall_s: f64,
    pub valid: bool,
    pub within_limit: bool,
}

/// What the search did and found.
#[derive(Clone, Debug, Serialize)]
pub struct Search {
    pub limit_s: f64,
    /// The largest size the search could try.
    pub cap_bytes: u64,
    /// What set the cap.
    pub cap_reason: String,
    pub steps: Vec<Step>,
    /// The size confirmed within the limit, if any.
    pub result_records: Option<u64>,
    pub result_bytes: Option<u64>,
    /// Median wall time of the confirming runs at that size.
    pub result_median_s: Option<f64>,
    /// The cap, not the limit, stopped the search: more data would fit.
    pub hit_cap: bool,
    pub note: String,
}

/// Runs the search; returns every run (probes first) and the result.
pub fn search(s: &Settings, runner: &mut Runner, limit: f64) -> Result<(Vec<Run>, Search)> {
    let free = statvfs(&runner.work).map(|(f, _)| f);
    let (cap_bytes, cap_reason) = cap(s.max_bytes, free);
    let cap = (cap_bytes / 100).max(1);
    let (mut runs, steps, lo) = probe(s, runner, limit, cap)?;
    let hit_cap = lo == Some(cap);
    let mut found = Search {
        limit_s: limit,
        cap_bytes,
        cap_reason,
        steps,
        result_records: None,
        result_bytes: None,
        result_median_s: None,
        hit_cap,
        note: String::new(),
    };
    let Some(size) = lo else {
        found.note = format!("no size tried finished validly within {limit:.3} s");
        return Ok((runs, found));
    };
    confirm(s, runner, limit, size, &mut runs, &mut found)?;
    Ok((runs, found))
}

/// Grows, then narrows (phases 1 and 2): probes sizes up to `cap` records; returns the probe
/// runs, their steps and the largest size that passed, if any.
fn probe(s: &Settings, runner: &mut Runner, limit: f64, cap: u64) -> Result<(Vec<Run>, Vec<Step>, Option<u64>)> {
    let mut runs = Vec::new();
    let mut steps = Vec::new();
    let (mut lo, mut hi): (Option<u64>, Option<u64>) = (None, None);
    let mut size = s.records.min(cap);
    while steps.len() < MAX_PROBES {
        let run = runner.run(size, "search")?;
        let pass = run.valid && run.wall_s <= limit;
        runner.progress.println(format!(
            "probe {}: {} records ({:.1} MB) in {:.3} s: {}",
            steps.len() + 1,
            size,
            size as f64 / 1e4,
            run.wall_s,
            if !run.valid {
                "INVALID"
            } else if pass {
                "within the limit"
            } else {
                "over the limit"
            }
        ));
        steps.push(Step {
            run_index: run.index,
            records: size,
            bytes: size * 100,
            wall_s: run.wall_s,
            valid: run.valid,
            within_limit: pass,
        });
        let wall = run.wall_s;
        runs.push(run);
        if pass {
            lo = Some(lo.map_or(size, |l| l.max(size)));
        } else {
            hi = Some(hi.map_or(size, |h| h.min(size)));
        }
        let Some(next) = next_size(lo, hi, cap, limit, wall) else { break };
        size = next;
    }
    Ok((runs, steps, lo))
}

/// The next size to probe, given the largest size that passed (`lo`), the smallest that failed
/// (`hi`) and the last probe's wall time; None when the search has nothing left to try.
fn next_size(lo: Option<u64>, hi: Option<u64>, cap: u64, limit: f64, wall: f64) -> Option<u64> {
    match (lo, hi) {
        (Some(l), None) => {
            if l >= cap {
                return None;
            }
            let factor = (limit * 0.95 / wall.max(1e-3)).clamp(1.5, 8.0);
            Some(((l as f64 * factor) as u64).min(cap))
        }
        (None, Some(h)) => {
            if h <= 1 {
                return None;
            }
            Some((h / 4).max(1))
        }
        (Some(l), Some(h)) => {
            if (h as f64) <= l as f64 * 1.05 || h <= l + 1 {
                return None;
            }
            Some(((l as f64 * h as f64).sqrt() as u64).clamp(l + 1, h - 1))
        }
        (None, None) => None,
    }
}

/// Confirms (phase 3): `--runs` runs at `size`, stepping down 10% (twice at most) while their
/// median is over the limit; adds the runs to `runs` and the result and note to `found`.
fn confirm(s: &Settings, runner: &mut Runner, limit: f64, mut size: u64, runs: &mut Vec<Run>, found: &mut Search) -> Result<()> {
    let mut notes = Vec::new();
    for attempt in 0..3 {
        let first = runs.len();
        let walls = measure(s, runner, size, runs)?;
        match median(&walls) {
            Some(m) if m <= limit => {
                found.result_records = Some(size);
                found.result_bytes = Some(size * 100);
                found.result_median_s = Some(m);
                found.note = format!(
                    "{} confirming runs at {} records; median {:.3} s within {:.3} s{}",
                    s.runs,
                    size,
                    m,
                    limit,
                    if found.hit_cap { "; the cap stopped the search, so more data would fit" } else { "" }
                );
                return Ok(());
            }
            m => {
                notes.push(match m {
                    Some(m) => format!("confirming runs at {size} records took a median {m:.3} s > {limit:.3} s"),
                    None => format!("no confirming run at {size} records was valid"),
                });
                found.note = notes.join("; ");
                let next = (size as f64 * 0.9) as u64;
                if attempt == 2 || next == 0 {
                    // The figures show the last size tried, unconfirmed.
                    break;
                }
                // A failed confirmation is not a measurement of the reported size.
                for r in &mut runs[first..] {
                    r.purpose = "confirm".into();
                }
                size = next;
            }
        }
    }
    Ok(())
}

/// `--runs` measured runs at `size`, added to `runs`; returns the wall times of the valid ones.
fn measure(s: &Settings, runner: &mut Runner, size: u64, runs: &mut Vec<Run>) -> Result<Vec<f64>> {
    let mut walls = Vec::new();
    for _ in 0..s.runs {
        let run = runner.run(size, "measure")?;
        if run.valid {
            walls.push(run.wall_s);
        }
        runs.push(run);
        runner.progress.run_done();
    }
    Ok(walls)
}

/// The search's cap: `--max-bytes` and a third of free space, whichever is less.
fn cap(max_bytes: Option<u64>, free: Option<u64>) -> (u64, String) {
    let by_disk = free.map(|f| f / 3);
    match (max_bytes, by_disk) {
        (Some(m), Some(d)) if d < m => (d, format!("a third of the free space ({} bytes free)", free.unwrap_or(0))),
        (Some(m), _) => (m, format!("--max-bytes {m}")),
        (None, Some(d)) => (d, format!("a third of the free space ({} bytes free)", free.unwrap_or(0))),
        (None, None) => (u64::MAX / 2, "none known (free space unreadable, no --max-bytes)".to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps() {
        assert_eq!(cap(Some(1000), Some(30_000)).0, 1000);
        assert_eq!(cap(Some(1_000_000), Some(30_000)).0, 10_000);
        assert_eq!(cap(None, Some(300)).0, 100);
    }
}
