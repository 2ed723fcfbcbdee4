//! Communicators of `MPI_Comm_idup`s whose request has not completed: the handle
//! exists at once, the communicator is registered at its first use after the
//! request completed ([`adopt`]), because only then may the real one be queried
//! (`calls::comm_ctor` starts them).

use crate::engine::base::handles::{CommRef, Sim_FT_MPI_Comm, Sim_FT_MPI_Request};
use crate::engine::{registry::comm, registry::request, base::handles::Real};
use crate::transport::{self, MPI_Comm, MPI_Errhandler};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// An idup whose communicator is not registered yet.
pub struct PendingDup {
    pub handle: Real<Sim_FT_MPI_Comm>,
    pub real: Real<MPI_Comm>,
    pub request: Real<Sim_FT_MPI_Request>,
    /// The program's handler, which it may set before the idup completes: the
    /// real communicator gets it at registration.
    pub errhandler: Real<MPI_Errhandler>,
    /// What the real communicator carries for it (`calls::errhandler::real_for`).
    pub real_errhandler: Real<MPI_Errhandler>,
    pub id: u64,
}

static PENDING: Mutex<Vec<PendingDup>> = Mutex::new(Vec::new());
/// Fast path of [`adopt`]: nothing pending.
static ANY_PENDING: AtomicBool = AtomicBool::new(false);

pub fn push(p: PendingDup) {
    PENDING.lock().unwrap().push(p);
    ANY_PENDING.store(true, Ordering::Release);
}

/// Registers the communicator of a completed `MPI_Comm_idup` at its handle (called
/// when a handle is not found). The idup's request is complete once MPIFT released
/// it; a program must not use the communicator before that (MPI-3.1 §6.4.2).
pub fn adopt(h: Sim_FT_MPI_Comm) -> Option<CommRef> {
    if !ANY_PENDING.load(Ordering::Acquire) || h.is_null() {
        return None;
    }
    let mut pending = PENDING.lock().unwrap();
    let i = pending.iter().position(|p| p.handle.0 == h)?;
    if request::lookup(pending[i].request.0).is_ok() {
        return None;
    }
    let p = pending.swap_remove(i);
    ANY_PENDING.store(!pending.is_empty(), Ordering::Release);
    drop(pending);
    transport::comm::set_errhandler(p.real.0, p.real_errhandler.0);
    comm::adopt_at(h, p.real.0, p.errhandler, p.id);
    comm::lookup(h)
}

/// The idup of a communicator that is not usable yet: MPI lets a program set and
/// get its error handler at once (mpi4py's `Comm.Idup` sets one before the
/// request completes). `f` reads or changes it; None if `h` is no pending idup.
pub fn with<T>(h: Sim_FT_MPI_Comm, f: impl FnOnce(&mut PendingDup) -> T) -> Option<T> {
    if !ANY_PENDING.load(Ordering::Acquire) || h.is_null() {
        return None;
    }
    let mut pending = PENDING.lock().unwrap();
    let p = pending.iter_mut().find(|p| p.handle.0 == h)?;
    Some(f(p))
}
