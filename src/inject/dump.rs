//! The state dump of `MPIFT_TRACE=DIR` (docs/CAMPAIGN.md, "Why a run hangs"):
//! what this process waits for, in the program's terms, for the campaign's
//! waits-for forensics and for a person looking at a hung run.
//!
//! Per process (world rank R), in DIR:
//! - `state.R`: [`STATE_BYTES`] bytes mapped shared, rewritten by the process's
//!   own MPI thread at each call's entry (with the call's communicator, peer,
//!   root, tag and requests), at its exit and at each step of a dead rank's
//!   service: `key: value` lines ([`render`]), padded with spaces. A reader
//!   outside the process (the campaign) reads the file; none of its keys needs
//!   the process to answer.
//! - `comms.R`: one line per communicator this process created, `<id> <name>`
//!   (`id` as in MPIFT's debug output and a dead rank's status), named in the
//!   program's terms: `MPI_COMM_WORLD`, or `the communicator from MPI_Comm_split
//!   at call 7`.
//! - `dump.R.txt` and `dump.R.json`: a copy of `state.R` with why it was taken,
//!   written by a watcher thread on `SIGUSR1` (forwarded by `mpiexec.mpich`,
//!   `mpiexec.openmpi` and Open MPI 5's launcher) or once a call has run longer
//!   than `MPIFT_DUMP_AFTER` seconds. The watcher reads the mapping only (a
//!   sequence counter tells it a copy is whole): it makes no MPI call and takes
//!   no lock the blocked thread may hold.
//!
//! Cost: nothing without `MPIFT_TRACE` (the arguments are read in the
//! wrappers' slow entry only, engine::base::edges::ARMED).

use crate::engine::base::handles::{world_handle, self_handle, Sim_FT_MPI_Comm, Sim_FT_MPI_Request};
use std::fmt::Write as _;
use std::fs::OpenOptions;
use std::os::raw::c_int;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// Size of `state.R`.
pub const STATE_BYTES: usize = 4096;

/// What the wrapper of a call passes for the dump (read only when tracing).
#[derive(Clone, Copy)]
pub struct Args {
    /// The communicator argument (null: none).
    pub comm: Sim_FT_MPI_Comm,
    pub source: Option<c_int>,
    pub dest: Option<c_int>,
    pub root: Option<c_int>,
    pub tag: Option<c_int>,
    /// `MPI_Wait*`/`MPI_Test*`: the requests waited for.
    pub requests: *const Sim_FT_MPI_Request,
    pub nreq: c_int,
    /// A constructor's new communicator (read at the call's exit).
    pub newcomm: *mut Sim_FT_MPI_Comm,
}

impl Args {
    pub const NONE: Args = Args {
        comm: std::ptr::null_mut(),
        source: None,
        dest: None,
        root: None,
        tag: None,
        requests: std::ptr::null(),
        nreq: 0,
        newcomm: std::ptr::null_mut(),
    };
}

/// One communicator as the dump shows it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CommView {
    pub id: u64,
    pub name: String,
    pub rank: i32,
    pub members: Vec<u32>,
    pub revoked: bool,
    pub failed: Vec<u32>,
    pub acked: Vec<u32>,
}

/// What one process is doing, as `state.R` says it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct State {
    pub rank: usize,
    pub pid: u32,
    pub call: u64,
    pub function: String,
    /// `in`, `out`, `dead-serving`, `finalized`, `dead-finalized`.
    pub state: String,
    /// Seconds since `MPI_Init` returned, at the call's entry.
    pub since: f64,
    pub comm: Option<CommView>,
    pub source: Option<c_int>,
    pub dest: Option<c_int>,
    pub root: Option<c_int>,
    pub tag: Option<c_int>,
    /// The requests waited for: `recv <peer> comm <id>`, `send <peer> comm <id>`
    /// (the peer's world rank, `any` for any source; `pending` after a wildcard
    /// receive on a communicator with an unacknowledged failure),
    /// `coll comm <id>`, `agree comm <id>`, `done`.
    pub requests: Vec<String>,
    /// A dead rank: what it waits for or blocks in (engine::base::observer::DeadStatus).
    pub dead: String,
    /// The communicator of the last wildcard receive this rank waited for while
    /// a failure there was unacknowledged (its `pending` request), kept across
    /// calls until the rank acknowledges failures: a rank that spins around a
    /// wait that returns PENDING is seen between its waits too.
    pub pending: Option<u64>,
}

fn opt(v: Option<c_int>) -> String {
    v.map_or(String::new(), |v| v.to_string())
}

/// A peer argument in words the same under every MPI (whose `MPI_ANY_SOURCE`
/// and `MPI_PROC_NULL` values differ): `any`, `null`, or the rank.
fn peer(v: Option<c_int>) -> String {
    match v {
        Some(p) if p == crate::transport::any_source() => "any".into(),
        Some(p) if p == crate::transport::proc_null() => "null".into(),
        v => opt(v),
    }
}

fn list(v: &[u32]) -> String {
    v.iter().map(u32::to_string).collect::<Vec<_>>().join(" ")
}

/// The `state.R` text (without padding).
pub fn render(s: &State) -> String {
    let mut t = String::with_capacity(512);
    let _ = writeln!(t, "rank: {}\npid: {}\ncall: {}\nfunction: {}\nstate: {}\nsince: {:.3}", s.rank, s.pid, s.call, s.function, s.state, s.since);
    if let Some(c) = &s.comm {
        let _ = writeln!(t, "comm: {:x}\ncomm_name: {}\ncomm_rank: {}\nmembers: {}", c.id, c.name, c.rank, list(&c.members));
        let _ = writeln!(t, "revoked: {}\nfailed: {}\nacked: {}", if c.revoked { "yes" } else { "no" }, list(&c.failed), list(&c.acked));
    }
    let _ = writeln!(t, "source: {}\ndest: {}\nroot: {}\ntag: {}", peer(s.source), peer(s.dest), opt(s.root), opt(s.tag));
    let _ = writeln!(t, "requests: {}\ndead: {}", s.requests.join("; "), s.dead);
    if let Some(id) = s.pending {
        let _ = writeln!(t, "pending: {id:x}");
    }
    t
}

/// `render`'s text as one JSON object of strings (keys in their order).
pub fn to_json(text: &str, why: &str) -> String {
    let esc = |s: &str| s.chars().flat_map(|c| match c {
        '"' => vec!['\\', '"'],
        '\\' => vec!['\\', '\\'],
        c if (c as u32) < 0x20 => format!("\\u{:04x}", c as u32).chars().collect(),
        c => vec![c],
    }).collect::<String>();
    let mut out = format!("{{\"why\": \"{}\"", esc(why));
    for line in text.lines() {
        if let Some((k, v)) = line.split_once(": ").or_else(|| line.strip_suffix(':').map(|k| (k, ""))) {
            let _ = write!(out, ", \"{}\": \"{}\"", esc(k.trim()), esc(v.trim()));
        }
    }
    out.push_str("}\n");
    out
}

/// The counter that is odd while `state.R`'s mapping (MAP) is written.
static SEQ: AtomicU64 = AtomicU64::new(0);
static MAP: AtomicUsize = AtomicUsize::new(0);
static DUMP: Mutex<Option<Dump>> = Mutex::new(None);
static ASKED: AtomicBool = AtomicBool::new(false);
/// Entry time (ms since init) of the call in progress, 0 when none.
static IN_SINCE_MS: AtomicU64 = AtomicU64::new(0);

struct Dump {
    dir: PathBuf,
    state: State,
    /// Communicator names: id -> name (this process's view).
    names: Vec<(u64, String)>,
    newcomm: *mut Sim_FT_MPI_Comm,
}
// SAFETY: `newcomm` is only read by the MPI thread, during the call whose
// argument it is; the struct moves between threads only inside DUMP's mutex.
unsafe impl Send for Dump {}

fn map_file(path: &Path) -> std::io::Result<*mut u8> {
    let f = OpenOptions::new().read(true).write(true).create(true).truncate(true).open(path)?;
    f.set_len(STATE_BYTES as u64)?;
    // SAFETY: a fresh shared mapping of a file just sized to STATE_BYTES; the
    // mapping outlives the descriptor, as mmap allows.
    let p = unsafe {
        libc::mmap(std::ptr::null_mut(), STATE_BYTES, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, f.as_raw_fd(), 0)
    };
    if p == libc::MAP_FAILED {
        return Err(std::io::Error::last_os_error());
    }
    Ok(p as *mut u8)
}

/// Writes `text` into the mapping, padded; the counter brackets the write.
fn publish(text: &str) {
    let p = MAP.load(Ordering::Acquire) as *mut u8;
    if p.is_null() {
        return;
    }
    let mut buf = [b' '; STATE_BYTES];
    let n = text.len().min(STATE_BYTES - 1);
    buf[..n].copy_from_slice(&text.as_bytes()[..n]);
    buf[STATE_BYTES - 1] = b'\n';
    SEQ.fetch_add(1, Ordering::AcqRel);
    // SAFETY: `p` is the live mapping of STATE_BYTES bytes (never unmapped);
    // the only writer holds DUMP's mutex.
    unsafe { std::ptr::copy_nonoverlapping(buf.as_ptr(), p, STATE_BYTES) };
    SEQ.fetch_add(1, Ordering::AcqRel);
}

/// A whole copy of the mapping (the watcher's read): retried while a write runs.
fn snapshot() -> Option<String> {
    let p = MAP.load(Ordering::Acquire) as *const u8;
    if p.is_null() {
        return None;
    }
    for _ in 0..1000 {
        let before = SEQ.load(Ordering::Acquire);
        if before % 2 == 1 {
            std::thread::yield_now();
            continue;
        }
        let mut buf = vec![0u8; STATE_BYTES];
        // SAFETY: the live mapping of STATE_BYTES bytes; a copy torn by a
        // concurrent write is detected by the counter and thrown away.
        unsafe { std::ptr::copy_nonoverlapping(p, buf.as_mut_ptr(), STATE_BYTES) };
        if SEQ.load(Ordering::Acquire) == before {
            return Some(String::from_utf8_lossy(&buf).trim_end().to_string());
        }
    }
    None
}

/// Runs `f` on the dump's state, then publishes it (the MPI thread only).
fn update(f: impl FnOnce(&mut Dump)) {
    if MAP.load(Ordering::Relaxed) == 0 {
        return;
    }
    let mut g = DUMP.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(d) = g.as_mut() {
        f(d);
        publish(&render(&d.state));
    }
}

fn now_ms() -> u64 {
    (crate::inject::me::t0().elapsed().as_millis() as u64).max(1)
}

/// `MPI_Init` with `MPIFT_TRACE=dir`: maps `state.R`, names the predefined
/// communicators, starts the watcher. Errors are reported by the trace.
pub fn start(dir: &Path, rank: usize, pid: u32) -> std::io::Result<()> {
    let map = map_file(&dir.join(format!("state.{rank}")))?;
    MAP.store(map as usize, Ordering::Release);
    std::fs::write(dir.join(format!("comms.{rank}")), "")?;
    let state = State { rank, pid, state: "in".into(), function: "MPI_Init".into(), ..State::default() };
    *DUMP.lock().unwrap_or_else(|e| e.into_inner()) = Some(Dump { dir: dir.to_path_buf(), state, names: Vec::new(), newcomm: std::ptr::null_mut() });
    update(|d| {
        name_comm(d, world_handle(), "MPI_COMM_WORLD".into());
        name_comm(d, self_handle(), "MPI_COMM_SELF".into());
    });
    watch(dir.to_path_buf(), rank);
    Ok(())
}

/// The entry of call `call` of `name` (before its arguments are known).
pub fn enter(call: u64, name: &str) {
    IN_SINCE_MS.store(now_ms(), Ordering::Release);
    update(|d| {
        let s = &mut d.state;
        let acks = name == "MPIX_Comm_failure_ack" || name == "MPIX_Comm_ack_failed";
        let pending = if acks { None } else { s.pending };
        *s = State { rank: s.rank, pid: s.pid, call, function: name.to_string(), state: "in".into(), pending, ..State::default() };
        s.since = crate::inject::me::t0().elapsed().as_secs_f64();
        d.newcomm = std::ptr::null_mut();
    });
}

/// The call's arguments (`ffi::boundary`, after the entry's kill decision).
pub fn args(a: Args) {
    update(|d| {
        for (h, n) in [(world_handle(), "MPI_COMM_WORLD"), (self_handle(), "MPI_COMM_SELF")] {
            if a.comm == h {
                name_comm(d, h, n.to_string());
            }
        }
        d.state.comm = (!a.comm.is_null()).then(|| view(a.comm, &d.names)).flatten();
        d.state.source = a.source;
        d.state.dest = a.dest;
        d.state.root = a.root;
        d.state.tag = a.tag;
        d.state.requests = requests(a.requests, a.nreq);
        if let Some(id) = d.state.requests.iter().find_map(|r| r.strip_suffix(" pending").and_then(|r| r.rsplit(' ').next())) {
            d.state.pending = u64::from_str_radix(id, 16).ok();
        }
        d.newcomm = a.newcomm;
    });
}

/// A collective entered on `comm` (engine::base::observer, from the collective's
/// entry hook, while armed): its communicator and root, for the wrappers of
/// collectives, which give no arguments themselves (their fast path stays as
/// it was). A collective MPIFT runs for itself inside another call (a dead
/// rank's join, a shrink's) is not the program's call: kept out.
pub fn coll_entered(comm: Sim_FT_MPI_Comm, root: c_int) {
    if MAP.load(Ordering::Relaxed) == 0 || crate::engine::base::runtime::is_zombie() {
        return; // no state file (tracing off), or a dead rank's join
    }
    update(|d| {
        if d.state.comm.is_none() {
            d.state.comm = view(comm, &d.names);
            d.state.root = (root >= 0).then_some(root);
        }
    });
}

/// The exit of the call: a constructor's new communicator gets its name.
pub fn exit() {
    IN_SINCE_MS.store(0, Ordering::Release);
    update(|d| {
        d.state.state = "out".into();
        if !d.newcomm.is_null() {
            // SAFETY: the constructor's output argument, valid until the call
            // returns (this is its exit, on the calling thread).
            let h = unsafe { *d.newcomm };
            d.newcomm = std::ptr::null_mut();
            name_new(d, h);
        }
    });
}

/// The process's state changes without a call (death, dead service, finalize).
pub fn set_state(state: &str, dead: Option<String>) {
    if state != "in" {
        IN_SINCE_MS.store(0, Ordering::Release);
    }
    update(|d| {
        d.state.state = state.to_string();
        if let Some(w) = dead {
            d.state.dead = w;
        }
    });
}

fn name_new(d: &mut Dump, h: Sim_FT_MPI_Comm) {
    let name = format!("the communicator from {} at call {}", d.state.function, d.state.call);
    name_comm(d, h, name);
}

/// Gives communicator `h` its name, once (`comms.R` gets a line).
fn name_comm(d: &mut Dump, h: Sim_FT_MPI_Comm, name: String) {
    let Some(id) = crate::engine::registry::comm::read(h, |st| st.id) else { return };
    if d.names.iter().any(|(i, _)| *i == id) {
        return;
    }
    let path = d.dir.join(format!("comms.{}", d.state.rank));
    let _ = OpenOptions::new().append(true).create(true).open(path).and_then(|mut f| std::io::Write::write_all(&mut f, format!("{id:x} {name}\n").as_bytes()));
    d.names.push((id, name));
}

fn name_of(id: u64, names: &[(u64, String)]) -> String {
    names.iter().find(|(i, _)| *i == id).map_or_else(|| format!("communicator {id:x}"), |(_, n)| n.clone())
}

fn view(h: Sim_FT_MPI_Comm, names: &[(u64, String)]) -> Option<CommView> {
    crate::engine::registry::comm::read(h, |st| CommView {
        id: st.id,
        name: name_of(st.id, names),
        rank: st.rank,
        members: st.members.clone(),
        revoked: st.revoked,
        failed: st.failures.known().to_vec(),
        acked: st.failures.acked().to_vec(),
    })
}

fn requests(reqs: *const Sim_FT_MPI_Request, n: c_int) -> Vec<String> {
    if reqs.is_null() || n <= 0 {
        return Vec::new();
    }
    // SAFETY: the program's array of `n` requests, argument of the call that is
    // being entered on this thread.
    let hs = unsafe { std::slice::from_raw_parts(reqs, n as usize) };
    hs.iter().take(64).map(|h| describe_request(*h)).collect()
}

fn describe_request(h: Sim_FT_MPI_Request) -> String {
    use crate::engine::registry::req_state::Kind;
    let Ok(st) = crate::engine::registry::request::lookup(h) else { return "null".into() };
    if st.persistent && !st.active {
        return "inactive".into();
    }
    let peer = st.peer;
    let (id, world, unacked) =
        crate::engine::registry::comm::read(st.comm.0, |c| (c.id, usize::try_from(peer).ok().and_then(|p| c.peer_world(p)), c.any_source_fails()))
            .unwrap_or((0, None, false));
    // The peer as a world rank ("any": MPI_ANY_SOURCE).
    let w = world.map_or_else(|| "any".to_string(), |w| w.to_string());
    match st.kind {
        // A wildcard receive while a failure is unacknowledged: PENDING.
        Kind::P2p | Kind::P2pStart if st.recv && world.is_none() && unacked => format!("recv {w} comm {id:x} pending"),
        Kind::P2p | Kind::P2pStart if st.recv => format!("recv {w} comm {id:x}"),
        Kind::P2p | Kind::P2pStart => format!("send {w} comm {id:x}"),
        Kind::Ft => format!("agree comm {id:x}"),
        _ => format!("coll comm {id:x}"),
    }
}

/// The `SIGUSR1` action that was in place before ours (MPICH installs one at
/// `MPI_Init`): ours calls it after asking for the dump, so its meaning stays.
static PREVIOUS: AtomicUsize = AtomicUsize::new(0);
static PREVIOUS_SIGINFO: AtomicBool = AtomicBool::new(false);

/// `SIGUSR1`: asks the watcher for a dump (an atomic store), then runs the
/// handler that was there before. Both are async-signal-safe.
extern "C" fn on_signal(sig: c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    ASKED.store(true, Ordering::SeqCst);
    let prev = PREVIOUS.load(Ordering::SeqCst);
    if prev == libc::SIG_DFL || prev == libc::SIG_IGN {
        return;
    }
    if PREVIOUS_SIGINFO.load(Ordering::SeqCst) {
        // SAFETY: `prev` was installed as an SA_SIGINFO handler (sigaction said
        // so), whose type this is; the arguments are the kernel's own.
        let f: extern "C" fn(c_int, *mut libc::siginfo_t, *mut libc::c_void) = unsafe { std::mem::transmute(prev) };
        f(sig, info, ctx);
    } else {
        // SAFETY: `prev` was installed as a plain handler, whose type this is.
        let f: extern "C" fn(c_int) = unsafe { std::mem::transmute(prev) };
        f(sig);
    }
}

/// Installs the handler of `SIGUSR1`, keeping the one before it (called at
/// `MPI_Init`, after the host's; a handler the program sets later replaces ours).
fn catch_signal() {
    // SAFETY: a zeroed sigaction is a valid "no action" value to read into.
    let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: a query (null new action) into `old`, which lives on this stack.
    if unsafe { libc::sigaction(libc::SIGUSR1, std::ptr::null(), &mut old) } != 0 || old.sa_sigaction == libc::SIG_IGN {
        return;
    }
    PREVIOUS.store(old.sa_sigaction, Ordering::SeqCst);
    PREVIOUS_SIGINFO.store(old.sa_flags & libc::SA_SIGINFO != 0, Ordering::SeqCst);
    // SAFETY: a zeroed sigaction with our handler (SA_SIGINFO form) and the old
    // action's mask; SA_RESTART so the program's system calls go on.
    unsafe {
        let mut act: libc::sigaction = std::mem::zeroed();
        act.sa_sigaction = on_signal as *const () as libc::sighandler_t;
        act.sa_flags = libc::SA_RESTART | libc::SA_SIGINFO;
        act.sa_mask = old.sa_mask;
        libc::sigaction(libc::SIGUSR1, &act, std::ptr::null_mut());
    }
}

/// `MPIFT_DUMP_AFTER`: seconds in one call before the dump (None: unset or
/// not a positive number, which is reported).
fn dump_after(rank: usize) -> Option<f64> {
    let v = std::env::var("MPIFT_DUMP_AFTER").ok()?;
    match v.trim().parse::<f64>() {
        Ok(s) if s.is_finite() && s > 0.0 => Some(s),
        _ => {
            crate::say!("MPIFT: rank {rank}: MPIFT_DUMP_AFTER={v} is not a positive number of seconds; ignored");
            None
        }
    }
}

/// The watcher thread: a dump on the signal, and once per call that runs
/// longer than `MPIFT_DUMP_AFTER`.
fn watch(dir: PathBuf, rank: usize) {
    catch_signal();
    let after_ms = dump_after(rank).map(|s| (s * 1000.0) as u64);
    let spawned = std::thread::Builder::new().name("mpift-dump".into()).spawn(move || {
        let mut dumped_at = 0;
        loop {
            std::thread::sleep(Duration::from_millis(50));
            if ASKED.swap(false, Ordering::SeqCst) {
                write_dump(&dir, rank, "signal SIGUSR1");
            }
            let since = IN_SINCE_MS.load(Ordering::Acquire);
            if let Some(a) = after_ms {
                if since != 0 && since != dumped_at && now_ms().saturating_sub(since) > a {
                    dumped_at = since;
                    write_dump(&dir, rank, &format!("more than {} s in one call (MPIFT_DUMP_AFTER)", a as f64 / 1000.0));
                }
            }
        }
    });
    if let Err(e) = spawned {
        crate::say!("MPIFT: rank {rank}: MPIFT_TRACE: no dump thread: {e}");
    }
}

/// `dump.R.txt` and `dump.R.json` from the mapping.
fn write_dump(dir: &Path, rank: usize, why: &str) {
    let Some(text) = snapshot() else { return };
    let _ = std::fs::write(dir.join(format!("dump.{rank}.txt")), format!("why: {why}\n{text}\n"));
    let _ = std::fs::write(dir.join(format!("dump.{rank}.json")), to_json(&text, why));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_names_what_a_rank_waits_for() {
        let s = State {
            rank: 2,
            pid: 7,
            call: 17,
            function: "MPI_Recv".into(),
            state: "in".into(),
            comm: Some(CommView { id: 0xab, name: "MPI_COMM_WORLD".into(), rank: 2, members: vec![0, 1, 2, 3], failed: vec![1], ..CommView::default() }),
            source: Some(3),
            tag: Some(5),
            ..State::default()
        };
        let t = render(&s);
        for want in ["function: MPI_Recv", "comm: ab", "comm_name: MPI_COMM_WORLD", "members: 0 1 2 3", "revoked: no", "failed: 1", "source: 3", "dest: \n", "tag: 5"] {
            assert!(t.contains(want), "{want} in {t}");
        }
        let j = to_json(&t, "signal \"x\"");
        assert!(j.starts_with("{\"why\": \"signal \\\"x\\\"\", \"rank\": \"2\""), "{j}");
        assert!(j.contains("\"dest\": \"\""), "{j}");
        assert!(j.trim_end().ends_with('}'));
        assert!(!t.contains("pending:"), "{t}");
        assert!(render(&State { pending: Some(0x2c), ..s }).contains("pending: 2c\n"));
    }
}
