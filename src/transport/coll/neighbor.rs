//! The neighbourhood collectives (MPI-3.1 §7.6-7.7), blocking and non-blocking.

#![allow(clippy::too_many_arguments)]

use mpi_sys as mpi;
use std::os::raw::c_int;

/// `MPI_Neighbor_allgather`.
///
/// # Safety
/// `sendbuf` holds `scount` elements of `sdt` (once for allgather, per out-
/// neighbor for alltoall) and `recvbuf` has room for `rcount` elements of `rdt`
/// per in-neighbor of `comm`'s topology. They stay valid for the call.
pub unsafe fn neighbor_allgather(
    sendbuf: *const std::os::raw::c_void,
    scount: c_int,
    sdt: crate::transport::MPI_Datatype,
    recvbuf: *mut std::os::raw::c_void,
    rcount: c_int,
    rdt: crate::transport::MPI_Datatype,
    comm: crate::transport::MPI_Comm,
) -> c_int {
    mpi::MPI_Neighbor_allgather(sendbuf, scount, sdt, recvbuf, rcount, rdt, comm)
}

/// `MPI_Ineighbor_allgather`.
///
/// # Safety
/// `sendbuf` holds `scount` elements of `sdt` (once for allgather, per out-
/// neighbor for alltoall) and `recvbuf` has room for `rcount` elements of `rdt`
/// per in-neighbor of `comm`'s topology. For this non-blocking form they stay
/// valid (and the send side unmodified) until the request completes (MPI-3.1
/// §5.12).
pub unsafe fn ineighbor_allgather(
    sendbuf: *const std::os::raw::c_void,
    scount: c_int,
    sdt: crate::transport::MPI_Datatype,
    recvbuf: *mut std::os::raw::c_void,
    rcount: c_int,
    rdt: crate::transport::MPI_Datatype,
    comm: crate::transport::MPI_Comm,
    req: &mut crate::transport::MPI_Request,
) -> c_int {
    mpi::MPI_Ineighbor_allgather(sendbuf, scount, sdt, recvbuf, rcount, rdt, comm, req)
}

/// `MPI_Neighbor_alltoall`.
///
/// # Safety
/// `sendbuf` holds `scount` elements of `sdt` (once for allgather, per out-
/// neighbor for alltoall) and `recvbuf` has room for `rcount` elements of `rdt`
/// per in-neighbor of `comm`'s topology. They stay valid for the call.
pub unsafe fn neighbor_alltoall(
    sendbuf: *const std::os::raw::c_void,
    scount: c_int,
    sdt: crate::transport::MPI_Datatype,
    recvbuf: *mut std::os::raw::c_void,
    rcount: c_int,
    rdt: crate::transport::MPI_Datatype,
    comm: crate::transport::MPI_Comm,
) -> c_int {
    mpi::MPI_Neighbor_alltoall(sendbuf, scount, sdt, recvbuf, rcount, rdt, comm)
}

/// `MPI_Ineighbor_alltoall`.
///
/// # Safety
/// `sendbuf` holds `scount` elements of `sdt` (once for allgather, per out-
/// neighbor for alltoall) and `recvbuf` has room for `rcount` elements of `rdt`
/// per in-neighbor of `comm`'s topology. For this non-blocking form they stay
/// valid (and the send side unmodified) until the request completes (MPI-3.1
/// §5.12).
pub unsafe fn ineighbor_alltoall(
    sendbuf: *const std::os::raw::c_void,
    scount: c_int,
    sdt: crate::transport::MPI_Datatype,
    recvbuf: *mut std::os::raw::c_void,
    rcount: c_int,
    rdt: crate::transport::MPI_Datatype,
    comm: crate::transport::MPI_Comm,
    req: &mut crate::transport::MPI_Request,
) -> c_int {
    mpi::MPI_Ineighbor_alltoall(sendbuf, scount, sdt, recvbuf, rcount, rdt, comm, req)
}

/// `MPI_Neighbor_allgatherv`.
///
/// # Safety
/// `sendbuf` holds `scount` elements of `sdt`; `rcounts` and `displs` hold one
/// entry per in-neighbor of `comm`'s topology and `recvbuf` has room for every
/// block they describe (elements of `rdt`). They stay valid for the call.
pub unsafe fn neighbor_allgatherv(
    sendbuf: *const std::os::raw::c_void,
    scount: c_int,
    sdt: crate::transport::MPI_Datatype,
    recvbuf: *mut std::os::raw::c_void,
    rcounts: *const c_int,
    displs: *const c_int,
    rdt: crate::transport::MPI_Datatype,
    comm: crate::transport::MPI_Comm,
) -> c_int {
    mpi::MPI_Neighbor_allgatherv(sendbuf, scount, sdt, recvbuf, rcounts, displs, rdt, comm)
}

/// `MPI_Ineighbor_allgatherv`.
///
/// # Safety
/// `sendbuf` holds `scount` elements of `sdt`; `rcounts` and `displs` hold one
/// entry per in-neighbor of `comm`'s topology and `recvbuf` has room for every
/// block they describe (elements of `rdt`). For this non-blocking form they
/// stay valid (and the send side unmodified) until the request completes
/// (MPI-3.1 §5.12).
pub unsafe fn ineighbor_allgatherv(
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
    mpi::MPI_Ineighbor_allgatherv(sendbuf, scount, sdt, recvbuf, rcounts, displs, rdt, comm, req)
}

/// `MPI_Neighbor_alltoallv`.
///
/// # Safety
/// The send count and displacement arrays hold one entry per out-neighbor of
/// `comm`'s topology, the receive ones one per in-neighbor; `sendbuf` holds
/// every block its arrays describe (elements of `sdt`) and `recvbuf` has room
/// for every block its arrays describe (elements of `rdt`). They stay valid for
/// the call.
pub unsafe fn neighbor_alltoallv(
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
    mpi::MPI_Neighbor_alltoallv(sendbuf, scounts, sdispls, sdt, recvbuf, rcounts, rdispls, rdt, comm)
}

/// `MPI_Ineighbor_alltoallv`.
///
/// # Safety
/// The send count and displacement arrays hold one entry per out-neighbor of
/// `comm`'s topology, the receive ones one per in-neighbor; `sendbuf` holds
/// every block its arrays describe (elements of `sdt`) and `recvbuf` has room
/// for every block its arrays describe (elements of `rdt`). For this non-
/// blocking form they stay valid (and the send side unmodified) until the
/// request completes (MPI-3.1 §5.12).
pub unsafe fn ineighbor_alltoallv(
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
    mpi::MPI_Ineighbor_alltoallv(sendbuf, scounts, sdispls, sdt, recvbuf, rcounts, rdispls, rdt, comm, req)
}

/// `MPI_Neighbor_alltoallw`.
///
/// # Safety
/// The send count, byte-displacement and datatype arrays hold one entry per
/// out-neighbor of `comm`'s topology, the receive ones one per in-neighbor;
/// `sendbuf` holds every block its arrays describe and `recvbuf` has room for
/// every block its arrays describe. They stay valid for the call.
pub unsafe fn neighbor_alltoallw(
    sendbuf: *const std::os::raw::c_void,
    scounts: *const c_int,
    sdispls: *const crate::transport::MPI_Aint,
    sdts: *const crate::transport::MPI_Datatype,
    recvbuf: *mut std::os::raw::c_void,
    rcounts: *const c_int,
    rdispls: *const crate::transport::MPI_Aint,
    rdts: *const crate::transport::MPI_Datatype,
    comm: crate::transport::MPI_Comm,
) -> c_int {
    mpi::MPI_Neighbor_alltoallw(sendbuf, scounts, sdispls, sdts, recvbuf, rcounts, rdispls, rdts, comm)
}

/// `MPI_Ineighbor_alltoallw`.
///
/// # Safety
/// The send count, byte-displacement and datatype arrays hold one entry per
/// out-neighbor of `comm`'s topology, the receive ones one per in-neighbor;
/// `sendbuf` holds every block its arrays describe and `recvbuf` has room for
/// every block its arrays describe. For this non-blocking form they stay valid
/// (and the send side unmodified) until the request completes (MPI-3.1 §5.12).
pub unsafe fn ineighbor_alltoallw(
    sendbuf: *const std::os::raw::c_void,
    scounts: *const c_int,
    sdispls: *const crate::transport::MPI_Aint,
    sdts: *const crate::transport::MPI_Datatype,
    recvbuf: *mut std::os::raw::c_void,
    rcounts: *const c_int,
    rdispls: *const crate::transport::MPI_Aint,
    rdts: *const crate::transport::MPI_Datatype,
    comm: crate::transport::MPI_Comm,
    req: &mut crate::transport::MPI_Request,
) -> c_int {
    mpi::MPI_Ineighbor_alltoallw(sendbuf, scounts, sdispls, sdts, recvbuf, rcounts, rdispls, rdts, comm, req)
}
