//! The benchmark categories: which runs each performs.
//!
//! Fixed-size categories (datamation, throughput, joulesort) run `--runs`
//! cycles on `--records` records. The search categories (minutesort,
//! pennysort) first probe sizes against their time limit
//! ([`search`]), then run `--runs` confirming cycles at the size found;
//! only those count as measured runs in the figures.

pub mod search;

use anyhow::Result;

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
