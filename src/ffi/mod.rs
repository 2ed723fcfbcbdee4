//! The C boundary. Every `extern "C"` function of libmpift.a is defined here:
//! [`generated`] holds the wrappers built from `mpi_functions.tbl`, [`api`] the
//! hand-written entry points, and [`boundary`] turns results and panics into MPI
//! error codes and runs fault injection's check at every call's entry. Nothing
//! imports this folder.
//!
//! May import: calls, inject, engine, engine::base, engine::registry, engine::colls, engine::news, engine::own, engine::agree, engine::join, engine::revoke, engine::dead, engine::progress, engine::complete, engine::entry, protocol, transport.

pub mod api;
pub mod boundary;
pub mod generated;
