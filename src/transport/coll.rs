//! The two collective-family host calls the function table cannot generate:
//! `MPI_Reduce_local` and `MPI_Op_commutative` take no communicator, so MPIFT
//! does not redirect them (the program's calls reach the host directly) and
//! they have no table line. Every other collective is the generated
//! `transport::generated::MPI_<Name>`, which the ffi wrappers and MPIFT's own
//! callers (a dead rank's joins) share. (Conventions: the module doc of
//! `transport`.)

use mpi_sys as mpi;
use std::os::raw::c_int;

/// `MPI_Reduce_local`.
///
/// # Safety
/// `inbuf` holds `count` elements of `dt`, valid for reads, and `inoutbuf`
/// holds `count` elements of `dt`, valid for reads and writes, for the call;
/// the two do not overlap.
#[inline]
pub unsafe fn reduce_local(
    inbuf: *const std::os::raw::c_void,
    inoutbuf: *mut std::os::raw::c_void,
    count: c_int,
    dt: crate::transport::MPI_Datatype,
    op: crate::transport::MPI_Op,
) -> c_int {
    mpi::MPI_Reduce_local(inbuf, inoutbuf, count, dt, op)
}

/// `MPI_Op_commutative`.
pub fn op_commutative(op: crate::transport::MPI_Op, commute: &mut std::os::raw::c_int) -> c_int {
    // SAFETY: an op handle and an int out the caller owns.
    unsafe { mpi::MPI_Op_commutative(op, commute) }
}
