//! MPIFT's own collectives over its shadow communicator: the channel of stamps,
//! the dissemination barrier, the small allreduce.
//!
//! May import: engine::base, engine::registry, engine::colls, engine::news, protocol, transport.

pub mod allreduce;
pub mod barrier;
pub mod channel;
