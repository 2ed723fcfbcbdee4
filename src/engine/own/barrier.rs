//! MPIFT's own barrier for `MPI_Barrier` (the program's entry point is
//! engine::entry::own_calls::barrier): a dissemination barrier (protocol::dissem), so
//! that a member waiting in it on a communicator that gets revoked returns
//! `MPI_ERR_REVOKED` by itself, whatever the other members are doing (issue 19):
//! inside a host MPI's blocking barrier it could only wait for the others to join
//! for it, which they cannot while they are themselves inside a real blocking
//! collective or compute outside MPI.
//!
//! Messages are 16-byte stamps on MPIFT's shadow communicator (tag
//! [`TAG_BARRIER`], world ranks; engine::own::channel), received from the round's
//! partner with a wait that news interrupts. Dead ranks and fill-ins run the same barrier for the
//! members they stand in for (engine::join::join); a catch-up on a revoked communicator
//! has nothing to do, since its members left by themselves.
//!
//! Intracommunicators only, in the default mode (`MPIFT_COLLECTIVES=blocking`),
//! and unless `MPIFT_BARRIER=host` (rank 0's, shared at `MPI_Init`).

use crate::engine::base::settings;
use crate::engine::base::runtime;
use crate::engine::base::handles::CommRef;
use crate::engine::own::channel::{revoked_id, Channel, Waiter, HEAD};
use crate::engine::registry::comm;
use crate::protocol::dissem::{partners, rounds, Stamp};
use std::os::raw::c_int;

/// The shadow communicator's tag for barrier stamps (wake::TAG_WAKE is 1).
pub const TAG_BARRIER: c_int = 2;


/// The barrier's stamps (no data).
static CHANNEL: Channel = Channel::new(TAG_BARRIER);

/// The barrier's channel (engine::join::standin runs a dead rank's parts on it).
pub fn channel() -> &'static Channel {
    &CHANNEL
}

/// How a collective of MPIFT's own ended at this member.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    Done,
    /// The communicator is revoked (here: abandoned, nothing more is sent).
    Revoked,
}

/// Runs barrier number `seq` of communicator `id` as member `me` of `n`, where
/// `pair(to, from)` gives the world ranks of members `to` and `from`.
fn run(id: u64, seq: u64, me: usize, n: usize, pair: &dyn Fn(usize, usize) -> (u32, u32), how: Waiter) -> Ended {
    let want = Stamp { id, seq };
    if settings::debug() {
        crate::say!("MPIFT barrier {}: comm {:x} #{} enters", runtime::world_rank(), id, seq);
    }
    for d in rounds(n) {
        let (to, from) = partners(me, n, d);
        let (to, from) = pair(to, from);
        let mut buf = [0u8; HEAD];
        if CHANNEL.step(want, &[], Some(to), Some(from), &mut buf, 0, how).is_none() {
            if settings::debug() {
                crate::say!("MPIFT barrier {}: comm {:x} #{} revoked, leaves", runtime::world_rank(), id, seq);
            }
            CHANNEL.purge();
            return Ended::Revoked;
        }
    }
    if settings::debug() {
        crate::say!("MPIFT barrier {}: comm {:x} #{} done", runtime::world_rank(), id, seq);
    }
    Ended::Done
}

/// A dead rank's, a fill-in's or a catch-up's part in barrier `seq` of `id`.
pub fn join(id: u64, seq: u64, me: usize, members: &[u32]) {
    if revoked_id(id) {
        // Its members leave by themselves (a catch-up owes nothing here).
        return;
    }
    let _ = run(id, seq, me, members.len(), &|t, f| (members[t], members[f]), Waiter::Join);
}

/// A live member's part in barrier `seq` of `c` (engine::entry::own_calls::barrier,
/// after the entry hook).
pub fn member(c: &CommRef, seq: u64) -> Ended {
    let h = c.handle;
    // The partners are read per round: no copy of the list on the failure-free path.
    let pair = |t: usize, f: usize| comm::read(h, |s| (s.members[t], s.members[f])).unwrap_or((0, 0));
    run(c.id, seq, c.rank as usize, c.size as usize, &pair, Waiter::Program(h))
}
