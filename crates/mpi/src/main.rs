//! `xsort-mpi`: xsort across the ranks of an MPI job. `mpirun -np N xsort-mpi [options] -o OUTPUT
//! INPUT...` sorts as `xsort` would on one machine: each rank reads its share, the ranks exchange
//! records by key range, each sorts its range with xsort's engine, and the output is committed
//! only when every rank has written its range. See [`job`] for the phases.

mod comm;
mod exchange;
mod job;
mod options;
mod output;
mod share;
mod split;
mod stats;

use std::process::ExitCode;

/// Exit status of a failed job (xsort's, for trouble).
const TROUBLE: u8 = 2;

fn main() -> ExitCode {
    // First, before MPI starts threads of its own: the signal cleanup thread (SIGTERM from mpirun
    // after another rank failed removes this rank's named temp files).
    if let Err(e) = xsort_io::signals::install() {
        eprintln!("xsort-mpi: cannot install signal handling: {}", xsort_io::error::os_text(&e));
        return ExitCode::from(TROUBLE);
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let options = match options::Options::parse(&args) {
        Ok(o) => o,
        Err(e) => {
            // Every rank parses the same command line: rank 0 (or a run outside mpirun) says why.
            if std::env::var("OMPI_COMM_WORLD_RANK").map_or(true, |r| r == "0") {
                eprintln!("xsort-mpi: {}", comm::one_line(&e));
                eprintln!("Try 'xsort-mpi --help' for more information.");
            }
            return ExitCode::from(TROUBLE);
        }
    };
    if let Some(text) = &options.info {
        print!("{text}");
        return ExitCode::SUCCESS;
    }
    // Only the main thread calls MPI; the sort's worker threads never do.
    let Some((universe, _)) = mpi::initialize_with_threading(mpi::Threading::Funneled) else {
        eprintln!("xsort-mpi: MPI is already initialized");
        return ExitCode::from(TROUBLE);
    };
    let comm = comm::Comm::new(universe.world());
    std::panic::set_hook(Box::new(|info| eprintln!("xsort-mpi: internal error: {}", info.to_string().replace('\n', " "))));
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| job::run(&comm, &options)));
    match outcome {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(comm::Stop)) => ExitCode::from(TROUBLE),
        // A panic is a bug: this rank cannot go on with the collectives, so the job ends here.
        Err(_) => comm.world_abort(),
    }
}
