//! A round of the in-place exchange in flight: one `MPI_Ialltoallv` of bytes, started through
//! MPI's C interface rather than rsmpi's scoped requests.
//!
//! rsmpi ties a request to a scope that borrows its buffers until the scope ends, so its requests
//! complete in the reverse order they were started in. The rounds need the opposite: several
//! rounds in flight at once, the oldest completing first, each round's buffers packed again for
//! a later round as soon as it completes. So the rounds keep their requests here, and the one rule
//! rsmpi's scopes enforce is kept by hand: a round's buffers are neither read, written nor freed
//! while its transfer is in flight (see [`InFlight::start`]).

use crate::comm::wait_until;
use mpi::ffi;
use mpi::raw::AsRaw;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use mpi::Count;
use std::mem::MaybeUninit;

/// One round's transfer: its request, and the counts and offsets MPI reads until it completes.
pub struct InFlight {
    request: ffi::MPI_Request,
    /// The send and receive counts and displacements: MPI may read them until the transfer
    /// completes, so they live as long as it does.
    _layout: [Vec<Count>; 4],
    done: bool,
}

/// Where a round's bytes go: each rank's count and displacement in the send and receive buffers.
pub struct Layout {
    pub send_counts: Vec<Count>,
    pub send_displs: Vec<Count>,
    pub recv_counts: Vec<Count>,
    pub recv_displs: Vec<Count>,
}

impl InFlight {
    /// Starts sending `send`'s pieces to every rank and receiving theirs into `recv`, as `layout`
    /// places them.
    ///
    /// # Safety
    /// Until this transfer has completed ([`InFlight::test`] returned true, or [`InFlight::wait`]
    /// returned), `send` must not be written and `recv` neither read nor written, and neither may
    /// be freed. Every piece `layout` names must lie inside its buffer.
    pub unsafe fn start(world: &SimpleCommunicator, send: *const u8, recv: *mut u8, layout: Layout) -> InFlight {
        let Layout { send_counts, send_displs, recv_counts, recv_displs } = layout;
        let bytes = u8::equivalent_datatype().as_raw();
        let mut request = MaybeUninit::uninit();
        // SAFETY: the count and displacement arrays have one entry per rank and live in the
        // returned value until the transfer completes; the caller keeps the buffers as the
        // contract above says. MPI fills `request` before it returns.
        unsafe {
            ffi::MPI_Ialltoallv(
                send.cast(),
                send_counts.as_ptr(),
                send_displs.as_ptr(),
                bytes,
                recv.cast(),
                recv_counts.as_ptr(),
                recv_displs.as_ptr(),
                bytes,
                world.as_raw(),
                request.as_mut_ptr(),
            );
        }
        InFlight {
            // SAFETY: MPI_Ialltoallv wrote the request.
            request: unsafe { request.assume_init() },
            _layout: [send_counts, send_displs, recv_counts, recv_displs],
            done: false,
        }
    }

    /// Whether the transfer has completed (moving it on a little if not).
    pub fn test(&mut self) -> bool {
        if !self.done {
            let mut flag = 0;
            let mut status = MaybeUninit::uninit();
            // SAFETY: `request` is this transfer's live request; MPI sets `flag` and `status`, and
            // sets the request to MPI_REQUEST_NULL when it completes (it is not tested again).
            unsafe { ffi::MPI_Test(&mut self.request, &mut flag, status.as_mut_ptr()) };
            self.done = flag != 0;
        }
        self.done
    }

    /// Waits until the transfer has completed, without keeping a core busy.
    pub fn wait(&mut self) {
        wait_until(|| self.test());
    }
}

impl Drop for InFlight {
    /// A transfer dropped before it completed (only while a panic unwinds) would leave MPI writing
    /// into buffers about to be freed: the job ends at once instead, as after any panic.
    fn drop(&mut self) {
        if !self.done {
            eprintln!("xsort-mpi: internal error: an exchange round was abandoned in flight");
            // SAFETY: MPI_Abort ends every rank's process; nothing of this one runs after it.
            unsafe { ffi::MPI_Abort(ffi::RSMPI_COMM_WORLD, 2) };
        }
    }
}
