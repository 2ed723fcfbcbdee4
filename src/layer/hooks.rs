//! What runs around the real MPI call in every generated wrapper, by kind.
//!
//! Failure-free, the only rule is ULFM's revoke rule (ULFM-SEMANTICS.md, Revoke):
//! on a revoked communicator every non-local operation returns `MPI_ERR_REVOKED`.
//! Failure detection and reporting hook in here (see docs/ARCHITECTURE.md).

use crate::ffi::errors::{Failure, Outcome, SIM_FT_ERR_REVOKED};
use crate::ffi::handles::CommRef;
use std::os::raw::c_int;

/// The kinds of `mpi_functions.tbl`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Local,
    P2p,
    P2pStart,
    Coll,
    CollStart,
    CommNew,
}

/// Before the real call.
pub fn enter(kind: Kind, comm: &CommRef) -> Outcome {
    if comm.revoked && kind != Kind::Local {
        return Err(Failure::on(comm.handle, SIM_FT_ERR_REVOKED));
    }
    Ok(())
}

/// After the real call, with its return code.
pub fn leave(_kind: Kind, comm: &CommRef, rc: c_int) -> Outcome {
    if rc != 0 {
        return Err(Failure::on(comm.handle, rc));
    }
    Ok(())
}
