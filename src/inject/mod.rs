//! Fault injection: who dies when, which bits flip, and the record of it all
//! (docs/INJECTION.md; thesis 5.3.6, 5.4, 5.5.2). It sets the engine's knobs at
//! `MPI_Init` and hears of deaths through `engine::base::observer`.
//!
//! May import: engine, engine::base, engine::registry, engine::colls, engine::news, engine::adversary, engine::own, engine::agree, engine::join, engine::revoke, engine::dead, engine::progress, engine::complete, engine::entry, protocol, transport.
//!
//! - [`policy`]: the `MPIFT_KILL` / `MPIFT_BITFLIP` languages (pure, unit-tested);
//! - [`rng`]: seeded generators, one stream per rank and purpose;
//! - [`plan`]: a rank's deadlines, drawn once at `MPI_Init` (pure);
//! - [`model`]: the thesis's process-failure model p_p(p_c, p_f, k);
//! - [`bitflip`]: flipping bits in buffers and outgoing messages;
//! - [`legacy`]: `raise`/`kill`/`exit` mapped to simulated deaths;
//! - [`death`]: dying: [`death::die`] (a death decided here), [`death::die_now`]
//!   (one the program asks for, from any thread) and the record of it;
//! - [`report`]: counters, the JSON report and the summary;
//! - [`settings`]: the settings agreement at `MPI_Init` (rank 0's environment, the hosts);
//! - [`trace`]: `MPIFT_TRACE`, each process's calls and live status for outside tools;
//! - [`dump`]: the state dump under `MPIFT_TRACE`, what a process waits for;
//! - [`me`]: this process's call count, verbosity, clock and rank, which the
//!   files above read (it imports none of them).
//!
//! The files above import none of this module, which orchestrates them:
//! `MPI_Init` ([`start`]), `MPI_Finalize` ([`finalize`]), and deciding deaths.
//! It holds the process's injection state and `Sim_FT_decide_kill`
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
pub mod death;
pub mod dump;
pub mod legacy;
pub mod me;
pub mod model;
pub mod plan;
pub mod policy;
pub mod report;
pub mod rng;
pub mod settings;
pub mod trace;

use crate::engine::base::runtime;
use crate::inject::death::{die, is_dead};
use crate::inject::me::{bump_calls, calls, start_clock, t0, verbose, world_rank};
use crate::inject::plan::{Cause, Plan};
use crate::inject::policy::{KillPolicy, Node};
use crate::inject::settings::{Agreed, RuleVars};
use crate::engine::base::edges;
use crate::engine::news::news;
use crate::transport::{self, window, MPI_Comm};
use std::cell::Cell;
use std::ffi::CString;
use std::os::raw::{c_char, c_int, c_long, c_void};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

/// A kill callback: `cb(world_rank, call, mpi_function, ctx)`, nonzero to die.
pub type Callback = unsafe extern "C" fn(c_int, c_long, *const c_char, *mut c_void) -> c_int;

// Something can kill this process at its next call, the slow path must look:
// the flag `engine::base::edges::ARMED` (one word with the others every call reads).

/// `node=` is set and this rank has node-mates: watch them.
static NODE_WATCH: AtomicBool = AtomicBool::new(false);
/// World rank + 1 of a node-mate known dead (0: none).
static NODE_DOWN: AtomicU64 = AtomicU64::new(0);
/// World ranks on this rank's node (itself included), for [`on_dead`].
static NODE: Mutex<Vec<u32>> = Mutex::new(Vec::new());
static CALLBACK: Mutex<Option<(Callback, usize)>> = Mutex::new(None);
/// A policy set with `Sim_FT_set_kill_policy` before `MPI_Init`.
static EARLY_POLICY: Mutex<Option<String>> = Mutex::new(None);

thread_local! {
    /// Inside a kill callback: its own MPI calls are counted but not decided on.
    static IN_CALLBACK: Cell<bool> = const { Cell::new(false) };
}

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
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

/// The slow path is on (a policy, a callback, tracing...): `ffi::boundary` marks
/// a call's exit for [`trace`] only behind this, so the fast path stays one load.
#[inline]
pub fn armed() -> bool {
    edges::any(edges::ARMED)
}
pub fn seed() -> Option<u64> {
    STATE.lock().unwrap().as_ref().map(|s| s.seed)
}

/// `Sim_FT_decide_kill` (thesis 5.3.6): counts the call and applies the policy.
/// May not return: the process then is a dead rank (`engine::dead::zombie`).
#[inline]
pub fn decide_kill(name: &'static str) {
    let call = bump_calls();
    if edges::any(edges::ARMED) {
        decide_slow(name, call);
    }
}

/// Counts a call that cannot kill (outside `MPI_Init`..`MPI_Finalize`).
#[inline]
pub fn count_call() {
    bump_calls();
}

#[cold]
fn decide_slow(name: &'static str, call: u64) {
    trace::enter(call, name);
    if is_dead() || IN_CALLBACK.with(Cell::get) {
        return;
    }
    if let Some(cause) = death::requested_here() {
        die(name, call, cause);
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
    // SAFETY: `cb` is the program's `Sim_FT_set_kill_callback` function, of the
    // C type `Callback` it was declared with; `cname` is a live NUL-terminated
    // string for the call, `ctx` the program's own pointer handed back.
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
        let mates = node_of(s).iter().filter(|w| **w != s.rank && !s.policy.is_spare(**w) && !runtime::is_dead(**w)).count();
        (s.policy.max, mates as u64)
    };
    let Some(max) = max else { return true };
    let want = 1 + mates;
    // Take the tickets, give them back if they overshoot. The count only ever
    // exceeds the deaths granted by tickets being given back, so no more than M
    // deaths are granted; a request can be refused spuriously only while another
    // is overshooting (two node failures at once). (MPI_Compare_and_swap would
    // avoid that, but Open MPI 4.1's vader transport crashes its target on it.)
    let ok = runtime::with(|rt| {
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

/// `engine::news::news` applied the death of these world ranks.
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
        if let Some(w) = node.iter().find(|w| **w != s.rank && runtime::is_dead(**w)) {
            NODE_DOWN.store(*w as u64 + 1, Ordering::Release);
        }
    }
    *NODE.lock().unwrap() = node;
    NODE_WATCH.store(watch, Ordering::Release);
    let callback = CALLBACK.lock().unwrap().is_some();
    let requested = death::requested();
    let armed = !is_dead() && (trace::on() || requested || watch || (!s.exhausted && (!s.plan.is_empty() || callback)));
    edges::set(edges::ARMED, armed);
}

// --- MPI_Init ------------------------------------------------------------------

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
pub fn start(shadow: MPI_Comm, me: u32, size: u32, init: &'static str) -> Result<(), Stop> {
    start_clock();
    death::init_thread();
    crate::engine::base::observer::register(crate::engine::base::observer::Observer {
        on_dead,
        verbose,
        dead_done: trace::dead_done,
        dead_status: trace::dead_status,
        coll_entered: dump::coll_entered,
        finalize,
        end_process: legacy::end_process,
    });
    // Asked once (one MPI_Comm_get_parent): where this job's rules come from.
    let names = RuleVars::for_this_job();
    settings::read_local_settings(&names);
    let mut agreed = settings::agree(shadow, me, &names);
    let (hosts, any_multithreaded) = settings::exchange_hosts(shadow, size);
    // Two broadcasts in agree(), one allgather in exchange_hosts() (accounting,
    // transport::stats).
    for _ in 0..3 {
        transport::stats::bump(&transport::stats::INIT_COLLECTIVES);
    }
    if let Some(e) = agreed.error.take() {
        return Err(e.into());
    }
    configure_engine(&agreed, size, any_multithreaded)?;
    let (bitflip, kill, policy) = choose_policies(&agreed, &names, size)?;
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
    });
    rearm();
    legacy::start();
    Ok(())
}

/// Hands the engine its agreed knobs (spares, agreement fan-out, collective
/// forms, own barrier and allreduce); too many spares stop the job.
fn configure_engine(agreed: &Agreed, size: u32, any_multithreaded: bool) -> Result<(), Stop> {
    if agreed.spares >= size {
        return Err(format!("invalid MPIFT_SPARES: {} spares leave no process of the {size} launched for the program", agreed.spares).into());
    }
    crate::engine::base::process::set_spares(agreed.spares as usize, size as usize);
    let own = agreed.own_allreduce.unwrap_or_else(crate::engine::own::allreduce::default_own);
    crate::engine::base::settings::install(&crate::engine::base::settings::Settings {
        fanout: agreed.fanout,
        nonblocking_colls: agreed.nb_colls,
        // The own barrier's stamps share one channel per pair of processes: two
        // threads in barriers on different communicators could take each other's stamp.
        own_barrier: !agreed.host_barrier && !any_multithreaded,
        own_allreduce: own && !any_multithreaded,
        adversary: agreed.adversary,
        seed: agreed.seed,
        latency_us: agreed.latency_us,
    });
    Ok(())
}

/// The job's bit-flip policy, and this rank's kill policy with its text: the
/// job's, or one set with `Sim_FT_set_kill_policy` before `MPI_Init` (whose
/// errors are this rank's alone).
fn choose_policies(agreed: &Agreed, names: &RuleVars, size: u32) -> Result<(Option<policy::BitflipPolicy>, String, KillPolicy), Stop> {
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
    Ok((bitflip, kill, policy))
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

/// The report's gather, from `MPI_Finalize` (live ranks) or `engine::dead::zombie`
/// (dead ranks): the same collective at every process (see [`report`]).
pub fn finalize() {
    edges::set(edges::ARMED, false);
    NODE_WATCH.store(false, Ordering::Release);
    let shadow = runtime::shadow();
    if shadow == transport::comm_null() {
        return;
    }
    let died = death::recorded();
    let (entry, header, me) = {
        let g = STATE.lock().unwrap();
        let Some(s) = g.as_ref() else { return };
        let entry = report::rank_entry(s.rank, calls(), &s.kill, &s.plan, died);
        let header = (s.rank == 0).then(|| report::Header {
            world_size: s.size,
            seed: s.seed,
            seed_from: s.seed_from,
            kill: s.job_kill.clone(),
            bitflip: s.job_bitflip.clone(),
            mpi: env!("MPIFT_BUILT_FOR"),
        });
        (entry, header, s.rank)
    };
    let _ = me;
    report::collect(shadow, runtime::world_size(), &entry, died, calls(), header.as_ref());
}
