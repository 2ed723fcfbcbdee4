//! The writer's side of the kept log entries (protocol::keep): which
//! collectives open and close entries, the copy into a keep slot before the ring
//! overwrites an open one, and the end of a blocking collective that may close
//! them. The reader's side is in engine::news::news ([`crate::engine::news::news::start_log_reads`]
//! reads the keep slots once a reader is more than the ring behind).

use crate::engine::base::edges;
use crate::engine::base::runtime::{with, Runtime};
use crate::engine::colls::describe::{any_entry_describes, fcode as F, DUMMY};
use crate::protocol::keep::Kind;

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

/// Entry `stamp` (collective `seq` of communicator `id`, function code `f`) is
/// about to be written, while some entry is open ([`edges::KEPT`]) or by a
/// collective that opens one (engine::news::news tests both first).
pub fn on_write(rt: &mut Runtime, stamp: u64, id: u64, seq: u64, f: u32, intra: bool) {
    before_write(rt, stamp);
    rt.keep.note(stamp, id, seq, kind(f), intra);
    edges::set(edges::KEPT, rt.keep.any_open());
}

/// Before the ring's slot for entry `stamp` is written: copies the entry there
/// into a keep slot if it is open.
fn before_write(rt: &mut Runtime, stamp: u64) {
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

/// The blocking collective on communicator `id` this process was in ended with
/// success (engine::entry::hooks::coll_leave, which tests [`edges::KEPT`] with
/// its other bits first): it may close open entries.
#[cold]
#[inline(never)]
pub fn succeeded(id: u64) {
    with(|rt| {
        rt.keep.succeeded(id);
        edges::set(edges::KEPT, rt.keep.any_open());
    });
}

/// Entry `stamp` was taken back: its collective is never entered.
pub fn cancelled(rt: &mut Runtime, stamp: u64) {
    if rt.keep.any_open() {
        rt.keep.cancelled(stamp);
        edges::set(edges::KEPT, rt.keep.any_open());
    }
}
