//! The ULFM failure queries (MPIX_ names and the unprefixed ones): is_revoked,
//! failure_ack, failure_get_acked, get_failed, ack_failed (ULFM-SEMANTICS.md).
//! Revoke is engine::revoke::revoke; agree, iagree, shrink and ishrink are engine::agree::ft.

use crate::engine::base::errors;
use crate::engine::base::errors::{Failure, Outcome};
use crate::engine::base::handles::{CommRef, Sim_FT_MPI_Comm};
use crate::engine::{registry::args, registry::comm, news::news};
use crate::protocol::failures::Failures;
use crate::protocol::Rank;
use crate::transport::{self, MPI_Group};
use std::os::raw::c_int;

/// `MPIX_Comm_is_revoked`.
pub fn is_revoked(c: Sim_FT_MPI_Comm, flag: *mut c_int) -> Outcome {
    let cr = args::comm_arg(c)?;
    errors::check_out_ptr(flag, &cr)?;
    news::refresh();
    // SAFETY: the program's out-int, checked non-null above.
    unsafe { *flag = comm::read(c, |s| s.revoked).unwrap_or(false) as c_int };
    Ok(())
}

/// `MPIX_Comm_failure_ack`: acknowledges the failures known so far.
pub fn failure_ack(c: Sim_FT_MPI_Comm) -> Outcome {
    args::comm_arg(c)?;
    news::refresh();
    comm::update(c, |st| st.failures.ack_all());
    Ok(())
}

/// Reads a list of failed ranks of `c` (known or acknowledged) as C ints.
fn failed_ranks(c: Sim_FT_MPI_Comm, which: impl FnOnce(&Failures) -> &[Rank]) -> Vec<c_int> {
    comm::read(c, |st| which(&st.failures).iter().map(|&r| r as c_int).collect()).unwrap_or_default()
}

/// A new group of the given ranks of `comm` (the failed ones).
fn group_of(cr: &CommRef, ranks: &[c_int], out: *mut MPI_Group) -> Outcome {
    errors::check_out_ptr(out, cr)?;
    let mut all = transport::group_empty();
    Failure::check(transport::comm::group(cr.real, &mut all), cr.handle)?;
    // SAFETY: the program's out-handle, checked non-null above.
    let rc = transport::comm::group_incl(all, ranks, unsafe { &mut *out });
    transport::comm::group_free(&mut all);
    Failure::check(rc, cr.handle)
}

/// `MPIX_Comm_failure_get_acked`: the acknowledged failed processes.
pub fn failure_get_acked(c: Sim_FT_MPI_Comm, out: *mut MPI_Group) -> Outcome {
    let cr = args::comm_arg(c)?;
    group_of(&cr, &failed_ranks(c, Failures::acked), out)
}

/// `MPIX_Comm_get_failed`: the failed processes known locally, in detection order
/// (earlier results are prefixes of later ones).
pub fn get_failed(c: Sim_FT_MPI_Comm, out: *mut MPI_Group) -> Outcome {
    let cr = args::comm_arg(c)?;
    news::refresh();
    group_of(&cr, &failed_ranks(c, Failures::known), out)
}

/// `MPIX_Comm_ack_failed`: acknowledges the first `num_to_ack` known failures and
/// reports how many are acknowledged.
pub fn ack_failed(c: Sim_FT_MPI_Comm, num_to_ack: c_int, num_acked: *mut c_int) -> Outcome {
    let cr = args::comm_arg(c)?;
    news::refresh();
    errors::check_out_ptr(num_acked, &cr)?;
    let mut n = 0;
    comm::update(c, |st| n = st.failures.ack_first(num_to_ack.max(0) as usize));
    // SAFETY: the program's out-int, checked non-null above.
    unsafe { *num_acked = n as c_int };
    Ok(())
}
