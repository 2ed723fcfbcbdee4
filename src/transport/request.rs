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
