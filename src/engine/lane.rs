//! The calm lane (issue 36): a call that nothing known touches, done with as
//! little as possible between the C boundary and the host.
//!
//! `ffi::boundary::run_lane` offers a call to its lane once the call is counted
//! (fault injection's `decide_kill`) and no service is due. A lane function
//! returns None, having done nothing, when its call needs the general path;
//! otherwise it makes the whole call: the same checks, counts and host call as
//! the general path's body finds on its calm branch, without building what only
//! the other branches use. "Nothing known" is what the general body checks
//! first: no failure or revoke known here, no news unread (`hooks::p2p_calm`).
//!
//! Starts of non-blocking point-to-point operations (`MPI_Isend`, `MPI_Irecv`
//! & co.): one registry lookup (which also counts a send for the dead-rank
//! protocol), the host's start, the request adopted.

use crate::engine::comm;
use crate::engine::errors::{Failure, Outcome};
use crate::engine::handles::{Sim_FT_MPI_Comm, Sim_FT_MPI_Request};
use crate::engine::hooks::{self, Kind};
use crate::engine::request::{self, ReqState};
use crate::transport::{self, MPI_Comm, MPI_Request};
use std::os::raw::c_int;

/// Starts a point-to-point operation with `peer` on `comm` (`send`: a send,
/// counted; else a receive) through `host`, which gets the real communicator
/// and the real request to fill; the MPIFT request goes to `*request`. None
/// when the lane does not apply: the request pointer is null, something is
/// known or unread, or the handle is not a registered communicator (an idup not
/// yet usable, or garbage, which the general path reports).
#[inline(always)]
pub fn p2p_start(
    comm: Sim_FT_MPI_Comm,
    peer: c_int,
    send: bool,
    request: *mut Sim_FT_MPI_Request,
    host: impl FnOnce(MPI_Comm, &mut MPI_Request) -> c_int,
) -> Option<Outcome> {
    if request.is_null() || !hooks::p2p_calm() {
        return None;
    }
    let (real_comm, nth) = comm::lookup_real(comm, if send { peer } else { -1 })?;
    let mut real = transport::request_null();
    let rc = host(real_comm, &mut real);
    if rc != 0 {
        return Some(Err(Failure::on(comm, rc)));
    }
    let st = ReqState { nth, ..ReqState::started(comm, Kind::P2pStart, peer, !send) };
    // SAFETY: checked non-null above: the program's request argument, which MPI
    // requires valid for writing.
    unsafe { *request = request::adopt_started(real, st) };
    Some(Ok(()))
}
