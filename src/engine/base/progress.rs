//! The progress hook: how the engine's own waits below engine::progress::service (the
//! channel of MPIFT's collectives, the agreements' waits and slots) run the
//! service without importing it. engine::progress::service registers its functions once
//! at `MPI_Init` ([`register`], called by `service::install`), as Open MPI's
//! components register with `opal_progress_register`. Before registration (the
//! in-memory unit tests) each hook does what the service does when it has
//! nothing to do.
//!
//! The calm path stays one load: [`must_poll`] tests the word of
//! engine::base::edges inline and asks the service only when a flag says work
//! may be due.

use crate::engine::base::edges;
use crate::engine::base::errors::Failure;
use std::sync::OnceLock;

/// The service's functions, one per way a wait runs it (engine::progress::service has
/// each one's contract).
pub struct Hooks {
    /// `service::must_poll` past its first look at the edges word: an agreement
    /// runs or a fill-in is wanted.
    pub must_poll_marked: fn() -> bool,
    /// `service::run`: the whole service, at an agreement's wait.
    pub run: fn() -> Result<(), Failure>,
    /// `service::run_in_wait_if_new`: the service in a wait, only if something
    /// may have changed since it last ran.
    pub run_in_wait_if_new: fn() -> Result<(), Failure>,
    /// `service::poll`: the non-blocking part.
    pub poll: fn(),
}

static HOOKS: OnceLock<Hooks> = OnceLock::new();

/// Registers the service's functions; a second registration is ignored (one
/// per process).
pub fn register(h: Hooks) {
    let _ = HOOKS.set(h);
}

/// The flags of engine::base::edges that [`must_poll`] (and `service::quiet`)
/// read first: clear, nothing is known wrong and no agreement runs (exact below
/// `MPI_THREAD_MULTIPLE`, hence [`edges::MULTI`]).
pub const CALM_BITS: u32 = edges::TROUBLE | edges::AGREEING | edges::MULTI;

/// A wait must poll (test its requests, run the service between tries) rather
/// than block in MPI (`service::must_poll`). False at once while no flag of
/// [`CALM_BITS`] is set: one load on the failure-free path, as before the hook.
#[inline]
pub fn must_poll() -> bool {
    edges::any(CALM_BITS) && must_poll_marked()
}

#[inline(never)]
fn must_poll_marked() -> bool {
    HOOKS.get().is_some_and(|h| (h.must_poll_marked)())
}

/// Runs the service (`service::run`); Ok before registration.
pub fn run() -> Result<(), Failure> {
    HOOKS.get().map_or(Ok(()), |h| (h.run)())
}

/// Runs the service in a wait if something may have changed since it last ran
/// (`service::run_in_wait_if_new`); Ok before registration.
pub fn run_in_wait_if_new() -> Result<(), Failure> {
    HOOKS.get().map_or(Ok(()), |h| (h.run_in_wait_if_new)())
}

/// The service's non-blocking part (`service::poll`); nothing before
/// registration.
pub fn poll() {
    if let Some(h) = HOOKS.get() {
        (h.poll)()
    }
}
