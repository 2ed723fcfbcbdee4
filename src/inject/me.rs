//! This process's basics that every part of injection reads: its count of MPI
//! calls (see the parent module's docs for what counts), its verbosity, the clock
//! started at `MPI_Init` and its world rank. A leaf: it imports no other file of
//! `inject`, so the parts below `inject`'s orchestration can all use it.

use crate::engine::base::runtime;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::OnceLock;
use std::time::Instant;

/// MPI calls made by this process.
static CALLS: AtomicU64 = AtomicU64::new(0);
/// `MPIFT_VERBOSE`; unset: 1 when the environment asks for injection or a report,
/// else 0 (see `settings::read_local_settings`).
static VERBOSE: AtomicU8 = AtomicU8::new(0);
static T0: OnceLock<Instant> = OnceLock::new();

pub fn verbose() -> u8 {
    VERBOSE.load(Ordering::Relaxed)
}
pub fn set_verbose(level: u8) {
    VERBOSE.store(level, Ordering::Relaxed);
}
/// The clock's origin: `MPI_Init` ([`start_clock`]), or the first reading.
pub fn t0() -> Instant {
    *T0.get_or_init(Instant::now)
}
/// Starts the clock (`MPI_Init`), unless something read it before.
pub fn start_clock() {
    T0.get_or_init(Instant::now);
}
pub fn world_rank() -> usize {
    runtime::world_rank()
}
pub fn calls() -> u64 {
    CALLS.load(Ordering::Relaxed)
}

/// One more MPI call. A load and a store, not an atomic add (which costs more
/// than the rest of a failure-free collective's bookkeeping): MPI calls of one
/// process are serialised unless it runs at `MPI_THREAD_MULTIPLE`, and there
/// the count of calls is not reproducible anyway.
#[inline]
pub fn bump_calls() -> u64 {
    let call = CALLS.load(Ordering::Relaxed) + 1;
    CALLS.store(call, Ordering::Relaxed);
    call
}
