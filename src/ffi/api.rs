//! Hand-written exported items that are not MPI functions.
#![allow(non_upper_case_globals, non_snake_case, clippy::missing_safety_doc)]

use crate::ffi::handles::Sim_FT_MPI_Comm;
use std::os::raw::{c_char, c_int, c_void};

/// The keyval of the `MPIX_FT` attribute (Open MPI 5's `MPI_FT`): set on
/// `MPI_COMM_WORLD` by `MPI_Init`; its value points to a nonzero int, telling a
/// program that fault tolerance is available. `MPI_KEYVAL_INVALID` before init.
#[no_mangle]
pub static mut Sim_FT_MPIX_FT_keyval: c_int = -1;

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
    if !crate::layer::lifecycle::is_active() {
        std::process::exit(0);
    }
    crate::layer::zombie::kill_me()
}

/// Sets the simulated failure-detection delay in seconds (`SIM_FT_TIMEOUT`): how
/// long a dying rank waits before the survivors learn of its death.
#[no_mangle]
pub extern "C" fn Sim_FT_set_timeout(seconds: f64) {
    crate::layer::news::set_timeout(seconds)
}

/// Is world rank `rank` simulated-dead, as far as this process knows? (1/0)
#[no_mangle]
pub extern "C" fn Sim_FT_is_dead(rank: c_int) -> c_int {
    crate::layer::news::refresh();
    (rank >= 0 && crate::layer::news::is_dead(rank as u32)) as c_int
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
    crate::layer::keyval::null_copy(flag)
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
    crate::layer::keyval::dup_copy(attribute_val_in, attribute_val_out, flag)
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
