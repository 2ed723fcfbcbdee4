//! The program's entry points of engine::agree::ft: `MPIX_Comm_agree` and
//! `MPIX_Comm_shrink`, which wait for their operation, `MPIX_Comm_iagree` and
//! `MPIX_Comm_ishrink`, which return the generalized request behind it at once,
//! and that request's callbacks.

use crate::engine::base::errors;
use crate::engine::base::runtime;
use crate::engine::base::errors::{Failure, Outcome};
use crate::engine::agree::ft::{start, wait, What};
use crate::engine::base::handles::{CommRef, Sim_FT_MPI_Comm, Sim_FT_MPI_Request};
use crate::engine::{registry::args, agree::inter, registry::request};
use crate::transport::{self, window, MPI_Request, MPI_Status};
use std::os::raw::{c_int, c_void};

fn refuse_inter(cr: &CommRef) -> Outcome {
    if cr.foreign {
        // MPIFT has no news from another job's processes (docs/ARCHITECTURE.md,
        // "Not simulated"); only the blocking agree has a stand-in (engine::agree::inter::agree_foreign).
        return Err(Failure::on(cr.handle, transport::err::comm()));
    }
    Ok(())
}

/// `MPIX_Comm_agree`: bitwise AND of `*flag` over the live members; allowed on
/// revoked communicators. `MPI_ERR_PROC_FAILED` at every survivor unless every
/// failure was acknowledged by every survivor; `*flag` is valid either way.
pub fn agree(c: Sim_FT_MPI_Comm, flag: *mut c_int) -> Outcome {
    let cr = args::comm_arg(c)?;
    errors::check_out_ptr(flag, &cr)?;
    if cr.foreign {
        return inter::agree_foreign(&cr, flag);
    }
    refuse_inter(&cr)?;
    // SAFETY: the program's flag, checked non-null above; MPI requires it to
    // point at an int.
    let key = start(&cr, What::Agree { flag }, unsafe { *flag }, transport::request_null());
    let _in = InAgree::mark(cr.id);
    Failure::check(wait(key), cr.handle)
}

/// While a process waits in `MPIX_Comm_agree` on a communicator, its window says
/// which ([`window::IN_AGREE`]): it polls there, and cannot leave before every
/// live member took part, so a fellow member may count on it to join a doomed
/// blocking collective it skipped (engine::dead::fillin).
struct InAgree(u64);

impl InAgree {
    fn mark(id: u64) -> InAgree {
        let before = runtime::with(|rt| {
            let b = rt.win.load(window::IN_AGREE);
            rt.win.store(window::IN_AGREE, id);
            rt.win.sync();
            b
        });
        InAgree(before.unwrap_or(0))
    }
}

impl Drop for InAgree {
    fn drop(&mut self) {
        runtime::with(|rt| rt.win.store(window::IN_AGREE, self.0));
    }
}

/// `MPIX_Comm_iagree`: starts the agreement and returns at once; `*flag` is set
/// when the request completes, with the error `MPIX_Comm_agree` would return.
pub fn iagree(c: Sim_FT_MPI_Comm, flag: *mut c_int, req: *mut Sim_FT_MPI_Request) -> Outcome {
    let cr = args::comm_arg(c)?;
    errors::check_out_ptr(flag, &cr)?;
    errors::check_out_ptr(req, &cr)?;
    refuse_inter(&cr)?;
    let greq = new_greq(&cr)?;
    let h = request::adopt_ft(greq, &cr);
    // SAFETY: the program's flag, checked non-null above; MPI requires it to
    // point at an int.
    let key = start(&cr, What::Agree { flag }, unsafe { *flag }, greq);
    request::set_ft_key(h, key);
    // SAFETY: the program's request argument, checked non-null above.
    unsafe { *req = h };
    Ok(())
}

/// `MPIX_Comm_shrink`: the live members, in the old rank order, the same at every
/// survivor; works on revoked communicators; the result is not revoked.
pub fn shrink(c: Sim_FT_MPI_Comm, newcomm: *mut Sim_FT_MPI_Comm) -> Outcome {
    let cr = args::comm_arg(c)?;
    errors::check_out_ptr(newcomm, &cr)?;
    refuse_inter(&cr)?;
    let key = start(&cr, What::Shrink { newcomm }, !0, transport::request_null());
    Failure::check(wait(key), cr.handle)
}

/// `MPIX_Comm_ishrink`: starts the shrink and returns at once; `*newcomm` is set
/// when the request completes (see the module comment for its last step).
pub fn ishrink(c: Sim_FT_MPI_Comm, newcomm: *mut Sim_FT_MPI_Comm, req: *mut Sim_FT_MPI_Request) -> Outcome {
    let cr = args::comm_arg(c)?;
    errors::check_out_ptr(newcomm, &cr)?;
    errors::check_out_ptr(req, &cr)?;
    refuse_inter(&cr)?;
    let greq = new_greq(&cr)?;
    let h = request::adopt_ft(greq, &cr);
    let key = start(&cr, What::Shrink { newcomm }, !0, greq);
    request::set_ft_key(h, key);
    // SAFETY: the program's request argument, checked non-null above.
    unsafe { *req = h };
    Ok(())
}

// ---- the generalized request behind iagree/ishrink ----

unsafe extern "C" fn greq_query(_extra: *mut c_void, status: *mut MPI_Status) -> c_int {
    // A collective's status: empty (MPI-3.1 §5.12: only MPI_ERROR is meaningful).
    // SAFETY: the host calls the query function with a valid status to fill
    // (MPI-3.1 §12.2), never MPI_STATUS_IGNORE.
    let status = unsafe { &mut *status };
    transport::p2p::status_set_elements(status, transport::dt_byte(), 0);
    transport::p2p::status_set_cancelled(status, 0);
    status.MPI_SOURCE = transport::any_source();
    status.MPI_TAG = transport::any_tag();
    0
}
unsafe extern "C" fn greq_free(_extra: *mut c_void) -> c_int {
    0
}
unsafe extern "C" fn greq_cancel(_extra: *mut c_void, _complete: c_int) -> c_int {
    // An agreement cannot be cancelled (nor can any collective, MPI-3.1 §5.12).
    0
}

fn new_greq(cr: &CommRef) -> Result<MPI_Request, Failure> {
    let mut r = transport::request_null();
    // SAFETY: the three callbacks are this module's, of the host's types; they
    // ignore `extra_state` (null) and touch only the status the host passes.
    let rc = unsafe { transport::request::grequest_start(Some(greq_query), Some(greq_free), Some(greq_cancel), std::ptr::null_mut(), &mut r) };
    Failure::check(rc, cr.handle)?;
    Ok(r)
}
