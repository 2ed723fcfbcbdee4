//! What a process does for others, at the entry of each of its MPI calls and in
//! every wait, once something is going on: news to read, its revokes to
//! announce, agreements to advance, collectives to catch up on, abandoned
//! requests to progress.
//!
//! This is how MPIFT keeps ULFM's promise that after a revoke nothing blocks
//! (docs/ARCHITECTURE.md, "Revoke"): a member stuck in a collective on a revoked
//! communicator is released as soon as every other member has called MPI once,
//! whatever it called, or is waiting inside MPI. Failure-free none of it runs: the
//! boundary asks [`needed`] (two atomic loads) and goes straight to the call.

use crate::ffi::errors::Failure;
use crate::layer::{comm, complete, ft, news, revoke};

/// Some failure or revoke is known here, or an agreement is running.
#[inline]
pub fn needed() -> bool {
    !comm::calm() || ft::running()
}

/// The non-blocking part: read news, advance this process's revoke
/// announcements and agreements (a shrink's last step blocks until its survivors
/// are there, layer::ft), progress abandoned requests.
pub fn poll() {
    news::refresh();
    revoke::progress_jobs();
    ft::progress_all();
    complete::progress_orphans();
}

/// [`poll`], then finish this process's revoke announcements (the call that
/// follows may block in the real MPI, where nothing of MPIFT runs; with MPICH the
/// announcements only advance while this process is in MPIFT code), then join
/// the collectives this process owes on revoked communicators (blocking until
/// each completes). At the entry of every MPI call
/// (ffi::boundary) and in every wait (layer::complete, layer::ft).
pub fn run() -> Result<(), Failure> {
    if !needed() && !news::pending() {
        // Failure-free: three loads, nothing to do (waits call this per iteration).
        return Ok(());
    }
    poll();
    revoke::finish_jobs();
    revoke::catch_up_owed()
}

/// [`run`] for a wait that comes back to it (a barrier under
/// `MPIFT_COLLECTIVES=nonblocking`): catches up only where the horizon is known
/// (revoke::catch_up_owed_ready).
pub fn run_ready() -> Result<(), Failure> {
    if !needed() && !news::pending() {
        return Ok(());
    }
    poll();
    revoke::finish_jobs();
    revoke::catch_up_owed_ready()
}
