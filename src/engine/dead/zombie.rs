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
//!    engine::join::standin, so no such join holds the others), progresses its own
//!    outstanding requests (not leaving before its non-blocking collectives that
//!    the other members entered, or joined with dummies, complete: those joins
//!    need its part), and drains messages sent to it (which also releases
//!    senders blocked in rendezvous sends). It sleeps with exponential back-off
//!    (yielding for 200 µs after activity, then sleeping 50 µs doubling up to 20 ms,
//!    2 ms while a part or a turn waits)
//!    while nothing happens, so it does not keep a core busy;
//! 4. sends its part of the run report (src/inject/report.rs) with the others,
//!    frees the window with them, finalizes, and exits with status 0.

use crate::engine::colls::describe;
use crate::engine::adversary::late;
use crate::engine::news::wake;
use crate::engine::base::settings;
use crate::engine::base::runtime;
use crate::engine::dead::dead_comm::{self, InFlight, Own, ZComm};
use crate::engine::dead::dead_exit::Leaving;
use crate::engine::colls::describe::{fcode, Desc};
use crate::engine::join::join;
use crate::engine::join::join_types::{Joined, Who};
use crate::engine::base::backoff::Backoff;
use crate::engine::base::observer::{self, DeadStatus};
use crate::engine::{registry::comm, dead::dead_drain, agree::ft, news::logs, news::news, registry::request};
use crate::protocol::exit::Exit;
use crate::transport::script::{self, Scripts, Update};
use crate::transport::window;
use crate::transport;
use std::time::Duration;
use std::collections::HashMap;

/// `Sim_FT_kill_me`: never returns.
pub fn kill_me() -> ! {
    comm::troubled();
    // Pending iagree/ishrink: their requests end here; a shrink goes on read-only
    // (this rank may be in the new communicator, engine::agree::ft).
    ft::on_death();
    // Outstanding requests of the program: progressed below until complete.
    let mut own: Vec<Own> = request::take_all()
        .into_iter()
        .map(|(req, coll, p2p)| Own { req, coll: coll.and_then(|(h, seq)| Some((comm::read(h, |s| s.id)?, seq))), p2p })
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
            creations: st.creations,
        })
        .collect();
    let sent = comm::sent_summary();
    runtime::with(|rt| rt.zombie = true);
    std::thread::sleep(settings::timeout());
    let news_out = announce(&sent);
    if observer::verbose() >= 3 {
        crate::say!("MPIFT: rank {}: dead; telling every process, serving", runtime::world_rank());
    }
    serve(comms, &mut own, news_out);
    if observer::verbose() >= 3 {
        crate::say!("MPIFT: rank {}: every live rank is finalizing; dead rank finalizes", runtime::world_rank());
    }
    observer::dead_status(&DeadStatus::Leaving("report"));
    observer::finalize();
    observer::dead_status(&DeadStatus::Leaving("win-free"));
    news::stop();
    observer::dead_done();
    logs::clear();
    // Blocking: never blocks for ever: as lifecycle::finalize's, which every live
    // rank reached before serve() let this dead rank out (protocol::exit).
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
    let Some((me, n, at_sent)) = runtime::with(|rt| {
        let me = rt.win.me;
        rt.dead[me] = true;
        (me, rt.win.n, rt.win.sent(me))
    }) else {
        return s;
    };
    let start = std::time::Instant::now();
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
    // The adversarial mode's per-observer detection latency.
    s.hold(|p| late::death_news(p).map(|d| start + d));
    s
}

/// Step 3.
fn serve(mut comms: Vec<ZComm>, own: &mut Vec<Own>, mut news_out: Scripts) {
    let mut pending: Vec<InFlight> = Vec::new();
    let mut backoff = Backoff::new(Duration::from_micros(200), Duration::from_micros(50), Duration::from_millis(20));
    let n = runtime::world_size();
    let me = runtime::world_rank();
    let everyone: Vec<u32> = (0..n as u32).filter(|p| *p as usize != me).collect();
    let mut scratch = vec![0u8; 1 << 16];
    // Peers that have this death's news in their memory.
    let mut told = vec![false; n];
    told[me] = true;
    let mut leaving = Leaving::default();
    loop {
        let mut busy = false;
        news::refresh();
        wake::drain_wakes();
        // This death's news, to each peer as soon as it can take it.
        for p in news::progress_scripts(&mut news_out) {
            wake::wake(p);
            told[p] = true;
            busy = true;
        }
        busy |= progress_requests(own, &mut pending);
        // Its parts in MPIFT's own collectives, all at once.
        busy |= crate::engine::join::standin::progress();
        // Shrinks this rank had started alive, and the communicators they make.
        busy |= ft::zombie_progress();
        // Revokes this rank made alive and had not finished announcing (the last
        // steps run at the revoker's next MPI call, which may be where it died):
        // the others wait for their horizons (ULFM's revoke reaches everyone even
        // if its initiator dies).
        busy |= crate::engine::revoke::revoke::progress_jobs();
        comms.extend(ft::take_shrunk().into_iter().map(dead_comm::adopt_shrunk));
        comms.extend(dead_comm::taken_up());
        // Messages sent to this rank: receive and drop them, but only from peers
        // that already have this death's news, so a sender whose message only the
        // drain took learns of the death before its send completes (and reports
        // it failed, engine::complete::complete).
        let all_told = told.iter().all(|t| *t);
        for c in &comms {
            busy |= dead_drain::drain_comm(c, &told, all_told, &mut scratch);
        }
        // Collectives to join (the logs of every other process, the dead
        // included: one that died after this rank may have started one alive).
        // New log entries keep the loop quick (the reads take a few rounds).
        busy |= logs::with(|cache| cache.poll_async(&everyone));
        let (joined, owed) = join_ready(&mut comms, &told, &mut pending);
        busy |= joined;
        report_holes(&comms);
        // The exit rule (protocol::exit): every log final, nothing it can
        // join, no join of its in flight, no own collective the others need.
        let chores_done = news_out.done() && !ft::zombie_pending() && !crate::engine::revoke::revoke::jobs_pending();
        let go = match leaving.decide(&comms, &pending, own, &owed, chores_done) {
            Exit::Go => true,
            Exit::AskTurns => crate::engine::dead::turns::may_abandon(&comms.iter().map(|c| c.id).collect::<Vec<_>>()),
            Exit::Stay(_) => false,
        };
        if go {
            observer::dead_status(&DeadStatus::Leaving("settle"));
            logs::with(|cache| cache.settle());
            crate::engine::dead::turns::settle();
            break;
        }
        if busy {
            backoff.reset();
        } else {
            backoff.pause_capped(longest_nap);
        }
    }
    // Point-to-point requests still running are cancelled and freed. A
    // collective one is left as it is (MPI-3.1 §5.12: no cancel, no free): the
    // rule let this rank go, so no member not known dead entered it or will
    // (docs/DESIGN.md, "When a dead rank leaves"). Joins left pending (nobody
    // alive) likewise: the host may still write their buffers.
    for mut o in own.drain(..).filter(|o| o.p2p) {
        transport::p2p::cancel(&mut o.req);
        transport::request::free(&mut o.req);
    }
    std::mem::forget(pending);
}

/// A collective this rank must join next whose entries its members' logs lost
/// before they were read (logs::LogCache::hole): said once, not waited for in
/// silence.
fn report_holes(comms: &[ZComm]) {
    logs::with(|cache| {
        if !cache.any_lost() {
            return;
        }
        for c in comms {
            let members: Vec<u32> = c.everyone().collect();
            let s = c.seq + 1;
            let Some(w) = cache.hole(c.id, s, &members) else { continue };
            if !cache.get(c.id, s).is_some_and(|f| describable(c, f)) {
                cache.report_hole(c.id, s, w, "dead");
            }
        }
    });
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

/// The longest nap between two idle rounds of the serve loop (its back-off:
/// on at once after work, a yield for 200 µs after it, as the next collective
/// usually follows at once and a sleep costs a scheduler tick when
/// oversubscribed, then naps from 50 µs that double while idle). A part waiting
/// for a partner or a turn: naps as short as a blocking wait's
/// (`Backoff::wait`), so a dead rank slows no round down more than before.
fn longest_nap() -> Duration {
    let most = if crate::engine::join::standin::pending() || crate::engine::dead::turns::wishing() { 2 } else { 20 };
    Duration::from_millis(most)
}

/// A collective this dead rank can join now: the descriptor and the members'
/// real entries.
type Ready = (Desc, Vec<Option<Desc>>);

/// Joins the collectives ready on any of `comms`. Those whose join does not
/// block (non-blocking forms, MPIFT's own collectives) go at once: each
/// communicator's in its order (MPI's only matching rule), communicators in any
/// order, since none waits. A blocking one only when this rank's turn allows
/// (engine::dead::turns): two dead ranks inside blocking joins of two communicators
/// could each hold the other's for ever, whatever order each chose.
/// A turn is asked for only once every process has this death's news (`told`):
/// the others read the turns of the ranks they know dead, so one that has not
/// heard of this death could enter a join of another communicator unseen.
/// Returns whether it joined any, and those still ready but waiting for a turn
/// (communicator id, function code).
fn join_ready(comms: &mut [ZComm], told: &[bool], pending: &mut Vec<InFlight>) -> (bool, Vec<(u64, u32)>) {
    let mut busy = false;
    loop {
        let mut ready: Vec<(usize, Ready)> = comms.iter().enumerate().filter_map(|(i, c)| next_ready(c, told).map(|r| (i, r))).collect();
        // Nobody enters a blocking join a dead rank that left for good is needed in.
        ready.retain(|(i, r)| !join::blocks(&r.0) || !comms[*i].everyone().any(crate::engine::dead::turns::abandoned));
        let free = ready.iter().position(|(_, r)| !join::blocks(&r.0));
        let blocking = free.is_none();
        let k = match free {
            Some(k) => k,
            None => {
                let mut owed_f: Vec<(u64, u32)> = ready.iter().map(|(i, r)| (comms[*i].id, r.0.fcode)).collect();
                // A shrink's construction blocks in the host too (engine::agree::ft).
                let making = ft::zombie_construction();
                if let Some(id) = making.filter(|id| !owed_f.iter().any(|o| o.0 == *id)) {
                    owed_f.push((id, crate::engine::colls::describe::fcode::SHRINK_CREATE));
                }
                let owed: Vec<u64> = owed_f.iter().map(|o| o.0).collect();
                if !owed.is_empty() && !told.iter().all(|t| *t) {
                    // No turn before every process has this death's news: a rank
                    // that has not could take its turn without reading this
                    // one's (engine::dead::turns reads the ranks it knows dead).
                    return (busy, owed_f);
                }
                let Some(id) = crate::engine::dead::turns::may_enter(&owed) else { return (busy, owed_f) };
                match ready.iter().position(|(i, _)| comms[*i].id == id) {
                    Some(k) => k,
                    None => {
                        // Blocking: in a turn: the shrink's construction, granted above.
                        observer::dead_status(&DeadStatus::Blocks(crate::engine::colls::describe::fname(fcode::SHRINK_CREATE), id, 0));
                        ft::construct_in_turn(id);
                        crate::engine::dead::turns::left();
                        busy = true;
                        continue;
                    }
                }
            }
        };
        let (i, (d, per)) = ready.swap_remove(k);
        busy = true;
        if blocking {
            let c = &comms[i];
            observer::dead_status(&DeadStatus::Blocks(crate::engine::colls::describe::fname(d.fcode), c.id, c.seq + 1));
        }
        if let Joined::Pending(p) = join_next(&mut comms[i], &d, &per) {
            pending.push(InFlight { p, what: (comms[i].id, comms[i].seq, d.fcode) });
        }
        if blocking {
            crate::engine::dead::turns::left();
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
        if settings::debug() {
            crate::say!("MPIFT zombie {}: comm {:x} waits for #{} found {:?}", runtime::world_rank(), c.id, s, found.map(|f| f.keys().collect::<Vec<_>>()));
        }
        let found = found?;
        // Every member not known dead must have logged it: then nobody in it waits
        // for a member that is elsewhere, and the join completes at once.
        if !c.entered_by_the_others(Some(found)) && !recovered(cache, c, s, found) {
            return None;
        }
        logs::by_member(found, &c.members)
    })
}

/// Collective `s` of `c` is joinable although some member's entry of it left
/// that member's log unread (docs/DESIGN.md, "The log's limit"): each member not
/// known dead logged it or went on past it (logs::LogCache::hole), and any one
/// entry describes it.
fn recovered(cache: &logs::LogCache, c: &ZComm, s: u64, found: &HashMap<u32, Desc>) -> bool {
    cache.hole(c.id, s, &c.everyone().collect::<Vec<_>>()).is_some() && describable(c, found)
}

/// Any one of `found` (members' entries of one collective of `c`) describes the
/// dummy part (describe::any_entry_describes).
fn describable(c: &ZComm, found: &HashMap<u32, Desc>) -> bool {
    logs::by_member(found, &c.members).is_some_and(|(d, _)| describe::any_entry_describes(d.fcode))
}

/// Joins `c`'s next collective, `d` (from [`next_ready`]).
fn join_next(c: &mut ZComm, d: &Desc, per: &[Option<Desc>]) -> Joined {
    // A constructor: the live members count one more creation (their new
    // communicator's id derives from it).
    if (fcode::COMM_DUP..=fcode::INTERCOMM_MERGE).contains(&(d.fcode & !fcode::NB)) {
        c.creations += 1;
    }
    let s = c.seq + 1;
    let who = Who { real: c.real, rank: c.rank, size: c.members.len(), id: c.id, members: &c.members, seq: s, standin: true };
    // Blocking: in a turn: join_ready comes here for a join that blocks in the
    // host (join::blocks) only inside the turn turns::may_enter granted for this
    // communicator; other joins start a request (kept in flight in `pending`) or
    // a stand-in's part (engine::join::standin) and return at once.
    let j = if dead_comm::take_up_dup(c, d.fcode) { Joined::Done } else { join::join(&who, d, per) };
    if matches!(j, Joined::Unsupported) && d.fcode & !fcode::NB != fcode::OPAQUE {
        crate::say!("MPIFT: dead rank cannot join collective {} on a communicator", d.fcode);
    }
    c.seq = s;
    logs::with(|cache| cache.prune(c.id, s));
    j
}

