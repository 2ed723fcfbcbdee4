//! `MPIX_Comm_revoke` and catching up on a revoked communicator
//! (docs/ARCHITECTURE.md, "Revoke").
//!
//! A revoke is a job that runs without waiting on anybody, started by the revoke
//! call and advanced by every later MPI call of the revoker ([`progress_jobs`],
//! from engine::progress::service): per member, (1) "revoked" lands in its window region
//! (two RMA round trips, transport::script) and it is woken; (2) its collective
//! log is read: the highest collective number on the communicator it *entered*
//! (a pending entry is read again until its owner decided it); (3) once every
//! member is read, the horizon H (the highest of those and the revoker's own) is
//! put into every member's region the same way. The revoke call issues the first
//! step and returns (O(n) non-blocking RMA starts, nothing waited for); the
//! revoker's next MPI call of any kind finishes the job ([`finish_jobs`]).
//!
//! Why read the logs after "revoked" landed: a member writes its log entry,
//! fences, then reads its news (engine::entry::hooks). Either it saw the revoke and
//! cancelled the entry, or the entry was there, pending or entered, when the
//! revoker read (transport::window's Dekker pair). So H covers every collective a
//! member entered and may be stuck in, and no member enters one after H.
//!
//! Catching up: a member that did not enter collectives up to H joins them with
//! dummy data ([`catch_up`]), so members stuck inside are released. It does so at
//! its next MPI call of any kind and inside every wait (engine::progress::service), whatever
//! the program does next: a member stuck in a blocking collective on a revoked
//! communicator returns `MPI_ERR_REVOKED` as soon as every other member has been
//! inside MPI once since the revoke. Several revoked communicators are caught up on
//! in ascending communicator id, the same order everywhere (blocking dummy joins
//! in different orders at two ranks would wait for each other).

use crate::engine::adversary::late;
use crate::engine::colls::describe;
use crate::engine::registry::comm_state;
use crate::engine::registry::owed;
use crate::engine::news::wake;
use crate::engine::base::runtime;
use crate::engine::base::errors::{Failure, Outcome};
use crate::engine::base::handles::{CommRef, Sim_FT_MPI_Comm};
use crate::engine::colls::describe::Desc;
use crate::engine::join::join;
use crate::engine::join::join_types::{Joined, Who};
use crate::engine::registry::req_state::ReqState;
use crate::engine::base::backoff::Backoff;
use crate::engine::{registry::args, registry::comm, news::logs, news::news};
use crate::transport::script::Scripts;
use crate::transport::serial::Serial;
use crate::transport::{self, window, MPI_Request, MPI_Status};
use std::sync::atomic::{AtomicBool, Ordering};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A member's log, being read by a revoke job.
enum Read {
    /// "Revoked" has not landed there yet.
    Announcing,
    Head(MPI_Request, Box<[u64; 1]>),
    /// Reads of the target's log entries `from..head` in flight (one per run).
    Entries { reads: news::LogReads, from: u64, head: u64 },
    Done,
}

/// One revoke in flight (see the module comment).
struct Job {
    id: u64,
    handle: Sim_FT_MPI_Comm,
    own_seq: u64,
    targets: Vec<u32>,
    announce: Scripts,
    reads: Vec<Read>,
    max_seq: u64,
    horizon: Option<(u64, Scripts)>,
    /// Per target: when its revoke hint (wake::hint_revoke) goes out (at the
    /// revoker's next MPI call, or later if the adversarial mode holds its news);
    /// None once sent.
    hint_at: Vec<Option<Instant>>,
}

// SAFETY: the host requests inside (its reads' and its scripts'; pointers with
// Open MPI) name host objects not tied to any thread, and are only touched under
// JOBS's lock, by the thread that calls MPI; the boxed buffers are plain memory
// owned by the job.
unsafe impl Send for Job {}

static JOBS: Serial<Vec<Job>> = Serial::new(Vec::new());
/// Some job is in flight (checked before taking the table).
static ACTIVE: AtomicBool = AtomicBool::new(false);


/// `MPIX_Comm_revoke`: not collective. Marks the communicator revoked here and
/// starts the job that tells every member (module comment): issues its first
/// step and returns; the next MPI call of this process finishes it.
pub fn revoke(c: Sim_FT_MPI_Comm) -> Outcome {
    let cr = args::comm_arg(c)?;
    // Revoked here before any host call: the host's progress may deliver into
    // the program's pending receives ([`end_receives`]).
    comm::troubled();
    let mut newly = false;
    comm::update(c, |s| newly = !std::mem::replace(&mut s.revoked, true));
    if newly {
        owed::end_receives(cr.id);
    }
    comm_state::note_owed();
    news::refresh();
    let me = runtime::world_rank() as u32;
    // Both groups of an intercommunicator (its id is the same at each member:
    // engine::join::ctor_join::inter_id); no news reaches another job's processes.
    let (members, seq, already) =
        comm::read(c, |s| (s.union(), s.seq, s.horizon.is_some())).expect("looked up above");
    if already || JOBS.lock().iter().any(|j| j.id == cr.id) {
        return Ok(());
    }
    let targets: Vec<u32> = members.into_iter().filter(|w| *w != me && *w != comm_state::FOREIGN).collect();
    // The adversarial mode's late revoke news: each member's announcement and
    // hint held for its own delay.
    let now = Instant::now();
    let held: HashMap<u32, Instant> = targets.iter().filter_map(|t| Some((*t, now + late::revoke_news(cr.id, *t)?))).collect();
    let mut announce = news::revoke_script(cr.id, None, &targets);
    announce.hold(|p| held.get(&(p as u32)).copied());
    let mut job = Job {
        id: cr.id,
        handle: c,
        own_seq: seq,
        announce,
        reads: targets.iter().map(|_| Read::Announcing).collect(),
        hint_at: targets.iter().map(|t| Some(held.get(t).copied().unwrap_or(now))).collect(),
        targets,
        max_seq: 0,
        horizon: None,
    };
    // The first step only (a fetch-and-add per target, not waited for), like
    // ULFM's revoke, which sends its first messages and returns: the rest runs
    // at this process's next MPI call of any kind (engine::progress::service).
    news::kick_scripts(&mut job.announce);
    JOBS.lock().push(job);
    ACTIVE.store(true, Ordering::Release);
    Ok(())
}




/// Advances every job without waiting; true if any made a step.
pub fn progress_jobs() -> bool {
    if !ACTIVE.load(Ordering::Acquire) {
        return false;
    }
    let mut jobs = std::mem::take(&mut *JOBS.lock());
    let mut moved = false;
    for j in jobs.iter_mut() {
        moved |= advance(j);
    }
    jobs.retain(|j| !finished(j));
    let mut table = JOBS.lock();
    // A revoke made while these ran (none: advance calls no MPIFT function) stays.
    jobs.append(&mut table);
    ACTIVE.store(!jobs.is_empty(), Ordering::Release);
    *table = jobs;
    moved
}

/// Advances every job until all are done. A job waits only for RMA to complete
/// at its targets (with MPICH: for each target to be inside any MPI call), never
/// for a target to do something in MPIFT, so this cannot deadlock.
pub fn finish_jobs() {
    if !jobs_pending() {
        return;
    }
    let mut idle = Backoff::wait();
    while jobs_pending() {
        if progress_jobs() {
            idle.reset();
        } else {
            idle.pause();
        }
    }
}

/// Some revoke of this process is still being announced.
pub fn jobs_pending() -> bool {
    ACTIVE.load(Ordering::Acquire)
}

fn finished(j: &Job) -> bool {
    matches!(&j.horizon, Some((_, s)) if s.done())
}

fn advance(j: &mut Job) -> bool {
    let mut moved = false;
    // At the revoker's next MPI call (the revoke call itself stays O(n) RMA
    // starts): a member blocked in a wait learns of the revoke from this
    // message, before the RMA announcement lands (a held member: once due).
    let now = Instant::now();
    for (t, at) in j.targets.iter().zip(j.hint_at.iter_mut()) {
        if at.is_some_and(|a| a <= now) {
            wake::hint_revoke(*t as usize, j.id);
            *at = None;
            moved = true;
        }
    }
    for p in news::progress_scripts(&mut j.announce) {
        wake::wake(p);
        moved = true;
        let i = j.targets.iter().position(|t| *t as usize == p).expect("a target");
        j.reads[i] = start_head(p);
    }
    for i in 0..j.targets.len() {
        moved |= advance_read(j, i);
    }
    if j.horizon.is_none() && j.reads.iter().all(|r| matches!(r, Read::Done)) {
        let h = j.max_seq.max(j.own_seq);
        comm::update(j.handle, |s| s.horizon = Some(h.max(s.horizon.unwrap_or(0))));
        j.horizon = Some((h, news::revoke_script(j.id, Some(h), &j.targets)));
        moved = true;
    }
    if let Some((_, s)) = &mut j.horizon {
        for p in news::progress_scripts(s) {
            wake::wake(p);
            moved = true;
        }
    }
    moved
}

fn start_head(p: usize) -> Read {
    let mut b = Box::new([0u64; 1]);
    match runtime::with(|rt| rt.win.rget(p, window::LOG_HEAD, &mut b[..])) {
        Some(r) => Read::Head(r, b),
        None => Read::Done,
    }
}

/// Log entries read first per member: the tail of its log (see [`advance_read`]).
const TAIL: u64 = 4;

/// Starts reading target `p`'s log entries `from..head` (at most the ring).
fn read_entries(p: usize, from: u64, head: u64) -> Read {
    match news::start_log_reads(p, from, head) {
        Some(reads) => Read::Entries { reads, from, head },
        None => Read::Done,
    }
}

/// One step of reading target `i`'s log; true if it moved.
fn advance_read(j: &mut Job, i: usize) -> bool {
    let p = j.targets[i] as usize;
    match std::mem::replace(&mut j.reads[i], Read::Done) {
        Read::Head(mut r, b) => {
            if !transport::test_done(&mut r) {
                j.reads[i] = Read::Head(r, b);
                return false;
            }
            // The newest entries first: the collective a stuck member is in and
            // the ones before it are at the tail of its log.
            let head = b[0];
            j.reads[i] = read_entries(p, head.saturating_sub(TAIL), head);
            true
        }
        Read::Entries { mut reads, from, head } => {
            if !reads.iter_mut().all(|(r, _)| transport::test_done(r)) {
                j.reads[i] = Read::Entries { reads, from, head };
                return false;
            }
            let Some(got) = news::parse_log_reads(&reads) else { return true };
            let oldest = head.saturating_sub(window::LOG_LEN as u64);
            if from > oldest && !got.iter().any(|en| en.comm == j.id && en.seq <= j.own_seq) {
                // This communicator's collectives after ours may go further back:
                // read the rest of the ring (the entries read stay valid).
                j.reads[i] = match read_entries(p, oldest, from) {
                    Read::Entries { reads: mut older, .. } => {
                        older.extend(reads);
                        Read::Entries { reads: older, from: oldest, head }
                    }
                    other => other,
                };
                return true;
            }
            let mut pending = false;
            for en in got.iter().filter(|en| en.comm == j.id) {
                match en.state {
                    window::ENTERED => j.max_seq = j.max_seq.max(en.seq),
                    window::PENDING => pending = true,
                    _ => {}
                }
            }
            // The catch-up needs the descriptors of this communicator's collectives
            // this rank has not entered (and only those: the cache is not for the
            // other communicators' history).
            let own = j.own_seq;
            logs::with(|cache| cache.keep_entered(p, got.into_iter().filter(|en| en.comm == j.id && en.seq > own).collect()));
            // A pending entry: its owner is between writing it and reading its news
            // (nanoseconds, unless descheduled); read again until it is decided.
            j.reads[i] = if pending { start_head(p) } else { Read::Done };
            true
        }
        other => {
            j.reads[i] = other;
            false
        }
    }
}

/// Joins, with dummy data, every collective on `cr` up to its horizon that this
/// rank has not entered, in order, so that members still inside one are released
/// (and every member ends with the same count). Waits for the horizon if it is
/// not known yet. Blocks while another member it needs has not joined.
pub(crate) fn catch_up(cr: &CommRef) -> Outcome {
    let mut idle = Backoff::wait();
    loop {
        news::refresh();
        let Some((revoked, h, seq)) = comm::read(cr.handle, |s| (s.revoked, s.horizon, s.seq)) else { return Ok(()) };
        if !revoked {
            return Ok(());
        }
        let Some(h) = h else {
            // The revoker is still reading the logs: keep its job and ours going.
            progress_jobs();
            wake::drain_wakes();
            idle.pause();
            continue;
        };
        if seq >= h {
            return Ok(());
        }
        join_next(cr, seq + 1)?;
        idle.reset();
    }
}

/// Joins collective `s` on `cr` with dummy data (blocking until it completes).
fn join_next(cr: &CommRef, s: u64) -> Outcome {
    let (members, rank, union) =
        comm::read(cr.handle, |st| (st.members.clone(), st.rank as usize, st.union())).expect("caller looked it up");
    let me = runtime::world_rank() as u32;
    // Both groups of an intercommunicator: the other one may be the only one in it.
    let others: Vec<u32> = union.iter().copied().filter(|w| *w != me).collect();
    let mut idle = Backoff::wait();
    let (d, per) = loop {
        // The revoke job usually kept the descriptor already (engine::revoke::revoke's
        // reads); read the members' logs only if not. An entry of another rank
        // that catches up (a dummy) is not one: it has no counts (logs::by_member),
        // so read on until a member's real entry is here.
        let got = logs::with(|cache| {
            let known = |cache: &logs::LogCache| cache.get(cr.id, s).and_then(|f| logs::by_member(f, &members));
            if let Some(x) = known(cache) {
                return Some(x);
            }
            cache.poll(&others);
            let k = known(cache);
            if k.is_none() {
                if let Some(w) = cache.hole(cr.id, s, &others) {
                    cache.report_hole(cr.id, s, w, "catch-up");
                }
            }
            k
        });
        if let Some(x) = got {
            break x;
        }
        news::refresh();
        progress_jobs();
        idle.pause();
    };
    news::log_entered(cr.id, s, &Desc { fcode: d.fcode | describe::DUMMY, ..Desc::default() });
    comm::update(cr.handle, |st| st.seq = s);
    let who = Who { real: cr.real, rank, size: members.len(), id: cr.id, members: &members, seq: s, standin: false };
    // Blocking: never blocks for ever: every live member catches up to the
    // horizon at its next MPI call and in every wait, on revoked communicators in
    // ascending id at every rank (module comment), so no two wait for each other;
    // the dead members owe these joins and make them in their turns.
    if let Joined::Pending(mut p) = join::join(&who, &d, &per) {
        // The join's own request, waited for once; `p` keeps its buffers.
        // Blocking: never blocks for ever: a non-blocking form's join, by the
        // argument above (every member catches up, in ascending id).
        transport::request::wait(&mut p.req, None);
    }
    logs::with(|cache| cache.prune(cr.id, s));
    Ok(())
}

/// Catches up on every revoked communicator that owes joins, in ascending
/// communicator id (module comment). Called at the entry of every MPI call and
/// in every wait once something went wrong (engine::progress::service).
pub fn catch_up_owed() -> Result<(), Failure> {
    catch_up_owed_as(true)
}

/// [`catch_up_owed`] for a wait that comes back (engine::progress::service::run_in_wait):
/// stops, without blocking, at the first communicator whose horizon is not known
/// yet (with MPICH that needs every member inside MPI), so the waiter can see
/// that its own communicator was revoked meanwhile. Later ones wait too: the
/// order must stay ascending.
pub fn catch_up_owed_ready() -> Result<(), Failure> {
    catch_up_owed_as(false)
}

fn catch_up_owed_as(wait_horizon: bool) -> Result<(), Failure> {
    if !comm_state::take_maybe_owed() {
        return Ok(());
    }
    let mut owed: Vec<(u64, Sim_FT_MPI_Comm)> = comm::owed_catch_up();
    owed.sort_unstable_by_key(|(id, _)| *id);
    for (_, h) in owed {
        if !wait_horizon && comm::read(h, |s| s.revoked && s.horizon.is_none()).unwrap_or(false) {
            comm_state::note_owed();
            return Ok(());
        }
        if let Some(cr) = comm::lookup(h) {
            if let Err(f) = catch_up(&cr) {
                comm_state::note_owed();
                return Err(f);
            }
        }
    }
    Ok(())
}

/// How often [`drain_revoked`] probes the revoked communicators at most.
const DRAIN_EVERY: Duration = Duration::from_millis(1);

/// When the last drain ran, and [`wake::wakes`] then.
static LAST_DRAIN: Mutex<Option<(Instant, u64)>> = Mutex::new(None);

/// Receives and drops the messages waiting on every revoked communicator here: no
/// receive can ask for them any more (every new operation is refused), and a
/// sender's wait on such a message ends only once it is taken, so that MPI no
/// longer reads the sender's buffer when its error is returned (engine::complete::complete,
/// `Action::Drain`). Posted receives match before probes, so none is robbed.
///
/// At most once per [`DRAIN_EVERY`], unless a wake message came: each probe runs
/// the host's progress engine (microseconds), and after a revoke every MPI call
/// passes here, so draining a program's ten kept revoked communicators on every
/// call made an agreement 14x slower (bench/README.md). A sender waiting for its
/// message to be drained wakes the receiver ([`drained`]), so a
/// receiver blocked in a wait drains at once.
pub fn drain_revoked() {
    {
        // Before the table walk: after a revoke every MPI call passes here.
        let mut last = LAST_DRAIN.lock().unwrap();
        let wakes = wake::wakes();
        if last.is_some_and(|(t, w)| w == wakes && t.elapsed() < DRAIN_EVERY) {
            return;
        }
        *last = Some((Instant::now(), wakes));
    }
    let mut reals = Vec::new();
    comm::for_each(|st| {
        if st.revoked && !st.inter {
            reals.push(st.real.0);
        }
    });
    // Shrink's MPI_Comm_create_group, which Open MPI runs over the parent's
    // point-to-point context with its own tag, must keep its messages.
    let mut scratch = Vec::new();
    for r in reals {
        comm::drain_except(r, crate::engine::agree::ft::SHRINK_TAG, &mut scratch);
    }
}

/// How long a send on a revoked communicator waits for its receiver to drain it
/// (revoke::drain_revoked, which every member runs in its MPI calls and waits).
/// A receiver inside MPI answers within microseconds; one that computes, or sits
/// in a real blocking collective or MPI_Finalize, may not: then the send is
/// orphaned as before rather than waited for without bound.
const DRAIN_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// Waits up to [`DRAIN_WAIT`] for a send on a revoked communicator to complete,
/// running this process's own service meanwhile (its receivers' drains need
/// nothing from it, but others may need its catch-ups). Wakes the receiver now
/// and again after 1, 2, 4 ... ms: a receiver blocked in a wait drains when
/// woken (revoke::drain_revoked; a wake and the message travel on different
/// communicators, so the first may arrive before the message). True if it
/// completed.
pub(crate) fn drained(st: &ReqState, real: &mut MPI_Request, status: &mut MPI_Status) -> bool {
    let t0 = std::time::Instant::now();
    let mut idle = Backoff::wait();
    let receiver = comm::read(st.comm.0, |c| c.peer_world(st.peer.max(0) as usize)).flatten().filter(|w| *w != comm_state::FOREIGN);
    let mut next_wake = std::time::Duration::ZERO;
    loop {
        if let Some(w) = receiver.filter(|_| t0.elapsed() >= next_wake) {
            wake::wake(w as usize);
            next_wake = (next_wake * 2).max(std::time::Duration::from_millis(1));
        }
        let mut flag = 0;
        // The caller's real request and status storage.
        transport::request::test(real, &mut flag, Some(status));
        if flag != 0 {
            return true;
        }
        if t0.elapsed() >= DRAIN_WAIT {
            return false;
        }
        drain_revoked();
        idle.pause();
    }
}
