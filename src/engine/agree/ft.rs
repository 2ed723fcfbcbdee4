//! `MPIX_Comm_agree`, `iagree`, `shrink` and `ishrink`: the layer side of
//! [`crate::protocol::ftagree`] (docs/ARCHITECTURE.md, "Agreement").
//!
//! Each call is an *operation* here: its contribution (flag, the failures this
//! rank knows, the ones it acknowledged) goes into one of this process's
//! agreement slots in the window, and the operation then only reads other
//! members' slots (`MPI_Rget`) and publishes its partial and result into its own.
//! No dead rank takes part, no message is sent, and nothing blocks: every MPI call
//! of this process advances every pending operation (engine::progress::service). Blocking
//! agree and shrink wait for theirs; `iagree` and `ishrink` return a request at
//! once, a generalized request that MPIFT completes when the operation is done,
//! so the completion calls treat it like any other (engine::complete::complete).
//!
//! Shrink then makes the new communicator with `MPI_Comm_create_group` over the
//! live members in the old order (collective over those members only). MPI-3.1
//! has no non-blocking form of it, so this last step is blocking: a process runs
//! it once the result is known, in the progress of any of its MPI calls, and it
//! ends when every survivor reached that point too. A process with several
//! shrinks pending constructs in ascending (communicator id, instance) order, the
//! same everywhere, and never before an earlier one is constructed, so two
//! constructions never wait for each other.
//!
//! The program's entry points are [`crate::engine::agree::ft_calls`],
//! the slots in the window [`crate::engine::agree::ft_slots`].

use crate::engine::base::settings;
use crate::engine::base::runtime;
use crate::engine::base::errors::SIM_FT_ERR_PROC_FAILED;
use crate::engine::agree::ft_slots::{self, claim, parse, probe_start, store_field};
use crate::engine::base::handles::{CommRef, Sim_FT_MPI_Comm};
use crate::engine::agree::inter::Sides;
use crate::engine::base::edges;
use crate::engine::base::progress;
use crate::engine::{registry::comm, agree::inter};
use crate::protocol::agree;
use crate::protocol::ftagree::{Agreement, Published, Step, View};
use crate::protocol::Rank;
use crate::transport::serial::Serial;
use crate::transport::{self, window, MPI_Comm, MPI_Request};
use std::os::raw::c_int;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::time::{Duration, Instant};


/// Operations not done yet (engine::progress::service runs while any is). Each change is
/// followed by [`running_changed`].
static RUNNING: AtomicUsize = AtomicUsize::new(0);

/// Resynchronises [`edges::AGREEING`] with `RUNNING` (exact below
/// `MPI_THREAD_MULTIPLE`; above, the entry does not trust it: engine::base::edges).
fn running_changed() {
    edges::set(edges::AGREEING, RUNNING.load(Ordering::Acquire) != 0);
}

/// The fan-out this process asks for (`Sim_FT_set_tree_fanout`, the
/// `TREE_SUCCESSOR_COUNT` macro); 0: none. Rank 0's wins at `MPI_Init`.
static REQUESTED: AtomicU32 = AtomicU32::new(0);

pub fn request_fanout(k: u32) {
    REQUESTED.store(k, Ordering::Relaxed);
}
pub fn requested_fanout() -> u32 {
    REQUESTED.load(Ordering::Relaxed)
}

/// Some agreement is still running here.
#[inline]
pub fn running() -> bool {
    RUNNING.load(Ordering::Acquire) != 0
}

/// What the operation is for, and where its output goes.
#[derive(Clone, Copy)]
pub(super) enum What {
    Agree { flag: *mut c_int },
    Shrink { newcomm: *mut Sim_FT_MPI_Comm },
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum State {
    Running,
    /// Shrink: the result is known, the new communicator not made yet.
    Decided(Vec<u64>),
    /// The error code (0: success).
    Done(c_int),
}

/// One read of a member's probe window in flight; `final_`: issued after the
/// member was known dead, so what it reads is final (protocol::ftagree, View).
struct Read {
    req: MPI_Request,
    buf: Box<[u64]>,
    final_: bool,
}

struct Op {
    key: u64,
    comm: Sim_FT_MPI_Comm,
    real: MPI_Comm,
    id: u64,
    inst: u64,
    members: Vec<u32>,
    rank: usize,
    what: What,
    agr: Agreement,
    slot: usize,
    snaps: Vec<Option<Published>>,
    final_: Vec<bool>,
    reads: Vec<Option<Read>>,
    waiting: Vec<Rank>,
    /// When this operation first waited for each member (protocol::ftagree,
    /// View::stalled: after [`STALL`] it computes around a member that
    /// contributed, which may be blocked in a host call that needs this one).
    since: Vec<Option<Instant>>,
    state: State,
    /// The generalized request of iagree/ishrink (null for blocking calls).
    greq: MPI_Request,
    /// This rank died with the operation pending: it only reads (its slot must
    /// not change after its death), and makes its part of a shrink's communicator.
    zombie: bool,
    /// The program freed the request: drop the operation when it is done.
    orphan: bool,
    /// On an intercommunicator: how `members` (both groups) splits into the two.
    sides: Option<Sides>,
}

impl Drop for Read {
    /// A read still in flight when its operation is dropped (a decided operation
    /// whose other reads were not needed, a dead rank's agreement) is waited for:
    /// its buffer must outlive it (with MPICH an `MPI_Rget` completes only when its
    /// target makes progress, and would write into freed memory). That needs only
    /// the target to be inside any MPI call.
    fn drop(&mut self) {
        if self.req != transport::request_null() {
            transport::request::wait(&mut self.req, None);
        }
    }
}

// SAFETY: the raw pointers are the program's output arguments and the host
// handles (pointers with Open MPI) name host objects; none is tied to a thread,
// and all are only used under OPS's lock, by the thread that calls MPI (the
// program keeps the outputs valid until the operation completes, as MPI
// requires of a non-blocking call).
unsafe impl Send for Op {}

/// What an operation has read of the other members (protocol::ftagree::View).
struct Seen<'a> {
    snaps: &'a [Option<Published>],
    final_: &'a [bool],
    since: &'a [Option<Instant>],
}

/// How long an operation waits for a live member before it computes around it.
/// A normal agreement takes microseconds (a few milliseconds when processes share
/// cores); a member blocked in a host collective that needs this process first
/// (examples/ulfm/iagree_wait_coll) would never publish its partial. Computing
/// around it costs one read of each member once, by one member.
const STALL: Duration = Duration::from_millis(20);

impl View for Seen<'_> {
    fn published(&self, m: Rank) -> Option<&Published> {
        self.snaps[m as usize].as_ref()
    }
    fn is_dead(&self, m: Rank) -> bool {
        self.final_[m as usize]
    }
    fn stalled(&self, m: Rank) -> bool {
        self.since[m as usize].is_some_and(|t| t.elapsed() >= STALL)
    }
}

static OPS: Serial<Vec<Op>> = Serial::new(Vec::new());

/// A communicator a shrink made for a dead rank that had started it alive
/// (`op.zombie`), for its serve loop to take up (engine::dead::zombie, [`take_shrunk`]).
/// `live`: the old ranks in it; `members`: the old communicator's world ranks.
pub struct Shrunk {
    pub real: MPI_Comm,
    pub id: u64,
    pub live: Vec<Rank>,
    pub members: Vec<u32>,
    pub old_rank: usize,
}
// SAFETY: the host handle (a pointer with Open MPI) names a host object not tied
// to any thread; used only by the thread that calls MPI.
unsafe impl Send for Shrunk {}

static SHRUNK: Serial<Vec<Shrunk>> = Serial::new(Vec::new());

/// The communicators made for this dead rank since the last call, oldest first.
pub fn take_shrunk() -> Vec<Shrunk> {
    std::mem::take(&mut *SHRUNK.lock())
}
static NEXT_KEY: AtomicU32 = AtomicU32::new(1);

/// Tag of shrink's `MPI_Comm_create_group`.
pub(crate) const SHRINK_TAG: c_int = 0x5f7;

/// Who takes part in an agreement on `cr` (both groups of an intercommunicator),
/// this rank's index among them, and its contribution (protocol::agree).
fn participants(cr: &CommRef, flag: c_int) -> (Vec<u32>, usize, Option<Sides>, Vec<u64>) {
    comm::read(cr.handle, |s| {
        let sides = s.inter.then(|| Sides { local_first: s.local_first(), nlocal: s.members.len() as u32, nremote: s.remote.len() as u32 });
        let (lo, ro) = sides.map_or((0, 0), |x| x.offsets());
        let mut known: Vec<Rank> = s.failures.known().iter().map(|r| r + lo).collect();
        known.extend(s.remote_failed.known().iter().map(|r| r + ro));
        let acked: Vec<Rank> = s.failures.acked().iter().map(|r| r + lo).collect();
        let word = sides.map_or(0xffff_ffff_0000_0000 | flag as u32 as u64, |x| x.flag_word(flag as u32));
        let union = s.union();
        let own = agree::contribution_live(union.len() as u32, word, &known, &acked);
        (union, s.rank as usize + lo as usize, sides, own)
    })
    .expect("caller looked it up")
}

/// Starts an operation: numbers it, publishes the contribution, advances it once.
pub(super) fn start(cr: &CommRef, what: What, flag: c_int, greq: MPI_Request) -> u64 {
    let inst = comm::next_ft_instance(cr.handle);
    let (members, rank, sides, own) = participants(cr, flag);
    let n = members.len();
    let l = own.len();
    let slot = claim(cr.id, inst, l);
    store_field(slot, cr.id, inst, 0, &own);
    let key = NEXT_KEY.fetch_add(1, Ordering::Relaxed) as u64;
    let op = Op {
        key,
        comm: cr.handle,
        real: cr.real,
        id: cr.id,
        inst,
        rank,
        what,
        agr: Agreement::new(n as u32, rank as u32, settings::fanout(), own),
        slot,
        snaps: vec![None; n],
        final_: vec![false; n],
        reads: (0..n).map(|_| None).collect(),
        waiting: Vec::new(),
        since: vec![None; n],
        state: State::Running,
        greq,
        zombie: false,
        orphan: false,
        members,
        sides,
    };
    OPS.lock().push(op);
    RUNNING.fetch_add(1, Ordering::AcqRel);
    running_changed();
    progress_all();
    key
}

/// Advances every operation as far as it goes; a shrink whose result is known
/// makes its communicator here (module comment: the one blocking step).
pub fn progress_all() {
    if !running() {
        return;
    }
    let mut ops = std::mem::take(&mut *OPS.lock());
    for op in ops.iter_mut().filter(|o| o.state == State::Running) {
        advance(op);
    }
    // Constructions, in (id, instance) order; none before an earlier shrink that
    // is still running here.
    let mut order: Vec<usize> = (0..ops.len()).filter(|i| matches!(ops[*i].what, What::Shrink { .. })).collect();
    order.sort_by_key(|i| (ops[*i].id, ops[*i].inst));
    let granted = *GRANTED.lock();
    for i in order {
        match ops[i].state {
            State::Running => break,
            // A dead rank's part blocks in the host: only in its turn (below).
            State::Decided(_) if ops[i].zombie && needs_me(&ops[i]) && granted != Some(ops[i].id) => break,
            // Blocking: in a turn: a dead rank's part only as granted by its turn
            // (construct_in_turn, from engine::dead::zombie); a live survivor's is its
            // program's shrink, made by every survivor from any MPI call's service.
            State::Decided(_) => construct(&mut ops[i]),
            State::Done(_) => {}
        }
        if !matches!(ops[i].state, State::Done(_)) {
            break;
        }
    }
    for op in ops.iter_mut() {
        if matches!(op.state, State::Done(_)) && op.greq != transport::request_null() && !op.zombie {
            transport::request::grequest_complete(op.greq);
            op.greq = transport::request_null();
        }
    }
    ops.retain(|o| !(o.orphan && matches!(o.state, State::Done(_))));
    let mut table = OPS.lock();
    ops.append(&mut table);
    *table = ops;
}

/// Advances `op`: reads that completed, the protocol's steps, new reads. On
/// shared memory a read completes within a microsecond, so when reads come
/// back at once it goes round once more instead of leaving the next
/// round to the next poll, which under oversubscription follows a yield of the
/// CPU (several microseconds each, measured: bench/README.md).
fn advance(op: &mut Op) {
    for _ in 0..2 {
        if !advance_once(op) || op.state != State::Running {
            break;
        }
    }
}

/// One round of [`advance`]; true if some read had completed.
fn advance_once(op: &mut Op) -> bool {
    let n = op.members.len();
    let l = agree::contribution_len(n as u32);
    let sw = runtime::with(|rt| rt.win.ft_slot_words()).unwrap_or(0);
    let mut got = false;
    for m in 0..n {
        let done = match &mut op.reads[m] {
            Some(r) => transport::test_done(&mut r.req),
            None => false,
        };
        if done {
            got = true;
            let r = op.reads[m].take().expect("just tested");
            op.snaps[m] = Some(parse(&r.buf, sw, op.id, op.inst, l));
            op.final_[m] |= r.final_;
        }
    }
    loop {
        match op.agr.advance(&Seen { snaps: &op.snaps, final_: &op.final_, since: &op.since }) {
            Step::Publish { partial, result } => {
                if !op.zombie {
                    if let Some(p) = partial {
                        store_field(op.slot, op.id, op.inst, 1, &p);
                    }
                    if let Some(r) = result {
                        store_field(op.slot, op.id, op.inst, 2, &r);
                    }
                }
            }
            Step::Wait(need) => {
                for &m in &need {
                    op.since[m as usize].get_or_insert_with(Instant::now);
                }
                op.waiting = need;
                break;
            }
            Step::Decided(r) => {
                decided(op, r);
                return got;
            }
        }
    }
    let start = probe_start(op.id, op.inst);
    for &m in &op.waiting {
        let m = m as usize;
        if op.reads[m].is_some() {
            continue;
        }
        let w = op.members[m] as usize;
        let final_ = runtime::is_dead(w as u32);
        let read = runtime::with(|rt| {
            let mut buf = vec![0u64; sw * window::FT_PROBE].into_boxed_slice();
            let req = rt.win.rget(w, rt.win.ft_slot(start), &mut buf);
            Read { req, buf, final_ }
        });
        op.reads[m] = read;
    }
    got
}

/// The result is known: learn its failures; an agree is done, a shrink goes on
/// to its construction.
fn decided(op: &mut Op, r: Vec<u64>) {
    let n = op.members.len() as u32;
    let d = agree::decide(n, &r);
    if !d.failed.is_empty() {
        comm::troubled();
        let sides = op.sides;
        comm::update(op.comm, |s| {
            for &f in &d.failed {
                match sides.map_or(Ok(f), |x| x.split(f)) {
                    Ok(local) => s.failures.learn(local),
                    Err(remote) => s.remote_failed.learn(remote),
                };
            }
        });
    }
    if !op.zombie {
        ft_slots::done(op.slot, op.id, op.inst, op.members.clone(), op.members.len());
    }
    match op.what {
        What::Agree { flag } => {
            if !flag.is_null() && !op.zombie {
                let word = op.sides.map_or(d.flag as u32, |x| x.remote_flag(d.flag));
                // SAFETY: the program's flag, checked non-null at the call and
                // valid until the operation completes (MPI's rule for iagree).
                unsafe { *flag = word as c_int };
            }
            finish(op, if d.all_acked { 0 } else { SIM_FT_ERR_PROC_FAILED });
        }
        What::Shrink { .. } => op.state = State::Decided(r),
    }
}

fn finish(op: &mut Op, code: c_int) {
    op.state = State::Done(code);
    RUNNING.fetch_sub(1, Ordering::AcqRel);
    running_changed();
}

/// The parent communicator whose shrink construction a dead rank may run now
/// (engine::dead::zombie, in a turn of engine::dead::turns: `MPI_Comm_create_group` blocks
/// until every member of the new communicator is inside it, and a dead rank
/// blocked there outside the turns could hold one in a turn for ever).
static GRANTED: Serial<Option<u64>> = Serial::new(None);

/// This process's part in a shrink's construction is a blocking host call.
fn needs_me(op: &Op) -> bool {
    let State::Decided(r) = &op.state else { return false };
    agree::survivors(op.members.len() as u32, r).contains(&(op.rank as u32))
}

/// The parent communicator of the first shrink whose construction waits for
/// this dead rank's turn, if any (in the order [`progress_all`] builds them).
pub fn zombie_construction() -> Option<u64> {
    let ops = OPS.lock();
    let first = ops.iter().filter(|o| matches!(o.what, What::Shrink { .. }) && !matches!(o.state, State::Done(_))).min_by_key(|o| (o.id, o.inst))?;
    (first.zombie && needs_me(first)).then_some(first.id)
}

/// Runs the dead rank's construction on `id` that its turn allows now.
pub fn construct_in_turn(id: u64) {
    *GRANTED.lock() = Some(id);
    progress_all();
    *GRANTED.lock() = None;
}

/// Makes a shrink's communicator: the live members of the result, in the old
/// order, with `MPI_Comm_create_group` (blocking until every one of them is here).
fn construct(op: &mut Op) {
    let State::Decided(r) = &op.state else { return };
    let n = op.members.len() as u32;
    let live = agree::survivors(n, r);
    let code = if !live.contains(&(op.rank as u32)) {
        // A dead rank that never contributed is not in it (only a zombie gets here).
        0
    } else if let Some(sides) = op.sides {
        match inter::shrunk(&op.members, op.rank, sides, &live, SHRINK_TAG) {
            Ok(real) => {
                if op.zombie {
                    // A dead rank took its part; it serves no intercommunicator.
                    let mut real = real;
                    // The communicator this function just made.
                    transport::comm::free(&mut real);
                } else if let What::Shrink { newcomm } = op.what {
                    let id = comm::child_id(op.id, (1 << 40) | op.inst);
                    let h = match comm::lookup(op.comm) {
                        Some(p) => comm::adopt(real, &p, id),
                        None => comm::adopt_orphan(real, id),
                    };
                    // SAFETY: the program's output, checked non-null at the call.
                    unsafe { *newcomm = h };
                }
                0
            }
            Err(rc) => rc,
        }
    } else {
        match create_group(op, &live) {
            Ok(real) => {
                let id = comm::child_id(op.id, (1 << 40) | op.inst);
                if op.zombie {
                    SHRUNK.lock().push(Shrunk { real, id, live, members: op.members.clone(), old_rank: op.rank });
                } else if let What::Shrink { newcomm } = op.what {
                    let parent = comm::lookup(op.comm);
                    let h = match parent {
                        Some(p) => comm::adopt(real, &p, id),
                        None => comm::adopt_orphan(real, id),
                    };
                    // SAFETY: the program's output, checked non-null at the call
                    // and valid until the operation completes (MPI's rule for ishrink).
                    unsafe { *newcomm = h };
                }
                0
            }
            Err(rc) => rc,
        }
    };
    finish(op, code);
}

fn create_group(op: &Op, live: &[Rank]) -> Result<MPI_Comm, c_int> {
    let ranks: Vec<c_int> = live.iter().map(|r| *r as c_int).collect();
    let mut all = transport::group_empty();
    let mut g = transport::group_empty();
    let mut real = transport::comm_null();
    transport::comm::group(op.real, &mut all);
    transport::comm::group_incl(all, &ranks, &mut g);
    let rc = transport::comm::create_group(op.real, g, SHRINK_TAG, &mut real);
    transport::comm::group_free(&mut g);
    transport::comm::group_free(&mut all);
    if rc != 0 {
        return Err(rc);
    }
    Ok(real)
}

/// Runs the operation `key` to its end (blocking agree and shrink): every MPI
/// thing this process has to do goes on meanwhile (engine::progress::service, through
/// engine::base::progress).
pub(super) fn wait(key: u64) -> c_int {
    let mut idle = crate::engine::base::backoff::Backoff::wait();
    loop {
        if let Some(code) = take_if_done(key) {
            return code;
        }
        let _ = progress::run();
        if let Some(code) = take_if_done(key) {
            return code;
        }
        idle.pause();
    }
}

/// The code of operation `key` if it is done (then forgotten).
fn take_if_done(key: u64) -> Option<c_int> {
    let mut ops = OPS.lock();
    let i = ops.iter().position(|o| o.key == key)?;
    let State::Done(code) = ops[i].state else { return None };
    ops.remove(i);
    Some(code)
}

/// The outcome of the operation behind a completed iagree/ishrink request
/// (engine::complete::complete, when the generalized request completed).
pub fn outcome(key: u64) -> c_int {
    take_if_done(key).unwrap_or(0)
}

/// The program freed an iagree/ishrink request: the operation still runs (others
/// need this rank's part), and is forgotten when done.
pub fn forget(key: u64) {
    let mut ops = OPS.lock();
    if let Some(i) = ops.iter().position(|o| o.key == key) {
        if matches!(ops[i].state, State::Done(_)) {
            ops.remove(i);
        } else {
            ops[i].orphan = true;
        }
    }
}

// ---- a rank that dies with operations pending ----

/// Called by `Sim_FT_kill_me` before the death is announced. Completes the
/// generalized requests (the dead rank's requests must all end), drops pending
/// agrees (their slot, with the contribution, stays readable: the others count it),
/// and keeps pending shrinks running read-only: the dead rank may be in the new
/// communicator (it contributed alive) and must then take part in making it.
pub fn on_death() {
    let mut ops = OPS.lock();
    for op in ops.iter_mut() {
        if op.greq != transport::request_null() {
            transport::request::grequest_complete(op.greq);
            op.greq = transport::request_null();
        }
        op.zombie = true;
    }
    ops.retain(|o| matches!(o.what, What::Shrink { .. }) && !matches!(o.state, State::Done(_)));
    RUNNING.store(ops.len(), Ordering::Release);
    running_changed();
}

/// For the dead rank's serve loop: advances its pending shrinks.
pub fn zombie_progress() -> bool {
    let before = RUNNING.load(Ordering::Acquire);
    progress_all();
    before != RUNNING.load(Ordering::Acquire)
}

/// The dead rank may stop serving only when these are done.
pub fn zombie_pending() -> bool {
    running()
}

/// Forgets everything (`MPI_Finalize`).
pub fn clear() {
    OPS.lock().clear();
    ft_slots::clear();
    RUNNING.store(0, Ordering::Release);
    running_changed();
}
