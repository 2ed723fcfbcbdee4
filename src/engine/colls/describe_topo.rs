//! Topology descriptors (MPI-3.1 §7): what a rank writes into its log before a
//! neighborhood collective or a graph constructor, so a dead rank can join it
//! ([`crate::engine::join::topo`] makes the joins from these descriptors).
//!
//! A neighborhood descriptor carries the writer's neighbor lists: in-neighbors with
//! what it receives from each, out-neighbors with what it sends to each, one
//! [`word`] per edge (or no lists, if they do not fit a log entry). The generated
//! code calls the describers here by their MPI names (build/codegen.rs routes names
//! containing `eighbor_` or `raph_create` to this file).
//!
//! May import: engine::base, engine::colls::describe, transport (not engine::join::topo or
//! engine::join::join, which are above it).

#![allow(non_snake_case, clippy::too_many_arguments)]

use crate::engine::base::handles::CommRef;
use crate::engine::base::runtime;
use crate::engine::colls::describe::{self, fcode, Desc, Spec};
use crate::transport::{self, comm, env, topo_kind, MPI_Aint, MPI_Comm, MPI_Datatype, MPI_Info};
use std::os::raw::{c_int, c_void};

type P = *const c_void;
type M = *mut c_void;
type Ci = *const c_int;

/// `extra[2]` of a neighborhood descriptor: the neighbor lists are in it.
pub const LISTS: u64 = 1;

/// A process's neighbors, in the order of MPI-3.1 §7.6.
pub struct Adjacency {
    pub ins: Vec<c_int>,
    pub outs: Vec<c_int>,
}

/// The calling process's neighbors in the topology of `real` (None: no topology).
pub fn adjacency(real: MPI_Comm) -> Option<Adjacency> {
    let mut kind: c_int = 0;
    comm::topo_test(real, &mut kind);
    // SAFETY: immutable ints the C shim initialised from the host's macros.
    let (cart, graph, dist) = unsafe { (topo_kind::CART, topo_kind::GRAPH, topo_kind::DIST_GRAPH) };
    if kind == cart {
        let mut nd: c_int = 0;
        comm::cartdim_get(real, &mut nd);
        let mut v = Vec::with_capacity(2 * nd.max(0) as usize);
        for d in 0..nd {
            let (mut src, mut dst) = (0, 0);
            comm::cart_shift(real, d, 1, &mut src, &mut dst);
            v.push(src);
            v.push(dst);
        }
        Some(Adjacency { ins: v.clone(), outs: v })
    } else if kind == graph {
        let (mut me, mut n) = (0, 0);
        comm::rank(real, &mut me);
        comm::graph_neighbors_count(real, me, &mut n);
        let mut v = vec![0 as c_int; n.max(0) as usize];
        comm::graph_neighbors(real, me, &mut v);
        Some(Adjacency { ins: v.clone(), outs: v })
    } else if kind == dist {
        let (mut ind, mut outd, mut weighted) = (0, 0, 0);
        comm::dist_graph_neighbors_count(real, &mut ind, &mut outd, &mut weighted);
        let (ni, no) = (ind.max(0) as usize, outd.max(0) as usize);
        let (mut ins, mut sw) = (vec![0 as c_int; ni.max(1)], vec![0 as c_int; ni.max(1)]);
        let (mut outs, mut dw) = (vec![0 as c_int; no.max(1)], vec![0 as c_int; no.max(1)]);
        // The degrees passed are the slices' lengths (`ind`, `outd`).
        comm::dist_graph_neighbors(real, &mut ins[..ni], &mut sw[..ni], &mut outs[..no], &mut dw[..no]);
        ins.truncate(ni);
        outs.truncate(no);
        Some(Adjacency { ins, outs })
    } else {
        None
    }
}

/// A neighbor-list word: rank in the low half, amount in the high half.
fn word(rank: c_int, amount: i64) -> u64 {
    (rank as u32 as u64) | ((amount as u32 as u64) << 32)
}
/// The rank of a neighbor-list word.
pub fn word_rank(w: u64) -> c_int {
    w as u32 as c_int
}
/// The amount of a neighbor-list word.
pub fn word_amount(w: u64) -> i32 {
    (w >> 32) as u32 as i32
}

fn spec(count: c_int, dt: MPI_Datatype) -> Spec {
    Spec { count, ty: describe::type_code(dt) }
}

fn base(f: u32, send: Spec, recv: Spec) -> Desc {
    Desc { fcode: f, send, recv, op: describe::OP_NONE, extra: [0, 0, LISTS, 0], ..Desc::default() }
}

/// Entry `k` of one of the program's count arrays (0 if none was given). Called
/// only with `k` below the calling process's in- or out-degree ([`with_lists`]),
/// the length MPI requires of the neighborhood collectives' count arrays.
fn at(p: Ci, k: usize) -> i64 {
    if p.is_null() {
        0
    } else {
        // SAFETY: `p` is the program's non-null count array for this call, which
        // MPI requires to have one entry per neighbor on its side; `k` is below
        // that degree (with_lists iterates over the adjacency lists).
        unsafe { *p.add(k) as i64 }
    }
}

fn type_size(t: MPI_Datatype) -> i64 {
    let mut s: c_int = 0;
    env::type_size(t, &mut s);
    s.max(0) as i64
}

/// Adds the neighbor lists: in-neighbors with what this rank receives from each,
/// out-neighbors with what it sends to each (or no lists, if they do not fit).
fn with_lists(c: &CommRef, mut x: Desc, recv_amount: impl Fn(usize) -> i64, send_amount: impl Fn(usize) -> i64) -> Desc {
    let Some(adj) = adjacency(c.real) else { return x };
    let cap = runtime::world_size();
    x.extra[0] = adj.ins.len() as u64;
    x.extra[1] = adj.outs.len() as u64;
    if adj.ins.len() > cap || adj.outs.len() > cap {
        x.extra[2] = 0;
        return x;
    }
    x.peers = adj.ins.iter().enumerate().map(|(k, r)| word(*r, recv_amount(k))).collect();
    x.peer_types = adj.outs.iter().enumerate().map(|(k, r)| word(*r, send_amount(k))).collect();
    x
}

fn nb(mut x: Desc) -> Desc {
    x.fcode |= fcode::NB;
    x
}

// ---- describers, named like the functions (the generated code calls them here) ----

pub fn MPI_Neighbor_allgather(_c: &CommRef, _s: P, sc: c_int, st: MPI_Datatype, _r: M, rc: c_int, rt: MPI_Datatype) -> Desc {
    base(fcode::NEIGHBOR_ALLGATHER, spec(sc, st), spec(rc, rt))
}
pub fn MPI_Neighbor_alltoall(_c: &CommRef, _s: P, sc: c_int, st: MPI_Datatype, _r: M, rc: c_int, rt: MPI_Datatype) -> Desc {
    base(fcode::NEIGHBOR_ALLTOALL, spec(sc, st), spec(rc, rt))
}
pub fn MPI_Neighbor_allgatherv(
    c: &CommRef,
    _s: P,
    sc: c_int,
    st: MPI_Datatype,
    _r: M,
    rcs: Ci,
    _d: Ci,
    rt: MPI_Datatype,
) -> Desc {
    let x = base(fcode::NEIGHBOR_ALLGATHERV, spec(sc, st), spec(0, rt));
    with_lists(c, x, |k| at(rcs, k), |_| sc as i64)
}
pub fn MPI_Neighbor_alltoallv(
    c: &CommRef,
    _s: P,
    scs: Ci,
    _sd: Ci,
    st: MPI_Datatype,
    _r: M,
    rcs: Ci,
    _rd: Ci,
    rt: MPI_Datatype,
) -> Desc {
    let x = base(fcode::NEIGHBOR_ALLTOALLV, spec(0, st), spec(0, rt));
    with_lists(c, x, |k| at(rcs, k), |k| at(scs, k))
}
pub fn MPI_Neighbor_alltoallw(
    c: &CommRef,
    _s: P,
    scs: Ci,
    _sd: *const MPI_Aint,
    sts: *const MPI_Datatype,
    _r: M,
    rcs: Ci,
    _rd: *const MPI_Aint,
    rts: *const MPI_Datatype,
) -> Desc {
    let x = base(fcode::NEIGHBOR_ALLTOALLW, Spec::default(), Spec::default());
    let bytes = |counts: Ci, types: *const MPI_Datatype, k: usize| {
        if types.is_null() {
            0
        } else {
            // SAFETY: the program's non-null datatype array for this call, one per
            // neighbor on its side (MPI's contract); `k` is below that degree.
            at(counts, k) * type_size(unsafe { *types.add(k) })
        }
    };
    with_lists(c, x, |k| bytes(rcs, rts, k), |k| bytes(scs, sts, k))
}
pub fn MPI_Ineighbor_allgather(c: &CommRef, s: P, sc: c_int, st: MPI_Datatype, r: M, rc: c_int, rt: MPI_Datatype) -> Desc {
    nb(MPI_Neighbor_allgather(c, s, sc, st, r, rc, rt))
}
pub fn MPI_Ineighbor_alltoall(c: &CommRef, s: P, sc: c_int, st: MPI_Datatype, r: M, rc: c_int, rt: MPI_Datatype) -> Desc {
    nb(MPI_Neighbor_alltoall(c, s, sc, st, r, rc, rt))
}
pub fn MPI_Ineighbor_allgatherv(c: &CommRef, s: P, sc: c_int, st: MPI_Datatype, r: M, rcs: Ci, d: Ci, rt: MPI_Datatype) -> Desc {
    nb(MPI_Neighbor_allgatherv(c, s, sc, st, r, rcs, d, rt))
}
pub fn MPI_Ineighbor_alltoallv(
    c: &CommRef,
    s: P,
    scs: Ci,
    sd: Ci,
    st: MPI_Datatype,
    r: M,
    rcs: Ci,
    rd: Ci,
    rt: MPI_Datatype,
) -> Desc {
    nb(MPI_Neighbor_alltoallv(c, s, scs, sd, st, r, rcs, rd, rt))
}
pub fn MPI_Ineighbor_alltoallw(
    c: &CommRef,
    s: P,
    scs: Ci,
    sd: *const MPI_Aint,
    sts: *const MPI_Datatype,
    r: M,
    rcs: Ci,
    rd: *const MPI_Aint,
    rts: *const MPI_Datatype,
) -> Desc {
    nb(MPI_Neighbor_alltoallw(c, s, scs, sd, sts, r, rcs, rd, rts))
}

/// `MPI_Graph_create`: node count and reorder flag (the edges are not needed).
pub fn MPI_Graph_create(_c: &CommRef, nnodes: c_int, _index: Ci, _edges: Ci, reorder: c_int) -> Desc {
    Desc {
        fcode: fcode::GRAPH_CREATE,
        op: describe::OP_NONE,
        extra: [nnodes as u32 as u64, reorder as u32 as u64, 0, 0],
        ..Desc::default()
    }
}
pub fn MPI_Dist_graph_create_adjacent(
    _c: &CommRef,
    _ind: c_int,
    _src: Ci,
    sw: Ci,
    _outd: c_int,
    _dst: Ci,
    _dw: Ci,
    _i: MPI_Info,
    r: c_int,
) -> Desc {
    dist_graph(fcode::DIST_GRAPH_CREATE_ADJACENT, sw, r)
}
pub fn MPI_Dist_graph_create(
    _c: &CommRef,
    _n: c_int,
    _src: Ci,
    _deg: Ci,
    _dst: Ci,
    w: Ci,
    _i: MPI_Info,
    r: c_int,
) -> Desc {
    dist_graph(fcode::DIST_GRAPH_CREATE, w, r)
}

/// Distributed graph constructors: reorder flag and how weights were given
/// (0 `MPI_UNWEIGHTED`, 1 an array, 2 `MPI_WEIGHTS_EMPTY`), which must agree.
fn dist_graph(f: u32, weights: Ci, reorder: c_int) -> Desc {
    let w = weights as *mut c_int;
    let kind = if w == transport::unweighted() {
        0
    } else if w == transport::weights_empty() {
        2
    } else {
        1
    };
    Desc { fcode: f, op: describe::OP_NONE, extra: [reorder as u32 as u64, kind, 0, 0], ..Desc::default() }
}
