//! MPIFT's communicators: a registry from handle (anchor address) to state.
//!
//! One MPIFT communicator wraps exactly one real communicator; failure-free, the
//! layer creates no communicator of its own (GUIDE principle 5 allows one more).

use crate::engine::errors::{Failure, Outcome};
use crate::engine::handles::{self, CommRef, Sim_FT_Comm_struct, Sim_FT_MPI_Comm};
use crate::engine::Real;
use crate::protocol::failures::Failures;
use crate::transport::{self, err, mpi};
use mpi_sys::{MPI_Comm, MPI_Errhandler};
use crate::transport::serial::Serial;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// Nothing has gone wrong in this process yet: no failure and no revoke known on
/// any communicator. While this holds, the failure checks around every call are
/// answered without looking a communicator up (the failure-free fast path,
/// bench/README.md); the first news, revoke or failure learned clears it for good.
static TROUBLE: AtomicBool = AtomicBool::new(false);

/// No failure and no revoke known here (see `TROUBLE`).
#[inline]
pub fn calm() -> bool {
    !TROUBLE.load(Ordering::Acquire)
}

/// Called before a failure or revoke is recorded on any communicator.
pub fn troubled() {
    TROUBLE.store(true, Ordering::SeqCst);
}

/// Hashes a handle (an anchor's address) with one multiply: the registry's keys
/// are distinct heap addresses, so SipHash's flood resistance buys nothing and it
/// cost about 20 ns per lookup, several lookups per MPI call.
#[derive(Default)]
pub struct AddrHasher(u64);

impl Hasher for AddrHasher {
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 ^ *b as u64).wrapping_mul(0x100_0000_01b3);
        }
    }
    fn write_usize(&mut self, x: usize) {
        // Spread the address over the whole word: hashbrown takes the bucket from
        // the low bits and a tag from the high ones; heap addresses' low bits are
        // constant, so fold the high half of the product down.
        let h = (x as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        self.0 = h ^ (h >> 32);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

type Registry = HashMap<usize, CommState, BuildHasherDefault<AddrHasher>>;

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
    /// instance number of the next, the same at every member (engine::ft).
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
    /// Collectives joined here with dummy data for the program (engine::fillin)
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
    /// a member's place in the agreement (engine::ft). For an intracommunicator,
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

/// The id of the `k`-th communicator created from the one with id `parent`.
pub fn child_id(parent: u64, k: u64) -> u64 {
    // splitmix64 of the pair: distinct ids for distinct (parent, k) in practice.
    let mut z = parent.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ k.wrapping_add(0xD1B5_4A32_D192_ED03);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (z ^ (z >> 31)) | 1
}

/// World rank recorded for a member of another job's `MPI_COMM_WORLD`.
pub const FOREIGN: u32 = u32::MAX;

pub const WORLD_ID: u64 = 2;
pub const SELF_ID: u64 = 4;

/// World ranks of the members of group `g` ([`FOREIGN`] for one outside the world).
fn world_ranks(g: mpi::MPI_Group) -> Vec<u32> {
    let mut size = 0;
    let mut wg = unsafe { std::mem::zeroed() };
    // SAFETY: valid groups; `out` has room for `size` ranks.
    unsafe {
        mpi::MPI_Group_size(g, &mut size);
        mpi::MPI_Comm_group(transport::comm_world(), &mut wg);
    }
    let ranks: Vec<i32> = (0..size).collect();
    let mut out = vec![0i32; size as usize];
    // SAFETY: as above; `wg` is this function's own group.
    unsafe {
        mpi::MPI_Group_translate_ranks(g, size, ranks.as_ptr(), wg, out.as_mut_ptr());
        mpi::MPI_Group_free(&mut wg);
    }
    out.into_iter().map(|w| if w < 0 { FOREIGN } else { w as u32 }).collect()
}

/// Rank and world ranks of the members of a real communicator (its local group),
/// and of its remote group if it is an intercommunicator.
fn membership(real: MPI_Comm, inter: bool) -> (i32, Vec<u32>, Vec<u32>) {
    let mut rank = 0;
    let mut g = unsafe { std::mem::zeroed() };
    // SAFETY: a valid communicator; the group is freed below.
    unsafe {
        mpi::MPI_Comm_rank(real, &mut rank);
        mpi::MPI_Comm_group(real, &mut g);
    }
    let members = world_ranks(g);
    // SAFETY: this function's own group.
    unsafe { mpi::MPI_Group_free(&mut g) };
    let mut remote = Vec::new();
    if inter {
        // SAFETY: as above, for the remote group of an intercommunicator.
        unsafe { mpi::MPI_Comm_remote_group(real, &mut g) };
        remote = world_ranks(g);
        // SAFETY: this function's own group.
        unsafe { mpi::MPI_Group_free(&mut g) };
    }
    (rank, members, remote)
}

fn new_state(real: MPI_Comm, errhandler: Real<MPI_Errhandler>, id: u64, predefined: bool) -> CommState {
    let mut inter: std::os::raw::c_int = 0;
    // SAFETY: a valid communicator, an int out.
    unsafe { mpi::MPI_Comm_test_inter(real, &mut inter) };
    let (rank, members, remote) = membership(real, inter != 0);
    let peers = if inter != 0 { remote.len() } else { members.len() };
    // A member already known dead (a rank that died during an ishrink it had
    // contributed to alive, engine::ft) is a known failure of the new communicator.
    let mut failures = Failures::new();
    for (r, w) in members.iter().enumerate() {
        if crate::engine::news::is_dead(*w) {
            failures.learn(r as u32);
        }
    }
    let mut remote_failed = Failures::new();
    for (r, w) in remote.iter().enumerate() {
        if crate::engine::news::is_dead(*w) {
            remote_failed.learn(r as u32);
        }
    }
    // A revoke of this very communicator that arrived while this process was still
    // creating it (the revoker had finished its MPI_Comm_dup and revoked at once):
    // the news named an id no communicator here had yet. It applies now, else this
    // member enters the communicator's collectives as if nothing had happened and
    // the others wait for it (issue 18, defect 5).
    let revoke = if calm() { None } else { crate::engine::news::revoked_id(id) };
    if revoke.is_some() {
        crate::engine::revoke::note_owed();
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

/// Registry keyed by handle address; `None` outside `MPI_Init`..`MPI_Finalize`.
static COMMS: Serial<Option<Registry>> = Serial::new(None);

fn key(h: Sim_FT_MPI_Comm) -> usize {
    h as usize
}

/// Sets up `MPI_COMM_WORLD` and `MPI_COMM_SELF` (called by `MPI_Init`). The
/// program's world is the real one, or with spare processes (calls::spares) the
/// part of it that is not spare.
pub(crate) fn install_predefined(world: MPI_Comm, world_id: u64) {
    let mut map = Registry::default();
    for (h, real, id) in [
        (handles::world_handle(), world, world_id),
        (handles::self_handle(), transport::comm_self(), SELF_ID),
    ] {
        unsafe { mpi::MPI_Comm_set_errhandler(real, transport::errors_return()) };
        map.insert(key(h), new_state(real, Real(transport::errors_are_fatal()), id, true));
    }
    *COMMS.lock() = Some(map);
}

/// Points `MPI_COMM_WORLD` at another real communicator (a spare process taking
/// up the world of the spawn it serves, calls::spares). The caller frees the old
/// real one if it owns it.
pub(crate) fn replace_world(world: MPI_Comm, id: u64) {
    // SAFETY: a valid communicator of this process.
    unsafe { mpi::MPI_Comm_set_errhandler(world, transport::errors_return()) };
    let st = new_state(world, Real(transport::errors_are_fatal()), id, true);
    if let Some(map) = COMMS.lock().as_mut() {
        map.insert(key(handles::world_handle()), st);
    }
}

/// Forgets every communicator (called by `MPI_Finalize`).
pub(crate) fn clear() {
    if let Some(map) = COMMS.lock().take() {
        for (k, st) in map {
            if !st.predefined {
                drop(unsafe { Box::from_raw(k as *mut Sim_FT_Comm_struct) });
            }
        }
    }
}

/// The checked lookup behind every communicator argument.
pub fn lookup(h: Sim_FT_MPI_Comm) -> Option<CommRef> {
    let guard = COMMS.lock();
    let st = guard.as_ref()?.get(&key(h))?;
    Some(CommRef {
        handle: h,
        real: st.real.0,
        revoked: st.revoked,
        id: st.id,
        rank: st.rank,
        size: st.members.len() as i32,
        inter: st.inter,
        foreign: st.foreign,
    })
}

/// Reads a communicator's state in place (None: unknown handle).
pub fn read<R>(h: Sim_FT_MPI_Comm, f: impl FnOnce(&CommState) -> R) -> Option<R> {
    COMMS.lock().as_ref()?.get(&key(h)).map(f)
}

/// Changes a communicator's state; false if the handle is unknown.
pub fn update(h: Sim_FT_MPI_Comm, f: impl FnOnce(&mut CommState)) -> bool {
    let mut guard = COMMS.lock();
    match guard.as_mut().and_then(|m| m.get_mut(&key(h))) {
        Some(st) => {
            f(st);
            true
        }
        None => false,
    }
}

/// Wraps a communicator the real MPI just created. It inherits the error handler
/// of `parent` (MPI-3.1 §8.3: new communicators inherit it). `MPI_COMM_NULL`
/// (e.g. split with `MPI_UNDEFINED`) stays null.
pub fn adopt(real: MPI_Comm, parent: &CommRef, id: u64) -> Sim_FT_MPI_Comm {
    if real == transport::comm_null() {
        return std::ptr::null_mut();
    }
    let errhandler = read(parent.handle, |s| s.errhandler).unwrap_or(Real(transport::errors_are_fatal()));
    let h = Box::into_raw(Box::new(Sim_FT_Comm_struct::anchor()));
    let st = new_state(real, errhandler, id, false);
    COMMS.lock().as_mut().expect("MPI is initialised").insert(key(h), st);
    h
}

/// Wraps a communicator made for a parent the program has freed meanwhile (an
/// ishrink completing after `MPI_Comm_free` of its communicator): the default
/// error handler.
pub fn adopt_orphan(real: MPI_Comm, id: u64) -> Sim_FT_MPI_Comm {
    let h = Box::into_raw(Box::new(Sim_FT_Comm_struct::anchor()));
    let st = new_state(real, Real(transport::errors_are_fatal()), id, false);
    COMMS.lock().as_mut().expect("MPI is initialised").insert(key(h), st);
    h
}

/// The instance number of the next agreement on `h` (engine::ft).
pub fn next_ft_instance(h: Sim_FT_MPI_Comm) -> u64 {
    let mut i = 0;
    update(h, |s| {
        s.ft_count += 1;
        i = s.ft_count;
    });
    i
}

/// `MPI_Comm_free`: frees the real communicator and the handle; sets it to null.
pub fn free(comm: *mut Sim_FT_MPI_Comm) -> Outcome {
    if comm.is_null() {
        return Err(Failure::on_world(err::arg()));
    }
    let h = unsafe { *comm };
    let c = handles::comm_arg(h)?;
    if read(h, |st| st.predefined).expect("looked up above") {
        return Err(Failure::on(h, err::comm()));
    }
    // Completion protocol (thesis §5.3.10): on a revoked communicator, first join
    // the collectives other members are still inside, and drop late messages, so
    // nothing of this communicator outlives it or reaches a later one.
    crate::engine::news::refresh();
    if read(h, |st| st.revoked).unwrap_or(false) {
        crate::engine::revoke::catch_up(&c)?;
        drain(c.real, &mut Vec::new());
    }
    // MPI marks a communicator with pending operations for deallocation; Open MPI
    // 4.1 instead frees it under a pending non-blocking collective and crashes in
    // its progress engine later. So the real free waits for the last request.
    if crate::engine::request::on_comm(h) || crate::engine::orphans::on(h) {
        update(h, |st| st.free_pending = true);
    } else {
        release(h).map_err(|rc| Failure::on(h, rc))?;
    }
    unsafe { *comm = std::ptr::null_mut() };
    Ok(())
}

/// Frees the real communicator of `h` and forgets `h`; the real error code if MPI
/// refuses.
fn release(h: Sim_FT_MPI_Comm) -> Result<(), std::os::raw::c_int> {
    let Some(mut real) = read(h, |st| st.real.0) else { return Ok(()) };
    let rc = unsafe { mpi::MPI_Comm_free(&mut real) };
    if rc != 0 {
        return Err(rc);
    }
    COMMS.lock().as_mut().unwrap().remove(&key(h));
    drop(unsafe { Box::from_raw(h) });
    Ok(())
}

/// Communicators the program freed whose last request ended during the current
/// MPI call: released when the call ends ([`release_deferred`]), after its error,
/// if any, went through the handler the program set on them (MPI-3.1 §8.3: a
/// request's error goes to its communicator's handler, also a freed one's).
static DEFERRED: Mutex<Vec<usize>> = Mutex::new(Vec::new());
static ANY_DEFERRED: AtomicBool = AtomicBool::new(false);

/// A request on `h` was released or an orphan of it ended: if the program freed
/// `h` meanwhile and no request or orphan is left on it, free it when this call ends.
pub(crate) fn request_gone(h: Sim_FT_MPI_Comm) {
    if read(h, |st| st.free_pending).unwrap_or(false) {
        if let Ok(mut d) = DEFERRED.lock() {
            d.push(h as usize);
            ANY_DEFERRED.store(true, Ordering::Release);
        }
    }
}

/// At the end of every MPI call (ffi::boundary): frees the communicators of
/// [`request_gone`] that still have no request or orphan. One load when none.
#[inline]
pub fn release_deferred() {
    if ANY_DEFERRED.load(Ordering::Acquire) {
        release_deferred_slow();
    }
}

fn release_deferred_slow() {
    let hs: Vec<usize> = match DEFERRED.lock() {
        Ok(mut d) => {
            ANY_DEFERRED.store(false, Ordering::Release);
            std::mem::take(&mut *d)
        }
        Err(_) => return,
    };
    for h in hs {
        let h = h as Sim_FT_MPI_Comm;
        if read(h, |st| st.free_pending).unwrap_or(false)
            && !crate::engine::request::on_comm(h)
            && !crate::engine::orphans::on(h)
        {
            let _ = release(h);
        }
    }
}

/// Receives and drops the messages waiting on a real communicator, into `scratch`
/// (grown as needed). True if there was one.
pub(crate) fn drain(real: MPI_Comm, scratch: &mut Vec<u8>) -> bool {
    let mut any = false;
    while let Some((msg, st)) = improbe(real, transport::any_source(), transport::any_tag()) {
        any = true;
        drop_message(msg, st, scratch);
    }
    any
}

/// [`drain`] in arrival order, stopping at the first message with tag `keep`,
/// which stays for its receiver (engine::revoke: shrink's own traffic).
pub(crate) fn drain_except(real: MPI_Comm, keep: std::os::raw::c_int, scratch: &mut Vec<u8>) {
    // Probe first: a matched probe would take the message that must stay.
    while let Some((src, tag)) = probe(real, transport::any_source()) {
        if tag == keep || !drop_one(real, src, tag, scratch) {
            return;
        }
    }
}

/// Source and tag of the first message waiting on `real` from `source` (or any).
pub(crate) fn probe(real: MPI_Comm, source: std::os::raw::c_int) -> Option<(std::os::raw::c_int, std::os::raw::c_int)> {
    let mut flag = 0;
    let mut st: mpi::MPI_Status = unsafe { std::mem::zeroed() };
    // SAFETY: `real` is a live communicator of this process; flag and status are
    // locals MPI writes before returning.
    unsafe { mpi::MPI_Iprobe(source, transport::any_tag(), real, &mut flag, &mut st) };
    (flag != 0).then_some((st.MPI_SOURCE, st.MPI_TAG))
}

/// Receives and drops the first message from `source` with `tag` on `real`, if
/// one is waiting (what [`probe`] saw). True if it did.
pub(crate) fn drop_one(real: MPI_Comm, source: std::os::raw::c_int, tag: std::os::raw::c_int, scratch: &mut Vec<u8>) -> bool {
    match improbe(real, source, tag) {
        Some((msg, st)) => {
            drop_message(msg, st, scratch);
            true
        }
        None => false,
    }
}

/// A matched probe on `real`: the message and its status, if one is waiting.
fn improbe(real: MPI_Comm, source: std::os::raw::c_int, tag: std::os::raw::c_int) -> Option<(mpi::MPI_Message, mpi::MPI_Status)> {
    let mut flag = 0;
    let mut st: mpi::MPI_Status = unsafe { std::mem::zeroed() };
    let mut msg: mpi::MPI_Message = unsafe { std::mem::zeroed() };
    // SAFETY: `real` is a live communicator of this process; flag, message and
    // status are locals MPI writes before returning.
    unsafe { mpi::MPI_Improbe(source, tag, real, &mut flag, &mut msg, &mut st) };
    (flag != 0).then_some((msg, st))
}

/// Receives a matched message into `scratch` (grown as needed) and drops it.
fn drop_message(mut msg: mpi::MPI_Message, mut st: mpi::MPI_Status, scratch: &mut Vec<u8>) {
    let mut count = 0;
    // SAFETY: `st` is the status of the matched probe that gave `msg`.
    unsafe { mpi::MPI_Get_count(&st, transport::dt_byte(), &mut count) };
    if count.max(1) as usize > scratch.len() {
        scratch.resize(count.max(1) as usize, 0);
    }
    // SAFETY: `scratch` holds at least `count` bytes and outlives the blocking call;
    // `msg` is a matched message, received exactly once.
    unsafe { mpi::MPI_Mrecv(scratch.as_mut_ptr() as *mut _, count.max(0), transport::dt_byte(), &mut msg, &mut st) };
}

/// A copy of every communicator's state (a rank that dies keeps serving them).
pub fn snapshot() -> Vec<CommState> {
    COMMS.lock().as_ref().map(|m| m.values().cloned().collect()).unwrap_or_default()
}

/// Each communicator's id and how many collectives this process entered on it.
pub fn entered_counts() -> std::collections::HashMap<u64, u64> {
    COMMS.lock().as_ref().map_or_else(Default::default, |m| m.values().map(|st| (st.id, st.seq)).collect())
}

/// Revoked communicators that owe catch-up joins (horizon unknown, or collectives
/// up to it not entered here): (id, handle) (engine::revoke).
pub fn owed_catch_up() -> Vec<(u64, Sim_FT_MPI_Comm)> {
    COMMS.lock().as_ref().map_or(Vec::new(), |m| {
        m.iter()
            // Intercommunicator collectives with another job are opaque (no dead
            // rank or catching-up member joins them: docs/ARCHITECTURE.md, "Not
            // simulated"); within the job a merge is joined (calls::comm_ctor).
            .filter(|(_, st)| st.revoked && !st.foreign && st.horizon.map_or(true, |h| st.seq < h))
            .map(|(k, st)| (st.id, *k as Sim_FT_MPI_Comm))
            .collect()
    })
}

/// (communicator id, peer world rank, messages started towards it, messages
/// received from it) for every pair with messages: what a dying rank reports.
pub fn sent_summary() -> Vec<(u64, u32, u32, u32)> {
    let mut v = Vec::new();
    for st in snapshot() {
        for (r, (n, got)) in st.sent.iter().zip(st.recvd.iter()).enumerate() {
            if *n > 0 || *got > 0 {
                if let Some(w) = st.peer_world(r).filter(|w| *w != FOREIGN) {
                    v.push((st.id, w, *n, *got));
                }
            }
        }
    }
    v
}

/// Applies `f` to every communicator's state (news delivery).
pub fn for_each(mut f: impl FnMut(&mut CommState)) {
    if let Some(map) = COMMS.lock().as_mut() {
        for st in map.values_mut() {
            f(st);
        }
    }
}

/// Applies `f` to every communicator's handle and state.
pub fn for_each_handle(mut f: impl FnMut(Sim_FT_MPI_Comm, &mut CommState)) {
    if let Some(map) = COMMS.lock().as_mut() {
        for (k, st) in map.iter_mut() {
            f(*k as Sim_FT_MPI_Comm, st);
        }
    }
}

/// Finds a communicator by job-wide id (a process is in at most one with an id).
pub fn find_by_id(id: u64) -> Option<Sim_FT_MPI_Comm> {
    let guard = COMMS.lock();
    guard.as_ref()?.iter().find(|(_, st)| st.id == id).map(|(k, _)| *k as Sim_FT_MPI_Comm)
}

/// Number of live MPIFT communicators (predefined included).
pub fn count() -> usize {
    COMMS.lock().as_ref().map_or(0, |m| m.len())
}

// ---- for the constructors and conversions MPIFT implements by hand
// (calls::comm_ctor, calls::dynamic, calls::fortran, calls::keyval) ----

/// The MPIFT handle of a real communicator, if MPIFT knows it (callbacks and
/// handle conversions receive real communicators).
pub fn find_by_real(real: MPI_Comm) -> Option<Sim_FT_MPI_Comm> {
    let guard = COMMS.lock();
    guard.as_ref()?.iter().find(|(_, st)| st.real.0 == real).map(|(k, _)| *k as Sim_FT_MPI_Comm)
}

/// Wraps a real communicator at a handle allocated earlier (`MPI_Comm_idup` hands
/// the handle out before the communicator is usable), with the given error handler.
pub fn adopt_at(h: Sim_FT_MPI_Comm, real: MPI_Comm, errhandler: Real<MPI_Errhandler>, id: u64) {
    let st = new_state(real, errhandler, id, false);
    COMMS.lock().as_mut().expect("MPI is initialised").insert(key(h), st);
}

/// A handle for a communicator that is not registered yet (see [`adopt_at`]).
pub fn new_handle() -> Sim_FT_MPI_Comm {
    Box::into_raw(Box::new(Sim_FT_Comm_struct::anchor()))
}

/// Forgets a communicator whose real one the caller has already released
/// (`MPI_Comm_disconnect`), and frees its handle.
pub fn forget(h: Sim_FT_MPI_Comm) {
    let removed = COMMS.lock().as_mut().and_then(|m| m.remove(&key(h)));
    if matches!(removed, Some(ref st) if !st.predefined) {
        drop(unsafe { Box::from_raw(h) });
    }
}

/// Counts a message started towards `dest` (a dead rank reports these counts);
/// returns its number among them (1-based; 0 for no destination).
pub fn count_send(c: Sim_FT_MPI_Comm, dest: std::os::raw::c_int) -> u32 {
    let mut nth = 0;
    if dest >= 0 {
        update(c, |s| {
            if let Some(x) = s.sent.get_mut(dest as usize) {
                *x += 1;
                nth = *x;
            }
        });
    }
    nth
}
