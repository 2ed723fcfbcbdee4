//! MPIFT: simulated process failures and the ULFM fault-tolerance API on top of
//! any ordinary MPI.
//!
//! A C or C++ program swaps `<mpi.h>` for `MPI-FT.h` + `MPI-FT_redefine.h` (or adds
//! `-I<prefix>/include/compat`) and links `libmpift.a`. Every MPI call then enters
//! this library through [`ffi`], which checks handles and contains panics, and is
//! carried out by [`layer`] on the real MPI through [`transport`].
//!
//! The rooms of the house (see `docs/ARCHITECTURE.md`):
//! - [`ffi`]: every `extern "C"` item, handle checks, the panic boundary, error codes.
//! - [`layer`]: MPIFT's communicator and request objects and the semantics of each call.
//! - [`transport`]: the only code that calls the real MPI.
//! - [`protocol`]: pure state machines (no MPI), tested in memory at scale.
//! - [`inject`]: fault injection (kill policies, bit flips) and the run report.

pub mod ffi;
pub mod inject;
pub mod layer;
pub mod protocol;
pub mod transport;
