//! The benchmark categories: which runs each performs.
//!
//! Fixed-size categories (datamation, throughput, joulesort) run `--runs`
//! cycles on `--records` records. The search categories (minutesort,
//! pennysort) first probe sizes against their time limit
//! ([`search`]), then run `--runs` confirming cycles at the size found;
//! only those count as measured runs in the figures.

pub mod search;

use std::path::Path;

use anyhow::{bail, Result};

use crate::cli::{Category, Settings};
use crate::run::{Run, Runner};

pub use search::Search;

/// All runs of a benchmark, and the search when there was one.
pub struct Outcome {
    pub runs: Vec<Run>,
    pub search: Option<Search>,
}

/// Performs the category's runs.
pub fn execute(s: &Settings, runner: &mut Runner) -> Result<Outcome> {
    match s.category {
        Category::Datamation | Category::Throughput | Category::Joulesort => {
            check_space(&runner.work, s.records.saturating_mul(100))?;
            let mut runs = Vec::with_capacity(s.runs);
            for _ in 0..s.runs {
                runs.push(runner.run(s.records, "measure")?);
                runner.progress.run_done();
            }
            Ok(Outcome { runs, search: None })
        }
        Category::Minutesort | Category::Pennysort => {
            let limit = s.limit_s.unwrap_or(60.0);
            let (runs, found) = search::search(s, runner, limit)?;
            Ok(Outcome { runs, search: Some(found) })
        }
    }
}

/// Refuses a size that cannot fit: input and output (and the floor's
/// scratch file) need twice the data; temp runs of a spilled sort a third.
fn check_space(work: &Path, bytes: u64) -> Result<()> {
    let Some((free, _)) = crate::context::statvfs(work) else { return Ok(()) };
    let need = bytes.saturating_mul(2).saturating_add(64 << 20);
    if free < need {
        bail!(
            "{} needs at least {} free for input and output ({} when xsort spills), but {} has {}",
            crate::report::bytes(bytes),
            crate::report::bytes(need),
            crate::report::bytes(bytes.saturating_mul(3)),
            work.display(),
            crate::report::bytes(free)
        );
    }
    Ok(())
}
