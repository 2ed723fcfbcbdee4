//! Filling in for collectives that can only fail (docs/ARCHITECTURE.md,
//! "Doomed collectives").
//!
//! A collective on a communicator is *doomed* when a member is dead and did not
//! enter it for real before dying: its outcome is `MPI_ERR_PROC_FAILED` at every
//! member, whatever the others do (ULFM: a collective on a communicator with a
//! dead member fails). The dead rank joins it with dummy data (engine::dead::zombie),
//! but only once every live member has entered it. A live member that skips it,
//! as ULFM programs do after an error ("my `MPI_Sendrecv` failed: straight to the
//! agreement"), would leave the others inside it for ever; under real ULFM they
//! get `MPI_ERR_PROC_FAILED` (a dead root's `MPI_Ibcast` fails in `MPI_Wait`).
//!
//! So a live rank, while it is inside MPIFT (any call's service, any wait), reads
//! the other members' logs of communicators with a known dead member, and joins
//! with dummy data each doomed collective the others entered and it has not
//! (the same MPI function, as a dead rank does), in order: non-blocking forms at
//! once (their real requests become orphans, which keep the dummy buffers),
//! blocking forms once every other live member has entered them (so the join ends
//! at once) or waits in `MPIX_Comm_agree` on that communicator while a member
//! held in the collective keeps it there ([`holds_everyone`], [`in_agree`]: two
//! live members that both skipped it and went to the agreement), or once
//! every member missing is done with its program and this rank's is too
//! ([`settle_owed`]: both in `MPI_Finalize`). Two skippers that do anything
//! else wait for each other's entry: a known gap, docs/ULFM-DIFFERENCES.md.
//!
//! A fill-in waits until every other live member has the death's news where it
//! looks for it (flag read, counter bumped, with RMA: [`all_know`]): a member
//! whose collective completes with this rank's dummy part then always sees the
//! death when it returns, and reports `MPI_ERR_PROC_FAILED`, never a success with
//! dummy data (a dead rank's own joins keep the same rule, engine::dead::zombie). Each
//! fill-in is owed to the program: its next collective call on that communicator
//! returns `MPI_ERR_PROC_FAILED` without entering ([`claim`]), so the rank's
//! numbering stays that of the others whether it skipped the collective or was
//! only late for it (the outcome is the same either way).
//!
//! A rank blocked in a wait reads no logs until something wakes it. So a member
//! that enters a doomed collective wakes the other live members
//! (engine::entry::hooks::coll_enter), and a woken wait polls instead of blocking until
//! its log reads started after the wake-up are in and each fill-in they show is
//! done or waits for a member's entry, which wakes it again (wake::wakes,
//! [`wanted`]).

use crate::engine::colls::describe;
use crate::engine::news::wake;
use crate::engine::base::settings;
use crate::engine::base::runtime;
use crate::engine::base::handles::Sim_FT_MPI_Comm;
use crate::engine::colls::describe::{fcode, Desc};
use crate::engine::join::join;
use crate::engine::join::join_types::{Joined, Who};
use crate::engine::{registry::comm, news::logs, news::news, registry::orphans};
use crate::transport::{self, window, MPI_Comm, MPI_Request};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How often a live rank reads the others' logs while some communicator has a
/// dead member (reads are non-blocking; this only bounds their number).
const POLL_EVERY: Duration = Duration::from_millis(1);

static LAST_POLL: Mutex<Option<Instant>> = Mutex::new(None);

/// After a wake-up: per member of a communicator with a dead member, the log read
/// cycle that must be in before a wait may block again (engine::news::logs).
static FRESH: Mutex<Option<Vec<(u32, u64)>>> = Mutex::new(None);

/// [`wake::wakes`] when [`poll`] last looked.
static WAKES_SEEN: AtomicU64 = AtomicU64::new(0);

/// The last [`poll`] stopped at a fill-in that waits for reads of this rank's own
/// (news checks, agreement reads), not for another member's entry.
static BLOCKED: AtomicBool = AtomicBool::new(false);

/// A wait must poll (test its requests, run the service) rather than block in
/// MPI: a fill-in may be owed that nothing would wake it for. After a wake
/// message (news, or a member entered a doomed collective), until the logs read
/// next were read after it.
#[inline]
pub fn wanted() -> bool {
    !comm::calm() && wanted_troubled()
}

fn wanted_troubled() -> bool {
    wake::wakes() != WAKES_SEEN.load(Ordering::Relaxed) || BLOCKED.load(Ordering::Relaxed) || FRESH.lock().unwrap().is_some()
}

/// The other members of `troubled`, as world ranks, each once.
fn member_ranks(troubled: &[Troubled]) -> Vec<u32> {
    let me = runtime::world_rank() as u32;
    let mut ranks: Vec<u32> = troubled.iter().flat_map(|t| t.members.iter().copied()).collect();
    ranks.retain(|w| *w != me);
    ranks.sort_unstable();
    ranks.dedup();
    ranks
}

/// Which live members are known here to have which death's news, and the RMA
/// steps in flight to find out: per (member, dead rank), read the member's dead
/// flag; once set, bump the member's news counter (the flag lands before the dead
/// rank's own bump of that counter, and a member notices news by its counter).
#[derive(Default)]
struct NewsCheck {
    known: std::collections::HashSet<(u32, u32)>,
    steps: Vec<Step>,
}

struct Step {
    member: u32,
    dead: u32,
    /// False: reading the flag; true: bumping the counter.
    bump: bool,
    req: MPI_Request,
    buf: Box<[u64; 2]>,
}

// SAFETY: the host requests inside (pointers with Open MPI) name host objects
// not tied to any thread, and are only touched under CHECK's lock, by the thread
// that calls MPI; the boxed buffers are plain memory owned by their step.
unsafe impl Send for NewsCheck {}

static CHECK: Mutex<Option<NewsCheck>> = Mutex::new(None);

/// Every other live member of `members` has the news of every dead member's death
/// where it looks for news: the dead flag in its window and its news counter
/// moved since (so when its collective completes with this rank's dummy part, it
/// reads the death and reports `MPI_ERR_PROC_FAILED`). Never waits: steps started
/// by an earlier call are tested, missing ones started; false until all are done.
fn all_know(members: &[u32], me: u32) -> bool {
    let dead: Vec<u32> = members.iter().copied().filter(|w| runtime::is_dead(*w)).collect();
    let mut g = CHECK.lock().unwrap();
    let c = g.get_or_insert_with(NewsCheck::default);
    let mut next = Vec::new();
    for mut st in std::mem::take(&mut c.steps) {
        if !crate::transport::test_done(&mut st.req) {
            next.push(st);
        } else if st.bump {
            c.known.insert((st.member, st.dead));
        } else if st.buf[0] != 0 {
            // The flag is there: bump the counter (applied at the target when the
            // request completes, transport::window::rupdate).
            st.bump = true;
            st.buf[0] = 1;
            let (vals, old) = st.buf.split_at_mut(1);
            if let Some(r) = runtime::with(|rt| rt.win.rupdate(st.member as usize, window::NEWS_GEN, vals, true, old)) {
                st.req = r;
                next.push(st);
            }
        }
        // (A flag not set yet: read again below.)
    }
    c.steps = next;
    let mut all = true;
    for &p in members.iter().filter(|p| **p != me && !runtime::is_dead(**p)) {
        for &d in &dead {
            if c.known.contains(&(p, d)) {
                continue;
            }
            all = false;
            if c.steps.iter().any(|st| (st.member, st.dead) == (p, d)) {
                continue;
            }
            let mut buf = Box::new([0u64; 2]);
            if let Some(req) = runtime::with(|rt| rt.win.rget(p as usize, window::DEAD + d as usize, &mut buf[..1])) {
                c.steps.push(Step { member: p, dead: d, bump: false, req, buf });
            }
        }
    }
    all
}

/// Waits for the steps [`all_know`] has in flight (before the window is freed).
///
/// Blocking: never blocks for ever: RMA reads and accumulates, done once their
/// target is inside MPI, where every process is at MPI_Finalize's end (called there).
pub fn settle() {
    if let Some(c) = CHECK.lock().unwrap().as_mut() {
        for st in c.steps.iter_mut() {
            // A request of ours, waited for once.
            transport::request::wait(&mut st.req, None);
        }
        c.steps.clear();
    }
    if let Some(a) = AGREE_READS.lock().unwrap().as_mut() {
        for f in a.flight.iter_mut() {
            // A request of ours, waited for once.
            transport::request::wait(&mut f.req, None);
        }
        a.flight.clear();
    }
}

/// This rank's program is done: it is in [`settle_owed`].
static SETTLING: AtomicBool = AtomicBool::new(false);

/// `MPI_Finalize`, between its two stages (engine::news::news): this rank's program
/// is done, and before it says it logs nothing more (dead ranks may leave once
/// they read that), it makes the fill-ins it owes. Polls (`pause` between
/// rounds runs the service) until every other live member of a communicator
/// with a known dead member is done with its program too, with its log read
/// to the end after that, and every fill-in those logs show is made, or waits
/// for a member's entry that will never come ([`fill`]). A member may enter the
/// collective this rank skipped after this rank reached `MPI_Finalize`: before
/// issue 52 it said it was finalizing at once, and that member stayed inside
/// for ever (tests/protocol_exit.rs, the finalize mutations). No wait when
/// nothing failed.
pub fn settle_owed(mut pause: impl FnMut()) {
    if comm::calm() {
        return;
    }
    SETTLING.store(true, Ordering::Relaxed);
    let n = runtime::world_size();
    loop {
        *LAST_POLL.lock().unwrap() = None;
        poll();
        // poll() reads before it fills in: what it read was acted on.
        let others = member_ranks(&troubled());
        let live = others.iter().filter(|w| (**w as usize) < n && !runtime::is_dead(**w));
        let all_done = logs::with(|cache| live.clone().all(|w| cache.program_read_to_end(*w as usize)));
        if all_done && !BLOCKED.load(Ordering::Relaxed) {
            return;
        }
        pause();
    }
}

/// One communicator that may owe fill-ins, as read from the table.
struct Troubled {
    handle: Sim_FT_MPI_Comm,
    id: u64,
    real: MPI_Comm,
    rank: usize,
    members: Vec<u32>,
    seq: u64,
}

/// The program's next collective on `h` was filled in for already: it returns
/// `MPI_ERR_PROC_FAILED` without entering (engine::entry::hooks::coll_enter).
pub fn claim(h: Sim_FT_MPI_Comm) -> bool {
    if comm::calm() {
        return false;
    }
    let mut owed = false;
    comm::update(h, |s| {
        if s.filled > 0 {
            s.filled -= 1;
            owed = true;
        }
    });
    owed
}

/// From the service (engine::progress::service::poll): reads the logs, fills in.
pub fn poll() {
    if comm::calm() {
        return;
    }
    {
        // First: after a failure every MPI call comes here, and the scan below
        // copies member lists.
        let mut last = LAST_POLL.lock().unwrap();
        if last.is_some_and(|t| t.elapsed() < POLL_EVERY) {
            return;
        }
        *last = Some(Instant::now());
    }
    let troubled = troubled();
    let wakes = wake::wakes();
    let woken = WAKES_SEEN.swap(wakes, Ordering::Relaxed) != wakes;
    if troubled.is_empty() {
        *FRESH.lock().unwrap() = None;
        BLOCKED.store(false, Ordering::Relaxed);
        return;
    }
    // Dead members too: the real entry a fill-in takes its counts from may be in
    // the log of a member that entered the collective and then died (the live
    // ones that skipped it log dummy entries, which carry none: logs::by_member).
    // A dead rank's log no longer changes, so after one full read only its head
    // is read again.
    let ranks = member_ranks(&troubled);
    if woken {
        // Reads in flight may predate the reason for the wake-up: wait for the next.
        *FRESH.lock().unwrap() = Some(logs::with(|cache| cache.next_cycles(&ranks)));
    }
    logs::with(|cache| cache.poll_async(&ranks));
    let mut blocked = false;
    for t in troubled {
        blocked |= fill(t);
    }
    BLOCKED.store(blocked, Ordering::Relaxed);
    let mut fresh = FRESH.lock().unwrap();
    if fresh.as_ref().is_some_and(|need| logs::with(|cache| cache.cycles_done(need))) {
        *fresh = None;
    }
}

/// Communicators with a known dead member, not revoked (a revoke's catch-up
/// covers those), intracommunicators only.
fn troubled() -> Vec<Troubled> {
    let mut v = Vec::new();
    comm::for_each_handle(|h, s| {
        if s.has_failed() && !s.revoked && !s.inter && !s.free_pending {
            v.push(Troubled { handle: h, id: s.id, real: s.real.0, rank: s.rank as usize, members: s.members.clone(), seq: s.seq });
        }
    });
    v
}

/// Some live member that entered blocking collective `d` cannot leave it before
/// every member in `missing` entered (a dead member joins only after every live
/// one): it needs their data, or a root's data that needs them. `missing`: the
/// live members other than this rank that have not entered it.
fn holds_everyone(t: &Troubled, d: &Desc, missing: &[u32]) -> bool {
    use fcode::*;
    let me = runtime::world_rank() as u32;
    let rank_of = |w: u32| t.members.iter().position(|m| *m == w);
    let entered: Vec<usize> = (t.members.iter().enumerate())
        .filter(|(_, w)| **w != me && !runtime::is_dead(**w) && !missing.contains(w))
        .map(|(r, _)| r)
        .collect();
    let root = t.members.get(d.root as usize).copied();
    let root_waits = root.is_some_and(|w| runtime::is_dead(w) || missing.contains(&w));
    !entered.is_empty()
        && match d.fcode {
            BARRIER | ALLREDUCE | ALLGATHER | ALLGATHERV | ALLTOALL | ALLTOALLV | ALLTOALLW | REDUCE_SCATTER | REDUCE_SCATTER_BLOCK => true,
            // Every other member needs the root's data.
            BCAST | SCATTER | SCATTERV => root_waits,
            // The root needs everybody's; it entered and lives.
            REDUCE | GATHER | GATHERV => root.is_some_and(|w| w != me && !root_waits) && entered.contains(&(d.root as usize)),
            // Rank i needs ranks below it.
            SCAN | EXSCAN => {
                let top = missing.iter().filter_map(|w| rank_of(*w)).max().unwrap_or(0);
                entered.iter().any(|r| *r > top)
            }
            _ => false,
        }
}

/// RMA reads of members' [`window::IN_AGREE`] words, per (member, comm id, seq):
/// a read counts only for the collective it was started for.
#[derive(Default)]
struct AgreeReads {
    flight: Vec<AgreeRead>,
    /// (member, comm id, seq) whose read found the member in that agreement.
    seen: std::collections::HashSet<(u32, u64, u64)>,
}

struct AgreeRead {
    /// (member, comm id, seq) it was started for.
    key: (u32, u64, u64),
    req: MPI_Request,
    buf: Box<[u64; 1]>,
}

// SAFETY: the host requests inside (pointers with Open MPI) name host objects
// not tied to any thread, and are only touched under AGREE_READS's lock, by the
// thread that calls MPI; the boxed buffers are plain memory owned by their read.
unsafe impl Send for AgreeReads {}

static AGREE_READS: Mutex<Option<AgreeReads>> = Mutex::new(None);

/// Every member in `missing` (live, has not entered collective `seq` of `id`)
/// was seen, after the others had entered it, waiting in `MPIX_Comm_agree` on
/// that communicator. With [`holds_everyone`], a member in it cannot leave: the
/// agreement needs the members held in the collective, and they need this one.
/// So it stays in the agreement, polling, and fills in as well: this rank may
/// join the blocking collective without waiting for its entry (two members that
/// both skipped it and went to the agreement). Never waits.
fn in_agree(id: u64, seq: u64, missing: &[u32]) -> bool {
    let mut g = AGREE_READS.lock().unwrap();
    let a = g.get_or_insert_with(AgreeReads::default);
    let mut next = Vec::new();
    for mut f in std::mem::take(&mut a.flight) {
        if !crate::transport::test_done(&mut f.req) {
            next.push(f);
        } else if f.buf[0] == f.key.1 {
            a.seen.insert(f.key);
        }
    }
    a.flight = next;
    a.seen.retain(|(_, i, s)| *i != id || *s >= seq);
    let mut all = true;
    for &p in missing {
        let key = (p, id, seq);
        if a.seen.contains(&key) {
            continue;
        }
        all = false;
        if a.flight.iter().any(|f| f.key == key) {
            continue;
        }
        let mut buf = Box::new([0u64; 1]);
        if let Some(req) = runtime::with(|rt| rt.win.rget(p as usize, window::IN_AGREE, &mut buf[..])) {
            a.flight.push(AgreeRead { key, req, buf });
        }
    }
    all
}

/// Fills in, in order, for the doomed collectives on `t` the others entered.
/// True when it stopped at one that waits for reads of this rank's own.
fn fill(mut t: Troubled) -> bool {
    let me = runtime::world_rank() as u32;
    loop {
        let s = t.seq + 1;
        let Some((d, per, missing)) = logs::with(|cache| {
            // Only this communicator's members: the parts of an MPI_Comm_split share
            // its id (each process is in one of them), so others' entries are here too.
            let found: std::collections::HashMap<u32, Desc> = cache
                .get(t.id, s)?
                .iter()
                .filter(|(w, _)| t.members.contains(w) && **w != me)
                .map(|(w, d)| (*w, d.clone()))
                .collect();
            let (d, per) = logs::by_member(&found, &t.members)?;
            // A member whose entry left its log unread but that went on past it
            // is not elsewhere, if any entry describes the collective
            // (docs/DESIGN.md, "The log's limit"); else a gap is reported.
            let alike = describe::any_entry_describes(d.fcode);
            match cache.hole(t.id, s, &t.members) {
                Some(w) if !alike => cache.report_hole(t.id, s, w, "fill-in"),
                _ => {}
            }
            let missing: Vec<u32> = (t.members.iter().enumerate())
                .filter(|(r, w)| *r != t.rank && !runtime::is_dead(**w) && !found.contains_key(w))
                .filter(|(_, w)| !(alike && cache.went_on(t.id, s, **w)))
                .map(|(_, w)| *w)
                .collect();
            Some((d, per, missing))
        }) else {
            return false;
        };
        if logs::all_dead_entered_seq(t.handle, s) {
            // Every dead member's part was real: the live ones will all come.
            return false;
        }
        if d.fcode & fcode::NB == 0 && !missing.is_empty() {
            // A blocking join would wait for a member that may be elsewhere. Its
            // entry wakes this rank; a member held in an agreement does not. A
            // member whose program is done (in MPI_Finalize, settle_owed) is not
            // elsewhere: when this rank's is done too, each fills in as well.
            let done = SETTLING.load(Ordering::Relaxed) && logs::with(|cache| missing.iter().all(|w| cache.program_read_to_end(*w as usize)));
            let holds = holds_everyone(&t, &d, &missing);
            if !done && !(holds && in_agree(t.id, s, &missing)) {
                return holds;
            }
        }
        if d.fcode & !fcode::NB == fcode::OPAQUE {
            return false;
        }
        if !all_know(&t.members, me) {
            return true;
        }
        news::log_entered(t.id, s, &Desc { fcode: d.fcode | describe::DUMMY, ..Desc::default() });
        comm::update(t.handle, |st| {
            st.seq = s;
            st.filled += 1;
        });
        if settings::debug() {
            crate::say!("MPIFT fill-in {}: comm {:x} #{} f{}", runtime::world_rank(), t.id, s, d.fcode);
        }
        let who = Who { real: t.real, rank: t.rank, size: t.members.len(), id: t.id, members: &t.members, seq: s, standin: false };
        // Blocking: never blocks for ever: a blocking form only once every other
        // live member is inside it (`missing` empty above), or held in the
        // agreement it holds (in_agree), or done with its program like this rank
        // (settle_owed); its dead members owe it and join in their turns
        // (engine::dead::turns). A non-blocking form becomes an orphan, kept in flight.
        if let Joined::Pending(p) = join::join(&who, &d, &per) {
            let (req, keep) = p.into_parts();
            orphans::orphan(req, Some(keep), t.handle, false);
        }
        logs::with(|cache| cache.prune(t.id, s));
        t.seq = s;
    }
}
