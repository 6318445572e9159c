//! The ranks' agreements: at the end of every phase all ranks learn whether any failed, so that
//! they stop together (no rank waits forever in a collective another has left), and the lowest
//! failed rank says why, on one line naming itself.
//!
//! Every collective here waits without keeping a core busy ([`wait_politely`]): the ranks that
//! finish a phase first would otherwise poll at full speed until the last one arrives, taking CPU
//! from the ranks (and their sorts' and writers' threads) that share their cores.

use mpi::collective::SystemOperation;
use mpi::datatype::PartitionMut;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use mpi::Count;

/// Why the job stops: a rank failed (the lowest failed rank has printed why).
#[derive(Debug)]
pub struct Stop;

/// The communicator, with the job's shape.
pub struct Comm {
    pub world: SimpleCommunicator,
    pub rank: usize,
    pub ranks: usize,
    /// Ranks on this rank's machine (they share its cores and memory).
    pub local_ranks: usize,
}

impl Comm {
    pub fn new(world: SimpleCommunicator) -> Comm {
        let (rank, ranks) = (world.rank() as usize, world.size() as usize);
        let local_ranks = world.split_shared(0).size().max(1) as usize;
        Comm { world, rank, ranks, local_ranks }
    }

    /// Every rank's outcome of a phase: Ok on every rank if none failed, Stop on every rank if any
    /// did. The lowest failed rank prints its error.
    pub fn agree<T>(&self, local: anyhow::Result<T>) -> Result<T, Stop> {
        let failed = self.any(local.is_err());
        match (local, failed) {
            (Ok(v), None) => Ok(v),
            (Err(e), Some(first)) if first == self.rank => {
                eprintln!("xsort-mpi: rank {}: {}", self.rank, one_line(&e));
                Err(Stop)
            }
            _ => Err(Stop),
        }
    }

    /// Ends the whole job at once (after a bug on this rank): mpirun terminates the other ranks.
    pub fn world_abort(&self) -> ! {
        self.world.abort(2)
    }

    /// The lowest rank for which `failed` is true, if any.
    pub fn any(&self, failed: bool) -> Option<usize> {
        let flags = self.all_gather(u64::from(failed));
        flags.iter().position(|&f| f != 0)
    }

    /// Every rank's values of `send` (`send.len()` values per rank, the one for each rank in turn),
    /// as [`mpi::traits::CommunicatorCollectives::all_to_all_into`] gives them.
    pub fn all_to_all(&self, send: &[u64]) -> Vec<u64> {
        let mut recv = vec![0u64; send.len()];
        mpi::request::scope(|scope| wait_politely(self.world.immediate_all_to_all_into(scope, send, &mut recv[..])));
        recv
    }

    /// Every rank's value.
    pub fn all_gather(&self, value: u64) -> Vec<u64> {
        let mut all = vec![0u64; self.ranks];
        mpi::request::scope(|scope| wait_politely(self.world.immediate_all_gather_into(scope, &value, &mut all[..])));
        all
    }

    /// The sum of the values of the ranks below this one.
    pub fn exclusive_sum(&self, value: u64) -> u64 {
        let mut out = 0u64;
        mpi::request::scope(|scope| {
            wait_politely(self.world.immediate_exclusive_scan_into(scope, &value, &mut out, SystemOperation::sum()))
        });
        // MPI leaves rank 0's result undefined.
        if self.rank == 0 {
            0
        } else {
            out
        }
    }

    /// Rank 0's value, on every rank.
    pub fn broadcast(&self, mut value: u64) -> u64 {
        mpi::request::scope(|scope| wait_politely(self.world.process_at_rank(0).immediate_broadcast_into(scope, &mut value)));
        value
    }

    /// Every rank's bytes, concatenated in rank order, with each rank's length.
    pub fn all_gather_bytes(&self, bytes: &[u8]) -> (Vec<u8>, Vec<usize>) {
        let counts: Vec<Count> = self.all_gather(bytes.len() as u64).into_iter().map(|c| c as Count).collect();
        let displs: Vec<Count> = counts.iter().scan(0, |acc, &c| Some(std::mem::replace(acc, *acc + c))).collect();
        let total = counts.iter().map(|&c| c as usize).sum();
        let mut all = vec![0u8; total + SPARE];
        let mut send = bytes.to_vec();
        send.resize(bytes.len() + SPARE, 0);
        {
            let mut parts = PartitionMut::new(&mut all[..], &counts[..], &displs[..]);
            mpi::request::scope(|scope| {
                wait_politely(self.world.immediate_all_gather_varcount_into(scope, &send[..bytes.len()], &mut parts))
            });
        }
        all.truncate(total);
        (all, counts.into_iter().map(|c| c as usize).collect())
    }
}

/// Buffers handed to MPI are never empty slices of nothing: an empty `Vec<u8>` points at address 1,
/// which Open MPI reads as `MPI_IN_PLACE`. So every buffer gets one spare byte past its data.
pub const SPARE: usize = 1;

/// Waits for `req` without keeping a core busy (see [`wait_until`]).
pub(crate) fn wait_politely<'a, D: ?Sized, S: mpi::request::Scope<'a>>(req: mpi::request::Request<'a, D, S>) {
    let mut req = Some(req);
    wait_until(|| match req.take().map(|r| r.test()) {
        Some(Err(r)) => {
            req = Some(r);
            false
        }
        _ => true,
    });
}

/// Polls `done` (an MPI test) until it says so, without keeping a core busy: a blocking MPI wait
/// polls without pause, and with the ranks and their sorts' threads sharing the cores (as on one
/// machine), the rank that waits takes the time of the one it waits for. So it polls a while,
/// then sleeps between polls, longer the longer it has waited (a twentieth of that, 50 us to
/// 1 ms): a long wait then costs few wake-ups, and what the sleep adds to it stays within about 5%.
pub(crate) fn wait_until(mut done: impl FnMut() -> bool) {
    let started = std::time::Instant::now();
    for spins in 0u32.. {
        if done() {
            return;
        }
        if spins < 64 {
            std::hint::spin_loop();
        } else {
            let pause = (started.elapsed() / 20).clamp(std::time::Duration::from_micros(50), std::time::Duration::from_millis(1));
            std::thread::sleep(pause);
        }
    }
}

/// An error's message with its causes, on one line.
pub fn one_line(e: &anyhow::Error) -> String {
    xsort_io::error::without_os_error_numbers(&format!("{e:#}").replace('\n', " "))
}
