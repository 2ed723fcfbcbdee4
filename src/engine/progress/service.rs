//! What a process does for others, at the entry of each of its MPI calls and in
//! every wait, once something is going on: news to read, its revokes to
//! announce, agreements to advance, collectives to catch up on, abandoned
//! requests to progress.
//!
//! This is how MPIFT keeps ULFM's promise that after a revoke nothing blocks
//! (docs/ARCHITECTURE.md, "Revoke"): a member stuck in a collective on a revoked
//! communicator is released as soon as every other member has called MPI once,
//! whatever it called, or is waiting inside MPI. Failure-free none of it runs: the
//! boundary reads one word (engine::base::edges) and goes straight to the call.

use crate::engine::news::wake;
use crate::engine::base::errors::Failure;
use crate::engine::base::edges;
use crate::engine::base::progress;
use crate::engine::{registry::comm, agree::ft, news::news, registry::orphans, revoke::revoke};

/// Some failure or revoke is known here, or an agreement is running.
#[inline]
pub fn needed() -> bool {
    !comm::calm() || ft::running()
}

/// The service has something to do: [`needed`], or news not read yet. What
/// [`run`] checks first; a wait asks it to skip the second look at its verdict
/// when the service did nothing.
#[inline]
pub fn busy() -> bool {
    needed() || news::pending()
}

/// A wait must poll (test its requests, run this service between tries) rather
/// than block in MPI: something this process owes advances only while it polls
/// and nothing in MPI would wake it for (an agreement, a fill-in after a wake-up).
///
/// False at once while no flag of [`CALM_BITS`] is set (then no agreement runs,
/// and a fill-in is wanted only once something is known wrong): one load on the
/// failure-free path of MPIFT's own collectives and waits.
#[inline]
pub fn must_poll() -> bool {
    edges::any(CALM_BITS) && must_poll_marked()
}

#[inline(never)]
fn must_poll_marked() -> bool {
    ft::running() || crate::engine::dead::fillin::wanted()
}

/// The flags of engine::base::edges that [`must_poll`] and [`quiet`] read
/// first (engine::base::progress, whose `must_poll` reads them too).
const CALM_BITS: u32 = progress::CALM_BITS;

/// Registers the service with engine::base::progress, through which the waits
/// below it (engine::own::channel, engine::agree::ft, engine::agree::ft_slots) run it. Once, at
/// `MPI_Init` (calls::lifecycle).
pub fn install() {
    progress::register(progress::Hooks { must_poll_marked, run, run_in_wait_if_new, poll });
}

/// Nothing is going on that a wait would act on: neither [`busy`] nor
/// [`must_poll`]. The calm paths of the completion calls (engine::complete::complete,
/// engine::complete::batch_fast) need this before they end a call at the host's test.
///
/// Written out, that is three loads: a fill-in is wanted only once something
/// is known wrong (`fillin::wanted` starts with `!comm::calm()`), so
/// `!busy() && !must_poll()` is `calm && !running && !pending`; composed, the
/// calls read `calm` and `running` twice and left `must_poll` out of line (about
/// 20 instructions per calm wait, bench/callgrind.sh). While no flag of
/// [`CALM_BITS`] is set, `calm && !running` is known from that one word, and
/// only the news is read. Debug builds check the identity.
#[inline]
pub fn quiet() -> bool {
    let q = if edges::any(CALM_BITS) { comm::calm() && !ft::running() && !news::pending() } else { !news::pending() };
    debug_assert_eq!(q, !busy() && !must_poll());
    q
}

/// The non-blocking part: read news, advance this process's revoke
/// announcements and agreements (a shrink's last step blocks until its survivors
/// are there, engine::agree::ft), progress abandoned requests, drain revoked communicators.
pub fn poll() {
    news::refresh();
    revoke::progress_jobs();
    ft::progress_all();
    orphans::progress();
    revoke::drain_revoked();
    crate::engine::dead::fillin::poll();
}

/// [`poll`], then finish this process's revoke announcements (the call that
/// follows may block in the real MPI, where nothing of MPIFT runs; with MPICH the
/// announcements only advance while this process is in MPIFT code), then join
/// the collectives this process owes on revoked communicators (blocking until
/// each completes), waiting for a revoke's horizon if it is not known yet. At the
/// entry of every MPI call (ffi::boundary), in agreements' and probes' polls
/// (engine::agree::ft, calls::p2p) and in `MPI_Finalize`.
pub fn run() -> Result<(), Failure> {
    run_as(true)
}

/// [`run`] for the completion calls (engine::complete::complete), which come back to it
/// after every wake-up. By default the same as [`run`]: a wait whose request was
/// revoked returns only once the revoke's horizon is known here (the revoker
/// publishes it after "revoked" reached every member), as before the mode below
/// existed. Under `MPIFT_COLLECTIVES=nonblocking` no member is ever inside a real
/// blocking collective, where it could not catch up, so the wait catches up
/// only as far as the horizons are known (revoke::catch_up_owed_ready) and
/// returns without waiting for the revoker to read every member's log (with
/// MPICH that needs every member inside MPI); the horizon's arrival wakes it.
pub fn run_in_wait() -> Result<(), Failure> {
    run_as(!crate::engine::base::settings::nonblocking_colls())
}

/// [`run_in_wait`], but only if something may have changed since the service
/// last ran: news, a wake message, or something that advances only by polling
/// ([`must_poll`]). For the rounds of MPIFT's own barrier, whose call already ran
/// the service at its entry: a full service run per round made a barrier on a
/// process that has seen a revoke 4x the host's (bench/README.md).
pub fn run_in_wait_if_new() -> Result<(), Failure> {
    if news::new_since_run() || must_poll() {
        return run_in_wait();
    }
    Ok(())
}

fn run_as(wait_horizon: bool) -> Result<(), Failure> {
    if !busy() {
        // Failure-free: three loads, nothing to do (waits call this per iteration).
        return Ok(());
    }
    wake::mark_run();
    poll();
    revoke::finish_jobs();
    if wait_horizon {
        revoke::catch_up_owed()
    } else {
        revoke::catch_up_owed_ready()
    }
}
