//! Collective descriptors: what a rank is about to do, in a form another process
//! can act on without the caller's handles (GUIDE: "before each blocking call, a
//! rank writes a small descriptor of what it is about to do").
//!
//! Every collective entry (blocking or not) writes one into the caller's log in
//! the public window ([`crate::engine::news::news::log_collective`]). A simulated-dead
//! rank, or a live rank catching up on a revoked communicator, reads them and joins
//! the same collective with dummy data ([`crate::engine::join::join`]), so no survivor
//! is ever left inside a real collective that a dead rank would have to complete.
//!
//! Datatypes are named by their index among the predefined types (the same in every
//! process of a job); a derived type is described by its size in bytes, and a dead
//! rank uses that many `MPI_BYTE`s. Predefined reduction ops are named by index; a
//! user op by its commutativity only (a dead rank's contribution never reaches a
//! result that is reported as a success, so only the algorithm choice must match).
#![allow(non_snake_case)]

use crate::engine::base::handles::CommRef;
use crate::transport::{self, MPI_Aint, MPI_Datatype, MPI_Group, MPI_Info, MPI_Op};
use std::os::raw::c_int;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Which collective (`NB` marks the non-blocking twin).
pub mod fcode {
    pub const BARRIER: u32 = 1;
    pub const BCAST: u32 = 2;
    pub const REDUCE: u32 = 3;
    pub const ALLREDUCE: u32 = 4;
    pub const GATHER: u32 = 5;
    pub const GATHERV: u32 = 6;
    pub const SCATTER: u32 = 7;
    pub const SCATTERV: u32 = 8;
    pub const ALLGATHER: u32 = 9;
    pub const ALLGATHERV: u32 = 10;
    pub const ALLTOALL: u32 = 11;
    pub const ALLTOALLV: u32 = 12;
    pub const ALLTOALLW: u32 = 13;
    pub const REDUCE_SCATTER: u32 = 14;
    pub const REDUCE_SCATTER_BLOCK: u32 = 15;
    pub const SCAN: u32 = 16;
    pub const EXSCAN: u32 = 17;
    pub const COMM_DUP: u32 = 40;
    pub const COMM_SPLIT: u32 = 41;
    pub const COMM_SPLIT_TYPE: u32 = 42;
    pub const COMM_CREATE: u32 = 43;
    pub const CART_CREATE: u32 = 44;
    pub const CART_SUB: u32 = 45;
    /// A communicator constructor a dead rank cannot join (documented limitation).
    pub const OPAQUE: u32 = 60;
    pub const NB: u32 = 0x100;
    // Neighborhood collectives and the constructors with joins in engine::join::topo and
    // calls::comm_ctor.
    pub const NEIGHBOR_ALLGATHER: u32 = 20;
    pub const NEIGHBOR_ALLGATHERV: u32 = 21;
    pub const NEIGHBOR_ALLTOALL: u32 = 22;
    pub const NEIGHBOR_ALLTOALLV: u32 = 23;
    pub const NEIGHBOR_ALLTOALLW: u32 = 24;
    pub const COMM_IDUP: u32 = 46;
    pub const INTERCOMM_CREATE: u32 = 47;
    pub const GRAPH_CREATE: u32 = 48;
    pub const DIST_GRAPH_CREATE: u32 = 49;
    pub const DIST_GRAPH_CREATE_ADJACENT: u32 = 50;
    /// `MPI_Intercomm_merge` on an intercommunicator within the job: `extra[0]`
    /// is the caller's `high` (describe::MPI_Intercomm_merge).
    pub const INTERCOMM_MERGE: u32 = 51;
    /// Not logged: the communicator a shrink makes (`MPI_Comm_create_group`), as
    /// a dead rank's status names the blocking step it waits a turn for.
    pub const SHRINK_CREATE: u32 = 52;
}

/// The MPI name of a collective's function code (status lines and reports);
/// the non-blocking twins as `MPI_I...`, a dummy entry's mark ignored.
pub fn fname(f: u32) -> &'static str {
    use fcode::*;
    const NAMES: [(u32, &str, &str); 32] = [
        (BARRIER, "MPI_Barrier", "MPI_Ibarrier"), (BCAST, "MPI_Bcast", "MPI_Ibcast"), (REDUCE, "MPI_Reduce", "MPI_Ireduce"),
        (ALLREDUCE, "MPI_Allreduce", "MPI_Iallreduce"), (GATHER, "MPI_Gather", "MPI_Igather"), (GATHERV, "MPI_Gatherv", "MPI_Igatherv"),
        (SCATTER, "MPI_Scatter", "MPI_Iscatter"), (SCATTERV, "MPI_Scatterv", "MPI_Iscatterv"), (ALLGATHER, "MPI_Allgather", "MPI_Iallgather"),
        (ALLGATHERV, "MPI_Allgatherv", "MPI_Iallgatherv"), (ALLTOALL, "MPI_Alltoall", "MPI_Ialltoall"), (ALLTOALLV, "MPI_Alltoallv", "MPI_Ialltoallv"),
        (ALLTOALLW, "MPI_Alltoallw", "MPI_Ialltoallw"), (REDUCE_SCATTER, "MPI_Reduce_scatter", "MPI_Ireduce_scatter"),
        (REDUCE_SCATTER_BLOCK, "MPI_Reduce_scatter_block", "MPI_Ireduce_scatter_block"), (SCAN, "MPI_Scan", "MPI_Iscan"), (EXSCAN, "MPI_Exscan", "MPI_Iexscan"),
        (NEIGHBOR_ALLGATHER, "MPI_Neighbor_allgather", "MPI_Ineighbor_allgather"), (NEIGHBOR_ALLGATHERV, "MPI_Neighbor_allgatherv", "MPI_Ineighbor_allgatherv"),
        (NEIGHBOR_ALLTOALL, "MPI_Neighbor_alltoall", "MPI_Ineighbor_alltoall"), (NEIGHBOR_ALLTOALLV, "MPI_Neighbor_alltoallv", "MPI_Ineighbor_alltoallv"),
        (NEIGHBOR_ALLTOALLW, "MPI_Neighbor_alltoallw", "MPI_Ineighbor_alltoallw"), (COMM_DUP, "MPI_Comm_dup", "MPI_Comm_dup"),
        (COMM_SPLIT, "MPI_Comm_split", "MPI_Comm_split"), (COMM_SPLIT_TYPE, "MPI_Comm_split_type", "MPI_Comm_split_type"),
        (COMM_CREATE, "MPI_Comm_create", "MPI_Comm_create"), (CART_CREATE, "MPI_Cart_create", "MPI_Cart_create"), (CART_SUB, "MPI_Cart_sub", "MPI_Cart_sub"),
        (COMM_IDUP, "MPI_Comm_idup", "MPI_Comm_idup"), (INTERCOMM_CREATE, "MPI_Intercomm_create", "MPI_Intercomm_create"),
        (INTERCOMM_MERGE, "MPI_Intercomm_merge", "MPI_Intercomm_merge"), (SHRINK_CREATE, "MPIX_Comm_shrink", "MPIX_Comm_ishrink"),
    ];
    // The codes are below NB; the marks above it (NB, a dummy entry's) go.
    let base = f & (NB - 1);
    NAMES.iter().find(|e| e.0 == base).map_or("a collective", |e| if f & NB != 0 { e.2 } else { e.1 })
}

/// A count with a datatype code.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Spec {
    pub count: i32,
    pub ty: u32,
}

impl Spec {
    pub fn pack(self) -> u64 {
        (self.count as u32 as u64) | ((self.ty as u64) << 32)
    }
    pub fn unpack(w: u64) -> Spec {
        Spec { count: w as u32 as i32, ty: (w >> 32) as u32 }
    }
}

/// What one rank is about to do in one collective.
#[derive(Clone, Debug, Default)]
pub struct Desc {
    pub fcode: u32,
    pub root: i32,
    pub send: Spec,
    pub recv: Spec,
    pub op: u32,
    /// Function-specific words (split color/key, cart ndims/reorder, ...).
    pub extra: [u64; 4],
    /// Per-peer (send, recv) counts for the v/w variants, or other per-rank lists.
    pub peers: Vec<u64>,
    /// Per-peer (send, recv) type codes for the w variant.
    pub peer_types: Vec<u64>,
}

/// Derived types: high bit set, low bits the size in bytes.
pub const TY_BYTES: u32 = 0x8000_0000;
/// Ops: user-defined (commutative or not).
pub const OP_USER_COMMUTE: u32 = 0x1000;
pub const OP_USER_NONCOMMUTE: u32 = 0x1001;
pub const OP_NONE: u32 = 0xffff;

extern "C" {
    static MPIFT_PREDEF_TYPES: [MPI_Datatype; 0];
    static MPIFT_PREDEF_TYPES_N: c_int;
    static MPIFT_PREDEF_OPS: [MPI_Op; 0];
    static MPIFT_PREDEF_OPS_N: c_int;
}

fn predef_types() -> &'static [MPI_Datatype] {
    // SAFETY: the C shim defines MPIFT_PREDEF_TYPES as an immutable array of
    // MPIFT_PREDEF_TYPES_N handles, initialised before any Rust code runs.
    unsafe { std::slice::from_raw_parts(MPIFT_PREDEF_TYPES.as_ptr(), MPIFT_PREDEF_TYPES_N as usize) }
}
fn predef_ops() -> &'static [MPI_Op] {
    // SAFETY: the C shim defines MPIFT_PREDEF_OPS as an immutable array of
    // MPIFT_PREDEF_OPS_N handles, initialised before any Rust code runs.
    unsafe { std::slice::from_raw_parts(MPIFT_PREDEF_OPS.as_ptr(), MPIFT_PREDEF_OPS_N as usize) }
}

/// The index in `table` of `h`, trying first the index found last (`last`): a
/// program's collectives mostly repeat one type and one operation, and the scan
/// of the 38 predefined types cost up to 40 instructions per collective (issue
/// 36). The guess is checked against the immutable table, so a stale or raced
/// `last` only costs the scan.
#[inline(always)]
fn predef_index<T: PartialEq + Copy>(table: &[T], h: T, last: &AtomicUsize) -> Option<usize> {
    let guess = last.load(Ordering::Relaxed);
    if table.get(guess) == Some(&h) {
        return Some(guess);
    }
    let i = table.iter().position(|t| *t == h)?;
    last.store(i, Ordering::Relaxed);
    Some(i)
}

static LAST_TYPE: AtomicUsize = AtomicUsize::new(0);
static LAST_OP: AtomicUsize = AtomicUsize::new(0);

pub fn type_code(dt: MPI_Datatype) -> u32 {
    if let Some(i) = predef_index(predef_types(), dt, &LAST_TYPE) {
        return i as u32;
    }
    let mut size: c_int = 0;
    transport::env::type_size(dt, &mut size);
    TY_BYTES | (size.max(0) as u32 & 0x7fff_ffff)
}

/// The datatype and count multiplier a dummy participant uses for a type code.
pub fn type_for(code: u32) -> (MPI_Datatype, i32) {
    if code & TY_BYTES != 0 {
        (transport::dt_byte(), (code & 0x7fff_ffff) as i32)
    } else {
        (predef_types().get(code as usize).copied().unwrap_or_else(transport::dt_byte), 1)
    }
}

/// Bytes a dummy buffer needs for `count` elements of a type code (extent, not size,
/// so pair types with padding fit).
pub fn bytes_for(count: i32, code: u32) -> usize {
    let (dt, mult) = type_for(code);
    let (mut lb, mut extent) = (0 as MPI_Aint, 0 as MPI_Aint);
    transport::env::type_get_extent(dt, &mut lb, &mut extent);
    (count.max(0) as usize) * (mult.max(0) as usize) * (extent.max(1) as usize)
}

pub fn op_code(op: MPI_Op) -> u32 {
    if let Some(i) = predef_index(predef_ops(), op, &LAST_OP) {
        return i as u32;
    }
    let mut commute: c_int = 1;
    transport::coll::op_commutative(op, &mut commute);
    if commute != 0 {
        OP_USER_COMMUTE
    } else {
        OP_USER_NONCOMMUTE
    }
}

pub fn predef_op(code: u32) -> Option<MPI_Op> {
    predef_ops().get(code as usize).copied()
}

fn spec(count: c_int, dt: MPI_Datatype) -> Spec {
    Spec { count, ty: type_code(dt) }
}

fn counts(p: *const c_int, n: i32) -> Vec<i32> {
    if p.is_null() || n <= 0 {
        return Vec::new();
    }
    // SAFETY: `p` is the program's count (or dims) array for this call, which MPI
    // requires to hold `n` ints (the communicator's size or the dimension count);
    // it is read only, before the call returns.
    unsafe { std::slice::from_raw_parts(p, n as usize) }.to_vec()
}

/// Per-peer words from a send-count and a recv-count array (either may be empty).
fn peer_words(n: i32, send: &[i32], recv: &[i32]) -> Vec<u64> {
    (0..n.max(0) as usize)
        .map(|i| {
            let s = send.get(i).copied().unwrap_or(0);
            let r = recv.get(i).copied().unwrap_or(0);
            (s as u32 as u64) | ((r as u32 as u64) << 32)
        })
        .collect()
}

pub fn peer_send(w: u64) -> i32 {
    w as u32 as i32
}
pub fn peer_recv(w: u64) -> i32 {
    (w >> 32) as u32 as i32
}

fn d(fcode: u32) -> Desc {
    Desc { fcode, op: OP_NONE, ..Default::default() }
}

fn red(fcode: u32, count: c_int, dt: MPI_Datatype, op: MPI_Op, root: c_int) -> Desc {
    let s = spec(count, dt);
    Desc { fcode, root, send: s, recv: s, op: op_code(op), ..Default::default() }
}

// ---- one describer per collective of mpi_functions.tbl (called by the generated
// wrappers with the real arguments; names match so the generator can find them) ----

type P = *const std::os::raw::c_void;
type M = *mut std::os::raw::c_void;
type Ci = *const c_int;

pub fn MPI_Barrier(_c: &CommRef) -> Desc {
    d(fcode::BARRIER)
}
pub fn MPI_Bcast(_c: &CommRef, _b: M, count: c_int, dt: MPI_Datatype, root: c_int) -> Desc {
    let s = spec(count, dt);
    Desc { root, send: s, recv: s, ..d(fcode::BCAST) }
}
pub fn MPI_Reduce(_c: &CommRef, _s: P, _r: M, count: c_int, dt: MPI_Datatype, op: MPI_Op, root: c_int) -> Desc {
    red(fcode::REDUCE, count, dt, op, root)
}
pub fn MPI_Allreduce(_c: &CommRef, _s: P, _r: M, count: c_int, dt: MPI_Datatype, op: MPI_Op) -> Desc {
    red(fcode::ALLREDUCE, count, dt, op, 0)
}
pub fn MPI_Scan(_c: &CommRef, _s: P, _r: M, count: c_int, dt: MPI_Datatype, op: MPI_Op) -> Desc {
    red(fcode::SCAN, count, dt, op, 0)
}
pub fn MPI_Exscan(_c: &CommRef, _s: P, _r: M, count: c_int, dt: MPI_Datatype, op: MPI_Op) -> Desc {
    red(fcode::EXSCAN, count, dt, op, 0)
}
pub fn MPI_Reduce_scatter_block(_c: &CommRef, _s: P, _r: M, count: c_int, dt: MPI_Datatype, op: MPI_Op) -> Desc {
    red(fcode::REDUCE_SCATTER_BLOCK, count, dt, op, 0)
}
pub fn MPI_Reduce_scatter(c: &CommRef, _s: P, _r: M, rc: Ci, dt: MPI_Datatype, op: MPI_Op) -> Desc {
    let mut x = red(fcode::REDUCE_SCATTER, 0, dt, op, 0);
    x.peers = peer_words(c.size, &[], &counts(rc, c.size));
    x
}
fn rooted(
    fcode: u32,
    sc: c_int,
    st: MPI_Datatype,
    rc: c_int,
    rt: MPI_Datatype,
    root: c_int,
) -> Desc {
    Desc { root, send: spec(sc, st), recv: spec(rc, rt), ..d(fcode) }
}
pub fn MPI_Gather(_c: &CommRef, _s: P, sc: c_int, st: MPI_Datatype, _r: M, rc: c_int, rt: MPI_Datatype, root: c_int) -> Desc {
    rooted(fcode::GATHER, sc, st, rc, rt, root)
}
pub fn MPI_Scatter(_c: &CommRef, _s: P, sc: c_int, st: MPI_Datatype, _r: M, rc: c_int, rt: MPI_Datatype, root: c_int) -> Desc {
    rooted(fcode::SCATTER, sc, st, rc, rt, root)
}
pub fn MPI_Allgather(_c: &CommRef, _s: P, sc: c_int, st: MPI_Datatype, _r: M, rc: c_int, rt: MPI_Datatype) -> Desc {
    rooted(fcode::ALLGATHER, sc, st, rc, rt, 0)
}
pub fn MPI_Alltoall(_c: &CommRef, _s: P, sc: c_int, st: MPI_Datatype, _r: M, rc: c_int, rt: MPI_Datatype) -> Desc {
    rooted(fcode::ALLTOALL, sc, st, rc, rt, 0)
}
pub fn MPI_Gatherv(c: &CommRef, _s: P, sc: c_int, st: MPI_Datatype, _r: M, rcs: Ci, _dis: Ci, rt: MPI_Datatype, root: c_int) -> Desc {
    let mut x = rooted(fcode::GATHERV, sc, st, 0, rt, root);
    if c.rank == root {
        x.peers = peer_words(c.size, &[], &counts(rcs, c.size));
    }
    x
}
pub fn MPI_Scatterv(c: &CommRef, _s: P, scs: Ci, _dis: Ci, st: MPI_Datatype, _r: M, rc: c_int, rt: MPI_Datatype, root: c_int) -> Desc {
    let mut x = rooted(fcode::SCATTERV, 0, st, rc, rt, root);
    if c.rank == root {
        x.peers = peer_words(c.size, &counts(scs, c.size), &[]);
    }
    x
}
pub fn MPI_Allgatherv(c: &CommRef, _s: P, sc: c_int, st: MPI_Datatype, _r: M, rcs: Ci, _dis: Ci, rt: MPI_Datatype) -> Desc {
    let mut x = rooted(fcode::ALLGATHERV, sc, st, 0, rt, 0);
    x.peers = peer_words(c.size, &[], &counts(rcs, c.size));
    x
}
pub fn MPI_Alltoallv(c: &CommRef, _s: P, scs: Ci, _sd: Ci, st: MPI_Datatype, _r: M, rcs: Ci, _rd: Ci, rt: MPI_Datatype) -> Desc {
    let mut x = rooted(fcode::ALLTOALLV, 0, st, 0, rt, 0);
    x.peers = peer_words(c.size, &counts(scs, c.size), &counts(rcs, c.size));
    x
}
pub fn MPI_Alltoallw(
    c: &CommRef,
    _s: P,
    scs: Ci,
    _sd: Ci,
    sts: *const MPI_Datatype,
    _r: M,
    rcs: Ci,
    _rd: Ci,
    rts: *const MPI_Datatype,
) -> Desc {
    let mut x = d(fcode::ALLTOALLW);
    x.peers = peer_words(c.size, &counts(scs, c.size), &counts(rcs, c.size));
    let n = c.size.max(0) as usize;
    x.peer_types = (0..n)
        .map(|i| {
            // SAFETY: the program's sendtypes array, one per member of `c` (MPI's
            // contract for MPI_Alltoallw), non-null here, i < c.size.
            let s = if sts.is_null() { 0 } else { type_code(unsafe { *sts.add(i) }) };
            // SAFETY: the program's recvtypes array, one per member of `c` (MPI's
            // contract for MPI_Alltoallw), non-null here, i < c.size.
            let r = if rts.is_null() { 0 } else { type_code(unsafe { *rts.add(i) }) };
            (s as u64) | ((r as u64) << 32)
        })
        .collect();
    x
}

fn nb(mut x: Desc) -> Desc {
    x.fcode |= fcode::NB;
    x
}
pub fn MPI_Ibarrier(c: &CommRef) -> Desc {
    nb(MPI_Barrier(c))
}
pub fn MPI_Ibcast(c: &CommRef, b: M, count: c_int, dt: MPI_Datatype, root: c_int) -> Desc {
    nb(MPI_Bcast(c, b, count, dt, root))
}
pub fn MPI_Ireduce(c: &CommRef, s: P, r: M, count: c_int, dt: MPI_Datatype, op: MPI_Op, root: c_int) -> Desc {
    nb(MPI_Reduce(c, s, r, count, dt, op, root))
}
pub fn MPI_Iallreduce(c: &CommRef, s: P, r: M, count: c_int, dt: MPI_Datatype, op: MPI_Op) -> Desc {
    nb(MPI_Allreduce(c, s, r, count, dt, op))
}
pub fn MPI_Iscan(c: &CommRef, s: P, r: M, count: c_int, dt: MPI_Datatype, op: MPI_Op) -> Desc {
    nb(MPI_Scan(c, s, r, count, dt, op))
}
pub fn MPI_Iexscan(c: &CommRef, s: P, r: M, count: c_int, dt: MPI_Datatype, op: MPI_Op) -> Desc {
    nb(MPI_Exscan(c, s, r, count, dt, op))
}
pub fn MPI_Ireduce_scatter_block(c: &CommRef, s: P, r: M, count: c_int, dt: MPI_Datatype, op: MPI_Op) -> Desc {
    nb(MPI_Reduce_scatter_block(c, s, r, count, dt, op))
}
pub fn MPI_Ireduce_scatter(c: &CommRef, s: P, r: M, rc: Ci, dt: MPI_Datatype, op: MPI_Op) -> Desc {
    nb(MPI_Reduce_scatter(c, s, r, rc, dt, op))
}
pub fn MPI_Igather(c: &CommRef, s: P, sc: c_int, st: MPI_Datatype, r: M, rc: c_int, rt: MPI_Datatype, root: c_int) -> Desc {
    nb(MPI_Gather(c, s, sc, st, r, rc, rt, root))
}
pub fn MPI_Iscatter(c: &CommRef, s: P, sc: c_int, st: MPI_Datatype, r: M, rc: c_int, rt: MPI_Datatype, root: c_int) -> Desc {
    nb(MPI_Scatter(c, s, sc, st, r, rc, rt, root))
}
pub fn MPI_Iallgather(c: &CommRef, s: P, sc: c_int, st: MPI_Datatype, r: M, rc: c_int, rt: MPI_Datatype) -> Desc {
    nb(MPI_Allgather(c, s, sc, st, r, rc, rt))
}
pub fn MPI_Ialltoall(c: &CommRef, s: P, sc: c_int, st: MPI_Datatype, r: M, rc: c_int, rt: MPI_Datatype) -> Desc {
    nb(MPI_Alltoall(c, s, sc, st, r, rc, rt))
}
pub fn MPI_Igatherv(c: &CommRef, s: P, sc: c_int, st: MPI_Datatype, r: M, rcs: Ci, dis: Ci, rt: MPI_Datatype, root: c_int) -> Desc {
    nb(MPI_Gatherv(c, s, sc, st, r, rcs, dis, rt, root))
}
pub fn MPI_Iscatterv(c: &CommRef, s: P, scs: Ci, dis: Ci, st: MPI_Datatype, r: M, rc: c_int, rt: MPI_Datatype, root: c_int) -> Desc {
    nb(MPI_Scatterv(c, s, scs, dis, st, r, rc, rt, root))
}
pub fn MPI_Iallgatherv(c: &CommRef, s: P, sc: c_int, st: MPI_Datatype, r: M, rcs: Ci, dis: Ci, rt: MPI_Datatype) -> Desc {
    nb(MPI_Allgatherv(c, s, sc, st, r, rcs, dis, rt))
}
pub fn MPI_Ialltoallv(c: &CommRef, s: P, scs: Ci, sd: Ci, st: MPI_Datatype, r: M, rcs: Ci, rd: Ci, rt: MPI_Datatype) -> Desc {
    nb(MPI_Alltoallv(c, s, scs, sd, st, r, rcs, rd, rt))
}
pub fn MPI_Ialltoallw(
    c: &CommRef,
    s: P,
    scs: Ci,
    sd: Ci,
    sts: *const MPI_Datatype,
    r: M,
    rcs: Ci,
    rd: Ci,
    rts: *const MPI_Datatype,
) -> Desc {
    nb(MPI_Alltoallw(c, s, scs, sd, sts, r, rcs, rd, rts))
}

// ---- communicator constructors ----

pub fn MPI_Comm_dup(_c: &CommRef) -> Desc {
    d(fcode::COMM_DUP)
}
pub fn MPI_Comm_dup_with_info(_c: &CommRef, _i: MPI_Info) -> Desc {
    d(fcode::COMM_DUP)
}
pub fn MPI_Comm_split(_c: &CommRef, color: c_int, key: c_int) -> Desc {
    Desc { extra: [color as u32 as u64, key as u32 as u64, 0, 0], ..d(fcode::COMM_SPLIT) }
}
pub fn MPI_Comm_split_type(_c: &CommRef, ty: c_int, key: c_int, _i: MPI_Info) -> Desc {
    Desc { extra: [ty as u32 as u64, key as u32 as u64, 0, 0], ..d(fcode::COMM_SPLIT_TYPE) }
}
pub fn MPI_Comm_create(c: &CommRef, group: MPI_Group) -> Desc {
    // The group as ranks of `c`, so a dead rank can rebuild the same group.
    let mut x = d(fcode::COMM_CREATE);
    let mut gsize: c_int = 0;
    transport::comm::group_size(group, &mut gsize);
    if gsize > 0 {
        let mut cgroup = transport::zero_group();
        transport::comm::group(c.real, &mut cgroup);
        let ranks: Vec<c_int> = (0..gsize).collect();
        let mut out = vec![0 as c_int; gsize as usize];
        transport::comm::group_translate_ranks(group, &ranks, cgroup, &mut out);
        transport::comm::group_free(&mut cgroup);
        x.peers = out.iter().map(|r| *r as u32 as u64).collect();
    }
    x.extra[0] = gsize as u64;
    x
}
/// A collective of both groups (the table's `inter` flag). Within the job a dead
/// member joins it with its group's `high` (from a group member's log entry, else
/// the negation of the other group's: engine::news::logs), and so does a member catching
/// up after a revoke, so that a merge the other group entered is released (a
/// spawn given up: calls::spares, examples/ulfm/respawn_deaths).
pub fn MPI_Intercomm_merge(c: &CommRef, high: c_int) -> Desc {
    // Across two jobs nobody could join it for a dead member.
    if c.foreign || !c.inter {
        return d(fcode::OPAQUE);
    }
    Desc { extra: [(high != 0) as u64, 0, 0, 0], ..d(fcode::INTERCOMM_MERGE) }
}
pub fn MPI_Cart_create(_c: &CommRef, ndims: c_int, dims: Ci, periods: Ci, reorder: c_int) -> Desc {
    let mut x = d(fcode::CART_CREATE);
    let dims = counts(dims, ndims);
    let periods = counts(periods, ndims);
    x.peers = peer_words(ndims, &dims, &periods);
    x.extra = [ndims as u64, reorder as u64, 0, 0];
    x
}
pub fn MPI_Cart_sub(_c: &CommRef, remain: Ci) -> Desc {
    let mut x = d(fcode::CART_SUB);
    // The dimension count is known to the dead rank from its own copy of the comm.
    let mut ndims: c_int = 0;
    transport::comm::cartdim_get(_c.real, &mut ndims);
    x.peers = peer_words(ndims, &counts(remain, ndims), &[]);
    x.extra[0] = ndims as u64;
    x
}
// ---- appended for complete MPI-3.1 coverage ----

/// The descriptor of a collective on `c`, or an opaque one on an
/// intercommunicator: its arrays have the remote group's size and dead ranks do
/// not join there (docs/ARCHITECTURE.md, "Not simulated").
pub fn unless_inter(c: &CommRef, f: impl FnOnce() -> Desc) -> Desc {
    if c.inter {
        d(fcode::OPAQUE)
    } else {
        f()
    }
}

/// Process creation and connection: no dead-rank joins (another job is involved).
pub fn MPI_Comm_spawn(_c: &CommRef, _cmd: P, _argv: M, _n: c_int, _i: MPI_Info, _root: c_int, _e: M) -> Desc {
    d(fcode::OPAQUE)
}
pub fn MPI_Comm_spawn_multiple(
    _c: &CommRef,
    _count: c_int,
    _cmds: M,
    _argvs: M,
    _np: Ci,
    _infos: P,
    _root: c_int,
    _e: M,
) -> Desc {
    d(fcode::OPAQUE)
}
pub fn MPI_Comm_connect(_c: &CommRef, _port: P, _i: MPI_Info, _root: c_int) -> Desc {
    d(fcode::OPAQUE)
}
pub fn MPI_Comm_accept(_c: &CommRef, _port: P, _i: MPI_Info, _root: c_int) -> Desc {
    d(fcode::OPAQUE)
}

/// Marks a log entry written by a rank that joins as a dummy (catch-up): it says
/// "I am in this collective" but carries no counts of its own.
pub const DUMMY: u32 = 0x200;

/// Collectives a dummy joins from the function code alone (engine::join::join reads no
/// count, root, type, op or list for them): a barrier, and the constructors it
/// joins as `MPI_UNDEFINED` / a duplicate it frees.
pub fn fcode_only(f: u32) -> bool {
    use crate::engine::colls::describe::fcode;
    matches!(f & !fcode::NB & !DUMMY, fcode::BARRIER | fcode::COMM_DUP | fcode::COMM_SPLIT | fcode::COMM_SPLIT_TYPE)
}

/// Collectives whose dummy part any one member's real entry describes: the same
/// count, type, root and op at every member, or a per-member list that MPI
/// requires to be the same at every member (`MPI_Allgatherv`'s receive counts,
/// `MPI_Reduce_scatter`'s counts: `join_colls` builds both dummies from one
/// entry), and the topology constructors, whose arguments MPI requires alike
/// (`MPI_Cart_create`, `MPI_Graph_create`; a dummy of `MPI_Cart_sub` and the
/// distributed graph constructors uses only what is alike: `engine::join::join`,
/// `engine::join::topo`). Not the v and w forms whose lists differ by member (a
/// Scatterv's counts are known at its root only), neighborhood collectives,
/// `MPI_Comm_create` (disjoint groups differ by member) and the intercommunicator
/// constructors. A dead rank joins one of these although a member's own entry
/// left that member's log ([`LogCache::went_on`]).
#[inline]
pub fn any_entry_describes(f: u32) -> bool {
    // A bit test, asked on a collective's failure-free path (engine::news::news):
    // the codes are below 64 (ANY_ENTRY asserts it); `NB` and `DUMMY` lie above.
    ANY_ENTRY >> (f & 63) & 1 != 0
}

/// The function codes [`any_entry_describes`] accepts, as bits.
const ANY_ENTRY: u64 = {
    use crate::engine::colls::describe::fcode as F;
    let codes = [
        F::BARRIER, F::BCAST, F::REDUCE, F::ALLREDUCE, F::GATHER, F::SCATTER, F::ALLGATHER, F::ALLTOALL,
        F::REDUCE_SCATTER_BLOCK, F::SCAN, F::EXSCAN, F::COMM_DUP, F::COMM_SPLIT, F::COMM_SPLIT_TYPE,
        F::ALLGATHERV, F::REDUCE_SCATTER, F::CART_CREATE, F::CART_SUB, F::GRAPH_CREATE, F::DIST_GRAPH_CREATE,
        F::DIST_GRAPH_CREATE_ADJACENT,
    ];
    let mut m = 0u64;
    let mut i = 0;
    while i < codes.len() {
        assert!(codes[i] < 64);
        m |= 1 << codes[i];
        i += 1;
    }
    m
};
