//! What the engine reports to whoever watches deaths (fault injection, `inject`):
//! callbacks registered once at `MPI_Init`, so the engine never imports the layer
//! above it. Before registration (and in programs that never register) each
//! report is a no-op with the default answer.

use std::os::raw::c_int;
use std::sync::OnceLock;

/// The reports, one function each.
pub struct Observer {
    /// The engine applied the death of these world ranks (news of them arrived).
    pub on_dead: fn(&[u32]),
    /// How much to say (0 = nothing): the engine's own notices follow it.
    pub verbose: fn() -> u8,
    /// This dead rank's service loop ended (every live rank is finalizing).
    pub dead_done: fn(),
    /// What this dead rank waits for or is about to block in ([`DeadStatus`]).
    pub dead_status: fn(&DeadStatus),
    /// A collective is entered on this communicator (with this root; -1: none),
    /// for the state dump: only while injection is armed (engine::base::edges::ARMED).
    pub coll_entered: fn(crate::engine::base::handles::Sim_FT_MPI_Comm, i32),
    /// This process is about to finalize the host MPI (dead rank or spare): the
    /// run report's gather happens here.
    pub finalize: fn(),
    /// Ends the process after the host MPI was finalized.
    pub end_process: fn(c_int) -> !,
}

static OBSERVER: OnceLock<Observer> = OnceLock::new();

/// Registers the observer; a second registration is ignored (one per process).
pub fn register(o: Observer) {
    let _ = OBSERVER.set(o);
}

pub fn on_dead(newly: &[u32]) {
    if let Some(o) = OBSERVER.get() {
        (o.on_dead)(newly)
    }
}

pub fn verbose() -> u8 {
    OBSERVER.get().map_or(0, |o| (o.verbose)())
}

pub fn dead_done() {
    if let Some(o) = OBSERVER.get() {
        (o.dead_done)()
    }
}

/// What a dead rank waits for, or the host call it is about to block in: the
/// words after `dead-serving` in its `MPIFT_TRACE` status line (one format,
/// docs/CAMPAIGN.md, "A dead rank's status"):
/// - `waits <why> [<function>]`, `<why>` from protocol::exit::Why: `chores`,
///   `live-rank <r>`, `dead-log <r>`, `owes comm <id> #<n>`, `joining comm <id>
///   #<n>`, `own comm <id> #<n>` (communicator ids in hex, as in MPIFT's debug
///   output);
/// - `blocks <function> comm <id> #<n>`: inside a blocking host collective it
///   joins with dummy data (its turn);
/// - `leaving <step>`: on its way out (`settle`: its reads in flight; `report`:
///   the run report's gather; `win-free`: freeing MPIFT's window with the
///   others), after `dead-finalized` instead of `dead-serving`.
pub enum DeadStatus {
    Waits(crate::protocol::exit::Why, Option<&'static str>),
    Blocks(&'static str, u64, u64),
    Leaving(&'static str),
}

impl std::fmt::Display for DeadStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            DeadStatus::Waits(why, None) => write!(f, "waits {why}"),
            DeadStatus::Waits(why, Some(name)) => write!(f, "waits {why} {name}"),
            DeadStatus::Blocks(name, c, s) => write!(f, "blocks {name} comm {c:x} #{s}"),
            DeadStatus::Leaving(step) => write!(f, "leaving {step}"),
        }
    }
}

/// Reports what this dead rank waits for (the observer formats it only when
/// tracing).
pub fn dead_status(s: &DeadStatus) {
    if let Some(o) = OBSERVER.get() {
        (o.dead_status)(s)
    }
}

/// A collective entered on `comm` ([`Observer::coll_entered`]).
pub fn coll_entered(comm: crate::engine::base::handles::Sim_FT_MPI_Comm, root: i32) {
    if let Some(o) = OBSERVER.get() {
        (o.coll_entered)(comm, root)
    }
}

pub fn finalize() {
    if let Some(o) = OBSERVER.get() {
        (o.finalize)()
    }
}

/// Ends the process: through the observer, or with `exit` if none registered.
pub fn end_process(status: c_int) -> ! {
    match OBSERVER.get() {
        Some(o) => (o.end_process)(status),
        None => std::process::exit(status),
    }
}
