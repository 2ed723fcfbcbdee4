//! `Sim_FT_kill_me` and the life of a simulated-dead rank (thesis §5.3; GUIDE
//! principle 3).
//!
//! A dead rank never returns to the program. In order:
//! 1. waits the simulated detection delay (`SIM_FT_TIMEOUT`);
//! 2. starts telling every process, by atomic RMA updates of its window region, how
//!    many messages it sent there per communicator, then that it is dead, then bumps
//!    its news counter and wakes it — all processes concurrently, each as fast as it
//!    takes them (transport::script: one computing outside MPI delays nobody else);
//! 3. serves until every live process has entered `MPI_Finalize`: joins, with dummy
//!    data, each collective once every live member has logged it (so a join never
//!    waits for a member that needs this rank elsewhere) and has the news (so no
//!    survivor is released by a dummy before it can see the death; its parts in
//!    MPIFT's own barrier and allreduce then run alongside everything else,
//!    engine::standin, so no such join holds the others), progresses its own
//!    outstanding requests (not leaving before its non-blocking collectives that
//!    the other members entered, or joined with dummies, complete: those joins
//!    need its part), and drains messages sent to it (which also releases
//!    senders blocked in rendezvous sends). It sleeps with exponential back-off
//!    (yielding for 200 µs after activity, then sleeping 50 µs doubling up to 20 ms,
//!    2 ms while a part or a turn waits)
//!    while nothing happens, so it does not keep a core busy;
//! 4. sends its part of the run report (src/inject/report.rs) with the others,
//!    frees the window with them, finalizes, and exits with status 0.

use crate::engine::describe::{fcode, Desc};
use crate::engine::join::{self, Joined, Pending, Who};
use crate::engine::{comm, ft, logs, news, observer, request};
use crate::transport::script::{self, Scripts, Update};
use crate::transport::window;
use crate::transport::{self, MPI_Comm, MPI_Request};
use std::collections::HashMap;
use std::os::raw::c_int;
use std::sync::Mutex;
use std::time::Duration;

/// What a zombie keeps per communicator it is in.
struct ZComm {
    id: u64,
    real: MPI_Comm,
    rank: usize,
    members: Vec<u32>,
    /// An intercommunicator's remote group (world ranks, [`comm::FOREIGN`]
    /// outside this world); empty otherwise.
    remote: Vec<u32>,
    inter: bool,
    seq: u64,
    /// `seq` when this rank died: a join since ([`join_next`]) means every member
    /// not known dead had entered every collective up to `alive_seq`.
    alive_seq: u64,
}

/// A request this rank started alive and has not seen complete; a non-blocking
/// collective's communicator id and number.
struct Own {
    req: MPI_Request,
    coll: Option<(u64, u64)>,
}

impl ZComm {
    /// World ranks of the members, an intercommunicator's remote group included
    /// (another job's members, [`comm::FOREIGN`], excepted).
    fn everyone(&self) -> impl Iterator<Item = u32> + '_ {
        let remote = if self.inter { &self.remote[..] } else { &[] };
        self.members.iter().chain(remote.iter()).copied().filter(|w| *w != comm::FOREIGN)
    }

    /// Every member but this rank that is not known dead has an entry among
    /// `found` (the members' log entries of one collective): it entered it.
    fn entered_by_the_others(&self, found: Option<&HashMap<u32, Desc>>) -> bool {
        let me = self.members[self.rank];
        self.everyone().all(|w| w == me || news::is_dead(w) || found.is_some_and(|f| f.contains_key(&w)))
    }

    /// World ranks that point-to-point ranks name (comm::CommState::peer_world).
    fn peers(&self) -> &[u32] {
        if self.inter {
            &self.remote
        } else {
            &self.members
        }
    }
}
// SAFETY: the real handle (a pointer with Open MPI) names a host object not tied
// to any thread; a ZComm lives in NEW_COMMS or the serve loop, and is only used
// by the thread that calls MPI.
unsafe impl Send for ZComm {}

/// `Sim_FT_kill_me`: never returns.
pub fn kill_me() -> ! {
    comm::troubled();
    // Pending iagree/ishrink: their requests end here; a shrink goes on read-only
    // (this rank may be in the new communicator, engine::ft).
    ft::on_death();
    // Outstanding requests of the program: progressed below until complete.
    let mut own: Vec<Own> = request::take_all()
        .into_iter()
        .map(|(req, coll)| Own { req, coll: coll.and_then(|(h, seq)| Some((comm::read(h, |s| s.id)?, seq))) })
        .collect();
    let comms: Vec<ZComm> = comm::snapshot()
        .into_iter()
        .map(|st| ZComm {
            id: st.id,
            real: st.real.0,
            rank: st.rank as usize,
            remote: st.remote,
            inter: st.inter,
            members: st.members,
            seq: st.seq,
            alive_seq: st.seq,
        })
        .collect();
    let sent = comm::sent_summary();
    news::with(|rt| rt.zombie = true);
    std::thread::sleep(news::timeout());
    let news_out = announce(&sent);
    if observer::verbose() >= 3 {
        crate::say!("MPIFT: rank {}: dead; telling every process, serving", news::world_rank());
    }
    serve(comms, &mut own, news_out);
    observer::dead_done();
    if observer::verbose() >= 3 {
        crate::say!("MPIFT: rank {}: every live rank is finalizing; dead rank finalizes", news::world_rank());
    }
    observer::finalize();
    news::stop();
    logs::clear();
    transport::env::finalize();
    // From an atexit handler (MPIFT_EXIT_KILLS) the process must end with _exit.
    observer::end_process(0)
}

/// Step 2, started: per peer, its sent counts, then the death flag, then the news
/// counter, each applied before the next (transport::script). Returns the
/// sequences in flight; [`serve`] completes them and wakes each peer as its news
/// lands, so a peer computing outside MPI delays nobody else's news.
fn announce(sent: &[(u64, u32, u32, u32)]) -> Scripts {
    let mut s = Scripts::default();
    let Some((me, n, at_sent)) = news::with(|rt| {
        let me = rt.win.me;
        rt.dead[me] = true;
        (me, rt.win.n, rt.win.sent(me))
    }) else {
        return s;
    };
    for p in (0..n).filter(|p| *p != me) {
        let mut words = vec![0u64; 2 * window::SENT_SLOTS];
        let mut k = 0;
        // Per communicator: the messages sent to p (low half) and received from p
        // while alive (high half, see [`received_alive`]).
        // Communicators with messages sent to p first: a receiver needs those.
        let mine = sent.iter().filter(|e| e.1 as usize == p);
        for (id, _, count, got) in mine.clone().filter(|e| e.2 > 0).chain(mine.filter(|e| e.2 == 0)) {
            if k < window::SENT_SLOTS {
                words[2 * k] = *id;
                words[2 * k + 1] = *count as u64 | (*got as u64) << 32;
                k += 1;
            }
        }
        s.add(
            p,
            script::fixed(vec![
                Update { at: at_sent, vals: words, sum: false },
                Update { at: window::DEAD + me, vals: vec![1], sum: false },
                Update { at: window::NEWS_GEN, vals: vec![1], sum: true },
            ]),
        );
    }
    s
}

/// A dummy join still in flight: its communicator id, number and function code
/// (for the stuck report).
struct InFlight {
    p: Pending,
    what: (u64, u64, u32),
}

/// Step 3.
fn serve(mut comms: Vec<ZComm>, own: &mut Vec<Own>, mut news_out: Scripts) {
    let mut pending: Vec<InFlight> = Vec::new();
    let mut idle = Duration::from_micros(50);
    let mut last_busy = std::time::Instant::now();
    let n = news::world_size();
    let me = news::world_rank();
    let everyone: Vec<u32> = (0..n as u32).filter(|p| *p as usize != me).collect();
    let mut scratch = vec![0u8; 1 << 16];
    // Peers that have this death's news in their memory.
    let mut told = vec![false; n];
    told[me] = true;
    let mut confirm = None;
    let mut stuck = Stuck::default();
    loop {
        let mut busy = false;
        news::refresh();
        news::drain_wakes();
        // This death's news, to each peer as soon as it can take it.
        for p in news::progress_scripts(&mut news_out) {
            news::wake(p);
            told[p] = true;
            busy = true;
        }
        busy |= progress_requests(own, &mut pending);
        // Its parts in MPIFT's own collectives, all at once.
        busy |= crate::engine::standin::progress();
        // Shrinks this rank had started alive, and the communicators they make.
        busy |= ft::zombie_progress();
        // Revokes this rank made alive and had not finished announcing (the last
        // steps run at the revoker's next MPI call, which may be where it died):
        // the others wait for their horizons (ULFM's revoke reaches everyone even
        // if its initiator dies).
        busy |= crate::engine::revoke::progress_jobs();
        comms.append(&mut NEW_COMMS.lock().unwrap());
        // Messages sent to this rank: receive and drop them, but only from peers
        // that already have this death's news, so a sender whose message only the
        // drain took learns of the death before its send completes (and reports
        // it failed, engine::complete).
        let all_told = told.iter().all(|t| *t);
        for c in &comms {
            busy |= drain_comm(c, &told, all_told, &mut scratch);
        }
        // Collectives to join.
        // New log entries keep the loop quick (the reads take a few rounds).
        busy |= logs::with(|cache| cache.poll_async(&everyone));
        let (joined, owed) = join_ready(&mut comms, &told, &mut pending);
        busy |= joined;
        // Not before every collective the live ranks entered is joined (`owed`,
        // with their logs read to the end): another dead rank may sit in one
        // (the dead root of a Reduce whose live members are long gone) and it
        // completes only with this rank's part. With every process dead, a
        // dummy join whose other members are dead ranks that already left can
        // never complete, and nobody needs it.
        let finalizing = all_live_finalizing(me, n, &mut confirm);
        stuck.check(finalizing, || {
            let needed = !nothing_needed(&comms, &pending, own, me, n);
            let colls: Vec<_> = own.iter().filter_map(|o| o.coll).collect();
            let joins: Vec<_> = pending.iter().map(|f| f.what).collect();
            format!("news out done {}, joins owed {owed}, pending {joins:x?}, needed {needed}; own requests {} (collectives {colls:x?})", news_out.done(), own.len())
        });
        if finalizing
            && news_out.done()
            && !ft::zombie_pending()
            && !crate::engine::revoke::jobs_pending()
            && !owed
            && nothing_needed(&comms, &pending, own, me, n)
        {
            logs::with(|cache| cache.settle());
            crate::engine::turns::settle();
            break;
        }
        pause(busy, &mut idle, &mut last_busy);
    }
    for mut o in own.drain(..) {
        transport::p2p::cancel(&mut o.req);
        transport::request::free(&mut o.req);
    }
    // Joins left pending (nobody alive): the host may still write their buffers.
    std::mem::forget(pending);
}

/// Own and dummy non-blocking operations: tested, the completed ones dropped.
/// True if a dummy join completed.
fn progress_requests(own: &mut Vec<Own>, pending: &mut Vec<InFlight>) -> bool {
    own.retain_mut(|o| !transport::test_done(&mut o.req));
    let mut busy = false;
    pending.retain_mut(|f| {
        let done = transport::test_done(&mut f.p.req);
        busy |= done;
        !done
    });
    busy
}

/// With `MPIFT_DEBUG` (`stuck` included): a dead rank that has not left 5 s
/// after every live rank began finalizing says once which of [`serve`]'s
/// conditions to leave holds (a dead rank that never leaves is a hang of the
/// whole job).
#[derive(Default)]
struct Stuck {
    since: Option<std::time::Instant>,
    said: bool,
}

impl Stuck {
    fn check(&mut self, finalizing: bool, state: impl FnOnce() -> String) {
        if !news::debug_stuck() || self.said {
            return;
        }
        if !finalizing {
            self.since = None;
            return;
        }
        let since = *self.since.get_or_insert_with(std::time::Instant::now);
        if since.elapsed() > Duration::from_secs(5) {
            self.said = true;
            let (ft, jobs) = (ft::zombie_pending(), crate::engine::revoke::jobs_pending());
            crate::say!(
                "MPIFT: rank {}: dead, every live rank finalizing for 5 s, not leaving: {}; agreement pending {ft}, revoke jobs {jobs}",
                news::world_rank(),
                state()
            );
        }
    }
}

/// Its joins left pending need not complete: none is left, or every process is
/// dead (nobody needs them); with every process dead, no other dead rank is
/// inside a blocking join that needs this one (protocol::turns: may_abandon).
/// Nor may a non-blocking collective it started alive be left running once every
/// member not known dead has entered it ([`entered_by_all`]): the other dead
/// members then join it with dummies, which complete only with this rank's part.
fn nothing_needed(comms: &[ZComm], pending: &[InFlight], own: &[Own], me: usize, n: usize) -> bool {
    if !nobody_alive(me, n) {
        return pending.is_empty() && !own.iter().filter_map(|o| o.coll).any(|(id, s)| entered_by_all(comms, id, s));
    }
    crate::engine::turns::may_abandon(&comms.iter().map(|c| c.id).collect::<Vec<_>>())
}

/// Every member of communicator `id` not known dead has entered its collective
/// `s` (as [`next_ready`] asks before a dummy joins): known once this rank joined a
/// later one there, or from the members' logs.
fn entered_by_all(comms: &[ZComm], id: u64, s: u64) -> bool {
    let Some(c) = comms.iter().find(|c| c.id == id) else { return false };
    if c.seq > c.alive_seq {
        return true;
    }
    // This rank entered it alive; with every other member dead, nobody else has to.
    logs::with(|cache| c.entered_by_the_others(cache.get(id, s)))
}

/// Every process of the job is dead (and no spare can replace one).
fn nobody_alive(me: usize, n: usize) -> bool {
    !crate::engine::process::spares_on() && (0..n).all(|p| p == me || news::is_dead(p as u32))
}

/// Between two rounds of the serve loop: on at once after work, a yield right
/// after it (the next collective usually follows at once; a sleep costs a
/// scheduler tick when oversubscribed), then naps that double while idle.
fn pause(busy: bool, idle: &mut Duration, last_busy: &mut std::time::Instant) {
    if busy {
        *idle = Duration::from_micros(50);
        *last_busy = std::time::Instant::now();
    } else if last_busy.elapsed() < Duration::from_micros(200) {
        std::thread::yield_now();
    } else {
        std::thread::sleep(*idle);
        // A part waiting for a partner or a turn: naps as short as a blocking
        // wait's (revoke::Idle), so a dead rank slows no round down more than before.
        let most = if crate::engine::standin::pending() || crate::engine::turns::wishing() { 2 } else { 20 };
        *idle = (*idle * 2).min(Duration::from_millis(most));
    }
}

/// Receives and drops the messages sent to this dead rank on `c` by peers that
/// have its death's news (all of them once `all_told`), except those of an
/// `MPI_Intercomm_create` it has yet to join as a leader ([`held`]). True if it
/// dropped one.
fn drain_comm(c: &ZComm, told: &[bool], all_told: bool, scratch: &mut Vec<u8>) -> bool {
    let peers = c.peers();
    let told_peer = |r: usize| peers.get(r).is_some_and(|w| (*w as usize) < told.len() && told[*w as usize]);
    let mut busy = false;
    if all_told {
        // One wildcard loop while nothing is held (the usual case).
        loop {
            let Some((src, tag)) = comm::probe(c.real, transport::any_source()) else { return busy };
            if held(c, src, tag) {
                break;
            }
            busy |= comm::drop_one(c.real, src, tag, scratch);
        }
    }
    // Source by source: a held message stops only its own source's queue.
    for r in (0..peers.len()).filter(|r| told_peer(*r)) {
        while let Some((src, tag)) = comm::probe(c.real, r as c_int) {
            if held(c, src, tag) {
                break;
            }
            busy |= comm::drop_one(c.real, src, tag, scratch);
        }
    }
    busy
}

/// A message from `src` with `tag` on `c` that an `MPI_Intercomm_create` this dead
/// rank has yet to join needs: Open MPI's leaders exchange their groups with
/// point-to-point messages on the peer communicator under the program's tag
/// (`ompi_comm_get_rprocs`), and the other leader may send before this rank's own
/// group has entered and it joins as the local leader (calls::comm_ctor::join);
/// dropped, the join then failed or waited forever (2 of 316 kill points of
/// examples/inter_loop.c on Open MPI 4.1). Held while the sender's log shows more
/// such creations naming this rank, this communicator and this tag than this rank
/// has joined. The sender logs its entry before it sends, so its log is read
/// again after each message was seen and before it is judged (one RMA read of
/// the log head, more only if it grew; Open MPI's on one node need no progress
/// at the sender). MPICH exchanges on a context of its own, which no probe
/// matches: nothing to hold there.
fn held(c: &ZComm, src: c_int, tag: c_int) -> bool {
    if c.inter || transport::host_is_mpich() {
        return false;
    }
    let Some(&w) = c.peers().get(src as usize) else { return false };
    if w == comm::FOREIGN {
        return false;
    }
    let (id, me) = (c.id, c.rank as u64);
    let named = logs::with(|cache| {
        cache.poll(&[w]);
        cache.count_of(w, |d| {
            d.fcode & !logs::DUMMY == fcode::INTERCOMM_CREATE && d.extra[2] == id && d.extra[0] == me && d.extra[1] == tag as u32 as u64
        })
    });
    named as u32 > crate::engine::ctor_join::joined_as_leader(id, src, tag)
}

/// A collective this dead rank can join now: the descriptor and the members'
/// real entries.
type Ready = (Desc, Vec<Option<Desc>>);

/// Joins the collectives ready on any of `comms`. Those whose join does not
/// block (non-blocking forms, MPIFT's own collectives) go at once: each
/// communicator's in its order (MPI's only matching rule), communicators in any
/// order, since none waits. A blocking one only when this rank's turn allows
/// (engine::turns): two dead ranks inside blocking joins of two communicators
/// could each hold the other's for ever, whatever order each chose.
/// A turn is asked for only once every process has this death's news (`told`):
/// the others read the turns of the ranks they know dead, so one that has not
/// heard of this death could enter a join of another communicator unseen.
/// Returns whether it joined any, and whether one is still ready but waits for a
/// turn.
fn join_ready(comms: &mut [ZComm], told: &[bool], pending: &mut Vec<InFlight>) -> (bool, bool) {
    let mut busy = false;
    loop {
        let mut ready: Vec<(usize, Ready)> = comms.iter().enumerate().filter_map(|(i, c)| next_ready(c, told).map(|r| (i, r))).collect();
        // Nobody enters a blocking join a dead rank that left for good is needed in.
        ready.retain(|(i, r)| !join::blocks(&r.0) || !comms[*i].everyone().any(crate::engine::turns::abandoned));
        let free = ready.iter().position(|(_, r)| !join::blocks(&r.0));
        let blocking = free.is_none();
        let k = match free {
            Some(k) => k,
            None => {
                let owed: Vec<u64> = ready.iter().map(|(i, _)| comms[*i].id).collect();
                if !owed.is_empty() && !told.iter().all(|t| *t) {
                    // No turn before every process has this death's news: a rank
                    // that has not could take its turn without reading this
                    // one's (engine::turns reads the ranks it knows dead).
                    return (busy, true);
                }
                let Some(id) = crate::engine::turns::may_enter(&owed) else { return (busy, !owed.is_empty()) };
                ready.iter().position(|(i, _)| comms[*i].id == id).unwrap_or(0)
            }
        };
        let (i, (d, per)) = ready.swap_remove(k);
        busy = true;
        if let Joined::Pending(p) = join_next(&mut comms[i], &d, &per) {
            pending.push(InFlight { p, what: (comms[i].id, comms[i].seq, d.fcode) });
        }
        if blocking {
            crate::engine::turns::left();
        }
    }
}

/// The next collective this dead rank must join on `c`, if it can now.
/// Never before every member has this death's news (`told`): a member released by
/// the dummy contribution must see the death when its call returns, and report
/// `MPI_ERR_PROC_FAILED` rather than success with dummy data. A member that logged
/// the collective is inside MPI, so its news lands promptly.
fn next_ready(c: &ZComm, told: &[bool]) -> Option<Ready> {
    // An intercommunicator's collective involves both groups.
    if c.everyone().any(|w| !told.get(w as usize).copied().unwrap_or(true)) {
        return None;
    }
    let s = c.seq + 1;
    logs::with(|cache| {
        let found = cache.get(c.id, s);
        if news::debug() {
            crate::say!("MPIFT zombie {}: comm {:x} waits for #{} found {:?}", news::world_rank(), c.id, s, found.map(|f| f.keys().collect::<Vec<_>>()));
        }
        let found = found?;
        // Every member not known dead must have logged it: then nobody in it waits
        // for a member that is elsewhere, and the join completes at once.
        if !c.entered_by_the_others(Some(found)) {
            return None;
        }
        logs::by_member(found, &c.members)
    })
}

/// Joins `c`'s next collective, `d` (from [`next_ready`]).
fn join_next(c: &mut ZComm, d: &Desc, per: &[Option<Desc>]) -> Joined {
    let s = c.seq + 1;
    let who = Who { real: c.real, rank: c.rank, size: c.members.len(), id: c.id, members: &c.members, seq: s, standin: true };
    let j = join::join(&who, d, per);
    if matches!(j, Joined::Unsupported) && d.fcode & !fcode::NB != fcode::OPAQUE {
        crate::say!("MPIFT: dead rank cannot join collective {} on a communicator", d.fcode);
    }
    c.seq = s;
    logs::with(|cache| cache.prune(c.id, s));
    j
}

/// Communicators made after this rank died (a shrink it had started alive,
/// engine::ft), for the serve loop to take up.
static NEW_COMMS: std::sync::Mutex<Vec<ZComm>> = std::sync::Mutex::new(Vec::new());

/// A shrink this dead rank had started made a communicator with it inside:
/// serve it like the others. `live`: the old ranks in it, `members`: the old
/// communicator's world ranks, `old_rank`: this rank's old rank.
pub fn adopt_shrunk(real: MPI_Comm, id: u64, live: &[u32], members: &[u32], old_rank: usize) {
    let rank = live.iter().position(|r| *r as usize == old_rank).expect("in the new communicator");
    let members = live.iter().map(|r| members[*r as usize]).collect();
    NEW_COMMS.lock().unwrap().push(ZComm { id, real, rank, members, remote: Vec::new(), inter: false, seq: 0, alive_seq: 0 });
}

/// Every live process is finalizing. With spares (calls::spares) a waiting
/// spare's word says finalizing and a spawn that takes it clears it, so a word
/// read before that must not count: the answer is yes only once read cycles
/// that started after the first yes (`confirm`) have finished and still say so.
fn all_live_finalizing(me: usize, n: usize, confirm: &mut Option<Vec<(u32, u64)>>) -> bool {
    let live: Vec<u32> = (0..n as u32).filter(|p| *p as usize != me && !news::is_dead(*p)).collect();
    if !logs::with(|cache| live.iter().all(|p| cache.read_to_end(*p as usize))) {
        *confirm = None;
        return false;
    }
    if !crate::engine::process::spares_on() {
        return true;
    }
    match confirm {
        None => {
            *confirm = Some(logs::with(|cache| cache.next_cycles(&live)));
            false
        }
        Some(need) => logs::with(|cache| cache.cycles_done(need)),
    }
}

/// Every message dead member `peer` of `c` sent here before dying has been
/// received (its count is in this process's window; no record counts as none).
pub fn all_received_from(c: &comm::CommState, peer: usize) -> bool {
    let Some(w) = c.peer_world(peer) else { return true };
    c.recvd.get(peer).copied().unwrap_or(0) >= sent_by_dead(w, c.id).unwrap_or(0)
}

/// How long a receive from a dead rank waits for the messages that rank sent
/// before dying and that have not been received yet ([`all_received_from`] is
/// false): some may carry tags no receive will ever ask for, and must not keep a
/// receive with another tag waiting forever. Messages already sent arrive within
/// microseconds on one node; this is ULFM's detection delay in MPIFT's terms.
const IN_FLIGHT_GRACE: std::time::Duration = std::time::Duration::from_millis(100);

/// When this process first asked whether a dead rank's messages are all in.
static FIRST_ASKED: Mutex<Vec<(u32, std::time::Instant)>> = Mutex::new(Vec::new());

/// A receive from dead member `peer` of `c` that is still pending can fail: every
/// message the dead rank sent here has been received, or the grace for those in
/// flight is over (a posted receive would already have matched one that arrived).
pub fn receive_can_fail(c: &comm::CommState, peer: usize) -> bool {
    all_received_from(c, peer) || grace_over(c.members[peer])
}

fn grace_over(w: u32) -> bool {
    let mut asked = FIRST_ASKED.lock().unwrap();
    let t = match asked.iter().find(|(x, _)| *x == w) {
        Some((_, t)) => *t,
        None => {
            asked.push((w, std::time::Instant::now()));
            return false;
        }
    };
    t.elapsed() >= IN_FLIGHT_GRACE.max(news::timeout())
}

/// The count-of-messages record a dead rank left for this process about `comm`:
/// (messages it sent here, messages it received from here while alive).
fn record_of_dead(dead_world: u32, comm_id: u64) -> Option<(u32, u32)> {
    news::with(|rt| {
        let at = rt.win.sent(dead_world as usize);
        for k in 0..window::SENT_SLOTS {
            if rt.win.load(at + 2 * k) == comm_id {
                let w = rt.win.load(at + 2 * k + 1);
                return Some((w as u32, (w >> 32) as u32));
            }
        }
        None
    })
    .flatten()
}

fn sent_by_dead(dead_world: u32, comm_id: u64) -> Option<u32> {
    record_of_dead(dead_world, comm_id).map(|(sent, _)| sent)
}

/// How many messages from this process the dead member `peer` of `c` had
/// received while alive: a send numbered above it was only drained, never
/// delivered, and fails with `MPI_ERR_PROC_FAILED` (engine::complete). A record
/// that does not fit the dead rank's slots reads as 0 (the safe side).
pub fn received_alive(c: &comm::CommState, peer: usize) -> u32 {
    c.peer_world(peer).and_then(|w| record_of_dead(w, c.id)).map_or(0, |(_, got)| got)
}
