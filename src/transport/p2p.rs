//! Point-to-point: sends, receives, probes, matched probes, cancel, persistent starts, status fields, pack and unpack.
//! (Conventions: the module doc of `transport`.)

#![allow(clippy::too_many_arguments)]

use mpi_sys as mpi;
use std::os::raw::c_int;
use crate::transport::{MPI_Comm, MPI_Datatype, MPI_Request};
use std::os::raw::c_void;

/// `MPI_Isend`.
///
/// # Safety
/// `buf` holds `count` elements of `dt` and stays valid, unmodified, until the
/// request completes (MPI-3.1 §3.7.2): it is the program's buffer or MPIFT's
/// own kept copy.
pub unsafe fn isend(buf: *const c_void, count: c_int, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, req: &mut MPI_Request) -> c_int {
    mpi::MPI_Isend(buf, count, dt, dest, tag, comm, req)
}
