//! A dead (or catching-up) rank's part in the communicator constructors that
//! `calls::comm_ctor` starts: `MPI_Comm_idup` and `MPI_Intercomm_create`
//! (`engine::join::join` dispatches here), and the id exchange every member of a new
//! intercommunicator takes part in ([`inter_id`]).

use crate::engine::colls::describe::{fcode, Desc};
use crate::engine::join::join_types::{free_comm, Joined, Pending, Who};
use crate::engine::registry::comm;
use crate::transport::{self, generated, MPI_Comm};
use std::collections::HashMap;
use std::os::raw::c_int;
use std::sync::Mutex;

/// The id both groups give a new intercommunicator, and whether the other group
/// keeps it: each member contributes its group's id and verdict (a dead member
/// all ones, neutral), the intercommunicator's allreduce gives each group the
/// other's, and both hash the id pair in the same order.
pub fn inter_id(nc: MPI_Comm, local_id: u64, ok: bool) -> (u64, bool) {
    let mine = [local_id, if ok { !0 } else { 0 }];
    let mut theirs = [0u64; 2];
    // SAFETY: two words in, two out, on a communicator every member of both
    // groups has just made (they all come here, dead ones through [`join`]).
    unsafe {
        generated::MPI_Allreduce(
            mine.as_ptr() as *const std::os::raw::c_void,
            theirs.as_mut_ptr() as *mut std::os::raw::c_void,
            2,
            transport::dt_uint64(),
            transport::op_band(),
            nc,
        )
    };
    let (a, b) = (local_id.min(theirs[0]), local_id.max(theirs[0]));
    (comm::child_id(comm::child_id(a, b), INTER_SEED), theirs[1] != 0)
}

/// Id input that sets intercommunicator ids apart from the others.
const INTER_SEED: u64 = 0x696e_7465_72;

/// `MPI_Intercomm_create`s this process joined as a dead (or catching-up) local
/// leader, per (peer communicator id, remote leader, tag): engine::dead::zombie keeps
/// the other leader's messages for those it has yet to join.
static JOINED_AS_LEADER: Mutex<Option<HashMap<(u64, c_int, c_int), u32>>> = Mutex::new(None);

/// How many `MPI_Intercomm_create`s this process joined as local leader with
/// this peer communicator, remote leader and tag.
pub fn joined_as_leader(peer_id: u64, remote_leader: c_int, tag: c_int) -> u32 {
    JOINED_AS_LEADER.lock().unwrap().as_ref().and_then(|m| m.get(&(peer_id, remote_leader, tag)).copied()).unwrap_or(0)
}

/// A dead rank's (or a catching-up rank's) part in `MPI_Comm_idup` and
/// `MPI_Intercomm_create` (engine::join::join dispatches here).
pub fn join(who: &Who, f: u32, e0: &Desc, entries: &[Option<Desc>]) -> Joined {
    let c = who.real;
    match f {
        fcode::COMM_IDUP => {
            // Kept in flight, never waited for here: a dead rank joins an idup
            // outside the turns (engine::join::join::blocks), so waiting could hold it
            // while another dead rank in a turn needs it (issue 53). The pending
            // join keeps the new communicator's place and frees it once complete.
            let mut p = Pending::empty();
            let mut r = transport::request_null();
            // SAFETY: the boxed output lives in `p` until the request completed
            // (engine::join::join_types::PendingBuffers frees it then).
            unsafe { transport::comm::idup(c, p.comm_out(), &mut r) };
            p.req = r;
            Joined::Pending(p)
        }
        fcode::INTERCOMM_CREATE => {
            let leader = e0.root;
            let (remote_leader, tag) = (e0.extra[0] as u32 as c_int, e0.extra[1] as u32 as c_int);
            let peer = if who.rank as c_int == leader {
                let id = entries.iter().flatten().map(|e| e.extra[2]).find(|id| *id != 0);
                let Some((id, real)) = id.and_then(|id| comm::find_by_id(id).and_then(|h| comm::read(h, |s| (id, s.real.0)))) else {
                    return Joined::Unsupported;
                };
                *JOINED_AS_LEADER.lock().unwrap().get_or_insert_with(HashMap::new).entry((id, remote_leader, tag)).or_insert(0) += 1;
                real
            } else {
                transport::comm_null()
            };
            let mut nc = transport::comm_null();
            // The local communicator's real handle, the peer another member named
            // (or null, not significant at a non-leader); `nc` is an out.
            let rc = transport::comm::intercomm_create(c, leader, peer, remote_leader, tag, &mut nc);
            if rc == 0 {
                // The live members exchange ids on it: take part, neutrally.
                inter_id(nc, !0, true);
            }
            free_comm(nc);
            Joined::Done
        }
        _ => Joined::Unsupported,
    }
}
