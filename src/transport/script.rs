//! Sequences of window updates to many processes at once, without blocking on any
//! one of them.
//!
//! News (a death, a revoke) is a short sequence of updates per target whose order
//! matters (the data before the counter that announces it). A blocking
//! put-then-flush per target serialises the targets, and with MPICH, whose RMA here
//! is served by the target's progress engine, a flush to a process that computes
//! outside MPI spins a core until that process next enters MPI — while the other
//! targets, perhaps blocked waiting for this very news, get nothing. A [`Scripts`]
//! runs one sequence per target concurrently: each step is one or more atomic
//! fetch-and-updates, issued together, whose requests complete once the updates
//! were applied there ([`Window::rupdate`]); the next step of that target starts
//! when all of them completed. Updates of one step may land in any order (MPI
//! orders accumulates only to the same location), so a step groups only updates
//! whose readers tolerate that (e.g. a revoke slot with its own check word and the
//! news counter that makes readers look).

use crate::transport::window::Window;
use crate::transport::{self, mpi};
use std::time::Instant;

/// One update: offset, values, add (true) or replace.
pub struct Update {
    pub at: usize,
    pub vals: Vec<u64>,
    pub sum: bool,
}

/// The next updates of a target's sequence, given the old values fetched by the
/// first update of the previous step (empty at the start); None: the sequence is
/// complete.
pub type Step = Box<dyn FnMut(&[u64]) -> Option<Vec<Update>> + Send>;

/// One update in flight: its request and the buffers MPI reads and writes.
struct InFlight {
    req: mpi::MPI_Request,
    _vals: Box<[u64]>,
    old: Box<[u64]>,
}

struct Running {
    target: usize,
    next: Step,
    flight: Vec<InFlight>,
    started: bool,
    done: bool,
    /// Not started before this time ([`Scripts::hold`]).
    not_before: Option<Instant>,
}

// Requests and buffers are used only by the thread that calls MPI.
// SAFETY: the step is `Send` and the buffers are owned boxes; the one field that
// is not `Send` is the host request handle (a pointer in Open MPI), which names
// a process-wide host object and is never dereferenced by Rust. Scripts sit in
// the layer's `Serial`-locked state, used by one thread at a time.
unsafe impl Send for Running {}

/// A set of per-target update sequences in flight.
#[derive(Default)]
pub struct Scripts {
    running: Vec<Running>,
}

impl Scripts {
    pub fn add(&mut self, target: usize, next: Step) {
        self.running.push(Running { target, next, flight: Vec::new(), started: false, done: false, not_before: None });
    }

    /// Each sequence not started yet starts at `until(its target)` at the
    /// earliest, where that is Some (the adversarial mode's late news,
    /// engine::adversary); one pass over the sequences.
    pub fn hold(&mut self, mut until: impl FnMut(usize) -> Option<Instant>) {
        for r in self.running.iter_mut().filter(|r| !r.started) {
            if let Some(t) = until(r.target) {
                r.not_before = Some(t);
            }
        }
    }

    pub fn done(&self) -> bool {
        self.running.iter().all(|r| r.done)
    }

    /// Advances every sequence as far as it goes without waiting; returns the
    /// targets whose sequence completed in this call.
    pub fn progress(&mut self, win: &Window) -> Vec<usize> {
        self.advance(win, false)
    }

    /// Issues the first step of every sequence not started yet, and nothing
    /// more: the caller returns at once and [`Scripts::progress`] goes on later.
    pub fn kick(&mut self, win: &Window) {
        self.advance(win, true);
    }

    fn advance(&mut self, win: &Window, first_only: bool) -> Vec<usize> {
        let mut finished = Vec::new();
        let now = Instant::now();
        let held = |r: &Running| !r.started && r.not_before.is_some_and(|t| now < t);
        for r in self.running.iter_mut().filter(|r| !r.done && !(first_only && r.started) && !held(r)) {
            loop {
                if first_only && r.started {
                    break;
                }
                if !r.flight.iter_mut().all(|f| transport::test_done(&mut f.req)) {
                    break;
                }
                let prev: &[u64] = match (r.started, r.flight.first()) {
                    (true, Some(f)) => &f.old,
                    _ => &[],
                };
                match (r.next)(prev) {
                    None => {
                        r.done = true;
                        r.flight.clear();
                        finished.push(r.target);
                        break;
                    }
                    Some(updates) => {
                        r.started = true;
                        r.flight = updates
                            .into_iter()
                            .map(|u| {
                                let mut old = vec![0u64; u.vals.len()].into_boxed_slice();
                                let vals = u.vals.into_boxed_slice();
                                let req = win.rupdate(r.target, u.at, &vals, u.sum, &mut old);
                                InFlight { req, _vals: vals, old }
                            })
                            .collect();
                    }
                }
            }
        }
        finished
    }
}

/// Sequential steps (one update each) that need no fetched values.
pub fn fixed(updates: Vec<Update>) -> Step {
    let mut it = updates.into_iter();
    Box::new(move |_| it.next().map(|u| vec![u]))
}
