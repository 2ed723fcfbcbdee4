//! Error classes MPIFT adds to the real MPI's, and the one failure type every
//! implementation returns.
//!
//! ULFM's classes (Open MPI 5: `MPI_ERR_PROC_FAILED` 75, `..._PENDING` 76,
//! `MPI_ERR_REVOKED` 77; MPICH: `MPIX_ERR_*` 101-103) get MPIFT's own values, which
//! the redirect header gives to every ULFM name (MPI-FT.h spells the same rule in C).
//! MPI-3.1 §8.4 wants every predefined class at most `MPI_ERR_LASTCODE`:
//! - a host whose `MPI_ERR_LASTCODE` is small (Open MPI: 92) gets them right above
//!   it, the program's `MPI_ERR_LASTCODE` is raised to the last of them, and
//!   `calls::errhandler::reserve_classes` takes the same three values from the host at `MPI_Init` (Open MPI
//!   hands out added classes and codes counting up from `MPI_ERR_LASTCODE` + 1), so
//!   `MPI_Add_error_class`/`_code` never return them and `MPI_LASTUSEDCODE` stays
//!   the host's, and true;
//! - otherwise (MPICH: 0x3fffffff, added classes from 0x40000000) fixed values below
//!   it with low 7 bits 125-127, which MPICH never uses as the class of a code.
//! Programs compare return codes with `==`, so the class is returned as the code.

use crate::engine::base::handles::{CommRef, Sim_FT_MPI_Comm};
use crate::transport::err;
use std::os::raw::c_int;

/// The host's `MPI_ERR_LASTCODE`.
const HOST_LASTCODE: i64 = crate::transport::ERR_LASTCODE;
/// Does the host leave room above its `MPI_ERR_LASTCODE` (see the module doc)?
pub const ABOVE_HOST: bool = HOST_LASTCODE < 1_000_000;
/// MPIFT's classes are `ERR_BASE` + 1, 2, 3 (MPI-FT.h: `SIM_FT_ERR_BASE`).
const ERR_BASE: c_int = if ABOVE_HOST { HOST_LASTCODE as c_int } else { 1_000_060 };
/// A process involved in the operation has failed (ULFM `MPI_ERR_PROC_FAILED`).
pub const SIM_FT_ERR_PROC_FAILED: c_int = ERR_BASE + 1;
/// A wildcard receive could match a failed process and cannot complete until the
/// failure is acknowledged (ULFM `MPI_ERR_PROC_FAILED_PENDING`).
pub const SIM_FT_ERR_PROC_FAILED_PENDING: c_int = ERR_BASE + 2;
/// The communicator was revoked (ULFM `MPI_ERR_REVOKED`).
pub const SIM_FT_ERR_REVOKED: c_int = ERR_BASE + 3;

/// MPIFT's own classes with their `MPI_Error_string` texts.
pub(crate) const CLASSES: [(c_int, &str); 3] = [
    (SIM_FT_ERR_PROC_FAILED, "MPI_ERR_PROC_FAILED: a process involved in the operation has failed"),
    (
        SIM_FT_ERR_PROC_FAILED_PENDING,
        "MPI_ERR_PROC_FAILED_PENDING: a wildcard receive may match a failed process; acknowledge the failure to continue",
    ),
    (SIM_FT_ERR_REVOKED, "MPI_ERR_REVOKED: the communicator was revoked"),
];

/// An MPI call that did not succeed: its error code and the communicator whose
/// error handler must see it (null: `MPI_COMM_WORLD`, MPI-3.1 §8.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Failure {
    /// What the call returns.
    pub code: c_int,
    pub comm: Sim_FT_MPI_Comm,
    /// What the error handler is called with, when not `code`: a multiple-
    /// completion call returns `MPI_ERR_IN_STATUS` but raises the first failed
    /// request's own code on that request's communicator, as Open MPI does
    /// (`ompi_errhandler_request_invoke`); ULFM programs' handlers test it for
    /// `MPIX_ERR_PROC_FAILED` (ulfm-testing `stress/isend-err.c`).
    pub raised: Option<c_int>,
}

/// An output pointer must not be null: `MPI_ERR_ARG` on the operation's communicator.
pub fn check_out_ptr<T>(p: *mut T, on: &CommRef) -> Outcome {
    if p.is_null() {
        Err(Failure::on(on.handle, err::arg()))
    } else {
        Ok(())
    }
}

impl Failure {
    pub fn on(comm: Sim_FT_MPI_Comm, code: c_int) -> Failure {
        Failure { code, comm, raised: None }
    }
    pub fn on_world(code: c_int) -> Failure {
        Failure { code, comm: std::ptr::null_mut(), raised: None }
    }
    /// A host or engine return code as an outcome: 0 succeeds, any other code
    /// fails on `comm` (null: `MPI_COMM_WORLD`).
    pub fn check(rc: c_int, comm: Sim_FT_MPI_Comm) -> Outcome {
        if rc == 0 {
            Ok(())
        } else {
            Err(Failure::on(comm, rc))
        }
    }
    /// [`Failure::check`] on `MPI_COMM_WORLD`.
    pub fn check_world(rc: c_int) -> Outcome {
        Failure::check(rc, std::ptr::null_mut())
    }
    /// Returns `code`, but the handler sees `raised`.
    pub fn raising(self, raised: c_int) -> Failure {
        Failure { raised: Some(raised), ..self }
    }
    /// The code the error handler is called with.
    pub fn handler_code(&self) -> c_int {
        self.raised.unwrap_or(self.code)
    }
}

/// What every implementation function returns.
pub type Outcome = Result<(), Failure>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ulfm_classes_cannot_collide_with_real_codes() {
        for (code, text) in CLASSES {
            assert!(code > 0, "MPI error codes are positive");
            if ABOVE_HOST {
                // Above every predefined host code; the host's added codes start
                // above them once reserved.
                assert!(code as i64 > HOST_LASTCODE && code <= SIM_FT_ERR_REVOKED, "{text}");
            } else {
                // MPICH: at most MPI_ERR_LASTCODE, and the class lives in the low
                // 7 bits of its codes, where its classes stay below 110.
                assert!(code as i64 <= HOST_LASTCODE, "{text}");
                assert!(code & 0x7f >= 121, "{text}");
            }
        }
        let distinct: std::collections::HashSet<_> = CLASSES.iter().map(|c| c.0).collect();
        assert_eq!(distinct.len(), CLASSES.len());
    }
}
