//! Argument lookups: the checked conversion of a communicator argument through
//! the communicator registry ([`comm`]; a handle it does not hold yet may be a
//! pending idup's, [`pending`]), also where MPI allows `MPI_COMM_NULL`. (A
//! started send's, which also runs the start hook, is engine::entry::hooks::send_arg.)
//!
//! The handle types, and `check_out_ptr` (which needs no registry), are in
//! `engine::base::handles`.

use crate::engine::base::errors::Failure;
use crate::engine::base::handles::{CommRef, Sim_FT_MPI_Comm};
use crate::engine::{registry::comm, registry::pending};
use crate::transport::{self, err};

fn err_comm() -> i32 {
    err::comm()
}

/// Converts the communicator an operation works on: null or unknown handles give
/// `MPI_ERR_COMM` (reported on `MPI_COMM_WORLD`).
///
/// Inlined with the registry's lookup, so that the fields go from the registry
/// into the caller's `CommRef` directly. Out of line, the lookup built its
/// result with narrow stores (the flags are bytes) and this function copied it
/// with wide loads, which the store buffer cannot forward: they waited until
/// every older store had reached the cache, among them the host's stores into
/// the shared-memory queue of the call before, whose lines the other rank polls
/// (perf, bench/calls.c bcast at the root on Open MPI 4.1: a quarter of the
/// call's time on that one load).
#[inline(always)]
pub fn comm_arg(h: Sim_FT_MPI_Comm) -> Result<CommRef, Failure> {
    match comm::lookup(h) {
        Some(c) => Ok(c),
        None => comm_arg_pending(h),
    }
}

/// [`comm_arg`] of a handle the registry does not hold (yet): a communicator of
/// a pending non-blocking constructor is adopted now; anything else is
/// `MPI_ERR_COMM`.
#[inline(never)]
fn comm_arg_pending(h: Sim_FT_MPI_Comm) -> Result<CommRef, Failure> {
    pending::adopt(h).ok_or_else(|| Failure::on_world(err_comm()))
}

/// Converts a secondary communicator argument that MPI allows to be
/// `MPI_COMM_NULL` where it is not significant (e.g. `peer_comm` off the leader).
pub fn comm_arg_or_null(h: Sim_FT_MPI_Comm) -> Result<CommRef, Failure> {
    if h.is_null() {
        return Ok(CommRef { handle: h, real: transport::comm_null(), revoked: false, id: 0, rank: -1, size: 0, inter: false, foreign: false });
    }
    comm_arg(h)
}
