//! A dead rank's turns for the joins it makes inside the host's blocking
//! collectives (protocol::turns says why and proves the rule in memory): its
//! state in its own window words ([`window::TURN`]), the other dead ranks'
//! states read with RMA, one read cycle at a time, never waiting.
//!
//! engine::dead::zombie asks [`may_enter`] with the communicators whose next
//! collective it owes and that would block, enters the one it is given, and
//! calls [`left`] when that join returns. Once every process is dead it asks
//! [`may_abandon`] before it leaves, and owes nothing on a communicator with an
//! [`abandoned`] member.

use crate::engine::base::runtime;
use crate::protocol::turns::{self, Decision, Leave, State, Turn};
use crate::transport::{self, window, MPI_Request};
use std::sync::Mutex;

struct Read {
    /// Whose state (world rank).
    p: usize,
    req: MPI_Request,
    buf: Box<[u64; turns::WORDS]>,
}

#[derive(Default)]
struct Driver {
    turn: Turn,
    /// The read cycle in flight (started after the last publish).
    reads: Vec<Read>,
    /// A cycle was started and not decided on yet.
    cycle: bool,
    /// Publishes so far, and the count when the cycle in flight started.
    epoch: u64,
    reads_epoch: u64,
    /// Each other dead rank's state in the last complete cycle.
    last: Vec<(usize, State)>,
}

// SAFETY: the host requests (pointers with Open MPI) name host objects not tied
// to any thread and are only used under DRIVER's lock by the thread that calls
// MPI; each boxed buffer stays in place until its read completed.
unsafe impl Send for Driver {}

static DRIVER: Mutex<Option<Driver>> = Mutex::new(None);

/// Publishes `s` for `d`: reads in flight started before it.
fn publish_for(d: &mut Driver, s: State) {
    d.epoch += 1;
    publish(s);
}

/// The states of the completed cycle (None if one was read while it changed),
/// kept as the last known ones.
fn take_reads(d: &mut Driver) -> Option<Vec<State>> {
    let read: Vec<(usize, Option<State>)> = d.reads.drain(..).map(|r| (r.p, turns::decode(*r.buf))).collect();
    for (p, s) in read.iter().filter_map(|(p, s)| s.map(|s| (*p, s))) {
        match d.last.iter_mut().find(|(q, _)| *q == p) {
            Some(e) => e.1 = s,
            None => d.last.push((p, s)),
        }
    }
    read.into_iter().map(|(_, s)| s).collect()
}

/// Writes this rank's state into its window, visible before its next reads.
fn publish(s: State) {
    let w = turns::encode(s);
    runtime::with(|rt| {
        // The check word last: a reader that finds it matching read the other two
        // as written with it (the region is plain memory; transport::window::sync).
        rt.win.store(window::TURN, w[0]);
        rt.win.store(window::TURN + 1, w[1]);
        rt.win.sync();
        rt.win.store(window::TURN + 2, w[2]);
        rt.win.sync();
    });
}

/// Starts reading the state of every other rank dead by this process's window
/// now. Its death flag, not the news applied at the serve loop's last refresh:
/// a rank asks for a turn only once its flag is in every window
/// (engine::dead::zombie::join_ready), so of it and this rank, whichever published
/// first is read by the other (protocol::turns; tests/protocol_turns.rs, news
/// that lands late).
fn start_reads(d: &mut Driver) {
    let me = runtime::world_rank();
    let n = runtime::world_size();
    let dead: Vec<usize> = runtime::with(|rt| {
        rt.win.sync();
        (0..n).filter(|p| *p != me && (rt.dead.get(*p).copied().unwrap_or(false) || rt.win.load(window::DEAD + *p) != 0)).collect()
    })
    .unwrap_or_default();
    for p in dead {
        let mut buf = Box::new([0u64; turns::WORDS]);
        if let Some(req) = runtime::with(|rt| rt.win.rget(p, window::TURN, &mut buf[..])) {
            d.reads.push(Read { p, req, buf });
        }
    }
    d.cycle = true;
    d.reads_epoch = d.epoch;
}

/// The communicator (of `owed`) whose blocking join this dead rank may enter
/// now, if any. Never waits: a read cycle in flight is tested, a decision made
/// once it is complete.
pub fn may_enter(owed: &[u64]) -> Option<u64> {
    let mut g = DRIVER.lock().unwrap();
    let d = g.get_or_insert_with(Driver::default);
    if owed.is_empty() {
        if let Decision::Publish(s) = d.turn.idle() {
            publish_for(d, s);
        }
        return None;
    }
    // A few rounds at once: with no other dead rank, or reads served from
    // shared memory, a cycle is often complete as soon as it started.
    for _ in 0..4 {
        if d.reads.iter_mut().any(|r| !transport::test_done(&mut r.req)) {
            return None;
        }
        if let Some(c) = step(d, owed) {
            return Some(c);
        }
    }
    None
}

/// Decides on the completed read cycle (or starts one) and publishes what the
/// decision says; the communicator to enter, if that is the decision.
fn step(d: &mut Driver, owed: &[u64]) -> Option<u64> {
    let read = take_reads(d);
    let Some(read) = read.filter(|_| d.cycle || d.turn.published.is_none()) else {
        // A state read while it changed (or no cycle since the last publish).
        start_reads(d);
        return None;
    };
    match d.turn.decide(owed, &read) {
        Decision::Publish(s) => publish_for(d, s),
        Decision::Enter(c) => {
            publish_for(d, State::In(c));
            d.cycle = false;
            return Some(c);
        }
        Decision::Wait => {}
    }
    start_reads(d);
    None
}

/// This dead rank wishes to enter a blocking join (its serve loop naps short).
pub fn wishing() -> bool {
    DRIVER.lock().unwrap().as_ref().is_some_and(|d| d.turn.published.is_some())
}

/// The blocking join [`may_enter`] allowed returned.
pub fn left() {
    let mut g = DRIVER.lock().unwrap();
    let d = g.get_or_insert_with(Driver::default);
    if let Decision::Publish(s) = d.turn.left() {
        publish_for(d, s);
    }
    d.cycle = false;
}

/// Every process is dead and this rank owes nothing it could join: whether it
/// may leave now (protocol::turns, [`Turn::abandon`]); `mine`: the ids of the
/// communicators it is a member of. Never waits.
pub fn may_abandon(mine: &[u64]) -> bool {
    let mut g = DRIVER.lock().unwrap();
    let d = g.get_or_insert_with(Driver::default);
    if d.reads.iter_mut().any(|r| !transport::test_done(&mut r.req)) {
        return false;
    }
    let fresh = !d.reads.is_empty() && d.reads_epoch == d.epoch;
    let read = take_reads(d).filter(|_| fresh || news_is_alone());
    match d.turn.abandon(read.as_deref(), mine) {
        Leave::Go => return true,
        Leave::Publish(s) => publish_for(d, s),
        Leave::Read => {}
    }
    start_reads(d);
    false
}

/// No other dead rank to read (a cycle of no reads is complete at once).
fn news_is_alone() -> bool {
    let me = runtime::world_rank();
    (0..runtime::world_size()).all(|p| p == me || !runtime::is_dead(p as u32))
}

/// The last state read of dead rank `w` is [`State::Abandoned`].
pub fn abandoned(w: u32) -> bool {
    let g = DRIVER.lock().unwrap();
    g.as_ref().is_some_and(|d| d.last.iter().any(|(p, s)| *p == w as usize && *s == State::Abandoned))
}

/// Waits for the reads in flight (before the window is freed).
///
/// Blocking: never blocks for ever: RMA reads, done once their target is inside
/// MPI, where every process is at the exit that calls this (see LogCache::settle).
pub fn settle() {
    if let Some(d) = DRIVER.lock().unwrap().as_mut() {
        for r in d.reads.iter_mut() {
            transport::request::wait(&mut r.req, None);
        }
        d.reads.clear();
    }
}
