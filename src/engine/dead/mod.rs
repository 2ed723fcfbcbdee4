//! Dead ranks and fill-ins: the dead rank's service (zombie) with what it keeps,
//! drains and when it may leave; its turns for blocking joins; live ranks'
//! fill-ins of collectives that can only fail.
//!
//! May import: engine::base, engine::registry, engine::colls, engine::news, engine::adversary, engine::own, engine::agree, engine::join, engine::revoke, protocol, transport.

pub mod dead_comm;
pub mod dead_drain;
pub mod dead_exit;
pub mod fillin;
pub mod turns;
pub mod zombie;
