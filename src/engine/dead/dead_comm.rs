//! What a dead rank keeps (engine::dead::zombie): per communicator it is in, its
//! requests started alive, its dummy joins in flight, and the communicators
//! made after its death that it takes up.

use crate::engine::registry::comm_state;
use crate::engine::base::runtime;
use crate::engine::colls::describe::Desc;
use crate::engine::join::join_types::Pending;
use crate::engine::agree::ft::Shrunk;
use crate::transport::{MPI_Comm, MPI_Request};
use crate::engine::base::handles::Real;
use std::collections::HashMap;
use std::sync::Mutex;

/// What a zombie keeps per communicator it is in.
pub struct ZComm {
    pub id: u64,
    pub real: MPI_Comm,
    pub rank: usize,
    pub members: Vec<u32>,
    /// An intercommunicator's remote group (world ranks, [`comm_state::FOREIGN`]
    /// outside this world); empty otherwise.
    pub remote: Vec<u32>,
    pub inter: bool,
    pub seq: u64,
    /// `seq` when this rank died: a join since (engine::dead::zombie::join_next) means every member
    /// not known dead had entered every collective up to `alive_seq`.
    pub alive_seq: u64,
    /// Communicators made from this one so far (the live members' count,
    /// engine::entry::hooks::next_child_id): a new one's id derives from it.
    pub creations: u64,
}

/// A request this rank started alive and has not seen complete; a non-blocking
/// collective's communicator id and number.
pub struct Own {
    pub req: MPI_Request,
    pub coll: Option<(u64, u64)>,
    /// A point-to-point request (MPI allows cancelling only those).
    pub p2p: bool,
}

impl ZComm {
    /// World ranks of the members, an intercommunicator's remote group included
    /// (another job's members, [`comm_state::FOREIGN`], excepted).
    pub fn everyone(&self) -> impl Iterator<Item = u32> + '_ {
        let remote = if self.inter { &self.remote[..] } else { &[] };
        self.members.iter().chain(remote.iter()).copied().filter(|w| *w != comm_state::FOREIGN)
    }

    /// Every member but this rank that is not known dead has an entry among
    /// `found` (the members' log entries of one collective): it entered it.
    pub fn entered_by_the_others(&self, found: Option<&HashMap<u32, Desc>>) -> bool {
        let me = self.members[self.rank];
        self.everyone().all(|w| w == me || runtime::is_dead(w) || found.is_some_and(|f| f.contains_key(&w)))
    }

    /// World ranks that point-to-point ranks name (comm_state::CommState::peer_world).
    pub fn peers(&self) -> &[u32] {
        if self.inter {
            &self.remote
        } else {
            &self.members
        }
    }
}

/// A dummy join still in flight: its communicator id, number and function code
/// (for the stuck report).
pub struct InFlight {
    pub p: Pending,
    pub what: (u64, u64, u32),
}

/// A shrink this dead rank had started made a communicator with it inside
/// (engine::agree::ft, taken by the serve loop with `ft::take_shrunk`): serve it like
/// the others.
pub fn adopt_shrunk(s: Shrunk) -> ZComm {
    let rank = s.live.iter().position(|r| *r as usize == s.old_rank).expect("in the new communicator");
    let members = s.live.iter().map(|r| s.members[*r as usize]).collect();
    ZComm { id: s.id, real: s.real, rank, members, remote: Vec::new(), inter: false, seq: 0, alive_seq: 0, creations: 0 }
}

/// Duplicates this dead rank joined and keeps (the adversarial mode's
/// `constructors` choice): real communicator, id, rank, members.
type Dup = (Real<MPI_Comm>, u64, usize, Vec<u32>);
static TAKEN_UP: Mutex<Vec<Dup>> = Mutex::new(Vec::new());

/// This dead rank's part in collective `f` of `parent` when it is an
/// `MPI_Comm_dup` under the adversarial mode's `constructors` choice: survivors
/// may be told success and use the new communicator, so the dead rank makes
/// it and keeps it (served like the others from the next round, [`taken_up`],
/// under the id the live members give it) instead of joining as a dummy that
/// frees it (engine::join::join). False, nothing done, for any other join.
/// (Called after `parent.creations` counted this constructor.)
pub fn take_up_dup(parent: &ZComm, f: u32) -> bool {
    use crate::engine::base::settings;
    use crate::engine::colls::describe::fcode;
    if f != fcode::COMM_DUP || parent.inter || !settings::adversary(settings::choice::CONSTRUCTORS) {
        return false;
    }
    let mut nc = crate::transport::comm_null();
    // Blocking: in a turn: a dead rank joins a dup, as any blocking constructor,
    // only in the turn engine::dead::turns granted for this communicator, once
    // every live member has entered it (engine::dead::zombie::join_ready).
    crate::transport::comm::dup(parent.real, &mut nc);
    if nc == crate::transport::comm_null() {
        return true;
    }
    let id = crate::engine::registry::comm::child_id(parent.id, parent.creations);
    TAKEN_UP.lock().unwrap().push((Real(nc), id, parent.rank, parent.members.clone()));
    true
}

/// The communicators [`take_up_dup`] kept since the last call.
pub fn taken_up() -> Vec<ZComm> {
    let v = std::mem::take(&mut *TAKEN_UP.lock().unwrap());
    v.into_iter()
        .map(|(real, id, rank, members)| ZComm { id, real: real.0, rank, members, remote: Vec::new(), inter: false, seq: 0, alive_seq: 0, creations: 0 })
        .collect()
}
