//! Process creation and management (MPI-3.1 §10) that MPIFT implements by hand:
//! `MPI_Comm_get_parent`, `MPI_Comm_join`, `MPI_Comm_disconnect`. (`Comm_spawn`
//! is calls::spares; `Comm_spawn_multiple`, `Comm_connect` and `Comm_accept` are
//! generic `comm_new` wrappers with an opaque descriptor.)
//!
//! No failure is simulated across two jobs (docs/ARCHITECTURE.md, "Not
//! simulated"): MPIFT tracks failures, revokes and collective logs per host
//! `MPI_COMM_WORLD`, and a job spawned by the host or connected has its own. (An
//! intercommunicator between two groups of one job has ULFM semantics:
//! engine::agree::inter; spawns from spare processes stay within the job:
//! calls::spares and calls::spare.)

use crate::engine::base::errors::{Failure, Outcome};
use crate::engine::base::handles::{self, Sim_FT_MPI_Comm};
use crate::engine::{registry::args, registry::comm, entry::hooks};
use crate::transport::{self, err, MPI_Comm};
use std::os::raw::c_int;
use std::sync::atomic::{AtomicU64, Ordering};

/// Id inputs of communicators that do not descend from one of this job's
/// communicators (the parent intercommunicator, `Comm_join`, `Comm_f2c`).
pub const PARENT_SEED: u64 = 0x7061_7265_6e74;
pub const JOIN_SEED: u64 = 0x6a6f_696e;
pub const F2C_SEED: u64 = 0x0066_3263;

static FOREIGN: AtomicU64 = AtomicU64::new(0);

/// Wraps a real communicator that MPIFT did not create through a wrapper. Its
/// real error handler becomes `MPI_ERRORS_RETURN` (errors must come back to
/// MPIFT); the MPIFT one is `MPI_COMM_WORLD`'s, as for a new communicator.
/// Ids: the parent intercommunicator gets the same id at every child (they all
/// call `MPI_Comm_get_parent` for the same object); the others a per-process one
/// (their local group is this process alone, or unknown).
pub fn adopt_foreign(real: MPI_Comm, seed: u64) -> Option<Sim_FT_MPI_Comm> {
    let world = comm::lookup(handles::world_handle())?;
    let k = if seed == PARENT_SEED { 1 } else { FOREIGN.fetch_add(1, Ordering::Relaxed) + 1 };
    transport::comm::set_errhandler(real, transport::errors_return());
    Some(comm::adopt(real, &world, comm::child_id(seed, k)))
}

/// `MPI_Comm_get_parent`: the same handle every time, `MPI_COMM_NULL` in a
/// process that was not spawned or after the parent was freed or disconnected.
pub fn get_parent(parent: *mut Sim_FT_MPI_Comm) -> Outcome {
    if parent.is_null() {
        return Err(Failure::on_world(err::arg()));
    }
    if let Some(h) = crate::calls::spare::parent() {
        // SAFETY: checked non-null above.
        unsafe { *parent = h };
        return Ok(());
    }
    let mut real = transport::comm_null();
    let rc = transport::comm::get_parent(&mut real);
    Failure::check_world(rc)?;
    let h = if real == transport::comm_null() {
        std::ptr::null_mut()
    } else {
        comm::find_by_real(real).or_else(|| adopt_foreign(real, PARENT_SEED)).unwrap_or(std::ptr::null_mut())
    };
    // SAFETY: the program's out-handle, checked non-null above.
    unsafe { *parent = h };
    Ok(())
}

/// `MPI_Comm_join`: an intercommunicator with the process at the other end of
/// the socket `fd` (`MPI_COMM_NULL` if that process did not call it).
pub fn join(fd: c_int, intercomm: *mut Sim_FT_MPI_Comm) -> Outcome {
    if intercomm.is_null() {
        return Err(Failure::on_world(err::arg()));
    }
    let mut real = transport::comm_null();
    let rc = transport::comm::join(fd, &mut real);
    Failure::check_world(rc)?;
    let h = if real == transport::comm_null() {
        std::ptr::null_mut()
    } else {
        adopt_foreign(real, JOIN_SEED).unwrap_or(std::ptr::null_mut())
    };
    // SAFETY: the program's out-handle, checked non-null above.
    unsafe { *intercomm = h };
    Ok(())
}

fn is_inter(real: MPI_Comm) -> bool {
    let mut flag: c_int = 0;
    transport::comm::test_inter(real, &mut flag);
    flag != 0
}

/// `MPI_Comm_disconnect` (MPI-3.1 §10.5.4): collective; waits for the pending
/// communication on the communicator, then frees it.
///
/// On an intercommunicator with another job (spawned by the host or connected:
/// nothing simulated) the real call. Within the job (an intracommunicator, or an
/// intercommunicator such as a spawn's from spares) `MPI_Comm_free`, which lets pending
/// operations complete in the background: within one job the difference cannot be
/// observed, and a dead member (which could never take part in the real call)
/// blocks nobody. Like real ULFM (Open MPI 5), it succeeds with a dead member, and
/// on a revoked communicator it works as `MPI_Comm_free` does.
pub fn disconnect(c: *mut Sim_FT_MPI_Comm) -> Outcome {
    if c.is_null() {
        return Err(Failure::on_world(err::arg()));
    }
    // SAFETY: the program's in-out handle, checked non-null above.
    let h = unsafe { *c };
    let cr = args::comm_arg(h)?;
    if !is_inter(cr.real) || !cr.foreign {
        // Within one host job (an intercommunicator of spawned spares too).
        return crate::calls::comm_free::free(c);
    }
    if comm::read(h, |s| s.predefined).unwrap_or(false) {
        return Err(Failure::on(h, err::comm()));
    }
    hooks::p2p_enter(h)?;
    let mut real = cr.real;
    let rc = transport::comm::disconnect(&mut real);
    Failure::check(rc, h)?;
    comm::forget(h);
    // SAFETY: the program's in-out handle, checked non-null above.
    unsafe { *c = std::ptr::null_mut() };
    Ok(())
}
