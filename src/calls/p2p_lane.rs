//! The calm lane of the blocking point-to-point calls (issue 36): `MPI_Send`,
//! `MPI_Ssend`, `MPI_Bsend`, `MPI_Rsend`, `MPI_Recv` and `MPI_Sendrecv` when
//! nothing is known and no bit-flip policy is on. The host's non-blocking start
//! and the general path's wait ([`crate::engine::complete::wait_one`], which
//! tests first and blocks on the host's `MPI_Waitany` with the wake request), with
//! none of the general path's checks for dead or revoked peers, which find
//! nothing then ([`crate::calls::p2p`]). Each returns None, having done nothing,
//! when its call needs the general path. The lane functions of the table
//! (`lane` flag, src/ffi/mpi_functions.tbl), tried by `ffi::boundary::run_lane`.

use crate::engine::complete::{copy_status, wait_one};
use crate::engine::errors::{Failure, Outcome};
use crate::engine::handles::Sim_FT_MPI_Comm;
use crate::engine::hooks::{self, Kind};
use crate::engine::request::{self, ReqState};
use crate::calls::p2p::Isend;
use crate::engine::{comm, lane};
use crate::inject::bitflip;
use crate::transport::{self, p2p, zero_status, MPI_Datatype, MPI_Status};
use std::os::raw::{c_int, c_void};


#[inline(always)]
fn send_with(start: Isend, buf: *const c_void, count: c_int, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: Sim_FT_MPI_Comm) -> Option<Outcome> {
    if !bitflip::idle() {
        return None;
    }
    // SAFETY: `buf` is the program's buffer of `count` elements of `dt`, valid
    // for this blocking call; lane::blocking waits for the send (wait_one, as the
    // general path) before it returns.
    lane::blocking(comm, dest, true, std::ptr::null_mut(), |c, r| unsafe { start(buf, count, dt, dest, tag, c, r) })
}

/// `MPI_Send` on the calm lane.
pub fn send(buf: *const c_void, count: c_int, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: Sim_FT_MPI_Comm) -> Option<Outcome> {
    send_with(p2p::isend, buf, count, dt, dest, tag, comm)
}
/// `MPI_Ssend` on the calm lane.
pub fn ssend(buf: *const c_void, count: c_int, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: Sim_FT_MPI_Comm) -> Option<Outcome> {
    send_with(p2p::issend, buf, count, dt, dest, tag, comm)
}
/// `MPI_Bsend` on the calm lane.
pub fn bsend(buf: *const c_void, count: c_int, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: Sim_FT_MPI_Comm) -> Option<Outcome> {
    send_with(p2p::ibsend, buf, count, dt, dest, tag, comm)
}
/// `MPI_Rsend` on the calm lane.
pub fn rsend(buf: *const c_void, count: c_int, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: Sim_FT_MPI_Comm) -> Option<Outcome> {
    send_with(p2p::irsend, buf, count, dt, dest, tag, comm)
}

/// `MPI_Recv` on the calm lane.
pub fn recv(
    buf: *mut c_void,
    count: c_int,
    dt: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: Sim_FT_MPI_Comm,
    status: *mut MPI_Status,
) -> Option<Outcome> {
    // SAFETY: `buf` is the program's receive buffer of `count` elements of `dt`,
    // valid for this blocking call; lane::blocking waits for the receive.
    lane::blocking(comm, source, false, status, |c, r| unsafe { p2p::irecv(buf, count, dt, source, tag, c, r) })
}

/// `MPI_Sendrecv` on the calm lane: one look at the calm and one lookup (which
/// counts the send) for both halves, so that nothing is started twice.
#[allow(clippy::too_many_arguments)]
pub fn sendrecv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    source: c_int,
    recvtag: c_int,
    comm: Sim_FT_MPI_Comm,
    status: *mut MPI_Status,
) -> Option<Outcome> {
    if !bitflip::idle() || !hooks::p2p_calm() {
        return None;
    }
    let (real_comm, nth) = comm::lookup_real(comm, dest)?;
    let (mut rreq, mut sreq) = (transport::request_null(), transport::request_null());
    // SAFETY: the program's buffers, valid for this blocking call; both requests
    // are waited for below before it returns (a failed start returns at once,
    // as the general path's does).
    let rc = unsafe { p2p::irecv(recvbuf, recvcount, recvtype, source, recvtag, real_comm, &mut rreq) };
    if rc != 0 {
        return Some(Err(Failure::on(comm, rc)));
    }
    // SAFETY: the program's send buffer, valid for this blocking call; waited for below.
    let rc = unsafe { p2p::isend(sendbuf, sendcount, sendtype, dest, sendtag, real_comm, &mut sreq) };
    if rc != 0 {
        return Some(Err(Failure::on(comm, rc)));
    }
    let (mut st, mut st2) = (zero_status(), zero_status());
    let rcode = wait_one(&ReqState::started(comm, Kind::P2pStart, source, true), &mut rreq, &mut st, true);
    let send_state = ReqState { nth, ..ReqState::started(comm, Kind::P2pStart, dest, false) };
    let scode = wait_one(&send_state, &mut sreq, &mut st2, true);
    copy_status(status, &st);
    Some(request::fail_on_comm(Some(comm), if rcode != 0 { rcode } else { scode }))
}
