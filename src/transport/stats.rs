//! Counts of what MPIFT sends and creates for its own purposes (issue 5,
//! "accounting"), read by `Sim_FT_stats` (ffi/api.rs) and the benchmarks in
//! `bench/`.
//!
//! Only control paths bump these counters (window RMA to another process, wake
//! messages, communicators the layer makes for itself, collectives it runs at
//! init): never an application call on the failure-free path, which must stay
//! free of shared writes (GUIDE principle 1). Relaxed atomics: the numbers are
//! statistics, read by the same process at a quiet point.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// One-sided operations started on another process's window region
/// (`MPI_Rget_accumulate`, `MPI_Rget`, `MPI_Get`, `MPI_Put`, `MPI_Accumulate`,
/// `MPI_Fetch_and_op`): news, revoke, log reads, kill tickets.
pub static RMA_OPS: AtomicU64 = AtomicU64::new(0);
/// Zero-byte wake messages sent on the shadow communicator.
pub static WAKE_MSGS: AtomicU64 = AtomicU64::new(0);
/// Collectives this process joined with dummy data (as a dead rank, or catching
/// up on a revoked communicator).
pub static DUMMY_JOINS: AtomicU64 = AtomicU64::new(0);
/// Collectives MPIFT ran for itself inside `MPI_Init` (window creation, the
/// injection agreement on the shadow communicator).
pub static INIT_COLLECTIVES: AtomicU64 = AtomicU64::new(0);
/// Communicators MPIFT created for its own use, in total (the shadow, and the
/// results of constructors joined as a dummy, which are freed at once).
pub static COMMS_CREATED: AtomicU64 = AtomicU64::new(0);
/// Of those, freed again.
pub static COMMS_FREED: AtomicU64 = AtomicU64::new(0);
/// RMA windows MPIFT created.
pub static WINDOWS: AtomicU64 = AtomicU64::new(0);

#[inline]
pub fn bump(c: &AtomicU64) {
    c.fetch_add(1, Relaxed);
}

/// A communicator the layer made for itself and freed at once (a dummy join of a
/// constructor); `made` is false when the real call returned `MPI_COMM_NULL`.
pub fn transient_comm(made: bool) {
    if made {
        bump(&COMMS_CREATED);
        bump(&COMMS_FREED);
    }
}

pub fn get(c: &AtomicU64) -> u64 {
    c.load(Relaxed)
}
