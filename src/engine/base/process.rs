//! What this process is in the job, set by `MPI_Init` and `MPI_Finalize`: active
//! between them, and how many launched processes are spares (`MPIFT_SPARES`,
//! `calls::spares`). Read by every layer, so it lives at the bottom of the engine.

use crate::engine::base::edges;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Spares of this job (0: off, `MPI_Comm_spawn` is the host's).
static SPARES: AtomicUsize = AtomicUsize::new(0);
/// Processes the launcher started (the host's world size).
static LAUNCHED: AtomicUsize = AtomicUsize::new(0);

/// Between a successful `MPI_Init` and `MPI_Finalize` (the flag is
/// [`edges::INACTIVE`], clear while active).
#[inline]
pub fn is_active() -> bool {
    !edges::any(edges::INACTIVE)
}

pub fn set_active(on: bool) {
    edges::set(edges::INACTIVE, !on);
}

/// Set by `MPI_Init` from the agreed `MPIFT_SPARES` (src/inject).
pub fn set_spares(spares: usize, launched: usize) {
    SPARES.store(spares, Ordering::Relaxed);
    LAUNCHED.store(launched, Ordering::Relaxed);
}

/// Spares of this job.
pub fn spares() -> usize {
    SPARES.load(Ordering::Relaxed)
}

/// Spawns are served from spares.
pub fn spares_on() -> bool {
    spares() > 0
}

/// World rank of the first spare process (the host's world, launched order).
pub fn first_spare() -> usize {
    LAUNCHED.load(Ordering::Relaxed) - spares()
}
