//! The completion calls on arrays of requests (MPI-3.1 §3.7.5): `MPI_Waitall`,
//! `MPI_Testall`, `MPI_Waitany`, `MPI_Testany`, `MPI_Waitsome`, `MPI_Testsome`,
//! with the failure semantics of [`crate::engine::complete::complete`], whose verdicts,
//! actions and bookkeeping they apply to each request.
//!
//! A [`Batch`] holds the array's requests while the call runs. A blocking form
//! is a real `MPI_Waitsome`/`MPI_Waitany` over the pending requests plus the
//! layer's wake receive, so failure or revoke news interrupts it, as for one
//! request; the tests test each request once.

use crate::engine::registry::req_state::{to_proc_null, ReqState};
use crate::engine::news::wake;
use crate::engine::complete::complete::{Action, 
    apply, awaits_dead, completed, copy_status, empty_status, finish, user_status, verdict,
};
use crate::engine::base::errors::{Failure, Outcome};
use crate::engine::base::handles::Sim_FT_MPI_Request;
use crate::engine::registry::request::{self, arg_error};
use crate::engine::complete::batch_fast::{self, outcome, some_out, undefined, Calmly, Interrupted, SomeOut};
use crate::engine::{news::news, progress::service};
use crate::transport::serial::Serial;
use crate::transport::{self, err, zero_status, MPI_Request, MPI_Status};
use std::os::raw::c_int;

/// The requests of an array argument, with the scratch arrays of the host calls.
/// Its vectors come from [`POOL`] and go back there when it is dropped, so a
/// completion call allocates nothing once the pool holds a batch as large.
#[derive(Default)]
struct Batch {
    states: Vec<Option<ReqState>>,
    reals: Vec<MPI_Request>,
    statuses: Vec<MPI_Status>,
    codes: Vec<c_int>,
    done: Vec<bool>,
    /// Scratch of [`Batch::block`] and [`Batch::block_one`]: the pending indices,
    /// their real requests (and the wake request), the host's outputs.
    idx: Vec<usize>,
    wreals: Vec<MPI_Request>,
    which: Vec<c_int>,
    wsts: Vec<MPI_Status>,
    /// Scratch of `MPI_Waitall`: the requests one blocking round completed.
    got: Vec<usize>,
    /// Some active request is an iagree/ishrink or a point-to-point one with
    /// `MPI_PROC_NULL` (the checks of [`Batch::block`] look for those only then).
    special: bool,
    /// No blocking round ran yet: the first tests before it waits.
    first: bool,
}

// SAFETY: a pooled batch holds no live request: its vectors are cleared before
// reuse, and the host request handles in them (pointers with Open MPI) name host
// objects not tied to a thread; POOL is only touched by the thread inside MPI.
unsafe impl Send for Batch {}

/// Batches whose vectors wait to be reused (at most [`POOL_KEEP`] of them; a
/// completion call inside another, as from a callback, takes a second one).
static POOL: Serial<Vec<Batch>> = Serial::new(Vec::new());
const POOL_KEEP: usize = 4;
/// Larger arrays are not kept.
const POOL_MAX_LEN: usize = 4096;

impl Drop for Batch {
    fn drop(&mut self) {
        if self.states.capacity() > POOL_MAX_LEN {
            return;
        }
        let mut pool = POOL.lock();
        if pool.len() < POOL_KEEP {
            pool.push(std::mem::take(self));
        }
    }
}

impl Batch {
    fn new(count: c_int, reqs: *mut Sim_FT_MPI_Request) -> Result<Batch, Failure> {
        if count < 0 || (count > 0 && reqs.is_null()) {
            return Err(arg_error());
        }
        let n = count as usize;
        let mut b = POOL.lock().pop().unwrap_or_default();
        b.states.clear();
        b.reals.clear();
        b.statuses.clear();
        b.statuses.resize(n, zero_status());
        b.codes.clear();
        b.codes.resize(n, 0);
        b.done.clear();
        request::active_many(reqs, n, &mut b.states, &mut b.reals)?;
        b.done.extend(b.states.iter().map(|st| st.is_none()));
        b.special = b.states.iter().flatten().any(|st| st.ft != 0 || to_proc_null(st));
        b.first = true;
        for i in 0..n {
            if b.done[i] {
                b.statuses[i] = empty_status();
            }
        }
        Ok(b)
    }

    /// The requests of a calm `MPI_Waitall` that news interrupted (engine::complete::batch_fast).
    fn resume(from: Interrupted) -> Batch {
        let mut b = Batch::default();
        (b.states, b.reals, b.statuses, b.codes, b.done) = (from.states, from.reals, from.statuses, from.codes, from.done);
        // No special request (the calm path takes none), and the host tested them.
        (b.special, b.first) = (false, false);
        b
    }

    /// Whether a request is still pending.
    fn any_pending(&self) -> bool {
        self.done.iter().any(|d| !d)
    }

    fn settle(&self, reqs: *mut Sim_FT_MPI_Request) {
        // Indices below count, the length of the program's array (checked non-null in Batch::new).
        let items = (0..self.states.len())
            .filter(|i| self.states[*i].is_some())
            .map(|i| (i, self.reals[i], self.done[i] && completed(self.codes[i])));
        request::settle_many(reqs, items);
    }

    /// Verdicts for every pending request; true if any request got an error.
    fn verdicts(&mut self) -> Vec<usize> {
        let mut hit = Vec::new();
        // Nothing failed or revoked anywhere: no verdict (complete::verdict).
        if crate::engine::registry::comm::calm() {
            return hit;
        }
        for i in 0..self.states.len() {
            if self.done[i] {
                continue;
            }
            let st = self.states[i].unwrap();
            if let Some((code, act)) = verdict(&st) {
                let mut flag = 0;
                if act != Action::Hold {
                    transport::request::test(&mut self.reals[i], &mut flag, Some(&mut self.statuses[i]));
                }
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

    /// The pending indices, in the scratch list taken out of the batch (the
    /// caller puts it back: `b.idx = idx`).
    fn take_idx(&mut self) -> Vec<usize> {
        let mut idx = std::mem::take(&mut self.idx);
        idx.clear();
        idx.extend((0..self.done.len()).filter(|i| !self.done[*i]));
        idx
    }

    /// The real requests of `idx` and room for their statuses, in the scratch
    /// vectors taken out of the batch (put back with `b.wreals`, `b.wsts`).
    fn take_reals(&mut self, idx: &[usize]) -> (Vec<MPI_Request>, Vec<MPI_Status>) {
        let mut reals = std::mem::take(&mut self.wreals);
        reals.clear();
        reals.extend(idx.iter().map(|i| self.reals[*i]));
        let mut sts = std::mem::take(&mut self.wsts);
        sts.clear();
        sts.resize(idx.len(), zero_status());
        (reals, sts)
    }

    /// Completes pending requests to `MPI_PROC_NULL` (at most `max`), adding
    /// their indices to `got`.
    fn proc_nulls(&mut self, max: usize, got: &mut Vec<usize>) {
        if !self.special {
            return;
        }
        for i in 0..self.states.len() {
            if got.len() == max {
                break;
            }
            if self.done[i] || !to_proc_null(self.states[i].as_ref().unwrap()) {
                continue;
            }
            let rc = transport::request::wait(&mut self.reals[i], Some(&mut self.statuses[i]));
            self.complete(i, rc);
            got.push(i);
        }
    }

    /// Some pending request is an iagree/ishrink, or an agreement is running here:
    /// nothing in MPI completes or wakes it, so waits poll (testing everything,
    /// advancing the agreements) instead of blocking in MPI.
    fn polls(&self) -> bool {
        // (awaits_dead is false while nothing failed or was revoked.)
        let look = self.special || !crate::engine::registry::comm::calm();
        service::must_poll()
            || (look && (0..self.states.len()).any(|i| !self.done[i] && self.states[i].is_some_and(|st| st.ft != 0 || awaits_dead(&st))))
    }

    /// Tests every pending request once (until `max` completed), adding the
    /// indices completed to `got`.
    fn test_pending(&mut self, max: usize, got: &mut Vec<usize>) {
        for i in 0..self.states.len() {
            if got.len() == max {
                break;
            }
            if self.done[i] {
                continue;
            }
            let mut f = 0;
            let rc = transport::request::test(&mut self.reals[i], &mut f, Some(&mut self.statuses[i]));
            if f != 0 {
                self.complete(i, rc);
                got.push(i);
            }
        }
    }

    /// Blocks until at least one pending request completes or news arrives.
    /// Adds the indices completed to `got` (which starts empty).
    fn block(&mut self, got: &mut Vec<usize>) {
        self.proc_nulls(usize::MAX, got);
        if !got.is_empty() {
            return;
        }
        if self.polls() {
            self.test_pending(usize::MAX, got);
            if got.is_empty() {
                std::thread::yield_now();
            }
            return;
        }
        let (idx, mut reals) = self.take_pending();
        let k = reals.len();
        let mut outcount: c_int = 0;
        let mut which = std::mem::take(&mut self.which);
        which.clear();
        which.resize(k, 0);
        let mut sts = std::mem::take(&mut self.wsts);
        sts.clear();
        sts.resize(k, zero_status());
        // The host's own test of the program's requests first (as complete::wait):
        // only a round that must block pays for the wake request.
        let mut rc = 0;
        if std::mem::take(&mut self.first) {
            rc = transport::request::testsome(&mut reals[..k - 1], &mut outcount, &mut which, &mut sts);
        }
        if outcount <= 0 {
            rc = transport::request::waitsome(&mut reals, &mut outcount, &mut which, &mut sts);
        }
        for j in 0..outcount.max(0) as usize {
            let w = which[j] as usize;
            if w == k - 1 {
                wake::rearm_wake(reals[w]);
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
        (self.idx, self.wreals, self.which, self.wsts) = (idx, reals, which, sts);
    }

    /// The pending indices and their real requests, then the wake request: the
    /// array a blocking form hands the host. The scratch vectors are taken out of
    /// the batch; the caller puts them back.
    fn take_pending(&mut self) -> (Vec<usize>, Vec<MPI_Request>) {
        let idx = self.take_idx();
        let mut reals = std::mem::take(&mut self.wreals);
        reals.clear();
        reals.extend(idx.iter().map(|i| self.reals[*i]));
        reals.push(wake::wake_request());
        (idx, reals)
    }

    /// Like [`Batch::block`] but completes at most one request (`MPI_Waitany`).
    fn block_one(&mut self) -> Option<usize> {
        let mut got = Vec::new();
        self.proc_nulls(1, &mut got);
        if let Some(i) = got.first() {
            return Some(*i);
        }
        if self.polls() {
            self.test_pending(1, &mut got);
            if got.is_empty() {
                std::thread::yield_now();
            }
            return got.first().copied();
        }
        let (idx, mut reals) = self.take_pending();
        let k = reals.len();
        let mut which: c_int = -1;
        let mut st = zero_status();
        let (mut rc, mut flag) = (0, 0);
        if std::mem::take(&mut self.first) {
            rc = transport::request::testany(&mut reals[..k - 1], &mut which, &mut flag, Some(&mut st));
        }
        if flag == 0 || which < 0 {
            which = -1;
            rc = transport::request::waitany(&mut reals, &mut which, Some(&mut st));
        }
        for (w, i) in idx.iter().enumerate() {
            self.reals[*i] = reals[w];
        }
        let w = which.max(0) as usize;
        let wake = which >= 0 && w == k - 1;
        if wake {
            wake::rearm_wake(reals[w]);
        }
        let i = if which < 0 || wake { None } else { Some(idx[w]) };
        (self.idx, self.wreals) = (idx, reals);
        let i = i?;
        self.statuses[i] = st;
        self.complete(i, rc);
        Some(i)
    }

    fn copy_statuses(&self, statuses: *mut MPI_Status) {
        if user_status(statuses) {
            for (i, s) in self.statuses.iter().enumerate() {
                // SAFETY: `statuses` is neither null nor MPI_STATUSES_IGNORE
                // (user_status): the program's array, which MPI requires to hold
                // one status per request, and i < count.
                unsafe { *statuses.add(i) = *s };
            }
        }
    }

    /// After an error: what is still pending is reported as `MPI_ERR_PENDING`.
    fn mark_pending(&mut self) {
        for i in 0..self.done.len() {
            if !self.done[i] {
                self.statuses[i].MPI_ERROR = err::pending();
            }
        }
    }
}

/// `MPI_Waitall`.
pub fn waitall(count: c_int, reqs: *mut Sim_FT_MPI_Request, statuses: *mut MPI_Status) -> Outcome {
    let mut b = match batch_fast::waitall(count, reqs, statuses) {
        Calmly::Ended(out) => return out,
        Calmly::NotCalm => Batch::new(count, reqs)?,
        Calmly::Interrupted(from) => Batch::resume(from),
    };
    let mut got = std::mem::take(&mut b.got);
    loop {
        let _ = service::run_in_wait();
        // Failed requests are done; the others are still waited for (as in ULFM).
        b.verdicts();
        if !b.any_pending() {
            break;
        }
        got.clear();
        b.block(&mut got);
    }
    b.got = got;
    b.settle(reqs);
    b.copy_statuses(statuses);
    outcome(|i| b.states[i].map(|s| s.comm.0), &b.codes, statuses, None)
}

/// `MPI_Testall`: completes all or none (MPI-3.1 §3.7.5), unless news fails one.
pub fn testall(count: c_int, reqs: *mut Sim_FT_MPI_Request, flag: *mut c_int, statuses: *mut MPI_Status) -> Outcome {
    if flag.is_null() {
        return Err(arg_error());
    }
    // SAFETY: `flag` was checked non-null above and is the program's flag, which
    // MPI requires valid for writing; nothing else refers to it during the call.
    if let Some(out) = batch_fast::testall(count, reqs, unsafe { &mut *flag }, statuses) {
        return out;
    }
    let mut b = Batch::new(count, reqs)?;
    news::refresh();
    let idx = b.take_idx();
    let (mut reals, mut sts) = b.take_reals(&idx);
    // SAFETY: `flag` was checked non-null above and is the program's flag, which
    // MPI requires valid for writing; nothing else refers to it during the call.
    let rc = transport::request::testall(&mut reals, unsafe { &mut *flag }, &mut sts);
    for (w, i) in idx.iter().enumerate() {
        b.reals[*i] = reals[w];
        b.statuses[*i] = sts[w];
    }
    // SAFETY: the program's flag, checked non-null at the top and written by the host's
    // MPI_Testall.
    if unsafe { *flag } != 0 {
        for &i in &idx {
            b.complete(i, if rc != 0 { b.statuses[i].MPI_ERROR } else { 0 });
        }
    } else if !b.verdicts().is_empty() {
        b.mark_pending();
        // SAFETY: the program's flag, checked non-null at the top (MPI requires it valid for
        // writing).
        unsafe { *flag = 1 };
    }
    (b.idx, b.wreals, b.wsts) = (idx, reals, sts);
    b.settle(reqs);
    // SAFETY: the program's flag, checked non-null at the top and written above.
    if unsafe { *flag } != 0 {
        b.copy_statuses(statuses);
    }
    outcome(|i| b.states[i].map(|s| s.comm.0), &b.codes, statuses, None)
}

/// `MPI_Waitany`.
pub fn waitany(count: c_int, reqs: *mut Sim_FT_MPI_Request, index: *mut c_int, status: *mut MPI_Status) -> Outcome {
    if index.is_null() {
        return Err(arg_error());
    }
    let mut flag = 0;
    // SAFETY: the program's index, checked non-null above (MPI requires it valid
    // for writing).
    if let Some(out) = batch_fast::any(count, reqs, unsafe { &mut *index }, &mut flag, status, false) {
        return out;
    }
    let mut b = Batch::new(count, reqs)?;
    let mut got = None;
    while got.is_none() {
        let _ = service::run_in_wait();
        if let Some(i) = b.verdicts().first() {
            got = Some(*i);
            break;
        }
        if !b.any_pending() {
            break;
        }
        got = b.block_one();
    }
    b.settle(reqs);
    let Some(i) = got else {
        // SAFETY: the program's index, checked non-null at the top (MPI requires it valid for
        // writing).
        unsafe { *index = undefined() };
        return Ok(());
    };
    // SAFETY: the program's index, checked non-null at the top (MPI requires it valid for
    // writing).
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
    // SAFETY: the program's index and flag, checked non-null above (MPI requires
    // them valid for writing).
    if let Some(out) = batch_fast::any(count, reqs, unsafe { &mut *index }, unsafe { &mut *flag }, status, true) {
        return out;
    }
    let mut b = Batch::new(count, reqs)?;
    news::refresh();
    let idx = b.take_idx();
    let mut got = None;
    for i in &idx {
        let mut f = 0;
        let rc = transport::request::test(&mut b.reals[*i], &mut f, Some(&mut b.statuses[*i]));
        if f != 0 {
            b.complete(*i, rc);
            got = Some(*i);
            break;
        }
    }
    if got.is_none() {
        got = b.verdicts().first().copied();
    }
    let none_active = idx.is_empty();
    b.idx = idx;
    b.settle(reqs);
    // SAFETY: the program's flag and index, both checked non-null at the top (MPI requires them
    // valid for writing).
    unsafe {
        *flag = (got.is_some() || none_active) as c_int;
        *index = got.map_or(undefined(), |i| i as c_int);
    }
    let Some(i) = got else { return Ok(()) };
    copy_status(status, &b.statuses[i]);
    request::fail_on(b.states[i].as_ref(), b.codes[i])
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
    some(incount, reqs, SomeOut { outcount, indices, statuses }, true)
}

/// `MPI_Testsome`.
pub fn testsome(
    incount: c_int,
    reqs: *mut Sim_FT_MPI_Request,
    outcount: *mut c_int,
    indices: *mut c_int,
    statuses: *mut MPI_Status,
) -> Outcome {
    some(incount, reqs, SomeOut { outcount, indices, statuses }, false)
}

/// `MPI_Waitsome` (`block`: until some request completes, unless none is
/// active) or `MPI_Testsome` (tests each pending request once): the same
/// arguments, verdicts and outputs, only the waiting differs.
fn some(incount: c_int, reqs: *mut Sim_FT_MPI_Request, out: SomeOut, block: bool) -> Outcome {
    let SomeOut { outcount, indices, statuses } = out;
    some_args(incount, outcount, indices)?;
    if let Some(done) = batch_fast::some(incount, reqs, out, !block) {
        return done;
    }
    let mut b = Batch::new(incount, reqs)?;
    let none_active = !b.any_pending();
    let mut got = std::mem::take(&mut b.got);
    got.clear();
    if block {
        while got.is_empty() && b.any_pending() {
            let _ = service::run_in_wait();
            got.extend(b.verdicts());
            if got.is_empty() {
                b.block(&mut got);
            }
        }
    } else {
        news::refresh();
        b.test_pending(usize::MAX, &mut got);
        got.extend(b.verdicts());
    }
    b.settle(reqs);
    some_out(|k| b.statuses[got[k]], &got, outcount, indices, statuses, none_active);
    let out = outcome(|i| b.states[i].map(|s| s.comm.0), &b.codes, statuses, Some(&got));
    b.got = got;
    out
}
