//! Wake messages: how a rank blocked in a point-to-point wait learns that news
//! arrived in its window ([`crate::engine::news::news`]). It is woken by a zero-byte
//! message on the layer's one communicator (`shadow`, a duplicate of
//! `MPI_COMM_WORLD`: the only extra communicator MPIFT ever creates), which the
//! waits include in their `MPI_Waitany` ([`crate::engine::registry::request`]): a
//! persistent receive, posted at `MPI_Init` and re-armed after each message. A
//! wake may carry a revoke hint ([`hint_revoke`]).

use crate::engine::registry::comm;
use crate::engine::base::runtime::{self, with, Runtime};
use crate::transport::{self, stats, MPI_Request};
use std::os::raw::{c_int, c_void};

/// Tags on the shadow communicator.
pub const TAG_WAKE: c_int = 1;

/// Posts the persistent receive of wake messages (`MPI_Init`, engine::news::news::start).
pub(crate) fn arm(rt: &mut Runtime) {
    // SAFETY: `wake_buf` holds 4 u64; it is boxed, so it stays in place while
    // the runtime moves, and lives as long as the runtime, which frees the
    // request first ([`disarm`]).
    unsafe {
        transport::p2p::recv_init(
            rt.wake_buf.as_mut_ptr() as *mut c_void,
            4,
            transport::dt_uint64(),
            transport::any_source(),
            TAG_WAKE,
            rt.shadow,
            &mut rt.wake_req,
        );
    }
    transport::p2p::start(&mut rt.wake_req);
}

/// Cancels and frees the wake receive and the revoke hints' sends
/// (`MPI_Finalize`, engine::news::news::stop).
pub(crate) fn disarm(rt: &mut Runtime) {
    transport::p2p::cancel(&mut rt.wake_req);
    // Blocking: never blocks for ever: a cancelled receive of ours completes
    // locally, cancelled or holding an empty wake message already here.
    transport::request::wait(&mut rt.wake_req, None);
    transport::request::free(&mut rt.wake_req);
    for (mut r, buf) in rt.hints.drain(..) {
        // Eager messages, complete long ago; else MPI may still read the buffer.
        transport::request::free(&mut r);
        std::mem::forget(buf);
    }
}

/// The wake request (for waits to include), or null before init.
pub fn wake_request() -> MPI_Request {
    with(|rt| rt.wake_req).unwrap_or_else(transport::request_null)
}
/// Wake messages received so far. Each consumer keeps its own cursor: a wait
/// reads the others' logs before it blocks again (engine::dead::fillin), the revoked
/// communicators are drained at once (engine::revoke::revoke::drain_revoked).
static WAKES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How many wake messages this process received.
pub fn wakes() -> u64 {
    WAKES.load(std::sync::atomic::Ordering::Relaxed)
}

/// The wake request completed: re-arm it (the news itself is in the window;
/// a wake may carry a revoke hint, [`hint_revoke`]).
pub fn rearm_wake(req: MPI_Request) {
    let hint = with(|rt| {
        rt.wake_req = req;
        WAKES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let hint = take_hint(rt);
        transport::p2p::start(&mut rt.wake_req);
        hint
    });
    if let Some(Some(id)) = hint {
        apply_hint(id);
    }
}
/// Consumes every wake message already here (after news was handled).
pub fn drain_wakes() {
    let mut hints = Vec::new();
    with(|rt| loop {
        let mut flag = 0;
        transport::request::test(&mut rt.wake_req, &mut flag, None);
        if flag == 0 {
            break;
        }
        WAKES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        hints.extend(take_hint(rt));
        transport::p2p::start(&mut rt.wake_req);
    });
    for id in hints {
        apply_hint(id);
    }
}

/// First word of a wake message that carries a revoke hint; the second is the
/// communicator id.
const HINT_REVOKE: u64 = 0x4d50_4946_5452_4556;

/// The revoke hint of the wake message just received, if it carried one (and
/// clears the buffer: a plain wake has no data).
fn take_hint(rt: &mut Runtime) -> Option<u64> {
    let hint = (rt.wake_buf[0] == HINT_REVOKE).then_some(rt.wake_buf[1]);
    rt.wake_buf[0] = 0;
    hint
}

/// A revoke hint arrived: the communicator `id`, if this process holds it, is
/// revoked here at once, before the revoker's RMA announcement (which still
/// follows and brings the horizon) lands. Only the release gets earlier: a
/// member that learns of the revoke this way refuses new operations on it, and
/// its entries already logged are read by the revoker as before (engine::revoke::revoke).
fn apply_hint(id: u64) {
    let mut held = false;
    comm::for_each(|st| held |= st.id == id && !st.revoked);
    if !held {
        return;
    }
    comm::troubled();
    crate::engine::registry::comm_state::note_owed();
    comm::for_each(|st| {
        if st.id == id {
            st.revoked = true;
        }
    });
    crate::engine::registry::owed::owe_end_receives(id);
}

/// Tells world rank `p` at once that communicator `id` is revoked: a wake
/// message with the id (engine::revoke::revoke sends it to every member when its job
/// starts, so a member blocked in a wait learns of the revoke without waiting for
/// RMA, which with MPICH may wait for members computing outside MPI).
pub fn hint_revoke(p: usize, id: u64) {
    with(|rt| {
        rt.hints.retain_mut(|(r, _)| {
            let mut flag = 0;
            transport::request::test(r, &mut flag, None);
            flag == 0
        });
        let buf = Box::new([HINT_REVOKE, id]);
        let mut r = transport::request_null();
        stats::bump(&stats::WAKE_MSGS);
        // SAFETY: `buf` holds the 2 u64 sent; it is boxed and kept with the
        // request in `rt.hints` until the request is known complete (or, at
        // `MPI_Finalize`, leaked: [`disarm`]), so it outlives the send.
        unsafe {
            transport::p2p::isend(buf.as_ptr() as *const c_void, 2, transport::dt_uint64(), p as c_int, TAG_WAKE, rt.shadow, &mut r);
        }
        rt.hints.push((r, buf));
    });
}


/// Zero-byte wake message to every other process (non-blocking, fire and forget:
/// the receive is always posted, so they complete promptly).
pub fn wake_all() {
    let n = runtime::world_size();
    let me = runtime::world_rank();
    for p in (0..n).filter(|p| *p != me) {
        wake(p);
    }
}

/// Sends world rank `p` a wake-up (zero bytes on the shadow communicator).
pub fn wake(p: usize) {
    with(|rt| {
        let mut r = transport::request_null();
        stats::bump(&stats::WAKE_MSGS);
        // SAFETY: a zero-element send reads no buffer, so the null pointer is
        // never dereferenced.
        unsafe {
            transport::p2p::isend(std::ptr::null(), 0, transport::dt_uint64(), p as c_int, TAG_WAKE, rt.shadow, &mut r);
        }
        transport::request::free(&mut r);
    });
}

/// [`wakes`] when the service last ran (engine::news::news::new_since_run).
static WAKES_AT_RUN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The service runs now: what it has seen of the wake messages.
pub(crate) fn mark_run() {
    WAKES_AT_RUN.store(wakes(), std::sync::atomic::Ordering::Relaxed);
}

/// [`wakes`] when the service last ran.
#[inline]
pub(crate) fn wakes_at_run() -> u64 {
    WAKES_AT_RUN.load(std::sync::atomic::Ordering::Relaxed)
}
