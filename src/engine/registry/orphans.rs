//! Requests MPIFT gave up on for the program (sends to dead ranks, operations
//! on revoked communicators, fill-ins' collectives): progressed in the
//! background by the service, completed or let go at `MPI_Finalize`.

use crate::engine::base::handles::Sim_FT_MPI_Comm;
use crate::engine::{registry::comm, base::handles::Real};
use crate::transport::{self, MPI_Request};
use std::sync::Mutex;

/// Requests MPIFT gave up on for the program (sends to dead ranks, operations on
/// revoked communicators): progressed in the background, completed at finalize.
/// Each with the buffer it may read from (a kept copy, see request::KEPT) and its
/// communicator, whose real free waits for it (calls::comm_free::free: Open MPI 4.1
/// crashes progressing a collective whose communicator was freed), and whether
/// it is a point-to-point request (only those may be cancelled).
static ORPHANS: Mutex<Vec<Orphan>> = Mutex::new(Vec::new());
type Orphan = (Real<MPI_Request>, Option<Box<dyn std::any::Any + Send>>, Real<Sim_FT_MPI_Comm>, bool);

/// Hands `real` (with the copy of the buffer it may read, and its communicator)
/// to the background; `p2p`: a point-to-point request.
pub(crate) fn orphan(real: MPI_Request, kept: Option<Box<dyn std::any::Any + Send>>, comm: Sim_FT_MPI_Comm, p2p: bool) {
    if real != transport::request_null() {
        ORPHANS.lock().unwrap().push((Real(real), kept, Real(comm), p2p));
    }
}

/// Some orphan of `comm` is still running.
pub(crate) fn on(comm: Sim_FT_MPI_Comm) -> bool {
    ORPHANS.lock().unwrap().iter().any(|o| o.2 .0 == comm)
}

/// Tests the orphans once.
pub(crate) fn progress() {
    if comm::calm() {
        // Requests are orphaned only by a failure or a revoke.
        return;
    }
    let mut ended = Vec::new();
    ORPHANS.lock().unwrap().retain_mut(|(r, _, c, _)| {
        let mut flag = 0;
        // A request MPIFT owns (taken from the program), tested in place.
        transport::request::test(&mut r.0, &mut flag, None);
        let running = flag == 0 && r.0 != transport::request_null();
        if !running {
            ended.push(c.0);
        }
        running
    });
    // A communicator the program freed meanwhile goes once its last one ended.
    for c in ended {
        comm::request_gone(c);
    }
}

/// At finalize: gives the orphans a bounded time to complete, then lets them go:
/// a point-to-point one cancelled and freed, a collective one left as it is
/// (MPI-3.1 §5.12 allows neither on it; docs/DESIGN.md, "When a dead rank
/// leaves").
pub(crate) fn settle() {
    let t0 = std::time::Instant::now();
    loop {
        progress();
        if ORPHANS.lock().unwrap().is_empty() || t0.elapsed() > std::time::Duration::from_secs(2) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_micros(200));
    }
    for (mut r, kept, _, p2p) in ORPHANS.lock().unwrap().drain(..) {
        if p2p {
            // A request MPIFT owns; cancelled and freed once, here.
            transport::p2p::cancel(&mut r.0);
            transport::request::free(&mut r.0);
        }
        // Not completed: MPI may still read the copy until it ends.
        std::mem::forget(kept);
    }
}
