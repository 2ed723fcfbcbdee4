//! The engine's base: the types and words every other part of the engine, and
//! the layers above it, use. It knows no registry and no protocol step: a handle
//! here is a type, not an entry of a table (the lookups are the registries',
//! `engine::registry::args`).
//!
//! - MPIFT's C handle types and the checks of an argument that need no registry
//!   ([`handles`]); the error classes and the one failure type of every layer
//!   ([`errors`]).
//! - The one back-off of every loop that waits for another process
//!   ([`backoff`]).
//! - The one word of flags every call's entry and exit read ([`edges`]); the
//!   process's state in the job, set by `MPI_Init` and `MPI_Finalize`
//!   ([`process`]).
//! - The callbacks through which the engine tells fault injection what happened,
//!   registered at `MPI_Init` ([`observer`]; the reason a dead rank waits is
//!   protocol::exit's type, the one thing base takes from the protocols).
//! - The service's functions, registered at `MPI_Init`, through which the
//!   engine's waits below engine::progress::service run it ([`progress`]).
//!
//! May import: protocol, transport.

pub mod backoff;
pub mod edges;
pub mod errors;
pub mod handles;
pub mod observer;
pub mod process;
pub mod progress;
pub mod runtime;
pub mod settings;
