//! The panic boundary and the single error path: every exported function body
//! runs inside [`run`] (or [`run_any`] for the few calls valid outside
//! `MPI_Init`..`MPI_Finalize`). A Rust panic never crosses into C: it becomes
//! `MPI_ERR_INTERN`, reported like any other error.
//!
//! Every wrapped call passes here first, so this is also where the injection
//! layer sees each call: `Sim_FT_decide_kill` at the entry (the call may be where
//! the process dies), the error returned, and the time a recovery call took; and
//! where, once a failure or revoke is known, the process does its part for others
//! before the call itself (engine::progress::service).

use crate::engine::registry::owed;
use crate::engine::base::errors::{Failure, Outcome};
use crate::inject;
use crate::inject::dump::Args as DumpArgs;
use crate::calls::errhandler;
use crate::engine::base::edges;
use crate::engine::progress::service;
use crate::transport::err;
use std::os::raw::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs an MPI call that needs an initialised library. (Always inlined, with
/// [`guarded`]: the call's name is then a constant, and the checks on it fold.)
///
/// The name stays a value here: formatted in this inlined body, it lived in a
/// stack slot that every store to a global (the call counter) made LLVM read
/// again, and `is_recovery` was tested at run time on every call (13
/// instructions per `MPI_Waitall`); the notices are in out-of-line functions.
///
/// The entry reads one word (engine::base::edges): clear, the call is counted and its
/// body runs; else [`entry_marked`] looks at each flag.
#[inline(always)]
pub fn run(name: &'static str, f: impl FnOnce() -> Outcome) -> c_int {
    let recovery = inject::report::is_recovery(name);
    if recovery || edges::any(edges::ENTRY) {
        if let Err(code) = entry_marked(name) {
            return code;
        }
    } else {
        inject::count_call();
    }
    guarded(name, recovery, f)
}

/// The entry of a call when some flag of [`edges::ENTRY`] is set (or the call
/// is timed for the report): refused before `MPI_Init` or after `MPI_Finalize`
/// (Err: its code); else counted (`decide_kill`: the call may be where the
/// process dies) and, if something went wrong somewhere, the service first
/// (Ok(true): news, revokes, agreements and catch-up joins, engine::progress::service).
#[inline(never)]
fn entry_marked(name: &'static str) -> Result<bool, c_int> {
    entry_decide(name)?;
    entry_service()
}

/// [`entry_marked`] for [`run_lane`], with the call's arguments for the state
/// dump when tracing ([`dump_args`]), after the kill decision and before the
/// service (which may wait). [`run`]'s calls give theirs at the start of their
/// body ([`note_args`]). Inlined into the lane's wrapper, with its two parts
/// out of line: the calm lane's calls then cost what they did before the dump.
#[inline(always)]
fn entry_marked_args(name: &'static str, args: impl FnOnce() -> DumpArgs) -> Result<bool, c_int> {
    entry_decide(name)?;
    if inject::trace::on() {
        dump_args(args);
    }
    entry_service()
}

/// [`entry_marked`]'s first part: refused when inactive, else counted and the
/// kill decided.
#[inline(never)]
fn entry_decide(name: &'static str) -> Result<(), c_int> {
    if !crate::engine::base::process::is_active() {
        return Err(not_active(name));
    }
    inject::decide_kill(name);
    Ok(())
}

/// The call's arguments for the state dump, at the start of a wrapper's body
/// run by [`run`] (generated: codegen's `dump_args`). One load of the edges
/// word on the fast path: passing them to `run` instead cost the collectives
/// and waits 15-50 instructions a call (bench/callgrind.sh), as the wrapper
/// kept more registers alive across the entry.
#[inline(always)]
pub fn note_args(args: impl FnOnce() -> DumpArgs) {
    if edges::any(edges::ARMED) && inject::trace::on() {
        dump_args(args);
    }
}

/// Hands the call's arguments to the state dump: out of line and cold, so the
/// wrapper's fast path never builds them.
#[cold]
#[inline(never)]
fn dump_args(args: impl FnOnce() -> DumpArgs) {
    inject::dump::args(args());
}

/// [`entry_marked`]'s last part: the service, if something went wrong somewhere.
#[inline(never)]
fn entry_service() -> Result<bool, c_int> {
    if !service::needed() {
        return Ok(false);
    }
    let _ = service::run();
    owed::end_receives_owed();
    Ok(true)
}

/// A call before `MPI_Init` or after `MPI_Finalize`: counted, reported, refused.
#[cold]
#[inline(never)]
fn not_active(name: &'static str) -> c_int {
    inject::count_call();
    crate::say!("MPIFT: {name} called before MPI_Init or after MPI_Finalize");
    err::other()
}

/// [`run`] with the calm lane (engine::entry::lane) first: once the call is counted and
/// no service is due, `lane` may make the whole call (Some: its outcome, which
/// takes the same way out as [`run`]'s); None, and `f`, the general body, runs.
#[inline(always)]
pub fn run_lane(name: &'static str, args: impl FnOnce() -> DumpArgs, lane: impl FnOnce() -> Option<Outcome>, f: impl FnOnce() -> Outcome) -> c_int {
    if inject::report::is_recovery(name) {
        return run(name, f);
    }
    if edges::any(edges::ENTRY) {
        match entry_marked_args(name, args) {
            Err(code) => return code,
            // (`false` below: a recovery call went to `run` at the top.)
            Ok(true) => return guarded(name, false, f),
            Ok(false) => {}
        }
    } else {
        inject::count_call();
    }
    match catch_unwind(AssertUnwindSafe(lane)) {
        Ok(Some(Ok(()))) => {
            call_end();
            0
        }
        Ok(None) => guarded(name, false, f),
        Ok(Some(Err(failure))) => handled(name, || Err(failure)),
        Err(_) => lane_panicked(name),
    }
}

/// A lane panicked: reported, and `MPI_ERR_INTERN` through the error handler.
#[cold]
#[inline(never)]
fn lane_panicked(name: &'static str) -> c_int {
    crate::say!("MPIFT: internal error in {name}");
    handled(name, || Err(Failure::on_world(err::intern())))
}

/// Runs an MPI call that is valid outside `MPI_Init`..`MPI_Finalize` too.
pub fn run_any(name: &'static str, f: impl FnOnce() -> Outcome) -> c_int {
    let recovery = inject::report::is_recovery(name);
    if crate::engine::base::process::is_active() {
        inject::decide_kill(name);
    } else {
        inject::count_call();
    }
    guarded(name, recovery, f)
}

/// The body of every call; errors go through the communicator's error handler.
/// `recovery`: [`inject::report::is_recovery`] of `name` (timed for the report).
#[inline(always)]
fn guarded(name: &'static str, recovery: bool, f: impl FnOnce() -> Outcome) -> c_int {
    if recovery {
        let started = std::time::Instant::now();
        let code = handled(name, f);
        inject::report::recovery(name, started, code);
        return code;
    }
    handled(name, f)
}

fn handled(name: &'static str, f: impl FnOnce() -> Outcome) -> c_int {
    let code = handled_inner(name, f);
    call_end();
    code
}

/// The end of every call: one load while no flag of [`edges::EXIT`] is set.
#[inline(always)]
fn call_end() {
    if edges::any(edges::EXIT) {
        exit_marked();
    }
}

/// [`call_end`] with some flag set: communicators freed during the call are
/// released, receives of communicators revoked during it end, the trace sees it.
#[inline(never)]
fn exit_marked() {
    crate::calls::comm_free::release_deferred();
    owed::end_receives_owed();
    if inject::armed() {
        inject::trace::exit();
    }
}

fn handled_inner(name: &'static str, f: impl FnOnce() -> Outcome) -> c_int {
    let failure = match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => return 0,
        Ok(Err(failure)) => failure,
        Err(panic) => {
            let msg = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            crate::say!("MPIFT: internal error in {name}: {msg}");
            Failure::on_world(err::intern())
        }
    };
    inject::report::error(name, failure.code);
    match catch_unwind(AssertUnwindSafe(|| errhandler::raise(name, failure))) {
        Ok(code) => code,
        Err(_) => failure.code,
    }
}

/// Runs an MPI call whose real return code is passed on as is (calls on files
/// and windows, whose errors the real MPI already reported through that object's
/// own error handler). MPIFT's own errors still go through [`run`].
pub fn run_raw(name: &'static str, f: impl FnOnce() -> Result<c_int, Failure>) -> c_int {
    let mut raw = 0;
    let code = run(name, || {
        raw = f()?;
        Ok(())
    });
    if code == 0 {
        raw
    } else {
        code
    }
}

/// What a value-returning call gives back when it panicked.
pub trait Fallback {
    fn fallback() -> Self;
}
impl Fallback for c_int {
    fn fallback() -> c_int {
        -1
    }
}
impl<T> Fallback for *mut T {
    fn fallback() -> *mut T {
        std::ptr::null_mut()
    }
}

/// Runs one of the few MPI functions that return a value instead of an error code
/// (the handle conversions `MPI_Comm_c2f` & co.): no error handler is involved,
/// a panic gives the fallback (a null handle).
pub fn value<T: Fallback>(name: &'static str, f: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|_| {
        crate::say!("MPIFT: internal error in {name}");
        T::fallback()
    })
}
