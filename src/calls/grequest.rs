//! Generalized requests (MPI-3.1 §12.2): `MPI_Grequest_start`,
//! `MPI_Grequest_complete`.
//!
//! The request is an MPIFT request that belongs to no communicator, so the
//! completion calls apply no failure verdicts to it (only the program completes
//! it). Its three callbacks receive `extra_state` and a status or flag, never a
//! request or communicator handle, so they are handed to the real MPI unchanged.

use crate::engine::base::errors::{Failure, Outcome};
use crate::engine::base::handles::Sim_FT_MPI_Request;
use crate::engine::registry::request;
use crate::transport::{self, err, MPI_Grequest_cancel_function, MPI_Grequest_free_function, MPI_Grequest_query_function};
use std::os::raw::c_void;

/// `MPI_Grequest_start`. The function-pointer arguments arrive as C function
/// pointers (the header declares them with the real MPI's callback types).
pub fn start(
    query_fn: *mut MPI_Grequest_query_function,
    free_fn: *mut MPI_Grequest_free_function,
    cancel_fn: *mut MPI_Grequest_cancel_function,
    extra_state: *mut c_void,
    out: *mut Sim_FT_MPI_Request,
) -> Outcome {
    if out.is_null() {
        return Err(request::arg_error());
    }
    // SAFETY: a C function pointer and Rust's Option<extern fn> have the same
    // size and representation (null is None), so each transmute reinterprets
    // the program's callback pointer as the host's callback type unchanged.
    let (q, f, c) = unsafe {
        (
            std::mem::transmute::<*mut MPI_Grequest_query_function, MPI_Grequest_query_function>(query_fn),
            std::mem::transmute::<*mut MPI_Grequest_free_function, MPI_Grequest_free_function>(free_fn),
            std::mem::transmute::<*mut MPI_Grequest_cancel_function, MPI_Grequest_cancel_function>(cancel_fn),
        )
    };
    let mut real = transport::request_null();
    // SAFETY: the callbacks are the program's (None or functions of the
    // generalized-request types, as MPI-3.1 §12.2 requires) and `extra_state` is
    // what it gave for them; the host only calls them with it.
    let rc = unsafe { transport::request::grequest_start(q, f, c, extra_state, &mut real) };
    Failure::check_world(rc)?;
    let adopted = request::adopt_plain(real);
    // SAFETY: `out` was checked non-null above; the program's out handle.
    unsafe { *out = adopted };
    Ok(())
}

/// `MPI_Grequest_complete`.
pub fn complete(r: Sim_FT_MPI_Request) -> Outcome {
    if r.is_null() {
        return Err(Failure::on_world(err::request()));
    }
    let st = request::lookup(r)?;
    let rc = transport::request::grequest_complete(st.real.0);
    Failure::check_world(rc)
}
