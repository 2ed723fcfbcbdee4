//! Collective matching with zombies and revoke: one rank's state machine, live or
//! zombie, over any number of (overlapping) communicators, with every access to
//! shared memory an explicit step through [`Io`].
//!
//! The mechanism (docs/ARCHITECTURE.md, "Next"): each rank has a public *log* (a
//! ring of the last collectives it entered, readable by RMA) and a *news* area that
//! others put into. Collective `#s` on a communicator is matched by sequence number
//! alone, so the one thing that must never happen is two members entering
//! different operations as the same `#s`; and since a real collective completes
//! only when every member entered it, every `#s` someone entered must eventually
//! be entered by all (live for real, catching up, or as a zombie).
//!
//! Why every access is a separate step: the races are between RMA accesses of
//! different ranks (a log store against a revoker's get, a news put against the
//! entering rank's read), so the harness interleaves single accesses. The only
//! exception is [`Io::find_op`], a scan of other logs for an `Entered` entry: such an
//! entry never changes once written, so reading it in one step or many is the same.
//!
//! [`Design`] switches each rule, so the tests can run the design as first written
//! (`Design::AS_WRITTEN`), the design with the fixes this model showed necessary
//! (`Design::FIXED`), and mutations of single rules.

use crate::protocol::agree::Decision;
use crate::protocol::{CommId, Rank};

/// Collective sequence number on one communicator (1 = the first collective).
pub type Seq = u64;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    Barrier,
    Bcast,
    Reduce,
    Allreduce,
    /// The one reduction of `agree`.
    Agree,
    /// The reduction of `shrink`, then its split.
    ShrinkReduce,
    Split,
}

impl Kind {
    /// Internal collectives belong to an agree or shrink call; everything else is
    /// an application collective.
    pub fn is_internal(self) -> bool {
        matches!(self, Kind::Agree | Kind::ShrinkReduce | Kind::Split)
    }
}

/// A collective and its matching parameters (what must be equal at all members).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Op {
    pub kind: Kind,
    pub root: Rank,
    pub count: u32,
}

impl Op {
    pub fn internal(kind: Kind) -> Op {
        Op { kind, root: 0, count: 0 }
    }
}

/// Two-phase log entries: `Pending` before the news check, then `Entered` or
/// `Cancelled`. The design as written has one phase (every entry counts).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EntryState {
    Pending,
    Entered,
    Cancelled,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pub comm: CommId,
    pub seq: Seq,
    pub op: Op,
    pub state: EntryState,
    /// Written by a rank that already knew the communicator revoked (catch-up and
    /// the agree/shrink collectives after the horizon): a horizon ignores these.
    pub post_revoke: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum News {
    /// World rank that died.
    Dead(Rank),
    Revoked(CommId),
    Horizon(CommId, Seq),
}

/// What a rank brings to a collective.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Contribution {
    /// Application data (its value does not matter to the protocol).
    Data,
    /// Words for the BAND reduction of agree/shrink (`agree` layout).
    Bits(Vec<u64>),
    /// Split color: `Some(0)` stays, `None` is `MPI_UNDEFINED`.
    Color(Option<u32>),
}

/// Entering collective `#seq` on `comm`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Join {
    pub comm: CommId,
    pub seq: Seq,
    pub op: Op,
    pub contribution: Contribution,
    /// Joined with dummy data (catch-up or zombie), not as the rank's own call.
    pub dummy: bool,
    pub post_revoke: bool,
}

/// What a completed collective gives back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// AND of the `Bits` contributions.
    pub bits: Option<Vec<u64>>,
    /// Split: world ranks of color 0, in communicator order.
    pub members: Option<Vec<Rank>>,
}

/// Shared memory and the real collectives, as the MPI layer provides them.
/// Each call marked "step" is one RMA access or MPI call; [`Machine::step`](super::colljoin_machine::Machine::step) makes
/// at most one of them. `complete` and `has_news` are local tests (`MPI_Test`, a
/// load of a counter) and free.
pub trait Io {
    /// Step: local store into my log's ring.
    fn write_log(&mut self, me: Rank, e: Entry);
    /// Step: local store changing the state of my entry `(comm, seq)`.
    fn mark_log(&mut self, me: Rank, comm: CommId, seq: Seq, state: EntryState);
    /// Step: local load of my news items from index `from` on.
    fn read_news(&mut self, me: Rank, from: usize) -> Vec<News>;
    fn has_news(&self, me: Rank, from: usize) -> bool;
    /// Step: put and flush one news item into `to`'s news.
    fn put_news(&mut self, from: Rank, to: Rank, item: News);
    /// Step: get `of`'s log entries for `comm`.
    fn read_log(&mut self, of: Rank, comm: CommId) -> Vec<Entry>;
    /// The operation some member's log shows for `(comm, seq)`; with
    /// `entered_only`, only an `Entered` entry counts.
    fn find_op(&self, comm: CommId, seq: Seq, entered_only: bool) -> Option<Op>;
    /// Step: start (non-blocking) collective `#seq`.
    fn enter(&mut self, me: Rank, j: Join);
    fn complete(&self, comm: CommId, seq: Seq) -> bool;
    fn outcome(&self, comm: CommId, seq: Seq) -> Option<Outcome>;
}

/// Which rules are in force.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Design {
    /// Entries are `Pending` until the news check; revokers wait for a pending
    /// entry to resolve and count only `Entered` pre-revoke ones, zombies and
    /// catch-up follow only `Entered` ones. Without it a cancelled entry counts.
    pub two_phase_log: bool,
    /// The horizon is at least the revoker's own sequence number (a completed
    /// collective may have left every ring).
    pub horizon_includes_own_seq: bool,
    /// A live rank waiting anywhere (or finalizing) reads its news and joins the
    /// application collectives up to each known horizon, without waiting for an
    /// agree/shrink/free call on that communicator.
    pub background_catchup: bool,
    /// Zombies join with non-blocking collectives (one outstanding per comm).
    pub zombie_nonblocking: bool,
    /// Catch-up joins an agree/shrink collective that others entered before the
    /// revoke *for real* when it is the step of the rank's own call, instead of
    /// with dummy data followed by its own at `H+1`.
    pub join_pending_internal: bool,
    /// After a collective completes, read news: revoked or a dead member makes it
    /// an error (the data may be dummy).
    pub leave_check: bool,
    /// Policy: a dead member known at entry fails the call without entering.
    pub cancel_on_known_failure: bool,
    /// Dekker, entering side: write the log entry, then read news.
    pub log_before_news: bool,
    /// Dekker, revoking side: put "revoked" everywhere, then read logs.
    pub revoker_puts_before_reading: bool,
    /// A zombie puts its death into every peer's news before it joins anything.
    pub zombie_puts_before_serving: bool,
    /// The adversarial semantics mode's `collectives` choice, with this seed: at
    /// the leave check, a survivor whose result depends on no known-dead member
    /// (protocol::outcome) is told success if the seed's draw says so.
    pub adversary: Option<u64>,
    /// The adversary keeps the rule of protocol::outcome (a mutation drops it:
    /// every drawn survivor is told success).
    pub adversary_keeps_rule: bool,
}

impl Default for Design {
    fn default() -> Design {
        Design::FIXED
    }
}

impl Design {
    /// The design as first written (leave check from docs/ARCHITECTURE.md).
    pub const AS_WRITTEN: Design = Design {
        two_phase_log: false,
        horizon_includes_own_seq: false,
        background_catchup: false,
        zombie_nonblocking: false,
        join_pending_internal: false,
        leave_check: true,
        cancel_on_known_failure: false,
        log_before_news: true,
        revoker_puts_before_reading: true,
        zombie_puts_before_serving: true,
        adversary: None,
        adversary_keeps_rule: true,
    };
    /// With every fix this model found necessary.
    pub const FIXED: Design = Design {
        two_phase_log: true,
        horizon_includes_own_seq: true,
        background_catchup: true,
        zombie_nonblocking: true,
        join_pending_internal: true,
        ..Design::AS_WRITTEN
    };
}

/// What the application asks of the rank.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AppCall {
    Coll(CommId, Op),
    Revoke(CommId),
    /// `ack`: acknowledge the known failures first (`failure_ack`).
    Agree {
        comm: CommId,
        flag: u64,
        ack: bool,
    },
    Shrink(CommId),
    /// `Sim_FT_kill_me`: never returns.
    Kill,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fail {
    Revoked,
    ProcFailed,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AppResult {
    Ok,
    Failed(Fail),
    Agreed(Decision),
    Shrunk { comm: CommId, members: Vec<Rank> },
}

/// What to wake a blocked rank on.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Wait {
    pub completion: Option<(CommId, Seq)>,
    pub news: bool,
    /// A new `Entered` operation becomes visible in some log of these comms.
    pub logs: Vec<CommId>,
    /// This rank resolves a pending entry.
    pub pending: Option<Rank>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Progress {
    /// One step done, the call goes on.
    Stepped,
    Returned(AppResult),
    Blocked(Wait),
    /// No call in progress: the application's turn.
    Idle,
}

/// The id of the communicator a shrink (split at `seq` of `parent`) creates: the
/// same at every member without a message.
pub fn child_id(parent: CommId, seq: Seq) -> CommId {
    // An odd multiplier is a bijection: distinct (rotated parent ^ seq), distinct ids.
    (parent.rotate_left(20) ^ seq).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}
