//! What runs around every call (hooks), the calm lane (lane), and the program's
//! entry points into MPIFT's own collectives (own_calls).
//!
//! May import: engine::base, engine::registry, engine::colls, engine::news, engine::adversary, engine::own, engine::agree, engine::join, engine::revoke, engine::dead, engine::progress, engine::complete, protocol, transport.

pub mod hooks;
pub mod lane;
pub mod own_calls;
