//! Blocking point-to-point calls (MPI-3.1 §3.2-3.4, §3.8) with ULFM semantics.
//!
//! Each is its non-blocking twin plus the interruptible wait of
//! [`crate::engine::complete::complete`], so failure and revoke news can end it; failure-free
//! that is one `MPI_Waitany` over two requests instead of the blocking call.
//! Known failures are decided locally before anything is posted: a send to a dead
//! rank fails at once, and so does a receive from a dead rank that has already
//! received every message the dead rank sent before dying.

use crate::engine::base::errors;
use crate::engine::news::wake;
use crate::engine::base::errors::{Failure, Outcome, SIM_FT_ERR_PROC_FAILED};
use crate::engine::base::handles::{CommRef, Sim_FT_MPI_Comm};
use crate::engine::complete::complete::{copy_status, wait_one};
use crate::engine::entry::hooks;
use crate::engine::registry::req_state::Kind;
use crate::engine::registry::req_state::ReqState;
use crate::engine::{registry::args, registry::comm, registry::dead_counts, registry::request};
use crate::transport::{self, zero_status, MPI_Comm, MPI_Datatype, MPI_Request, MPI_Status};
use std::os::raw::{c_int, c_void};

/// What is known locally about a peer: dead, and for receives whether everything
/// it sent before dying has arrived.
pub(crate) fn dead_and_drained(c: &CommRef, peer: c_int, recv: bool) -> bool {
    if peer < 0 || comm::calm() {
        return false;
    }
    comm::read(c.handle, |s| {
        let p = peer as usize;
        if p >= s.peer_count() || !s.peer_failed(p) {
            return false;
        }
        if !recv {
            return true;
        }
        dead_counts::all_received_from(s, p)
    })
    .unwrap_or(false)
}

fn state(c: &CommRef, peer: c_int, recv: bool) -> ReqState {
    ReqState::started(c.handle, Kind::P2pStart, peer, recv)
}


/// The host's non-blocking start of a send mode (`transport::p2p::isend`,
/// `issend`, `ibsend`, `irsend`).
pub(crate) type Isend = unsafe fn(*const c_void, c_int, MPI_Datatype, c_int, c_int, MPI_Comm, &mut MPI_Request) -> c_int;

#[allow(clippy::too_many_arguments)]
fn send_with(
    name: &'static str,
    start: Isend,
    buf: *const c_void,
    count: c_int,
    dt: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: Sim_FT_MPI_Comm,
) -> Outcome {
    let c = args::comm_arg(comm)?;
    hooks::p2p_enter(comm)?;
    if dead_and_drained(&c, dest, false) {
        return Err(Failure::on(comm, SIM_FT_ERR_PROC_FAILED));
    }
    let nth = comm::count_send(comm, dest);
    // MPIFT_BITFLIP: maybe a corrupted copy goes out instead (src/inject/bitflip.rs).
    let flip = crate::inject::bitflip::outgoing(name, buf, count, dt, tag, c.real);
    let (sbuf, (scount, sdt)) = (flip.buf(buf), flip.count_type(count, dt));
    let mut req = transport::request_null();
    // SAFETY: `sbuf` is the program's buffer of `count` elements of `dt`, valid for
    // this blocking call, or the corrupted copy of it, which `keep` holds until the
    // request ends. wait_one below returns once the send completed or was drained
    // (engine::complete::complete); only a revoke whose drain times out orphans it while the
    // host may still read the program's buffer (an orphan takes only the copy).
    Failure::check(unsafe { start(sbuf, scount, sdt, dest, tag, c.real, &mut req) }, comm)?;
    let mut st = zero_status();
    // The copy is kept like a request's: an orphaned send takes it along.
    let keep = flip.into_copy().map_or(0, request::keep_buffer);
    let code = wait_one(&ReqState { keep, nth, ..state(&c, dest, false) }, &mut req, &mut st, true);
    drop(request::take_kept(keep));
    Failure::check(code, c.handle)
}

/// `MPI_Send`.
pub fn send(buf: *const c_void, count: c_int, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: Sim_FT_MPI_Comm) -> Outcome {
    send_with("MPI_Send", transport::p2p::isend, buf, count, dt, dest, tag, comm)
}
/// `MPI_Ssend`.
pub fn ssend(buf: *const c_void, count: c_int, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: Sim_FT_MPI_Comm) -> Outcome {
    send_with("MPI_Ssend", transport::p2p::issend, buf, count, dt, dest, tag, comm)
}
/// `MPI_Bsend`.
pub fn bsend(buf: *const c_void, count: c_int, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: Sim_FT_MPI_Comm) -> Outcome {
    send_with("MPI_Bsend", transport::p2p::ibsend, buf, count, dt, dest, tag, comm)
}
/// `MPI_Rsend`.
pub fn rsend(buf: *const c_void, count: c_int, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: Sim_FT_MPI_Comm) -> Outcome {
    send_with("MPI_Rsend", transport::p2p::irsend, buf, count, dt, dest, tag, comm)
}

/// Blocking wildcard receive with an unacknowledged failure: `MPI_ERR_PROC_FAILED`
/// (ULFM-SEMANTICS.md, Point-to-point).
pub(crate) fn wildcard_blocked(c: &CommRef, source: c_int) -> bool {
    source == transport::any_source()
        && !comm::calm()
        && comm::read(c.handle, |s| s.any_source_fails()).unwrap_or(false)
}

/// `MPI_Recv`.
pub fn recv(
    buf: *mut c_void,
    count: c_int,
    dt: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: Sim_FT_MPI_Comm,
    status: *mut MPI_Status,
) -> Outcome {
    let c = args::comm_arg(comm)?;
    hooks::p2p_enter(comm)?;
    if dead_and_drained(&c, source, true) || wildcard_blocked(&c, source) {
        return Err(Failure::on(comm, SIM_FT_ERR_PROC_FAILED));
    }
    let mut req = transport::request_null();
    // SAFETY: `buf` is the program's receive buffer of `count` elements of `dt`,
    // valid for this blocking call; wait_one below waits for the receive (or
    // cancels it) before the call returns.
    Failure::check(unsafe { transport::p2p::irecv(buf, count, dt, source, tag, c.real, &mut req) }, comm)?;
    let mut st = zero_status();
    let code = wait_one(&state(&c, source, true), &mut req, &mut st, true);
    copy_status(status, &st);
    Failure::check(code, c.handle)
}

/// `MPI_Sendrecv`: both halves posted, then waited for with failure semantics.
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
) -> Outcome {
    sendrecv_as("MPI_Sendrecv", sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, comm, status)
}

/// `MPI_Sendrecv` on behalf of `name` (the MPI function the program called).
#[allow(clippy::too_many_arguments)]
fn sendrecv_as(
    name: &'static str,
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
) -> Outcome {
    let c = args::comm_arg(comm)?;
    hooks::p2p_enter(comm)?;
    if dead_and_drained(&c, dest, false) {
        // As MPI's own Sendrecv (receive posted, send failed, receive cancelled).
        return Err(Failure::on(comm, SIM_FT_ERR_PROC_FAILED));
    }
    // A receive that can only fail does not stop the send: the destination is
    // alive and waits for it (ULFM: the send part completes, the call fails).
    let recv_fails = dead_and_drained(&c, source, true) || wildcard_blocked(&c, source);
    let mut rreq = transport::request_null();
    let mut sreq = transport::request_null();
    if !recv_fails {
        // SAFETY: `recvbuf` has room for `recvcount` elements of `recvtype` (the
        // program's buffer, or sendrecv_replace's own), valid for this blocking
        // call; wait_one below waits for the receive (or cancels it).
        Failure::check(unsafe { transport::p2p::irecv(recvbuf, recvcount, recvtype, source, recvtag, c.real, &mut rreq) }, comm)?;
    }
    let nth = comm::count_send(comm, dest);
    let flip = crate::inject::bitflip::outgoing(name, sendbuf, sendcount, sendtype, sendtag, c.real);
    let (sbuf, (scount, sdt)) = (flip.buf(sendbuf), flip.count_type(sendcount, sendtype));
    // SAFETY: `sbuf` is the program's send buffer, valid for this blocking call,
    // or its corrupted copy, which `keep` holds until the request ends; wait_one
    // below waits for the send as in send_with (same revoke-timeout caveat).
    Failure::check(unsafe { transport::p2p::isend(sbuf, scount, sdt, dest, sendtag, c.real, &mut sreq) }, comm)?;
    let keep = flip.into_copy().map_or(0, request::keep_buffer);
    let mut st = zero_status();
    let mut st2 = zero_status();
    let rcode = if recv_fails { SIM_FT_ERR_PROC_FAILED } else { wait_one(&state(&c, source, true), &mut rreq, &mut st, true) };
    let scode = wait_one(&ReqState { keep, nth, ..state(&c, dest, false) }, &mut sreq, &mut st2, true);
    drop(request::take_kept(keep));
    copy_status(status, &st);
    Failure::check(if rcode != 0 { rcode } else { scode }, c.handle)
}

/// `MPI_Sendrecv_replace`: the message comes in as `MPI_PACKED` into a buffer of
/// ours and is unpacked into the user's after the send has completed.
#[allow(clippy::too_many_arguments)]
pub fn sendrecv_replace(
    buf: *mut c_void,
    count: c_int,
    dt: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    source: c_int,
    recvtag: c_int,
    comm: Sim_FT_MPI_Comm,
    status: *mut MPI_Status,
) -> Outcome {
    let c = args::comm_arg(comm)?;
    let mut size: c_int = 0;
    transport::p2p::pack_size(count, dt, c.real, &mut size);
    let mut tmp = vec![0u8; size.max(1) as usize];
    let packed = transport::dt_packed();
    let mut st = zero_status();
    sendrecv_as("MPI_Sendrecv_replace", buf, count, dt, dest, sendtag, tmp.as_mut_ptr() as *mut c_void, size, packed, source, recvtag, comm, &mut st)?;
    let mut got: c_int = 0;
    transport::p2p::get_count(&st, packed, &mut got);
    let mut pos: c_int = 0;
    if got > 0 {
        // SAFETY: `tmp` holds the `got` packed bytes just received (at most its
        // `size`); `buf` is the program's buffer of `count` elements of `dt`,
        // valid for this blocking call.
        unsafe { transport::p2p::unpack(tmp.as_ptr() as *const c_void, got, &mut pos, buf, count, dt, c.real) };
    }
    copy_status(status, &st);
    Ok(())
}

/// `MPI_Iprobe`: from a dead rank with nothing left to arrive, `MPI_ERR_PROC_FAILED`.
pub fn iprobe(source: c_int, tag: c_int, comm: Sim_FT_MPI_Comm, flag: *mut c_int, status: *mut MPI_Status) -> Outcome {
    let c = args::comm_arg(comm)?;
    errors::check_out_ptr(flag, &c)?;
    hooks::p2p_enter(comm)?;
    // SAFETY: `flag` was checked non-null above and is the program's int out,
    // which MPI requires valid for writing.
    let flag = unsafe { &mut *flag };
    // SAFETY: `status` is the program's argument: MPI_STATUS_IGNORE (None), null
    // (None: as_mut checks), or else valid for writing one status, as MPI
    // requires.
    let status = if status == transport::status_ignore() { None } else { unsafe { status.as_mut() } };
    Failure::check(transport::p2p::iprobe(source, tag, c.real, flag, status), comm)?;
    if *flag == 0 && (dead_and_drained(&c, source, true) || wildcard_blocked(&c, source)) {
        return Err(Failure::on(comm, SIM_FT_ERR_PROC_FAILED));
    }
    Ok(())
}

/// `MPI_Probe`: `MPI_Iprobe` until a message or a failure verdict; yields the CPU
/// while waiting (a probe has no request to block on).
pub fn probe(source: c_int, tag: c_int, comm: Sim_FT_MPI_Comm, status: *mut MPI_Status) -> Outcome {
    poll_probe(|flag| iprobe(source, tag, comm, flag, status))
}

/// A blocking probe from its non-blocking twin: calls `once` until it sets the flag
/// or fails, draining wake-ups and yielding the CPU between tries (then sleeping
/// 20 µs after the first 100).
pub(crate) fn poll_probe(mut once: impl FnMut(&mut c_int) -> Outcome) -> Outcome {
    let mut flag = 0;
    let mut spins = 0u32;
    loop {
        // What this rank owes others (revoke catch-ups, agreements) goes on while
        // it probes, as in every wait.
        let _ = crate::engine::progress::service::run();
        once(&mut flag)?;
        if flag != 0 {
            return Ok(());
        }
        wake::drain_wakes();
        spins += 1;
        if spins > 100 {
            std::thread::sleep(std::time::Duration::from_micros(20));
        } else {
            std::thread::yield_now();
        }
    }
}
