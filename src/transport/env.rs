//! The environment: init and finalize, thread level, abort, version, error classes and strings, datatype sizes and extents.
//! (Conventions: the module doc of `transport`.)

#![allow(clippy::too_many_arguments)]

use mpi_sys as mpi;
use std::os::raw::c_int;

/// `MPI_Type_size`.
pub fn type_size(dt: crate::transport::MPI_Datatype, size: &mut c_int) -> c_int {
    // SAFETY: a datatype handle and an out-int the caller owns.
    unsafe { mpi::MPI_Type_size(dt, size) }
}

/// `MPI_Type_get_extent`.
pub fn type_get_extent(dt: crate::transport::MPI_Datatype, lb: &mut crate::transport::MPI_Aint, extent: &mut crate::transport::MPI_Aint) -> c_int {
    // SAFETY: a datatype handle and two out-values the caller owns.
    unsafe { mpi::MPI_Type_get_extent(dt, lb, extent) }
}

/// `MPI_Type_get_true_extent`.
pub fn type_get_true_extent(dt: crate::transport::MPI_Datatype, lb: &mut crate::transport::MPI_Aint, extent: &mut crate::transport::MPI_Aint) -> c_int {
    // SAFETY: a datatype handle and two out-values the caller owns.
    unsafe { mpi::MPI_Type_get_true_extent(dt, lb, extent) }
}

/// `MPI_Error_class`.
pub fn error_class(code: c_int, class: &mut c_int) -> c_int {
    // SAFETY: a value and an out-int the caller owns.
    unsafe { mpi::MPI_Error_class(code, class) }
}

/// `MPI_Init`.
///
/// # Safety
/// `argc` and `argv` are null or the program's `main` arguments (MPI-3.1 §8.7),
/// valid for reads and writes for the call.
pub unsafe fn init(argc: *mut c_int, argv: *mut *mut *mut std::os::raw::c_char) -> c_int {
    mpi::MPI_Init(argc, argv)
}

/// `MPI_Init_thread`.
///
/// # Safety
/// As [`init`] for `argc` and `argv`; `provided` is valid for writing an int.
pub unsafe fn init_thread(argc: *mut c_int, argv: *mut *mut *mut std::os::raw::c_char, required: c_int, provided: *mut c_int) -> c_int {
    mpi::MPI_Init_thread(argc, argv, required, provided)
}

/// `MPI_Initialized`.
///
/// # Safety
/// `flag` is valid for writing an int (the host may check it for null).
pub unsafe fn initialized(flag: *mut c_int) -> c_int {
    mpi::MPI_Initialized(flag)
}

/// `MPI_Finalized`.
///
/// # Safety
/// `flag` is valid for writing an int (the host may check it for null).
pub unsafe fn finalized(flag: *mut c_int) -> c_int {
    mpi::MPI_Finalized(flag)
}

/// `MPI_Get_version`.
///
/// # Safety
/// `version` and `subversion` are valid for writing an int each (the host may
/// check them for null).
pub unsafe fn get_version(version: *mut c_int, subversion: *mut c_int) -> c_int {
    mpi::MPI_Get_version(version, subversion)
}

/// `MPI_Query_thread`.
pub fn query_thread(provided: &mut c_int) -> c_int {
    // SAFETY: an out-int the caller owns.
    unsafe { mpi::MPI_Query_thread(provided) }
}

/// `MPI_Abort`.
pub fn abort(comm: crate::transport::MPI_Comm, errorcode: c_int) -> c_int {
    // SAFETY: a handle and a value.
    unsafe { mpi::MPI_Abort(comm, errorcode) }
}

/// `MPI_Finalize`. The caller has let go of the MPI objects it still uses.
pub fn finalize() -> c_int {
    // SAFETY: no argument; the host checks its own state.
    unsafe { mpi::MPI_Finalize() }
}

/// `MPI_Error_string`.
///
/// # Safety
/// `string` has room for `MPI_MAX_ERROR_STRING` characters (MPI-3.1 §8.4) and
/// stays valid for the call.
pub unsafe fn error_string(code: c_int, string: *mut std::os::raw::c_char, resultlen: &mut c_int) -> c_int {
    mpi::MPI_Error_string(code, string, resultlen)
}

/// `MPI_Add_error_code`.
pub fn add_error_code(class: c_int, code: &mut c_int) -> c_int {
    // SAFETY: a value and an int out that is a reference.
    unsafe { mpi::MPI_Add_error_code(class, code) }
}

/// `MPI_Add_error_class`.
pub fn add_error_class(class: &mut c_int) -> c_int {
    // SAFETY: an int out that is a reference.
    unsafe { mpi::MPI_Add_error_class(class) }
}

/// `MPI_Add_error_string`: the host copies `string` (read up to its NUL).
pub fn add_error_string(code: c_int, string: &std::ffi::CStr) -> c_int {
    // SAFETY: a NUL-terminated string that lives for the call; the host only reads it.
    unsafe { mpi::MPI_Add_error_string(code, string.as_ptr()) }
}
