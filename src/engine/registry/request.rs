//! MPIFT's requests and the completion calls (MPI-3.1 §3.7).
//!
//! A request handle encodes a slot of a table (generation in the high 32 bits,
//! slot + 1 in the low ones), so a stale or garbage handle is detected, and no
//! allocation happens per request. Every completion call mirrors the real MPI:
//! when the real request becomes `MPI_REQUEST_NULL` (a completed non-persistent
//! request) the MPIFT handle is released and set to `MPI_REQUEST_NULL`; a
//! persistent request stays valid, as in MPI.

use crate::engine::base::errors::{Failure, Outcome};
use crate::engine::base::handles::{CommRef, Sim_FT_MPI_Comm, Sim_FT_MPI_Request};
use crate::engine::registry::req_state::Kind;
use crate::engine::base::handles::Real;
use crate::transport::{self, err, MPI_Request};
use std::os::raw::c_int;
use crate::transport::serial::Serial;

use crate::engine::registry::req_state::{Brief, ReqState};
use crate::engine::registry::req_state::{completion_over, completion_starts};

struct Slot {
    generation: u32,
    state: Option<ReqState>,
}

struct Table {
    slots: Vec<Slot>,
    free: Vec<usize>,
}

static TABLE: Serial<Table> = Serial::new(Table { slots: Vec::new(), free: Vec::new() });

/// Buffers real requests read from, by id (see [`ReqState::keep`]). Freed when
/// the request completes ([`settle`]), moved along when it becomes an orphan
/// (engine::complete::complete), and leaked when nobody can know when MPI is done with it
/// (`MPI_Request_free` of an active send, a dying rank's requests, finalize).
static KEPT: Serial<Vec<(u64, Vec<u8>)>> = Serial::new(Vec::new());
static KEPT_NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// Keeps `copy` alive for the real request behind `h` (no-op for None, inlined:
/// almost every send has no copy).
#[inline]
pub fn keep(h: Sim_FT_MPI_Request, copy: Option<Vec<u8>>) {
    if let Some(copy) = copy {
        keep_copy(h, copy);
    }
}

fn keep_copy(h: Sim_FT_MPI_Request, copy: Vec<u8>) {
    let id = keep_buffer(copy);
    let (index, generation) = decode(h);
    let mut t = TABLE.lock();
    match t.slots.get_mut(index) {
        Some(Slot { generation: g, state: Some(st) }) if *g == generation => st.keep = id,
        // No MPIFT request (the real one was null): nothing reads the copy.
        _ => drop(take_kept(id)),
    }
}

/// Stores a buffer a real request reads from; returns its id.
pub fn keep_buffer(copy: Vec<u8>) -> u64 {
    let id = KEPT_NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    KEPT.lock().push((id, copy));
    id
}

/// Takes a kept buffer out (to free it, or to hand it on); None if already gone.
/// (Inlined: almost every request has none, id 0.)
#[inline]
pub fn take_kept(id: u64) -> Option<Vec<u8>> {
    if id == 0 {
        return None;
    }
    take_kept_slow(id)
}

fn take_kept_slow(id: u64) -> Option<Vec<u8>> {
    let mut k = KEPT.lock();
    let i = k.iter().position(|(x, _)| *x == id)?;
    Some(k.swap_remove(i).1)
}

fn encode(index: usize, generation: u32) -> Sim_FT_MPI_Request {
    (((generation as usize) << 32) | (index + 1)) as Sim_FT_MPI_Request
}

fn decode(h: Sim_FT_MPI_Request) -> (usize, u32) {
    let v = h as usize;
    ((v & 0xffff_ffff).wrapping_sub(1), (v >> 32) as u32)
}

/// Wraps a request the real MPI just returned.
pub fn adopt(real: MPI_Request, kind: Kind, comm: &CommRef) -> Sim_FT_MPI_Request {
    adopt_p2p(real, kind, comm, -1, false)
}

/// Wraps a non-blocking collective's request; `buffers`: it has any (see
/// [`ReqState::buffers`]).
pub fn adopt_coll(real: MPI_Request, comm: &CommRef, buffers: bool) -> Sim_FT_MPI_Request {
    let seq = crate::engine::registry::comm::read(comm.handle, |s| s.seq).unwrap_or(0);
    adopt_state(real, ReqState { buffers, seq, ..ReqState::started(comm.handle, Kind::CollStart, -1, false) })
}

/// Wraps a started send's request; `nth`: what [`crate::engine::registry::comm::count_send`]
/// returned for it.
pub fn adopt_send(real: MPI_Request, comm: &CommRef, dest: c_int, nth: u32, eager: bool) -> Sim_FT_MPI_Request {
    adopt_state(real, ReqState { nth, eager, ..ReqState::started(comm.handle, Kind::P2pStart, dest, false) })
}

/// Wraps a point-to-point request (peer: destination or source).
pub fn adopt_p2p(real: MPI_Request, kind: Kind, comm: &CommRef, peer: c_int, recv: bool) -> Sim_FT_MPI_Request {
    adopt_state(real, ReqState::started(comm.handle, kind, peer, recv))
}

/// Wraps the request of a start made on the calm lane (engine::entry::lane): `st` as
/// [`ReqState::started`] made it. Inlined, so the state goes from registers
/// straight into its slot: passed by reference, it was built on the stack with
/// narrow stores right after the host's start and read back with wide loads,
/// which cannot be forwarded from the store buffer and wait until the host's
/// stores (to the shared-memory queues the other rank reads) have drained. That
/// stall cost more time than all the rest of a calm start (perf, bench/calls.c
/// waitall and halo on MPICH).
#[inline(always)]
pub(crate) fn adopt_started(real: MPI_Request, st: ReqState) -> Sim_FT_MPI_Request {
    adopt_state(real, st)
}

#[inline(always)]
fn adopt_state(real: MPI_Request, st: ReqState) -> Sim_FT_MPI_Request {
    if real == transport::request_null() {
        return std::ptr::null_mut();
    }
    let st = ReqState { real: Real(real), ..st };
    let mut t = TABLE.lock();
    let index = match t.free.pop() {
        Some(i) => i,
        None => {
            t.slots.push(Slot { generation: 0, state: None });
            t.slots.len() - 1
        }
    };
    let slot = &mut t.slots[index];
    slot.state = Some(st);
    encode(index, slot.generation)
}

/// Updates the state behind a live handle (no-op for a stale one).
pub(crate) fn update(h: Sim_FT_MPI_Request, f: impl FnOnce(&mut ReqState)) {
    let (index, generation) = decode(h);
    let mut t = TABLE.lock();
    if let Some(Slot { generation: g, state: Some(st) }) = t.slots.get_mut(index) {
        if *g == generation {
            f(st);
        }
    }
}

/// Wraps the generalized request of an iagree/ishrink (see [`ReqState::ft`]).
pub fn adopt_ft(greq: MPI_Request, comm: &CommRef) -> Sim_FT_MPI_Request {
    adopt(greq, Kind::Ft, comm)
}

/// Ties the iagree/ishrink request `h` to its operation.
pub fn set_ft_key(h: Sim_FT_MPI_Request, key: u64) {
    update(h, |st| st.ft = key);
}

/// A `MPI_*_init` call made `h`: persistent, inactive until `MPI_Start`.
pub fn make_persistent(h: Sim_FT_MPI_Request) {
    update(h, |st| {
        st.persistent = true;
        st.active = false;
    });
}

/// The persistent request whose real request is `real` was given up on: see
/// [`ReqState::draining`].
pub(crate) fn set_draining(real: MPI_Request) {
    if let Some(h) = find_by_real(real) {
        update(h, |st| st.draining = true);
    }
}

/// The checked lookup behind every request argument.
pub fn lookup(h: Sim_FT_MPI_Request) -> Result<ReqState, Failure> {
    let (index, generation) = decode(h);
    let t = TABLE.lock();
    match t.slots.get(index) {
        Some(Slot { generation: g, state: Some(st) }) if *g == generation => Ok(*st),
        _ => Err(Failure::on_world(err::request())),
    }
}

/// After a real completion call: release the handle if the real request is gone,
/// else remember its (possibly changed) real value. Returns the user's new handle.
pub(crate) fn settle(h: Sim_FT_MPI_Request, real: MPI_Request) -> Sim_FT_MPI_Request {
    completion_over();
    let (index, _) = decode(h);
    let mut t = TABLE.lock();
    if real == transport::request_null() {
        let slot = &mut t.slots[index];
        // Done (or handed to the orphans, which took the buffer): free the copy.
        let comm = slot.state.take().map(|st| {
            drop(take_kept(st.keep));
            st.comm.0
        });
        slot.generation = slot.generation.wrapping_add(1);
        t.free.push(index);
        drop(t);
        if let Some(c) = comm {
            crate::engine::registry::comm::request_gone(c);
        }
        std::ptr::null_mut()
    } else {
        if let Some(st) = t.slots[index].state.as_mut() {
            st.real = Real(real);
        }
        h
    }
}

/// [`settle_after`] for each `(i, real, completed)` of the program's array
/// `reqs`, under one lock of the table (the completion calls on arrays).
pub(crate) fn settle_many(reqs: *mut Sim_FT_MPI_Request, items: impl Iterator<Item = (usize, MPI_Request, bool)>) {
    completion_over();
    let mut gone = Vec::new();
    let watch = crate::engine::registry::comm::ever_free_pending();
    let mut t = TABLE.lock();
    for (i, real, completed) in items {
        // SAFETY: the caller names indices of the program's array, which MPI
        // requires valid for reading and writing.
        let h = unsafe { *reqs.add(i) };
        let (index, _) = decode(h);
        let slot = t.slots.get_mut(index);
        if real != transport::request_null() {
            if let Some(st) = slot.and_then(|s| s.state.as_mut()) {
                st.real = Real(real);
                st.active &= !completed;
            }
            continue;
        }
        // Done (or handed to the orphans, which took the buffer): free the copy.
        if let Some(slot) = slot.filter(|s| s.state.is_some()) {
            let st = slot.state.take().expect("checked above");
            slot.generation = slot.generation.wrapping_add(1);
            t.free.push(index);
            drop(take_kept(st.keep));
            if watch {
                gone.push(st.comm.0);
            }
        }
        // SAFETY: index i of the program's array, as read at the top of the loop.
        unsafe { *reqs.add(i) = std::ptr::null_mut() };
    }
    drop(t);
    for c in gone {
        crate::engine::registry::comm::request_gone(c);
    }
}

/// [`settle`] after a completion call; `completed`: the call completed the request
/// (rather than reporting it pending), so a persistent one, which stays
/// allocated, becomes inactive.
pub(crate) fn settle_after(h: Sim_FT_MPI_Request, real: MPI_Request, completed: bool) -> Sim_FT_MPI_Request {
    let h = settle(h, real);
    if completed && !h.is_null() {
        update(h, |st| st.active = false);
    }
    h
}

/// Is some outstanding request on communicator `h`?
pub(crate) fn on_comm(h: Sim_FT_MPI_Comm) -> bool {
    TABLE.lock().slots.iter().any(|s| matches!(s.state, Some(st) if st.comm.0 == h))
}

/// The communicator and real request of every outstanding point-to-point
/// receive the host still runs for the program (engine::revoke::revoke ends those on a
/// communicator revoked here).
pub(crate) fn receives_running() -> Vec<(Sim_FT_MPI_Comm, MPI_Request)> {
    let t = TABLE.lock();
    let running = |st: &ReqState| st.recv && st.kind == Kind::P2pStart && st.ft == 0 && st.active && !st.draining && !st.cancelled;
    t.slots.iter().filter_map(|s| s.state.filter(running).map(|st| (st.comm.0, st.real.0))).collect()
}

/// Hands every outstanding real request over (a rank that dies keeps
/// progressing them) and forgets the handles.
/// With each real request, for a non-blocking collective, its communicator and its
/// number there (engine::dead::zombie waits for those another member may need), and
/// whether it is a point-to-point one (only those may be cancelled).
pub(crate) fn take_all() -> Vec<(MPI_Request, Option<(Sim_FT_MPI_Comm, u64)>, bool)> {
    let mut t = TABLE.lock();
    let coll = |st: &ReqState| (st.kind == Kind::CollStart && st.seq > 0).then_some((st.comm.0, st.seq));
    let v = t.slots.iter().filter_map(|s| s.state.map(|st| (st.real.0, coll(&st), st.kind == Kind::P2pStart))).collect();
    t.slots.clear();
    t.free.clear();
    v
}

/// Forgets every request (called by `MPI_Finalize`).
pub(crate) fn clear() {
    let mut t = TABLE.lock();
    t.slots.clear();
    t.free.clear();
}

/// Number of live MPIFT requests.
pub fn count() -> usize {
    TABLE.lock().slots.iter().filter(|s| s.state.is_some()).count()
}

pub(crate) fn arg_error() -> Failure {
    Failure::on_world(err::arg())
}

pub(crate) fn fail_on(st: Option<&ReqState>, rc: c_int) -> Outcome {
    fail_on_comm(st.map(|s| s.comm.0), rc)
}

/// [`fail_on`] a request of communicator `comm` (None: a null request).
pub(crate) fn fail_on_comm(comm: Option<Sim_FT_MPI_Comm>, rc: c_int) -> Outcome {
    Failure::check(rc, comm.unwrap_or(std::ptr::null_mut()))
}

/// A request argument of a completion call: like [`one`], but an inactive
/// persistent request has no state (it completes at once with an empty status,
/// as `MPI_REQUEST_NULL` does, and stays allocated).
pub(crate) fn one_active(request: *mut Sim_FT_MPI_Request) -> Result<(Option<ReqState>, MPI_Request), Failure> {
    completion_starts();
    let (st, real) = one(request)?;
    Ok((st.filter(|s| s.active), real))
}

/// [`one_active`] for each of the `n` handles of the program's array `reqs`
/// (non-null if n > 0), under one lock of the table: pushes each one's state
/// (None: null or inactive) and real request.
pub(crate) fn active_many(
    reqs: *const Sim_FT_MPI_Request,
    n: usize,
    states: &mut Vec<Option<ReqState>>,
    reals: &mut Vec<MPI_Request>,
) -> Result<(), Failure> {
    completion_starts();
    let t = TABLE.lock();
    for i in 0..n {
        // SAFETY: i < n, the length of the program's array, which MPI requires
        // valid for reading.
        let h = unsafe { *reqs.add(i) };
        if h.is_null() {
            states.push(None);
            reals.push(transport::request_null());
            continue;
        }
        let (index, generation) = decode(h);
        match t.slots.get(index) {
            Some(Slot { generation: g, state: Some(st) }) if *g == generation => {
                states.push(Some(*st).filter(|s| s.active));
                reals.push(st.real.0);
            }
            _ => {
                drop(t);
                return Err(Failure::on_world(err::request()));
            }
        }
    }
    Ok(())
}

/// The calm path's read of the program's array `reqs` (engine::complete::batch_fast), under
/// one lock: for each of `briefs.len()` handles its [`Brief`] (None: null or an
/// inactive persistent request, whose real request is then `MPI_REQUEST_NULL`)
/// and real request. False, with nothing to undo, if a handle is not valid or
/// needs the general path: an iagree/ishrink, or a request to `MPI_PROC_NULL`.
pub(crate) fn plain_many(reqs: *const Sim_FT_MPI_Request, briefs: &mut [Option<Brief>], reals: &mut [MPI_Request]) -> bool {
    completion_starts();
    let t = TABLE.lock();
    for i in 0..briefs.len() {
        // SAFETY: i < briefs.len(), the length of the program's array (the
        // caller's count), which MPI requires valid for reading.
        let h = unsafe { *reqs.add(i) };
        let (index, generation) = decode(h);
        let st = match t.slots.get(index) {
            _ if h.is_null() => None,
            Some(Slot { generation: g, state: Some(st) }) if *g == generation => Some(st).filter(|s| s.active),
            _ => return false,
        };
        if st.is_some_and(|s| !crate::engine::registry::req_state::host_completes(s)) {
            return false;
        }
        reals[i] = st.map_or(transport::request_null(), |s| s.real.0);
        briefs[i] = st.map(ReqState::brief);
    }
    true
}

/// The calm lane's read of one request handle (engine::entry::lane): its state if `h`
/// is a valid handle of an active, non-persistent request the host completes by
/// itself; None for anything else (null, stale, inactive, persistent, an
/// iagree/ishrink, a request to `MPI_PROC_NULL`), which the general path handles.
#[inline]
pub(crate) fn calm_state(h: Sim_FT_MPI_Request) -> Option<ReqState> {
    completion_starts();
    let (index, generation) = decode(h);
    let t = TABLE.lock();
    match t.slots.get(index) {
        Some(Slot { generation: g, state: Some(st) })
            if *g == generation && st.active && !st.persistent && crate::engine::registry::req_state::host_completes(st) =>
        {
            Some(*st)
        }
        _ => None,
    }
}

/// One request argument: (state, real handle); a null handle is `MPI_REQUEST_NULL`.
pub(crate) fn one(request: *mut Sim_FT_MPI_Request) -> Result<(Option<ReqState>, MPI_Request), Failure> {
    if request.is_null() {
        return Err(arg_error());
    }
    // SAFETY: checked non-null above: the program's request argument, which MPI
    // requires valid for reading.
    let h = unsafe { *request };
    if h.is_null() {
        return Ok((None, transport::request_null()));
    }
    let st = lookup(h)?;
    Ok((Some(st), st.real.0))
}


/// Wraps a request that belongs to no communicator (files, windows, generalized
/// requests): completion calls treat it like the real MPI does, with no failure
/// verdicts; its errors are reported on `MPI_COMM_WORLD` (MPI-3.1 §8.3).
pub fn adopt_plain(real: MPI_Request) -> Sim_FT_MPI_Request {
    let none = CommRef { handle: std::ptr::null_mut(), real: transport::comm_null(), revoked: false, id: 0, rank: -1, size: 0, inter: false, foreign: false };
    adopt(real, Kind::Local, &none)
}

/// The MPIFT handle of a live real request, if MPIFT wrapped it.
pub fn find_by_real(real: MPI_Request) -> Option<Sim_FT_MPI_Request> {
    let t = TABLE.lock();
    t.slots.iter().enumerate().find_map(|(i, s)| match s.state {
        Some(st) if st.real.0 == real => Some(encode(i, s.generation)),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::base::handles::{self, CommRef};

    fn fake_real() -> MPI_Request {
        // Any value other than MPI_REQUEST_NULL; never handed to MPI here.
        // SAFETY: a request handle is an int (MPICH) or a pointer (Open MPI):
        // all zeros is a valid value of either, never dereferenced here.
        let mut r = unsafe { std::mem::zeroed::<MPI_Request>() };
        if r == transport::request_null() {
            // SAFETY: both handle types are at most pointer-sized plain values, so
            // reading one from the bytes of a usize gives a valid (if meaningless)
            // handle, only compared here, never given to MPI.
            r = unsafe { std::mem::transmute_copy(&1usize) };
        }
        r
    }

    #[test]
    fn stale_and_garbage_handles_are_rejected() {
        let c = CommRef { handle: handles::world_handle(), real: transport::comm_null(), revoked: false, id: 0, rank: 0, size: 1, inter: false, foreign: false };
        let h = adopt(fake_real(), Kind::P2pStart, &c);
        assert!(!h.is_null());
        assert!(lookup(h).is_ok());
        assert!(settle(h, transport::request_null()).is_null());
        assert!(lookup(h).is_err(), "a completed request's handle must be stale");
        let h2 = adopt(fake_real(), Kind::P2pStart, &c);
        assert_ne!(h, h2, "a reused slot gets a new generation");
        assert!(lookup(h).is_err() && lookup(h2).is_ok());
        assert!(lookup(0xdead_beef_usize as Sim_FT_MPI_Request).is_err());
        assert!(settle(h2, transport::request_null()).is_null());
    }
}
