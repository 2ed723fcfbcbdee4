//! The counts a dead rank left in each process's window (engine::dead::zombie::announce):
//! per communicator, the messages it sent there and those it had received from
//! there while alive. Live ranks read them to judge receives from and sends to a
//! dead peer (engine::complete::complete, calls::p2p): a receive may fail once every
//! message the dead rank sent has been received (or their grace is over); a send
//! numbered above what it received alive was only drained.

use crate::engine::registry::comm_state;
use crate::engine::base::settings;
use crate::engine::base::runtime;
use crate::transport::window;
use std::sync::Mutex;

/// Every message dead member `peer` of `c` sent here before dying has been
/// received (its count is in this process's window; no record counts as none).
pub fn all_received_from(c: &comm_state::CommState, peer: usize) -> bool {
    let Some(w) = c.peer_world(peer) else { return true };
    c.recvd.get(peer).copied().unwrap_or(0) >= sent_by_dead(w, c.id).unwrap_or(0)
}

/// How long a receive from a dead rank waits for the messages that rank sent
/// before dying and that have not been received yet ([`all_received_from`] is
/// false): some may carry tags no receive will ever ask for, and must not keep a
/// receive with another tag waiting forever. Messages already sent arrive within
/// microseconds on one node; this is ULFM's detection delay in MPIFT's terms.
const IN_FLIGHT_GRACE: std::time::Duration = std::time::Duration::from_millis(100);

/// When this process first asked whether a dead rank's messages are all in.
static FIRST_ASKED: Mutex<Vec<(u32, std::time::Instant)>> = Mutex::new(Vec::new());

/// A receive from dead member `peer` of `c` that is still pending can fail: every
/// message the dead rank sent here has been received, or the grace for those in
/// flight is over (a posted receive would already have matched one that arrived).
pub fn receive_can_fail(c: &comm_state::CommState, peer: usize) -> bool {
    all_received_from(c, peer) || grace_over(c.members[peer])
}

fn grace_over(w: u32) -> bool {
    let mut asked = FIRST_ASKED.lock().unwrap();
    let t = match asked.iter().find(|(x, _)| *x == w) {
        Some((_, t)) => *t,
        None => {
            asked.push((w, std::time::Instant::now()));
            return false;
        }
    };
    t.elapsed() >= IN_FLIGHT_GRACE.max(settings::timeout())
}

/// The count-of-messages record a dead rank left for this process about `comm`:
/// (messages it sent here, messages it received from here while alive).
fn record_of_dead(dead_world: u32, comm_id: u64) -> Option<(u32, u32)> {
    runtime::with(|rt| {
        let at = rt.win.sent(dead_world as usize);
        for k in 0..window::SENT_SLOTS {
            if rt.win.load(at + 2 * k) == comm_id {
                let w = rt.win.load(at + 2 * k + 1);
                return Some((w as u32, (w >> 32) as u32));
            }
        }
        None
    })
    .flatten()
}

fn sent_by_dead(dead_world: u32, comm_id: u64) -> Option<u32> {
    record_of_dead(dead_world, comm_id).map(|(sent, _)| sent)
}

/// How many messages from this process the dead member `peer` of `c` had
/// received while alive: a send numbered above it was only drained, never
/// delivered, and fails with `MPI_ERR_PROC_FAILED` (engine::complete::complete). A record
/// that does not fit the dead rank's slots reads as 0 (the safe side).
pub fn received_alive(c: &comm_state::CommState, peer: usize) -> u32 {
    c.peer_world(peer).and_then(|w| record_of_dead(w, c.id)).map_or(0, |(_, got)| got)
}
