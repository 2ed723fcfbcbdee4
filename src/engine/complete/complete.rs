//! The completion calls (MPI-3.1 §3.7.3-5) with ULFM's failure semantics
//! (ULFM-SEMANTICS.md, Point-to-point).
//!
//! Every blocking wait is a real `MPI_Waitany`/`MPI_Waitsome` over the program's
//! requests plus the layer's always-posted wake receive, so failure or revoke news
//! interrupts it; failure-free that is the only difference from the real call. After
//! a wake, each pending request gets a verdict:
//! - revoked communicator: `MPI_ERR_REVOKED` (receives cancelled, by the revoke
//!   itself as soon as it is known here: engine::registry::owed::end_receives; collectives
//!   with buffers: see below);
//! - receive from a dead rank that has received everything the dead rank sent
//!   before dying (its count is in this process's window): `MPI_ERR_PROC_FAILED`;
//! - wildcard receive while the communicator has an unacknowledged failure:
//!   `MPI_ERR_PROC_FAILED_PENDING`, and the request stays valid (a blocking receive
//!   gets `MPI_ERR_PROC_FAILED` and no request is left);
//! - send to a dead rank: waits until the dead rank has drained it (so MPI no
//!   longer reads the buffer), then `MPI_ERR_PROC_FAILED` unless the dead rank had
//!   received it while alive (its count is in this process's window);
//! - collective: waits for completion (dead ranks join it), then
//!   `MPI_ERR_PROC_FAILED` if any member is dead, so a result that depends on a dead
//!   rank's dummy contribution is never a success, and no buffer is written after
//!   the request was handed back; on a revoked communicator the same (the other
//!   members' catch-up completes it), except `MPI_Ibarrier`, which has no buffers
//!   and returns `MPI_ERR_REVOKED` at once (its real request is orphaned).
//!
//! This module completes one request (`MPI_Wait`, `MPI_Test`, and the waits of
//! MPIFT's blocking calls); the array forms (`MPI_Waitall` & co.) are in
//! [`crate::engine::complete::batch`] and give the same verdicts with the functions here.

use crate::engine::registry::req_state::{host_completes, to_proc_null, Brief, ReqState};
use crate::engine::news::wake;
use crate::engine::base::errors::{Outcome, SIM_FT_ERR_PROC_FAILED, SIM_FT_ERR_PROC_FAILED_PENDING, SIM_FT_ERR_REVOKED};
use crate::engine::base::handles::{Sim_FT_MPI_Comm, Sim_FT_MPI_Request};
use crate::engine::registry::req_state::Kind;
use crate::engine::registry::request::{self, arg_error, one_active};
use crate::engine::base::backoff::Backoff;
use crate::engine::{registry::comm, agree::ft, news::news, registry::orphans, revoke::revoke, progress::service, registry::dead_counts};
use crate::transport::{self, err, p2p, zero_status, MPI_Request, MPI_Status};
use std::os::raw::c_int;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Action {
    /// Cancel the real receive.
    Cancel,
    /// Keep the real request running in the background.
    Orphan,
    /// A send on a revoked communicator: wait (a bounded time) until the receiver
    /// drained it, so MPI no longer reads the buffer when the error is returned;
    /// orphan it only if that does not happen in time.
    Drain,
    /// Leave the request to the program (PENDING).
    Keep,
    /// PENDING as [`Action::Keep`], without asking the host first whether the
    /// request completed: the adversary holds a wildcard receive
    /// (engine::adversary::wildcard).
    Hold,
}


/// The real MPI's empty status (MPI-3.1 §3.7.3: source `MPI_ANY_SOURCE`, tag
/// `MPI_ANY_TAG`, count 0), what a null or inactive request completes with.
pub(crate) fn empty_status() -> MPI_Status {
    static EMPTY: std::sync::OnceLock<MPI_Status> = std::sync::OnceLock::new();
    *EMPTY.get_or_init(|| {
        let mut r = transport::request_null();
        let mut s = zero_status();
        // Blocking: never blocks for ever: MPI_REQUEST_NULL completes at once.
        transport::request::wait(&mut r, Some(&mut s));
        s
    })
}

/// Did a completion call complete the request (rather than report it pending)?
#[inline]
pub(crate) fn completed(code: c_int) -> bool {
    code != SIM_FT_ERR_PROC_FAILED_PENDING
}

/// What news means for a pending request, if anything. (None for iagree and
/// ishrink: agreements work on revoked communicators and deal with failures
/// themselves, engine::agree::ft.) Failure-free: one load, inlined into the waits.
#[inline]
pub(crate) fn verdict(st: &ReqState) -> Option<(c_int, Action)> {
    if comm::calm() || st.ft != 0 {
        return None;
    }
    verdict_troubled(st)
}

/// [`verdict`] once something is known (out of line, so `verdict` stays one
/// load inlined into the waits).
#[cold]
#[inline(never)]
fn verdict_troubled(st: &ReqState) -> Option<(c_int, Action)> {
    match verdict_read(st) {
        // (Asked outside the read: the adversary reads the communicator again.)
        // (A receive the program cancelled completes as cancelled: not held.)
        Some((code, Action::Keep)) if !st.cancelled && crate::engine::adversary::wildcard::holds(st.comm.0) => Some((code, Action::Hold)),
        v => v,
    }
}

fn verdict_read(st: &ReqState) -> Option<(c_int, Action)> {
    comm::read(st.comm.0, |c| {
        if c.revoked {
            if st.buffers {
                // Waited for until complete: the others' catch-up completes it, and
                // `finish` reports REVOKED (MPI must not write the buffers later).
                return None;
            }
            return Some((SIM_FT_ERR_REVOKED, if st.recv { Action::Cancel } else { Action::Drain }));
        }
        if st.kind != Kind::P2pStart {
            return None;
        }
        if st.recv && st.peer == transport::any_source() {
            return c.any_source_fails().then_some((SIM_FT_ERR_PROC_FAILED_PENDING, Action::Keep));
        }
        if st.peer < 0 || st.peer as usize >= c.peer_count() {
            return None;
        }
        let peer = st.peer as usize;
        if !c.peer_failed(peer) {
            return None;
        }
        if st.recv {
            dead_counts::receive_can_fail(c, peer).then_some((SIM_FT_ERR_PROC_FAILED, Action::Cancel))
        } else {
            // The dead rank drains it: wait until MPI is done with the buffer, then
            // `finish` tells whether it was delivered before the death.
            None
        }
    })
    .flatten()
}

/// A receive from a rank known dead, waiting for that rank's messages in flight
/// (engine::registry::dead_counts::receive_can_fail): nothing in MPI wakes a wait when their grace
/// ends, so waits poll while one is pending.
#[inline]
pub(crate) fn awaits_dead(st: &ReqState) -> bool {
    !comm::calm() && awaits_dead_troubled(st)
}

fn awaits_dead_troubled(st: &ReqState) -> bool {
    if !st.recv || st.kind != Kind::P2pStart || st.peer < 0 {
        return false;
    }
    comm::read(st.comm.0, |c| {
        let p = st.peer as usize;
        p < c.peer_count() && c.peer_failed(p) && !c.revoked
    })
    .unwrap_or(false)
}

/// After the real request completed: bookkeeping and the error to report.
/// (Inlined for what almost every completion is, a point-to-point request that
/// the host completed without error, with no news: a receive is counted, a send
/// is done; the rest, and any doubt, goes to [`finish_general`].)
#[inline(always)]
pub(crate) fn finish(st: &ReqState, status: &MPI_Status, rc: c_int) -> c_int {
    // (A request the program cancelled goes to finish_general, which tells its
    // cancel from a revoke's; the calm paths need not: nothing is revoked then.)
    if st.ft == 0 && !st.cancelled {
        if let Some(code) = finish_brief(&st.brief(), status, rc) {
            return code;
        }
    }
    finish_general(st, status, rc)
}

/// [`finish`]'s answer from a request's [`Brief`] when that decides it: a
/// point-to-point request the host completed without error, a receive (counted)
/// or a send while nothing is known. None: [`finish`] must see the whole state.
/// (Not for an iagree/ishrink: the calm paths take none.)
#[inline]
pub(crate) fn finish_brief(b: &Brief, status: &MPI_Status, rc: c_int) -> Option<c_int> {
    if rc != 0 || !b.p2p {
        return None;
    }
    if b.recv {
        return Some(count_received(b.comm, status));
    }
    (b.nth == 0 || (!news::pending() && comm::calm())).then_some(0)
}

/// A receive completed: one more message from its source (the counts a dying
/// rank reports, engine::dead::zombie); its code: 0, or `MPI_ERR_REVOKED` for a
/// receive the revoke of its communicator cancelled ([`received_troubled`]).
/// (Not inlined: the calm paths' finish stays small enough for LLVM to inline
/// its callers, such as `done_already` into `wait_one`.)
#[inline(never)]
fn count_received(comm: Sim_FT_MPI_Comm, status: &MPI_Status) -> c_int {
    if !comm::calm() {
        return received_troubled(comm, status);
    }
    count_from(comm, status.MPI_SOURCE);
    0
}

fn count_from(comm: Sim_FT_MPI_Comm, src: c_int) {
    comm::count_received(std::iter::once((comm, src)));
}

/// [`count_received`] once something is known: a receive on a revoked
/// communicator that its revoke cancelled (engine::registry::owed::end_receives) ends
/// with `MPI_ERR_REVOKED`; any other is counted and succeeds. (One the program
/// cancelled itself does not come here: [`finish`].)
#[cold]
#[inline(never)]
fn received_troubled(comm: Sim_FT_MPI_Comm, status: &MPI_Status) -> c_int {
    if comm::read(comm, |c| c.revoked).unwrap_or(false) {
        let mut cancelled = 0;
        p2p::test_cancelled(status, &mut cancelled);
        if cancelled != 0 {
            return SIM_FT_ERR_REVOKED;
        }
    }
    count_from(comm, status.MPI_SOURCE);
    0
}

/// [`finish`] for any request and any return code.
#[inline(never)]
fn finish_general(st: &ReqState, status: &MPI_Status, rc: c_int) -> c_int {
    if st.ft != 0 {
        // MPIFT completed the generalized request when the agreement ended.
        return ft::outcome(st.ft);
    }
    if rc != 0 && rc != err::in_status() {
        return rc;
    }
    if status.MPI_ERROR != 0 && rc != 0 {
        return status.MPI_ERROR;
    }
    // A dead rank drains a message only once its news is in the sender's window
    // (dead_drain::drain_comm): read it (one load when nothing is new), or an Issend
    // only the drain matched succeeded (Fenix's test/issend, 1 run in 4).
    if st.kind == Kind::P2pStart && !st.recv && st.nth > 0 && (news::refresh() || !comm::calm()) {
        // A send whose destination died: delivered only if the dead rank had
        // received this many messages from here while alive; otherwise its drain
        // took it (ULFM: a message only a dead process got was not delivered).
        news::refresh();
        let undelivered = comm::read(st.comm.0, |c| {
            let p = st.peer as usize;
            st.peer >= 0 && p < c.peer_count() && c.peer_failed(p) && st.nth > dead_counts::received_alive(c, p)
        });
        // (The adversary's `sends` choice may tell an eager one success: its
        // message could have left before the failure was known.)
        if undelivered == Some(true) && !(st.eager && crate::engine::adversary::sends::tells_success(st.comm.0, st.peer, st.nth)) {
            return SIM_FT_ERR_PROC_FAILED;
        }
        return 0;
    }
    if st.kind == Kind::P2pStart && st.recv {
        if st.cancelled {
            // The program's own cancel: success with a cancelled status, also
            // on a revoked communicator (the oracle's answer).
            count_from(st.comm.0, status.MPI_SOURCE);
            return 0;
        }
        return count_received(st.comm.0, status);
    }
    if st.kind == Kind::CollStart {
        news::refresh();
        if comm::calm() {
            return 0;
        }
        let (failed, revoked) = comm::read(st.comm.0, |c| (c.has_failed(), c.revoked)).unwrap_or((false, false));
        // (Outside the read: the check reads the communicator again.)
        if failed
            && !crate::engine::news::logs::all_dead_entered_seq(st.comm.0, st.seq)
            && (revoked || !crate::engine::adversary::collectives::tells_success(st.comm.0, st.seq))
        {
            return SIM_FT_ERR_PROC_FAILED;
        }
        return if revoked { SIM_FT_ERR_REVOKED } else { 0 };
    }
    0
}

/// Applies a verdict's action; returns the final code (a cancel that came too late
/// means the request completed normally).
pub(crate) fn apply(st: &ReqState, real: &mut MPI_Request, status: &mut MPI_Status, code: c_int, act: Action) -> c_int {
    match act {
        Action::Keep | Action::Hold => code,
        Action::Drain => {
            if revoke::drained(st, real, status) {
                return code;
            }
            apply(st, real, status, code, Action::Orphan)
        }
        Action::Orphan if st.persistent => {
            // The program keeps its persistent request: it becomes inactive while
            // the real one drains in the background (MPI_Start waits for it).
            request::set_draining(*real);
            code
        }
        Action::Orphan => {
            let kept = request::take_kept(st.keep).map(|k| Box::new(k) as Box<dyn std::any::Any + Send>);
            orphans::orphan(*real, kept, st.comm.0, st.kind == Kind::P2pStart);
            *real = transport::request_null();
            code
        }
        Action::Cancel => {
            let mut cancelled = 0;
            // The real request of this call and its status storage.
            p2p::cancel(real);
            transport::request::wait(real, Some(&mut *status));
            p2p::test_cancelled(status, &mut cancelled);
            if cancelled != 0 {
                code
            } else {
                finish(st, status, 0)
            }
        }
    }
}

/// Waits for one request with failure semantics. `blocking_recv`: the caller is a
/// blocking receive, for which a wildcard verdict is `MPI_ERR_PROC_FAILED` and no
/// request may be left behind. Returns the error code (0: success).
pub(crate) fn wait_one(st: &ReqState, real: &mut MPI_Request, status: &mut MPI_Status, blocking_recv: bool) -> c_int {
    if to_proc_null(st) {
        let rc = transport::request::wait(real, Some(&mut *status));
        return finish(st, status, rc);
    }
    if st.ft != 0 {
        // Nothing in MPI completes it: MPIFT does, as the agreement advances.
        let mut idle = Backoff::wait();
        loop {
            let _ = service::run_in_wait();
            let mut flag = 0;
            let rc = transport::request::test(real, &mut flag, Some(&mut *status));
            if flag != 0 {
                return finish(st, status, rc);
            }
            idle.pause();
        }
    }
    // Made when first needed: reading the clock costs the failure-free wait.
    let mut idle: Option<Backoff> = None;
    let mut tested = false;
    loop {
        // A verdict known already (a revoke hint came with the last wake-up) is
        // given before the service, which by default waits for the revoke's
        // horizon (with MPICH, for members computing outside MPI): the program's
        // next MPI call waits for it at its entry (service::run), so returning
        // first lets nothing this rank does through MPI run ahead of the revoke
        // (revoke_release_computing_ibarrier). Failure-free, verdict is one load.
        let mut known = verdict(st);
        if known.is_none() && service::busy() {
            // (Failure-free the service has nothing to do, and nothing could have
            // changed the verdict: no second look.)
            let _ = service::run_in_wait();
            known = verdict(st);
        }
        if let Some((code, mut act)) = known {
            let mut flag = 0;
            if act != Action::Hold {
                transport::request::test(real, &mut flag, Some(&mut *status));
            }
            if flag != 0 {
                return finish(st, status, 0);
            }
            let mut code = code;
            if blocking_recv && matches!(act, Action::Keep | Action::Hold) {
                code = SIM_FT_ERR_PROC_FAILED;
                act = Action::Cancel;
            }
            return apply(st, real, status, code, act);
        }
        if service::must_poll() || awaits_dead(st) {
            // An agreement this rank takes part in advances only while it polls
            // (nothing wakes a blocked MPI_Waitany for it); so does the grace of a
            // receive from a dead rank.
            if let Some(code) = done_already(st, real, status) {
                return code;
            }
            idle.get_or_insert_with(Backoff::wait).pause();
            continue;
        }
        // The host's own test first: a send of a small message, or a receive whose
        // message is in, is done already, and a test costs the host less than a
        // wait on two requests. Only a wait that must block pays for the wake
        // request (and this test).
        if !std::mem::replace(&mut tested, true) {
            if let Some(code) = done_already(st, real, status) {
                return code;
            }
        }
        let mut pair = [*real, wake::wake_request()];
        let mut idx: c_int = -1;
        let rc = transport::request::waitany(&mut pair, &mut idx, Some(&mut *status));
        *real = pair[0];
        if idx == 1 {
            wake::rearm_wake(pair[1]);
            continue;
        }
        return finish(st, status, rc);
    }
}

/// A wait's calm path: nothing is going on ([`service::quiet`]) and `st` is a
/// request the host completes by itself ([`crate::engine::registry::req_state::host_completes`]); then [`wait_one`] would skip its verdicts and
/// service and test the host first, as this does, without its loop. The outcome
/// if that test completed the request. (A wait that must block then tests once
/// more in `wait_one`, a second look that costs nothing next to blocking.)
#[inline]
fn calm_done(st: &ReqState, real: &mut MPI_Request, status: &mut MPI_Status) -> Option<c_int> {
    if !service::quiet() || !host_completes(st) {
        return None;
    }
    done_already(st, real, status)
}

/// Tests `real` once: the outcome if it completed. (Always inlined: when LLVM
/// chose, a few instructions more in `finish` made it a call in `wait_one`,
/// +36 instructions per blocking receive.)
#[inline(always)]
pub(crate) fn done_already(st: &ReqState, real: &mut MPI_Request, status: &mut MPI_Status) -> Option<c_int> {
    let mut flag = 0;
    // A point-to-point request asks first (MPICH: no progress for one complete
    // already); others, generalized requests among them (whose query function
    // a look and a wait would call twice), take the host's test.
    let rc = if st.kind == Kind::P2pStart {
        transport::request::test_looking_first(real, &mut flag, Some(&mut *status))
    } else {
        transport::request::test(real, &mut flag, Some(&mut *status))
    };
    (flag != 0).then(|| finish(st, status, rc))
}

/// The program passed a status (array) to write: neither null nor
/// `MPI_STATUS_IGNORE` / `MPI_STATUSES_IGNORE`.
#[inline]
pub(crate) fn user_status(statuses: *mut MPI_Status) -> bool {
    !statuses.is_null() && statuses != transport::status_ignore()
}

/// `MPI_Wait`.
pub fn wait(request: *mut Sim_FT_MPI_Request, status: *mut MPI_Status) -> Outcome {
    let (st, mut real) = one_active(request)?;
    let mut s = zero_status();
    let Some(st) = st else {
        if user_status(status) {
            // SAFETY: `status` is neither null nor MPI_STATUS_IGNORE (user_status):
            // the program's status, which MPI requires valid for writing.
            transport::request::wait(&mut real, Some(unsafe { &mut *status }));
        }
        return Ok(());
    };
    let code = match calm_done(&st, &mut real, &mut s) {
        Some(code) => code,
        None => wait_one(&st, &mut real, &mut s, false),
    };
    // SAFETY: `request` was checked non-null and read by one_active; the
    // program's request, which MPI requires valid for reading and writing.
    unsafe { *request = request::settle_after(*request, real, completed(code)) };
    copy_status(status, &s);
    request::fail_on(Some(&st), code)
}

/// `MPI_Test`.
pub fn test(request: *mut Sim_FT_MPI_Request, flag: *mut c_int, status: *mut MPI_Status) -> Outcome {
    if flag.is_null() {
        return Err(arg_error());
    }
    let (st, mut real) = one_active(request)?;
    let Some(st) = st else {
        // SAFETY: `flag` was checked non-null and is the program's flag, which MPI
        // requires valid for writing; `status` is the program's status argument,
        // passed on as it came (the host judges it as for the program's own call).
        return request::fail_on(None, unsafe { transport::request::test_raw(&mut real, &mut *flag, status) });
    };
    news::refresh();
    let mut s = zero_status();
    if let Some((code, Action::Hold)) = verdict(&st) {
        // A wildcard receive the adversary holds: PENDING, the host not asked.
        // SAFETY: `flag` and `request` were checked non-null above: the
        // program's arguments, which MPI requires valid for writing.
        unsafe {
            *flag = 0;
            *request = request::settle_after(*request, real, false);
        }
        copy_status(status, &s);
        return request::fail_on(Some(&st), code);
    }
    // SAFETY: `flag` was checked non-null and is the program's flag, which MPI
    // requires valid for writing; nothing else refers to it during the call.
    let rc = transport::request::test(&mut real, unsafe { &mut *flag }, Some(&mut s));
    // SAFETY: the program's flag, just written by MPI_Test.
    let code = if unsafe { *flag } != 0 {
        finish(&st, &s, rc)
    } else if let Some((code, act)) = verdict(&st) {
        // PENDING (Keep): the request is not complete; the error is reported, it stays.
        // SAFETY: the program's flag, checked non-null above (MPI requires it
        // valid for writing).
        unsafe { *flag = !matches!(act, Action::Keep | Action::Hold) as c_int };
        apply(&st, &mut real, &mut s, code, act)
    } else {
        0
    };
    // SAFETY: `request` was checked non-null and read by one_active, `flag`
    // checked non-null above: the program's arguments, which MPI requires valid.
    unsafe { *request = request::settle_after(*request, real, *flag != 0) };
    // SAFETY: the program's flag, checked non-null at the top of this function
    // and written by the host's MPI_Test or above.
    if unsafe { *flag } != 0 || code != 0 {
        copy_status(status, &s);
    }
    request::fail_on(Some(&st), code)
}

/// Hands a status to a call's single `MPI_Status` argument. Its `MPI_ERROR` field
/// is left as the program set it: calls that return one status report the error
/// as their return code only (MPI-3.1 §3.2.5; MPICH does not touch it either).
pub fn copy_status(out: *mut MPI_Status, st: &MPI_Status) {
    if !out.is_null() && out != transport::status_ignore() {
        // SAFETY: neither null nor MPI_STATUS_IGNORE: the program's status
        // argument, which MPI requires valid for reading and writing one status.
        unsafe {
            let error = (*out).MPI_ERROR;
            *out = *st;
            (*out).MPI_ERROR = error;
        }
    }
}
