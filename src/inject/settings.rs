//! The settings agreement at `MPI_Init`, collective over the layer's `shadow`
//! communicator: rank 0 reads its environment (the injection rules, the seed,
//! MPIFT's knobs) and broadcasts it ([`agree`]), every rank learns every rank's
//! host and thread level ([`exchange_hosts`]), and each reads the settings that
//! are its own (`MPIFT_VERBOSE`, [`read_local_settings`]). `inject::start` then
//! applies what was agreed.

use super::{me, rng};
use crate::transport::{self, comm, generated, MPI_Comm};
use std::os::raw::{c_char, c_int, c_void};

/// What rank 0 shares at `MPI_Init`: the seed and the policy texts.
pub(super) struct Agreed {
    pub(super) seed: u64,
    pub(super) seed_from: &'static str,
    pub(super) kill: String,
    pub(super) bitflip: Option<String>,
    /// A problem rank 0 found reading its environment.
    pub(super) error: Option<String>,
    /// `MPIFT_SPARES`: launched processes kept aside for `MPI_Comm_spawn`
    /// (calls::spares).
    pub(super) spares: u32,
    /// Fan-out of the agreement tree (engine::agree::ft).
    pub(super) fanout: u32,
    /// `MPIFT_COLLECTIVES=nonblocking`: blocking collectives run as their
    /// non-blocking forms plus MPIFT's wait (engine::entry::hooks).
    pub(super) nb_colls: bool,
    /// `MPIFT_BARRIER=host`: `MPI_Barrier` is the host's, not MPIFT's own
    /// (engine::own::barrier).
    pub(super) host_barrier: bool,
    /// `MPIFT_ALLREDUCE`: Some(true) `own`, Some(false) `host`, None the host
    /// MPI's default (engine::own::allreduce::default_own).
    pub(super) own_allreduce: Option<bool>,
    /// `MPIFT_SEMANTICS`: the adversarial mode's choices (engine::base::settings::parse_semantics).
    pub(super) adversary: u32,
    /// `MPIFT_LATENCY`: the adversarial mode's range of late news, in
    /// microseconds (engine::base::settings::parse_latency).
    pub(super) latency_us: (u64, u64),
}

/// Rank 0 reads its environment (and `MPIFT_KILL_FILE`).
fn read_environment(names: &RuleVars) -> Agreed {
    let requested = crate::engine::agree::ft::requested_fanout();
    let fanout = if requested > 0 { requested } else { crate::engine::base::settings::DEFAULT_FANOUT };
    let mut a = Agreed { seed: 0, seed_from: "chosen", kill: String::new(), bitflip: None, error: None, spares: 0, fanout, nb_colls: false, host_barrier: false, own_allreduce: None, adversary: 0, latency_us: crate::engine::base::settings::DEFAULT_LATENCY_US };
    if let Some(v) = std::env::var("MPIFT_SPARES").ok().filter(|v| !v.trim().is_empty()) {
        match v.trim().parse::<u32>() {
            // A spawned job (host spawn) has no spares of its own.
            Ok(k) => a.spares = if names.spawned { 0 } else { k },
            _ => a.error = Some(format!("invalid MPIFT_SPARES: bad token `{}`: expected an integer >= 0", v.trim())),
        }
    }
    read_engine_knobs(&mut a);
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

/// Rank 0's engine knobs: the collective forms, the own barrier and allreduce,
/// the semantics mode and its latency range.
fn read_engine_knobs(a: &mut Agreed) {
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
    if let Some(v) = std::env::var("MPIFT_SEMANTICS").ok().filter(|v| !v.trim().is_empty()) {
        match crate::engine::base::settings::parse_semantics(&v) {
            Ok(bits) => a.adversary = bits,
            Err(e) => a.error = Some(format!("invalid MPIFT_SEMANTICS: {e}")),
        }
    }
    if let Some(v) = std::env::var("MPIFT_LATENCY").ok().filter(|v| !v.trim().is_empty()) {
        match crate::engine::base::settings::parse_latency(&v) {
            Ok(r) => a.latency_us = r,
            Err(e) => a.error = Some(format!("invalid MPIFT_LATENCY: {e}")),
        }
    }
}

/// Where a job's injection rules come from. A job started by `MPI_Comm_spawn`
/// (its processes have a parent) inherits the environment of the job that
/// `mpiexec` started, whose rules name that job's ranks: it reads its own
/// variables instead, `MPIFT_KILL_SPAWNED` and `MPIFT_BITFLIP_SPAWNED`, with
/// ranks of its own `MPI_COMM_WORLD` (no file variable). Every spawned job reads
/// the same ones (no spawn generations yet, issue 21).
pub(super) struct RuleVars {
    pub(super) spawned: bool,
    pub(super) kill: &'static str,
    pub(super) bitflip: &'static str,
}

/// This job was started by `MPI_Comm_spawn`.
pub fn spawned_job() -> bool {
    RuleVars::for_this_job().spawned
}

impl RuleVars {
    pub(super) fn for_this_job() -> RuleVars {
        let mut parent = transport::comm_null();
        comm::get_parent(&mut parent);
        if parent != transport::comm_null() {
            RuleVars { spawned: true, kill: "MPIFT_KILL_SPAWNED", bitflip: "MPIFT_BITFLIP_SPAWNED" }
        } else {
            RuleVars { spawned: false, kill: "MPIFT_KILL", bitflip: "MPIFT_BITFLIP" }
        }
    }
}

/// Broadcasts rank 0's view over `comm` (two broadcasts: length, bytes).
pub(super) fn agree(comm: MPI_Comm, me: u32, names: &RuleVars) -> Agreed {
    let text = if me == 0 {
        let a = read_environment(names);
        // The error goes last: it is free text.
        format!(
            "{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}:{}\n{}",
            a.seed,
            a.seed_from,
            a.kill,
            a.bitflip.as_deref().unwrap_or("\u{1}"),
            a.fanout,
            a.nb_colls as u8 | (a.host_barrier as u8) << 1 | ((a.own_allreduce == Some(false)) as u8) << 2 | ((a.own_allreduce == Some(true)) as u8) << 3,
            a.spares,
            a.adversary,
            a.latency_us.0,
            a.latency_us.1,
            a.error.as_deref().unwrap_or("")
        )
    } else {
        String::new()
    };
    let mut len = [text.len() as u64];
    let mut bytes = text.into_bytes();
    // SAFETY: `len` is a live array of one u64, for the blocking call.
    unsafe { generated::MPI_Bcast(len.as_mut_ptr() as *mut c_void, 1, transport::dt_uint64(), 0, comm) };
    bytes.resize(len[0] as usize, 0);
    // SAFETY: `bytes` was just resized to `len[0]` bytes, the count broadcast.
    unsafe { generated::MPI_Bcast(bytes.as_mut_ptr() as *mut c_void, len[0] as c_int, transport::dt_byte(), 0, comm) };
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let f: Vec<&str> = text.splitn(10, '\n').collect();
    let get = |i: usize| f.get(i).copied().unwrap_or("");
    Agreed {
        seed: get(0).parse().unwrap_or(0),
        seed_from: if get(1) == "MPIFT_SEED" { "MPIFT_SEED" } else { "chosen" },
        kill: get(2).to_string(),
        bitflip: Some(get(3).to_string()).filter(|b| b != "\u{1}"),
        fanout: get(4).parse().unwrap_or(crate::engine::base::settings::DEFAULT_FANOUT),
        nb_colls: get(5).parse::<u8>().unwrap_or(0) & 1 != 0,
        host_barrier: get(5).parse::<u8>().unwrap_or(0) & 2 != 0,
        own_allreduce: match get(5).parse::<u8>().unwrap_or(0) & 12 {
            4 => Some(false),
            8 => Some(true),
            _ => None,
        },
        spares: get(6).parse().unwrap_or(0),
        adversary: get(7).parse().unwrap_or(0),
        latency_us: get(8)
            .split_once(':')
            .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)))
            .unwrap_or(crate::engine::base::settings::DEFAULT_LATENCY_US),
        error: Some(get(9).to_string()).filter(|e| !e.is_empty()),
    }
}

/// An id of this host: FNV-1a of its name.
fn host_id() -> u64 {
    let mut buf = [0u8; 256];
    // SAFETY: `buf` is a live local array and gethostname writes at most
    // `buf.len()` bytes into it.
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
pub(super) fn read_local_settings(names: &RuleVars) {
    let asked = |name: &str| std::env::var(name).is_ok_and(|v| !v.trim().is_empty());
    let default = u8::from([names.kill, names.bitflip, "MPIFT_REPORT"].iter().any(|n| asked(n)));
    me::set_verbose(default);
    if let Ok(v) = std::env::var("MPIFT_VERBOSE") {
        match v.trim().parse::<u8>() {
            Ok(x) if x <= 3 => me::set_verbose(x),
            _ => crate::say!("MPIFT: MPIFT_VERBOSE=`{v}` is not 0, 1, 2 or 3; using {default}"),
        }
    }
}

/// Per rank: its host, and whether it runs at MPI_THREAD_MULTIPLE (each rank
/// asks for its own level; MPIFT's own barrier is used only if none does). One
/// allgather over `shadow`, whose `size` processes are the world's. Returns every
/// rank's host id and whether any rank runs at MPI_THREAD_MULTIPLE.
pub(super) fn exchange_hosts(shadow: MPI_Comm, size: u32) -> (Vec<u64>, bool) {
    let mut both = vec![0u64; 2 * size as usize];
    let mine = [host_id(), transport::serial::multithreaded() as u64];
    // SAFETY: `mine` holds two u64s and `both` room for two per process of
    // `shadow` (`size` of them); both live locals outlive the blocking call.
    unsafe {
        generated::MPI_Allgather(
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
    (hosts, any_multithreaded)
}
