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
