//! The writer's side of the kept log entries (protocol::keep): which
//! collectives open and close entries, the copy into a keep slot before the ring
//! overwrites an open one, and the end of a blocking collective that may close
//! them. The reader's side is in engine::news::news ([`crate::engine::news::news::start_log_reads`]
//! reads the keep slots once a reader is more than the ring behind).

use crate::engine::colls::describe::{DUMMY, any_entry_describes};
use crate::engine::base::runtime::{with, Runtime};
use crate::engine::colls::describe::fcode as F;
use crate::protocol::keep::Kind;
use std::sync::atomic::{AtomicBool, Ordering};

/// Some entry is open (a copy of `Keep::any_open` that [`succeeded`] reads
/// without the runtime's lock: the failure-free end of a collective costs one
/// load).
static ANY_OPEN: AtomicBool = AtomicBool::new(false);

/// The kind protocol::keep tells apart, for a function code.
fn kind(f: u32) -> Kind {
    if f & DUMMY != 0 {
        // A catch-up's dummy: says only "I am in it"; closes nothing.
        return Kind::Other;
    }
    if !any_entry_describes(f) {
        return Kind::PerMember;
    }
    match f {
        F::BARRIER | F::ALLREDUCE | F::ALLGATHER | F::ALLGATHERV | F::ALLTOALL | F::REDUCE_SCATTER
        | F::REDUCE_SCATTER_BLOCK => Kind::AllMembers, // blocking forms only (no NB bit)
        _ => Kind::Other,
    }
}

/// Before the ring's slot for entry `stamp` is written: copies the entry there
/// into a keep slot if it is open. Only called while some entry is open.
pub fn before_write(rt: &mut Runtime, stamp: u64) {
    let Some(j) = rt.keep.before_write(stamp) else { return };
    let w = &rt.win;
    let (from, to, e) = (w.entry_at(stamp - 1), w.keep_slot(j), w.entry_words());
    // As the ring's writer does: the first word 0 while the rest changes, the
    // stamp last, so a reader takes the slot only whole (news::parse_entry).
    w.store(to, 0);
    for i in 1..e {
        w.store(to + i, w.load(from + i));
    }
    w.store(to, w.load(from));
}

/// Entry `stamp` (collective `seq` of communicator `id`, function code `f`) was
/// written. Failure-free and without a per-member collective so far: one load
/// and a few compares.
#[inline]
pub fn note(rt: &mut Runtime, stamp: u64, id: u64, seq: u64, f: u32, intra: bool) {
    if rt.keep.any_open() || !any_entry_describes(f) {
        rt.keep.note(stamp, id, seq, kind(f), intra);
        ANY_OPEN.store(rt.keep.any_open(), Ordering::Relaxed);
    }
}

/// The blocking collective on communicator `id` this process was in ended with
/// success (engine::entry::hooks::coll_leave): it may close open entries.
#[inline]
pub fn succeeded(id: u64) {
    if ANY_OPEN.load(Ordering::Relaxed) {
        with(|rt| {
            rt.keep.succeeded(id);
            ANY_OPEN.store(rt.keep.any_open(), Ordering::Relaxed);
        });
    }
}

/// Entry `stamp` was taken back: its collective is never entered.
pub fn cancelled(rt: &mut Runtime, stamp: u64) {
    if rt.keep.any_open() {
        rt.keep.cancelled(stamp);
        ANY_OPEN.store(rt.keep.any_open(), Ordering::Relaxed);
    }
}

/// Entries this process gave up because every keep slot held an open one.
pub fn evicted() -> u64 {
    with(|rt| rt.keep.evicted).unwrap_or(0)
}

/// `MPI_Finalize`: nothing is open any more.
pub fn clear() {
    ANY_OPEN.store(false, Ordering::Relaxed);
}
