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
//! - Starts of non-blocking point-to-point operations (`MPI_Isend`, `MPI_Irecv`
//!   & co.): one registry lookup (which also counts a send for the dead-rank
//!   protocol), the host's start, the request adopted.
//! - `MPI_Wait` and `MPI_Test` of a request the host completes by itself, when
//!   no wait would act on anything either ([`service::quiet`]): one table read,
//!   the host's test, and if that completed it the bookkeeping of
//!   [`complete::finish`]. A wait the test did not complete goes on as the
//!   general path's does after its own first test ([`complete::wait_one`]).
//! - Blocking point-to-point calls (`MPI_Send` & co., `MPI_Recv`, `MPI_Sendrecv`,
//!   through calls::p2p_lane, which checks what engine cannot see): the lookup
//!   and count of a start, the host's non-blocking start, and the general path's
//!   wait ([`complete::wait_one`]), with no MPIFT request and no table entry.

use crate::engine::registry::req_state::ReqState;
use crate::engine::complete::complete::{self, copy_status};
use crate::engine::{registry::comm, progress::service};
use crate::engine::base::errors::{Failure, Outcome};
use crate::engine::base::handles::{Sim_FT_MPI_Comm, Sim_FT_MPI_Request};
use crate::engine::entry::hooks;
use crate::engine::registry::req_state::Kind;
use crate::engine::registry::request;
use crate::transport::{self, zero_status, MPI_Comm, MPI_Request, MPI_Status};
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
    if request.is_null() {
        return None;
    }
    let mut real = transport::request_null();
    let st = match host_start(comm, peer, send, &mut real, host)? {
        Ok(st) => st,
        Err(f) => return Some(Err(f)),
    };
    // SAFETY: checked non-null above: the program's request argument, which MPI
    // requires valid for writing.
    unsafe { *request = request::adopt_started(real, st) };
    Some(Ok(()))
}

/// The calm lane's start of a point-to-point operation, shared by [`p2p_start`]
/// and [`blocking`]: the lookup (a send counted) and the host's start into
/// `real`; the request's state. None: the lane does not apply, nothing done.
#[inline(always)]
fn host_start(
    comm: Sim_FT_MPI_Comm,
    peer: c_int,
    send: bool,
    real: &mut MPI_Request,
    host: impl FnOnce(MPI_Comm, &mut MPI_Request) -> c_int,
) -> Option<Result<ReqState, Failure>> {
    if !hooks::p2p_calm() {
        return None;
    }
    let (real_comm, nth) = comm::lookup_real(comm, if send { peer } else { -1 })?;
    let rc = host(real_comm, real);
    if rc != 0 {
        return Some(Err(Failure::on(comm, rc)));
    }
    Some(Ok(ReqState { nth, ..ReqState::started(comm, Kind::P2pStart, peer, !send) }))
}

/// A blocking point-to-point call with one half on the calm lane: the start
/// ([`host_start`]; the request stays the host's), then the wait of the general path, status to `status`.
#[inline(always)]
pub fn blocking(
    comm: Sim_FT_MPI_Comm,
    peer: c_int,
    send: bool,
    status: *mut MPI_Status,
    host: impl FnOnce(MPI_Comm, &mut MPI_Request) -> c_int,
) -> Option<Outcome> {
    let mut real = transport::request_null();
    let st = match host_start(comm, peer, send, &mut real, host)? {
        Ok(st) => st,
        Err(f) => return Some(Err(f)),
    };
    let mut s = zero_status();
    let code = complete::wait_one(&st, &mut real, &mut s, true);
    copy_status(status, &s);
    Some(Failure::check(code, comm))
}

/// `MPI_Wait` on the calm lane (module docs); None: nothing done.
#[inline(always)]
pub fn wait(request: *mut Sim_FT_MPI_Request, status: *mut MPI_Status) -> Option<Outcome> {
    if request.is_null() || !service::quiet() {
        return None;
    }
    // SAFETY: checked non-null above: the program's request argument, which MPI
    // requires valid for reading and writing.
    let h = unsafe { *request };
    let st = request::calm_state(h)?;
    let mut real = st.real.0;
    let mut s = zero_status();
    let code = match complete::done_already(&st, &mut real, &mut s) {
        Some(code) => code,
        None => complete::wait_one(&st, &mut real, &mut s, false),
    };
    // SAFETY: as above; the program's request.
    unsafe { *request = request::settle_after(h, real, complete::completed(code)) };
    copy_status(status, &s);
    Some(request::fail_on(Some(&st), code))
}

/// `MPI_Test` on the calm lane (module docs); None: nothing done.
#[inline(always)]
pub fn test(request: *mut Sim_FT_MPI_Request, flag: *mut c_int, status: *mut MPI_Status) -> Option<Outcome> {
    if request.is_null() || flag.is_null() || !service::quiet() {
        return None;
    }
    // SAFETY: checked non-null above: the program's request argument, which MPI
    // requires valid for reading and writing.
    let h = unsafe { *request };
    let st = request::calm_state(h)?;
    let mut real = st.real.0;
    let mut s = zero_status();
    match complete::done_already(&st, &mut real, &mut s) {
        Some(code) => {
            // SAFETY: `request` and `flag` were checked non-null above: the
            // program's arguments, which MPI requires valid for writing.
            unsafe {
                *request = request::settle_after(h, real, true);
                *flag = 1;
            }
            copy_status(status, &s);
            Some(request::fail_on(Some(&st), code))
        }
        None => {
            // SAFETY: checked non-null above: the program's flag.
            unsafe { *flag = 0 };
            Some(Ok(()))
        }
    }
}
