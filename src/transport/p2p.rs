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

/// `MPI_Pack_size`.
pub fn pack_size(count: c_int, dt: MPI_Datatype, comm: MPI_Comm, size: &mut c_int) -> c_int {
    // SAFETY: handles and values, and an out-int the caller owns.
    unsafe { mpi::MPI_Pack_size(count, dt, comm, size) }
}

/// `MPI_Pack`.
///
/// # Safety
/// `inbuf` holds `count` elements of `dt`, `outbuf` has room for `outsize`
/// bytes; both stay valid for the call.
pub unsafe fn pack(inbuf: *const c_void, count: c_int, dt: MPI_Datatype, outbuf: *mut c_void, outsize: c_int, position: &mut c_int, comm: MPI_Comm) -> c_int {
    mpi::MPI_Pack(inbuf, count, dt, outbuf, outsize, position, comm)
}

/// `MPI_Unpack`.
///
/// # Safety
/// `inbuf` holds `insize` bytes, `outbuf` room for `count` elements of `dt`
/// (as laid out by `dt`); both stay valid for the call.
pub unsafe fn unpack(inbuf: *const c_void, insize: c_int, position: &mut c_int, outbuf: *mut c_void, count: c_int, dt: MPI_Datatype, comm: MPI_Comm) -> c_int {
    mpi::MPI_Unpack(inbuf, insize, position, outbuf, count, dt, comm)
}

/// `MPI_Send`.
///
/// # Safety
/// `buf` holds `count` elements of `dt`, valid for reads for the call.
pub unsafe fn send(buf: *const c_void, count: c_int, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm) -> c_int {
    mpi::MPI_Send(buf, count, dt, dest, tag, comm)
}

/// `MPI_Recv`; `None` ignores the status.
///
/// # Safety
/// `buf` has room for `count` elements of `dt`, valid for writes for the call.
pub unsafe fn recv(buf: *mut c_void, count: c_int, dt: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm, status: Option<&mut crate::transport::MPI_Status>) -> c_int {
    let status: *mut crate::transport::MPI_Status = match status {
        Some(s) => s,
        None => crate::transport::status_ignore(),
    };
    mpi::MPI_Recv(buf, count, dt, source, tag, comm, status)
}

/// `MPI_Iprobe`; `None` ignores the status.
pub fn iprobe(source: c_int, tag: c_int, comm: MPI_Comm, flag: &mut c_int, status: Option<&mut crate::transport::MPI_Status>) -> c_int {
    let status: *mut crate::transport::MPI_Status = match status {
        Some(s) => s,
        None => crate::transport::status_ignore(),
    };
    // SAFETY: a handle, values, an out-int and a status MPIFT owns (or MPI_STATUS_IGNORE).
    unsafe { mpi::MPI_Iprobe(source, tag, comm, flag, status) }
}

/// `MPI_Get_count`.
pub fn get_count(status: &crate::transport::MPI_Status, dt: MPI_Datatype, count: &mut c_int) -> c_int {
    // SAFETY: a status and an out-int the caller owns, a datatype handle.
    unsafe { mpi::MPI_Get_count(status, dt, count) }
}

/// `MPI_Issend`.
///
/// # Safety
/// As [`isend`]: `buf` holds `count` elements of `dt` and stays valid,
/// unmodified, until the request completes.
pub unsafe fn issend(buf: *const c_void, count: c_int, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, req: &mut MPI_Request) -> c_int {
    mpi::MPI_Issend(buf, count, dt, dest, tag, comm, req)
}

/// `MPI_Ibsend`.
///
/// # Safety
/// As [`isend`]: `buf` holds `count` elements of `dt` and stays valid,
/// unmodified, until the request completes.
pub unsafe fn ibsend(buf: *const c_void, count: c_int, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, req: &mut MPI_Request) -> c_int {
    mpi::MPI_Ibsend(buf, count, dt, dest, tag, comm, req)
}

/// `MPI_Irsend`.
///
/// # Safety
/// As [`isend`]: `buf` holds `count` elements of `dt` and stays valid,
/// unmodified, until the request completes.
pub unsafe fn irsend(buf: *const c_void, count: c_int, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, req: &mut MPI_Request) -> c_int {
    mpi::MPI_Irsend(buf, count, dt, dest, tag, comm, req)
}

/// `MPI_Irecv`.
///
/// # Safety
/// `buf` has room for `count` elements of `dt` and stays valid, and is not
/// otherwise accessed, until the request completes (MPI-3.1 §3.7.2).
pub unsafe fn irecv(buf: *mut c_void, count: c_int, dt: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm, req: &mut MPI_Request) -> c_int {
    mpi::MPI_Irecv(buf, count, dt, source, tag, comm, req)
}

/// `MPI_Improbe`; `None` ignores the status.
pub fn improbe(
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    flag: &mut c_int,
    message: &mut crate::transport::MPI_Message,
    status: Option<&mut crate::transport::MPI_Status>,
) -> c_int {
    let status: *mut crate::transport::MPI_Status = match status {
        Some(s) => s,
        None => crate::transport::status_ignore(),
    };
    // SAFETY: outs that are references, and a status reference or MPI_STATUS_IGNORE.
    unsafe { mpi::MPI_Improbe(source, tag, comm, flag, message, status) }
}

/// `MPI_Mrecv`; `None` ignores the status.
///
/// # Safety
/// `buf` has room for `count` elements of `dt` and stays valid for the call.
pub unsafe fn mrecv(
    buf: *mut c_void,
    count: c_int,
    dt: MPI_Datatype,
    message: &mut crate::transport::MPI_Message,
    status: Option<&mut crate::transport::MPI_Status>,
) -> c_int {
    let status: *mut crate::transport::MPI_Status = match status {
        Some(s) => s,
        None => crate::transport::status_ignore(),
    };
    mpi::MPI_Mrecv(buf, count, dt, message, status)
}

/// `MPI_Imrecv`.
///
/// # Safety
/// `buf` has room for `count` elements of `dt` and stays valid, and is not
/// otherwise accessed, until the request completes.
pub unsafe fn imrecv(buf: *mut c_void, count: c_int, dt: MPI_Datatype, message: &mut crate::transport::MPI_Message, req: &mut MPI_Request) -> c_int {
    mpi::MPI_Imrecv(buf, count, dt, message, req)
}

/// `MPI_Cancel`.
#[inline]
pub fn cancel(req: &mut MPI_Request) -> c_int {
    // SAFETY: a request handle the caller owns.
    unsafe { mpi::MPI_Cancel(req) }
}

/// `MPI_Test_cancelled`.
#[inline]
pub fn test_cancelled(status: &crate::transport::MPI_Status, flag: &mut c_int) -> c_int {
    // SAFETY: a status the caller owns (only read) and an out-int.
    unsafe { mpi::MPI_Test_cancelled(status, flag) }
}

/// `MPI_Start`.
#[inline]
pub fn start(req: &mut MPI_Request) -> c_int {
    // SAFETY: an in-out request handle the caller owns.
    unsafe { mpi::MPI_Start(req) }
}

/// `MPI_Recv_init`.
///
/// # Safety
/// `buf` has room for `count` elements of `dt` and stays valid, and is not
/// otherwise accessed while a receive started on the request is active, until
/// the request is freed.
pub unsafe fn recv_init(buf: *mut c_void, count: c_int, dt: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm, req: &mut MPI_Request) -> c_int {
    mpi::MPI_Recv_init(buf, count, dt, source, tag, comm, req)
}

/// `MPI_Status_set_elements`.
pub fn status_set_elements(status: &mut crate::transport::MPI_Status, dt: MPI_Datatype, count: c_int) -> c_int {
    // SAFETY: `status` is a reference to a live status; a handle and a value.
    unsafe { mpi::MPI_Status_set_elements(status, dt, count) }
}

/// `MPI_Status_set_cancelled`.
pub fn status_set_cancelled(status: &mut crate::transport::MPI_Status, flag: c_int) -> c_int {
    // SAFETY: `status` is a reference to a live status; a value.
    unsafe { mpi::MPI_Status_set_cancelled(status, flag) }
}
