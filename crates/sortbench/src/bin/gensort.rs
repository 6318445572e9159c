//! `gensort`: a drop-in for the Sort Benchmark's gensort 1.5.
//!
//! Parsing, generation and I/O live in the `xsort_sortbench` library; this
//! file only prints (the usage text, the `-c` checksum, errors) and picks the
//! exit status: 0 on success, 1 for a refused command line or any failure.

use std::process::ExitCode;

use anyhow::Context;
use xsort_sortbench::cli::gensort::{parse, GensortArgs, USAGE};
use xsort_sortbench::{format_checksum, generate_with};

fn main() -> ExitCode {
    // Rust ignores SIGPIPE; the C tool does not, so `gensort N /dev/stdout |
    // head` ends quietly there. Restore the default to end the same way.
    // SAFETY: called first thing, before any other thread exists; SIG_DFL
    // is a valid disposition for SIGPIPE.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let Ok(args) = parse(std::env::args_os().skip(1)) else {
        eprint!("{USAGE}");
        return ExitCode::from(1);
    };
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            // `{:#}` would repeat the OS error the library message already
            // carries; the outermost message is the reference's wording.
            eprintln!("{err}");
            ExitCode::from(1)
        }
    }
}

fn run(args: &GensortArgs) -> anyhow::Result<()> {
    let sum = generate_with(&args.path, &args.job)?;
    if args.job.checksum {
        use std::io::Write;
        // One line, after the file is complete, as the reference prints it.
        writeln!(std::io::stderr().lock(), "{}", format_checksum(sum)).context("cannot print the checksum")?;
    }
    Ok(())
}
