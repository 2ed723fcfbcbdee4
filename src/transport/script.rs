//! Sequences of window updates to many processes at once, without blocking on any
//! one of them.
//!
//! News (a death, a revoke) is a short sequence of updates per target whose order
//! matters (the data before the counter that announces it). A blocking
//! put-then-flush per target serialises the targets, and with MPICH, whose RMA here
//! is served by the target's progress engine, a flush to a process that computes
//! outside MPI spins a core until that process next enters MPI — while the other
//! targets, perhaps blocked waiting for this very news, get nothing. A [`Scripts`]
//! runs one sequence per target concurrently: each step is an atomic
//! fetch-and-update whose request completes once the update was applied there
//! ([`Window::rupdate`]); the next step of that target starts then.

use crate::transport::window::Window;
use crate::transport::{self, mpi};

/// One update: offset, values, add (true) or replace.
pub struct Update {
    pub at: usize,
    pub vals: Vec<u64>,
    pub sum: bool,
}

/// The next update of a target's sequence, given the old values fetched by the
/// previous one (empty at the start); None: the sequence is complete.
pub type Step = Box<dyn FnMut(&[u64]) -> Option<Update> + Send>;

struct Running {
    target: usize,
    next: Step,
    req: mpi::MPI_Request,
    vals: Box<[u64]>,
    old: Box<[u64]>,
    started: bool,
    done: bool,
}

// Requests and buffers are used only by the thread that calls MPI.
unsafe impl Send for Running {}

/// A set of per-target update sequences in flight.
#[derive(Default)]
pub struct Scripts {
    running: Vec<Running>,
}

impl Scripts {
    pub fn add(&mut self, target: usize, next: Step) {
        self.running.push(Running {
            target,
            next,
            req: transport::request_null(),
            vals: Box::new([]),
            old: Box::new([]),
            started: false,
            done: false,
        });
    }

    pub fn done(&self) -> bool {
        self.running.iter().all(|r| r.done)
    }

    /// Advances every sequence as far as it goes without waiting; returns the
    /// targets whose sequence completed in this call.
    pub fn progress(&mut self, win: &Window) -> Vec<usize> {
        let mut finished = Vec::new();
        for r in self.running.iter_mut().filter(|r| !r.done) {
            loop {
                if r.started && !transport::test_done(&mut r.req) {
                    break;
                }
                let prev: &[u64] = if r.started { &r.old } else { &[] };
                match (r.next)(prev) {
                    None => {
                        r.done = true;
                        finished.push(r.target);
                        break;
                    }
                    Some(u) => {
                        r.started = true;
                        r.old = vec![0u64; u.vals.len()].into_boxed_slice();
                        r.vals = u.vals.into_boxed_slice();
                        r.req = win.rupdate(r.target, u.at, &r.vals, u.sum, &mut r.old);
                    }
                }
            }
        }
        finished
    }
}

/// Sequential steps that need no fetched values.
pub fn fixed(updates: Vec<Update>) -> Step {
    let mut it = updates.into_iter();
    Box::new(move |_| it.next())
}
