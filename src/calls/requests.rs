//! The program's calls on a request as such (MPI-3.1 §3.7.3, §3.8.4, §3.9):
//! `MPI_Request_free`, `MPI_Request_get_status`, `MPI_Cancel`, `MPI_Start`,
//! `MPI_Startall`, over engine::registry::request's table. (The completion calls are
//! engine::complete::complete's and engine::complete::batch's.)

use crate::engine::base::errors::{Failure, Outcome};
use crate::engine::base::handles::Sim_FT_MPI_Request;
use crate::engine::registry::req_state::{Kind, ReqState};
use crate::engine::{registry::comm, agree::ft, entry::hooks, registry::request, base::handles::Real};
use crate::transport::{self, err, MPI_Status};
use std::os::raw::c_int;

/// `MPI_Request_free`.
pub fn free(request: *mut Sim_FT_MPI_Request) -> Outcome {
    let (st, mut real) = request::one(request)?;
    let Some(st) = st else { return Err(Failure::on_world(err::request())) };
    let rc = transport::request::free(&mut real);
    if rc == 0 {
        if st.ft != 0 {
            ft::forget(st.ft);
        }
        // MPI may still be sending from a kept copy: it must outlive the request.
        std::mem::forget(request::take_kept(st.keep));
        // SAFETY: checked non-null and read by `one`: the program's request,
        // which MPI requires valid for reading and writing.
        unsafe { *request = request::settle(*request, transport::request_null()) };
    }
    request::fail_on(Some(&st), rc)
}

/// `MPI_Request_get_status` (does not free the request).
pub fn get_status(request: Sim_FT_MPI_Request, flag: *mut c_int, status: *mut MPI_Status) -> Outcome {
    let (st, real) = if request.is_null() {
        (None, transport::request_null())
    } else {
        let st = request::lookup(request)?;
        (Some(st), st.real.0)
    };
    // SAFETY: `flag` and `status` are the program's arguments, passed on as they
    // came, as the program's own MPI_Request_get_status would pass them.
    let rc = unsafe { transport::request::get_status(real, flag, status) };
    request::fail_on(st.as_ref(), rc)
}

/// `MPI_Cancel` (the request stays valid until completed or freed).
pub fn cancel(request: *mut Sim_FT_MPI_Request) -> Outcome {
    let (st, mut real) = request::one(request)?;
    let Some(st) = st else { return Err(Failure::on_world(err::request())) };
    let rc = transport::p2p::cancel(&mut real);
    // SAFETY: `one` checked the pointer non-null and read the program's handle from it.
    request::update(unsafe { *request }, |s| s.cancelled = true);
    request::fail_on(Some(&st), rc)
}

/// A persistent send is about to start: count the message for its destination;
/// returns its number (see [`ReqState::nth`]), 0 for anything else.
fn count_start(st: &ReqState) -> u32 {
    if st.kind == Kind::P2pStart && !st.recv {
        comm::count_send(st.comm.0, st.peer)
    } else {
        0
    }
}

/// `MPI_Start` (persistent requests).
pub fn start(request: *mut Sim_FT_MPI_Request) -> Outcome {
    let (st, mut real) = request::one(request)?;
    let Some(st) = st else { return Err(Failure::on_world(err::request())) };
    hooks::p2p_enter(st.comm.0)?;
    if st.draining {
        // Its last start was given up on but may still be running (a dead rank
        // drains what was sent to it): MPI forbids starting an active request.
        transport::request::wait(&mut real, None);
        // SAFETY: checked non-null and read by `one`: the program's request,
        // which MPI requires valid for reading.
        request::update(unsafe { *request }, |s| s.draining = false);
    }
    let nth = count_start(&st);
    let rc = transport::p2p::start(&mut real);
    // SAFETY: checked non-null and read by `one`: the program's request, which
    // MPI requires valid for reading and writing.
    let h = unsafe { *request };
    if real == transport::request_null() {
        // SAFETY: the program's request, checked non-null by `one` and read
        // just above; MPI requires it valid for writing.
        unsafe { *request = request::settle(h, real) };
    } else {
        // One lock: the real request (unchanged by MPI_Start in practice), and
        // if it started, active with its message number.
        request::update(h, |s| {
            s.real = Real(real);
            if rc == 0 {
                s.active = true;
                s.cancelled = false;
                s.nth = nth;
            }
        });
    }
    request::fail_on(Some(&st), rc)
}

/// `MPI_Startall`.
pub fn startall(count: c_int, reqs: *mut Sim_FT_MPI_Request) -> Outcome {
    if count < 0 || (count > 0 && reqs.is_null()) {
        return Err(request::arg_error());
    }
    for i in 0..count as usize {
        // SAFETY: i < count, the length of the program's request array (checked
        // non-null above when count > 0).
        start(unsafe { reqs.add(i) })?;
    }
    Ok(())
}
