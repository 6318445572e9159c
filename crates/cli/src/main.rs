//! The `xsort` binary: parses the command line, runs the sorter, reports. Thin by design: the work
//! is in xsort-core.

// The flags' doc comments are their --help text, where `[:TYPE]` and the like are usage syntax,
// not links.
#![allow(rustdoc::broken_intra_doc_links)]

mod args;
mod exit;
mod lines;
mod locale;
mod manual;
mod progress;
mod settings;
mod spec_lines;
mod usage;

use anyhow::{Context, Result};
use clap::Parser;
use exit::{OK as EXIT_OK, TROUBLE as EXIT_TROUBLE};
use settings::Job;
use std::io::Write;
use std::process::ExitCode;
use xsort_core::SortStats;
use xsort_io::stats_file::StatsFile;

// Notes which standard streams were closed at start, before Rust's runtime reopens them on
// /dev/null (see xsort_io::stdio).
xsort_io::record_closed_streams_at_start!();

fn main() -> ExitCode {
    if let Err(e) = xsort_io::signals::install() {
        eprintln!("xsort: cannot install signal handling: {}", xsort_io::error::os_text(&e));
        return ExitCode::from(EXIT_TROUBLE);
    }
    let argv = lines::rewrite_obsolete_keys(std::env::args_os().collect());
    let args = match args::Args::try_parse_from(&argv) {
        Ok(a) => a,
        Err(e) if e.use_stderr() => {
            // GNU's shape: one "xsort: ..." line naming the problem, then where to look.
            eprintln!("xsort: {}", usage::message(&e, &argv));
            eprintln!("Try 'xsort --help' for more information.");
            return ExitCode::from(EXIT_TROUBLE);
        }
        Err(e) => {
            // --help and --version
            if let Err(closed) = xsort_io::stdio::stdout_output() {
                eprintln!("xsort: {closed}");
                return ExitCode::from(EXIT_TROUBLE);
            }
            let _ = e.print();
            return ExitCode::from(EXIT_OK);
        }
    };
    // A panic is a bug in xsort; it must still end as one line and exit status 2. Unwinding drops the
    // partial output (removing it) before we get here.
    // The panic's report ("panicked at FILE:LINE:COL:\nMESSAGE") goes on the one line.
    std::panic::set_hook(Box::new(|info| {
        eprintln!("xsort: internal error: {}", exit::without_os_error_numbers(&info.to_string()).replace('\n', " "))
    }));
    match std::panic::catch_unwind(|| run(args)) {
        Ok(Ok(status)) => ExitCode::from(status),
        Ok(Err(e)) => {
            if exit::is_closed_stdout(&e) {
                exit::die_of_sigpipe();
            }
            eprintln!("xsort: {}", exit::message(&e));
            ExitCode::from(exit::status_of(&e))
        }
        Err(_) => ExitCode::from(EXIT_TROUBLE),
    }
}

/// Runs the invocation; returns the exit status.
fn run(args: args::Args) -> Result<u8> {
    if args.generate_man.is_some() || args.generate_completions.is_some() {
        if let Some(dir) = &args.generate_man {
            manual::write_man(dir)?;
        }
        if let Some(dir) = &args.generate_completions {
            manual::write_completions(dir)?;
        }
        return Ok(EXIT_OK);
    }
    let s = settings::Settings::from_args(args)?;
    warn(&s.warnings);
    match s.job {
        Job::Sort(cfg) => {
            let output = if let xsort_core::Output::Path(p) = &cfg.output { Some(p.as_path()) } else { None };
            let inputs: Vec<std::path::PathBuf> =
                cfg.inputs.iter().filter_map(|i| if let xsort_core::Input::Path(p) = i { Some(p.clone()) } else { None }).collect();
            let json = s.stats_json.as_deref().map(|p| StatsFile::open(p, output, &inputs)).transpose()?;
            let engine = xsort_core::Engine::new(cfg);
            sort_and_report(s.progress, engine.counters(), s.stats, json, || engine.run())
        }
        Job::Check { input, quiet, unique, terminator, order } => {
            start_workers(s.threads)?;
            let Some(d) = xsort_core::text::check::check_order(&input, terminator, &order, unique, 64 << 20)? else {
                return Ok(EXIT_OK);
            };
            if !quiet {
                let name = input.name().display().to_string();
                let mut msg = format!("xsort: {name}:{}: disorder: ", d.line_number).into_bytes();
                msg.extend_from_slice(&d.line);
                msg.push(b'\n');
                let _ = std::io::stderr().write_all(&msg);
            }
            Ok(exit::DISORDER)
        }
        Job::Debug(cfg) => {
            // A closed standard output fails before any warning is printed.
            if cfg.output == xsort_core::Output::Stdout {
                xsort_io::stdio::stdout_output()?;
            }
            start_workers(s.threads)?;
            if let xsort_core::Format::Lines(lines) = &cfg.format {
                for w in lines.order.debug_warnings() {
                    eprintln!("xsort: {w}");
                }
            }
            lines::debug_sort(&cfg)?;
            Ok(EXIT_OK)
        }
    }
}

fn warn(warnings: &[String]) {
    for w in warnings {
        eprintln!("xsort: warning: {w}");
    }
}

/// Sizes rayon's global pool for the jobs that run outside the sorter (`-c`, `--debug`); a sort
/// starts worker threads of its own.
fn start_workers(threads: usize) -> Result<()> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("xsort-worker-{i}"))
        .build_global()
        .context("cannot start worker threads")
}

/// Runs a sort (with a progress bar when `progress`), then reports its statistics as asked: printed
/// when `print`, into `json` (checked and opened before the sort, see [`StatsFile`]).
fn sort_and_report(
    progress: bool,
    counters: std::sync::Arc<xsort_core::SortCounters>,
    print: bool,
    json: Option<StatsFile>,
    sort: impl FnOnce() -> xsort_core::Result<SortStats>,
) -> Result<u8> {
    let bar = progress.then(|| progress::Progress::start(counters));
    let result = sort();
    if let Some(b) = bar {
        b.finish(result.is_ok());
    }
    report(&result?, print, json)?;
    Ok(EXIT_OK)
}

/// Prints and writes the statistics as asked.
fn report(stats: &SortStats, print: bool, json: Option<StatsFile>) -> Result<()> {
    if print {
        eprint!("{}", stats.render());
    }
    if let Some(file) = json {
        let text = serde_json::to_string_pretty(stats).context("cannot encode statistics")?;
        file.write(&(text + "\n"))?;
    }
    Ok(())
}
