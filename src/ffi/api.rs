//! Hand-written exported items that are not MPI functions.
#![allow(non_upper_case_globals, non_camel_case_types, non_snake_case, clippy::missing_safety_doc)]

use crate::engine::base::handles::Sim_FT_MPI_Comm;
use std::os::raw::{c_char, c_int, c_long, c_longlong, c_ulonglong, c_void};

/// Which MPI libmpift.a was built for, e.g. "MPICH 4.0.2" (NUL-terminated).
#[no_mangle]
pub extern "C" fn Sim_FT_built_for() -> *const c_char {
    concat!(env!("MPIFT_BUILT_FOR"), "\0").as_ptr() as *const c_char
}

/// The calling rank dies (simulated) and never returns to the program. It stays a
/// running process that serves the survivors (answers, drains messages, joins
/// collectives with dummy data) and exits with status 0 when they finalize.
/// Outside `MPI_Init`..`MPI_Finalize` the process just exits with status 0.
#[no_mangle]
pub extern "C" fn Sim_FT_kill_me() {
    if !crate::engine::base::process::is_active() {
        std::process::exit(0);
    }
    crate::inject::death::die_now(crate::inject::plan::Cause::Api)
}

/// Sets the simulated failure-detection delay in seconds (`SIM_FT_TIMEOUT`): how
/// long a dying rank waits before the survivors learn of its death.
#[no_mangle]
pub extern "C" fn Sim_FT_set_timeout(seconds: f64) {
    crate::engine::base::settings::set_timeout(seconds)
}

/// Sets the fan-out of the tree that `MPIX_Comm_agree`/`shrink` and their
/// non-blocking forms run over (`TREE_SUCCESSOR_COUNT`, default 8; clamped to
/// 1..=1048576). Call it before `MPI_Init`: rank 0's value, or its
/// `MPIFT_TREE_FANOUT` environment variable (which wins), is used by every
/// process.
#[no_mangle]
pub extern "C" fn Sim_FT_set_tree_fanout(k: c_int) {
    crate::engine::agree::ft::request_fanout(k.max(1) as u32)
}

/// Is world rank `rank` simulated-dead, as far as this process knows? (1/0)
/// Lets MPI progress once (with MPICH, news reaches a process only while MPI runs
/// there), so polling it in a loop sees a death.
#[no_mangle]
pub extern "C" fn Sim_FT_is_dead(rank: c_int) -> c_int {
    if !crate::engine::base::process::is_active() {
        return 0;
    }
    crate::engine::news::wake::drain_wakes();
    crate::engine::news::news::refresh();
    (rank >= 0 && crate::engine::base::runtime::is_dead(rank as u32)) as c_int
}

// --- accounting (bench/README.md) ----------------------------------------------

/// What MPIFT sent and created for its own purposes in this process since
/// `MPI_Init` (`Sim_FT_stats`). Failure-free, only the `MPI_Init` items are
/// nonzero: no control message per application call.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct Sim_FT_stats_t {
    /// One-sided operations started on other processes' window regions (news of a
    /// death or revoke, reads of collective logs, kill tickets).
    pub rma_ops: c_ulonglong,
    /// Zero-byte wake messages sent on the layer's communicator.
    pub wake_msgs: c_ulonglong,
    /// Collectives joined with dummy data (as a dead rank, or catching up on a
    /// revoked communicator).
    pub dummy_joins: c_ulonglong,
    /// Collectives MPIFT ran for itself inside `MPI_Init` (window creation, the
    /// fault-injection agreement). `MPI_Finalize` adds the report's gathers and
    /// the window's free.
    pub init_collectives: c_ulonglong,
    /// Communicators MPIFT created for its own use since `MPI_Init` (its one
    /// shadow communicator; dummy results of constructors a dead rank joined,
    /// freed at once).
    pub layer_comms_created: c_ulonglong,
    /// Of those, how many exist now.
    pub layer_comms_live: c_ulonglong,
    /// RMA windows MPIFT created (one, over `MPI_COMM_WORLD`).
    pub layer_windows: c_ulonglong,
    /// Communicators of the program that exist now (`MPI_COMM_WORLD` and
    /// `MPI_COMM_SELF` included).
    pub user_comms: c_ulonglong,
}

/// Fills `*out` with this process's accounting (see `Sim_FT_stats_t`); returns
/// 0, or `MPI_ERR_ARG` if `out` is NULL. Local, sends nothing; callable at any
/// time (zeros before `MPI_Init`).
///
/// # Safety
/// `out` is NULL or points to a writable `Sim_FT_stats_t`.
#[no_mangle]
pub unsafe extern "C" fn Sim_FT_stats(out: *mut Sim_FT_stats_t) -> c_int {
    use crate::transport::stats::{self, get};
    if out.is_null() {
        return crate::transport::err::arg();
    }
    let created = get(&stats::COMMS_CREATED);
    let s = Sim_FT_stats_t {
        rma_ops: get(&stats::RMA_OPS),
        wake_msgs: get(&stats::WAKE_MSGS),
        dummy_joins: get(&stats::DUMMY_JOINS),
        init_collectives: get(&stats::INIT_COLLECTIVES),
        layer_comms_created: created,
        layer_comms_live: created.saturating_sub(get(&stats::COMMS_FREED)),
        layer_windows: get(&stats::WINDOWS),
        user_comms: std::panic::catch_unwind(crate::engine::registry::comm::count).unwrap_or(0) as c_ulonglong,
    };
    // SAFETY: `out` is not null (checked above) and the caller promises it points
    // to a writable `Sim_FT_stats_t` (this function's `# Safety`).
    unsafe { *out = s };
    0
}

// --- fault injection (docs/INJECTION.md) -------------------------------------

/// A kill callback (see `Sim_FT_set_kill_callback`): called at the entry of
/// every MPI call with the caller's world rank, the call's number (1 is
/// `MPI_Init`), the MPI function's name and `ctx`; nonzero means "die now".
pub type Sim_FT_kill_callback =
    Option<unsafe extern "C" fn(world_rank: c_int, call: c_long, mpi_function: *const c_char, ctx: *mut c_void) -> c_int>;

/// Sets this rank's kill policy, in `MPIFT_KILL`'s language (e.g.
/// `"rank=3@call=100;max=1"`), replacing the one from the environment. Before
/// `MPI_Init` it takes effect at `MPI_Init`; after, at once (a call number
/// already passed fires at the next call; times count from `MPI_Init`).
/// Returns 0, or `MPI_ERR_ARG` with a message naming the bad token on stderr.
///
/// # Safety
/// `rules` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn Sim_FT_set_kill_policy(rules: *const c_char) -> c_int {
    let arg = crate::transport::err::arg();
    if rules.is_null() {
        return arg;
    }
    // SAFETY: `rules` is not null (checked above) and the caller promises a
    // NUL-terminated string (this function's `# Safety`); only read here.
    let text = unsafe { std::ffi::CStr::from_ptr(rules) }.to_string_lossy().into_owned();
    match std::panic::catch_unwind(|| crate::inject::set_policy(&text)) {
        Ok(Ok(())) => 0,
        Ok(Err(why)) => {
            crate::say!("MPIFT: Sim_FT_set_kill_policy: {why}");
            arg
        }
        Err(_) => arg,
    }
}

/// Registers a kill callback (NULL removes it); `ctx` is passed back to it. It
/// runs at the entry of every MPI call of this process (MPI calls it makes
/// itself are not decided on); spare ranks and `max=M` apply to its deaths,
/// whose cause is `api`.
#[no_mangle]
pub extern "C" fn Sim_FT_set_kill_callback(callback: Sim_FT_kill_callback, ctx: *mut c_void) {
    crate::inject::set_callback(callback, ctx)
}

/// The job's random seed (`MPIFT_SEED`, or the one rank 0 chose), valid after
/// `MPI_Init`; running again with `MPIFT_SEED` set to it repeats the draws.
#[no_mangle]
pub extern "C" fn Sim_FT_get_seed() -> c_ulonglong {
    crate::inject::seed().unwrap_or(0)
}

/// How many MPI calls this process has made (`MPI_Init` is call 1); the number
/// `rank=R@call=N` rules count.
#[no_mangle]
pub extern "C" fn Sim_FT_call_count() -> c_longlong {
    crate::inject::me::calls() as c_longlong
}

/// Flips bits of the data of `count` elements of `datatype` at `buf` (thesis
/// 5.4): each bit independently with probability `p`, i.e. a Binomial(bits, p)
/// number of distinct, uniformly chosen bits; the gaps of a derived datatype are
/// not touched. Draws from the job's seeded generator. Needs `MPI_Init`.
/// Returns the number of bits flipped, or -1 on a bad argument.
#[no_mangle]
pub extern "C" fn Sim_FT_Manipulate_bits(buf: *mut c_void, count: c_int, datatype: crate::transport::MPI_Datatype, p: f64) -> c_longlong {
    if count < 0 || (count > 0 && buf.is_null()) || !(0.0..=1.0).contains(&p) || !crate::engine::base::process::is_active() {
        return -1;
    }
    if count == 0 {
        return 0;
    }
    match std::panic::catch_unwind(|| crate::inject::bitflip::manipulate_typed(buf, count, datatype, p)) {
        Ok(Ok(m)) => m as c_longlong,
        _ => -1,
    }
}

/// Like `Sim_FT_Manipulate_bits` for `len` raw bytes (also before `MPI_Init`).
#[no_mangle]
pub extern "C" fn Sim_FT_Manipulate_bytes(buf: *mut c_void, len: usize, p: f64) -> c_longlong {
    if (len > 0 && buf.is_null()) || !(0.0..=1.0).contains(&p) {
        return -1;
    }
    if len == 0 {
        return 0;
    }
    // SAFETY: `buf` is not null (checked above for len > 0) and, as the C API
    // documents, points to `len` bytes the program owns and does not touch during
    // the call.
    let bytes = unsafe { std::slice::from_raw_parts_mut(buf as *mut u8, len) };
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| crate::inject::bitflip::manipulate_bytes(bytes, p)))
        .map_or(-1, |m| m as c_longlong)
}

/// The process-failure probability p_p(p_c, p_f, k) of thesis 5.4 (see
/// `memory=K` in docs/INJECTION.md).
#[no_mangle]
pub extern "C" fn Sim_FT_process_failure_probability(p_c: f64, p_f: f64, k: f64) -> f64 {
    crate::inject::model::process_failure_probability(p_c, p_f, k)
}

/// `raise` under `-DMPIFT_MAP_SIGNALS`: SIGKILL and SIGTERM between `MPI_Init`
/// and `MPI_Finalize` are `Sim_FT_kill_me()` (cause `signal`); otherwise `raise`.
#[no_mangle]
pub extern "C" fn Sim_FT_raise(sig: c_int) -> c_int {
    crate::inject::legacy::raise(sig)
}

/// `kill` under `-DMPIFT_MAP_SIGNALS`: SIGKILL and SIGTERM sent to the calling
/// process itself between `MPI_Init` and `MPI_Finalize` are `Sim_FT_kill_me()`
/// (cause `signal`); anything else is the real `kill`.
#[no_mangle]
pub extern "C" fn Sim_FT_kill(pid: c_int, sig: c_int) -> c_int {
    crate::inject::legacy::kill(pid, sig)
}

/// `MPI_COMM_NULL_COPY_FN` and `MPI_NULL_COPY_FN` (MPI-3.1 §6.7.2): an attribute
/// copy function that copies nothing (`*flag = 0`).
#[no_mangle]
pub unsafe extern "C" fn Sim_FT_MPI_COMM_NULL_COPY_FN(
    oldcomm: Sim_FT_MPI_Comm,
    comm_keyval: c_int,
    extra_state: *mut c_void,
    attribute_val_in: *mut c_void,
    attribute_val_out: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    let _ = (oldcomm, comm_keyval, extra_state, attribute_val_in, attribute_val_out);
    crate::calls::keyval::null_copy(flag)
}

/// `MPI_COMM_DUP_FN` and `MPI_DUP_FN`: an attribute copy function that copies the
/// value (`*(void **)attribute_val_out = attribute_val_in`, `*flag = 1`).
#[no_mangle]
pub unsafe extern "C" fn Sim_FT_MPI_COMM_DUP_FN(
    oldcomm: Sim_FT_MPI_Comm,
    comm_keyval: c_int,
    extra_state: *mut c_void,
    attribute_val_in: *mut c_void,
    attribute_val_out: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    let _ = (oldcomm, comm_keyval, extra_state);
    crate::calls::keyval::dup_copy(attribute_val_in, attribute_val_out, flag)
}

/// `MPI_COMM_NULL_DELETE_FN` and `MPI_NULL_DELETE_FN`: a delete function that does
/// nothing.
#[no_mangle]
pub unsafe extern "C" fn Sim_FT_MPI_COMM_NULL_DELETE_FN(
    comm: Sim_FT_MPI_Comm,
    comm_keyval: c_int,
    attribute_val: *mut c_void,
    extra_state: *mut c_void,
) -> c_int {
    let _ = (comm, comm_keyval, attribute_val, extra_state);
    0
}
