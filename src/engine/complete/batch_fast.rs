//! The calm path of the completion calls on arrays (issue 36): when nothing is
//! going on, a short array's requests are read under one lock into the stack, the
//! host tests them once, and if that completes the call it ends there, with the
//! bookkeeping of [`crate::engine::complete::complete::finish`] and
//! [`crate::engine::registry::request::settle_many`] and nothing else: no [`Batch`], no
//! verdicts, no wake request.
//!
//! "Nothing going on" is what the general path would find on its first look:
//! no failure or revoke known here, no news unread, no agreement running, no
//! fill-in wanted ([`service::busy`], [`service::must_poll`]); and no request in
//! the array that the general path treats apart (an iagree/ishrink, one to
//! `MPI_PROC_NULL`). Then that path would skip its verdicts and service and go
//! straight to the host's test of the pending requests, as this one does. Each
//! function returns None, having changed nothing, when it does not apply or the
//! host's test did not end the call: the caller then runs the general path
//! ([`crate::engine::complete::batch`]).
//!
//! The waits test twice before they give up on the calm path: Open MPI's
//! `MPI_Testall`, `MPI_Testany` and `MPI_Testsome`, finding nothing (or not
//! everything) complete, progress once and return without looking again, so a
//! request that completed in that progress step sent about every second
//! `MPI_Waitall` of a ping-pong down the general path (bench/calls.c on Open MPI
//! 4.1: 2,024 of MPIFT's own instructions per Irecv + Isend + Waitall, MPICH
//! 1,395). A wait that must block pays one more host test.
//!
//! The waits also block here while nothing is going on: the host's
//! `MPI_Waitsome` (`MPI_Waitany`) over the requests and the wake request, as the
//! general path's blocking round does (news wakes it). When news comes, or the
//! service has something to do, `MPI_Waitall` hands the requests completed so
//! far to the general path ([`Interrupted`]), which goes on from there; the
//! others have completed nothing then, and the general path starts over. A halo
//! exchange's `MPI_Waitall` usually finds some message not there yet; before
//! this it paid a second read of the array and the general path's bookkeeping
//! every time.
//!
//! The outputs of the array calls ([`outcome`], [`some_out`]) live here; the
//! general path ([`Batch`]) uses them too.
//!
//! [`Batch`]: crate::engine::complete::batch

use crate::engine::registry::req_state::{Brief, ReqState};
use crate::engine::news::wake;
use crate::engine::complete::complete::{copy_status, empty_status, finish, finish_brief, user_status};
use crate::engine::base::errors::Outcome;
use crate::engine::base::handles::{Sim_FT_MPI_Comm, Sim_FT_MPI_Request};
use crate::engine::registry::request;
use crate::engine::{registry::comm, news::news, progress::service};
use crate::transport::{self, err, zero_status, MPI_Request, MPI_Status};
use std::os::raw::c_int;

/// Longer arrays take the general path.
const MAX: usize = 16;

/// A short array's requests on the stack: what the calm path needs of each
/// ([`Brief`]; None: null or inactive), and the program's array they came from.
/// Room for `N - 1` requests: every array has `N` entries, so that `reals` has
/// room for the wake request while a wait blocks (the others waste one).
///
/// Sized by the call ([`sized`]: up to 4, 8 or [`MAX`] requests): a `Calm` is
/// zeroed on every call, and at one size of 16 that was about 40 stores and a
/// 320-byte memset per `MPI_Waitall` of 2 (bench/callgrind.sh, waitall row).
struct Calm<const N: usize> {
    n: usize,
    reqs: *mut Sim_FT_MPI_Request,
    briefs: [Option<Brief>; N],
    reals: [MPI_Request; N],
    sts: [MPI_Status; N],
    codes: [c_int; N],
}

/// Runs `$body` with `$c` bound to a new [`Calm`] of the least size that holds
/// `$count` requests (larger counts get the largest, whose `read` refuses them).
macro_rules! sized {
    ($count:expr, |$c:ident| $body:expr) => {
        match $count {
            ..=4 => {
                let mut $c = Calm::<5>::new();
                $body
            }
            5..=8 => {
                let mut $c = Calm::<9>::new();
                $body
            }
            _ => {
                let mut $c = Calm::<{ MAX + 1 }>::new();
                $body
            }
        }
    };
}

impl<const N: usize> Calm<N> {
    /// Room for a short array's requests (filled by [`Calm::read`]).
    #[inline(always)]
    fn new() -> Calm<N> {
        Calm {
            n: 0,
            reqs: std::ptr::null_mut(),
            briefs: [None; N],
            reals: [transport::request_null(); N],
            sts: [zero_status(); N],
            codes: [0; N],
        }
    }

    /// Reads the program's `count` requests; false if the calm path does not
    /// apply to them now. (Filled in place: a `Calm` is up to 1.7 KB, and
    /// returning it by value cost a copy per call. Out of line, with the table's
    /// read inlined in it: inlined in the waits, that read became a call of its
    /// own.)
    #[inline(never)]
    fn read(&mut self, count: c_int, reqs: *mut Sim_FT_MPI_Request) -> bool {
        if count <= 0 || count as usize >= N || reqs.is_null() || !service::quiet() {
            return false;
        }
        self.n = count as usize;
        self.reqs = reqs;
        request::plain_many(reqs, &mut self.briefs[..self.n], &mut self.reals[..self.n])
    }

    /// The host completed request `i` (its status in `sts[i]`; `rc`: the host
    /// call's return code): MPIFT's bookkeeping and its code, as
    /// `Batch::complete`. A null or inactive request gets the empty status.
    fn complete(&mut self, i: usize, rc: c_int) {
        self.complete_at(i, i, rc);
    }

    /// [`Calm::complete`] with request `i`'s status in `sts[j]` (`MPI_Waitsome`
    /// and `MPI_Testsome` keep the host's order: the j-th completed).
    fn complete_at(&mut self, i: usize, j: usize, rc: c_int) {
        let Some(b) = self.briefs[i] else {
            self.sts[j] = empty_status();
            return;
        };
        let rc = if rc != 0 { self.sts[j].MPI_ERROR } else { 0 };
        let code = match finish_brief(&b, &self.sts[j], rc) {
            Some(code) => code,
            None => self.finish_whole(i, j, rc),
        };
        self.codes[i] = code;
        self.sts[j].MPI_ERROR = code;
    }

    /// [`finish`] from request `i`'s whole state, read again (still in the table:
    /// the handles are settled last); its status in `sts[j]`.
    #[inline(never)]
    fn finish_whole(&self, i: usize, j: usize, rc: c_int) -> c_int {
        match self.state(i) {
            Some(st) => finish(&st, &self.sts[j], rc),
            None => rc,
        }
    }

    /// Request `i`'s whole state (None: null or inactive).
    fn state(&self, i: usize) -> Option<ReqState> {
        self.briefs[i]?;
        // SAFETY: i < n, the program's count; `reqs` is its array (read by Calm::read).
        let h = unsafe { *self.reqs.add(i) };
        request::lookup(h).ok().filter(|s| s.active)
    }

    /// The communicator of request `i` (None: null or inactive).
    fn comm(&self, i: usize) -> Option<Sim_FT_MPI_Comm> {
        self.briefs[i].map(|b| b.comm)
    }

    /// Releases (or, if persistent, deactivates) the completed requests `done`.
    fn settle(&self, reqs: *mut Sim_FT_MPI_Request, done: impl Iterator<Item = usize>) {
        request::settle_many(reqs, done.filter(|i| self.briefs[*i].is_some()).map(|i| (i, self.reals[i], true)));
    }

    /// The whole array completed: bookkeeping, handles, statuses, outcome.
    fn all_done(&mut self, rc: c_int, reqs: *mut Sim_FT_MPI_Request, statuses: *mut MPI_Status) -> Outcome {
        if rc == 0 && self.all_p2p_calm() {
            return self.all_done_calm(reqs, statuses);
        }
        for i in 0..self.n {
            self.complete(i, rc);
        }
        self.all_settled(reqs, statuses)
    }

    /// Every request is null, inactive or point-to-point, and nothing is known
    /// or unread here: then, after a host call without error, [`finish_brief`]
    /// answers 0 for each (a receive counted, a send done).
    fn all_p2p_calm(&self) -> bool {
        self.briefs[..self.n].iter().all(|b| b.map_or(true, |b| b.p2p)) && !news::pending() && comm::calm()
    }

    /// [`Calm::all_done`] when [`Calm::all_p2p_calm`] holds and the host
    /// reported no error: what [`Calm::complete`] does for each request, with
    /// the receives counted under one lock of the registry (halo exchanges
    /// complete 4-8 receives per `MPI_Waitall`), and every code 0.
    fn all_done_calm(&mut self, reqs: *mut Sim_FT_MPI_Request, statuses: *mut MPI_Status) -> Outcome {
        let n = self.n;
        for (b, s) in self.briefs[..n].iter().zip(&mut self.sts[..n]) {
            match b {
                None => *s = empty_status(),
                Some(_) => s.MPI_ERROR = 0,
            }
        }
        let received = self.briefs[..n].iter().zip(&self.sts[..n]);
        comm::count_received(received.filter_map(|(b, s)| b.filter(|b| b.recv).map(|b| (b.comm, s.MPI_SOURCE))));
        // Every code is 0 (as `Calm::new` left them): no outcome to look for.
        self.settle_all(reqs, statuses);
        Ok(())
    }

    /// Every request completed and [`Calm::complete`]d: handles, statuses, outcome.
    fn all_settled(&mut self, reqs: *mut Sim_FT_MPI_Request, statuses: *mut MPI_Status) -> Outcome {
        self.settle_all(reqs, statuses);
        outcome(|i| self.comm(i), &self.codes[..self.n], statuses, None)
    }

    /// Every request completed: handles settled, statuses to the program.
    #[inline(always)]
    fn settle_all(&mut self, reqs: *mut Sim_FT_MPI_Request, statuses: *mut MPI_Status) {
        let n = self.n;
        self.settle(reqs, 0..n);
        if user_status(statuses) {
            // SAFETY: `statuses` is neither null nor MPI_STATUSES_IGNORE
            // (user_status): the program's array of `count` = n statuses.
            unsafe { std::ptr::copy_nonoverlapping(self.sts.as_ptr(), statuses, n) };
        }
    }

    /// The one request `i` the host completed (Waitany, Testany).
    fn one_done(&mut self, i: usize, rc: c_int, reqs: *mut Sim_FT_MPI_Request, status: *mut MPI_Status) -> Outcome {
        self.complete(i, rc);
        self.settle(reqs, std::iter::once(i));
        copy_status(status, &self.sts[i]);
        request::fail_on_comm(self.comm(i), self.codes[i])
    }

    /// The requests `which[..k]` the host completed (Waitsome, Testsome), their
    /// statuses in `sts[..k]` (in the order of `which`, which is also the order
    /// the program gets them in: they stay there).
    fn some_done(&mut self, k: usize, which: &[c_int], rc: c_int, reqs: *mut Sim_FT_MPI_Request, out: SomeOut) -> Outcome {
        let mut got = [0usize; N];
        for j in 0..k {
            let i = which[j] as usize;
            got[j] = i;
            self.complete_at(i, j, rc);
        }
        self.settle(reqs, got[..k].iter().copied());
        some_out(|j| self.sts[j], &got[..k], out.outcount, out.indices, out.statuses, false);
        outcome(|i| self.comm(i), &self.codes[..self.n], out.statuses, Some(&got[..k]))
    }
}

/// The output arguments of `MPI_Waitsome` / `MPI_Testsome`.
#[derive(Clone, Copy)]
pub(crate) struct SomeOut {
    pub outcount: *mut c_int,
    pub indices: *mut c_int,
    pub statuses: *mut MPI_Status,
}

/// `MPI_Waitall` while nothing is going on: the host's `MPI_Testall` (twice),
/// then if need be [`Calm::block_all`].
pub(crate) fn waitall(count: c_int, reqs: *mut Sim_FT_MPI_Request, statuses: *mut MPI_Status) -> Calmly {
    sized!(count, |c| waitall_in(&mut c, count, reqs, statuses))
}

#[inline(always)]
fn waitall_in<const N: usize>(c: &mut Calm<N>, count: c_int, reqs: *mut Sim_FT_MPI_Request, statuses: *mut MPI_Status) -> Calmly {
    if !c.read(count, reqs) {
        return Calmly::NotCalm;
    }
    let mut flag = 0;
    let mut rc = transport::request::testall(&mut c.reals[..c.n], &mut flag, &mut c.sts[..c.n]);
    if flag == 0 {
        // A second look (module docs).
        rc = transport::request::testall(&mut c.reals[..c.n], &mut flag, &mut c.sts[..c.n]);
    }
    if flag != 0 {
        return Calmly::Ended(c.all_done(rc, reqs, statuses));
    }
    // Not all complete: the host changed no request (MPI-3.1 §3.7.5).
    c.block_all(reqs, statuses)
}

/// What a calm `MPI_Waitall` that news interrupted hands the general path
/// (engine::complete::batch): per request its state (None: null or inactive), real request,
/// status, code, and whether it is done.
pub(crate) struct Interrupted {
    pub states: Vec<Option<ReqState>>,
    pub reals: Vec<MPI_Request>,
    pub statuses: Vec<MPI_Status>,
    pub codes: Vec<c_int>,
    pub done: Vec<bool>,
}

/// How a calm path's `MPI_Waitall` went.
pub(crate) enum Calmly {
    /// It ended the call.
    Ended(Outcome),
    /// It did not apply; nothing changed.
    NotCalm,
    /// News came while it blocked: the general path goes on from here.
    Interrupted(Interrupted),
}

impl<const N: usize> Calm<N> {
    /// `MPI_Waitall` after the host's tests found some request not complete:
    /// rounds of the host's `MPI_Waitsome` over the requests and the wake request
    /// (null and completed ones are ignored by the host) while nothing is going
    /// on, as `Batch::block` would run them; on news, the general path.
    fn block_all(&mut self, reqs: *mut Sim_FT_MPI_Request, statuses: *mut MPI_Status) -> Calmly {
        let n = self.n;
        let mut done = [false; N];
        for i in 0..n {
            if self.briefs[i].is_none() {
                done[i] = true;
                self.sts[i] = empty_status();
            }
        }
        let mut left = done[..n].iter().filter(|d| !**d).count();
        let mut which = [0 as c_int; N];
        let mut wsts = [zero_status(); N];
        while left > 0 {
            let Some((k, rc)) = self.block_some(&mut which, &mut wsts) else {
                return Calmly::Interrupted(self.interrupted(&done[..n]));
            };
            for j in 0..k {
                let w = which[j] as usize;
                // Statuses follow `which`, not the requests (MPI-3.1 §3.7.5).
                self.sts[w] = wsts[j];
                self.complete(w, rc);
                done[w] = true;
                left -= 1;
            }
        }
        Calmly::Ended(self.all_settled(reqs, statuses))
    }

    /// A blocking round of a wait, while nothing is going on: the host's
    /// `MPI_Waitsome` over the requests and the wake request (null, inactive and
    /// completed ones are ignored by the host), again after a wake-up that brought
    /// nothing to act on. Some((k, rc)): k >= 1 requests completed, their indices
    /// in `which[..k]` and statuses in `wsts[..k]`; rc: the host's code. None:
    /// something is going on now; nothing completed.
    fn block_some(&mut self, which: &mut [c_int; N], wsts: &mut [MPI_Status; N]) -> Option<(usize, c_int)> {
        let n = self.n;
        loop {
            if !service::quiet() {
                return None;
            }
            self.reals[n] = wake::wake_request();
            let mut k: c_int = 0;
            let rc = transport::request::waitsome(&mut self.reals[..=n], &mut k, &mut which[..=n], &mut wsts[..=n]);
            let mut got = 0;
            for j in 0..k.max(0) as usize {
                if which[j] as usize == n {
                    wake::rearm_wake(self.reals[n]);
                    continue;
                }
                (which[got], wsts[got]) = (which[j], wsts[j]);
                got += 1;
            }
            if got > 0 {
                return Some((got, rc));
            }
        }
    }

    /// [`Calm::block_some`] for a wait that may complete one request only
    /// (`MPI_Waitany`): Some((i, rc)): request i completed, its status in `sts[i]`.
    fn block_one(&mut self) -> Option<(usize, c_int)> {
        let n = self.n;
        loop {
            if !service::quiet() {
                return None;
            }
            self.reals[n] = wake::wake_request();
            let mut w: c_int = -1;
            let mut st = zero_status();
            let rc = transport::request::waitany(&mut self.reals[..=n], &mut w, Some(&mut st));
            match usize::try_from(w) {
                Ok(i) if i < n => {
                    self.sts[i] = st;
                    return Some((i, rc));
                }
                Ok(i) if i == n => wake::rearm_wake(self.reals[n]),
                _ => return None,
            }
        }
    }

    /// The requests as the general path takes them over.
    fn interrupted(&self, done: &[bool]) -> Interrupted {
        let n = self.n;
        Interrupted {
            states: (0..n).map(|i| self.state(i)).collect(),
            reals: self.reals[..n].to_vec(),
            statuses: self.sts[..n].to_vec(),
            codes: self.codes[..n].to_vec(),
            done: done.to_vec(),
        }
    }
}

/// `MPI_Testall` (statuses are written only if all completed).
pub(crate) fn testall(count: c_int, reqs: *mut Sim_FT_MPI_Request, flag: &mut c_int, statuses: *mut MPI_Status) -> Option<Outcome> {
    sized!(count, |c| testall_in(&mut c, count, reqs, flag, statuses))
}

#[inline(always)]
fn testall_in<const N: usize>(
    c: &mut Calm<N>,
    count: c_int,
    reqs: *mut Sim_FT_MPI_Request,
    flag: &mut c_int,
    statuses: *mut MPI_Status,
) -> Option<Outcome> {
    if !c.read(count, reqs) {
        return None;
    }
    let rc = transport::request::testall(&mut c.reals[..c.n], flag, &mut c.sts[..c.n]);
    Some(if *flag != 0 { c.all_done(rc, reqs, statuses) } else { Ok(()) })
}

/// `MPI_Waitany` (`test`: false) when the host's `MPI_Testany` completes a
/// request, and `MPI_Testany` (`test`: true) unless no request is active.
pub(crate) fn any(
    count: c_int,
    reqs: *mut Sim_FT_MPI_Request,
    index: &mut c_int,
    flag: &mut c_int,
    status: *mut MPI_Status,
    test: bool,
) -> Option<Outcome> {
    sized!(count, |c| any_in(&mut c, count, reqs, index, flag, status, test))
}

#[inline(always)]
fn any_in<const N: usize>(
    c: &mut Calm<N>,
    count: c_int,
    reqs: *mut Sim_FT_MPI_Request,
    index: &mut c_int,
    flag: &mut c_int,
    status: *mut MPI_Status,
    test: bool,
) -> Option<Outcome> {
    if !c.read(count, reqs) {
        return None;
    }
    let mut which = undefined();
    let mut st = zero_status();
    let mut rc = transport::request::testany(&mut c.reals[..c.n], &mut which, flag, Some(&mut st));
    if *flag == 0 && !test {
        // A wait's second look (module docs).
        rc = transport::request::testany(&mut c.reals[..c.n], &mut which, flag, Some(&mut st));
    }
    let hit = *flag != 0 && which >= 0 && (which as usize) < c.n;
    if hit {
        c.sts[which as usize] = st;
    } else if *flag == 0 && !test {
        // A wait that must block (None: news came first; nothing completed).
        (which, rc) = c.block_one().map(|(i, rc)| (i as c_int, rc))?;
    } else {
        // Nothing completed (Testany's answer as it is), or no request active
        // (the general path's answer).
        *index = undefined();
        return (test && *flag == 0).then_some(Ok(()));
    }
    *index = which;
    Some(c.one_done(which as usize, rc, reqs, status))
}

/// `MPI_Waitsome` (`test`: false) when the host's `MPI_Testsome` completes some
/// request, and `MPI_Testsome` (`test`: true) unless no request is active.
pub(crate) fn some(count: c_int, reqs: *mut Sim_FT_MPI_Request, out: SomeOut, test: bool) -> Option<Outcome> {
    sized!(count, |c| some_in(&mut c, count, reqs, out, test))
}

#[inline(always)]
fn some_in<const N: usize>(c: &mut Calm<N>, count: c_int, reqs: *mut Sim_FT_MPI_Request, out: SomeOut, test: bool) -> Option<Outcome> {
    if !c.read(count, reqs) {
        return None;
    }
    let mut k: c_int = 0;
    let mut which = [0 as c_int; N];
    let n = c.n;
    let mut rc = transport::request::testsome(&mut c.reals[..n], &mut k, &mut which[..n], &mut c.sts[..n]);
    if k == 0 && !test {
        // A wait's second look (module docs).
        rc = transport::request::testsome(&mut c.reals[..n], &mut k, &mut which[..n], &mut c.sts[..n]);
    }
    if k == 0 && !test {
        // A wait that must block (None: news came first; nothing completed).
        let mut wsts = [zero_status(); N];
        let (got, brc) = c.block_some(&mut which, &mut wsts)?;
        c.sts[..got].copy_from_slice(&wsts[..got]);
        (k, rc) = (got as c_int, brc);
    }
    if k < 0 || k as usize > n {
        // No request active (the general path's answer).
        return None;
    }
    Some(c.some_done(k as usize, &which, rc, reqs, out))
}

/// The outcome of an array call whose requests ended with `codes` (`only`: the
/// indices it completed, if not all): `MPI_ERR_IN_STATUS` (or the one error when
/// the program ignores statuses), reported on the communicator of the first
/// failing request (`comm_of(i)`; None: a null request, reported on the world).
pub(crate) fn outcome(
    comm_of: impl Fn(usize) -> Option<Sim_FT_MPI_Comm>,
    codes: &[c_int],
    statuses: *mut MPI_Status,
    only: Option<&[usize]>,
) -> Outcome {
    let failed = |i: &usize| codes[*i] != 0 && codes[*i] != err::pending();
    let first = match only {
        Some(set) => set.iter().copied().find(failed),
        None => (0..codes.len()).find(failed),
    };
    let Some(i) = first else { return Ok(()) };
    if !user_status(statuses) {
        return request::fail_on_comm(comm_of(i), codes[i]);
    }
    let in_status = err::in_status();
    request::fail_on_comm(comm_of(i), in_status).map_err(|f| f.raising(codes[i]))
}

/// `MPI_UNDEFINED`.
pub(crate) fn undefined() -> c_int {
    transport::undefined()
}

/// Writes the outputs of `MPI_Waitsome` / `MPI_Testsome`: the requests `got`
/// completed, the k-th one's status `status_of(k)`.
pub(crate) fn some_out(
    status_of: impl Fn(usize) -> MPI_Status,
    got: &[usize],
    outcount: *mut c_int,
    indices: *mut c_int,
    statuses: *mut MPI_Status,
    none_active: bool,
) {
    // SAFETY: the program's outcount, checked non-null by some_args (MPI requires it valid for
    // writing).
    unsafe { *outcount = if none_active { undefined() } else { got.len() as c_int } };
    for (k, i) in got.iter().enumerate() {
        // SAFETY: k < got.len() <= incount, and `indices` is the program's array of
        // `incount` ints (checked non-null for incount > 0 by some_args).
        unsafe { *indices.add(k) = *i as c_int };
        if user_status(statuses) {
            // SAFETY: `statuses` is neither null nor MPI_STATUSES_IGNORE (user_status): the
            // program's array of `incount` statuses, and k < got.len() <= incount.
            unsafe { *statuses.add(k) = status_of(k) };
        }
    }
}
