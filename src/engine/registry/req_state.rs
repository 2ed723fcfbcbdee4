//! What MPIFT keeps per request (engine::registry::request's table holds one per live
//! MPIFT request handle).

use crate::engine::base::handles::Sim_FT_MPI_Comm;
use crate::engine::base::handles::Real;
use crate::transport::{self, MPI_Request};
use std::os::raw::c_int;
use std::sync::atomic::{AtomicBool, Ordering};

/// The kinds of `mpi_functions.tbl`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Local,
    P2p,
    P2pStart,
    Coll,
    CollStart,
    CommNew,
    /// An iagree/ishrink request (engine::agree::ft); not a table kind.
    Ft,
}

/// What MPIFT keeps per request.
#[derive(Clone, Copy, Debug)]
pub struct ReqState {
    pub real: Real<MPI_Request>,
    /// The communicator whose error handler sees this request's errors.
    pub comm: Real<Sim_FT_MPI_Comm>,
    pub kind: Kind,
    /// Point-to-point: the peer (rank in `comm`, or `MPI_ANY_SOURCE`), and whether
    /// this is a receive. Collectives: -1.
    pub peer: c_int,
    pub recv: bool,
    /// A buffer the real request reads from (0: none): the corrupted copy of a
    /// send under `MPIFT_BITFLIP`, in [`KEPT`] until the real request is done.
    pub keep: u64,
    /// A persistent request (`MPI_*_init`), and whether it is active (started and
    /// not yet completed). Completion calls treat an inactive one like
    /// `MPI_REQUEST_NULL` (MPI-3.1 §3.7.3), without releasing it.
    pub persistent: bool,
    pub active: bool,
    /// A persistent request given up on for the program (a send to a dead rank, an
    /// operation on a revoked communicator): inactive for the program, but the real
    /// request may still run; `MPI_Start` completes it first.
    pub draining: bool,
    /// An iagree/ishrink (engine::agree::ft): the operation's key. Its real request is a
    /// generalized request MPIFT completes; completion calls poll it instead of
    /// blocking in MPI, and take the operation's error when it completed.
    pub ft: u64,
    /// A non-blocking collective with buffers (not `MPI_Ibarrier`): on a revoked
    /// communicator it is waited for until it completes (the other members'
    /// catch-up completes it), so MPI writes nothing into its buffers after the
    /// request was handed back (engine::complete::complete).
    pub buffers: bool,
    /// A send: its number among the messages this process started towards `peer`
    /// on `comm` (1-based; 0: not counted). If `peer` dies, the send succeeded
    /// only if `peer` had received that many from here while alive
    /// (engine::complete::complete, engine::registry::dead_counts::received_alive).
    pub nth: u32,
    /// A non-blocking collective: its number on `comm` (0: unknown). It succeeds
    /// although a member died if every dead member had entered it for real
    /// (engine::news::logs::all_dead_entered_seq).
    pub seq: u64,
    /// The program called `MPI_Cancel` on it: a receive that completes cancelled
    /// is the program's cancel (success), not a revoke's (engine::complete::complete).
    pub cancelled: bool,
    /// A non-blocking send small enough to count as eager, marked only while the
    /// adversarial mode's `sends` choice is on (engine::adversary::sends): if
    /// its destination dies without receiving it, it may be told success.
    pub eager: bool,
}

/// What the calm paths of the completion calls read of a request instead of its
/// whole state (engine::complete::batch_fast): enough for [`crate::engine::complete::complete::finish_brief`]
/// and for the error's communicator; 16 bytes against the state's 64 to copy.
#[derive(Clone, Copy, Debug)]
pub struct Brief {
    /// As [`ReqState::comm`].
    pub comm: Sim_FT_MPI_Comm,
    /// As [`ReqState::nth`].
    pub nth: u32,
    /// A point-to-point request ([`Kind::P2pStart`]), and whether a receive.
    pub p2p: bool,
    pub recv: bool,
}

impl ReqState {
    /// This request's [`Brief`].
    #[inline]
    pub fn brief(&self) -> Brief {
        Brief { comm: self.comm.0, nth: self.nth, p2p: self.kind == Kind::P2pStart, recv: self.recv }
    }

    /// A request of a blocking call or a non-persistent start: active.
    pub fn started(comm: Sim_FT_MPI_Comm, kind: Kind, peer: c_int, recv: bool) -> ReqState {
        ReqState { real: Real(transport::request_null()), comm: Real(comm), kind, peer, recv, keep: 0, persistent: false, active: true, draining: false, ft: 0, buffers: false, nth: 0, seq: 0, cancelled: false, eager: false }
    }
}

/// A completion call is under way: from the read of its requests (engine::registry::request's
/// `one_active`, `active_many`, `plain_many`, `calm_state`) until it settles them,
/// the request table may hold real requests the host has completed and freed, so
/// nothing may act on the table's real requests meanwhile
/// (engine::registry::owed::end_receives defers to the call's end). A call that returns
/// early leaves it set: that only defers, and the C boundary's end of the call
/// (engine::registry::owed::end_receives_owed) clears it when anything was deferred.
static COMPLETING: AtomicBool = AtomicBool::new(false);

/// Is a completion call under way (see `COMPLETING`)?
pub fn completing() -> bool {
    COMPLETING.load(Ordering::Relaxed)
}

/// The completion call settled its requests, or the MPI call returned.
#[inline(always)]
pub(crate) fn completion_over() {
    COMPLETING.store(false, Ordering::Relaxed);
}

/// A completion call reads its requests.
#[inline(always)]
pub(crate) fn completion_starts() {
    COMPLETING.store(true, Ordering::Relaxed);
}

/// The host completes `st` by itself, as the calm paths leave it to: not an
/// iagree/ishrink (MPIFT completes those), not a request to `MPI_PROC_NULL`.
#[inline]
pub(crate) fn host_completes(st: &ReqState) -> bool {
    st.ft == 0 && !to_proc_null(st)
}

/// A point-to-point request with peer `MPI_PROC_NULL` completes at once. MPICH's
/// `MPI_Waitany`/`MPI_Waitsome` skip a started persistent one (as if inactive), so
/// it must not be left to them.
#[inline]
pub(crate) fn to_proc_null(st: &ReqState) -> bool {
    st.kind == Kind::P2pStart && st.peer == transport::proc_null()
}
