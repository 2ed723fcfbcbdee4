//! The registries: communicators and requests as MPIFT keeps them (handles to states),
//! the checked lookups of a communicator argument, idups not yet usable, requests
//! given up on, what a revoke leaves to do later, the counts dead ranks leave.
//!
//! May import: engine::base, protocol, transport.

pub mod args;
pub mod comm;
pub mod comm_state;
pub mod dead_counts;
pub mod orphans;
pub mod owed;
pub mod pending;
pub mod req_state;
pub mod request;
