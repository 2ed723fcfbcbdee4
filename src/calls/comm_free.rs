//! `MPI_Comm_free` (MPI-3.1 §6.4.3): the completion protocol on a revoked
//! communicator, then the real free, deferred while requests are pending on it
//! ([`release_deferred`] at the end of every MPI call).

use crate::engine::base::errors::{Failure, Outcome};
use crate::engine::base::edges;
use crate::engine::base::handles::Sim_FT_MPI_Comm;
use crate::engine::{registry::args, registry::comm, news::news, registry::orphans, registry::request, revoke::revoke};
use crate::transport::err;

/// `MPI_Comm_free`: frees the real communicator and the handle; sets it to null.
pub fn free(comm: *mut Sim_FT_MPI_Comm) -> Outcome {
    if comm.is_null() {
        return Err(Failure::on_world(err::arg()));
    }
    // SAFETY: the program's `comm` argument, checked non-null above; MPI requires
    // it to point at a communicator handle.
    let h = unsafe { *comm };
    let c = args::comm_arg(h)?;
    if comm::read(h, |st| st.predefined).expect("looked up above") {
        return Err(Failure::on(h, err::comm()));
    }
    // Completion protocol (thesis §5.3.10): on a revoked communicator, first join
    // the collectives other members are still inside, and drop late messages, so
    // nothing of this communicator outlives it or reaches a later one.
    news::refresh();
    if comm::read(h, |st| st.revoked).unwrap_or(false) {
        revoke::catch_up(&c)?;
        comm::drain(c.real, &mut Vec::new());
    }
    // MPI marks a communicator with pending operations for deallocation; Open MPI
    // 4.1 instead frees it under a pending non-blocking collective and crashes in
    // its progress engine later. So the real free waits for the last request.
    if request::on_comm(h) || orphans::on(h) {
        comm::mark_free_pending(h);
    } else {
        comm::release(h).map_err(|rc| Failure::on(h, rc))?;
    }
    // SAFETY: the same pointer, read above; MPI_Comm_free sets it to null.
    unsafe { *comm = std::ptr::null_mut() };
    Ok(())
}

/// At the end of every MPI call (ffi::boundary): frees the communicators of
/// engine::registry::comm::request_gone that still have no request or orphan. One load when none.
#[inline]
pub fn release_deferred() {
    if edges::any(edges::DEFERRED) {
        release_deferred_slow();
    }
}

fn release_deferred_slow() {
    for h in comm::take_deferred() {
        let h = h as Sim_FT_MPI_Comm;
        if comm::read(h, |st| st.free_pending).unwrap_or(false)
            && !request::on_comm(h)
            && !orphans::on(h)
        {
            let _ = comm::release(h);
        }
    }
}
