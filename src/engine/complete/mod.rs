//! Completion with failure verdicts: one request (complete), several (batch), and
//! their calm path (batch_fast).
//!
//! May import: engine::base, engine::registry, engine::colls, engine::news, engine::adversary, engine::own, engine::agree, engine::join, engine::revoke, engine::dead, engine::progress, protocol, transport.

pub mod batch;
pub mod batch_fast;
pub mod complete;
