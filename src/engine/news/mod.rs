//! What this process learns: failure and revoke news over the RMA window (news),
//! the wake receive that interrupts blocked calls (wake), the collective logs
//! and their readers (logs), the entries a writer keeps after its ring moved on (kept).
//!
//! May import: engine::base, engine::registry, engine::colls, protocol, transport.

pub mod kept;
pub mod logs;
pub mod news;
pub mod wake;
