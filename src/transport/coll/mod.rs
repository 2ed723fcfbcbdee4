//! Collectives: the blocking forms, `MPI_Reduce_local` and
//! `MPI_Op_commutative` here; the non-blocking forms in [`nonblocking`] and the
//! neighbourhood collectives in [`neighbor`], re-exported, so every collective is
//! `transport::coll::<name>`. (Conventions: the module doc of `transport`.)

#![allow(clippy::too_many_arguments)]

use mpi_sys as mpi;
use std::os::raw::c_int;

mod neighbor;
mod nonblocking;
pub use neighbor::*;
pub use nonblocking::*;

/// `MPI_Bcast`.
///
/// # Safety
/// `buf` holds `count` elements of `dt` (read at the root, written elsewhere)
/// and stays valid for the call.
pub unsafe fn bcast(buf: *mut std::os::raw::c_void, count: c_int, dt: crate::transport::MPI_Datatype, root: c_int, comm: crate::transport::MPI_Comm) -> c_int {
    mpi::MPI_Bcast(buf, count, dt, root, comm)
}

/// `MPI_Allgather`.
///
/// # Safety
/// `sendbuf` holds `scount` elements of `sdt` (or is `MPI_IN_PLACE`), `recvbuf`
/// room for `rcount` elements of `rdt` per process of `comm`; both stay valid
/// for the call.
pub unsafe fn allgather(
    sendbuf: *const std::os::raw::c_void,
    scount: c_int,
    sdt: crate::transport::MPI_Datatype,
    recvbuf: *mut std::os::raw::c_void,
    rcount: c_int,
    rdt: crate::transport::MPI_Datatype,
    comm: crate::transport::MPI_Comm,
) -> c_int {
    mpi::MPI_Allgather(sendbuf, scount, sdt, recvbuf, rcount, rdt, comm)
}

/// `MPI_Gather`.
///
/// # Safety
/// `sendbuf` holds `scount` elements of `sdt` (or is `MPI_IN_PLACE` at the
/// root); at the root `recvbuf` has room for `rcount` elements of `rdt` per
/// process of `comm`; both stay valid for the call.
pub unsafe fn gather(
    sendbuf: *const std::os::raw::c_void,
    scount: c_int,
    sdt: crate::transport::MPI_Datatype,
    recvbuf: *mut std::os::raw::c_void,
    rcount: c_int,
    rdt: crate::transport::MPI_Datatype,
    root: c_int,
    comm: crate::transport::MPI_Comm,
) -> c_int {
    mpi::MPI_Gather(sendbuf, scount, sdt, recvbuf, rcount, rdt, root, comm)
}

/// `MPI_Gatherv`.
///
/// # Safety
/// `sendbuf` holds `scount` elements of `sdt` (or is `MPI_IN_PLACE` at the
/// root); at the root `rcounts` and `displs` hold one entry per process of
/// `comm` and `recvbuf` has room for every block they describe (elements of
/// `rdt`); all stay valid for the call.
pub unsafe fn gatherv(
    sendbuf: *const std::os::raw::c_void,
    scount: c_int,
    sdt: crate::transport::MPI_Datatype,
    recvbuf: *mut std::os::raw::c_void,
    rcounts: *const c_int,
    displs: *const c_int,
    rdt: crate::transport::MPI_Datatype,
    root: c_int,
    comm: crate::transport::MPI_Comm,
) -> c_int {
    mpi::MPI_Gatherv(sendbuf, scount, sdt, recvbuf, rcounts, displs, rdt, root, comm)
}

/// `MPI_Barrier`.
pub fn barrier(comm: crate::transport::MPI_Comm) -> c_int {
    // SAFETY: a communicator handle, passed by value.
    unsafe { mpi::MPI_Barrier(comm) }
}

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

/// `MPI_Allreduce`.
///
/// # Safety
/// `sendbuf` holds `count` elements of `dt` (or is `MPI_IN_PLACE`) and `recvbuf`
/// has room for `count` elements of `dt`, both valid for the call.
pub unsafe fn allreduce(
    sendbuf: *const std::os::raw::c_void,
    recvbuf: *mut std::os::raw::c_void,
    count: c_int,
    dt: crate::transport::MPI_Datatype,
    op: crate::transport::MPI_Op,
    comm: crate::transport::MPI_Comm,
) -> c_int {
    mpi::MPI_Allreduce(sendbuf, recvbuf, count, dt, op, comm)
}

/// `MPI_Reduce`.
///
/// # Safety
/// `sendbuf` holds `count` elements of `dt` (or is `MPI_IN_PLACE`) and
/// `recvbuf` has room for `count` elements of `dt` (where significant). They
/// stay valid for the call.
pub unsafe fn reduce(
    sendbuf: *const std::os::raw::c_void,
    recvbuf: *mut std::os::raw::c_void,
    count: c_int,
    dt: crate::transport::MPI_Datatype,
    op: crate::transport::MPI_Op,
    root: c_int,
    comm: crate::transport::MPI_Comm,
) -> c_int {
    mpi::MPI_Reduce(sendbuf, recvbuf, count, dt, op, root, comm)
}

/// `MPI_Scan`.
///
/// # Safety
/// `sendbuf` holds `count` elements of `dt` (or is `MPI_IN_PLACE`) and
/// `recvbuf` has room for `count` elements of `dt` (where significant). They
/// stay valid for the call.
pub unsafe fn scan(
    sendbuf: *const std::os::raw::c_void,
    recvbuf: *mut std::os::raw::c_void,
    count: c_int,
    dt: crate::transport::MPI_Datatype,
    op: crate::transport::MPI_Op,
    comm: crate::transport::MPI_Comm,
) -> c_int {
    mpi::MPI_Scan(sendbuf, recvbuf, count, dt, op, comm)
}

/// `MPI_Exscan`.
///
/// # Safety
/// `sendbuf` holds `count` elements of `dt` (or is `MPI_IN_PLACE`) and
/// `recvbuf` has room for `count` elements of `dt` (where significant). They
/// stay valid for the call.
pub unsafe fn exscan(
    sendbuf: *const std::os::raw::c_void,
    recvbuf: *mut std::os::raw::c_void,
    count: c_int,
    dt: crate::transport::MPI_Datatype,
    op: crate::transport::MPI_Op,
    comm: crate::transport::MPI_Comm,
) -> c_int {
    mpi::MPI_Exscan(sendbuf, recvbuf, count, dt, op, comm)
}

/// `MPI_Reduce_scatter_block`.
///
/// # Safety
/// `sendbuf` holds `count` elements of `dt` per process of `comm` (or is
/// `MPI_IN_PLACE`) and `recvbuf` has room for `count` elements of `dt`. They
/// stay valid for the call.
pub unsafe fn reduce_scatter_block(
    sendbuf: *const std::os::raw::c_void,
    recvbuf: *mut std::os::raw::c_void,
    count: c_int,
    dt: crate::transport::MPI_Datatype,
    op: crate::transport::MPI_Op,
    comm: crate::transport::MPI_Comm,
) -> c_int {
    mpi::MPI_Reduce_scatter_block(sendbuf, recvbuf, count, dt, op, comm)
}

/// `MPI_Reduce_scatter`.
///
/// # Safety
/// `rcounts` holds one count per process of `comm`; `sendbuf` holds their sum
/// of elements of `dt` (or is `MPI_IN_PLACE`) and `recvbuf` has room for this
/// process's count. They stay valid for the call.
pub unsafe fn reduce_scatter(
    sendbuf: *const std::os::raw::c_void,
    recvbuf: *mut std::os::raw::c_void,
    rcounts: *const c_int,
    dt: crate::transport::MPI_Datatype,
    op: crate::transport::MPI_Op,
    comm: crate::transport::MPI_Comm,
) -> c_int {
    mpi::MPI_Reduce_scatter(sendbuf, recvbuf, rcounts, dt, op, comm)
}

/// `MPI_Scatter`.
///
/// # Safety
/// At the root `sendbuf` holds `scount` elements of `sdt` per process of
/// `comm`; `recvbuf` has room for `rcount` elements of `rdt` (or is
/// `MPI_IN_PLACE` at the root). They stay valid for the call.
pub unsafe fn scatter(
    sendbuf: *const std::os::raw::c_void,
    scount: c_int,
    sdt: crate::transport::MPI_Datatype,
    recvbuf: *mut std::os::raw::c_void,
    rcount: c_int,
    rdt: crate::transport::MPI_Datatype,
    root: c_int,
    comm: crate::transport::MPI_Comm,
) -> c_int {
    mpi::MPI_Scatter(sendbuf, scount, sdt, recvbuf, rcount, rdt, root, comm)
}

/// `MPI_Scatterv`.
///
/// # Safety
/// At the root `scounts` and `displs` hold one entry per process of `comm` and
/// `sendbuf` holds every block they describe (elements of `sdt`); `recvbuf` has
/// room for `rcount` elements of `rdt` (or is `MPI_IN_PLACE` at the root). They
/// stay valid for the call.
pub unsafe fn scatterv(
    sendbuf: *const std::os::raw::c_void,
    scounts: *const c_int,
    displs: *const c_int,
    sdt: crate::transport::MPI_Datatype,
    recvbuf: *mut std::os::raw::c_void,
    rcount: c_int,
    rdt: crate::transport::MPI_Datatype,
    root: c_int,
    comm: crate::transport::MPI_Comm,
) -> c_int {
    mpi::MPI_Scatterv(sendbuf, scounts, displs, sdt, recvbuf, rcount, rdt, root, comm)
}

/// `MPI_Alltoall`.
///
/// # Safety
/// `sendbuf` holds `scount` elements of `sdt` per process of `comm` (or is
/// `MPI_IN_PLACE`), `recvbuf` room for `rcount` elements of `rdt` per process.
/// They stay valid for the call.
pub unsafe fn alltoall(
    sendbuf: *const std::os::raw::c_void,
    scount: c_int,
    sdt: crate::transport::MPI_Datatype,
    recvbuf: *mut std::os::raw::c_void,
    rcount: c_int,
    rdt: crate::transport::MPI_Datatype,
    comm: crate::transport::MPI_Comm,
) -> c_int {
    mpi::MPI_Alltoall(sendbuf, scount, sdt, recvbuf, rcount, rdt, comm)
}

/// `MPI_Allgatherv`.
///
/// # Safety
/// `sendbuf` holds `scount` elements of `sdt` (or is `MPI_IN_PLACE`); `rcounts`
/// and `displs` hold one entry per process of `comm` and `recvbuf` has room for
/// every block they describe (elements of `rdt`). They stay valid for the call.
pub unsafe fn allgatherv(
    sendbuf: *const std::os::raw::c_void,
    scount: c_int,
    sdt: crate::transport::MPI_Datatype,
    recvbuf: *mut std::os::raw::c_void,
    rcounts: *const c_int,
    displs: *const c_int,
    rdt: crate::transport::MPI_Datatype,
    comm: crate::transport::MPI_Comm,
) -> c_int {
    mpi::MPI_Allgatherv(sendbuf, scount, sdt, recvbuf, rcounts, displs, rdt, comm)
}

/// `MPI_Alltoallv`.
///
/// # Safety
/// The four count and displacement arrays hold one entry per process of `comm`;
/// `sendbuf` holds every block its arrays describe (elements of `sdt`, or is
/// `MPI_IN_PLACE`) and `recvbuf` has room for every block its arrays describe
/// (elements of `rdt`). They stay valid for the call.
pub unsafe fn alltoallv(
    sendbuf: *const std::os::raw::c_void,
    scounts: *const c_int,
    sdispls: *const c_int,
    sdt: crate::transport::MPI_Datatype,
    recvbuf: *mut std::os::raw::c_void,
    rcounts: *const c_int,
    rdispls: *const c_int,
    rdt: crate::transport::MPI_Datatype,
    comm: crate::transport::MPI_Comm,
) -> c_int {
    mpi::MPI_Alltoallv(sendbuf, scounts, sdispls, sdt, recvbuf, rcounts, rdispls, rdt, comm)
}

/// `MPI_Alltoallw`.
///
/// # Safety
/// The six count, byte-displacement and datatype arrays hold one entry per
/// process of `comm`; `sendbuf` holds every block its arrays describe (or is
/// `MPI_IN_PLACE`) and `recvbuf` has room for every block its arrays describe.
/// They stay valid for the call.
pub unsafe fn alltoallw(
    sendbuf: *const std::os::raw::c_void,
    scounts: *const c_int,
    sdispls: *const c_int,
    sdts: *const crate::transport::MPI_Datatype,
    recvbuf: *mut std::os::raw::c_void,
    rcounts: *const c_int,
    rdispls: *const c_int,
    rdts: *const crate::transport::MPI_Datatype,
    comm: crate::transport::MPI_Comm,
) -> c_int {
    mpi::MPI_Alltoallw(sendbuf, scounts, sdispls, sdts, recvbuf, rcounts, rdispls, rdts, comm)
}

/// `MPI_Op_commutative`.
pub fn op_commutative(op: crate::transport::MPI_Op, commute: &mut std::os::raw::c_int) -> c_int {
    // SAFETY: an op handle and an int out the caller owns.
    unsafe { mpi::MPI_Op_commutative(op, commute) }
}
