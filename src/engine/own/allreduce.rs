//! `MPI_Allreduce` of small messages as MPIFT's own recursive-doubling allreduce
//! (protocol::recdbl), so that a member waiting in it keeps serving (agreements,
//! revoke jobs, joins for others) and returns `MPI_ERR_REVOKED` by itself once its
//! communicator is revoked, whatever the other members are doing (issue 19; the
//! barrier's reasons, engine::own::barrier). Inside the host MPI's blocking allreduce a
//! member advances nothing: `examples/ulfm/iagree_wait_coll` hung there.
//!
//! Runs where the host's result cannot differ from ours but in floating-point
//! rounding order: predefined datatype, predefined reduction operation valid for
//! it, data of at most [`MAX_BYTES`], intracommunicator, the default mode
//! (`MPIFT_COLLECTIVES=blocking`), where `MPIFT_ALLREDUCE` (rank 0's, shared at
//! `MPI_Init`) is `own`, or by default on MPICH ([`default_own`]). The decision reads only the collective's log entry, so
//! a dead rank or a fill-in joining for a member decides the same way
//! (engine::join::join). Everything else runs the host's `MPI_Allreduce`.
//!
//! Messages: the stamp, then the partial result, on MPIFT's shadow communicator
//! (tag [`TAG_ALLREDUCE`], engine::own::channel). Every member gets the operands in
//! member order, so the result is bitwise the same at every member, also for
//! floating point (the host's own algorithms give no such promise either).
//!
//! The program's entry point is engine::entry::own_calls::allreduce; this file holds the
//! algorithm and the dead ranks' joins.

use crate::engine::base::settings;
use crate::engine::base::runtime;
use crate::engine::base::handles::CommRef;
use crate::engine::own::barrier::Ended;
use crate::engine::own::channel::{revoked_id, Channel, Waiter, HEAD};
use crate::engine::colls::describe::{self, fcode, Desc, TY_BYTES};
use crate::engine::registry::comm;
use crate::protocol::dissem::Stamp;
use crate::protocol::recdbl::{Plan, Step};
use crate::transport::serial::Serial;
use crate::transport::{self, MPI_Datatype, MPI_Op};
use std::os::raw::{c_int, c_void};
use std::sync::atomic::{AtomicU8, Ordering};

/// The shadow communicator's tag for allreduce messages (engine::own::barrier's is 2).
pub const TAG_ALLREDUCE: c_int = 3;

/// The most data an own allreduce carries, in bytes (512 ints): below the eager
/// limits of both MPIs' shared-memory and TCP transports, so a send completes
/// without waiting for its receiver, and where the host's algorithms for large
/// messages (pipelined, reduce-scatter based) are not yet better.
pub const MAX_BYTES: usize = 2048;

static CHANNEL: Channel = Channel::new(TAG_ALLREDUCE);

/// The allreduce's channel (engine::join::standin runs a dead rank's parts on it).
pub fn channel() -> &'static Channel {
    &CHANNEL
}


/// Without `MPIFT_ALLREDUCE`: own where it measured no slower than the host's
/// blocking allreduce for small messages (MPICH 4.0: 0.85-1.1 at 2 ranks), the
/// host's on Open MPI, where a tiny one costs 1.3-1.9x the host's at 2 ranks
/// (bench/README.md); one answer for the whole job (one host MPI).
pub fn default_own() -> bool {
    transport::host_is_mpich()
}

/// Whether each predefined (type, operation) pair is valid for a reduction: 0
/// not asked yet, 1 valid, 2 not (the host's `MPI_Allreduce` then reports it).
const TYPES: usize = 64;
const OPS: usize = 12; // MPI_MAX .. MPI_MINLOC (MPI_REPLACE, MPI_NO_OP: RMA only)
static VALID: [AtomicU8; TYPES * OPS] = [const { AtomicU8::new(0) }; TYPES * OPS];

/// Asks the host once whether `op` applies to `ty` (one element of zeros).
fn valid(ty: u32, op: u32) -> bool {
    let (t, o) = (ty as usize, op as usize);
    if t >= TYPES || o >= OPS {
        return false;
    }
    let cell = &VALID[t * OPS + o];
    match cell.load(Ordering::Relaxed) {
        1 => true,
        2 => false,
        _ => {
            let (Some(mpi_op), (dt, _)) = (describe::predef_op(op), describe::type_for(ty)) else {
                return false;
            };
            let (mut a, mut b) = ([0u64; 8], [0u64; 8]);
            // SAFETY: two distinct 64-byte buffers, more than one element of any
            // predefined type takes.
            let rc = unsafe {
                transport::coll::reduce_local(a.as_mut_ptr() as *const c_void, b.as_mut_ptr() as *mut c_void, 1, dt, mpi_op)
            };
            cell.store(if rc == 0 { 1 } else { 2 }, Ordering::Relaxed);
            rc == 0
        }
    }
}

/// Extent in bytes of each predefined type (0: not asked yet).
static EXTENT: [std::sync::atomic::AtomicUsize; TYPES] = [const { std::sync::atomic::AtomicUsize::new(0) }; TYPES];

/// Bytes of `count` elements of predefined type `ty` (its extent asked once).
fn bytes_of(count: i32, ty: u32) -> usize {
    let cell = &EXTENT[ty as usize % TYPES];
    let mut e = cell.load(Ordering::Relaxed);
    if e == 0 {
        e = describe::bytes_for(1, ty).max(1);
        cell.store(e, Ordering::Relaxed);
    }
    count.max(0) as usize * e
}

/// The bytes of data if allreduce `d` runs as MPIFT's own, else None. The same
/// answer at every member and at every joiner: it reads only the log entry.
pub fn eligible(d: &Desc) -> Option<usize> {
    if !settings::own_allreduce() || d.fcode != fcode::ALLREDUCE || d.send.ty & TY_BYTES != 0 || d.send.count < 0 {
        return None;
    }
    if !valid(d.send.ty, d.op) {
        return None;
    }
    let bytes = bytes_of(d.send.count, d.send.ty);
    (bytes <= MAX_BYTES).then_some(bytes)
}

/// A receive buffer: the longest message the channel carries, aligned for any
/// predefined type after the stamp.
#[repr(C, align(16))]
struct Buf([u8; HEAD + MAX_BYTES]);

/// Receive buffers kept between calls (one per nesting level: a join can run
/// inside a member's wait): no 2 KiB to clear per call.
static POOL: Serial<Vec<Box<Buf>>> = Serial::new(Vec::new());

/// The reduction a member applies; a joiner applies none (its result is thrown
/// away: the collective fails at the live members, engine::entry::hooks::coll_leave).
struct Reduction {
    count: c_int,
    dt: MPI_Datatype,
    op: MPI_Op,
}

/// Combines the partial result `body` that came from a peer into `acc`, in member
/// order. The host's return code (a valid pair was checked beforehand).
fn combine(red: &Reduction, acc: &mut [u8], body: &mut [u8], peer_first: bool) -> c_int {
    if peer_first {
        // SAFETY: both buffers hold `count` elements of `dt` (the same log entry
        // sized both, and the caller checked their lengths are equal), and they
        // do not overlap (the accumulator and the receive buffer).
        unsafe { transport::coll::reduce_local(body.as_ptr() as *const c_void, acc.as_mut_ptr() as *mut c_void, red.count, red.dt, red.op) }
    } else {
        // SAFETY: as in the other branch with the roles swapped: `count`
        // elements of `dt` in each of two distinct buffers.
        let rc = unsafe { transport::coll::reduce_local(acc.as_ptr() as *const c_void, body.as_mut_ptr() as *mut c_void, red.count, red.dt, red.op) };
        acc.copy_from_slice(body);
        rc
    }
}

/// Runs allreduce `seq` of communicator `id` as member `me` of `n` over `acc`
/// (this member's data in, the result out), where `world(r)` is member r's world
/// rank. The first error a reduction returned, if any (the protocol goes on, so
/// the others do not wait for this member).
fn run(id: u64, seq: u64, me: usize, n: usize, world: &dyn Fn(usize) -> u32, how: Waiter, acc: &mut [u8], red: Option<&Reduction>) -> (Ended, c_int) {
    let want = Stamp { id, seq };
    let mut buf = POOL.lock().pop().unwrap_or_else(|| Box::new(Buf([0; HEAD + MAX_BYTES])));
    let mut rc = 0;
    let mut ended = Ended::Done;
    for step in Plan::new(me, n).steps() {
        let (send_to, recv_from) = match step {
            Step::HandOff { to } => (Some(to), Some(to)),
            Step::TakeIn { from } => (None, Some(from)),
            Step::Exchange { peer, .. } => (Some(peer), Some(peer)),
            Step::GiveBack { to } => (Some(to), None),
        };
        // One partner per step (protocol::recdbl): its world rank is read once.
        let peer = world(send_to.or(recv_from).unwrap_or(0));
        let Some(len) = CHANNEL.step(want, acc, send_to.map(|_| peer), recv_from.map(|_| peer), &mut buf.0, acc.len(), how) else {
            CHANNEL.purge();
            ended = Ended::Revoked;
            break;
        };
        if recv_from.is_none() {
            continue;
        }
        let body = &mut buf.0[HEAD..HEAD + len.min(acc.len())];
        if body.len() != acc.len() {
            // A member with another count (an erroneous program): nothing to
            // combine with.
            continue;
        }
        match (step, red) {
            (Step::HandOff { .. }, _) => acc.copy_from_slice(body),
            (Step::TakeIn { .. }, Some(r)) => rc = rc_or(rc, combine(r, acc, body, true)),
            (Step::Exchange { peer_first, .. }, Some(r)) => rc = rc_or(rc, combine(r, acc, body, peer_first)),
            _ => {}
        }
    }
    POOL.lock().push(buf);
    (ended, rc)
}

fn rc_or(first: c_int, next: c_int) -> c_int {
    if first != 0 {
        first
    } else {
        next
    }
}

/// A dead rank's, a fill-in's or a catch-up's part in allreduce `seq` of `id`,
/// described by log entry `d` ([`eligible`]).
pub fn join(id: u64, seq: u64, me: usize, members: &[u32], d: &Desc) {
    let Some(bytes) = eligible(d) else { return };
    if revoked_id(id) {
        // Its members leave by themselves (a catch-up owes nothing here).
        return;
    }
    let mut acc = vec![0u8; bytes];
    let _ = run(id, seq, me, members.len(), &|r| members[r], Waiter::Join, &mut acc, None);
}

/// A live member's part in `MPI_Allreduce` `seq` of `c`, described by `d`, after
/// the entry hook (engine::entry::own_calls::allreduce): None if it is not MPIFT's own
/// ([`eligible`]), then the host's runs; else how it ended and its first error.
#[allow(clippy::too_many_arguments)]
pub fn own_allreduce(
    c: &CommRef,
    d: &Desc,
    seq: u64,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
) -> Option<(Ended, c_int)> {
    let bytes = eligible(d)?;
    if c.inter || c.foreign {
        return None;
    }
    let acc: &mut [u8] = if bytes == 0 || recvbuf.is_null() {
        &mut []
    } else {
        if sendbuf != transport::in_place() as *const c_void && !sendbuf.is_null() {
            // SAFETY: MPI requires both buffers to hold `count` elements and not
            // to overlap; `bytes` is count times the extent of a predefined type.
            unsafe { std::ptr::copy_nonoverlapping(sendbuf as *const u8, recvbuf as *mut u8, bytes) };
        }
        // SAFETY: `recvbuf` is not null and MPI requires it to hold `count`
        // elements of the predefined type, `bytes` bytes; the program does not
        // touch it during the call, so this is the only reference to it.
        unsafe { std::slice::from_raw_parts_mut(recvbuf as *mut u8, bytes) }
    };
    let red = Reduction { count, dt: datatype, op };
    let h = c.handle;
    // Members' world ranks are read per step: no copy of the list on the failure-free path.
    let world = |r: usize| comm::read(h, |s| s.members[r]).unwrap_or(0);
    if settings::debug() {
        crate::say!("MPIFT allreduce {}: comm {:x} #{} enters", runtime::world_rank(), c.id, seq);
    }
    Some(run(c.id, seq, c.rank as usize, c.size as usize, &world, Waiter::Program(h), acc, Some(&red)))
}
