//! `MPI_Comm_spawn` served by spare processes (`MPIFT_SPARES=k`, issue 21).
//!
//! The host MPI's spawn starts another job: another `MPI_COMM_WORLD`, another
//! MPIFT window, so no failure news crosses between the two jobs (and Debian's
//! MPICH 4.0 cannot spawn at all under Hydra). With `MPIFT_SPARES=k` the launch
//! starts k processes more than the program's world: the last k ranks of the
//! host's world wait inside `MPI_Init` as spares, and `MPI_COMM_WORLD` is the
//! others. A spawn hands out spares: each returns from `MPI_Init` as a process of
//! the spawned job, with that job's `MPI_COMM_WORLD`, `MPI_Comm_get_parent` and
//! argv. Parents and children are processes of one host job, so everything MPIFT
//! simulates (deaths of parents or children, revokes, agreement and shrink over
//! the merged communicator, intercommunicators between them) works across the
//! spawn, on any host MPI.
//!
//! The spawn, at the parents (a collective of `comm`):
//! 1. the root checks the command (it must be this program: a spare runs the
//!    launched executable) and takes `maxprocs` spares and a spawn number from
//!    counters in rank 0's region (`window::SPARES_TAKEN`, `window::SPAWNS`);
//! 2. a broadcast from the root (a logged collective of `comm`, which a dead
//!    member joins) gives every parent the plan, or the root's error;
//! 3. the root sends each spare its activation (on the shadow communicator);
//! 4. `MPI_Intercomm_create` (calls::comm_ctor, with its verdict exchange) from
//!    `comm` to the children's world, over the universe communicator (a dup of
//!    the host's world made at `MPI_Init`). A member dead during the spawn makes
//!    it fail in both groups: the parents get `MPI_ERR_PROC_FAILED`, and the
//!    children wait again as spares (never handed out again).
//!
//! A process dies only at the entry of a call, so within a spawn only the others
//! die: the root before step 1 (step 2's data is then no plan, and every parent
//! fails), a non-root before step 2 (it joins steps 2 and 4 as a dead rank, and 4
//! fails). If the root is refused step 4 (a revoke) after it activated the
//! children, it answers them alone with a failed verdict ([`release`]).
//!
//! The spare's side (waiting, activation, the end of an unused spare) is
//! calls::spare.

use crate::engine::base::errors;
use crate::engine::base::runtime;
use crate::engine::base::errors::{Failure, Outcome, SIM_FT_ERR_PROC_FAILED};
use crate::engine::base::handles::Sim_FT_MPI_Comm;
use crate::calls::comm_ctor;
use crate::engine::base::process;
use crate::engine::{registry::args, registry::comm, join::ctor_join, colls::describe, entry::hooks};
use crate::transport::{self, err, stats, window, MPI_Info};
use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The universe communicator's handle (every launched process).
static UNIVERSE: AtomicUsize = AtomicUsize::new(0);

/// Id of the universe communicator (the same at every process; the predefined
/// ones are 2 and 4).
pub const UNIVERSE_ID: u64 = 6;
/// Id input of a spawned job's `MPI_COMM_WORLD`, with the spawn number.
pub(super) const CHILD_WORLD_SEED: u64 = 0x7370_6177_6e77;
/// Tag of an activation on the shadow communicator (wake::TAG_WAKE is 1).
pub(super) const TAG_ACTIVATE: c_int = 2;
/// First word of a plan and of an activation.
pub(super) const MAGIC: u64 = 0x4d50_4946_5453_5057;
/// Tags of the leaders' exchange on the universe communicator, one per spawn.
const TAG_BASE: c_int = 0x4000;

pub(super) fn universe() -> Sim_FT_MPI_Comm {
    UNIVERSE.load(Ordering::Relaxed) as Sim_FT_MPI_Comm
}

/// At `MPI_Init`, after the runtime started (collective over every launched
/// process): registers `MPI_COMM_WORLD` and `MPI_COMM_SELF`; with spares, the
/// world is the launched processes that are not spares, and every process
/// registers the universe communicator. True if this process is a spare.
pub fn start() -> Result<bool, c_int> {
    if !process::spares_on() {
        comm::install_predefined(transport::comm_world(), comm::WORLD_ID);
        return Ok(false);
    }
    let me = runtime::world_rank();
    let spare = me >= process::first_spare();
    let (mut world, mut all) = (transport::comm_null(), transport::comm_null());
    let color = if spare { transport::undefined() } else { 0 };
    // The host's world after MPI_Init; outs of ours. Both collective over every
    // launched process, which all come here.
    let rc = transport::comm::split(transport::comm_world(), color, me as c_int, &mut world);
    if rc != 0 {
        return Err(rc);
    }
    let rc = transport::comm::dup(transport::comm_world(), &mut all);
    if rc != 0 {
        return Err(rc);
    }
    stats::bump(&stats::COMMS_CREATED);
    // A spare's world stands in until a spawn gives it one (never the program's).
    let (world, id) = if spare { (transport::comm_self(), spare_world_id()) } else { (world, comm::WORLD_ID) };
    comm::install_predefined(world, id);
    let h = comm::new_handle();
    // Our own new communicator.
    transport::comm::set_errhandler(all, transport::errors_return());
    comm::adopt_at(h, all, crate::engine::base::handles::Real(transport::errors_return()), UNIVERSE_ID);
    UNIVERSE.store(h as usize, Ordering::Relaxed);
    Ok(spare)
}

/// Id of a waiting spare's stand-in world.
pub(super) fn spare_world_id() -> u64 {
    comm::child_id(CHILD_WORLD_SEED, 0)
}

/// What the root broadcasts to the parents (step 2).
struct Plan {
    /// 0, or the error every parent returns.
    status: c_int,
    spawn: u64,
    first: u64,
    count: u64,
    tag: c_int,
}

impl Plan {
    fn check(w: &[u64; 8]) -> u64 {
        w[1..7].iter().fold(MAGIC, |h, x| (h ^ x).wrapping_mul(0x0100_0000_01b3).rotate_left(7))
    }
    fn words(&self) -> [u64; 8] {
        let mut w = [MAGIC, self.status as u32 as u64, self.spawn, self.first, self.count, self.tag as u64, 0, 0];
        w[7] = Plan::check(&w);
        w
    }
    fn error(status: c_int) -> [u64; 8] {
        Plan { status, spawn: 0, first: 0, count: 0, tag: 0 }.words()
    }
    /// None for anything but a plan (a dead root's dummy data).
    fn parse(w: &[u64; 8]) -> Option<Plan> {
        (w[0] == MAGIC && w[7] == Plan::check(w)).then(|| Plan {
            status: w[1] as u32 as c_int,
            spawn: w[2],
            first: w[3],
            count: w[4],
            tag: w[5] as c_int,
        })
    }
}

/// What the root spawns, per command: its arguments and process count.
struct App {
    command: *const c_char,
    argv: *mut *mut c_char,
    procs: c_int,
}

/// A host spawn failed (Debian's MPICH under Hydra cannot spawn): the same error
/// class, as a code of its own whose `MPI_Error_string` adds how to launch with
/// spares, so a program that prints or aborts on the error tells its user
/// (issue 33). MPIFT's own errors (a known failure, a revoke) pass unchanged.
fn hint_spares(f: Failure) -> Failure {
    let mut class = f.code;
    transport::env::error_class(f.code, &mut class);
    // Only what the host's spawn itself reports (MPICH: OTHER; Open MPI: SPAWN);
    // argument errors, failures and revokes pass unchanged.
    if class != err::spawn() && class != err::other() {
        return f;
    }
    Failure { code: crate::calls::errhandler::with_hint(f.code, SPARES_HINT), ..f }
}

const SPARES_HINT: &str = "MPIFT: the host MPI could not spawn; launch with MPIFT_SPARES=k and k more \
processes (mpiexec -n <np+k>) to spawn from spares (docs/ARCHITECTURE.md, Spawn from spares)";

/// `MPI_Comm_spawn`.
#[allow(clippy::too_many_arguments)]
pub fn spawn(
    command: *const c_char,
    argv: *mut *mut c_char,
    maxprocs: c_int,
    info: MPI_Info,
    root: c_int,
    c: Sim_FT_MPI_Comm,
    intercomm: *mut Sim_FT_MPI_Comm,
    errcodes: *mut c_int,
) -> Outcome {
    if !process::spares_on() {
        // The host's spawn, an opaque collective of `c` (as a generated wrapper).
        let desc = |cr: &_| describe::unless_inter(cr, || describe::MPI_Comm_spawn(cr, command as _, argv as _, maxprocs, info, root, errcodes as _));
        let call = |real, nc: &mut _| {
            // SAFETY: the program's arguments, passed through as it gave them to
            // MPI_Comm_spawn (whose rules, MPI-3.1 §10.3.2, are comm::spawn's
            // Safety); the real communicator of a checked handle.
            unsafe { transport::comm::spawn(command as _, argv, maxprocs, info, root, real, nc, errcodes) }
        };
        return hooks::comm_new_by_hand(c, intercomm, desc, call).map_err(hint_spares);
    }
    from_spares(|| vec![App { command, argv, procs: maxprocs }], root, c, intercomm, errcodes)
}

/// `MPI_Comm_spawn_multiple`: the children of command i get its arguments
/// (`MPI_APPNUM` stays the launch's).
#[allow(clippy::too_many_arguments)]
pub fn spawn_multiple(
    count: c_int,
    commands: *mut *mut c_char,
    argvs: *mut *mut *mut c_char,
    maxprocs: *const c_int,
    infos: *const MPI_Info,
    root: c_int,
    c: Sim_FT_MPI_Comm,
    intercomm: *mut Sim_FT_MPI_Comm,
    errcodes: *mut c_int,
) -> Outcome {
    if !process::spares_on() {
        // The host's spawn, an opaque collective of `c` (as a generated wrapper).
        let desc = |cr: &_| {
            describe::unless_inter(cr, || {
                describe::MPI_Comm_spawn_multiple(cr, count, commands as _, argvs as _, maxprocs as _, infos as _, root, errcodes as _)
            })
        };
        let call = |real, nc: &mut _| {
            // SAFETY: the program's arguments, passed through as it gave them to
            // MPI_Comm_spawn_multiple (whose rules, MPI-3.1 §10.3.3, are
            // comm::spawn_multiple's Safety); the real communicator of a checked handle.
            unsafe { transport::comm::spawn_multiple(count, commands, argvs, maxprocs, infos, root, real, nc, errcodes) }
        };
        return hooks::comm_new_by_hand(c, intercomm, desc, call).map_err(hint_spares);
    }
    let apps = || {
        (0..count.max(0) as usize)
            .map(|i| {
                // SAFETY: the root's arrays of `count` entries (MPI-3.1 §10.3.3);
                // MPI_ARGVS_NULL is a null array.
                unsafe {
                    App {
                        command: if commands.is_null() { std::ptr::null() } else { *commands.add(i) },
                        argv: if argvs.is_null() { std::ptr::null_mut() } else { *argvs.add(i) },
                        procs: if maxprocs.is_null() { 0 } else { *maxprocs.add(i) },
                    }
                }
            })
            .collect()
    };
    from_spares(apps, root, c, intercomm, errcodes)
}

/// A spawn from spares (module comment); `apps` is read at the root only.
fn from_spares(
    apps: impl FnOnce() -> Vec<App>,
    root: c_int,
    c: Sim_FT_MPI_Comm,
    intercomm: *mut Sim_FT_MPI_Comm,
    errcodes: *mut c_int,
) -> Outcome {
    let cr = args::comm_arg(c)?;
    errors::check_out_ptr(intercomm, &cr)?;
    if cr.inter {
        return Err(Failure::on(cr.handle, err::comm()));
    }
    if root < 0 || root >= cr.size {
        return Err(Failure::on(cr.handle, err::root()));
    }
    // SAFETY: the program's out-handle, checked non-null by check_out_ptr above.
    unsafe { *intercomm = std::ptr::null_mut() };
    let apps = if cr.rank == root { apps() } else { Vec::new() };
    let asked: u64 = apps.iter().map(|a| a.procs.max(0) as u64).sum();
    let mut words = if cr.rank == root { reserve(&apps) } else { [0; 8] };
    // Step 2: a logged collective of `comm`; its verdict does not matter when
    // the data is a plan (a member dead in it forwarded the data; step 4 fails).
    let desc = describe::MPI_Bcast(&cr, words.as_mut_ptr() as _, 8, transport::dt_uint64(), root);
    hooks::coll_enter(&cr, &desc)?;
    // SAFETY: `words` is eight u64s on this frame at every member (8 elements of
    // MPI_UINT64_T); the real communicator of a checked handle.
    let rc = unsafe { transport::generated::MPI_Bcast(words.as_mut_ptr() as *mut c_void, 8, transport::dt_uint64(), root, cr.real) };
    let verdict = hooks::coll_leave(&cr, rc);
    let Some(plan) = Plan::parse(&words) else {
        return Err(verdict.err().unwrap_or(Failure::on(cr.handle, SIM_FT_ERR_PROC_FAILED)));
    };
    if plan.status != 0 {
        set_errcodes(errcodes, asked, plan.status);
        return Err(Failure::on(cr.handle, plan.status));
    }
    let root_leads = cr.rank == root;
    if root_leads {
        activate_spares(&plan, &apps);
    }
    let joined = || ctor_join::joined_as_leader(UNIVERSE_ID, plan.first as c_int, plan.tag);
    let before = joined();
    let (outcome, ran) = comm_ctor::intercomm_create_ran(c, root, universe(), plan.first as c_int, plan.tag, intercomm);
    if root_leads && !ran && joined() == before {
        // Refused (a revoke) without answering the children: answer them alone.
        release(&plan);
    }
    let code = match &outcome {
        Ok(()) => 0,
        Err(f) => f.code,
    };
    set_errcodes(errcodes, plan.count, code);
    outcome
}

fn set_errcodes(errcodes: *mut c_int, count: u64, code: c_int) {
    if errcodes.is_null() {
        return;
    }
    for i in 0..count as usize {
        // SAFETY: the program's array of at least maxprocs entries (MPI-3.1 §10.3.2).
        unsafe { *errcodes.add(i) = code };
    }
}

/// Step 1, at the root: the plan, or why there is none.
fn reserve(apps: &[App]) -> [u64; 8] {
    let (spawn_err, arg_err) = (err::spawn(), err::arg());
    let k: u64 = apps.iter().map(|a| a.procs.max(0) as u64).sum();
    if k < 1 || apps.iter().any(|a| a.procs < 0) {
        return Plan::error(arg_err);
    }
    if !apps.iter().all(|a| same_program(a.command)) {
        say_why("the command is not this program (a spare runs the launched executable)");
        return Plan::error(spawn_err);
    }
    let spares = process::spares() as u64;
    let got = runtime::with(|rt| {
        let before = rt.win.fetch_add(0, window::SPARES_TAKEN, k);
        if before.saturating_add(k) <= spares {
            return Some((before, rt.win.fetch_add(0, window::SPAWNS, 1) + 1));
        }
        rt.win.fetch_add(0, window::SPARES_TAKEN, k.wrapping_neg());
        None
    })
    .flatten();
    let Some((taken, spawn)) = got else {
        say_why(&format!("{k} spares asked for, fewer left of MPIFT_SPARES={spares}"));
        return Plan::error(spawn_err);
    };
    let tag = TAG_BASE + (spawn % 0x3000) as c_int;
    Plan { status: 0, spawn, first: process::first_spare() as u64 + taken, count: k, tag }.words()
}

fn say_why(why: &str) {
    if crate::inject::me::verbose() >= 1 {
        crate::say!("MPIFT: rank {}: MPI_Comm_spawn: {why}: MPI_ERR_SPAWN", runtime::world_rank());
    }
}

/// The command names the executable this process runs (as a path, or found
/// on `PATH`).
fn same_program(command: *const c_char) -> bool {
    if command.is_null() {
        return false;
    }
    let Ok(me) = std::fs::canonicalize("/proc/self/exe") else { return false };
    // SAFETY: a NUL-terminated string of the program's (MPI-3.1 §10.3.2).
    let c = unsafe { CStr::from_ptr(command) }.to_string_lossy().into_owned();
    let mut candidates = vec![std::path::PathBuf::from(&c)];
    if !c.contains('/') {
        if let Some(path) = std::env::var_os("PATH") {
            candidates.extend(std::env::split_paths(&path).map(|d| d.join(&c)));
        }
    }
    candidates.iter().any(|p| std::fs::canonicalize(p).is_ok_and(|p| p == me))
}

/// The arguments of a spawn (`MPI_ARGV_NULL`: none).
fn args_of(argv: *mut *mut c_char) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    if argv.is_null() {
        return out;
    }
    for i in 0.. {
        // SAFETY: a NULL-terminated array of NUL-terminated strings (MPI-3.1 §10.3.2).
        let a = unsafe { *argv.add(i) };
        if a.is_null() {
            break;
        }
        // SAFETY: `a` is a non-null entry of that array, hence a NUL-terminated
        // string (MPI-3.1 §10.3.2).
        out.push(unsafe { CStr::from_ptr(a) }.to_bytes().to_vec());
    }
    out
}

/// Step 3: the activation, to each spare of the plan, in the order of the
/// commands (each child gets its command's arguments).
fn activate_spares(plan: &Plan, apps: &[App]) {
    let shadow = runtime::shadow();
    let mut s = plan.first;
    for app in apps {
        let args = args_of(app.argv);
        let head = [MAGIC, plan.spawn, plan.first, plan.count, runtime::world_rank() as u64, plan.tag as u64, args.len() as u64];
        let mut msg: Vec<u8> = head.iter().flat_map(|w| w.to_le_bytes()).collect();
        for a in &args {
            msg.extend_from_slice(a);
            msg.push(0);
        }
        for _ in 0..app.procs.max(0) {
            // SAFETY: `msg` is our own buffer of `msg.len()` bytes (MPI_BYTE), alive
            // for the blocking send, on the shadow communicator; a spare always
            // has the matching receive coming (it polls for it).
            unsafe { transport::p2p::send(msg.as_ptr() as *const c_void, msg.len() as c_int, transport::dt_byte(), s as c_int, TAG_ACTIVATE, shadow) };
            s += 1;
        }
    }
}

/// The root was refused step 4 after it activated the children: it creates an
/// intercommunicator from itself alone, with a failed verdict, so that their
/// creation ends (and fails) instead of waiting for the parents for ever.
fn release(plan: &Plan) {
    let Some(u) = comm::lookup(universe()) else { return };
    let mut nc = transport::comm_null();
    // Real communicators of this process; `nc` an out.
    let rc = transport::comm::intercomm_create(transport::comm_self(), 0, u.real, plan.first as c_int, plan.tag, &mut nc);
    if rc == 0 {
        ctor_join::inter_id(nc, 0, false);
        // The communicator just made.
        transport::comm::free(&mut nc);
    }
}

#[cfg(test)]
mod tests {
    use super::Plan;

    #[test]
    fn a_plan_survives_the_broadcast_and_nothing_else_is_one() {
        let w = Plan { status: 0, spawn: 3, first: 6, count: 2, tag: 0x4003 }.words();
        let p = Plan::parse(&w).expect("a plan");
        assert_eq!((p.status, p.spawn, p.first, p.count, p.tag), (0, 3, 6, 2, 0x4003));
        // A dead root's dummy data (zeros), and a plan with any word changed.
        assert!(Plan::parse(&[0; 8]).is_none());
        for i in 1..8 {
            let mut bad = w;
            bad[i] ^= 1;
            assert!(Plan::parse(&bad).is_none(), "word {i} changed");
        }
        let e = Plan::parse(&Plan::error(17)).expect("an error plan");
        assert_eq!(e.status, 17);
    }
}
