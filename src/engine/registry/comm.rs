//! MPIFT's communicators: a registry from handle (anchor address) to state.
//!
//! One MPIFT communicator wraps exactly one real communicator; failure-free, the
//! layer creates no communicator of its own (GUIDE principle 5 allows one more).

use crate::engine::registry::comm_state::{CommState, FOREIGN};
use crate::engine::base::handles::{self, CommRef, Sim_FT_Comm_struct, Sim_FT_MPI_Comm};
use crate::engine::registry::comm_state::new_state;
use crate::engine::base::edges;
use crate::engine::base::handles::Real;
use crate::transport::serial::Serial;
use crate::transport::{self, MPI_Comm, MPI_Errhandler, MPI_Message, MPI_Status};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// The state kept per communicator (engine::registry::comm_state), at its old path.

/// Nothing has gone wrong in this process yet: no failure and no revoke known on
/// any communicator. While this holds, the failure checks around every call are
/// answered without looking a communicator up (the failure-free fast path,
/// bench/README.md); the first news, revoke or failure learned ends it for good
/// ([`troubled`]). The flag is [`edges::TROUBLE`], clear while calm.
#[inline]
pub fn calm() -> bool {
    !edges::any(edges::TROUBLE)
}

/// Called before a failure or revoke is recorded on any communicator.
pub fn troubled() {
    edges::set(edges::TROUBLE, true);
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

/// The id of the `k`-th communicator created from the one with id `parent`.
pub fn child_id(parent: u64, k: u64) -> u64 {
    // splitmix64 of the pair: distinct ids for distinct (parent, k) in practice.
    let mut z = parent.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ k.wrapping_add(0xD1B5_4A32_D192_ED03);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (z ^ (z >> 31)) | 1
}


pub const WORLD_ID: u64 = 2;
pub const SELF_ID: u64 = 4;

/// The registry, and where its entry found last is: most MPI calls name the
/// communicator the call before named, and the failure-free path looks its
/// communicator up two to four times per call (issue 36).
struct Comms {
    map: Registry,
    /// (key, address of its state in `map`); key 0 when unset. An entry stays at
    /// its address until the map changes shape, so [`Comms::insert`] and
    /// [`Comms::remove`], the only ways the map is changed, unset it.
    last: (usize, *mut CommState),
}

// SAFETY: `last` points into `map`, which the same value owns; a `Comms` is
// only reached through the `Serial` that owns both, so moving it to another
// thread moves the pointer's target along with it (a `Registry` is `Send`).
unsafe impl Send for Comms {}

impl Comms {
    fn new(map: Registry) -> Comms {
        Comms { map, last: (0, std::ptr::null_mut()) }
    }

    #[inline]
    fn get(&mut self, k: usize) -> Option<&mut CommState> {
        if k != 0 && k == self.last.0 {
            // SAFETY: `last` was set by the lookup of `k` below, and the map has
            // not changed shape since (insert and remove unset it), so the entry
            // is still at that address; `&mut self` makes this the only borrow.
            return Some(unsafe { &mut *self.last.1 });
        }
        let st = self.map.get_mut(&k)?;
        self.last = (k, st as *mut CommState);
        Some(st)
    }

    fn insert(&mut self, k: usize, st: CommState) {
        self.last = (0, std::ptr::null_mut());
        self.map.insert(k, st);
    }

    fn remove(&mut self, k: usize) -> Option<CommState> {
        self.last = (0, std::ptr::null_mut());
        self.map.remove(&k)
    }
}

/// Registry keyed by handle address; `None` outside `MPI_Init`..`MPI_Finalize`.
static COMMS: Serial<Option<Comms>> = Serial::new(None);

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
        transport::comm::set_errhandler(real, transport::errors_return());
        map.insert(key(h), new_state(real, Real(transport::errors_are_fatal()), id, true));
    }
    *COMMS.lock() = Some(Comms::new(map));
}

/// Points `MPI_COMM_WORLD` at another real communicator (a spare process taking
/// up the world of the spawn it serves, calls::spares). The caller frees the old
/// real one if it owns it.
pub(crate) fn replace_world(world: MPI_Comm, id: u64) {
    transport::comm::set_errhandler(world, transport::errors_return());
    let st = new_state(world, Real(transport::errors_are_fatal()), id, true);
    if let Some(map) = COMMS.lock().as_mut() {
        map.insert(key(handles::world_handle()), st);
    }
}

/// Forgets every communicator (called by `MPI_Finalize`).
pub(crate) fn clear() {
    if let Some(comms) = COMMS.lock().take() {
        for (k, st) in comms.map {
            if !st.predefined {
                // SAFETY: every key that is not predefined is a handle made by
                // Box::into_raw (adopt, adopt_orphan, new_handle); the registry is
                // gone, so nothing frees it again.
                drop(unsafe { Box::from_raw(k as *mut Sim_FT_Comm_struct) });
            }
        }
    }
}

/// The checked lookup behind every communicator argument (inlined: see
/// [`crate::engine::registry::args::comm_arg`]).
#[inline(always)]
pub fn lookup(h: Sim_FT_MPI_Comm) -> Option<CommRef> {
    let mut guard = COMMS.lock();
    let st = guard.as_mut()?.get(key(h))?;
    Some(comm_ref(h, st))
}

/// [`lookup`] and [`count_send`] under one lock: what the start of a send needs
/// from the registry (the calm path of `MPI_Isend` & co., engine::registry::args).
#[inline]
pub fn lookup_send(h: Sim_FT_MPI_Comm, dest: std::os::raw::c_int) -> Option<(CommRef, u32)> {
    let mut guard = COMMS.lock();
    let st = guard.as_mut()?.get(key(h))?;
    let nth = if dest >= 0 { bump_sent(st, dest as usize) } else { 0 };
    Some((comm_ref(h, st), nth))
}

/// The real communicator behind `h`, and if `dest` >= 0 a send to it counted as
/// [`count_send`] does (its number; else 0), under one lock (engine::entry::lane).
#[inline]
pub fn lookup_real(h: Sim_FT_MPI_Comm, dest: std::os::raw::c_int) -> Option<(MPI_Comm, u32)> {
    let mut guard = COMMS.lock();
    let st = guard.as_mut()?.get(key(h))?;
    let nth = if dest >= 0 { bump_sent(st, dest as usize) } else { 0 };
    Some((st.real.0, nth))
}

#[inline]
fn comm_ref(h: Sim_FT_MPI_Comm, st: &CommState) -> CommRef {
    CommRef {
        handle: h,
        real: st.real.0,
        revoked: st.revoked,
        id: st.id,
        rank: st.rank,
        size: st.members.len() as i32,
        inter: st.inter,
        foreign: st.foreign,
    }
}

/// Reads a communicator's state in place (None: unknown handle).
pub fn read<R>(h: Sim_FT_MPI_Comm, f: impl FnOnce(&CommState) -> R) -> Option<R> {
    COMMS.lock().as_mut()?.get(key(h)).map(|st| f(st))
}

/// Changes a communicator's state; false if the handle is unknown.
pub fn update(h: Sim_FT_MPI_Comm, f: impl FnOnce(&mut CommState)) -> bool {
    let mut guard = COMMS.lock();
    match guard.as_mut().and_then(|m| m.get(key(h))) {
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

/// The instance number of the next agreement on `h` (engine::agree::ft).
pub fn next_ft_instance(h: Sim_FT_MPI_Comm) -> u64 {
    let mut i = 0;
    update(h, |s| {
        s.ft_count += 1;
        i = s.ft_count;
    });
    i
}

/// The program freed `h` with requests or orphans still on it: the real free
/// waits for the last of them ([`request_gone`], calls::comm_free::release_deferred).
pub(crate) fn mark_free_pending(h: Sim_FT_MPI_Comm) {
    EVER_FREE_PENDING.store(true, Ordering::Release);
    update(h, |st| st.free_pending = true);
}

/// Frees the real communicator of `h` and forgets `h`; the real error code if MPI
/// refuses.
pub(crate) fn release(h: Sim_FT_MPI_Comm) -> Result<(), std::os::raw::c_int> {
    let Some(mut real) = read(h, |st| st.real.0) else { return Ok(()) };
    let rc = transport::comm::free(&mut real);
    if rc != 0 {
        return Err(rc);
    }
    COMMS.lock().as_mut().unwrap().remove(key(h));
    // SAFETY: `h` was registered, and is not predefined (free refuses those and
    // only it or request_gone bring a handle here), so it came from Box::into_raw;
    // it has just left the registry, so it is freed once.
    drop(unsafe { Box::from_raw(h) });
    Ok(())
}

/// Communicators the program freed whose last request ended during the current
/// MPI call: released when the call ends (calls::comm_free::release_deferred), after its error,
/// if any, went through the handler the program set on them (MPI-3.1 §8.3: a
/// request's error goes to its communicator's handler, also a freed one's).
static DEFERRED: Mutex<Vec<usize>> = Mutex::new(Vec::new());
/// Some communicator was freed with requests still on it (set before its
/// `free_pending`): until then a request's end has nothing to look up.
static EVER_FREE_PENDING: AtomicBool = AtomicBool::new(false);

/// Whether some communicator was ever freed with requests on it.
#[inline]
pub(crate) fn ever_free_pending() -> bool {
    EVER_FREE_PENDING.load(Ordering::Acquire)
}

/// A request on `h` was released or an orphan of it ended: if the program freed
/// `h` meanwhile and no request or orphan is left on it, free it when this call ends.
#[inline]
pub(crate) fn request_gone(h: Sim_FT_MPI_Comm) {
    if ever_free_pending() {
        request_gone_watched(h);
    }
}

fn request_gone_watched(h: Sim_FT_MPI_Comm) {
    if read(h, |st| st.free_pending).unwrap_or(false) {
        if let Ok(mut d) = DEFERRED.lock() {
            d.push(h as usize);
            edges::set(edges::DEFERRED, true);
        }
    }
}

/// The communicators [`request_gone`] noted since the last call, taken
/// (calls::comm_free::release_deferred frees those that are still unused).
#[cold]
pub(crate) fn take_deferred() -> Vec<usize> {
    match DEFERRED.lock() {
        Ok(mut d) => {
            edges::set(edges::DEFERRED, false);
            std::mem::take(&mut *d)
        }
        Err(_) => Vec::new(),
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
/// which stays for its receiver (engine::revoke::revoke: shrink's own traffic).
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
    let mut st = transport::zero_status();
    transport::p2p::iprobe(source, transport::any_tag(), real, &mut flag, Some(&mut st));
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
fn improbe(real: MPI_Comm, source: std::os::raw::c_int, tag: std::os::raw::c_int) -> Option<(MPI_Message, MPI_Status)> {
    let mut flag = 0;
    let mut st = transport::zero_status();
    let mut msg = transport::zero_message();
    transport::p2p::improbe(source, tag, real, &mut flag, &mut msg, Some(&mut st));
    (flag != 0).then_some((msg, st))
}


/// Receives a matched message into `scratch` (grown as needed) and drops it.
fn drop_message(mut msg: MPI_Message, mut st: MPI_Status, scratch: &mut Vec<u8>) {
    let mut count = 0;
    // `st` is the status of the matched probe that gave `msg`.
    transport::p2p::get_count(&st, transport::dt_byte(), &mut count);
    if count.max(1) as usize > scratch.len() {
        scratch.resize(count.max(1) as usize, 0);
    }
    // Blocking: never blocks for ever: the message is matched (improbe); its data
    // is here or comes with its sender's progress, which the host makes inside MPI,
    // where the sender is while its send is pending and at its exit.
    // SAFETY: `scratch` holds at least `count` bytes and outlives the blocking call;
    // `msg` is a matched message, received exactly once.
    unsafe { transport::p2p::mrecv(scratch.as_mut_ptr() as *mut _, count.max(0), transport::dt_byte(), &mut msg, Some(&mut st)) };
}

/// A copy of every communicator's state (a rank that dies keeps serving them).
pub fn snapshot() -> Vec<CommState> {
    COMMS.lock().as_ref().map(|m| m.map.values().cloned().collect()).unwrap_or_default()
}

/// Each communicator's id and how many collectives this process entered on it.
pub fn entered_counts() -> std::collections::HashMap<u64, u64> {
    COMMS.lock().as_ref().map_or_else(Default::default, |m| m.map.values().map(|st| (st.id, st.seq)).collect())
}

/// Revoked communicators that owe catch-up joins (horizon unknown, or collectives
/// up to it not entered here): (id, handle) (engine::revoke::revoke).
pub fn owed_catch_up() -> Vec<(u64, Sim_FT_MPI_Comm)> {
    COMMS.lock().as_ref().map_or(Vec::new(), |m| {
        m.map
            .iter()
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
        for st in map.map.values_mut() {
            f(st);
        }
    }
}

/// Applies `f` to every communicator's handle and state.
pub fn for_each_handle(mut f: impl FnMut(Sim_FT_MPI_Comm, &mut CommState)) {
    if let Some(map) = COMMS.lock().as_mut() {
        for (k, st) in map.map.iter_mut() {
            f(*k as Sim_FT_MPI_Comm, st);
        }
    }
}

/// Finds a communicator by job-wide id (a process is in at most one with an id).
pub fn find_by_id(id: u64) -> Option<Sim_FT_MPI_Comm> {
    let guard = COMMS.lock();
    guard.as_ref()?.map.iter().find(|(_, st)| st.id == id).map(|(k, _)| *k as Sim_FT_MPI_Comm)
}

/// Number of live MPIFT communicators (predefined included).
pub fn count() -> usize {
    COMMS.lock().as_ref().map_or(0, |m| m.map.len())
}

// ---- for the constructors and conversions MPIFT implements by hand
// (calls::comm_ctor, calls::dynamic, calls::fortran, calls::keyval) ----

/// The MPIFT handle of a real communicator, if MPIFT knows it (callbacks and
/// handle conversions receive real communicators).
pub fn find_by_real(real: MPI_Comm) -> Option<Sim_FT_MPI_Comm> {
    let guard = COMMS.lock();
    guard.as_ref()?.map.iter().find(|(_, st)| st.real.0 == real).map(|(k, _)| *k as Sim_FT_MPI_Comm)
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
    let removed = COMMS.lock().as_mut().and_then(|m| m.remove(key(h)));
    if matches!(removed, Some(ref st) if !st.predefined) {
        // SAFETY: a registered handle that is not predefined came from
        // Box::into_raw; it has just left the registry, so it is freed once.
        drop(unsafe { Box::from_raw(h) });
    }
}

/// Counts one message received per `(communicator, source)` under one lock
/// (engine::complete::complete for one receive, engine::complete::batch_fast for a calm array's).
/// A negative source (`MPI_PROC_NULL`'s) or an unknown handle counts nothing.
pub fn count_received(items: impl Iterator<Item = (Sim_FT_MPI_Comm, std::os::raw::c_int)>) {
    let mut guard = COMMS.lock();
    let Some(comms) = guard.as_mut() else { return };
    for (h, src) in items.filter(|(_, src)| *src >= 0) {
        if let Some(x) = comms.get(key(h)).and_then(|st| st.recvd.get_mut(src as usize)) {
            *x += 1;
        }
    }
}

/// Counts a message started towards `dest` (a dead rank reports these counts);
/// returns its number among them (1-based; 0 for no destination).
pub fn count_send(c: Sim_FT_MPI_Comm, dest: std::os::raw::c_int) -> u32 {
    let mut nth = 0;
    if dest >= 0 {
        update(c, |s| nth = bump_sent(s, dest as usize));
    }
    nth
}

/// One more message started towards member `dest` of `st`; its number (0 if
/// `dest` is out of range).
#[inline]
fn bump_sent(st: &mut CommState, dest: usize) -> u32 {
    match st.sent.get_mut(dest) {
        Some(x) => {
            *x += 1;
            *x
        }
        None => 0,
    }
}
