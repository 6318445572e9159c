//! `xsort-mpi`: xsort across the ranks of an MPI job. `mpirun -np N xsort-mpi [options] -o OUTPUT
//! INPUT...` sorts as `xsort` would on one machine: each rank reads its share, the ranks exchange
//! records by key range, each sorts its range with xsort's engine, and the output is committed
//! only when every rank has written its range. See [`job`] for the phases.

mod comm;
mod exchange;
mod fresh;
mod inflight;
mod inplace;
mod job;
mod launcher;
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
    // Then, still before any other thread: a rank stops when its launcher dies, and notes the
    // SIGCONT with which a launcher begins to tear a job down (see `launcher`).
    if let Err(e) = launcher::watch() {
        eprintln!("xsort-mpi: cannot watch the job's launcher: {}", xsort_io::error::os_text(&e));
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
    one_host_transport();
    // Only the main thread calls MPI; the sort's worker threads never do.
    let Some((universe, _)) = mpi::initialize_with_threading(mpi::Threading::Funneled) else {
        eprintln!("xsort-mpi: MPI is already initialized");
        return ExitCode::from(TROUBLE);
    };
    runtime_sockets_without_delay();
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

/// When `mpirun` started every rank on this one host (its `OMPI_COMM_WORLD_LOCAL_SIZE` is the
/// world's size), Open MPI's ob1 messaging over shared memory is chosen before MPI starts, unless
/// the user chose a `pml` (`--mca pml ...` reaches the ranks as `OMPI_MCA_pml`). Left to itself,
/// Open MPI 4.1 first probes UCX for a network it does not need here: about 0.2 s of every start
/// on the development VM (a 1-record job with `-np 2`: 0.40-0.45 s, with ob1 0.19-0.22 s).
/// Across hosts nothing is changed: UCX may be the right transport there.
fn one_host_transport() {
    let var = |name: &str| std::env::var(name).ok();
    let (size, local) = (var("OMPI_COMM_WORLD_SIZE"), var("OMPI_COMM_WORLD_LOCAL_SIZE"));
    if size.is_some() && size == local && var("OMPI_MCA_pml").is_none() {
        // Set before MPI_Init reads its parameters from the environment; the only other thread
        // (the signal cleanup's) never reads the environment.
        std::env::set_var("OMPI_MCA_pml", "ob1");
    }
}

/// Turns Nagle's algorithm off on the TCP sockets MPI's runtime opened in `MPI_Init` (the rank's
/// connection to its PMIx server, on loopback, which Open MPI 4.1 leaves with Nagle on). Each
/// fence of `MPI_Finalize` sends several small messages in a row; with Nagle on, the second waits
/// for the server's delayed acknowledgement of the first, 40 ms on Linux: a fifth of a 1-record
/// `-np 2` job's time on the development VM (`MPI_Finalize` took 44-46 ms there, with this 3-4
/// ms). `TCP_NODELAY` changes when segments leave, never what arrives, so any TCP socket of the
/// runtime may have it; the rank itself opens none. Sockets it cannot list or set are left alone.
fn runtime_sockets_without_delay() {
    let Ok(fds) = std::fs::read_dir("/proc/self/fd") else { return };
    let fds: Vec<libc::c_int> = fds.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok()).collect();
    for fd in fds {
        let mut on: libc::c_int = 0;
        let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: `on` and `len` are valid for writes of the sizes given; on a descriptor that is
        // not a TCP socket (or no longer open) the call fails and changes nothing.
        let tcp =
            unsafe { libc::getsockopt(fd, libc::IPPROTO_TCP, libc::TCP_NODELAY, (&mut on as *mut libc::c_int).cast(), &mut len) } == 0;
        if tcp && on == 0 {
            let one: libc::c_int = 1;
            // SAFETY: `one` is valid for reads of the size given; `fd` is a TCP socket of the
            // runtime, and the option only changes when its segments are sent.
            unsafe { libc::setsockopt(fd, libc::IPPROTO_TCP, libc::TCP_NODELAY, (&one as *const libc::c_int).cast(), len) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tcp_sockets_get_nodelay_and_other_descriptors_are_left_alone() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("listen");
        let client = std::net::TcpStream::connect(listener.local_addr().expect("address")).expect("connect");
        let (server, _) = listener.accept().expect("accept");
        let file = tempfile::tempfile().expect("a file");
        assert!(!client.nodelay().expect("nodelay") && !server.nodelay().expect("nodelay"));
        runtime_sockets_without_delay();
        assert!(client.nodelay().expect("nodelay") && server.nodelay().expect("nodelay"));
        // The file and the listener are still usable.
        assert_eq!(file.metadata().expect("metadata").len(), 0);
        assert!(listener.local_addr().is_ok());
    }
}
