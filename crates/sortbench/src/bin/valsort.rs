//! `valsort`: a drop-in for the Sort Benchmark's valsort 1.5.
//!
//! Parsing and validation live in the `xsort_sortbench` library; this file
//! only does the printing and the exit status: 0 when every record is in
//! order, 1 when one is not, and 1 with a message for a refused command
//! line, an unreadable, empty or truncated input, or a failed `-o` write.

use std::fs::File;
use std::io::Write;
use std::process::ExitCode;

use anyhow::Context;
use xsort_sortbench::cli::valsort::{parse, ValsortArgs, USAGE};
use xsort_sortbench::{validate_file, validate_summary_file, Error};

fn main() -> ExitCode {
    let Ok(args) = parse(std::env::args_os().skip(1)) else {
        eprint!("{USAGE}");
        return ExitCode::from(1);
    };
    match run(&args) {
        Ok(status) => ExitCode::from(status),
        Err(err) => {
            eprintln!("{err}");
            ExitCode::from(1)
        }
    }
}

fn run(args: &ValsortArgs) -> anyhow::Result<u8> {
    // Like the reference, create the summary file before reading anything.
    let mut summary_file = match &args.summary_out {
        Some(path) => Some(File::create(path).map_err(|source| Error::Open { path: path.clone(), source })?),
        None => None,
    };
    let summary = if args.summaries { validate_summary_file(&args.path, args.opts.order)? } else { validate_file(&args.path, &args.opts)? };
    if let (Some(file), Some(path)) = (&mut summary_file, &args.summary_out) {
        file.write_all(&summary.to_bytes()).with_context(|| format!("{}: cannot write the summary", path.display()))?;
    }
    if !args.quiet {
        std::io::stderr().lock().write_all(summary.report().as_bytes()).context("cannot print the report")?;
    }
    Ok(if summary.is_ordered() { 0 } else { 1 })
}
