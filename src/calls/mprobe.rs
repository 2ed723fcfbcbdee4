//! Matched probes and receives (MPI-3.1 §3.8.2-3): `MPI_Mprobe`, `MPI_Improbe`,
//! `MPI_Mrecv`, `MPI_Imrecv`.
//!
//! `MPI_Message` stays the real MPI's handle, but a matched message still belongs
//! to a communicator: MPIFT remembers, per message it matched, the communicator and
//! the source, so that the receive counts towards "messages received from rank r"
//! (a receive from a dead rank fails only after everything it sent before dying
//! has arrived, engine::dead::zombie) and `MPI_Imrecv` gives a point-to-point request of
//! that communicator. Probes follow `MPI_Probe`/`MPI_Iprobe`: a revoked
//! communicator refuses; no message from a dead rank with nothing left to arrive
//! (or a wildcard with an unacknowledged failure) gives `MPI_ERR_PROC_FAILED`.

use crate::engine::base::errors;
use crate::engine::base::errors::{Failure, Outcome, SIM_FT_ERR_PROC_FAILED};
use crate::engine::base::handles::{Sim_FT_MPI_Comm, Sim_FT_MPI_Request};
use crate::engine::entry::hooks;
use crate::engine::registry::req_state::Kind;
use crate::calls::p2p::{dead_and_drained, wildcard_blocked};
use crate::engine::complete::complete::copy_status;
use crate::engine::{registry::args, registry::comm, registry::request, base::handles::Real};
use crate::transport::{self, err, zero_status, MPI_Datatype, MPI_Message, MPI_Status};
use std::os::raw::{c_int, c_void};
use std::sync::Mutex;

/// A matched, not yet received message: its communicator and source.
type Matched = (Real<MPI_Message>, Real<Sim_FT_MPI_Comm>, c_int);
static MATCHED: Mutex<Vec<Matched>> = Mutex::new(Vec::new());

fn remember(m: MPI_Message, c: Sim_FT_MPI_Comm, source: c_int) {
    if source >= 0 {
        // MPI_PROC_NULL probes give MPI_MESSAGE_NO_PROC, which is not a message.
        MATCHED.lock().unwrap().push((Real(m), Real(c), source));
    }
}

fn take(m: MPI_Message) -> Option<(Sim_FT_MPI_Comm, c_int)> {
    let mut v = MATCHED.lock().unwrap();
    let i = v.iter().position(|(x, _, _)| x.0 == m)?;
    let (_, c, s) = v.swap_remove(i);
    Some((c.0, s))
}

fn arg_error() -> Failure {
    Failure::on_world(err::arg())
}

/// `MPI_Improbe`.
pub fn improbe(
    source: c_int,
    tag: c_int,
    c: Sim_FT_MPI_Comm,
    flag: *mut c_int,
    message: *mut MPI_Message,
    status: *mut MPI_Status,
) -> Outcome {
    let cr = args::comm_arg(c)?;
    errors::check_out_ptr(flag, &cr)?;
    errors::check_out_ptr(message, &cr)?;
    hooks::p2p_enter(c)?;
    // SAFETY: `flag` and `message` were checked non-null above; they are the
    // program's outs, which MPI requires valid for writing.
    let (flag, message) = unsafe { (&mut *flag, &mut *message) };
    let mut st = zero_status();
    let rc = transport::p2p::improbe(source, tag, cr.real, flag, message, Some(&mut st));
    Failure::check(rc, c)?;
    if *flag != 0 {
        remember(*message, c, st.MPI_SOURCE);
        copy_status(status, &st);
        return Ok(());
    }
    if dead_and_drained(&cr, source, true) || wildcard_blocked(&cr, source) {
        return Err(Failure::on(c, SIM_FT_ERR_PROC_FAILED));
    }
    Ok(())
}

/// `MPI_Mprobe`: `MPI_Improbe` until a message or a failure verdict, yielding the
/// CPU while waiting (like `MPI_Probe`).
pub fn mprobe(source: c_int, tag: c_int, c: Sim_FT_MPI_Comm, message: *mut MPI_Message, status: *mut MPI_Status) -> Outcome {
    crate::calls::p2p::poll_probe(|flag| improbe(source, tag, c, flag, message, status))
}

/// `MPI_Mrecv`: the message is already matched, so it completes whatever happens
/// to its sender (a dead rank keeps progressing what it sent).
pub fn mrecv(buf: *mut c_void, count: c_int, dt: MPI_Datatype, message: *mut MPI_Message, status: *mut MPI_Status) -> Outcome {
    if message.is_null() {
        return Err(arg_error());
    }
    // SAFETY: checked non-null above; the program's in-out message handle, which
    // MPI requires valid for reading and writing.
    let message = unsafe { &mut *message };
    let from = take(*message);
    let mut st = zero_status();
    // SAFETY: `buf` is the program's receive buffer of `count` elements of `dt`,
    // valid for this blocking call.
    let rc = unsafe { transport::p2p::mrecv(buf, count, dt, message, Some(&mut st)) };
    copy_status(status, &st);
    let on = from.map_or(std::ptr::null_mut(), |(c, _)| c);
    Failure::check(rc, on)?;
    if let Some((c, src)) = from {
        comm::update(c, |s| {
            if let Some(x) = s.recvd.get_mut(src as usize) {
                *x += 1;
            }
        });
    }
    Ok(())
}

/// `MPI_Imrecv`: a receive request of the message's communicator (counted when it
/// completes, like `MPI_Irecv`'s).
pub fn imrecv(
    buf: *mut c_void,
    count: c_int,
    dt: MPI_Datatype,
    message: *mut MPI_Message,
    out: *mut Sim_FT_MPI_Request,
) -> Outcome {
    if message.is_null() || out.is_null() {
        return Err(arg_error());
    }
    // SAFETY: checked non-null above; the program's in-out message handle, which
    // MPI requires valid for reading and writing.
    let message = unsafe { &mut *message };
    let from = take(*message);
    let mut real = transport::request_null();
    // SAFETY: `buf` is the program's receive buffer of `count` elements of `dt`,
    // which MPI-3.1 §3.7.2 requires it to keep valid and untouched until the
    // request completes.
    let rc = unsafe { transport::p2p::imrecv(buf, count, dt, message, &mut real) };
    let owner = from.and_then(|(c, src)| args::comm_arg(c).ok().map(|cr| (cr, src)));
    Failure::check(rc, owner.as_ref().map_or(std::ptr::null_mut(), |(cr, _)| cr.handle))?;
    let adopted = match owner {
        Some((cr, src)) => request::adopt_p2p(real, Kind::P2pStart, &cr, src, true),
        None => request::adopt_plain(real),
    };
    // SAFETY: `out` was checked non-null above; the program's out handle.
    unsafe { *out = adopted };
    Ok(())
}
