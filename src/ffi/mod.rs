//! The C boundary. Every `extern "C"` item of libmpift.a is defined here:
//! [`generated`] holds the wrappers built from `mpi_functions.tbl`, [`api`] the
//! hand-written entry points; [`handles`] converts C handles (never trusting a
//! pointer), [`boundary`] turns results and panics into MPI error codes, and
//! [`errors`] defines the ULFM error classes.

pub mod api;
pub mod boundary;
pub mod errors;
pub mod generated;
pub mod handles;
