//! MPIFT's objects and the semantics of each call: communicators ([`comm`]),
//! requests ([`request`]), error handlers ([`errhandler`]), init and finalize
//! ([`lifecycle`]), the ULFM calls ([`ulfm`] failure queries, [`revoke`],
//! [`ft`] agree and shrink), the per-kind [`hooks`] that every generated wrapper
//! runs around the real MPI call, and the [`service`] every call runs first once
//! something went wrong.

pub mod allreduce;
pub mod barrier;
pub mod channel;
pub mod comm;
pub mod comm_ctor;
pub mod complete;
pub mod describe;
pub mod dynamic;
pub mod errhandler;
pub mod fillin;
pub mod fortran;
pub mod ft;
pub mod grequest;
pub mod hooks;
pub mod inter;
pub mod join;
pub mod keyval;
pub mod lifecycle;
pub mod logs;
pub mod mprobe;
pub mod news;
pub mod orphans;
pub mod p2p;
pub mod request;
pub mod revoke;
pub mod service;
pub mod spares;
pub mod topo;
pub mod ulfm;
pub mod zombie;

/// A real MPI handle kept in MPIFT's tables. Open MPI's handles are pointers, so
/// they are not `Send`; the tables are only touched under their mutex.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Real<T>(pub T);
unsafe impl<T> Send for Real<T> {}
