//! The ULFM calls (MPIX_ names and the unprefixed ones), failure-free.
//!
//! Until failures can be simulated (`Sim_FT_kill_me`, failure propagation), no
//! process ever fails, and each call does what ULFM specifies for that case:
//! `agree` is a bitwise AND over all ranks, `shrink` yields a communicator with
//! every rank in the old order. The failure sets and acknowledgements are kept per
//! communicator (`protocol::failures`), empty while nothing fails. `revoke` marks the
//! communicator revoked at the calling rank (every non-local operation there then
//! returns `MPI_ERR_REVOKED`); spreading the revoke to the other ranks comes with
//! the failure protocols (docs/ARCHITECTURE.md).

use crate::ffi::errors::{Failure, Outcome};
use crate::ffi::handles::{self, CommRef, Sim_FT_MPI_Comm, Sim_FT_MPI_Request};
use crate::layer::hooks::Kind;
use crate::layer::{comm, request};
use crate::protocol::failures::Failures;
use crate::protocol::Rank;
use crate::transport::{self, mpi};
use mpi_sys::MPI_Group;
use std::os::raw::c_int;

fn check(rc: c_int, on: &CommRef) -> Outcome {
    if rc == 0 {
        Ok(())
    } else {
        Err(Failure::on(on.handle, rc))
    }
}

/// `MPIX_Comm_revoke`.
pub fn revoke(c: Sim_FT_MPI_Comm) -> Outcome {
    handles::comm_arg(c)?;
    comm::update(c, |st| st.revoked = true);
    Ok(())
}

/// `MPIX_Comm_is_revoked`.
pub fn is_revoked(c: Sim_FT_MPI_Comm, flag: *mut c_int) -> Outcome {
    let cr = handles::comm_arg(c)?;
    handles::check_out_ptr(flag, &cr)?;
    unsafe { *flag = cr.revoked as c_int };
    Ok(())
}

/// `MPIX_Comm_shrink`: works on revoked communicators; the result is not revoked.
pub fn shrink(c: Sim_FT_MPI_Comm, newcomm: *mut Sim_FT_MPI_Comm) -> Outcome {
    let cr = handles::comm_arg(c)?;
    handles::check_out_ptr(newcomm, &cr)?;
    let mut real = transport::comm_null();
    check(unsafe { mpi::MPI_Comm_dup(cr.real, &mut real) }, &cr)?;
    unsafe { *newcomm = comm::adopt(real, &cr) };
    Ok(())
}

/// `MPIX_Comm_ishrink`: completes the shrink at once and returns a request that is
/// already complete (a zero-byte receive from `MPI_PROC_NULL`).
pub fn ishrink(
    c: Sim_FT_MPI_Comm,
    newcomm: *mut Sim_FT_MPI_Comm,
    req: *mut Sim_FT_MPI_Request,
) -> Outcome {
    let cr = handles::comm_arg(c)?;
    handles::check_out_ptr(req, &cr)?;
    shrink(c, newcomm)?;
    let mut real = transport::request_null();
    check(
        unsafe {
            mpi::MPI_Irecv(
                std::ptr::null_mut(),
                0,
                transport::dt_byte(),
                transport::proc_null(),
                0,
                transport::comm_self(),
                &mut real,
            )
        },
        &cr,
    )?;
    unsafe { *req = request::adopt(real, Kind::CollStart, &cr) };
    Ok(())
}

/// `MPIX_Comm_agree`: bitwise AND of `*flag` over the ranks; allowed on revoked
/// communicators.
pub fn agree(c: Sim_FT_MPI_Comm, flag: *mut c_int) -> Outcome {
    let cr = handles::comm_arg(c)?;
    handles::check_out_ptr(flag, &cr)?;
    let rc = unsafe {
        mpi::MPI_Allreduce(transport::in_place(), flag as _, 1, transport::dt_int(), transport::op_band(), cr.real)
    };
    check(rc, &cr)
}

/// `MPIX_Comm_iagree`: `*flag` holds the AND once the request completes.
pub fn iagree(c: Sim_FT_MPI_Comm, flag: *mut c_int, req: *mut Sim_FT_MPI_Request) -> Outcome {
    let cr = handles::comm_arg(c)?;
    handles::check_out_ptr(flag, &cr)?;
    handles::check_out_ptr(req, &cr)?;
    let mut real = transport::request_null();
    let rc = unsafe {
        mpi::MPI_Iallreduce(
            transport::in_place(),
            flag as _,
            1,
            transport::dt_int(),
            transport::op_band(),
            cr.real,
            &mut real,
        )
    };
    check(rc, &cr)?;
    unsafe { *req = request::adopt(real, Kind::CollStart, &cr) };
    Ok(())
}

/// `MPIX_Comm_failure_ack`: acknowledges the failures known so far.
pub fn failure_ack(c: Sim_FT_MPI_Comm) -> Outcome {
    handles::comm_arg(c)?;
    comm::update(c, |st| st.failures.ack_all());
    Ok(())
}

/// Reads a list of failed ranks of `c` (known or acknowledged) as C ints.
fn failed_ranks(c: Sim_FT_MPI_Comm, which: impl FnOnce(&Failures) -> &[Rank]) -> Vec<c_int> {
    comm::read(c, |st| which(&st.failures).iter().map(|&r| r as c_int).collect()).unwrap_or_default()
}

/// A new group of the given ranks of `comm` (the failed ones).
fn group_of(cr: &CommRef, ranks: &[c_int], out: *mut MPI_Group) -> Outcome {
    handles::check_out_ptr(out, cr)?;
    let mut all = transport::group_empty();
    check(unsafe { mpi::MPI_Comm_group(cr.real, &mut all) }, cr)?;
    let rc = unsafe { mpi::MPI_Group_incl(all, ranks.len() as c_int, ranks.as_ptr(), out) };
    unsafe { mpi::MPI_Group_free(&mut all) };
    check(rc, cr)
}

/// `MPIX_Comm_failure_get_acked`: the acknowledged failed processes.
pub fn failure_get_acked(c: Sim_FT_MPI_Comm, out: *mut MPI_Group) -> Outcome {
    let cr = handles::comm_arg(c)?;
    group_of(&cr, &failed_ranks(c, Failures::acked), out)
}

/// `MPIX_Comm_get_failed`: the failed processes known locally, in detection order
/// (earlier results are prefixes of later ones).
pub fn get_failed(c: Sim_FT_MPI_Comm, out: *mut MPI_Group) -> Outcome {
    let cr = handles::comm_arg(c)?;
    group_of(&cr, &failed_ranks(c, Failures::known), out)
}

/// `MPIX_Comm_ack_failed`: acknowledges the first `num_to_ack` known failures and
/// reports how many are acknowledged.
pub fn ack_failed(c: Sim_FT_MPI_Comm, num_to_ack: c_int, num_acked: *mut c_int) -> Outcome {
    let cr = handles::comm_arg(c)?;
    handles::check_out_ptr(num_acked, &cr)?;
    let mut n = 0;
    comm::update(c, |st| n = st.failures.ack_first(num_to_ack.max(0) as usize));
    unsafe { *num_acked = n as c_int };
    Ok(())
}
