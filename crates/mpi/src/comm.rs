//! The ranks' agreements: at the end of every phase all ranks learn whether any failed, so that
//! they stop together (no rank waits forever in a collective another has left), and the lowest
//! failed rank says why, on one line naming itself.

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

    /// Every rank's value.
    pub fn all_gather(&self, value: u64) -> Vec<u64> {
        let mut all = vec![0u64; self.ranks];
        self.world.all_gather_into(&value, &mut all[..]);
        all
    }

    /// The sum of the values of the ranks below this one.
    pub fn exclusive_sum(&self, value: u64) -> u64 {
        let mut out = 0u64;
        self.world.exclusive_scan_into(&value, &mut out, SystemOperation::sum());
        // MPI leaves rank 0's result undefined.
        if self.rank == 0 {
            0
        } else {
            out
        }
    }

    /// Rank 0's value, on every rank.
    pub fn broadcast(&self, mut value: u64) -> u64 {
        self.world.process_at_rank(0).broadcast_into(&mut value);
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
            self.world.all_gather_varcount_into(&send[..bytes.len()], &mut parts);
        }
        all.truncate(total);
        (all, counts.into_iter().map(|c| c as usize).collect())
    }
}

/// Buffers handed to MPI are never empty slices of nothing: an empty `Vec<u8>` points at address 1,
/// which Open MPI reads as `MPI_IN_PLACE`. So every buffer gets one spare byte past its data.
pub const SPARE: usize = 1;

/// An error's message with its causes, on one line.
pub fn one_line(e: &anyhow::Error) -> String {
    xsort_io::error::without_os_error_numbers(&format!("{e:#}").replace('\n', " "))
}
