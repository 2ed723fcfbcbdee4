//! Failure and revoke news: the process-wide runtime behind failure detection.
//!
//! Knowledge arrives by push into this process's region of the window
//! ([`crate::transport::window`]): a dying rank writes "I am dead" into every
//! region, a revoker writes "communicator X revoked" (then its horizon) into the
//! regions of X's members, each followed by a bump of `NEWS_GEN`. The failure-free
//! check is therefore one load and one compare ([`refresh`]); only when the counter
//! moved does this module read the news and apply it to the communicators.
//!
//! Wake-ups: a rank blocked in a point-to-point wait is woken by a zero-byte
//! message on the layer's one communicator (`shadow`, a duplicate of
//! `MPI_COMM_WORLD`: the only extra communicator MPIFT ever creates), which the
//! waits include in their `MPI_Waitany` ([`crate::engine::request`]).

use crate::engine::comm;
use crate::engine::describe::Desc;
use crate::transport::script::{Scripts, Update};
use crate::transport::serial::Serial;
use crate::transport::window::{self, Window};
use crate::transport::{self, mpi, stats};
use std::collections::HashMap;
use std::os::raw::{c_int, c_void};
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};
use std::time::Duration;

/// Tags on the shadow communicator.
pub const TAG_WAKE: c_int = 1;

pub struct Runtime {
    pub win: Window,
    pub shadow: mpi::MPI_Comm,
    wake_req: mpi::MPI_Request,
    wake_buf: Box<[u64; 4]>,
    /// Revoke hints sent and not known complete yet, with their buffers.
    hints: Vec<(mpi::MPI_Request, Box<[u64; 2]>)>,
    /// World ranks known dead, and in which order they became known.
    pub dead: Vec<bool>,
    pub dead_order: Vec<u32>,
    /// Revoked communicator ids, with the horizon once published.
    pub revoked: HashMap<u64, Option<u64>>,
    ring_next: u64,
    /// Collective log entries written by this process.
    log_count: u64,
    pub zombie: bool,
}

unsafe impl Send for Runtime {}

static RT: Serial<Option<Runtime>> = Serial::new(None);
/// This process's `NEWS_GEN` word and the value last acted on: the fast path.
static NEWS_WORD: AtomicPtr<u64> = AtomicPtr::new(std::ptr::null_mut());
static NEWS_SEEN: AtomicU64 = AtomicU64::new(0);
/// Simulated detection delay in microseconds (`SIM_FT_TIMEOUT`).
static TIMEOUT_US: AtomicU64 = AtomicU64::new(0);

/// `MPIFT_DEBUG` is set: dead ranks report what they read and wait for (read once).
pub fn debug() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("MPIFT_DEBUG").is_some())
}

pub fn with<R>(f: impl FnOnce(&mut Runtime) -> R) -> Option<R> {
    RT.lock().as_mut().map(f)
}

pub fn timeout() -> Duration {
    Duration::from_micros(TIMEOUT_US.load(Ordering::Relaxed))
}
pub fn set_timeout(seconds: f64) {
    let us = if seconds.is_finite() && seconds > 0.0 { (seconds * 1e6) as u64 } else { 0 };
    TIMEOUT_US.store(us, Ordering::Relaxed);
}

/// Called by `MPI_Init` after the real init (collective over the world).
pub fn start() -> Result<(), c_int> {
    if let Ok(v) = std::env::var("SIM_FT_TIMEOUT") {
        if let Ok(s) = v.trim().parse::<f64>() {
            set_timeout(s);
        }
    }
    let world = transport::comm_world();
    let win = Window::create(world)?;
    let mut shadow = transport::comm_null();
    let rc = unsafe { mpi::MPI_Comm_dup(world, &mut shadow) };
    if rc != 0 {
        return Err(rc);
    }
    unsafe { mpi::MPI_Comm_set_errhandler(shadow, transport::errors_return()) };
    stats::bump(&stats::COMMS_CREATED);
    let mut rt = Runtime {
        dead: vec![false; win.n],
        dead_order: Vec::new(),
        revoked: HashMap::new(),
        ring_next: 0,
        log_count: 0,
        zombie: false,
        win,
        shadow,
        wake_req: transport::request_null(),
        wake_buf: Box::new([0; 4]),
        hints: Vec::new(),
    };
    unsafe {
        mpi::MPI_Recv_init(
            rt.wake_buf.as_mut_ptr() as *mut c_void,
            4,
            transport::dt_uint64(),
            transport::any_source(),
            TAG_WAKE,
            rt.shadow,
            &mut rt.wake_req,
        );
        mpi::MPI_Start(&mut rt.wake_req);
    }
    NEWS_WORD.store(unsafe { (rt.win.base_ptr()).add(window::NEWS_GEN) }, Ordering::Release);
    NEWS_SEEN.store(0, Ordering::Release);
    *RT.lock() = Some(rt);
    Ok(())
}

/// Called by `MPI_Finalize` (every process, zombies included): collective.
pub fn stop() {
    NEWS_WORD.store(std::ptr::null_mut(), Ordering::Release);
    LAST_STATE.store(std::ptr::null_mut(), Ordering::Release);
    if let Some(mut rt) = RT.lock().take() {
        unsafe {
            mpi::MPI_Cancel(&mut rt.wake_req);
            mpi::MPI_Wait(&mut rt.wake_req, transport::status_ignore());
            mpi::MPI_Request_free(&mut rt.wake_req);
        }
        for (mut r, buf) in rt.hints.drain(..) {
            // Eager messages, complete long ago; else MPI may still read the buffer.
            unsafe { mpi::MPI_Request_free(&mut r) };
            std::mem::forget(buf);
        }
        rt.win.free();
        // Wake-ups nobody waited for: receive them, so none is left unmatched.
        crate::engine::comm::drain(rt.shadow, &mut Vec::new());
        unsafe { mpi::MPI_Comm_free(&mut rt.shadow) };
        stats::bump(&stats::COMMS_FREED);
    }
}

/// The wake request (for waits to include), or null before init.
pub fn wake_request() -> mpi::MPI_Request {
    with(|rt| rt.wake_req).unwrap_or_else(transport::request_null)
}
/// Wake messages received so far. Each consumer keeps its own cursor: a wait
/// reads the others' logs before it blocks again (engine::fillin), the revoked
/// communicators are drained at once (engine::revoke::drain_revoked).
static WAKES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How many wake messages this process received.
pub fn wakes() -> u64 {
    WAKES.load(std::sync::atomic::Ordering::Relaxed)
}

/// The wake request completed: re-arm it (the news itself is in the window;
/// a wake may carry a revoke hint, [`hint_revoke`]).
pub fn rearm_wake(req: mpi::MPI_Request) {
    let hint = with(|rt| {
        rt.wake_req = req;
        WAKES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let hint = take_hint(rt);
        unsafe { mpi::MPI_Start(&mut rt.wake_req) };
        hint
    });
    if let Some(Some(id)) = hint {
        apply_hint(id);
    }
}
/// Consumes every wake message already here (after news was handled).
pub fn drain_wakes() {
    let mut hints = Vec::new();
    with(|rt| loop {
        let mut flag = 0;
        unsafe { mpi::MPI_Test(&mut rt.wake_req, &mut flag, transport::status_ignore()) };
        if flag == 0 {
            break;
        }
        WAKES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        hints.extend(take_hint(rt));
        unsafe { mpi::MPI_Start(&mut rt.wake_req) };
    });
    for id in hints {
        apply_hint(id);
    }
}

/// First word of a wake message that carries a revoke hint; the second is the
/// communicator id.
const HINT_REVOKE: u64 = 0x4d50_4946_5452_4556;

/// The revoke hint of the wake message just received, if it carried one (and
/// clears the buffer: a plain wake has no data).
fn take_hint(rt: &mut Runtime) -> Option<u64> {
    let hint = (rt.wake_buf[0] == HINT_REVOKE).then_some(rt.wake_buf[1]);
    rt.wake_buf[0] = 0;
    hint
}

/// A revoke hint arrived: the communicator `id`, if this process holds it, is
/// revoked here at once, before the revoker's RMA announcement (which still
/// follows and brings the horizon) lands. Only the release gets earlier: a
/// member that learns of the revoke this way refuses new operations on it, and
/// its entries already logged are read by the revoker as before (engine::revoke).
fn apply_hint(id: u64) {
    let mut held = false;
    comm::for_each(|st| held |= st.id == id && !st.revoked);
    if !held {
        return;
    }
    comm::troubled();
    crate::engine::revoke::note_owed();
    comm::for_each(|st| {
        if st.id == id {
            st.revoked = true;
        }
    });
}

/// Tells world rank `p` at once that communicator `id` is revoked: a wake
/// message with the id (engine::revoke sends it to every member when its job
/// starts, so a member blocked in a wait learns of the revoke without waiting for
/// RMA, which with MPICH may wait for members computing outside MPI).
pub fn hint_revoke(p: usize, id: u64) {
    with(|rt| {
        rt.hints.retain_mut(|(r, _)| {
            let mut flag = 0;
            unsafe { mpi::MPI_Test(r, &mut flag, transport::status_ignore()) };
            flag == 0
        });
        let buf = Box::new([HINT_REVOKE, id]);
        let mut r = transport::request_null();
        stats::bump(&stats::WAKE_MSGS);
        unsafe {
            mpi::MPI_Isend(buf.as_ptr() as *const c_void, 2, transport::dt_uint64(), p as c_int, TAG_WAKE, rt.shadow, &mut r);
        }
        rt.hints.push((r, buf));
    });
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
    let v = unsafe { std::ptr::read_volatile(p) };
    v != NEWS_SEEN.load(Ordering::Relaxed)
}

/// Reads any new news and applies it to every communicator. Cheap when nothing
/// changed. Returns true if something new was applied.
pub fn refresh() -> bool {
    if !pending() {
        return false;
    }
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
        crate::engine::observer::on_dead(&newly_dead);
    }
    if !revokes.is_empty() {
        crate::engine::revoke::note_owed();
    }
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
                st.revoked = true;
                if h.is_some() {
                    st.horizon = (*h).max(st.horizon);
                }
            }
        }
    });
    true
}

/// A revoke of communicator `id` is known here: Some(its horizon, if published).
pub fn revoked_id(id: u64) -> Option<Option<u64>> {
    with(|rt| rt.revoked.get(&id).copied()).flatten()
}

/// Is world rank `w` known dead here?
pub fn is_dead(w: u32) -> bool {
    with(|rt| rt.dead.get(w as usize).copied().unwrap_or(false)).unwrap_or(false)
}

/// Writes this process's log entry for collective number `seq` on communicator
/// `id`, *pending*, then makes it visible before the caller reads its news (the
/// Dekker pair: see the window module). The caller then marks it entered
/// ([`mark_last`]) or cancelled ([`retract_last`]).
pub fn log_collective(id: u64, seq: u64, d: &Desc) {
    log_entry_as(id, seq, d, window::PENDING);
}

/// Writes a log entry that is entered at once (a catch-up's dummy join: decided
/// before it is written).
pub fn log_entered(id: u64, seq: u64, d: &Desc) {
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
        LAST_STATE.store(unsafe { w.base_ptr().add(at + window::ENTRY_STATE) }, Ordering::Relaxed);
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
        // Safety: the word of this process's window that log_entry_as named last;
        // the window lives until MPI_Finalize, which clears the pointer first.
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
    use crate::engine::describe::Spec;
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

/// Zero-byte wake message to every other process (non-blocking, fire and forget:
/// the receive is always posted, so they complete promptly).
pub fn wake_all() {
    let n = world_size();
    let me = world_rank();
    for p in (0..n).filter(|p| *p != me) {
        wake(p);
    }
}

/// Sends world rank `p` a wake-up (zero bytes on the shadow communicator).
pub fn wake(p: usize) {
    with(|rt| {
        let mut r = transport::request_null();
        stats::bump(&stats::WAKE_MSGS);
        unsafe {
            mpi::MPI_Isend(std::ptr::null(), 0, transport::dt_uint64(), p as c_int, TAG_WAKE, rt.shadow, &mut r);
            mpi::MPI_Request_free(&mut r);
        }
    });
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
    let start = std::time::Instant::now();
    let mut nap = Duration::from_micros(20);
    loop {
        progress_scripts(s);
        if s.done() {
            return;
        }
        if start.elapsed() < Duration::from_micros(500) {
            std::thread::yield_now();
        } else {
            std::thread::sleep(nap);
            nap = (nap * 2).min(Duration::from_millis(2));
        }
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
pub type LogReads = Vec<(mpi::MPI_Request, Box<[u64]>)>;

/// Starts reading world rank `p`'s log entries with stamps in `after + 1..=head`
/// (those its ring still holds), one `MPI_Rget` per run; None without a window.
pub fn start_log_reads(p: usize, after: u64, head: u64) -> Option<LogReads> {
    with(|rt| {
        let e = rt.win.entry_words();
        window::log_runs(after, head)
            .map(|(k, len)| {
                let mut buf = vec![0u64; len * e].into_boxed_slice();
                let r = rt.win.rget(p, rt.win.entry_at(k), &mut buf);
                (r, buf)
            })
            .collect()
    })
}

/// The entries of completed [`LogReads`] (empty or torn ones left out); None
/// without a window.
pub fn parse_log_reads(reads: &LogReads) -> Option<Vec<Entry>> {
    let (e, n) = with(|rt| (rt.win.entry_words(), rt.win.n))?;
    Some(reads.iter().flat_map(|(_, b)| b.chunks_exact(e)).filter_map(|c| parse_entry(c, n)).collect())
}

/// Reads the collective log of world rank `p`: entries with stamp > `after`.
pub fn read_log(p: usize, after: u64) -> (u64, Vec<Entry>) {
    with(|rt| {
        let w = &rt.win;
        let mut head = [0u64];
        w.get(p, window::LOG_HEAD, &mut head);
        let head = head[0];
        let e = w.entry_words();
        let mut out = Vec::new();
        let mut buf = Vec::new();
        for (k, len) in window::log_runs(after, head) {
            buf.resize(len * e, 0);
            w.get(p, w.entry_at(k), &mut buf);
            out.extend(buf.chunks_exact(e).filter_map(|c| parse_entry(c, w.n)));
        }
        (head, out)
    })
    .unwrap_or((after, Vec::new()))
}

pub fn set_finalizing() {
    with(|rt| {
        rt.win.store(window::FINALIZING, 1);
        rt.win.sync();
    });
}

pub fn world_size() -> usize {
    with(|rt| rt.win.n).unwrap_or(1)
}
pub fn world_rank() -> usize {
    with(|rt| rt.win.me).unwrap_or(0)
}
pub fn is_zombie() -> bool {
    with(|rt| rt.zombie).unwrap_or(false)
}
pub fn shadow() -> mpi::MPI_Comm {
    with(|rt| rt.shadow).unwrap_or_else(transport::comm_null)
}
