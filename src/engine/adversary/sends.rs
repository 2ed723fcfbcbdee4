//! The `sends` choice: a small non-blocking send to a rank that died without
//! receiving it completes with success, where the default verdict is
//! `MPI_ERR_PROC_FAILED`.
//!
//! ULFM allows it: a send completes locally once MPI no longer needs its
//! buffer, and an eager message leaves at once, whether or not its receiver is
//! alive to take it (ULFM-SEMANTICS.md, "Point-to-point": `MPI_Isend` of a small
//! message to a rank known dead, then `MPI_Wait`, may still succeed on the
//! oracle; a large, rendezvous, send fails). What is new beside the default
//! mode: there, such a send succeeds only if the dead rank had received it alive
//! (engine::complete::complete); here it may also succeed when the message never
//! reached it. The event is keyed by the communicator, this process, the
//! destination and the send's number towards it, so a seed replays the same
//! outcomes. Blocking sends keep the default: a blocking send that completed
//! before the failure was known succeeded anyway, and one still waiting when it
//! became known fails on the oracle too.

use super::{note, Made};
use crate::engine::base::handles::Sim_FT_MPI_Comm;
use crate::engine::base::{runtime, settings};
use crate::engine::registry::comm;
use crate::protocol::outcome;
use crate::transport::{self, MPI_Datatype};
use std::os::raw::c_int;

/// The largest message the choice takes as eager, in bytes: below the eager
/// limits of the shared-memory paths of MPICH and Open MPI.
pub const EAGER_BYTES: i64 = 4096;

/// At a non-blocking send's start (the general path, which every send takes
/// while the choice is on: engine::entry::lane is closed to sends then): whether
/// its message is small enough to count as eager. False when the choice is off.
pub fn eager(count: c_int, dt: MPI_Datatype) -> bool {
    if !settings::adversary(settings::choice::SENDS) {
        return false;
    }
    let mut size: c_int = 0;
    transport::env::type_size(dt, &mut size) == 0 && (count as i64) * (size as i64) <= EAGER_BYTES
}

/// Send number `nth` towards rank `peer` of `h` (an eager one) ended while its
/// destination is dead and had not received it alive: true if it is told
/// success instead of the default `MPI_ERR_PROC_FAILED`.
#[cold]
#[inline(never)]
pub fn tells_success(h: Sim_FT_MPI_Comm, peer: c_int, nth: u32) -> bool {
    if !settings::adversary(settings::choice::SENDS) {
        return false;
    }
    let Some((id, Some(world_peer))) = comm::read(h, |s| (s.id, s.peer_world(peer as usize))) else {
        return false;
    };
    let key = [settings::choice::SENDS as u64, id, runtime::world_rank() as u64, world_peer as u64, nth as u64];
    let success = outcome::draw(settings::seed(), &key);
    note(Made::Send { comm: id, peer: world_peer, nth, success });
    success
}
