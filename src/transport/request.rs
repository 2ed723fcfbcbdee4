//! Completion: waits and tests of every form, request free and status, generalized requests.
//! (Conventions: the module doc of `transport`.)

#![allow(clippy::too_many_arguments)]

use mpi_sys as mpi;
use std::os::raw::c_int;
use crate::transport::{MPI_Request, MPI_Status};

/// The host's pointer for a status the caller may ignore.
fn status_ptr(status: Option<&mut MPI_Status>) -> *mut MPI_Status {
    match status {
        Some(s) => s,
        None => crate::transport::status_ignore(),
    }
}

/// `MPI_Wait`; `None` ignores the status.
pub fn wait(req: &mut MPI_Request, status: Option<&mut MPI_Status>) -> c_int {
    // SAFETY: a request handle and a status MPIFT owns (or MPI_STATUS_IGNORE).
    unsafe { mpi::MPI_Wait(req, status_ptr(status)) }
}

/// `MPI_Grequest_start`.
///
/// # Safety
/// Each callback is `None` or a function of its MPI type that the host may call
/// with `extra_state` until the request is freed (the host calls them, not Rust);
/// `extra_state` is whatever those callbacks expect (the host only passes it on).
pub unsafe fn grequest_start(
    query_fn: crate::transport::MPI_Grequest_query_function,
    free_fn: crate::transport::MPI_Grequest_free_function,
    cancel_fn: crate::transport::MPI_Grequest_cancel_function,
    extra_state: *mut std::os::raw::c_void,
    req: &mut MPI_Request,
) -> c_int {
    mpi::MPI_Grequest_start(query_fn, free_fn, cancel_fn, extra_state, req)
}

/// `MPI_Grequest_complete`.
pub fn grequest_complete(req: MPI_Request) -> c_int {
    // SAFETY: a request handle by value.
    unsafe { mpi::MPI_Grequest_complete(req) }
}

/// `MPI_Test`; `None` ignores the status.
#[inline]
pub fn test(req: &mut MPI_Request, flag: &mut c_int, status: Option<&mut MPI_Status>) -> c_int {
    // SAFETY: a request handle, an out-int and a status MPIFT owns (or MPI_STATUS_IGNORE).
    unsafe { mpi::MPI_Test(req, flag, status_ptr(status)) }
}

/// `MPI_Test`, asking first whether the request is complete where that is
/// cheaper: MPICH's `MPI_Test` runs its progress engine before it looks, also
/// for a request complete already (a small send: 665 of the host's instructions
/// against 209 for `MPI_Wait`, `bench/probe.sh looks`), while its
/// `MPI_Request_get_status` looks first and drives progress only for a request
/// not complete, and an `MPI_Wait` of a complete request only frees it (335 for
/// both). Open MPI's `MPI_Test` looks first by itself (103 against 152), so it
/// stays one call there (bench/README.md, "A test that looks first, names that
/// fold, and the floor"). The same outcome either way: the request completed
/// (freed, or made inactive if persistent) with its status and `*flag` = 1, or
/// not, `*flag` = 0 and nothing changed.
#[inline]
pub fn test_looking_first(req: &mut MPI_Request, flag: &mut c_int, status: Option<&mut MPI_Status>) -> c_int {
    if !crate::transport::host_is_mpich() {
        return test(req, flag, status);
    }
    let status = status_ptr(status);
    // SAFETY: a request handle by value, an out-int and a status MPIFT owns (or
    // MPI_STATUS_IGNORE).
    let rc = unsafe { mpi::MPI_Request_get_status(*req, flag, status) };
    if *flag == 0 {
        return rc;
    }
    // SAFETY: as above; the request is complete, so this wait does not block.
    // It frees the request (and returns its error, if it failed) as the test
    // would have.
    unsafe { mpi::MPI_Wait(req, status) }
}

/// `MPI_Test` with the program's own status argument passed through as it is
/// (also a null one, which the host judges as for the program's own call).
///
/// # Safety
/// `status` is the program's status argument: `MPI_STATUS_IGNORE` or valid for
/// writing one `MPI_Status`, as MPI requires of the program.
#[inline]
pub unsafe fn test_raw(req: &mut MPI_Request, flag: &mut c_int, status: *mut MPI_Status) -> c_int {
    mpi::MPI_Test(req, flag, status)
}

/// `MPI_Waitany` over `reqs`; `None` ignores the status.
#[inline]
pub fn waitany(reqs: &mut [MPI_Request], index: &mut c_int, status: Option<&mut MPI_Status>) -> c_int {
    // SAFETY: `reqs` is a live slice of `reqs.len()` request handles; an out-int
    // and a status MPIFT owns (or MPI_STATUS_IGNORE).
    unsafe { mpi::MPI_Waitany(reqs.len() as c_int, reqs.as_mut_ptr(), index, status_ptr(status)) }
}

/// `MPI_Testany` over `reqs`; `None` ignores the status.
#[inline]
pub fn testany(reqs: &mut [MPI_Request], index: &mut c_int, flag: &mut c_int, status: Option<&mut MPI_Status>) -> c_int {
    // SAFETY: `reqs` is a live slice of `reqs.len()` request handles; out-ints
    // and a status MPIFT owns (or MPI_STATUS_IGNORE).
    unsafe { mpi::MPI_Testany(reqs.len() as c_int, reqs.as_mut_ptr(), index, flag, status_ptr(status)) }
}

/// `MPI_Testsome` over `reqs`, as [`waitsome`].
#[inline]
pub fn testsome(reqs: &mut [MPI_Request], outcount: &mut c_int, indices: &mut [c_int], statuses: &mut [MPI_Status]) -> c_int {
    assert!(indices.len() >= reqs.len() && statuses.len() >= reqs.len());
    // SAFETY: live slices; the host writes at most `reqs.len()` indices and
    // statuses, which fit (asserted above).
    unsafe { mpi::MPI_Testsome(reqs.len() as c_int, reqs.as_mut_ptr(), outcount, indices.as_mut_ptr(), statuses.as_mut_ptr()) }
}

/// `MPI_Waitsome` over `reqs`: `indices` and `statuses` must be at least as long
/// as `reqs` (the host writes up to `reqs.len()` of each; checked).
#[inline]
pub fn waitsome(reqs: &mut [MPI_Request], outcount: &mut c_int, indices: &mut [c_int], statuses: &mut [MPI_Status]) -> c_int {
    assert!(indices.len() >= reqs.len() && statuses.len() >= reqs.len());
    // SAFETY: live slices; the host writes at most `reqs.len()` indices and
    // statuses, which fit (asserted above).
    unsafe { mpi::MPI_Waitsome(reqs.len() as c_int, reqs.as_mut_ptr(), outcount, indices.as_mut_ptr(), statuses.as_mut_ptr()) }
}

/// `MPI_Testall` over `reqs`: `statuses` must be at least as long as `reqs`
/// (checked).
#[inline]
pub fn testall(reqs: &mut [MPI_Request], flag: &mut c_int, statuses: &mut [MPI_Status]) -> c_int {
    assert!(statuses.len() >= reqs.len());
    // SAFETY: live slices; the host writes at most `reqs.len()` statuses, which
    // fit (asserted above); an out-int.
    unsafe { mpi::MPI_Testall(reqs.len() as c_int, reqs.as_mut_ptr(), flag, statuses.as_mut_ptr()) }
}

/// `MPI_Request_free`.
#[inline]
pub fn free(req: &mut MPI_Request) -> c_int {
    // SAFETY: an in-out request handle the caller owns.
    unsafe { mpi::MPI_Request_free(req) }
}

/// `MPI_Request_get_status` with the program's flag and status.
///
/// # Safety
/// `flag` and `status` are the program's arguments: `flag` valid for writing
/// an int, `status` `MPI_STATUS_IGNORE` or valid for writing one `MPI_Status`,
/// as MPI requires of the program (the host judges them as for its own call).
#[inline]
pub unsafe fn get_status(req: MPI_Request, flag: *mut c_int, status: *mut MPI_Status) -> c_int {
    mpi::MPI_Request_get_status(req, flag, status)
}
