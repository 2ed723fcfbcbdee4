//! Fault injection: who dies when, which bits flip, and the record of it all
//! (docs/INJECTION.md; thesis 5.3.6, 5.4, 5.5.2). It sets the engine's knobs at
//! `MPI_Init` and hears of deaths through `engine::observer`.
//!
//! May import: engine, protocol, transport.
//!
//! - [`policy`]: the `MPIFT_KILL` / `MPIFT_BITFLIP` languages (pure, unit-tested);
//! - [`rng`]: seeded generators, one stream per rank and purpose;
//! - [`plan`]: a rank's deadlines, drawn once at `MPI_Init` (pure);
//! - [`model`]: the thesis's process-failure model p_p(p_c, p_f, k);
//! - [`bitflip`]: flipping bits in buffers and outgoing messages;
//! - [`legacy`]: `raise`/`kill`/`exit` mapped to simulated deaths;
//! - [`report`]: counters, the JSON report and the summary;
//! - [`trace`]: `MPIFT_TRACE`, each process's calls and live status for outside tools.
//!
//! This module holds the process's injection state and `Sim_FT_decide_kill`
//! ([`decide_kill`]), which `ffi::boundary` runs at the entry of every wrapped MPI
//! call, before anything else happens in it (the one point where dying is always
//! safe: nothing of the call has been started). Its cost without a policy is
//! one atomic increment (the call counter) and one atomic load; with one, a
//! mutex and a compare or two (plus a clock read while a time deadline is set).
//!
//! **What counts as a call.** Every call of a wrapped MPI function by the program,
//! whatever its outcome, counted from 1 in each process: `MPI_Init` is call 1
//! (unless the program called, say, `MPI_Initialized` first), the last is
//! `MPI_Finalize`. Calls MPIFT makes itself, `Sim_FT_*` functions and the real MPI
//! calls inside a wrapper are not counted. A rank that dies "at call N" dies at the
//! entry of its N-th call, which is not carried out; `Sim_FT_call_count()` tells
//! how many calls a rank has made.

pub mod bitflip;
pub mod legacy;
pub mod model;
pub mod plan;
pub mod policy;
pub mod report;
pub mod rng;
pub mod trace;

use crate::inject::plan::{Cause, Plan};
use crate::inject::policy::{KillPolicy, Node};
use crate::inject::report::Death;
use crate::engine::news;
use crate::transport::{self, mpi, window};
use std::cell::Cell;
use std::ffi::CString;
use std::os::raw::{c_char, c_int, c_long, c_void};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

/// A kill callback: `cb(world_rank, call, mpi_function, ctx)`, nonzero to die.
pub type Callback = unsafe extern "C" fn(c_int, c_long, *const c_char, *mut c_void) -> c_int;

/// MPI calls made by this process (see the module docs).
static CALLS: AtomicU64 = AtomicU64::new(0);
/// Something can kill this process at its next call: the slow path must look.
static ARMED: AtomicBool = AtomicBool::new(false);
/// This process has died (simulated).
static DEAD: AtomicBool = AtomicBool::new(false);
/// `MPIFT_VERBOSE`; unset: 1 when the environment asks for injection or a report,
/// else 0 (see [`read_local_settings`]).
static VERBOSE: AtomicU8 = AtomicU8::new(0);
/// `node=` is set and this rank has node-mates: watch them.
static NODE_WATCH: AtomicBool = AtomicBool::new(false);
/// World rank + 1 of a node-mate known dead (0: none).
static NODE_DOWN: AtomicU64 = AtomicU64::new(0);
/// World ranks on this rank's node (itself included), for [`on_dead`].
static NODE: Mutex<Vec<u32>> = Mutex::new(Vec::new());
static T0: OnceLock<Instant> = OnceLock::new();
static CALLBACK: Mutex<Option<(Callback, usize)>> = Mutex::new(None);
/// A policy set with `Sim_FT_set_kill_policy` before `MPI_Init`.
static EARLY_POLICY: Mutex<Option<String>> = Mutex::new(None);

thread_local! {
    /// Inside a kill callback: its own MPI calls are counted but not decided on.
    static IN_CALLBACK: Cell<bool> = const { Cell::new(false) };
    /// This thread called `MPI_Init`: the one that becomes the dead rank.
    static INIT_THREAD: Cell<bool> = const { Cell::new(false) };
}

/// A death another thread asked for (its cause's code; 0: none): the thread that
/// called `MPI_Init` dies at the entry of its next MPI call ([`die_now`]).
static REQUESTED: AtomicU64 = AtomicU64::new(0);

struct State {
    rank: u32,
    size: u32,
    seed: u64,
    seed_from: &'static str,
    /// The agreed policy texts (rank 0's environment).
    job_kill: String,
    job_bitflip: Option<String>,
    /// This rank's policy (the job's, or one set with `Sim_FT_set_kill_policy`).
    kill: String,
    policy: KillPolicy,
    plan: Plan,
    p_f: f64,
    kill_rng: rng::Rng,
    /// Host id of every world rank (for `node=host`).
    hosts: Vec<u64>,
    /// `max=M` refused a death: no more injected deaths here.
    exhausted: bool,
    death: Option<Death>,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

pub fn verbose() -> u8 {
    VERBOSE.load(Ordering::Relaxed)
}
pub fn t0() -> Instant {
    *T0.get_or_init(Instant::now)
}
pub fn world_rank() -> usize {
    news::world_rank()
}
pub fn calls() -> u64 {
    CALLS.load(Ordering::Relaxed)
}
pub fn is_dead() -> bool {
    DEAD.load(Ordering::Acquire)
}
/// The slow path is on (a policy, a callback, tracing...): `ffi::boundary` marks
/// a call's exit for [`trace`] only behind this, so the fast path stays one load.
#[inline]
pub fn armed() -> bool {
    ARMED.load(Ordering::Relaxed)
}
pub fn seed() -> Option<u64> {
    STATE.lock().unwrap().as_ref().map(|s| s.seed)
}

/// `Sim_FT_decide_kill` (thesis 5.3.6): counts the call and applies the policy.
/// May not return: the process then is a dead rank (`engine::zombie`).
#[inline]
pub fn decide_kill(name: &'static str) {
    let call = bump_calls();
    if ARMED.load(Ordering::Relaxed) {
        decide_slow(name, call);
    }
}

/// Counts a call that cannot kill (outside `MPI_Init`..`MPI_Finalize`).
#[inline]
pub fn count_call() {
    bump_calls();
}

/// One more MPI call. A load and a store, not an atomic add (which costs more
/// than the rest of a failure-free collective's bookkeeping): MPI calls of one
/// process are serialised unless it runs at `MPI_THREAD_MULTIPLE`, and there
/// the count of calls is not reproducible anyway.
#[inline]
fn bump_calls() -> u64 {
    let call = CALLS.load(Ordering::Relaxed) + 1;
    CALLS.store(call, Ordering::Relaxed);
    call
}

#[cold]
fn decide_slow(name: &'static str, call: u64) {
    trace::enter(call, name);
    if is_dead() || IN_CALLBACK.with(Cell::get) {
        return;
    }
    if let Some(cause) = Cause::from_code(REQUESTED.load(Ordering::Acquire)) {
        if INIT_THREAD.with(Cell::get) {
            die(name, call, cause);
        }
    }
    if NODE_WATCH.load(Ordering::Relaxed) {
        news::refresh();
        if NODE_DOWN.load(Ordering::Acquire) != 0 {
            die(name, call, Cause::Node);
        }
    }
    let due = {
        let g = STATE.lock().unwrap();
        g.as_ref().and_then(|s| {
            if s.exhausted {
                return None;
            }
            if let Some((n, cause)) = s.plan.call {
                if call >= n {
                    return Some(cause);
                }
            }
            match s.plan.time {
                Some((t, cause)) if t0().elapsed().as_secs_f64() >= t => Some(cause),
                _ => None,
            }
        })
    };
    let due = due.or_else(|| ask_callback(name, call).then_some(Cause::Api));
    if let Some(cause) = due {
        if grant(cause) {
            die(name, call, cause);
        }
    }
}

/// Calls the program's kill callback, if any (not for spares or after `max`).
fn ask_callback(name: &'static str, call: u64) -> bool {
    let Some((cb, ctx)) = *CALLBACK.lock().unwrap() else { return false };
    let rank = match STATE.lock().unwrap().as_ref() {
        Some(s) if !s.exhausted && !s.policy.is_spare(s.rank) => s.rank,
        _ => return false,
    };
    let cname = CString::new(name).unwrap_or_default();
    IN_CALLBACK.with(|c| c.set(true));
    let yes = unsafe { cb(rank as c_int, call as c_long, cname.as_ptr(), ctx as *mut c_void) } != 0;
    IN_CALLBACK.with(|c| c.set(false));
    yes
}

/// May this process die of `cause` now? Takes the death's tickets under `max=M`
/// (for itself and, under `node=`, for the node-mates it takes along). A refusal
/// is final: the rank's plan is dropped.
fn grant(cause: Cause) -> bool {
    let (max, mates) = {
        let g = STATE.lock().unwrap();
        let Some(s) = g.as_ref() else { return false };
        if s.policy.is_spare(s.rank) {
            return false;
        }
        let mates = node_of(s).iter().filter(|w| **w != s.rank && !s.policy.is_spare(**w) && !news::is_dead(**w)).count();
        (s.policy.max, mates as u64)
    };
    let Some(max) = max else { return true };
    let want = 1 + mates;
    // Take the tickets, give them back if they overshoot. The count only ever
    // exceeds the deaths granted by tickets being given back, so no more than M
    // deaths are granted; a request can be refused spuriously only while another
    // is overshooting (two node failures at once). (MPI_Compare_and_swap would
    // avoid that, but Open MPI 4.1's vader transport crashes its target on it.)
    let ok = news::with(|rt| {
        let before = rt.win.fetch_add(0, window::KILL_TICKETS, want);
        if before.saturating_add(want) <= max {
            return true;
        }
        rt.win.fetch_add(0, window::KILL_TICKETS, want.wrapping_neg());
        false
    })
    .unwrap_or(false);
    if verbose() >= 3 || (!ok && verbose() >= 1) {
        crate::say!(
            "MPIFT: rank {}: {} death {} (max={max}, {want} ticket{})",
            world_rank(),
            cause.name(),
            if ok { "granted" } else { "refused: the job has had its deaths" },
            if want == 1 { "" } else { "s" }
        );
    }
    if !ok {
        if let Some(s) = STATE.lock().unwrap().as_mut() {
            s.exhausted = true;
            s.plan = Plan::default();
        }
        rearm();
    }
    ok
}

/// The world ranks of `s.rank`'s node (itself included); empty without `node=`.
fn node_of(s: &State) -> Vec<u32> {
    match s.policy.node {
        None => Vec::new(),
        Some(Node::Block(k)) => {
            let first = s.rank / k * k;
            (first..(first + k).min(s.size)).collect()
        }
        Some(Node::Host) => {
            let me = s.hosts.get(s.rank as usize).copied();
            (0..s.size).filter(|w| s.hosts.get(*w as usize).copied() == me).collect()
        }
    }
}

/// Dies now (never returns): records the death, tells the user, becomes a zombie.
pub fn die(name: &str, call: u64, cause: Cause) -> ! {
    let t = t0().elapsed().as_secs_f64();
    DEAD.store(true, Ordering::Release);
    ARMED.store(false, Ordering::Release);
    let rank = world_rank() as u32;
    if let Some(s) = STATE.lock().unwrap().as_mut() {
        s.death = Some(Death { rank, call, time_s: t, cause });
    }
    if verbose() >= 1 {
        let at = if name.is_empty() { format!("after call {call}") } else { format!("at call {call} ({name})") };
        crate::say!("MPIFT: rank {rank} dies {at}, cause {}, {t:.3} s after MPI_Init", cause.name());
    }
    trace::died(call, name);
    crate::engine::zombie::kill_me()
}

/// A death the program asked for (`Sim_FT_kill_me`, a mapped signal, `exit`).
///
/// From the thread that called `MPI_Init`, now. From any other thread (a signal
/// sent by a helper thread while the main thread is inside MPI, say), that thread
/// cannot become the dead rank: it may not call MPI below `MPI_THREAD_MULTIPLE`,
/// and the main thread may hold the layer's state. So it records the request and
/// stops for good, as a killed process's threads do; the main thread dies at the
/// entry of its next MPI call, which the survivors then see as the death.
pub fn die_now(cause: Cause) -> ! {
    if INIT_THREAD.with(Cell::get) {
        die("", calls(), cause)
    }
    REQUESTED.store(cause.code(), Ordering::Release);
    ARMED.store(true, Ordering::Release);
    loop {
        std::thread::park();
    }
}

/// `engine::news` applied the death of these world ranks.
pub fn on_dead(newly: &[u32]) {
    if verbose() >= 2 && !is_dead() {
        crate::say!("MPIFT: rank {} learns that rank{} {:?} died", world_rank(), if newly.len() == 1 { "" } else { "s" }, newly);
    }
    if NODE_WATCH.load(Ordering::Relaxed) {
        let node = NODE.lock().unwrap();
        if let Some(w) = newly.iter().find(|w| node.contains(w)) {
            NODE_DOWN.store(*w as u64 + 1, Ordering::Release);
        }
    }
}

/// Recomputes whether the slow path must run, and the node watch.
fn rearm() {
    let g = STATE.lock().unwrap();
    let Some(s) = g.as_ref() else { return };
    let node = node_of(s);
    let watch = node.len() > 1 && !s.policy.is_spare(s.rank);
    if watch {
        if let Some(w) = node.iter().find(|w| **w != s.rank && news::is_dead(**w)) {
            NODE_DOWN.store(*w as u64 + 1, Ordering::Release);
        }
    }
    *NODE.lock().unwrap() = node;
    NODE_WATCH.store(watch, Ordering::Release);
    let callback = CALLBACK.lock().unwrap().is_some();
    let requested = REQUESTED.load(Ordering::Acquire) != 0;
    let armed = !is_dead() && (trace::on() || requested || watch || (!s.exhausted && (!s.plan.is_empty() || callback)));
    ARMED.store(armed, Ordering::Release);
}

// --- MPI_Init ------------------------------------------------------------------

/// What rank 0 shares at `MPI_Init`: the seed and the policy texts.
struct Agreed {
    seed: u64,
    seed_from: &'static str,
    kill: String,
    bitflip: Option<String>,
    /// A problem rank 0 found reading its environment.
    error: Option<String>,
    /// `MPIFT_SPARES`: launched processes kept aside for `MPI_Comm_spawn`
    /// (calls::spares).
    spares: u32,
    /// Fan-out of the agreement tree (engine::ft).
    fanout: u32,
    /// `MPIFT_COLLECTIVES=nonblocking`: blocking collectives run as their
    /// non-blocking forms plus MPIFT's wait (engine::hooks).
    nb_colls: bool,
    /// `MPIFT_BARRIER=host`: `MPI_Barrier` is the host's, not MPIFT's own
    /// (engine::barrier).
    host_barrier: bool,
    /// `MPIFT_ALLREDUCE`: Some(true) `own`, Some(false) `host`, None the host
    /// MPI's default (engine::allreduce::default_own).
    own_allreduce: Option<bool>,
}

/// Rank 0 reads its environment (and `MPIFT_KILL_FILE`).
fn read_environment(names: &RuleVars) -> Agreed {
    let requested = crate::engine::ft::requested_fanout();
    let fanout = if requested > 0 { requested } else { crate::engine::ft::DEFAULT_FANOUT };
    let mut a = Agreed { seed: 0, seed_from: "chosen", kill: String::new(), bitflip: None, error: None, spares: 0, fanout, nb_colls: false, host_barrier: false, own_allreduce: None };
    if let Some(v) = std::env::var("MPIFT_SPARES").ok().filter(|v| !v.trim().is_empty()) {
        match v.trim().parse::<u32>() {
            // A spawned job (host spawn) has no spares of its own.
            Ok(k) => a.spares = if names.spawned { 0 } else { k },
            _ => a.error = Some(format!("invalid MPIFT_SPARES: bad token `{}`: expected an integer >= 0", v.trim())),
        }
    }
    if let Some(v) = std::env::var("MPIFT_COLLECTIVES").ok().filter(|v| !v.trim().is_empty()) {
        match v.trim() {
            "blocking" => a.nb_colls = false,
            "nonblocking" => a.nb_colls = true,
            t => a.error = Some(format!("invalid MPIFT_COLLECTIVES: bad token `{t}`: expected `blocking` or `nonblocking`")),
        }
    }
    if let Some(v) = std::env::var("MPIFT_BARRIER").ok().filter(|v| !v.trim().is_empty()) {
        match v.trim() {
            "own" => a.host_barrier = false,
            "host" => a.host_barrier = true,
            t => a.error = Some(format!("invalid MPIFT_BARRIER: bad token `{t}`: expected `own` or `host`")),
        }
    }
    if let Some(v) = std::env::var("MPIFT_ALLREDUCE").ok().filter(|v| !v.trim().is_empty()) {
        match v.trim() {
            "own" => a.own_allreduce = Some(true),
            "host" => a.own_allreduce = Some(false),
            t => a.error = Some(format!("invalid MPIFT_ALLREDUCE: bad token `{t}`: expected `own` or `host`")),
        }
    }
    if let Some(v) = std::env::var("MPIFT_TREE_FANOUT").ok().filter(|v| !v.trim().is_empty()) {
        match v.trim().parse::<u32>() {
            Ok(k) if k >= 1 => a.fanout = k.min(1 << 20),
            _ => a.error = Some(format!("invalid MPIFT_TREE_FANOUT: bad token `{}`: expected an integer >= 1", v.trim())),
        }
    }
    match std::env::var("MPIFT_SEED").ok().filter(|v| !v.trim().is_empty()) {
        Some(v) => match v.trim().parse::<u64>() {
            Ok(s) => (a.seed, a.seed_from) = (s, "MPIFT_SEED"),
            Err(_) => a.error = Some(format!("invalid MPIFT_SEED: bad token `{}`: expected an unsigned 64-bit integer", v.trim())),
        },
        None => a.seed = rng::fresh_seed(),
    }
    if names.spawned {
        // Its own stream of random numbers: not the parent job's rank 0's again.
        a.seed = rng::mix(a.seed ^ 0x7370_6177_6e65_64);
    }
    let mut parts = Vec::new();
    if let Ok(path) = std::env::var("MPIFT_KILL_FILE") {
        if !path.is_empty() && !names.spawned {
            match std::fs::read_to_string(&path) {
                Ok(text) => parts.push(text),
                Err(e) => a.error = Some(format!("MPIFT_KILL_FILE: cannot read `{path}`: {e}")),
            }
        }
    }
    if let Ok(v) = std::env::var(names.kill) {
        parts.push(v);
    }
    // One line: comments dropped, newlines become separators.
    a.kill = parts
        .iter()
        .flat_map(|p| p.lines())
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(";");
    a.bitflip = std::env::var(names.bitflip).ok().filter(|v| !v.trim().is_empty()).map(|v| v.trim().to_string());
    a
}

/// Where a job's injection rules come from. A job started by `MPI_Comm_spawn`
/// (its processes have a parent) inherits the environment of the job that
/// `mpiexec` started, whose rules name that job's ranks: it reads its own
/// variables instead, `MPIFT_KILL_SPAWNED` and `MPIFT_BITFLIP_SPAWNED`, with
/// ranks of its own `MPI_COMM_WORLD` (no file variable). Every spawned job reads
/// the same ones (no spawn generations yet, issue 21).
struct RuleVars {
    spawned: bool,
    kill: &'static str,
    bitflip: &'static str,
}

/// This job was started by `MPI_Comm_spawn`.
pub fn spawned_job() -> bool {
    RuleVars::for_this_job().spawned
}

impl RuleVars {
    fn for_this_job() -> RuleVars {
        let mut parent = transport::comm_null();
        // SAFETY: after the real MPI_Init; an out handle of ours.
        unsafe { mpi::MPI_Comm_get_parent(&mut parent) };
        if parent != transport::comm_null() {
            RuleVars { spawned: true, kill: "MPIFT_KILL_SPAWNED", bitflip: "MPIFT_BITFLIP_SPAWNED" }
        } else {
            RuleVars { spawned: false, kill: "MPIFT_KILL", bitflip: "MPIFT_BITFLIP" }
        }
    }
}

/// Broadcasts rank 0's view over `comm` (two broadcasts: length, bytes).
fn agree(comm: mpi::MPI_Comm, me: u32, names: &RuleVars) -> Agreed {
    let text = if me == 0 {
        let a = read_environment(names);
        // The error goes last: it is free text.
        format!(
            "{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}",
            a.seed,
            a.seed_from,
            a.kill,
            a.bitflip.as_deref().unwrap_or("\u{1}"),
            a.fanout,
            a.nb_colls as u8 | (a.host_barrier as u8) << 1 | ((a.own_allreduce == Some(false)) as u8) << 2 | ((a.own_allreduce == Some(true)) as u8) << 3,
            a.spares,
            a.error.as_deref().unwrap_or("")
        )
    } else {
        String::new()
    };
    let mut len = [text.len() as u64];
    let mut bytes = text.into_bytes();
    unsafe {
        mpi::MPI_Bcast(len.as_mut_ptr() as *mut c_void, 1, transport::dt_uint64(), 0, comm);
        bytes.resize(len[0] as usize, 0);
        mpi::MPI_Bcast(bytes.as_mut_ptr() as *mut c_void, len[0] as c_int, transport::dt_byte(), 0, comm);
    }
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let f: Vec<&str> = text.splitn(8, '\n').collect();
    let get = |i: usize| f.get(i).copied().unwrap_or("");
    Agreed {
        seed: get(0).parse().unwrap_or(0),
        seed_from: if get(1) == "MPIFT_SEED" { "MPIFT_SEED" } else { "chosen" },
        kill: get(2).to_string(),
        bitflip: Some(get(3).to_string()).filter(|b| b != "\u{1}"),
        fanout: get(4).parse().unwrap_or(crate::engine::ft::DEFAULT_FANOUT),
        nb_colls: get(5).parse::<u8>().unwrap_or(0) & 1 != 0,
        host_barrier: get(5).parse::<u8>().unwrap_or(0) & 2 != 0,
        own_allreduce: match get(5).parse::<u8>().unwrap_or(0) & 12 {
            4 => Some(false),
            8 => Some(true),
            _ => None,
        },
        spares: get(6).parse().unwrap_or(0),
        error: Some(get(7).to_string()).filter(|e| !e.is_empty()),
    }
}

/// An id of this host: FNV-1a of its name.
fn host_id() -> u64 {
    let mut buf = [0u8; 256];
    let n = unsafe {
        if libc::gethostname(buf.as_mut_ptr() as *mut c_char, buf.len()) == 0 {
            buf.iter().position(|b| *b == 0).unwrap_or(buf.len())
        } else {
            0
        }
    };
    buf[..n].iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ *b as u64).wrapping_mul(0x0100_0000_01b3))
}

/// Like an MPI library, MPIFT prints nothing unless asked: a program that kills itself
/// (`Sim_FT_kill_me`, a mapped `exit` or signal) under output-checking harnesses such
/// as MPICH's `runtests` must print only what the program prints. Notices (deaths,
/// the seed, the summary) are on by default only when the environment asks for
/// injection or a report (`MPIFT_KILL`, `MPIFT_BITFLIP`, `MPIFT_REPORT`), or with
/// `MPIFT_VERBOSE`.
fn read_local_settings(names: &RuleVars) {
    let asked = |name: &str| std::env::var(name).is_ok_and(|v| !v.trim().is_empty());
    let default = u8::from([names.kill, names.bitflip, "MPIFT_REPORT"].iter().any(|n| asked(n)));
    VERBOSE.store(default, Ordering::Relaxed);
    if let Ok(v) = std::env::var("MPIFT_VERBOSE") {
        match v.trim().parse::<u8>() {
            Ok(x) if x <= 3 => VERBOSE.store(x, Ordering::Relaxed),
            _ => crate::say!("MPIFT: MPIFT_VERBOSE=`{v}` is not 0, 1, 2 or 3; using {default}"),
        }
    }
}

/// Why `MPI_Init` must stop the job.
pub struct Stop {
    /// The message, naming the bad token.
    pub why: String,
    /// Every rank has the same problem (the agreed policies), so every rank can
    /// stop cleanly; otherwise only this rank has it and must abort the job.
    pub everywhere: bool,
}

impl From<String> for Stop {
    fn from(why: String) -> Stop {
        Stop { why, everywhere: true }
    }
}

/// Called by `MPI_Init` after the layer's runtime started (collective over the
/// world, on the runtime's `shadow` communicator): agrees on seed and policies,
/// learns the hosts, draws this rank's plan. An invalid policy is an error with a
/// message naming the bad token; every rank gets the same one.
pub fn start(shadow: mpi::MPI_Comm, me: u32, size: u32, init: &'static str) -> Result<(), Stop> {
    T0.get_or_init(Instant::now);
    INIT_THREAD.with(|t| t.set(true));
    crate::engine::observer::register(crate::engine::observer::Observer {
        on_dead,
        verbose,
        dead_done: trace::dead_done,
        finalize,
        end_process: legacy::end_process,
    });
    // Asked once (one MPI_Comm_get_parent): where this job's rules come from.
    let names = RuleVars::for_this_job();
    read_local_settings(&names);
    let agreed = agree(shadow, me, &names);
    // Per rank: its host, and whether it runs at MPI_THREAD_MULTIPLE (each rank
    // asks for its own level; MPIFT's own barrier is used only if none does).
    let mut both = vec![0u64; 2 * size as usize];
    let mine = [host_id(), transport::serial::multithreaded() as u64];
    unsafe {
        mpi::MPI_Allgather(
            mine.as_ptr() as *const c_void,
            2,
            transport::dt_uint64(),
            both.as_mut_ptr() as *mut c_void,
            2,
            transport::dt_uint64(),
            shadow,
        );
    }
    let hosts: Vec<u64> = both.iter().step_by(2).copied().collect();
    let any_multithreaded = both.iter().skip(1).step_by(2).any(|m| *m != 0);
    // Two broadcasts in agree(), one allgather here (accounting, transport::stats).
    for _ in 0..3 {
        transport::stats::bump(&transport::stats::INIT_COLLECTIVES);
    }
    if let Some(e) = agreed.error {
        return Err(e.into());
    }
    if agreed.spares >= size {
        return Err(format!("invalid MPIFT_SPARES: {} spares leave no process of the {size} launched for the program", agreed.spares).into());
    }
    crate::engine::process::set_spares(agreed.spares as usize, size as usize);
    crate::engine::ft::set_fanout(agreed.fanout);
    crate::engine::hooks::set_nonblocking_colls(agreed.nb_colls);
    // The own barrier's stamps share one channel per pair of processes: two threads
    // in barriers on different communicators could take each other's stamp.
    crate::engine::barrier::set_own(!agreed.host_barrier && !any_multithreaded);
    let own = agreed.own_allreduce.unwrap_or_else(crate::engine::allreduce::default_own);
    crate::engine::allreduce::set_own(own && !any_multithreaded);
    let bitflip = match &agreed.bitflip {
        Some(text) => Some(policy::parse_bitflip(text).map_err(|e| format!("invalid {}: {e}", names.bitflip))?),
        None => None,
    };
    let job_policy = policy::parse_kill(&agreed.kill).map_err(|e| format!("invalid {}: {e}", names.kill))?;
    job_policy.validate(size, bitflip.as_ref()).map_err(|e| format!("invalid {}: {e}", names.kill))?;
    let early = EARLY_POLICY.lock().unwrap().take();
    let (kill, policy) = match early {
        Some(text) => {
            // Parsed when it was set; what needs the job is checked now, here only.
            let local = |e: policy::ParseError| Stop { why: format!("invalid policy from Sim_FT_set_kill_policy: {e}"), everywhere: false };
            let p = policy::parse_kill(&text).map_err(local)?;
            p.validate(size, bitflip.as_ref()).map_err(local)?;
            (text, p)
        }
        None => (agreed.kill.clone(), job_policy),
    };
    let p_f = bitflip.as_ref().map_or(0.0, |b| b.p);
    let mut kill_rng = rng::for_rank(agreed.seed, me, rng::Stream::Kill);
    let init_call = calls();
    let plan = plan::plan(&policy, me, init_call, p_f, &mut kill_rng);
    bitflip::start(agreed.seed, me, bitflip);
    if me == 0 && verbose() >= 1 && (!agreed.kill.is_empty() || agreed.bitflip.is_some()) {
        crate::say!(
            "MPIFT: injecting with seed {} ({}){}",
            agreed.seed,
            agreed.seed_from,
            report::policies(&agreed.kill, agreed.bitflip.as_deref())
        );
    }
    if verbose() >= 3 {
        crate::say!("MPIFT: rank {me}: kill plan {plan:?} (MPI_Init was call {init_call})");
    }
    trace::start(me as usize, init_call, init);
    *STATE.lock().unwrap() = Some(State {
        rank: me,
        size,
        seed: agreed.seed,
        seed_from: agreed.seed_from,
        job_kill: agreed.kill,
        job_bitflip: agreed.bitflip,
        kill,
        policy,
        plan,
        p_f,
        kill_rng,
        hosts,
        exhausted: false,
        death: None,
    });
    rearm();
    legacy::start();
    Ok(())
}

/// `Sim_FT_set_kill_policy`: replaces this rank's policy (after `MPI_Init`: at
/// once, deadlines counted as usual from `MPI_Init`, a call number already passed
/// fires at the next call; before: instead of the environment's, at `MPI_Init`).
pub fn set_policy(text: &str) -> Result<(), String> {
    let parsed = policy::parse_kill(text).map_err(|e| e.to_string())?;
    {
        let mut g = STATE.lock().unwrap();
        let Some(s) = g.as_mut() else {
            *EARLY_POLICY.lock().unwrap() = Some(text.to_string());
            return Ok(());
        };
        let flip = s.job_bitflip.as_deref().and_then(|b| policy::parse_bitflip(b).ok());
        parsed.validate(s.size, flip.as_ref()).map_err(|e| e.to_string())?;
        let now = calls();
        s.plan = plan::plan(&parsed, s.rank, now, s.p_f, &mut s.kill_rng);
        s.policy = parsed;
        s.kill = text.to_string();
        s.exhausted = false;
    }
    rearm();
    Ok(())
}

/// `Sim_FT_set_kill_callback` (None removes it).
pub fn set_callback(cb: Option<Callback>, ctx: *mut c_void) {
    *CALLBACK.lock().unwrap() = cb.map(|f| (f, ctx as usize));
    rearm();
}

// --- MPI_Finalize ------------------------------------------------------------------

/// The report's gather, from `MPI_Finalize` (live ranks) or `engine::zombie`
/// (dead ranks): the same collective at every process (see [`report`]).
pub fn finalize() {
    ARMED.store(false, Ordering::Release);
    NODE_WATCH.store(false, Ordering::Release);
    let shadow = news::shadow();
    if shadow == transport::comm_null() {
        return;
    }
    let (entry, death, header, me) = {
        let g = STATE.lock().unwrap();
        let Some(s) = g.as_ref() else { return };
        let entry = report::rank_entry(s.rank, calls(), &s.kill, &s.plan, s.death);
        let header = (s.rank == 0).then(|| report::Header {
            world_size: s.size,
            seed: s.seed,
            seed_from: s.seed_from,
            kill: s.job_kill.clone(),
            bitflip: s.job_bitflip.clone(),
            mpi: env!("MPIFT_BUILT_FOR"),
        });
        (entry, s.death, header, s.rank)
    };
    let _ = me;
    report::collect(shadow, news::world_size(), &entry, death, calls(), header.as_ref());
}
