//! MPIFT's C handle types, and the checks of an argument that need no registry.
//!
//! `Sim_FT_MPI_Comm` and `Sim_FT_MPI_Request` are opaque pointers. A communicator
//! handle is the address of a [`Sim_FT_Comm_struct`] anchor (the two predefined
//! ones are statics, so `MPI_COMM_WORLD` is an address constant usable in static
//! initialisers); a request handle encodes a slot of the request table. Neither
//! is ever dereferenced: a handle is looked up in the layer's registry, so a null,
//! freed or garbage handle becomes `MPI_ERR_COMM` / `MPI_ERR_REQUEST`, never
//! undefined behaviour (GUIDE principle 8). The lookups that turn a handle into
//! a [`CommRef`] are the registry's (`engine::registry::args`).
#![allow(non_camel_case_types, non_upper_case_globals)]

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
    /// Job-wide communicator id (see `engine::registry::comm::CommState::id`).
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

/// A real MPI handle kept in MPIFT's tables. Open MPI's handles are pointers, so
/// they are not `Send`; the tables are only touched under their mutex.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Real<T>(pub T);
// SAFETY: `Real` only ever wraps handles (the host's, and MPIFT's own handle
// pointers, which are never dereferenced): opaque tokens that the host or
// MPIFT's registries resolve, not memory Rust reads through, so moving one to
// another thread shares no data; the tables holding them sit behind a mutex.
unsafe impl<T> Send for Real<T> {}
