//! The non-blocking collectives (`MPI_I*`). Their buffers stay valid, and the
//! send side unmodified, until the request completes (MPI-3.1 §5.12).

#![allow(clippy::too_many_arguments)]

use mpi_sys as mpi;
use std::os::raw::c_int;

/// `MPI_Ibarrier`.
#[inline]
pub fn ibarrier(comm: crate::transport::MPI_Comm, req: &mut crate::transport::MPI_Request) -> c_int {
    // SAFETY: a communicator handle and an out request handle the caller owns.
    unsafe { mpi::MPI_Ibarrier(comm, req) }
}

/// `MPI_Ibcast`.
///
/// # Safety
/// `buf` holds `count` elements of `dt` (read at the root, written elsewhere).
/// For this non-blocking form they stay valid (and the send side unmodified)
/// until the request completes (MPI-3.1 §5.12).
pub unsafe fn ibcast(
    buf: *mut std::os::raw::c_void,
    count: c_int,
    dt: crate::transport::MPI_Datatype,
    root: c_int,
    comm: crate::transport::MPI_Comm,
    req: &mut crate::transport::MPI_Request,
) -> c_int {
    mpi::MPI_Ibcast(buf, count, dt, root, comm, req)
}

/// `MPI_Ireduce`.
///
/// # Safety
/// `sendbuf` holds `count` elements of `dt` (or is `MPI_IN_PLACE`) and
/// `recvbuf` has room for `count` elements of `dt` (where significant). For
/// this non-blocking form they stay valid (and the send side unmodified) until
/// the request completes (MPI-3.1 §5.12).
pub unsafe fn ireduce(
    sendbuf: *const std::os::raw::c_void,
    recvbuf: *mut std::os::raw::c_void,
    count: c_int,
    dt: crate::transport::MPI_Datatype,
    op: crate::transport::MPI_Op,
    root: c_int,
    comm: crate::transport::MPI_Comm,
    req: &mut crate::transport::MPI_Request,
) -> c_int {
    mpi::MPI_Ireduce(sendbuf, recvbuf, count, dt, op, root, comm, req)
}

/// `MPI_Iscan`.
///
/// # Safety
/// `sendbuf` holds `count` elements of `dt` (or is `MPI_IN_PLACE`) and
/// `recvbuf` has room for `count` elements of `dt` (where significant). For
/// this non-blocking form they stay valid (and the send side unmodified) until
/// the request completes (MPI-3.1 §5.12).
pub unsafe fn iscan(
    sendbuf: *const std::os::raw::c_void,
    recvbuf: *mut std::os::raw::c_void,
    count: c_int,
    dt: crate::transport::MPI_Datatype,
    op: crate::transport::MPI_Op,
    comm: crate::transport::MPI_Comm,
    req: &mut crate::transport::MPI_Request,
) -> c_int {
    mpi::MPI_Iscan(sendbuf, recvbuf, count, dt, op, comm, req)
}

/// `MPI_Iexscan`.
///
/// # Safety
/// `sendbuf` holds `count` elements of `dt` (or is `MPI_IN_PLACE`) and
/// `recvbuf` has room for `count` elements of `dt` (where significant). For
/// this non-blocking form they stay valid (and the send side unmodified) until
/// the request completes (MPI-3.1 §5.12).
pub unsafe fn iexscan(
    sendbuf: *const std::os::raw::c_void,
    recvbuf: *mut std::os::raw::c_void,
    count: c_int,
    dt: crate::transport::MPI_Datatype,
    op: crate::transport::MPI_Op,
    comm: crate::transport::MPI_Comm,
    req: &mut crate::transport::MPI_Request,
) -> c_int {
    mpi::MPI_Iexscan(sendbuf, recvbuf, count, dt, op, comm, req)
}

/// `MPI_Iallreduce`.
///
/// # Safety
/// `sendbuf` holds `count` elements of `dt` (or is `MPI_IN_PLACE`) and
/// `recvbuf` has room for `count` elements of `dt` (where significant). For
/// this non-blocking form they stay valid (and the send side unmodified) until
/// the request completes (MPI-3.1 §5.12).
pub unsafe fn iallreduce(
    sendbuf: *const std::os::raw::c_void,
    recvbuf: *mut std::os::raw::c_void,
    count: c_int,
    dt: crate::transport::MPI_Datatype,
    op: crate::transport::MPI_Op,
    comm: crate::transport::MPI_Comm,
    req: &mut crate::transport::MPI_Request,
) -> c_int {
    mpi::MPI_Iallreduce(sendbuf, recvbuf, count, dt, op, comm, req)
}

/// `MPI_Ireduce_scatter_block`.
///
/// # Safety
/// `sendbuf` holds `count` elements of `dt` per process of `comm` (or is
/// `MPI_IN_PLACE`) and `recvbuf` has room for `count` elements of `dt`. For
/// this non-blocking form they stay valid (and the send side unmodified) until
/// the request completes (MPI-3.1 §5.12).
pub unsafe fn ireduce_scatter_block(
    sendbuf: *const std::os::raw::c_void,
    recvbuf: *mut std::os::raw::c_void,
    count: c_int,
    dt: crate::transport::MPI_Datatype,
    op: crate::transport::MPI_Op,
    comm: crate::transport::MPI_Comm,
    req: &mut crate::transport::MPI_Request,
) -> c_int {
    mpi::MPI_Ireduce_scatter_block(sendbuf, recvbuf, count, dt, op, comm, req)
}

/// `MPI_Ireduce_scatter`.
///
/// # Safety
/// `rcounts` holds one count per process of `comm`; `sendbuf` holds their sum
/// of elements of `dt` (or is `MPI_IN_PLACE`) and `recvbuf` has room for this
/// process's count. For this non-blocking form they stay valid (and the send
/// side unmodified) until the request completes (MPI-3.1 §5.12).
pub unsafe fn ireduce_scatter(
    sendbuf: *const std::os::raw::c_void,
    recvbuf: *mut std::os::raw::c_void,
    rcounts: *const c_int,
    dt: crate::transport::MPI_Datatype,
    op: crate::transport::MPI_Op,
    comm: crate::transport::MPI_Comm,
    req: &mut crate::transport::MPI_Request,
) -> c_int {
    mpi::MPI_Ireduce_scatter(sendbuf, recvbuf, rcounts, dt, op, comm, req)
}

/// `MPI_Igather`.
///
/// # Safety
/// `sendbuf` holds `scount` elements of `sdt` (or is `MPI_IN_PLACE` at the
/// root); at the root `recvbuf` has room for `rcount` elements of `rdt` per
/// process of `comm`. For this non-blocking form they stay valid (and the send
/// side unmodified) until the request completes (MPI-3.1 §5.12).
pub unsafe fn igather(
    sendbuf: *const std::os::raw::c_void,
    scount: c_int,
    sdt: crate::transport::MPI_Datatype,
    recvbuf: *mut std::os::raw::c_void,
    rcount: c_int,
    rdt: crate::transport::MPI_Datatype,
    root: c_int,
    comm: crate::transport::MPI_Comm,
    req: &mut crate::transport::MPI_Request,
) -> c_int {
    mpi::MPI_Igather(sendbuf, scount, sdt, recvbuf, rcount, rdt, root, comm, req)
}

/// `MPI_Iscatter`.
///
/// # Safety
/// At the root `sendbuf` holds `scount` elements of `sdt` per process of
/// `comm`; `recvbuf` has room for `rcount` elements of `rdt` (or is
/// `MPI_IN_PLACE` at the root). For this non-blocking form they stay valid (and
/// the send side unmodified) until the request completes (MPI-3.1 §5.12).
pub unsafe fn iscatter(
    sendbuf: *const std::os::raw::c_void,
    scount: c_int,
    sdt: crate::transport::MPI_Datatype,
    recvbuf: *mut std::os::raw::c_void,
    rcount: c_int,
    rdt: crate::transport::MPI_Datatype,
    root: c_int,
    comm: crate::transport::MPI_Comm,
    req: &mut crate::transport::MPI_Request,
) -> c_int {
    mpi::MPI_Iscatter(sendbuf, scount, sdt, recvbuf, rcount, rdt, root, comm, req)
}

/// `MPI_Igatherv`.
///
/// # Safety
/// `sendbuf` holds `scount` elements of `sdt` (or is `MPI_IN_PLACE` at the
/// root); at the root `rcounts` and `displs` hold one entry per process of
/// `comm` and `recvbuf` has room for every block they describe (elements of
/// `rdt`). For this non-blocking form they stay valid (and the send side
/// unmodified) until the request completes (MPI-3.1 §5.12).
pub unsafe fn igatherv(
    sendbuf: *const std::os::raw::c_void,
    scount: c_int,
    sdt: crate::transport::MPI_Datatype,
    recvbuf: *mut std::os::raw::c_void,
    rcounts: *const c_int,
    displs: *const c_int,
    rdt: crate::transport::MPI_Datatype,
    root: c_int,
    comm: crate::transport::MPI_Comm,
    req: &mut crate::transport::MPI_Request,
) -> c_int {
    mpi::MPI_Igatherv(sendbuf, scount, sdt, recvbuf, rcounts, displs, rdt, root, comm, req)
}

/// `MPI_Iscatterv`.
///
/// # Safety
/// At the root `scounts` and `displs` hold one entry per process of `comm` and
/// `sendbuf` holds every block they describe (elements of `sdt`); `recvbuf` has
/// room for `rcount` elements of `rdt` (or is `MPI_IN_PLACE` at the root). For
/// this non-blocking form they stay valid (and the send side unmodified) until
/// the request completes (MPI-3.1 §5.12).
pub unsafe fn iscatterv(
    sendbuf: *const std::os::raw::c_void,
    scounts: *const c_int,
    displs: *const c_int,
    sdt: crate::transport::MPI_Datatype,
    recvbuf: *mut std::os::raw::c_void,
    rcount: c_int,
    rdt: crate::transport::MPI_Datatype,
    root: c_int,
    comm: crate::transport::MPI_Comm,
    req: &mut crate::transport::MPI_Request,
) -> c_int {
    mpi::MPI_Iscatterv(sendbuf, scounts, displs, sdt, recvbuf, rcount, rdt, root, comm, req)
}

/// `MPI_Iallgather`.
///
/// # Safety
/// `sendbuf` holds `scount` elements of `sdt` (or is `MPI_IN_PLACE`), `recvbuf`
/// room for `rcount` elements of `rdt` per process of `comm`. For this non-
/// blocking form they stay valid (and the send side unmodified) until the
/// request completes (MPI-3.1 §5.12).
pub unsafe fn iallgather(
    sendbuf: *const std::os::raw::c_void,
    scount: c_int,
    sdt: crate::transport::MPI_Datatype,
    recvbuf: *mut std::os::raw::c_void,
    rcount: c_int,
    rdt: crate::transport::MPI_Datatype,
    comm: crate::transport::MPI_Comm,
    req: &mut crate::transport::MPI_Request,
) -> c_int {
    mpi::MPI_Iallgather(sendbuf, scount, sdt, recvbuf, rcount, rdt, comm, req)
}

/// `MPI_Ialltoall`.
///
/// # Safety
/// `sendbuf` holds `scount` elements of `sdt` per process of `comm` (or is
/// `MPI_IN_PLACE`), `recvbuf` room for `rcount` elements of `rdt` per process.
/// For this non-blocking form they stay valid (and the send side unmodified)
/// until the request completes (MPI-3.1 §5.12).
pub unsafe fn ialltoall(
    sendbuf: *const std::os::raw::c_void,
    scount: c_int,
    sdt: crate::transport::MPI_Datatype,
    recvbuf: *mut std::os::raw::c_void,
    rcount: c_int,
    rdt: crate::transport::MPI_Datatype,
    comm: crate::transport::MPI_Comm,
    req: &mut crate::transport::MPI_Request,
) -> c_int {
    mpi::MPI_Ialltoall(sendbuf, scount, sdt, recvbuf, rcount, rdt, comm, req)
}

/// `MPI_Iallgatherv`.
///
/// # Safety
/// `sendbuf` holds `scount` elements of `sdt` (or is `MPI_IN_PLACE`); `rcounts`
/// and `displs` hold one entry per process of `comm` and `recvbuf` has room for
/// every block they describe (elements of `rdt`). For this non-blocking form
/// they stay valid (and the send side unmodified) until the request completes
/// (MPI-3.1 §5.12).
pub unsafe fn iallgatherv(
    sendbuf: *const std::os::raw::c_void,
    scount: c_int,
    sdt: crate::transport::MPI_Datatype,
    recvbuf: *mut std::os::raw::c_void,
    rcounts: *const c_int,
    displs: *const c_int,
    rdt: crate::transport::MPI_Datatype,
    comm: crate::transport::MPI_Comm,
    req: &mut crate::transport::MPI_Request,
) -> c_int {
    mpi::MPI_Iallgatherv(sendbuf, scount, sdt, recvbuf, rcounts, displs, rdt, comm, req)
}

/// `MPI_Ialltoallv`.
///
/// # Safety
/// The four count and displacement arrays hold one entry per process of `comm`;
/// `sendbuf` holds every block its arrays describe (elements of `sdt`, or is
/// `MPI_IN_PLACE`) and `recvbuf` has room for every block its arrays describe
/// (elements of `rdt`). For this non-blocking form they stay valid (and the
/// send side unmodified) until the request completes (MPI-3.1 §5.12).
pub unsafe fn ialltoallv(
    sendbuf: *const std::os::raw::c_void,
    scounts: *const c_int,
    sdispls: *const c_int,
    sdt: crate::transport::MPI_Datatype,
    recvbuf: *mut std::os::raw::c_void,
    rcounts: *const c_int,
    rdispls: *const c_int,
    rdt: crate::transport::MPI_Datatype,
    comm: crate::transport::MPI_Comm,
    req: &mut crate::transport::MPI_Request,
) -> c_int {
    mpi::MPI_Ialltoallv(sendbuf, scounts, sdispls, sdt, recvbuf, rcounts, rdispls, rdt, comm, req)
}

/// `MPI_Ialltoallw`.
///
/// # Safety
/// The six count, byte-displacement and datatype arrays hold one entry per
/// process of `comm`; `sendbuf` holds every block its arrays describe (or is
/// `MPI_IN_PLACE`) and `recvbuf` has room for every block its arrays describe.
/// For this non-blocking form they stay valid (and the send side unmodified)
/// until the request completes (MPI-3.1 §5.12).
pub unsafe fn ialltoallw(
    sendbuf: *const std::os::raw::c_void,
    scounts: *const c_int,
    sdispls: *const c_int,
    sdts: *const crate::transport::MPI_Datatype,
    recvbuf: *mut std::os::raw::c_void,
    rcounts: *const c_int,
    rdispls: *const c_int,
    rdts: *const crate::transport::MPI_Datatype,
    comm: crate::transport::MPI_Comm,
    req: &mut crate::transport::MPI_Request,
) -> c_int {
    mpi::MPI_Ialltoallw(sendbuf, scounts, sdispls, sdts, recvbuf, rcounts, rdispls, rdts, comm, req)
}
