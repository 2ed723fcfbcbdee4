//! A dead rank's parts in MPIFT's own collectives (barrier, small allreduce), all
//! running at once and advanced by its one serve loop (engine::dead::zombie), never
//! waited for one at a time (issue 35; protocol::part says why).
//!
//! [`start`] adds a part when the dead rank joins such a collective
//! (engine::join::join): its first send goes out at once, and the collective counts
//! as joined, so the dead rank goes on to the next collective of that
//! communicator and to those of others while the part waits for its partners.
//! [`progress`] receives what arrived on the own collectives' channels
//! (engine::own::channel) and advances every part; a part on a communicator known
//! revoked is dropped (its members leave by themselves).
//!
//! Only a process that runs no blocking step of those collectives any more may
//! use this (its receives take any message of the channel's tag): a dead rank.
//! Fill-ins and catch-ups of live ranks run the blocking forms. A rank dies at a
//! call's entry or outside MPI (inject::decide_slow, `Sim_FT_kill_me`), never in
//! the middle of a blocking step, whose posted receive would otherwise stay
//! posted and could take a message a part needs.

use crate::engine::own::allreduce;
use crate::engine::own::barrier;
use crate::engine::own::channel::{revoked_id, Channel};
use crate::protocol::dissem::Stamp;
use crate::protocol::part::{Kind, Part};
use std::sync::Mutex;

/// A part in progress: the members' world ranks and the body each message carries.
struct Running {
    part: Part,
    members: Vec<u32>,
    body: Vec<u8>,
}

static RUNNING: Mutex<Vec<Running>> = Mutex::new(Vec::new());

fn channel(kind: Kind) -> &'static Channel {
    match kind {
        Kind::Barrier => barrier::channel(),
        Kind::Allreduce => allreduce::channel(),
    }
}

/// Starts member `me`'s part in collective `seq` of communicator `id` (members:
/// world ranks), whose messages carry `bytes` bytes after the stamp (zeros: a
/// stand-in's contribution is thrown away).
pub fn start(kind: Kind, id: u64, seq: u64, me: usize, members: &[u32], bytes: usize) {
    if revoked_id(id) {
        // Its members leave by themselves.
        return;
    }
    let stamp = Stamp { id, seq };
    let mut r = Running { part: Part::new(stamp, kind, me, members.len()), members: members.to_vec(), body: vec![0; bytes] };
    let done = advance(&mut r);
    if !done {
        RUNNING.lock().unwrap().push(r);
    }
}

/// One part as far as the kept messages allow; true once done.
fn advance(r: &mut Running) -> bool {
    let ch = channel(r.part.kind);
    let stamp = r.part.stamp;
    let (members, body) = (&r.members, &r.body);
    r.part.advance(|from| ch.take(members[from], stamp), |to| ch.post(stamp, body, members[to]))
}

/// Receives what arrived and advances every part. True if a message arrived or
/// a part finished or was dropped.
pub fn progress() -> bool {
    let mut running = RUNNING.lock().unwrap();
    if running.is_empty() {
        return false;
    }
    let mut busy = barrier::channel().pull();
    busy |= allreduce::channel().pull();
    let before = running.len();
    running.retain_mut(|r| !revoked_id(r.part.stamp.id) && !advance(r));
    if running.len() != before {
        barrier::channel().purge();
        allreduce::channel().purge();
        busy = true;
    }
    busy
}

/// Some part is still running.
pub fn pending() -> bool {
    !RUNNING.lock().unwrap().is_empty()
}
