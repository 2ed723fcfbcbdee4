//! MPIFT's communicators: a registry from handle (anchor address) to state.
//!
//! One MPIFT communicator wraps exactly one real communicator; failure-free, the
//! layer creates no communicator of its own (GUIDE principle 5 allows one more).

use crate::ffi::errors::{Failure, Outcome};
use crate::ffi::handles::{self, CommRef, Sim_FT_Comm_struct, Sim_FT_MPI_Comm};
use crate::layer::Real;
use crate::protocol::failures::Failures;
use crate::transport::{self, err, mpi};
use mpi_sys::{MPI_Comm, MPI_Errhandler};
use std::collections::HashMap;
use std::sync::Mutex;

/// What MPIFT knows about one communicator.
#[derive(Clone, Debug)]
pub struct CommState {
    pub real: Real<MPI_Comm>,
    /// The handler the user set (the real communicator always has
    /// `MPI_ERRORS_RETURN` or a do-nothing token, so errors come back to MPIFT).
    pub errhandler: Real<MPI_Errhandler>,
    pub revoked: bool,
    /// Failed members known here, and which of them the program acknowledged.
    pub failures: Failures,
    /// `MPI_COMM_WORLD` / `MPI_COMM_SELF`: may not be freed.
    pub predefined: bool,
}

/// Registry keyed by handle address; `None` outside `MPI_Init`..`MPI_Finalize`.
static COMMS: Mutex<Option<HashMap<usize, CommState>>> = Mutex::new(None);

fn key(h: Sim_FT_MPI_Comm) -> usize {
    h as usize
}

/// Sets up `MPI_COMM_WORLD` and `MPI_COMM_SELF` (called by `MPI_Init`).
pub(crate) fn install_predefined() {
    let mut map = HashMap::new();
    for (h, real) in [
        (handles::world_handle(), transport::comm_world()),
        (handles::self_handle(), transport::comm_self()),
    ] {
        unsafe { mpi::MPI_Comm_set_errhandler(real, transport::errors_return()) };
        map.insert(
            key(h),
            CommState {
                real: Real(real),
                errhandler: Real(transport::errors_are_fatal()),
                revoked: false,
                failures: Failures::new(),
                predefined: true,
            },
        );
    }
    *COMMS.lock().unwrap() = Some(map);
}

/// Forgets every communicator (called by `MPI_Finalize`).
pub(crate) fn clear() {
    if let Some(map) = COMMS.lock().unwrap().take() {
        for (k, st) in map {
            if !st.predefined {
                drop(unsafe { Box::from_raw(k as *mut Sim_FT_Comm_struct) });
            }
        }
    }
}

/// The checked lookup behind every communicator argument.
pub fn lookup(h: Sim_FT_MPI_Comm) -> Option<CommRef> {
    let guard = COMMS.lock().unwrap();
    let st = guard.as_ref()?.get(&key(h))?;
    Some(CommRef { handle: h, real: st.real.0, revoked: st.revoked })
}

/// Reads a communicator's state in place (None: unknown handle).
pub fn read<R>(h: Sim_FT_MPI_Comm, f: impl FnOnce(&CommState) -> R) -> Option<R> {
    COMMS.lock().unwrap().as_ref()?.get(&key(h)).map(f)
}

/// Changes a communicator's state; false if the handle is unknown.
pub fn update(h: Sim_FT_MPI_Comm, f: impl FnOnce(&mut CommState)) -> bool {
    let mut guard = COMMS.lock().unwrap();
    match guard.as_mut().and_then(|m| m.get_mut(&key(h))) {
        Some(st) => {
            f(st);
            true
        }
        None => false,
    }
}

/// Wraps a communicator the real MPI just created. It inherits the error handler
/// of `parent` (MPI-3.1 §8.3: new communicators inherit it). `MPI_COMM_NULL`
/// (e.g. split with `MPI_UNDEFINED`) stays null.
pub fn adopt(real: MPI_Comm, parent: &CommRef) -> Sim_FT_MPI_Comm {
    if real == transport::comm_null() {
        return std::ptr::null_mut();
    }
    let errhandler = read(parent.handle, |s| s.errhandler).unwrap_or(Real(transport::errors_are_fatal()));
    let h = Box::into_raw(Box::new(Sim_FT_Comm_struct::anchor()));
    let st = CommState { real: Real(real), errhandler, revoked: false, failures: Failures::new(), predefined: false };
    COMMS.lock().unwrap().as_mut().expect("MPI is initialised").insert(key(h), st);
    h
}

/// `MPI_Comm_free`: frees the real communicator and the handle; sets it to null.
pub fn free(comm: *mut Sim_FT_MPI_Comm) -> Outcome {
    if comm.is_null() {
        return Err(Failure::on_world(err::get(unsafe { &err::ARG })));
    }
    let h = unsafe { *comm };
    let c = handles::comm_arg(h)?;
    if read(h, |st| st.predefined).expect("looked up above") {
        return Err(Failure::on(h, err::get(unsafe { &err::COMM })));
    }
    let mut real = c.real;
    let rc = unsafe { mpi::MPI_Comm_free(&mut real) };
    if rc != 0 {
        return Err(Failure::on(h, rc));
    }
    COMMS.lock().unwrap().as_mut().unwrap().remove(&key(h));
    drop(unsafe { Box::from_raw(h) });
    unsafe { *comm = std::ptr::null_mut() };
    Ok(())
}

/// Number of live MPIFT communicators (predefined included).
pub fn count() -> usize {
    COMMS.lock().unwrap().as_ref().map_or(0, |m| m.len())
}
