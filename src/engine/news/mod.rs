//! What this process learns: failure and revoke news over the RMA window (news),
//! the wake receive that interrupts blocked calls (wake), the collective logs
//! and their readers (logs).
//!
//! May import: engine::base, engine::registry, engine::colls, protocol, transport.

pub mod logs;
pub mod news;
pub mod wake;
