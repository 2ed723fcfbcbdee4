//! What MPIFT knows about one communicator ([`CommState`]), and how a new
//! state is read from the host when MPIFT wraps a real communicator: its
//! members' world ranks, whether it is an intercommunicator, and which failures
//! and revoke already known here apply to it. The registry of states is
//! [`crate::engine::registry::comm`].

use crate::engine::base::edges;
use std::sync::atomic::{AtomicBool, Ordering};
use crate::engine::base::handles::Real;
use crate::protocol::failures::Failures;
use crate::transport::{self, MPI_Comm, MPI_Errhandler, MPI_Group};

/// World rank recorded for a member of another job's `MPI_COMM_WORLD`.
pub const FOREIGN: u32 = u32::MAX;

/// What MPIFT knows about one communicator.
#[derive(Clone, Debug)]
pub struct CommState {
    pub real: Real<MPI_Comm>,
    /// The handler the user set (the real communicator always has
    /// `MPI_ERRORS_RETURN` or a do-nothing token, so errors come back to MPIFT).
    pub errhandler: Real<MPI_Errhandler>,
    pub revoked: bool,
    /// An intercommunicator (members are the local group).
    pub inter: bool,
    /// Failed members known here, and which of them the program acknowledged.
    pub failures: Failures,
    /// Intercommunicator: world rank of each member of the remote group (the
    /// ranks point-to-point calls name), [`FOREIGN`] for one outside this job's
    /// world (a spawned or connected job); empty for an intracommunicator.
    pub remote: Vec<u32>,
    /// Some member (of either group) lives outside this job's world (spawned or
    /// connected jobs): MPIFT has no news from it. Set at creation.
    pub foreign: bool,
    /// Failed members of the remote group known here. ULFM's `get_failed` and
    /// `ack_failed` cover the local group only (Open MPI 5 ULFM, checked on the
    /// oracle), so these are never acknowledged.
    pub remote_failed: Failures,
    /// `MPI_COMM_WORLD` / `MPI_COMM_SELF`: may not be freed.
    pub predefined: bool,
    /// Job-wide name of this communicator, the same at every member and computed
    /// without messages: a hash of the parent's id and the parent's creation count.
    pub id: u64,
    /// Collectives entered here (real or joined as a dummy): the collective's number
    /// in the log (docs/ARCHITECTURE.md, "Dead ranks join collectives").
    pub seq: u64,
    /// Communicators created from this one (the next child's id input).
    pub creations: u64,
    /// Agreements (agree, iagree, shrink, ishrink) started on it here: the
    /// instance number of the next, the same at every member (engine::agree::ft).
    pub ft_count: u64,
    pub rank: i32,
    /// World rank of every member, by rank in this communicator.
    pub members: Vec<u32>,
    /// Messages this rank started sending to / received from each member (a dead
    /// rank answers "how many did you send me", so earlier messages still arrive).
    pub sent: Vec<u32>,
    pub recvd: Vec<u32>,
    /// Revoked: the last collective number any member entered before the revoke
    /// reached it, once the revoker published it (catch-up target).
    pub horizon: Option<u64>,
    /// The program freed it while requests on it were outstanding: the real
    /// communicator is freed when the last of them completes (MPI-3.1 §6.4.3).
    pub free_pending: bool,
    /// Collectives joined here with dummy data for the program (engine::dead::fillin)
    /// that its calls have not claimed yet.
    pub filled: u64,
}

impl CommState {
    pub fn size(&self) -> usize {
        self.members.len()
    }
    /// Rank in this communicator of a world rank.
    pub fn rank_of(&self, world: u32) -> Option<usize> {
        self.members.iter().position(|w| *w == world)
    }
    /// Some member (of either group) is known to have failed.
    pub fn has_failed(&self) -> bool {
        !self.failures.known().is_empty() || !self.remote_failed.known().is_empty()
    }
    /// World ranks of the members known to have failed (from the news or from an
    /// agreement, which may report a death before its news lands here).
    pub fn failed_world_ranks(&self) -> Vec<u32> {
        let local = self.failures.known().iter().filter_map(|r| self.members.get(*r as usize).copied());
        let remote = self.remote_failed.known().iter().filter_map(|r| self.remote.get(*r as usize).copied());
        local.chain(remote).collect()
    }
    /// How many ranks point-to-point calls may name (the remote group's size on an
    /// intercommunicator).
    pub fn peer_count(&self) -> usize {
        if self.inter {
            self.remote.len()
        } else {
            self.members.len()
        }
    }
    /// World rank of point-to-point rank `p`.
    pub fn peer_world(&self, p: usize) -> Option<u32> {
        if self.inter {
            self.remote.get(p).copied()
        } else {
            self.members.get(p).copied()
        }
    }
    /// Point-to-point rank `p` is known to have failed.
    pub fn peer_failed(&self, p: usize) -> bool {
        if self.inter {
            self.remote_failed.is_failed(p as u32)
        } else {
            self.failures.is_failed(p as u32)
        }
    }
    /// A receive from `MPI_ANY_SOURCE` fails: a failure not acknowledged, which on
    /// an intercommunicator includes any of the remote group (the oracle: a
    /// wildcard receive fails whichever group the dead member is in).
    pub fn any_source_fails(&self) -> bool {
        self.failures.has_unacknowledged() || !self.remote_failed.known().is_empty()
    }
    /// Every member of an intercommunicator's two groups in one order, the same at
    /// each of them: the group holding the lowest world rank first. Its index is
    /// a member's place in the agreement (engine::agree::ft). For an intracommunicator,
    /// the members.
    pub fn union(&self) -> Vec<u32> {
        if !self.inter {
            return self.members.clone();
        }
        let (a, b) = if self.local_first() { (&self.members, &self.remote) } else { (&self.remote, &self.members) };
        a.iter().chain(b.iter()).copied().collect()
    }
    /// On an intercommunicator, whether the local group comes first in [`union`](Self::union).
    pub fn local_first(&self) -> bool {
        let low = |g: &[u32]| g.iter().copied().min().unwrap_or(u32::MAX);
        low(&self.members) < low(&self.remote)
    }
}

/// World ranks of the members of group `g` ([`FOREIGN`] for one outside the world).
fn world_ranks(g: MPI_Group) -> Vec<u32> {
    let mut size = 0;
    let mut wg = transport::zero_group();
    transport::comm::group_size(g, &mut size);
    transport::comm::group(transport::comm_world(), &mut wg);
    let ranks: Vec<i32> = (0..size).collect();
    let mut out = vec![0i32; size as usize];
    transport::comm::group_translate_ranks(g, &ranks, wg, &mut out);
    transport::comm::group_free(&mut wg);
    out.into_iter().map(|w| if w < 0 { FOREIGN } else { w as u32 }).collect()
}

/// Rank and world ranks of the members of a real communicator (its local group),
/// and of its remote group if it is an intercommunicator.
fn membership(real: MPI_Comm, inter: bool) -> (i32, Vec<u32>, Vec<u32>) {
    let mut rank = 0;
    let mut g = transport::zero_group();
    transport::comm::rank(real, &mut rank);
    transport::comm::group(real, &mut g);
    let members = world_ranks(g);
    transport::comm::group_free(&mut g);
    let mut remote = Vec::new();
    if inter {
        transport::comm::remote_group(real, &mut g);
        remote = world_ranks(g);
        transport::comm::group_free(&mut g);
    }
    (rank, members, remote)
}


/// The state of real communicator `real`, about to be registered under a
/// handle (engine::registry::comm): read from the host and from the news known here.
pub(super) fn new_state(real: MPI_Comm, errhandler: Real<MPI_Errhandler>, id: u64, predefined: bool) -> CommState {
    let mut inter: std::os::raw::c_int = 0;
    transport::comm::test_inter(real, &mut inter);
    let (rank, members, remote) = membership(real, inter != 0);
    let peers = if inter != 0 { remote.len() } else { members.len() };
    // A member already known dead (a rank that died during an ishrink it had
    // contributed to alive, engine::agree::ft) is a known failure of the new communicator.
    let mut failures = Failures::new();
    for (r, w) in members.iter().enumerate() {
        if crate::engine::base::runtime::is_dead(*w) {
            failures.learn(r as u32);
        }
    }
    let mut remote_failed = Failures::new();
    for (r, w) in remote.iter().enumerate() {
        if crate::engine::base::runtime::is_dead(*w) {
            remote_failed.learn(r as u32);
        }
    }
    // A revoke of this very communicator that arrived while this process was still
    // creating it (the revoker had finished its MPI_Comm_dup and revoked at once):
    // the news named an id no communicator here had yet. It applies now, else this
    // member enters the communicator's collectives as if nothing had happened and
    // the others wait for it (issue 18, defect 5).
    let revoke = if !edges::any(edges::TROUBLE) { None } else { crate::engine::base::runtime::revoked_id(id) };
    if revoke.is_some() {
        note_owed();
    }
    let foreign = members.iter().chain(remote.iter()).any(|w| *w == FOREIGN);
    CommState {
        foreign,
        real: Real(real),
        errhandler,
        revoked: revoke.is_some(),
        inter: inter != 0,
        failures,
        remote,
        remote_failed,
        predefined,
        id,
        seq: 0,
        creations: 0,
        ft_count: 0,
        rank,
        members,
        sent: vec![0; peers],
        recvd: vec![0; peers],
        horizon: revoke.flatten(),
        free_pending: false,
        filled: 0,
    }
}

/// A revoke may have left this process collectives to catch up on: set when a
/// revoke or horizon becomes known, cleared when a scan finds nothing owed.
static MAYBE_OWED: AtomicBool = AtomicBool::new(false);

/// A revoke or a horizon became known here (news, or this rank's own revoke).
pub fn note_owed() {
    MAYBE_OWED.store(true, Ordering::Release);
}

/// This rank may owe catch-up joins ([`catch_up_owed`] finds out).
pub fn may_owe() -> bool {
    MAYBE_OWED.load(Ordering::Acquire)
}

/// Reads and clears "may owe" (engine::revoke::revoke::catch_up_owed, which sets it
/// again where it stops early).
pub fn take_maybe_owed() -> bool {
    MAYBE_OWED.swap(false, Ordering::AcqRel)
}
