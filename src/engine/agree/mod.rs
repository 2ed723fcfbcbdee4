//! Agreement and shrink: the operations and their tree (ft), the slots in the
//! window (ft_slots), intercommunicators' two sides (inter), the program's calls
//! (ft_calls).
//!
//! May import: engine::base, engine::registry, engine::colls, engine::news, engine::own, protocol, transport.

pub mod ft;
pub mod ft_calls;
pub mod ft_slots;
pub mod inter;
