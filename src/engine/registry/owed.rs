//! What a revoke leaves this process to do later, kept where the registry can
//! note it: the program's receives on a revoked communicator still to be ended
//! (at once, or at the end of the completion call under way). News, hints and
//! this rank's own revoke note them; the C boundary acts on them. (Whether
//! catch-up joins may be owed is comm_state's `note_owed` flag.)

use crate::engine::base::edges;
use crate::engine::registry::comm;
use crate::transport::{self, serial::Serial};

/// Revoked communicators whose receives [`end_receives_owed`] still has to end.
static OWED_ENDS: Serial<Vec<u64>> = Serial::new(Vec::new());

/// Communicator `id` became revoked here through news or a hint: its receives
/// end at once, unless this comes in the middle of a completion call
/// (req_state::completing: the table may then hold real requests the host has
/// completed and freed, which must not be cancelled); then at the call's end
/// ([`end_receives_owed`]), the call's own requests having had their verdicts.
pub fn owe_end_receives(id: u64) {
    if !crate::engine::registry::req_state::completing() {
        end_receives(id);
        return;
    }
    OWED_ENDS.lock().push(id);
    edges::set(edges::OWED_END, true);
}

/// Ends the receives owed by [`owe_end_receives`]. Called by the C boundary
/// where no completion is under way: after the entry's service and when an MPI
/// call returns. (Inlined: one load when nothing is owed.)
#[inline]
pub fn end_receives_owed() {
    if edges::any(edges::OWED_END) {
        end_owed_slow();
    }
}

#[cold]
fn end_owed_slow() {
    crate::engine::registry::req_state::completion_over();
    let ids = std::mem::take(&mut *OWED_ENDS.lock());
    edges::set(edges::OWED_END, false);
    for id in ids {
        end_receives(id);
    }
}

/// Communicator `id` became revoked here (this rank's revoke, news or a hint):
/// ends the program's receives on it that the host still runs, as ULFM does at
/// the revoke. The host's receive is cancelled now, so a message that arrives
/// later is not written into a buffer the program may no longer own (a function
/// that returned with receives pending into its stack frame, counting on the
/// revoke to end them: examples/ulfm/revoke_pending_recv.c); the request, when
/// the program completes it, reports `MPI_ERR_REVOKED` (engine::complete::complete).
/// Called once per communicator, on the change to revoked, where no completion
/// call is under way: this rank's own revoke at its start, news and hints at
/// the call's edge ([`owe_end_receives`]).
pub fn end_receives(id: u64) {
    if transport::serial::multithreaded() {
        // Another thread may be inside a completion call (req_state::completing
        // is per process): left to the verdicts, as before.
        return;
    }
    for (c, mut real) in crate::engine::registry::request::receives_running() {
        if comm::read(c, |s| s.id == id).unwrap_or(false) {
            transport::p2p::cancel(&mut real);
        }
    }
}
