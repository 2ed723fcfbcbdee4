//! The completion calls (MPI-3.1 §3.7.3-5) with ULFM's failure semantics
//! (ULFM-SEMANTICS.md, Point-to-point).
//!
//! Every blocking wait is a real `MPI_Waitany`/`MPI_Waitsome` over the program's
//! requests plus the layer's always-posted wake receive, so failure or revoke news
//! interrupts it; failure-free that is the only difference from the real call. After
//! a wake, each pending request gets a verdict:
//! - revoked communicator: `MPI_ERR_REVOKED` (receives cancelled; collectives with
//!   buffers: see below);
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

use crate::engine::errors::{Failure, Outcome, SIM_FT_ERR_PROC_FAILED, SIM_FT_ERR_PROC_FAILED_PENDING, SIM_FT_ERR_REVOKED};
use crate::engine::handles::Sim_FT_MPI_Request;
use crate::engine::hooks::Kind;
use crate::engine::request::{self, arg_error, one_active, ReqState};
use crate::engine::revoke::Idle;
use crate::engine::{comm, ft, news, orphans, revoke, service, zombie};
use crate::transport::{self, err, mpi};
use mpi_sys::{MPI_Request, MPI_Status};
use std::os::raw::c_int;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Action {
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
}

fn zero_status() -> MPI_Status {
    // SAFETY: MPI_Status is plain data; all zeros is a valid value.
    unsafe { std::mem::zeroed() }
}

/// The real MPI's empty status (MPI-3.1 §3.7.3: source `MPI_ANY_SOURCE`, tag
/// `MPI_ANY_TAG`, count 0), what a null or inactive request completes with.
fn empty_status() -> MPI_Status {
    static EMPTY: std::sync::OnceLock<MPI_Status> = std::sync::OnceLock::new();
    *EMPTY.get_or_init(|| {
        let mut r = transport::request_null();
        let mut s = zero_status();
        // SAFETY: this call's real requests and status storage, valid for the call.
        unsafe { mpi::MPI_Wait(&mut r, &mut s) };
        s
    })
}

/// Did a completion call complete the request (rather than report it pending)?
fn completed(code: c_int) -> bool {
    code != SIM_FT_ERR_PROC_FAILED_PENDING
}

/// What news means for a pending request, if anything. (None for iagree and
/// ishrink: agreements work on revoked communicators and deal with failures
/// themselves, engine::ft.) Failure-free: one load, inlined into the waits.
#[inline]
fn verdict(st: &ReqState) -> Option<(c_int, Action)> {
    if comm::calm() || st.ft != 0 {
        return None;
    }
    verdict_troubled(st)
}

fn verdict_troubled(st: &ReqState) -> Option<(c_int, Action)> {
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
            zombie::receive_can_fail(c, peer).then_some((SIM_FT_ERR_PROC_FAILED, Action::Cancel))
        } else {
            // The dead rank drains it: wait until MPI is done with the buffer, then
            // `finish` tells whether it was delivered before the death.
            None
        }
    })
    .flatten()
}

/// A receive from a rank known dead, waiting for that rank's messages in flight
/// (engine::zombie::receive_can_fail): nothing in MPI wakes a wait when their grace
/// ends, so waits poll while one is pending.
fn awaits_dead(st: &ReqState) -> bool {
    if comm::calm() || !st.recv || st.kind != Kind::P2pStart || st.peer < 0 {
        return false;
    }
    comm::read(st.comm.0, |c| {
        let p = st.peer as usize;
        p < c.peer_count() && c.peer_failed(p) && !c.revoked
    })
    .unwrap_or(false)
}

/// After the real request completed: bookkeeping and the error to report.
fn finish(st: &ReqState, status: &MPI_Status, rc: c_int) -> c_int {
    if st.ft != 0 {
        // MPIFT completed the generalized request when the agreement ended.
        return ft::outcome(st.ft);
    }
    // SAFETY: an error code the host set at MPI_Init, only read.
    if rc != 0 && rc != err::in_status() {
        return rc;
    }
    if status.MPI_ERROR != 0 && rc != 0 {
        return status.MPI_ERROR;
    }
    // A dead rank drains a message only once its news is in the sender's window
    // (zombie::drain_comm): read it (one load when nothing is new), or an Issend
    // only the drain matched succeeded (Fenix's test/issend, 1 run in 4).
    if st.kind == Kind::P2pStart && !st.recv && st.nth > 0 && (news::refresh() || !comm::calm()) {
        // A send whose destination died: delivered only if the dead rank had
        // received this many messages from here while alive; otherwise its drain
        // took it (ULFM: a message only a dead process got was not delivered).
        news::refresh();
        let undelivered = comm::read(st.comm.0, |c| {
            let p = st.peer as usize;
            st.peer >= 0 && p < c.peer_count() && c.peer_failed(p) && st.nth > zombie::received_alive(c, p)
        });
        if undelivered == Some(true) {
            return SIM_FT_ERR_PROC_FAILED;
        }
        return 0;
    }
    if st.kind == Kind::P2pStart && st.recv {
        let src = status.MPI_SOURCE;
        if src >= 0 {
            comm::update(st.comm.0, |c| {
                if let Some(x) = c.recvd.get_mut(src as usize) {
                    *x += 1;
                }
            });
        }
        return 0;
    }
    if st.kind == Kind::CollStart {
        news::refresh();
        if comm::calm() {
            return 0;
        }
        let (failed, revoked) = comm::read(st.comm.0, |c| (c.has_failed(), c.revoked)).unwrap_or((false, false));
        // (Outside the read: the check reads the communicator again.)
        if failed && !crate::engine::hooks::all_dead_entered_seq(st.comm.0, st.seq) {
            return SIM_FT_ERR_PROC_FAILED;
        }
        return if revoked { SIM_FT_ERR_REVOKED } else { 0 };
    }
    0
}

/// Applies a verdict's action; returns the final code (a cancel that came too late
/// means the request completed normally).
fn apply(st: &ReqState, real: &mut MPI_Request, status: &mut MPI_Status, code: c_int, act: Action) -> c_int {
    match act {
        Action::Keep => code,
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
            orphans::orphan(*real, request::take_kept(st.keep).map(|k| Box::new(k) as Box<dyn std::any::Any + Send>), st.comm.0);
            *real = transport::request_null();
            code
        }
        Action::Cancel => {
            let mut cancelled = 0;
            // SAFETY: the real request of this call and status storage, valid for it.
            unsafe {
                mpi::MPI_Cancel(real);
                mpi::MPI_Wait(real, status);
                mpi::MPI_Test_cancelled(status, &mut cancelled);
            }
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
        // SAFETY: this call's real requests and status storage, valid for the call.
        let rc = unsafe { mpi::MPI_Wait(real, status) };
        return finish(st, status, rc);
    }
    if st.ft != 0 {
        // Nothing in MPI completes it: MPIFT does, as the agreement advances.
        let mut idle = Idle::new();
        loop {
            let _ = service::run_in_wait();
            let mut flag = 0;
            // SAFETY: this call's real requests and status storage, valid for the call.
            let rc = unsafe { mpi::MPI_Test(real, &mut flag, status) };
            if flag != 0 {
                return finish(st, status, rc);
            }
            idle.pause();
        }
    }
    // Made when first needed: reading the clock costs the failure-free wait.
    let mut idle: Option<Idle> = None;
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
            // SAFETY: this call's real requests and status storage, valid for the call.
            unsafe { mpi::MPI_Test(real, &mut flag, status) };
            if flag != 0 {
                return finish(st, status, 0);
            }
            let mut code = code;
            if blocking_recv && act == Action::Keep {
                code = SIM_FT_ERR_PROC_FAILED;
                act = Action::Cancel;
            }
            return apply(st, real, status, code, act);
        }
        if service::must_poll() || awaits_dead(st) {
            // An agreement this rank takes part in advances only while it polls
            // (nothing wakes a blocked MPI_Waitany for it); so does the grace of a
            // receive from a dead rank.
            let mut flag = 0;
            // SAFETY: this call's real requests and status storage, valid for the call.
            let rc = unsafe { mpi::MPI_Test(real, &mut flag, status) };
            if flag != 0 {
                return finish(st, status, rc);
            }
            idle.get_or_insert_with(Idle::new).pause();
            continue;
        }
        let mut pair = [*real, news::wake_request()];
        let mut idx: c_int = -1;
        // SAFETY: this call's real requests and status storage, valid for the call.
        let rc = unsafe { mpi::MPI_Waitany(2, pair.as_mut_ptr(), &mut idx, status) };
        *real = pair[0];
        if idx == 1 {
            news::rearm_wake(pair[1]);
            continue;
        }
        return finish(st, status, rc);
    }
}

/// A point-to-point request with peer `MPI_PROC_NULL` completes at once. MPICH's
/// `MPI_Waitany`/`MPI_Waitsome` skip a started persistent one (as if inactive), so
/// it must not be left to them.
fn to_proc_null(st: &ReqState) -> bool {
    st.kind == Kind::P2pStart && st.peer == transport::proc_null()
}

fn user_status(statuses: *mut MPI_Status) -> bool {
    !statuses.is_null() && statuses != transport::status_ignore()
}

/// `MPI_Wait`.
pub fn wait(request: *mut Sim_FT_MPI_Request, status: *mut MPI_Status) -> Outcome {
    let (st, mut real) = one_active(request)?;
    let mut s = zero_status();
    let Some(st) = st else {
        if user_status(status) {
            // SAFETY: this call's real requests and status storage, valid for the call.
            unsafe { mpi::MPI_Wait(&mut real, status) };
        }
        return Ok(());
    };
    let code = wait_one(&st, &mut real, &mut s, false);
    // SAFETY: the program's argument (MPI requires it valid; arrays of `count`).
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
        // SAFETY: this call's real requests and status storage, valid for the call.
        return request::fail_on(None, unsafe { mpi::MPI_Test(&mut real, flag, status) });
    };
    news::refresh();
    let mut s = zero_status();
    // SAFETY: this call's real requests and status storage, valid for the call.
    let rc = unsafe { mpi::MPI_Test(&mut real, flag, &mut s) };
    // SAFETY: the program's flag, just written by MPI_Test.
    let code = if unsafe { *flag } != 0 {
        finish(&st, &s, rc)
    } else if let Some((code, act)) = verdict(&st) {
        // PENDING (Keep): the request is not complete; the error is reported, it stays.
        // SAFETY: the program's argument (MPI requires it valid; arrays of `count`).
        unsafe { *flag = (act != Action::Keep) as c_int };
        apply(&st, &mut real, &mut s, code, act)
    } else {
        0
    };
    // SAFETY: the program's argument (MPI requires it valid; arrays of `count`).
    unsafe { *request = request::settle_after(*request, real, *flag != 0) };
    // SAFETY: the program's flag, as above.
    if unsafe { *flag } != 0 || code != 0 {
        copy_status(status, &s);
    }
    request::fail_on(Some(&st), code)
}

/// The requests of an array argument.
struct Batch {
    states: Vec<Option<ReqState>>,
    reals: Vec<MPI_Request>,
    statuses: Vec<MPI_Status>,
    codes: Vec<c_int>,
    done: Vec<bool>,
}

impl Batch {
    fn new(count: c_int, reqs: *mut Sim_FT_MPI_Request) -> Result<Batch, Failure> {
        if count < 0 || (count > 0 && reqs.is_null()) {
            return Err(arg_error());
        }
        let n = count as usize;
        let mut b = Batch {
            states: Vec::with_capacity(n),
            reals: Vec::with_capacity(n),
            statuses: vec![zero_status(); n],
            codes: vec![0; n],
            done: vec![false; n],
        };
        for i in 0..n {
            // SAFETY: i < count, the length of the program's array.
            let (st, real) = one_active(unsafe { reqs.add(i) })?;
            b.done[i] = st.is_none();
            if st.is_none() {
                b.statuses[i] = empty_status();
            }
            b.states.push(st);
            b.reals.push(real);
        }
        Ok(b)
    }

    fn settle(&self, reqs: *mut Sim_FT_MPI_Request) {
        for (i, st) in self.states.iter().enumerate() {
            if st.is_some() {
                let done = self.done[i] && completed(self.codes[i]);
                // SAFETY: the program's argument (MPI requires it valid; arrays of `count`).
                unsafe { *reqs.add(i) = request::settle_after(*reqs.add(i), self.reals[i], done) };
            }
        }
    }

    /// Verdicts for every pending request; true if any request got an error.
    fn verdicts(&mut self) -> Vec<usize> {
        let mut hit = Vec::new();
        for i in 0..self.states.len() {
            if self.done[i] {
                continue;
            }
            let st = self.states[i].unwrap();
            if let Some((code, act)) = verdict(&st) {
                let mut flag = 0;
                // SAFETY: this call's real requests and status storage, valid for the call.
                unsafe { mpi::MPI_Test(&mut self.reals[i], &mut flag, &mut self.statuses[i]) };
                self.codes[i] =
                    if flag != 0 { finish(&st, &self.statuses[i], 0) } else { apply(&st, &mut self.reals[i], &mut self.statuses[i], code, act) };
                self.statuses[i].MPI_ERROR = self.codes[i];
                self.done[i] = true;
                hit.push(i);
            }
        }
        hit
    }

    fn complete(&mut self, i: usize, rc: c_int) {
        let st = self.states[i].unwrap();
        self.codes[i] = finish(&st, &self.statuses[i], rc);
        self.statuses[i].MPI_ERROR = self.codes[i];
        self.done[i] = true;
    }

    fn pending(&self) -> Vec<usize> {
        (0..self.states.len()).filter(|i| !self.done[*i]).collect()
    }

    /// Completes pending requests to `MPI_PROC_NULL` (at most `max`).
    fn proc_nulls(&mut self, max: usize) -> Vec<usize> {
        let mut got = Vec::new();
        for i in self.pending() {
            if got.len() == max {
                break;
            }
            if !to_proc_null(self.states[i].as_ref().unwrap()) {
                continue;
            }
            // SAFETY: this call's real requests and status storage, valid for the call.
            let rc = unsafe { mpi::MPI_Wait(&mut self.reals[i], &mut self.statuses[i]) };
            self.complete(i, rc);
            got.push(i);
        }
        got
    }

    /// Some pending request is an iagree/ishrink, or an agreement is running here:
    /// nothing in MPI completes or wakes it, so waits poll (testing everything,
    /// advancing the agreements) instead of blocking in MPI.
    fn polls(&self) -> bool {
        service::must_poll() || self.pending().iter().any(|i| self.states[*i].is_some_and(|st| st.ft != 0 || awaits_dead(&st)))
    }

    /// Tests every pending request once; the indices completed.
    fn test_pending(&mut self, max: usize) -> Vec<usize> {
        let mut got = Vec::new();
        for i in self.pending() {
            if got.len() == max {
                break;
            }
            let mut f = 0;
            // SAFETY: this call's real requests and status storage, valid for the call.
            let rc = unsafe { mpi::MPI_Test(&mut self.reals[i], &mut f, &mut self.statuses[i]) };
            if f != 0 {
                self.complete(i, rc);
                got.push(i);
            }
        }
        got
    }

    /// Blocks until at least one pending request completes or news arrives.
    /// Returns the indices completed.
    fn block(&mut self) -> Vec<usize> {
        let got = self.proc_nulls(usize::MAX);
        if !got.is_empty() {
            return got;
        }
        if self.polls() {
            let got = self.test_pending(usize::MAX);
            if got.is_empty() {
                std::thread::yield_now();
            }
            return got;
        }
        let idx = self.pending();
        let mut reals: Vec<MPI_Request> = idx.iter().map(|i| self.reals[*i]).collect();
        reals.push(news::wake_request());
        let k = reals.len();
        let mut outcount: c_int = 0;
        let mut which = vec![0 as c_int; k];
        let mut sts = vec![zero_status(); k];
        // SAFETY: this call's real requests and status storage, valid for the call.
        let rc = unsafe { mpi::MPI_Waitsome(k as c_int, reals.as_mut_ptr(), &mut outcount, which.as_mut_ptr(), sts.as_mut_ptr()) };
        let mut got = Vec::new();
        for j in 0..outcount.max(0) as usize {
            let w = which[j] as usize;
            if w == k - 1 {
                news::rearm_wake(reals[w]);
                continue;
            }
            let i = idx[w];
            self.reals[i] = reals[w];
            // Statuses follow `which`, not the requests (MPI-3.1 §3.7.5).
            self.statuses[i] = sts[j];
            self.complete(i, if rc != 0 { sts[j].MPI_ERROR } else { 0 });
            got.push(i);
        }
        for (w, i) in idx.iter().enumerate() {
            self.reals[*i] = reals[w];
        }
        got
    }

    /// Like [`Batch::block`] but completes at most one request (`MPI_Waitany`).
    fn block_one(&mut self) -> Option<usize> {
        if let Some(i) = self.proc_nulls(1).first() {
            return Some(*i);
        }
        if self.polls() {
            let got = self.test_pending(1).first().copied();
            if got.is_none() {
                std::thread::yield_now();
            }
            return got;
        }
        let idx = self.pending();
        let mut reals: Vec<MPI_Request> = idx.iter().map(|i| self.reals[*i]).collect();
        reals.push(news::wake_request());
        let k = reals.len();
        let mut which: c_int = -1;
        let mut st = zero_status();
        // SAFETY: this call's real requests and status storage, valid for the call.
        let rc = unsafe { mpi::MPI_Waitany(k as c_int, reals.as_mut_ptr(), &mut which, &mut st) };
        for (w, i) in idx.iter().enumerate() {
            self.reals[*i] = reals[w];
        }
        if which < 0 {
            return None;
        }
        let w = which as usize;
        if w == k - 1 {
            news::rearm_wake(reals[w]);
            return None;
        }
        let i = idx[w];
        self.statuses[i] = st;
        self.complete(i, rc);
        Some(i)
    }

    fn copy_statuses(&self, statuses: *mut MPI_Status) {
        if user_status(statuses) {
            for (i, s) in self.statuses.iter().enumerate() {
                // SAFETY: the program's argument (MPI requires it valid; arrays of `count`).
                unsafe { *statuses.add(i) = *s };
            }
        }
    }

    /// The outcome of an array call: `MPI_ERR_IN_STATUS` (or the one error when the
    /// program ignores statuses), reported on the first failing request's comm.
    fn outcome(&self, statuses: *mut MPI_Status, only: Option<&[usize]>) -> Outcome {
        let all: Vec<usize> = (0..self.codes.len()).collect();
        let set = only.unwrap_or(&all);
        // SAFETY: an error code the host set at MPI_Init, only read.
        let first = set.iter().find(|i| self.codes[**i] != 0 && self.codes[**i] != err::pending());
        let Some(&i) = first else { return Ok(()) };
        if !user_status(statuses) {
            return request::fail_on(self.states[i].as_ref(), self.codes[i]);
        }
        // SAFETY: an error code the host set at MPI_Init, only read.
        let in_status = err::in_status();
        request::fail_on(self.states[i].as_ref(), in_status).map_err(|f| f.raising(self.codes[i]))
    }

    /// After an error: what is still pending is reported as `MPI_ERR_PENDING`.
    fn mark_pending(&mut self) {
        for i in self.pending() {
            // SAFETY: an error code the host set at MPI_Init, only read.
            self.statuses[i].MPI_ERROR = err::pending();
        }
    }
}

/// `MPI_Waitall`.
pub fn waitall(count: c_int, reqs: *mut Sim_FT_MPI_Request, statuses: *mut MPI_Status) -> Outcome {
    let mut b = Batch::new(count, reqs)?;
    loop {
        let _ = service::run_in_wait();
        // Failed requests are done; the others are still waited for (as in ULFM).
        b.verdicts();
        if b.pending().is_empty() {
            break;
        }
        b.block();
    }
    b.settle(reqs);
    b.copy_statuses(statuses);
    b.outcome(statuses, None)
}

/// `MPI_Testall`: completes all or none (MPI-3.1 §3.7.5), unless news fails one.
pub fn testall(count: c_int, reqs: *mut Sim_FT_MPI_Request, flag: *mut c_int, statuses: *mut MPI_Status) -> Outcome {
    if flag.is_null() {
        return Err(arg_error());
    }
    let mut b = Batch::new(count, reqs)?;
    news::refresh();
    let idx = b.pending();
    let mut reals: Vec<MPI_Request> = idx.iter().map(|i| b.reals[*i]).collect();
    let mut sts = vec![zero_status(); reals.len()];
    // SAFETY: this call's real requests and status storage, valid for the call.
    let rc = unsafe { mpi::MPI_Testall(reals.len() as c_int, reals.as_mut_ptr(), flag, sts.as_mut_ptr()) };
    for (w, i) in idx.iter().enumerate() {
        b.reals[*i] = reals[w];
        b.statuses[*i] = sts[w];
    }
    // SAFETY: the program's argument (MPI requires it valid; arrays of `count`).
    if unsafe { *flag } != 0 {
        for i in idx {
            b.complete(i, if rc != 0 { b.statuses[i].MPI_ERROR } else { 0 });
        }
    } else if !b.verdicts().is_empty() {
        b.mark_pending();
        // SAFETY: the program's argument (MPI requires it valid; arrays of `count`).
        unsafe { *flag = 1 };
    }
    b.settle(reqs);
    // SAFETY: the program's argument (MPI requires it valid; arrays of `count`).
    if unsafe { *flag } != 0 {
        b.copy_statuses(statuses);
    }
    b.outcome(statuses, None)
}

fn undefined() -> c_int {
    transport::undefined()
}

/// `MPI_Waitany`.
pub fn waitany(count: c_int, reqs: *mut Sim_FT_MPI_Request, index: *mut c_int, status: *mut MPI_Status) -> Outcome {
    if index.is_null() {
        return Err(arg_error());
    }
    let mut b = Batch::new(count, reqs)?;
    let mut got = None;
    while got.is_none() {
        let _ = service::run_in_wait();
        if let Some(i) = b.verdicts().first() {
            got = Some(*i);
            break;
        }
        if b.pending().is_empty() {
            break;
        }
        got = b.block_one();
    }
    b.settle(reqs);
    let Some(i) = got else {
        // SAFETY: the program's argument (MPI requires it valid; arrays of `count`).
        unsafe { *index = undefined() };
        return Ok(());
    };
    // SAFETY: the program's argument (MPI requires it valid; arrays of `count`).
    unsafe { *index = i as c_int };
    copy_status(status, &b.statuses[i]);
    request::fail_on(b.states[i].as_ref(), b.codes[i])
}

/// `MPI_Testany`.
pub fn testany(
    count: c_int,
    reqs: *mut Sim_FT_MPI_Request,
    index: *mut c_int,
    flag: *mut c_int,
    status: *mut MPI_Status,
) -> Outcome {
    if index.is_null() || flag.is_null() {
        return Err(arg_error());
    }
    let mut b = Batch::new(count, reqs)?;
    news::refresh();
    let idx = b.pending();
    let mut got = None;
    for i in &idx {
        let mut f = 0;
        // SAFETY: this call's real requests and status storage, valid for the call.
        let rc = unsafe { mpi::MPI_Test(&mut b.reals[*i], &mut f, &mut b.statuses[*i]) };
        if f != 0 {
            b.complete(*i, rc);
            got = Some(*i);
            break;
        }
    }
    if got.is_none() {
        got = b.verdicts().first().copied();
    }
    b.settle(reqs);
    // SAFETY: the program's argument (MPI requires it valid; arrays of `count`).
    unsafe {
        *flag = (got.is_some() || idx.is_empty()) as c_int;
        *index = got.map_or(undefined(), |i| i as c_int);
    }
    let Some(i) = got else { return Ok(()) };
    copy_status(status, &b.statuses[i]);
    request::fail_on(b.states[i].as_ref(), b.codes[i])
}

fn some_out(b: &Batch, got: &[usize], outcount: *mut c_int, indices: *mut c_int, statuses: *mut MPI_Status, none_active: bool) {
    // SAFETY: the program's argument (MPI requires it valid; arrays of `count`).
    unsafe { *outcount = if none_active { undefined() } else { got.len() as c_int } };
    for (k, i) in got.iter().enumerate() {
        // SAFETY: k < outcount <= incount, the length of the program's indices.
        unsafe { *indices.add(k) = *i as c_int };
        if user_status(statuses) {
            // SAFETY: the program's argument (MPI requires it valid; arrays of `count`).
            unsafe { *statuses.add(k) = b.statuses[*i] };
        }
    }
}

/// Arguments of `MPI_Waitsome` / `MPI_Testsome` besides the requests.
fn some_args(incount: c_int, outcount: *mut c_int, indices: *mut c_int) -> Outcome {
    if outcount.is_null() || (incount > 0 && indices.is_null()) {
        return Err(arg_error());
    }
    Ok(())
}

/// `MPI_Waitsome`.
pub fn waitsome(
    incount: c_int,
    reqs: *mut Sim_FT_MPI_Request,
    outcount: *mut c_int,
    indices: *mut c_int,
    statuses: *mut MPI_Status,
) -> Outcome {
    some_args(incount, outcount, indices)?;
    let mut b = Batch::new(incount, reqs)?;
    let none_active = b.pending().is_empty();
    let mut got = Vec::new();
    while got.is_empty() && !b.pending().is_empty() {
        let _ = service::run_in_wait();
        got = b.verdicts();
        if got.is_empty() {
            got = b.block();
        }
    }
    b.settle(reqs);
    some_out(&b, &got, outcount, indices, statuses, none_active);
    b.outcome(statuses, Some(&got))
}

/// `MPI_Testsome`.
pub fn testsome(
    incount: c_int,
    reqs: *mut Sim_FT_MPI_Request,
    outcount: *mut c_int,
    indices: *mut c_int,
    statuses: *mut MPI_Status,
) -> Outcome {
    some_args(incount, outcount, indices)?;
    let mut b = Batch::new(incount, reqs)?;
    news::refresh();
    let idx = b.pending();
    let mut got = Vec::new();
    for i in &idx {
        let mut f = 0;
        // SAFETY: this call's real requests and status storage, valid for the call.
        let rc = unsafe { mpi::MPI_Test(&mut b.reals[*i], &mut f, &mut b.statuses[*i]) };
        if f != 0 {
            b.complete(*i, rc);
            got.push(*i);
        }
    }
    got.extend(b.verdicts());
    b.settle(reqs);
    some_out(&b, &got, outcount, indices, statuses, idx.is_empty());
    b.outcome(statuses, Some(&got))
}

/// Hands a status to a call's single `MPI_Status` argument. Its `MPI_ERROR` field
/// is left as the program set it: calls that return one status report the error
/// as their return code only (MPI-3.1 §3.2.5; MPICH does not touch it either).
pub fn copy_status(out: *mut MPI_Status, st: &MPI_Status) {
    if !out.is_null() && out != transport::status_ignore() {
        unsafe {
            let error = (*out).MPI_ERROR;
            *out = *st;
            (*out).MPI_ERROR = error;
        }
    }
}
