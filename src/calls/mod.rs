//! The semantics of the MPI calls that are more than "check, log, call the host":
//! point-to-point ([`p2p`], its calm lane [`p2p_lane`], [`mprobe`]), communicator constructors
//! ([`comm_ctor`]), error handlers ([`errhandler`]), attributes ([`keyval`]),
//! dynamic processes ([`dynamic`], [`spares`]), generalized requests
//! ([`grequest`]), Fortran handles ([`fortran`]), the ULFM failure queries
//! ([`ulfm`]) and `MPI_Init`/`MPI_Finalize` ([`lifecycle`]). Calls that only
//! need the per-kind hooks are generated straight onto the engine (`ffi`).
//!
//! May import: inject, engine, engine::base, engine::registry, engine::colls, engine::news, engine::own, engine::agree, engine::join, engine::revoke, engine::dead, engine::progress, engine::complete, engine::entry, protocol, transport.

pub mod comm_ctor;
pub mod comm_free;
pub mod dynamic;
pub mod errhandler;
pub mod fortran;
pub mod grequest;
pub mod keyval;
pub mod lifecycle;
pub mod mprobe;
pub mod p2p;
pub mod p2p_lane;
pub mod requests;
pub mod spare;
pub mod spares;
pub mod ulfm;
