//! The service every MPI call runs first once something went wrong, registered as
//! base's progress hook at MPI_Init.
//!
//! May import: engine::base, engine::registry, engine::colls, engine::news, engine::own, engine::agree, engine::join, engine::revoke, engine::dead, protocol, transport.

pub mod service;
