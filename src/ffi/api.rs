//! Hand-written exported items that are not MPI functions.
#![allow(non_upper_case_globals)]

use std::os::raw::{c_char, c_int};

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
