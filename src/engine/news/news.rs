//! Failure and revoke news: the process-wide runtime behind failure detection.
//!
//! Knowledge arrives by push into this process's region of the window
//! ([`crate::transport::window`]): a dying rank writes "I am dead" into every
//! region, a revoker writes "communicator X revoked" (then its horizon) into the
//! regions of X's members, each followed by a bump of `NEWS_GEN`. The failure-free
//! check is therefore one load and one compare ([`refresh`]); only when the counter
//! moved does this module read the news and apply it to the communicators.
//!
//! A rank blocked in a point-to-point wait learns that news arrived from a wake
//! message on the shadow communicator ([`crate::engine::news::wake`]).

use crate::engine::base::runtime::{self, with, Runtime};
use crate::engine::base::edges;
use crate::engine::base::settings;
use crate::engine::base::backoff::Backoff;
use crate::engine::registry::comm;
use crate::engine::news::{kept, wake};
use crate::engine::colls::describe::{any_entry_describes, Desc};
use crate::transport::script::{Scripts, Update};
use crate::transport::window::{self, Window};
use crate::transport::{self, stats, MPI_Request};
use std::collections::HashMap;
use std::os::raw::c_int;
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};


/// This process's `NEWS_GEN` word and the value last acted on: the fast path.
static NEWS_WORD: AtomicPtr<u64> = AtomicPtr::new(std::ptr::null_mut());
static NEWS_SEEN: AtomicU64 = AtomicU64::new(0);

/// Called by `MPI_Init` after the real init (collective over the world).
pub fn start() -> Result<(), c_int> {
    if let Ok(v) = std::env::var("SIM_FT_TIMEOUT") {
        if let Ok(s) = v.trim().parse::<f64>() {
            settings::set_timeout(s);
        }
    }
    let world = transport::comm_world();
    let win = Window::create(world)?;
    let mut shadow = transport::comm_null();
    let rc = transport::comm::dup(world, &mut shadow);
    if rc != 0 {
        return Err(rc);
    }
    transport::comm::set_errhandler(shadow, transport::errors_return());
    stats::bump(&stats::COMMS_CREATED);
    let mut rt = Runtime {
        dead: vec![false; win.n],
        dead_order: Vec::new(),
        revoked: HashMap::new(),
        ring_next: 0,
        log_count: 0,
        keep: crate::protocol::keep::Keep::new(window::LOG_LEN, window::KEEP_LEN),
        zombie: false,
        win,
        shadow,
        wake_req: transport::request_null(),
        wake_buf: Box::new([0; 4]),
        hints: Vec::new(),
    };
    crate::engine::news::wake::arm(&mut rt);
    NEWS_WORD.store(rt.win.word_ptr(window::NEWS_GEN), Ordering::Release);
    NEWS_SEEN.store(0, Ordering::Release);
    runtime::install(rt);
    Ok(())
}

/// Called by `MPI_Finalize` (every process, zombies included): collective.
pub fn stop() {
    NEWS_WORD.store(std::ptr::null_mut(), Ordering::Release);
    LAST_STATE.store(std::ptr::null_mut(), Ordering::Release);
    if let Some(mut rt) = runtime::take() {
        crate::engine::news::wake::disarm(&mut rt);
        // Blocking: never blocks for ever: collective over every process, each of
        // which comes here once on its way out (MPI_Finalize, a dead rank's end),
        // after the exit protocol let it leave; no read of this window is in
        // flight (logs, turns and fill-in settle them first).
        rt.win.free();
        // Wake-ups nobody waited for: receive them, so none is left unmatched.
        crate::engine::registry::comm::drain(rt.shadow, &mut Vec::new());
        transport::comm::free(&mut rt.shadow);
        stats::bump(&stats::COMMS_FREED);
    }
}

/// Fast check: did news arrive since the last [`refresh`]?
#[inline]
pub fn pending() -> bool {
    let p = NEWS_WORD.load(Ordering::Acquire);
    if p.is_null() {
        return false;
    }
    // No fence here: the one ordering that matters (a collective's log entry
    // before the news check that follows it) is `log_collective`'s.
    // SAFETY: `p` is the NEWS_GEN word of this process's window region
    // (Window::word_ptr, in bounds), set by `start`; `stop` clears NEWS_WORD
    // before it frees the window, and MPI forbids MPI calls from other threads
    // during MPI_Finalize, so the region is still allocated here. The word is
    // changed by other processes' RMA: hence a volatile read.
    let v = unsafe { std::ptr::read_volatile(p) };
    v != NEWS_SEEN.load(Ordering::Relaxed)
}

/// Something the service may act on arrived since it last ran: news, or a
/// wake message (engine::progress::service::run_in_wait_if_new and the channel's waits ask
/// this inline, three loads, before running it).
#[inline]
pub fn new_since_run() -> bool {
    pending() || wake::wakes() != wake::wakes_at_run()
}

/// Reads any new news and applies it to every communicator. Cheap when nothing
/// changed (the check is inlined into the caller). Returns true if something new
/// was applied.
#[inline]
pub fn refresh() -> bool {
    pending() && apply_news()
}

/// [`refresh`] once [`pending`] said news arrived.
#[cold]
fn apply_news() -> bool {
    // News is only ever a death or a revoke: the failure-free fast path ends here.
    comm::troubled();
    let (newly_dead, revokes) = match with(|rt| {
        rt.win.sync();
        let gen = rt.win.load(window::NEWS_GEN);
        NEWS_SEEN.store(gen, Ordering::Relaxed);
        let mut newly = Vec::new();
        for w in 0..rt.win.n {
            if !rt.dead[w] && rt.win.load(window::DEAD + w) != 0 {
                rt.dead[w] = true;
                rt.dead_order.push(w as u32);
                newly.push(w as u32);
            }
        }
        let mut revokes = Vec::new();
        let head = rt.win.load(window::REVOKE_HEAD);
        while rt.ring_next < head {
            let at = rt.win.ring() + window::RING_SLOT * (rt.ring_next as usize % window::RING_LEN);
            let (h, id, check) = (rt.win.load(at), rt.win.load(at + 1), rt.win.load(at + 2));
            if id == 0 || check != window::ring_check(h, id) {
                // Slot taken but not (completely) written yet: look again at the
                // next refresh (the writer bumps NEWS_GEN and wakes us when done).
                NEWS_SEEN.store(gen.wrapping_sub(1), Ordering::Relaxed);
                break;
            }
            for k in 0..window::RING_SLOT {
                rt.win.store(at + k, 0);
            }
            rt.ring_next += 1;
            let horizon = if h == 0 { None } else { Some(h - 1) };
            let e = rt.revoked.entry(id).or_insert(None);
            if horizon.is_some() {
                *e = horizon.max(*e);
            }
            revokes.push((id, horizon));
        }
        (newly, revokes)
    }) {
        Some(x) => x,
        None => return false,
    };
    if newly_dead.is_empty() && revokes.is_empty() {
        return false;
    }
    if !newly_dead.is_empty() {
        // Verbose detection messages; node-mates of a dead rank die next (src/inject).
        crate::engine::base::observer::on_dead(&newly_dead);
    }
    if !revokes.is_empty() {
        crate::engine::registry::comm_state::note_owed();
    }
    let mut newly_revoked = Vec::new();
    comm::for_each(|st| {
        for w in &newly_dead {
            if let Some(r) = st.rank_of(*w) {
                st.failures.learn(r as u32);
            }
            if let Some(r) = st.remote.iter().position(|x| x == w) {
                st.remote_failed.learn(r as u32);
            }
        }
        for (id, h) in &revokes {
            if st.id == *id {
                if !st.revoked {
                    newly_revoked.push(*id);
                }
                st.revoked = true;
                if h.is_some() {
                    st.horizon = (*h).max(st.horizon);
                }
            }
        }
    });
    for id in newly_revoked {
        crate::engine::registry::owed::owe_end_receives(id);
    }
    true
}

/// Writes this process's log entry for collective number `seq` on communicator
/// `id`, *pending*, then makes it visible before the caller reads its news (the
/// Dekker pair: see the window module). The caller then marks it entered
/// ([`mark_last`]) or cancelled ([`retract_last`]).
///
/// The keep slots (engine::news::kept) see the entry first when some entry is
/// open or this one opens one: failure-free, one bit of the edges word and one
/// bit of the function code, tested here so that the entry's writer stays as lean
/// as before.
#[inline]
pub fn log_collective(id: u64, seq: u64, d: &Desc, intra: bool) {
    if edges::any(edges::KEPT) || !any_entry_describes(d.fcode) {
        kept_sees(id, seq, d, intra);
    }
    log_entry_as(id, seq, d, window::PENDING);
}

/// [`log_collective`] when the caller found no keep slot that needs to see the
/// entry: none open and the collective described by any member's entry
/// (engine::entry::hooks::coll_enter's calm path tests both with its other bits).
#[inline]
pub fn log_collective_unkept(id: u64, seq: u64, d: &Desc) {
    log_entry_as(id, seq, d, window::PENDING);
}

/// Lets the keep slots see entry `seq` of `id` before it is written.
#[cold]
#[inline(never)]
fn kept_sees(id: u64, seq: u64, d: &Desc, intra: bool) {
    with(|rt| {
        let stamp = rt.log_count + 1;
        kept::on_write(rt, stamp, id, seq, d.fcode, intra);
    });
}

/// Writes a log entry that is entered at once (a catch-up's dummy join: decided
/// before it is written).
pub fn log_entered(id: u64, seq: u64, d: &Desc) {
    if edges::any(edges::KEPT) {
        kept_sees(id, seq, d, true);
    }
    log_entry_as(id, seq, d, window::ENTERED);
}

/// The state word of entry `stamp`: the state with the stamp, so a reader that
/// catches the word of another entry (the ring slot being rewritten) sees a
/// mismatch and reads it as pending.
fn state_word(stamp: u64, state: u64) -> u64 {
    (stamp << 2) | state
}

fn log_entry_as(id: u64, seq: u64, d: &Desc, state: u64) {
    with(|rt| {
        let w = &rt.win;
        let k = rt.log_count;
        let at = w.entry_at(k);
        let stamp = k + 1;
        let e = w.entry_words();
        w.store(at, 0);
        w.store(at + 1, id);
        w.store(at + 2, seq);
        w.store(at + 3, d.fcode as u64);
        w.store(at + 4, d.root as u32 as u64);
        w.store(at + 5, d.send.pack());
        w.store(at + 6, d.recv.pack());
        w.store(at + 7, d.op as u64);
        for (i, x) in d.extra.iter().enumerate() {
            w.store(at + 8 + i, *x);
        }
        w.store(at + 12, d.peers.len() as u64);
        w.store(at + 13, d.peer_types.len() as u64);
        w.store(at + window::ENTRY_STATE, state_word(stamp, state));
        // Where [`mark_last`] writes, and what: one store, no lookup.
        LAST_STATE.store(w.word_ptr(at + window::ENTRY_STATE), Ordering::Relaxed);
        LAST_ENTERED.store(state_word(stamp, window::ENTERED), Ordering::Relaxed);
        let n = w.n;
        for (i, x) in d.peers.iter().take(n).enumerate() {
            w.store(at + window::ENTRY_HEAD + i, *x);
        }
        for (i, x) in d.peer_types.iter().take(n).enumerate() {
            w.store(at + window::ENTRY_HEAD + n + i, *x);
        }
        w.store(at + e - 1, stamp);
        w.store(at, stamp);
        rt.log_count = stamp;
        w.store(window::LOG_HEAD, stamp);
        w.sync();
    });
}

/// Marks the entry written last entered: the collective is entered for real.
/// A plain store: a reader that still sees it pending reads it again.
pub fn mark_last() {
    // No fence: a revoker that still reads the entry pending reads it again.
    let p = LAST_STATE.load(Ordering::Relaxed);
    if !p.is_null() {
        // SAFETY: the word of this process's window that log_entry_as named last
        // (Window::word_ptr, in bounds); the window lives until MPI_Finalize,
        // whose `stop` clears the pointer before freeing it.
        unsafe { std::ptr::write_volatile(p, LAST_ENTERED.load(Ordering::Relaxed)) };
    }
}

/// The state word of the log entry written last, and its "entered" value.
static LAST_STATE: AtomicPtr<u64> = AtomicPtr::new(std::ptr::null_mut());
static LAST_ENTERED: AtomicU64 = AtomicU64::new(0);

/// Marks the entry written last cancelled: the collective was not entered after
/// all (the communicator was revoked, or this rank must catch up elsewhere first).
pub fn retract_last() {
    with(|rt| {
        if rt.log_count > 0 {
            let at = rt.win.entry_at(rt.log_count - 1);
            rt.win.store(at + window::ENTRY_STATE, state_word(rt.log_count, window::CANCELLED));
            rt.win.sync();
            let stamp = rt.log_count;
            kept::cancelled(rt, stamp);
        }
    });
}

/// One collective log entry as read from some process's region.
#[derive(Clone, Debug)]
pub struct Entry {
    pub comm: u64,
    pub seq: u64,
    pub desc: Desc,
    /// `window::PENDING`, `ENTERED` or `CANCELLED` when it was read.
    pub state: u64,
    /// The entry's number in its owner's log (1-based).
    pub stamp: u64,
}

/// Parses raw entry words (None: empty or torn).
pub fn parse_entry(words: &[u64], n: usize) -> Option<Entry> {
    let e = words.len();
    if words[0] == 0 || words[0] != words[e - 1] {
        return None;
    }
    use crate::engine::colls::describe::Spec;
    let np = (words[12] as usize).min(n);
    let nt = (words[13] as usize).min(n);
    let h = window::ENTRY_HEAD;
    let sw = words[window::ENTRY_STATE];
    let state = if sw >> 2 == words[0] { sw & 3 } else { window::PENDING };
    Some(Entry {
        state,
        stamp: words[0],
        comm: words[1],
        seq: words[2],
        desc: Desc {
            fcode: words[3] as u32,
            root: words[4] as u32 as i32,
            send: Spec::unpack(words[5]),
            recv: Spec::unpack(words[6]),
            op: words[7] as u32,
            extra: [words[8], words[9], words[10], words[11]],
            peers: words[h..h + np].to_vec(),
            peer_types: words[h + n..h + n + nt].to_vec(),
        },
    })
}

/// Advances `s` (see transport::script); returns the targets that completed.
pub fn progress_scripts(s: &mut Scripts) -> Vec<usize> {
    with(|rt| s.progress(&rt.win)).unwrap_or_default()
}

/// Issues the first step of `s` at every target and returns.
pub fn kick_scripts(s: &mut Scripts) {
    with(|rt| s.kick(&rt.win));
}

/// Runs `s` to completion: spins briefly (every target inside MPI answers within
/// microseconds), then sleeps with back-off while some target is away from MPI.
pub fn run_scripts(s: &mut Scripts) {
    let mut backoff = Backoff::wait();
    loop {
        progress_scripts(s);
        if s.done() {
            return;
        }
        backoff.pause();
    }
}

/// The updates that publish "communicator `id` revoked" (horizon None) or its
/// horizon to the given world ranks, ready to run: per target, take a slot of
/// its revoke ring (one fetch-and-add), then, together, fill the slot (value, id
/// and check word in one update: a reader takes the slot only when the three
/// agree) and bump its news counter. Two round trips per target, all targets at
/// once; the caller progresses them ([`progress_scripts`]) and wakes each target
/// when its sequence is done.
pub fn revoke_script(id: u64, horizon: Option<u64>, to: &[u32]) -> Scripts {
    let mut s = Scripts::default();
    let Some((me, ring)) = with(|rt| (rt.win.me, rt.win.ring())) else { return s };
    let val = horizon.map_or(0, |h| h + 1);
    for &p in to {
        let p = p as usize;
        if p == me {
            continue;
        }
        let mut stage = 0;
        s.add(
            p,
            Box::new(move |old: &[u64]| {
                stage += 1;
                match stage {
                    1 => Some(vec![Update { at: window::REVOKE_HEAD, vals: vec![1], sum: true }]),
                    2 => {
                        let at = ring + window::RING_SLOT * (old[0] as usize % window::RING_LEN);
                        Some(vec![
                            Update { at, vals: vec![val, id, window::ring_check(val, id)], sum: false },
                            Update { at: window::NEWS_GEN, vals: vec![1], sum: true },
                        ])
                    }
                    _ => None,
                }
            }),
        );
    }
    s
}

/// Non-blocking reads of another process's log entries in flight: one
/// (request, buffer) per run of its ring ([`start_log_reads`]).
pub type LogReads = Vec<(MPI_Request, Box<[u64]>)>;

/// Starts reading world rank `p`'s log entries with stamps in `after + 1..=head`
/// (those its ring still holds), one `MPI_Rget` per run; None without a window.
pub fn start_log_reads(p: usize, after: u64, head: u64) -> Option<LogReads> {
    with(|rt| {
        let e = rt.win.entry_words();
        log_reads(&rt.win, after, head)
            .map(|(at, len)| {
                let mut buf = vec![0u64; len * e].into_boxed_slice();
                let r = rt.win.rget(p, at, &mut buf);
                (r, buf)
            })
            .collect()
    })
}

/// What a reader of entries `after + 1..=head` reads: (offset, entries) per run
/// of the ring that still holds them, and the keep slots (engine::news::kept) when
/// some of those entries already left the ring.
fn log_reads(w: &Window, after: u64, head: u64) -> impl Iterator<Item = (usize, usize)> + '_ {
    let gap = head.saturating_sub(after) > window::LOG_LEN as u64;
    let kept = gap.then(|| (w.keep_slot(0), window::KEEP_LEN));
    window::log_runs(after, head).map(|(k, len)| (w.entry_at(k), len)).chain(kept)
}

/// The entries of completed [`LogReads`] (empty or torn ones left out); None
/// without a window.
pub fn parse_log_reads(reads: &LogReads) -> Option<Vec<Entry>> {
    let (e, n) = with(|rt| (rt.win.entry_words(), rt.win.n))?;
    Some(reads.iter().flat_map(|(_, b)| b.chunks_exact(e)).filter_map(|c| parse_entry(c, n)).collect())
}

/// Reads the collective log of world rank `p`: entries with stamp > `after`.
///
/// Blocking: never blocks for ever: passive-target reads, done once `p` is
/// inside MPI (blocked there too): a live process comes back to MPI at the latest
/// in MPI_Finalize, a dead one serves in MPI until every live one is finalizing.
pub fn read_log(p: usize, after: u64) -> (u64, Vec<Entry>) {
    with(|rt| {
        let w = &rt.win;
        let mut head = [0u64];
        w.get(p, window::LOG_HEAD, &mut head);
        let head = head[0];
        let e = w.entry_words();
        let mut out = Vec::new();
        let mut buf = Vec::new();
        for (at, len) in log_reads(w, after, head) {
            buf.resize(len * e, 0);
            w.get(p, at, &mut buf);
            out.extend(buf.chunks_exact(e).filter_map(|c| parse_entry(c, w.n)));
        }
        (head, out)
    })
    .unwrap_or((after, Vec::new()))
}

/// Stage 1 of `MPI_Finalize`: this process's program makes no more calls (it
/// may still log fill-ins, engine::dead::fillin::settle_owed).
pub fn set_program_done() {
    set_stage(PROGRAM_DONE);
}

/// Stage 2: this process logs nothing more (dead ranks may leave once they
/// read this and its log to the end).
pub fn set_finalizing() {
    set_stage(FINAL);
}

/// Writes this process's `FINALIZING` word, visible to the others' next reads
/// (calls::spare writes it too, for a waiting spare).
pub fn set_stage(w: u64) {
    with(|rt| {
        rt.win.store(window::FINALIZING, w);
        rt.win.sync();
    });
}

/// The values of the `FINALIZING` word (0: running).
pub const PROGRAM_DONE: u64 = 1;
pub const FINAL: u64 = 2;

