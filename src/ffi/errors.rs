//! Error classes MPIFT adds to the real MPI's, and the one failure type every
//! implementation returns.
//!
//! ULFM's classes (Open MPI 5: `MPI_ERR_PROC_FAILED` 75, `..._PENDING` 76,
//! `MPI_ERR_REVOKED` 77; MPICH: `MPIX_ERR_*` 101-103) get MPIFT's own values, which
//! the redirect header gives to every ULFM name. They are chosen so that no real
//! MPI code can equal them: Open MPI hands out codes up to `MPI_ERR_LASTCODE` (92 in
//! 4.1) plus user-added codes counting up from there, and MPICH encodes its codes
//! with the class in the low 7 bits, where its classes stay below 110; ours are far
//! above Open MPI's range and have low 7 bits 125, 126 and 127.
//! Programs compare return codes with `==`, so the class is returned as the code.

use crate::ffi::handles::Sim_FT_MPI_Comm;
use std::os::raw::c_int;

/// A process involved in the operation has failed (ULFM `MPI_ERR_PROC_FAILED`).
pub const SIM_FT_ERR_PROC_FAILED: c_int = 1_000_061;
/// A wildcard receive could match a failed process and cannot complete until the
/// failure is acknowledged (ULFM `MPI_ERR_PROC_FAILED_PENDING`).
pub const SIM_FT_ERR_PROC_FAILED_PENDING: c_int = 1_000_062;
/// The communicator was revoked (ULFM `MPI_ERR_REVOKED`).
pub const SIM_FT_ERR_REVOKED: c_int = 1_000_063;

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

impl Failure {
    pub fn on(comm: Sim_FT_MPI_Comm, code: c_int) -> Failure {
        Failure { code, comm, raised: None }
    }
    pub fn on_world(code: c_int) -> Failure {
        Failure { code, comm: std::ptr::null_mut(), raised: None }
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
            // Open MPI: predefined codes end at MPI_ERR_LASTCODE (92 in 4.1, under 200 in 5).
            assert!(code > 100_000, "{text}");
            // MPICH: the class lives in the low 7 bits and stays below 110.
            assert!(code & 0x7f >= 121, "{text}");
            assert!(code > 0, "MPI error codes are positive");
        }
        let distinct: std::collections::HashSet<_> = CLASSES.iter().map(|c| c.0).collect();
        assert_eq!(distinct.len(), CLASSES.len());
    }
}
