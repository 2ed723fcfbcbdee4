//! The calm lane of the blocking point-to-point calls (issue 36): `MPI_Send`,
//! `MPI_Ssend`, `MPI_Bsend`, `MPI_Rsend`, `MPI_Recv` and `MPI_Sendrecv` when
//! nothing is known and no bit-flip policy is on. The host's non-blocking start
//! and the general path's wait ([`crate::engine::complete::complete::wait_one`], which
//! tests first and blocks on the host's `MPI_Waitany` with the wake request), with
//! none of the general path's checks for dead or revoked peers, which find
//! nothing then ([`crate::calls::p2p`]). Each returns None, having done nothing,
//! when its call needs the general path. The lane functions of the table
//! (`lane` flag, src/ffi/mpi_functions.tbl), tried by `ffi::boundary::run_lane`.

use crate::engine::complete::complete::{copy_status, finish, wait_one};
use crate::engine::base::errors::{Failure, Outcome};
use crate::engine::base::handles::Sim_FT_MPI_Comm;
use crate::engine::entry::hooks;
use crate::engine::registry::req_state::Kind;
use crate::engine::registry::req_state::ReqState;
use crate::calls::p2p::Isend;
use crate::engine::{registry::comm, entry::lane};
use crate::inject::bitflip;
use crate::transport::{self, p2p, zero_status, MPI_Datatype, MPI_Request, MPI_Status};
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
    let recv_state = ReqState::started(comm, Kind::P2pStart, source, true);
    let send_state = ReqState { nth, ..ReqState::started(comm, Kind::P2pStart, dest, false) };
    let mut st = zero_status();
    let (rcode, scode) = match test_both(&recv_state, &send_state, &mut rreq, &mut sreq, &mut st) {
        Some(codes) => codes,
        None => {
            let rcode = wait_one(&recv_state, &mut rreq, &mut st, true);
            let scode = wait_one(&send_state, &mut sreq, &mut zero_status(), true);
            (rcode, scode)
        }
    };
    copy_status(status, &st);
    Some(Failure::check(if rcode != 0 { rcode } else { scode }, comm))
}

/// `MPI_Sendrecv`'s two halves tested together: one host `MPI_Testall`, so one
/// progress step of the host for both instead of one per `MPI_Test` in
/// [`wait_one`] (MPICH: about 600 instructions each). Some((receive's code,
/// send's code)) with the receive's status in `st` if both completed; None, with
/// neither request changed (MPI-3.1 §3.7.5), if not: then each is waited for.
fn test_both(
    recv_state: &ReqState,
    send_state: &ReqState,
    rreq: &mut MPI_Request,
    sreq: &mut MPI_Request,
    st: &mut MPI_Status,
) -> Option<(c_int, c_int)> {
    let mut reqs = [*rreq, *sreq];
    let mut sts = [zero_status(); 2];
    let mut flag = 0;
    let rc = transport::request::testall(&mut reqs, &mut flag, &mut sts);
    if flag == 0 {
        return None;
    }
    (*rreq, *sreq) = (reqs[0], reqs[1]);
    // As a single completion reports it: an error only through the code.
    let code = |i: usize| if rc != 0 { sts[i].MPI_ERROR } else { 0 };
    let (rc0, rc1) = (code(0), code(1));
    sts[0].MPI_ERROR = 0;
    *st = sts[0];
    Some((finish(recv_state, &sts[0], rc0), finish(send_state, &sts[1], rc1)))
}
