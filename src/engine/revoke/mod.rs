//! Revoke jobs, catch-ups and the drain of a revoked communicator.
//!
//! May import: engine::base, engine::registry, engine::colls, engine::news, engine::adversary, engine::own, engine::agree, engine::join, protocol, transport.

pub mod revoke;
