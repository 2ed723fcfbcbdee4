//! `MPIX_Comm_agree`, `iagree`, `shrink` and `ishrink`: the layer side of
//! [`crate::protocol::ftagree`] (docs/ARCHITECTURE.md, "Agreement").
//!
//! Each call is an *operation* here: its contribution (flag, the failures this
//! rank knows, the ones it acknowledged) goes into one of this process's
//! agreement slots in the window, and the operation then only reads other
//! members' slots (`MPI_Rget`) and publishes its partial and result into its own.
//! No dead rank takes part, no message is sent, and nothing blocks: every MPI call
//! of this process advances every pending operation (engine::service). Blocking
//! agree and shrink wait for theirs; `iagree` and `ishrink` return a request at
//! once, a generalized request that MPIFT completes when the operation is done,
//! so the completion calls treat it like any other (engine::complete).
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
//! Slots: an instance (communicator id, n-th agree or shrink on it) lands in one
//! of [`window::FT_PROBE`] consecutive slots chosen by a hash, so a reader fetches
//! that window with one read. A slot is reused only once every live member has
//! the result of the instance it held ([`retired`]).

use crate::engine::errors::{Failure, Outcome, SIM_FT_ERR_PROC_FAILED};
use crate::engine::handles::{self, CommRef, Sim_FT_MPI_Comm, Sim_FT_MPI_Request};
use crate::engine::inter::Sides;
use crate::engine::{comm, inter, news, request, service};
use crate::protocol::agree;
use crate::protocol::ftagree::{Agreement, Published, Step, View};
use crate::protocol::Rank;
use crate::transport::serial::Serial;
use crate::transport::{self, mpi, window};
use std::os::raw::{c_int, c_void};
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Fan-out of the agreement tree (`TREE_SUCCESSOR_COUNT`, agreed at `MPI_Init`).
static FANOUT: AtomicU32 = AtomicU32::new(DEFAULT_FANOUT);
/// Operations not done yet (engine::service runs while any is).
static RUNNING: AtomicUsize = AtomicUsize::new(0);

/// The fan-out this process asks for (`Sim_FT_set_tree_fanout`, the
/// `TREE_SUCCESSOR_COUNT` macro); 0: none. Rank 0's wins at `MPI_Init`.
static REQUESTED: AtomicU32 = AtomicU32::new(0);

/// Default fan-out: 8 children per node gives depth 4 at 4,096 ranks.
pub const DEFAULT_FANOUT: u32 = 8;

pub fn request_fanout(k: u32) {
    REQUESTED.store(k, Ordering::Relaxed);
}
pub fn requested_fanout() -> u32 {
    REQUESTED.load(Ordering::Relaxed)
}
/// The fan-out every process uses (set at `MPI_Init` from rank 0's choice).
pub fn set_fanout(k: u32) {
    FANOUT.store(k.clamp(1, 1 << 20), Ordering::Relaxed);
}
pub fn fanout() -> u32 {
    FANOUT.load(Ordering::Relaxed)
}

/// Some agreement is still running here.
#[inline]
pub fn running() -> bool {
    RUNNING.load(Ordering::Acquire) != 0
}

/// What the operation is for, and where its output goes.
#[derive(Clone, Copy)]
enum What {
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
    req: mpi::MPI_Request,
    buf: Box<[u64]>,
    final_: bool,
}

struct Op {
    key: u64,
    comm: Sim_FT_MPI_Comm,
    real: mpi::MPI_Comm,
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
    greq: mpi::MPI_Request,
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
            unsafe { mpi::MPI_Wait(&mut self.req, transport::status_ignore()) };
        }
    }
}

// Raw pointers to the program's outputs and MPI handles, only used by the thread
// that calls MPI.
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

/// What a slot of this process holds.
#[derive(Clone)]
enum SlotUse {
    Free,
    Busy,
    /// A finished instance that members may still be reading.
    Done { id: u64, inst: u64, members: Vec<u32>, n: usize },
}

static OPS: Serial<Vec<Op>> = Serial::new(Vec::new());
static SLOTS: Serial<Vec<SlotUse>> = Serial::new(Vec::new());
static NEXT_KEY: AtomicU32 = AtomicU32::new(1);

/// Tag of shrink's `MPI_Comm_create_group`.
pub(crate) const SHRINK_TAG: c_int = 0x5f7;

// ---- slot layout (words): id, inst, contrib, ck, partial, ck, result, ck ----

fn field_at(l: usize, f: usize) -> usize {
    2 + f * (l + 1)
}

/// Check word of field `f` of instance (id, inst): a reader takes a field only
/// when it matches, so neither a torn write nor an older instance's leftovers
/// are ever read as data.
fn check(id: u64, inst: u64, f: usize, words: &[u64]) -> u64 {
    let mut h = id.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ inst.rotate_left(29) ^ (f as u64 + 1).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    for w in words {
        h = (h ^ w).wrapping_mul(0x94d0_49bb_1331_11eb);
        h ^= h >> 31;
    }
    h | 1
}

/// First slot of the probe window of instance (id, inst).
fn probe_start(id: u64, inst: u64) -> usize {
    let h = (id ^ inst.wrapping_mul(0x9e37_79b9_7f4a_7c15)).wrapping_mul(0xff51_afd7_ed55_8ccd);
    (h >> 32) as usize % (window::FT_SLOTS - window::FT_PROBE + 1)
}

/// Parses instance (id, inst) out of a probe window read from a member.
fn parse(buf: &[u64], slot_words: usize, id: u64, inst: u64, l: usize) -> Published {
    let mut p = Published::default();
    for s in buf.chunks_exact(slot_words) {
        if s[0] != id || s[1] != inst {
            continue;
        }
        let field = |f: usize| {
            let at = field_at(l, f);
            let w = &s[at..at + l];
            (s[at + l] == check(id, inst, f, w)).then(|| w.to_vec())
        };
        p.contrib = field(0);
        p.partial = field(1);
        p.result = field(2);
    }
    p
}

fn store_field(slot: usize, id: u64, inst: u64, f: usize, words: &[u64]) {
    news::with(|rt| {
        let base = rt.win.ft_slot(slot);
        let at = base + field_at(words.len(), f);
        for (i, w) in words.iter().enumerate() {
            rt.win.store(at + i, *w);
        }
        // Data before its check word, both before anyone is told (a wake, or the
        // reader's next read).
        rt.win.sync();
        rt.win.store(at + words.len(), check(id, inst, f, words));
        rt.win.sync();
    });
}

/// Takes a slot of the instance's probe window for (id, inst): a free one, else
/// one whose instance every live member has finished with. Waits (advancing
/// everything) in the rare case that none is.
fn claim(id: u64, inst: u64, l: usize) -> usize {
    let start = probe_start(id, inst);
    let mut idle = crate::engine::revoke::Idle::new();
    loop {
        let found = {
            let mut slots = SLOTS.lock();
            if slots.is_empty() {
                *slots = vec![SlotUse::Free; window::FT_SLOTS];
            }
            (start..start + window::FT_PROBE).find(|j| matches!(slots[*j], SlotUse::Free))
        };
        let found = found.or_else(|| {
            (start..start + window::FT_PROBE).find(|j| {
                let held = SLOTS.lock()[*j].clone();
                match held {
                    SlotUse::Done { id, inst, members, n } => retired(id, inst, &members, n),
                    _ => false,
                }
            })
        });
        if let Some(j) = found {
            SLOTS.lock()[j] = SlotUse::Busy;
            news::with(|rt| {
                let base = rt.win.ft_slot(j);
                for f in 0..3 {
                    rt.win.store(base + field_at(l, f) + l, 0);
                }
                rt.win.sync();
                rt.win.store(base, id);
                rt.win.store(base + 1, inst);
                rt.win.sync();
            });
            return j;
        }
        service::poll();
        idle.pause();
    }
}

/// Every live member of instance (id, inst) has its result (or has reused its
/// slot, which it does only after checking the same): nobody reads this
/// process's slot for it any more. Blocking reads; only on a slot collision.
fn retired(id: u64, inst: u64, members: &[u32], n: usize) -> bool {
    let me = news::world_rank() as u32;
    let l = agree::contribution_len(n as u32);
    let start = probe_start(id, inst);
    for &w in members.iter().filter(|w| **w != me && !news::is_dead(**w)) {
        let got = news::with(|rt| {
            let sw = rt.win.ft_slot_words();
            let mut buf = vec![0u64; sw * window::FT_PROBE];
            rt.win.get(w as usize, rt.win.ft_slot(start), &mut buf);
            (buf, sw)
        });
        let Some((buf, sw)) = got else { return true };
        let held = buf.chunks_exact(sw).any(|s| s[0] == id && s[1] == inst);
        if held && parse(&buf, sw, id, inst, l).result.is_none() {
            return false;
        }
    }
    true
}

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
fn start(cr: &CommRef, what: What, flag: c_int, greq: mpi::MPI_Request) -> u64 {
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
        agr: Agreement::new(n as u32, rank as u32, fanout(), own),
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
    for i in order {
        match ops[i].state {
            State::Running => break,
            State::Decided(_) => construct(&mut ops[i]),
            State::Done(_) => {}
        }
        if !matches!(ops[i].state, State::Done(_)) {
            break;
        }
    }
    for op in ops.iter_mut() {
        if matches!(op.state, State::Done(_)) && op.greq != transport::request_null() && !op.zombie {
            unsafe { mpi::MPI_Grequest_complete(op.greq) };
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
    let sw = news::with(|rt| rt.win.ft_slot_words()).unwrap_or(0);
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
        let final_ = news::is_dead(w as u32);
        let read = news::with(|rt| {
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
        SLOTS.lock()[op.slot] = SlotUse::Done { id: op.id, inst: op.inst, members: op.members.clone(), n: op.members.len() };
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
                    // SAFETY: the communicator this function just made.
                    unsafe { mpi::MPI_Comm_free(&mut real) };
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
                    crate::engine::zombie::adopt_shrunk(real, id, &live, &op.members, op.rank);
                } else if let What::Shrink { newcomm } = op.what {
                    let parent = comm::lookup(op.comm);
                    let h = match parent {
                        Some(p) => comm::adopt(real, &p, id),
                        None => comm::adopt_orphan(real, id),
                    };
                    unsafe { *newcomm = h };
                }
                0
            }
            Err(rc) => rc,
        }
    };
    finish(op, code);
}

fn create_group(op: &Op, live: &[Rank]) -> Result<mpi::MPI_Comm, c_int> {
    let ranks: Vec<c_int> = live.iter().map(|r| *r as c_int).collect();
    let mut all = transport::group_empty();
    let mut g = transport::group_empty();
    let mut real = transport::comm_null();
    let rc = unsafe {
        mpi::MPI_Comm_group(op.real, &mut all);
        mpi::MPI_Group_incl(all, ranks.len() as c_int, ranks.as_ptr(), &mut g);
        let rc = mpi::MPI_Comm_create_group(op.real, g, SHRINK_TAG, &mut real);
        mpi::MPI_Group_free(&mut g);
        mpi::MPI_Group_free(&mut all);
        rc
    };
    if rc != 0 {
        return Err(rc);
    }
    Ok(real)
}

/// Runs the operation `key` to its end (blocking agree and shrink): every MPI
/// thing this process has to do goes on meanwhile (engine::service).
fn wait(key: u64) -> c_int {
    let mut idle = crate::engine::revoke::Idle::new();
    loop {
        if let Some(code) = take_if_done(key) {
            return code;
        }
        let _ = service::run();
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
/// (engine::complete, when the generalized request completed).
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

fn refuse_inter(cr: &CommRef) -> Outcome {
    if cr.foreign {
        // MPIFT has no news from another job's processes (docs/ARCHITECTURE.md,
        // "Not simulated"); only the blocking agree has a stand-in (engine::inter::agree_foreign).
        return Err(Failure::on(cr.handle, transport::err::comm()));
    }
    Ok(())
}

fn result(cr: &CommRef, code: c_int) -> Outcome {
    if code == 0 {
        Ok(())
    } else {
        Err(Failure::on(cr.handle, code))
    }
}

/// `MPIX_Comm_agree`: bitwise AND of `*flag` over the live members; allowed on
/// revoked communicators. `MPI_ERR_PROC_FAILED` at every survivor unless every
/// failure was acknowledged by every survivor; `*flag` is valid either way.
pub fn agree(c: Sim_FT_MPI_Comm, flag: *mut c_int) -> Outcome {
    let cr = handles::comm_arg(c)?;
    handles::check_out_ptr(flag, &cr)?;
    if cr.foreign {
        return inter::agree_foreign(&cr, flag);
    }
    refuse_inter(&cr)?;
    let key = start(&cr, What::Agree { flag }, unsafe { *flag }, transport::request_null());
    let _in = InAgree::mark(cr.id);
    result(&cr, wait(key))
}

/// While a process waits in `MPIX_Comm_agree` on a communicator, its window says
/// which ([`window::IN_AGREE`]): it polls there, and cannot leave before every
/// live member took part, so a fellow member may count on it to join a doomed
/// blocking collective it skipped (engine::fillin).
struct InAgree(u64);

impl InAgree {
    fn mark(id: u64) -> InAgree {
        let before = news::with(|rt| {
            let b = rt.win.load(window::IN_AGREE);
            rt.win.store(window::IN_AGREE, id);
            rt.win.sync();
            b
        });
        InAgree(before.unwrap_or(0))
    }
}

impl Drop for InAgree {
    fn drop(&mut self) {
        news::with(|rt| rt.win.store(window::IN_AGREE, self.0));
    }
}

/// `MPIX_Comm_iagree`: starts the agreement and returns at once; `*flag` is set
/// when the request completes, with the error `MPIX_Comm_agree` would return.
pub fn iagree(c: Sim_FT_MPI_Comm, flag: *mut c_int, req: *mut Sim_FT_MPI_Request) -> Outcome {
    let cr = handles::comm_arg(c)?;
    handles::check_out_ptr(flag, &cr)?;
    handles::check_out_ptr(req, &cr)?;
    refuse_inter(&cr)?;
    let greq = new_greq(&cr)?;
    let h = request::adopt_ft(greq, &cr);
    let key = start(&cr, What::Agree { flag }, unsafe { *flag }, greq);
    request::set_ft_key(h, key);
    unsafe { *req = h };
    Ok(())
}

/// `MPIX_Comm_shrink`: the live members, in the old rank order, the same at every
/// survivor; works on revoked communicators; the result is not revoked.
pub fn shrink(c: Sim_FT_MPI_Comm, newcomm: *mut Sim_FT_MPI_Comm) -> Outcome {
    let cr = handles::comm_arg(c)?;
    handles::check_out_ptr(newcomm, &cr)?;
    refuse_inter(&cr)?;
    let key = start(&cr, What::Shrink { newcomm }, !0, transport::request_null());
    result(&cr, wait(key))
}

/// `MPIX_Comm_ishrink`: starts the shrink and returns at once; `*newcomm` is set
/// when the request completes (see the module comment for its last step).
pub fn ishrink(c: Sim_FT_MPI_Comm, newcomm: *mut Sim_FT_MPI_Comm, req: *mut Sim_FT_MPI_Request) -> Outcome {
    let cr = handles::comm_arg(c)?;
    handles::check_out_ptr(newcomm, &cr)?;
    handles::check_out_ptr(req, &cr)?;
    refuse_inter(&cr)?;
    let greq = new_greq(&cr)?;
    let h = request::adopt_ft(greq, &cr);
    let key = start(&cr, What::Shrink { newcomm }, !0, greq);
    request::set_ft_key(h, key);
    unsafe { *req = h };
    Ok(())
}

// ---- the generalized request behind iagree/ishrink ----

unsafe extern "C" fn greq_query(_extra: *mut c_void, status: *mut mpi::MPI_Status) -> c_int {
    // A collective's status: empty (MPI-3.1 §5.12: only MPI_ERROR is meaningful).
    unsafe {
        mpi::MPI_Status_set_elements(status, transport::dt_byte(), 0);
        mpi::MPI_Status_set_cancelled(status, 0);
        (*status).MPI_SOURCE = transport::any_source();
        (*status).MPI_TAG = transport::any_tag();
    }
    0
}
unsafe extern "C" fn greq_free(_extra: *mut c_void) -> c_int {
    0
}
unsafe extern "C" fn greq_cancel(_extra: *mut c_void, _complete: c_int) -> c_int {
    // An agreement cannot be cancelled (nor can any collective, MPI-3.1 §5.12).
    0
}

fn new_greq(cr: &CommRef) -> Result<mpi::MPI_Request, Failure> {
    let mut r = transport::request_null();
    let rc = unsafe { mpi::MPI_Grequest_start(Some(greq_query), Some(greq_free), Some(greq_cancel), std::ptr::null_mut(), &mut r) };
    if rc != 0 {
        return Err(Failure::on(cr.handle, rc));
    }
    Ok(r)
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
            unsafe { mpi::MPI_Grequest_complete(op.greq) };
            op.greq = transport::request_null();
        }
        op.zombie = true;
    }
    ops.retain(|o| matches!(o.what, What::Shrink { .. }) && !matches!(o.state, State::Done(_)));
    RUNNING.store(ops.len(), Ordering::Release);
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
    SLOTS.lock().clear();
    RUNNING.store(0, Ordering::Release);
}
