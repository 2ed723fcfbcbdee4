//! The joins a dead rank or a catching-up rank makes: their types, the dispatcher,
//! the collectives', the constructors', the topology calls', and a dead rank's
//! parts in MPIFT's own collectives (standin).
//!
//! May import: engine::base, engine::registry, engine::colls, engine::news, engine::own, engine::agree, protocol, transport.

pub mod ctor_join;
pub mod join;
pub mod join_colls;
pub mod join_types;
pub mod standin;
pub mod topo;
