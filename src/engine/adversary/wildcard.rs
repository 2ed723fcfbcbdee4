//! The `wildcard` choice: a non-blocking receive from `MPI_ANY_SOURCE` on a
//! communicator with an unacknowledged failure completes at its latest allowed
//! point: it is told `MPI_ERR_PROC_FAILED_PENDING` (and stays pending) even when a
//! live sender's message is in and could match, until the program acknowledges
//! the failure (`MPIX_Comm_ack_failed`, `MPIX_Comm_failure_ack`).
//!
//! By default MPIFT, like the oracle's `MPI_Irecv(MPI_ANY_SOURCE)`, tests the
//! host first and hands over a message that is in. ULFM allows the other
//! outcome: a wildcard receive "may match a failed process", so it is held
//! until the failure is acknowledged, and the oracle's blocking
//! `MPI_Recv(MPI_ANY_SOURCE)` refuses a message that is in the same way (returns
//! `MPI_ERR_PROC_FAILED`, recorded in docs/ULFM-DIFFERENCES.md). The event is
//! keyed by the communicator, this process, how many failures it knows of in it
//! and how many messages it has received on it: each wildcard receive the
//! program makes after another is a new draw (a held one stays held: nothing is
//! received meanwhile), and a seed replays the same outcomes.

use super::{note, Made};
use crate::engine::base::handles::Sim_FT_MPI_Comm;
use crate::engine::base::{runtime, settings};
use crate::engine::registry::comm;
use crate::protocol::outcome;
use std::sync::Mutex;

/// The last event noted, so a wait that asks again and again notes it once.
static LAST: Mutex<Option<(u64, u64, u64)>> = Mutex::new(None);

/// A wildcard receive on `h`, whose verdict is `MPI_ERR_PROC_FAILED_PENDING`
/// (an unacknowledged failure): true if it is held, told PENDING without the
/// host being asked whether a message matched.
#[cold]
#[inline(never)]
pub fn holds(h: Sim_FT_MPI_Comm) -> bool {
    if !settings::adversary(settings::choice::WILDCARD) {
        return false;
    }
    let known = |s: &crate::engine::registry::comm_state::CommState| (s.failures.known().len() + s.remote_failed.known().len()) as u64;
    let Some((id, known, received)) = comm::read(h, |s| (s.id, known(s), s.recvd.iter().map(|x| *x as u64).sum::<u64>())) else {
        return false;
    };
    let key = [settings::choice::WILDCARD as u64, id, runtime::world_rank() as u64, known, received];
    let held = outcome::draw(settings::seed(), &key);
    let mut last = LAST.lock().unwrap();
    if *last != Some((id, known, received)) {
        *last = Some((id, known, received));
        note(Made::Wildcard { comm: id, failures: known as u32, received, held });
    }
    held
}
