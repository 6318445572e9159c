//! The `xsort` binary: parses the command line, runs the sorter, reports. Thin by design: the work
//! is in xsort-core.

mod args;
mod progress;
mod settings;

use anyhow::{Context, Result};
use clap::Parser;
use std::process::ExitCode;

/// Exit status of a successful sort.
const EXIT_OK: u8 = 0;
/// Exit status of any trouble: bad options, bad input, I/O errors (GNU sort's convention).
const EXIT_TROUBLE: u8 = 2;

fn main() -> ExitCode {
    if let Err(e) = xsort_io::signals::install() {
        eprintln!("xsort: cannot install signal handling: {e}");
        return ExitCode::from(EXIT_TROUBLE);
    }
    let args = match args::Args::try_parse() {
        Ok(a) => a,
        Err(e) if e.use_stderr() => {
            // GNU's shape: one "xsort: ..." line naming the problem, then where to look.
            let text = e.render().to_string();
            let first = text.lines().next().unwrap_or("invalid usage");
            eprintln!("xsort: {}", first.trim_start_matches("error: "));
            eprintln!("Try 'xsort --help' for more information.");
            return ExitCode::from(EXIT_TROUBLE);
        }
        Err(e) => {
            let _ = e.print(); // --help and --version
            return ExitCode::from(EXIT_OK);
        }
    };
    // A panic is a bug in xsort; it must still end as one line and exit status 2. Unwinding drops the
    // partial output (removing it) before we get here.
    std::panic::set_hook(Box::new(|info| eprintln!("xsort: internal error: {info}")));
    match std::panic::catch_unwind(|| run(args)) {
        Ok(Ok(())) => ExitCode::from(EXIT_OK),
        Ok(Err(e)) => {
            eprintln!("xsort: {e:#}");
            ExitCode::from(EXIT_TROUBLE)
        }
        Err(_) => ExitCode::from(EXIT_TROUBLE),
    }
}

fn run(args: args::Args) -> Result<()> {
    let settings = settings::Settings::from_args(args)?;
    for w in &settings.warnings {
        eprintln!("xsort: warning: {w}");
    }
    rayon::ThreadPoolBuilder::new()
        .num_threads(settings.config.threads)
        .thread_name(|i| format!("xsort-worker-{i}"))
        .build_global()
        .context("cannot start worker threads")?;
    let sorter = xsort_core::Sorter::new(settings.config.clone());
    let progress = settings.progress.then(|| progress::Progress::start(sorter.counters()));
    let result = sorter.run();
    if let Some(p) = progress {
        p.finish();
    }
    let stats = result?;
    if settings.stats {
        eprint!("{}", stats.render());
    }
    if let Some(path) = &settings.stats_json {
        let text = serde_json::to_string_pretty(&stats).context("cannot encode statistics")?;
        std::fs::write(path, text + "\n").with_context(|| format!("{}: cannot write statistics", path.display()))?;
    }
    Ok(())
}
