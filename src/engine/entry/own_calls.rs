//! The program's `MPI_Barrier` and `MPI_Allreduce` when MPIFT runs its own: entry
//! points over engine::own::barrier and engine::own::allreduce.
//!
//! They run the entry and exit hooks (engine::entry::hooks) around the algorithms, which
//! sit below them with the dead ranks' joins of the same collectives, so the
//! algorithms import nothing of the call's entry. src/ffi/mpi_functions.tbl names
//! these functions.
//!
//! May import: the engine up to its entry room (engine::entry::hooks), not above it.

use crate::engine::own::allreduce::own_allreduce;
use crate::engine::own::barrier::{self, Ended};
use crate::engine::base::errors::{Failure, Outcome, SIM_FT_ERR_REVOKED};
use crate::engine::base::handles::{CommRef, Sim_FT_MPI_Comm};
use crate::engine::base::settings;
use crate::engine::colls::describe::{self, Desc};
use crate::engine::{registry::args, entry::hooks};
use crate::transport::{self, MPI_Datatype, MPI_Op};
use std::os::raw::{c_int, c_void};

/// `MPI_Barrier`.
pub fn barrier(comm: Sim_FT_MPI_Comm) -> Outcome {
    let c = args::comm_arg(comm)?;
    if settings::nonblocking_colls() {
        let desc = describe::unless_inter(&c, || describe::MPI_Ibarrier(&c));
        hooks::coll_enter(&c, &desc)?;
        let mut req = transport::request_null();
        // SAFETY: a communicator handle and a local out-request, waited for below.
        let rc = unsafe { transport::generated::MPI_Ibarrier(c.real, &mut req) };
        return hooks::coll_wait(&c, rc, req, true);
    }
    let desc = describe::unless_inter(&c, || describe::MPI_Barrier(&c));
    let seq = hooks::coll_enter(&c, &desc)?;
    if c.inter || c.foreign || !settings::own_barrier() {
        // SAFETY: a communicator handle, passed by value.
        let rc = unsafe { transport::generated::MPI_Barrier(c.real) };
        return hooks::coll_leave(&c, rc);
    }
    if c.size <= 1 {
        // Nobody to wait for (a revoke was refused at the entry hook).
        return hooks::coll_leave(&c, 0);
    }
    match barrier::member(&c, seq) {
        Ended::Done => hooks::coll_leave(&c, 0),
        Ended::Revoked => Err(Failure::on(c.handle, SIM_FT_ERR_REVOKED)),
    }
}

/// `MPI_Allreduce` after the entry hook: None if it is not MPIFT's own
/// (engine::own::allreduce::eligible), then the host's runs. Inlined: where the own
/// allreduce is off (Open MPI's default) the host's call follows after one load,
/// not after a call with eight arguments (80 instructions per call at 1 rank,
/// callgrind).
#[allow(clippy::too_many_arguments)]
#[inline]
pub fn allreduce(
    c: &CommRef,
    d: &Desc,
    seq: u64,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
) -> Option<Outcome> {
    if !settings::own_allreduce() {
        return None;
    }
    let (ended, rc) = own_allreduce(c, d, seq, sendbuf, recvbuf, count, datatype, op)?;
    Some(match ended {
        Ended::Done => hooks::coll_leave(c, rc),
        Ended::Revoked => Err(Failure::on(c.handle, SIM_FT_ERR_REVOKED)),
    })
}
