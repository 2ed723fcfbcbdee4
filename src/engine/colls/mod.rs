//! How a collective is described: the descriptor every member logs and every
//! join reads (describe), and the topology and neighbourhood calls' (describe_topo).
//!
//! May import: engine::base, engine::registry, protocol, transport.

pub mod describe;
pub mod describe_topo;
