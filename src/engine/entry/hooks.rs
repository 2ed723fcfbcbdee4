//! What runs around the real MPI call in every generated wrapper, by kind.
//!
//! Failure-free, a collective costs a few local stores (its log entry) and two
//! loads (the news counter, before and after); a point-to-point start costs one
//! load and a counter increment. No message is sent while nothing fails.
//!
//! Collectives are always entered for real, even when a member is known dead (the
//! dead rank joins, so no other survivor is stranded in the collective), and report
//! `MPI_ERR_PROC_FAILED` afterwards (GUIDE, "Measured facts"). On a revoked
//! communicator every non-local operation returns `MPI_ERR_REVOKED` without
//! entering (ULFM-SEMANTICS.md, Revoke).

use crate::engine::adversary::collectives;
use crate::engine::base::edges;
use crate::engine::base::errors;
use crate::engine::registry::comm_state;
use crate::engine::news::{kept, wake};
use crate::engine::base::runtime;
use crate::engine::base::errors::{Failure, Outcome, SIM_FT_ERR_PROC_FAILED, SIM_FT_ERR_REVOKED};
use crate::engine::base::handles::{CommRef, Sim_FT_MPI_Comm};
use crate::engine::colls::describe::{any_entry_describes, fcode, Desc};
use crate::engine::registry::req_state::{Kind, ReqState};
use crate::engine::{registry::args, registry::comm, news::logs, news::news, revoke::revoke};
use std::os::raw::c_int;

/// Before the real call (local and point-to-point kinds).
pub fn enter(kind: Kind, comm: &CommRef) -> Outcome {
    if kind == Kind::Local {
        return Ok(());
    }
    p2p_enter(comm.handle)
}

/// Point-to-point start: revoked communicators refuse. (The calm check is
/// inlined into every start; the rest is [`p2p_enter_news`].)
#[inline]
pub fn p2p_enter(h: Sim_FT_MPI_Comm) -> Outcome {
    if p2p_calm() {
        return Ok(());
    }
    p2p_enter_news(h)
}

/// No news unread and nothing known wrong: a point-to-point start goes ahead.
#[inline]
pub fn p2p_calm() -> bool {
    !news::pending() && comm::calm()
}

fn p2p_enter_news(h: Sim_FT_MPI_Comm) -> Outcome {
    news::refresh();
    if comm::calm() {
        return Ok(());
    }
    if comm::read(h, |c| c.revoked).unwrap_or(false) {
        return Err(Failure::on(h, SIM_FT_ERR_REVOKED));
    }
    Ok(())
}

/// The communicator of a started send (`MPI_Isend` & co.) with its checks, in the
/// order [`args::comm_arg`], [`errors::check_out_ptr`] of `request`, the start hook, then the
/// send counted ([`comm::count_send`]); returns the send's number. When nothing is
/// going on that is one registry lookup (which also counts), else those steps one
/// by one.
#[inline]
pub fn send_arg<T>(h: Sim_FT_MPI_Comm, dest: std::os::raw::c_int, request: *mut T) -> Result<(CommRef, u32), Failure> {
    if !request.is_null() && p2p_calm() {
        if let Some(found) = comm::lookup_send(h, dest) {
            return Ok(found);
        }
    }
    send_arg_checked(h, dest, request)
}

#[inline(never)]
fn send_arg_checked<T>(h: Sim_FT_MPI_Comm, dest: std::os::raw::c_int, request: *mut T) -> Result<(CommRef, u32), Failure> {
    let c = args::comm_arg(h)?;
    errors::check_out_ptr(request, &c)?;
    p2p_enter(h)?;
    Ok((c, comm::count_send(h, dest)))
}

/// After the real call, with its return code.
pub fn leave(_kind: Kind, comm: &CommRef, rc: c_int) -> Outcome {
    Failure::check(rc, comm.handle)
}

/// Before a collective (blocking or not, or a communicator constructor): refuse
/// on a revoked communicator, else log the descriptor (pending), then read the
/// news — in that order (the Dekker pair with a revoker; see transport::window) —
/// and mark the entry entered. Returns the collective's number.
///
/// The service at the call's entry (engine::progress::service) has already caught up on
/// other revoked communicators. If news arrives between the entry and here that
/// revokes this communicator, the entry is cancelled and the call refused; if it
/// revokes another one this rank owes joins on, the entry is cancelled, the joins
/// are made, and the entry written again: a member stuck in that other
/// communicator must not wait for this collective to end.
///
/// Failure-free, on a collective whose log entry no keep slot needs to see (any
/// member's entry describes it, engine::news::kept) and while no entry is kept open,
/// one load of the edges word and one bit of the function code choose the calm
/// path, which takes none of the checks below: with no trouble known there is no
/// fill-in to claim and no member to wake.
#[inline]
pub fn coll_enter(c: &CommRef, d: &Desc) -> Result<u64, Failure> {
    news::refresh();
    if edges::any(edges::ARMED | edges::TROUBLE | edges::KEPT) || !any_entry_describes(d.fcode) {
        return coll_enter_checked(c, d);
    }
    let Some(seq) = number(c, true) else {
        return coll_enter_checked(c, d);
    };
    news::log_collective_unkept(c.id, seq, d);
    let news_arrived = news::refresh();
    if !news_arrived && comm::calm() {
        news::mark_last();
        return Ok(seq);
    }
    coll_entered_news(c, d, seq, news_arrived)
}

/// [`coll_enter`] with every check: the state dump armed, trouble known, an entry
/// kept open, or a collective no other member's entry describes (an opaque one).
#[cold]
#[inline(never)]
fn coll_enter_checked(c: &CommRef, d: &Desc) -> Result<u64, Failure> {
    if edges::any(edges::ARMED) {
        // The state dump's arguments of a collective (the wrappers of
        // collectives give none: here, out of the wrapper, it costs less).
        crate::engine::base::observer::coll_entered(c.handle, d.root);
    }
    news::refresh();
    if d.fcode & !fcode::NB == fcode::OPAQUE {
        unjoinable_enter(c)?;
    }
    if crate::engine::dead::fillin::claim(c.handle) {
        // Joined already for this rank (a collective that can only fail).
        return Err(Failure::on(c.handle, SIM_FT_ERR_PROC_FAILED));
    }
    enter_loop(c, d)
}

/// Writes the entry, reads the news, and enters or refuses; after news that
/// takes the entry back for owed joins, makes them and writes it again.
fn enter_loop(c: &CommRef, d: &Desc) -> Result<u64, Failure> {
    loop {
        let Some(seq) = log_entry(c, d, true) else {
            return Err(refused(c));
        };
        if !news::refresh() {
            news::mark_last();
            if !comm::calm() {
                wake_members(c, seq);
            }
            return Ok(seq);
        }
        match entered_after_news(c, seq) {
            Some(entered) => return entered,
            None => revoke::catch_up_owed()?,
        }
    }
}

/// The calm path of [`coll_enter`] wrote entry `seq`, then learnt news
/// (`news_arrived`) or found trouble known (another thread's news): decides as
/// [`enter_loop`] does there.
#[cold]
#[inline(never)]
fn coll_entered_news(c: &CommRef, d: &Desc, seq: u64, news_arrived: bool) -> Result<u64, Failure> {
    if !news_arrived {
        news::mark_last();
        wake_members(c, seq);
        return Ok(seq);
    }
    match entered_after_news(c, seq) {
        Some(entered) => entered,
        None => {
            revoke::catch_up_owed()?;
            enter_loop(c, d)
        }
    }
}

/// News arrived between writing entry `seq` and reading the news (the Dekker
/// pair): a death (or news that changes nothing here) enters anyway, and the dead
/// rank joins (GUIDE, "Measured facts"); a revoke of `c` takes the entry back and
/// refuses; owed joins elsewhere take it back and return None (the caller makes
/// them, then writes the entry again).
fn entered_after_news(c: &CommRef, seq: u64) -> Option<Result<u64, Failure>> {
    let revoked = comm::read(c.handle, |s| s.revoked).unwrap_or(false);
    if !revoked && !comm_state::may_owe() {
        news::mark_last();
        wake_members(c, seq);
        return Some(Ok(seq));
    }
    news::retract_last();
    comm::update(c.handle, |s| s.seq -= 1);
    if revoked {
        return Some(Err(refused(c)));
    }
    None
}

/// Entering collective `seq` of `c`, which a dead member did not enter for real
/// (it can only fail): wakes the other live members, so that one waiting in MPI
/// for something else joins it for its part at once (engine::dead::fillin: a blocked
/// wait reads no logs until woken). One message per member, only on a
/// communicator with a known dead member.
fn wake_members(c: &CommRef, seq: u64) {
    // The member list is copied only for a communicator with a dead member (after
    // a revoke elsewhere every collective passes here).
    let Some(members) = comm::read(c.handle, |s| (s.has_failed() && !s.inter).then(|| s.members.clone())).flatten() else {
        return;
    };
    if logs::all_dead_entered_seq(c.handle, seq) {
        return;
    }
    let me = runtime::world_rank() as u32;
    for w in members.into_iter().filter(|w| *w != me && !runtime::is_dead(*w)) {
        wake::wake(w as usize);
    }
}

/// A collective refused because `c` is revoked: before returning
/// `MPI_ERR_REVOKED`, join (with dummy data) every collective on `c` that members
/// entered and this rank has not, up to the revoke horizon (engine::revoke::revoke).
fn refused(c: &CommRef) -> Failure {
    match revoke::catch_up(c) {
        Err(f) => f,
        Ok(()) => Failure::on(c.handle, SIM_FT_ERR_REVOKED),
    }
}

/// Numbers the next collective on `c` and logs its descriptor (pending: the
/// caller marks it entered or cancelled); returns the number. A revoked
/// communicator gets no number (None) when `refuse_revoked`.
pub fn log_entry(c: &CommRef, d: &Desc, refuse_revoked: bool) -> Option<u64> {
    let seq = number(c, refuse_revoked)?;
    news::log_collective(c.id, seq, d, !c.inter);
    Some(seq)
}

/// The next collective's number on `c` (none for a revoked `c` when
/// `refuse_revoked`).
#[inline]
fn number(c: &CommRef, refuse_revoked: bool) -> Option<u64> {
    let mut seq = None;
    comm::update(c.handle, |s| {
        if !(refuse_revoked && s.revoked) {
            s.seq += 1;
            seq = Some(s.seq);
        }
    });
    seq
}

/// After a blocking collective: the real error, else `MPI_ERR_PROC_FAILED` if a
/// member is known dead (its contribution may have been a dummy), else
/// `MPI_ERR_REVOKED` if the communicator was revoked meanwhile.
pub fn coll_leave(c: &CommRef, rc: c_int) -> Outcome {
    news::refresh();
    Failure::check(rc, c.handle)?;
    // Failure-free: one load for both (no news known, no log entry kept open).
    if !edges::any(edges::TROUBLE | edges::KEPT) {
        return Ok(());
    }
    coll_leave_checked(c)
}

/// [`coll_leave`] once trouble is known or an entry is kept open.
#[cold]
#[inline(never)]
fn coll_leave_checked(c: &CommRef) -> Outcome {
    if comm::calm() {
        kept::succeeded(c.id);
        return Ok(());
    }
    let (failed, revoked, seq) = comm::read(c.handle, |s| (s.has_failed(), s.revoked, s.seq)).unwrap_or((false, false, 0));
    // A member known dead fails the collective, unless every dead member had
    // entered this very collective for real before it died (its log says so): then
    // each part was real data and the collective had ended before the death, as
    // in ULFM, where an operation that completed before a failure succeeds (a
    // member that dies right after a barrier). A dead member that did not enter it
    // for real joined with dummy data: PROC_FAILED.
    if failed && !logs::all_dead_entered_seq(c.handle, seq) && (revoked || !collectives::tells_success(c.handle, seq)) {
        return Err(Failure::on(c.handle, SIM_FT_ERR_PROC_FAILED));
    }
    if revoked {
        return Err(Failure::on(c.handle, SIM_FT_ERR_REVOKED));
    }
    if edges::any(edges::KEPT) {
        kept::succeeded(c.id);
    }
    Ok(())
}

/// A blocking collective run as its non-blocking form (`MPIFT_COLLECTIVES=
/// nonblocking`): `rc` is the start's return code, `req` its real request,
/// `bufferless` whether it has no buffers (a barrier). Waits as `MPI_Wait` does on
/// the same non-blocking collective (engine::complete::complete: one with buffers until it
/// completes, also on a revoked communicator, so no buffer is written after the
/// call returned; a barrier only until the revoke is known), then reports as
/// [`coll_leave`].
pub fn coll_wait(c: &CommRef, rc: c_int, mut req: crate::transport::MPI_Request, bufferless: bool) -> Outcome {
    Failure::check(rc, c.handle)?;
    let seq = comm::read(c.handle, |s| s.seq).unwrap_or(0);
    let st = ReqState { buffers: !bufferless, seq, ..ReqState::started(c.handle, Kind::CollStart, -1, false) };
    let mut status = crate::transport::zero_status();
    let code = crate::engine::complete::complete::wait_one(&st, &mut req, &mut status, false);
    coll_leave(c, code)
}

/// Id of the next communicator created from `c` (counted at every member, in the
/// same order, so the same everywhere).
pub fn next_child_id(c: &CommRef) -> u64 {
    let mut id = 0;
    comm::update(c.handle, |s| {
        s.creations += 1;
        id = comm::child_id(s.id, s.creations);
    });
    id
}

/// After a communicator constructor: on failure or a dead member, the new real
/// communicator is freed and the error reported (ULFM: creation from a
/// communicator with a dead member fails).
pub fn comm_new_leave(c: &CommRef, rc: c_int, created: &mut [&mut crate::transport::MPI_Comm]) -> Outcome {
    let r = coll_leave(c, rc);
    if r.is_err() {
        for nc in created.iter_mut() {
            if **nc != crate::transport::comm_null() {
                crate::transport::comm::free(&mut **nc);
            }
        }
    }
    r
}

/// A communicator constructor with one new communicator, run by hand as the
/// generated `comm_new` wrappers run it (for a `custom` function that falls
/// back to the host's call, calls::spares): the descriptor (`describe`), the
/// entry, the real call (`call(real communicator, new real communicator)`), the
/// leave, and the new handle in `out` (null on failure).
pub fn comm_new_by_hand(
    c: Sim_FT_MPI_Comm,
    out: *mut Sim_FT_MPI_Comm,
    describe: impl FnOnce(&CommRef) -> Desc,
    call: impl FnOnce(crate::transport::MPI_Comm, &mut crate::transport::MPI_Comm) -> c_int,
) -> Outcome {
    let cr = crate::engine::registry::args::comm_arg(c)?;
    crate::engine::base::errors::check_out_ptr(out, &cr)?;
    let desc = describe(&cr);
    coll_enter(&cr, &desc)?;
    let child_id = next_child_id(&cr);
    let mut nc = crate::transport::comm_null();
    let rc = call(cr.real, &mut nc);
    if let Err(failure) = comm_new_leave(&cr, rc, &mut [&mut nc]) {
        // SAFETY: `out` was checked non-null above (check_out_ptr), and MPI
        // requires the program's out-handle to be valid for writing.
        unsafe { *out = std::ptr::null_mut() };
        return Err(failure);
    }
    // SAFETY: `out` is the program's out-handle, checked non-null above
    // (check_out_ptr); MPI requires it valid for writing.
    unsafe { *out = comm::adopt(nc, &cr, child_id) };
    Ok(())
}

/// Before an operation no dead rank can take part in (an opaque collective, a
/// window or file on the communicator, `MPI_Comm_create_group`): a revoked
/// communicator refuses, and so does one with a known failure, because the
/// operation could only block (ULFM: creating from a communicator with a failed
/// member fails). A member that does not know of the failure yet still enters and
/// can block there (docs/ARCHITECTURE.md, "Not simulated").
pub fn unjoinable_enter(c: &CommRef) -> Outcome {
    news::refresh();
    let (revoked, failed) = comm::read(c.handle, |s| (s.revoked, s.has_failed())).unwrap_or((false, false));
    if revoked {
        return Err(Failure::on(c.handle, SIM_FT_ERR_REVOKED));
    }
    if failed {
        return Err(Failure::on(c.handle, SIM_FT_ERR_PROC_FAILED));
    }
    Ok(())
}
