//! MPIFT's C handle types and the one checked conversion for each.
//!
//! `Sim_FT_MPI_Comm` and `Sim_FT_MPI_Request` are opaque pointers. A communicator
//! handle is the address of a [`Sim_FT_Comm_struct`] anchor (the two predefined
//! ones are statics, so `MPI_COMM_WORLD` is an address constant usable in static
//! initialisers); a request handle encodes a slot of the request table. Neither
//! is ever dereferenced: a handle is looked up in the layer's registry, so a null,
//! freed or garbage handle becomes `MPI_ERR_COMM` / `MPI_ERR_REQUEST`, never
//! undefined behaviour (GUIDE principle 8).
#![allow(non_camel_case_types, non_upper_case_globals)]

use crate::engine::errors::{Failure, Outcome};
use crate::engine::comm;
use crate::transport::{self, err};
use crate::transport::MPI_Comm;
use std::os::raw::c_void;

/// The object a `Sim_FT_MPI_Comm` points to (opaque to C).
pub struct Sim_FT_Comm_struct {
    _anchor: u8,
}

impl Sim_FT_Comm_struct {
    pub(crate) const fn anchor() -> Sim_FT_Comm_struct {
        Sim_FT_Comm_struct { _anchor: 0 }
    }
}

/// The object a `Sim_FT_MPI_Request` stands for (opaque to C; never dereferenced).
pub struct Sim_FT_Request_struct {
    _anchor: u8,
}

/// MPIFT's communicator handle (`MPI_Comm` after the redirect).
pub type Sim_FT_MPI_Comm = *mut Sim_FT_Comm_struct;
/// MPIFT's request handle (`MPI_Request` after the redirect).
pub type Sim_FT_MPI_Request = *mut Sim_FT_Request_struct;
/// Marker for the C function type `Sim_FT_MPI_Comm_errhandler_function`, which is
/// variadic and therefore written by hand in the header preamble.
pub type Sim_FT_MPI_Comm_errhandler_function = c_void;
/// Marker for the C function type `Sim_FT_MPI_Comm_copy_attr_function` (MPI-3.1
/// §6.7.2 with MPIFT's handle), declared in the header preamble.
pub type Sim_FT_MPI_Comm_copy_attr_function = c_void;
/// Marker for the C function type `Sim_FT_MPI_Comm_delete_attr_function`.
pub type Sim_FT_MPI_Comm_delete_attr_function = c_void;
/// The real MPI's Fortran integer (`MPI_Fint`; a macro in Open MPI, so mpi-sys
/// names it `RSMPI_Fint`).
pub type MPI_Fint = crate::transport::MPI_Fint;

/// The object behind `MPI_COMM_WORLD`.
#[no_mangle]
pub static Sim_FT_COMM_WORLD_OBJ: Sim_FT_Comm_struct = Sim_FT_Comm_struct::anchor();
/// The object behind `MPI_COMM_SELF`.
#[no_mangle]
pub static Sim_FT_COMM_SELF_OBJ: Sim_FT_Comm_struct = Sim_FT_Comm_struct::anchor();

pub fn world_handle() -> Sim_FT_MPI_Comm {
    &Sim_FT_COMM_WORLD_OBJ as *const _ as Sim_FT_MPI_Comm
}
pub fn self_handle() -> Sim_FT_MPI_Comm {
    &Sim_FT_COMM_SELF_OBJ as *const _ as Sim_FT_MPI_Comm
}

/// A communicator argument after its checked conversion.
#[derive(Clone, Copy, Debug)]
pub struct CommRef {
    /// The user's handle (what error handlers receive).
    pub handle: Sim_FT_MPI_Comm,
    /// The real MPI communicator behind it.
    pub real: MPI_Comm,
    /// Revoked (ULFM): only local calls, agree and shrink remain allowed.
    pub revoked: bool,
    /// Job-wide communicator id (see `engine::comm::CommState::id`).
    pub id: u64,
    pub rank: i32,
    pub size: i32,
    /// An intercommunicator (`MPI_Comm_test_inter`, asked once at creation).
    pub inter: bool,
    /// Some member is in another job's `MPI_COMM_WORLD` (a merged spawn
    /// intercommunicator and what is made from it): MPIFT's own collectives and
    /// agreement, which address members by world rank, do not apply.
    pub foreign: bool,
}

fn err_comm() -> i32 {
    err::comm()
}

/// Converts the communicator an operation works on: null or unknown handles give
/// `MPI_ERR_COMM` (reported on `MPI_COMM_WORLD`).
///
/// Inlined with the registry's lookup, so that the fields go from the registry
/// into the caller's `CommRef` directly. Out of line, the lookup built its
/// result with narrow stores (the flags are bytes) and this function copied it
/// with wide loads, which the store buffer cannot forward: they waited until
/// every older store had reached the cache, among them the host's stores into
/// the shared-memory queue of the call before, whose lines the other rank polls
/// (perf, bench/calls.c bcast at the root on Open MPI 4.1: a quarter of the
/// call's time on that one load).
#[inline(always)]
pub fn comm_arg(h: Sim_FT_MPI_Comm) -> Result<CommRef, Failure> {
    match comm::lookup(h) {
        Some(c) => Ok(c),
        None => comm_arg_pending(h),
    }
}

/// [`comm_arg`] of a handle the registry does not hold (yet): a communicator of
/// a pending non-blocking constructor is adopted now; anything else is
/// `MPI_ERR_COMM`.
#[inline(never)]
fn comm_arg_pending(h: Sim_FT_MPI_Comm) -> Result<CommRef, Failure> {
    crate::engine::pending::adopt(h).ok_or_else(|| Failure::on_world(err_comm()))
}

/// The communicator of a started send (`MPI_Isend` & co.) with its checks, in the
/// order [`comm_arg`], [`check_out_ptr`] of `request`, the start hook, then the
/// send counted ([`comm::count_send`]); returns the send's number. When nothing is
/// going on that is one registry lookup (which also counts), else those steps one
/// by one.
#[inline]
pub fn send_arg<T>(h: Sim_FT_MPI_Comm, dest: std::os::raw::c_int, request: *mut T) -> Result<(CommRef, u32), Failure> {
    if !request.is_null() && crate::engine::hooks::p2p_calm() {
        if let Some(found) = comm::lookup_send(h, dest) {
            return Ok(found);
        }
    }
    send_arg_checked(h, dest, request)
}

#[inline(never)]
fn send_arg_checked<T>(h: Sim_FT_MPI_Comm, dest: std::os::raw::c_int, request: *mut T) -> Result<(CommRef, u32), Failure> {
    let c = comm_arg(h)?;
    check_out_ptr(request, &c)?;
    crate::engine::hooks::p2p_enter(h)?;
    Ok((c, comm::count_send(h, dest)))
}

/// Converts a secondary communicator argument that MPI allows to be
/// `MPI_COMM_NULL` where it is not significant (e.g. `peer_comm` off the leader).
pub fn comm_arg_or_null(h: Sim_FT_MPI_Comm) -> Result<CommRef, Failure> {
    if h.is_null() {
        return Ok(CommRef { handle: h, real: transport::comm_null(), revoked: false, id: 0, rank: -1, size: 0, inter: false, foreign: false });
    }
    comm_arg(h)
}

/// An output pointer must not be null: `MPI_ERR_ARG` on the operation's communicator.
pub fn check_out_ptr<T>(p: *mut T, on: &CommRef) -> Outcome {
    if p.is_null() {
        Err(Failure::on(on.handle, err::arg()))
    } else {
        Ok(())
    }
}
