//! The `xsort` binary: parses the command line, runs the sorter, reports. Thin by design: the work
//! is in xsort-core.

// The flags' doc comments are their --help text, where `[:TYPE]` and the like are usage syntax,
// not links.
#![allow(rustdoc::broken_intra_doc_links)]

mod args;
mod exit;
mod lines;
mod manual;
mod nsort_command;
mod progress;
mod settings;
mod spec_lines;
mod usage;

use anyhow::{Context, Result};
use clap::{CommandFactory, Parser};
use exit::{OK as EXIT_OK, TROUBLE as EXIT_TROUBLE};
use settings::Job;
use std::io::Write;
use std::process::ExitCode;
use xsort_core::{SortCounters, SortStats};
use xsort_io::stats_file::StatsFile;

// Notes which standard streams were closed at start, before Rust's runtime reopens them on
// /dev/null (see xsort_io::stdio).
xsort_io::record_closed_streams_at_start!();

fn main() -> ExitCode {
    if let Err(e) = xsort_io::signals::install() {
        eprintln!("{}: cannot install signal handling: {}", exit::program(), xsort_io::error::os_text(&e));
        return ExitCode::from(EXIT_TROUBLE);
    }
    let mut argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if nsort_command::run_as_nsort(exit::program()) {
        argv = nsort_command::gather_statements(argv);
    }
    let argv = usage::gnu_abbreviations(lines::rewrite_obsolete_keys(argv));
    let args = match args::Args::try_parse_from(&argv) {
        Ok(a) => a,
        Err(e) if e.use_stderr() => {
            // GNU's shape: one "xsort: ..." line naming the problem, then where to look (the name is the
            // one xsort was run as).
            eprintln!("{}: {}", exit::program(), usage::message(&e, &argv));
            eprintln!("Try '{} --help' for more information.", exit::program());
            return ExitCode::from(EXIT_TROUBLE);
        }
        // --help and --version
        Err(e) => return print_help(&e.render().to_string()),
    };
    if args.help_all {
        return print_help(&args::Args::command().render_long_help().to_string());
    }
    // A panic is a bug in xsort; it must still end as one line and exit status 2. Unwinding drops the
    // partial output (removing it) before we get here.
    // The panic's report ("panicked at FILE:LINE:COL:\nMESSAGE") goes on the one line.
    std::panic::set_hook(Box::new(|info| {
        eprintln!("{}: internal error: {}", exit::program(), exit::without_os_error_numbers(&info.to_string()).replace('\n', " "))
    }));
    match std::panic::catch_unwind(|| run(args)) {
        Ok(Ok(status)) => ExitCode::from(status),
        Ok(Err(e)) => {
            if exit::is_closed_stdout(&e) {
                exit::die_of_sigpipe();
            }
            eprintln!("{}: {}", exit::program(), exit::message(&e));
            ExitCode::from(exit::status_of(&e))
        }
        Err(_) => ExitCode::from(EXIT_TROUBLE),
    }
}

/// Prints a help or the version (options written as GNU writes them); returns the exit status.
fn print_help(text: &str) -> ExitCode {
    if let Err(closed) = xsort_io::stdio::stdout_output() {
        eprintln!("{}: {closed}", exit::program());
        return ExitCode::from(EXIT_TROUBLE);
    }
    // Written and flushed here, so that a full or broken standard output is an error as in GNU
    // (`xsort --version > /dev/full`: "write error", exit status 2).
    let mut out = std::io::stdout().lock();
    if let Err(failed) = write!(out, "{}", usage::gnu_option_style(text)).and_then(|()| out.flush()) {
        eprintln!("{}: write error: {}", exit::program(), xsort_io::error::os_text(&failed));
        return ExitCode::from(EXIT_TROUBLE);
    }
    ExitCode::from(EXIT_OK)
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
    warn(&s.report.warnings);
    match &s.job {
        Job::Sort(sort) => {
            let inputs: Vec<std::path::PathBuf> = sort.input_names().into_iter().filter(|p| p.as_os_str() != "-").map(Into::into).collect();
            let json = s.report.stats_json.as_deref().map(|p| StatsFile::open(p, sort.output_file(), &inputs)).transpose()?;
            let counters = std::sync::Arc::new(SortCounters::default());
            let bar = s.report.progress.then(|| progress::Progress::start(counters.clone()));
            let result = sort.clone().progress(counters).run();
            if let Some(b) = bar {
                b.finish(result.is_ok());
            }
            let stats = result.map_err(|e| s.explain(e))?;
            warn(&stats.warnings);
            report(&stats, s.report.stats, json)?;
            Ok(EXIT_OK)
        }
        Job::Check { sort, quiet } => {
            let name = sort.input_names()[0].display().to_string();
            let Some(d) = sort.clone().check()? else {
                return Ok(EXIT_OK);
            };
            if !quiet {
                let mut msg = format!("{}: {name}:{}: disorder: ", exit::program(), d.line_number).into_bytes();
                msg.extend_from_slice(&d.line);
                msg.push(b'\n');
                let _ = std::io::stderr().write_all(&msg);
            }
            Ok(exit::DISORDER)
        }
        Job::Debug { sort, merge, unique } => {
            // A closed standard output fails before any warning is printed.
            if sort.output_file().is_none() {
                xsort_io::stdio::stdout_output()?;
            }
            if let xsort_core::Order::Lines(order, _) = sort.order()? {
                for w in order.debug_warnings() {
                    eprintln!("{}: {w}", exit::program());
                }
            }
            lines::debug_sort(sort, *merge, *unique)?;
            Ok(EXIT_OK)
        }
    }
}

fn warn(warnings: &[String]) {
    for w in warnings {
        eprintln!("{}: warning: {w}", exit::program());
    }
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
