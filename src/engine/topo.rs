//! Topologies (MPI-3.1 §7): descriptors and dead-rank joins for the graph
//! constructors and the neighborhood collectives (engine::describe and
//! engine::join dispatch here).
//!
//! **Neighborhood collectives.** A dead rank is itself a member of the topology
//! communicator, so it knows its own neighbors (`MPI_Cart_shift`,
//! `MPI_Graph_neighbors`, `MPI_Dist_graph_neighbors`, in the order of §7.6). What
//! it must send to a neighbor j is what j expects from it; what it receives from a
//! neighbor i is what i sends it. For the uniform collectives (`allgather`,
//! `alltoall`) that is a live neighbor's receive or send count. For the v/w
//! variants each live member's descriptor lists its in-neighbors (rank, what it
//! receives from each) and its out-neighbors (rank, what it sends to each); the dead
//! rank picks the entries that name it, the o-th one for its o-th edge to the same
//! neighbor (several edges between two ranks are matched in order). Amounts are
//! counts of the member's one datatype (v) or bytes (w: the dead rank uses
//! `MPI_BYTE`). Between two dead neighbors the amount is zero on both sides.
//! A list longer than the world size does not fit a log entry: such a v/w
//! collective is logged without lists and a dead member cannot join it (the
//! survivors then block: docs/ARCHITECTURE.md, "Not simulated").
//!
//! **Graph constructors.** `MPI_Graph_create` takes the same graph at every
//! process, and neither MPICH nor Open MPI exchanges it: a dead rank joins with
//! the same node count and no edges. `MPI_Dist_graph_create_adjacent` and
//! `MPI_Dist_graph_create` take each process's own edges: a dead rank joins with
//! none (weighted the way the live members are). The survivors report
//! `MPI_ERR_PROC_FAILED` and free the result anyway, so no one uses the graph.

#![allow(non_snake_case, clippy::too_many_arguments)]

use crate::engine::handles::CommRef;
use crate::engine::describe::{self, fcode, Desc, Spec};
use crate::engine::join::{Joined, Pending, Who};
use crate::engine::news;
use crate::transport::{self, mpi, topo_kind};
use mpi_sys::{MPI_Aint, MPI_Datatype};
use std::os::raw::{c_int, c_void};

type P = *const c_void;
type M = *mut c_void;
type Ci = *const c_int;

/// `extra[2]` of a neighborhood descriptor: the neighbor lists are in it.
const LISTS: u64 = 1;

/// A process's neighbors, in the order of MPI-3.1 §7.6.
pub struct Adjacency {
    pub ins: Vec<c_int>,
    pub outs: Vec<c_int>,
}

/// The calling process's neighbors in the topology of `real` (None: no topology).
pub fn adjacency(real: mpi::MPI_Comm) -> Option<Adjacency> {
    let mut kind: c_int = 0;
    unsafe { mpi::MPI_Topo_test(real, &mut kind) };
    let (cart, graph, dist) = unsafe { (topo_kind::CART, topo_kind::GRAPH, topo_kind::DIST_GRAPH) };
    if kind == cart {
        let mut nd: c_int = 0;
        unsafe { mpi::MPI_Cartdim_get(real, &mut nd) };
        let mut v = Vec::with_capacity(2 * nd.max(0) as usize);
        for d in 0..nd {
            let (mut src, mut dst) = (0, 0);
            unsafe { mpi::MPI_Cart_shift(real, d, 1, &mut src, &mut dst) };
            v.push(src);
            v.push(dst);
        }
        Some(Adjacency { ins: v.clone(), outs: v })
    } else if kind == graph {
        let (mut me, mut n) = (0, 0);
        unsafe {
            mpi::MPI_Comm_rank(real, &mut me);
            mpi::MPI_Graph_neighbors_count(real, me, &mut n);
        }
        let mut v = vec![0 as c_int; n.max(0) as usize];
        unsafe { mpi::MPI_Graph_neighbors(real, me, n, v.as_mut_ptr()) };
        Some(Adjacency { ins: v.clone(), outs: v })
    } else if kind == dist {
        let (mut ind, mut outd, mut weighted) = (0, 0, 0);
        unsafe { mpi::MPI_Dist_graph_neighbors_count(real, &mut ind, &mut outd, &mut weighted) };
        let (ni, no) = (ind.max(0) as usize, outd.max(0) as usize);
        let (mut ins, mut sw) = (vec![0 as c_int; ni.max(1)], vec![0 as c_int; ni.max(1)]);
        let (mut outs, mut dw) = (vec![0 as c_int; no.max(1)], vec![0 as c_int; no.max(1)]);
        unsafe {
            mpi::MPI_Dist_graph_neighbors(real, ind, ins.as_mut_ptr(), sw.as_mut_ptr(), outd, outs.as_mut_ptr(), dw.as_mut_ptr())
        };
        ins.truncate(ni);
        outs.truncate(no);
        Some(Adjacency { ins, outs })
    } else {
        None
    }
}

fn word(rank: c_int, amount: i64) -> u64 {
    (rank as u32 as u64) | ((amount as u32 as u64) << 32)
}
fn word_rank(w: u64) -> c_int {
    w as u32 as c_int
}
fn word_amount(w: u64) -> i32 {
    (w >> 32) as u32 as i32
}

fn spec(count: c_int, dt: MPI_Datatype) -> Spec {
    Spec { count, ty: describe::type_code(dt) }
}

fn base(f: u32, send: Spec, recv: Spec) -> Desc {
    Desc { fcode: f, send, recv, op: describe::OP_NONE, extra: [0, 0, LISTS, 0], ..Desc::default() }
}

fn at(p: Ci, k: usize) -> i64 {
    if p.is_null() {
        0
    } else {
        unsafe { *p.add(k) as i64 }
    }
}

fn type_size(t: MPI_Datatype) -> i64 {
    let mut s: c_int = 0;
    unsafe { mpi::MPI_Type_size(t, &mut s) };
    s.max(0) as i64
}

/// Adds the neighbor lists: in-neighbors with what this rank receives from each,
/// out-neighbors with what it sends to each (or no lists, if they do not fit).
fn with_lists(c: &CommRef, mut x: Desc, recv_amount: impl Fn(usize) -> i64, send_amount: impl Fn(usize) -> i64) -> Desc {
    let Some(adj) = adjacency(c.real) else { return x };
    let cap = news::world_size();
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

// ---- describers, named like the functions (engine::describe re-exports them) ----

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
pub fn describe_graph_create(_c: &CommRef, nnodes: c_int, _index: Ci, _edges: Ci, reorder: c_int) -> Desc {
    Desc {
        fcode: fcode::GRAPH_CREATE,
        op: describe::OP_NONE,
        extra: [nnodes as u32 as u64, reorder as u32 as u64, 0, 0],
        ..Desc::default()
    }
}

/// Distributed graph constructors: reorder flag and how weights were given
/// (0 `MPI_UNWEIGHTED`, 1 an array, 2 `MPI_WEIGHTS_EMPTY`), which must agree.
pub fn describe_dist_graph(f: u32, weights: Ci, reorder: c_int) -> Desc {
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

// ---- joins ----

/// Joins a topology constructor or neighborhood collective `f` (without the NB
/// bit) on `who`; `entries[r]` is member r's descriptor (None: dead or catching up).
pub fn join(who: &Who, f: u32, nb: bool, e0: &Desc, entries: &[Option<Desc>]) -> Joined {
    match f {
        fcode::GRAPH_CREATE | fcode::DIST_GRAPH_CREATE | fcode::DIST_GRAPH_CREATE_ADJACENT => {
            join_constructor(who.real, f, e0);
            Joined::Done
        }
        _ => join_neighbor(who, f, nb, entries),
    }
}

fn join_constructor(c: mpi::MPI_Comm, f: u32, e0: &Desc) {
    let mut nc = transport::comm_null();
    let dummy = [0 as c_int; 1];
    let d = dummy.as_ptr();
    match f {
        fcode::GRAPH_CREATE => {
            let nnodes = e0.extra[0] as u32 as c_int;
            let index = vec![0 as c_int; nnodes.max(1) as usize];
            unsafe { mpi::MPI_Graph_create(c, nnodes, index.as_ptr(), d, e0.extra[1] as c_int, &mut nc) };
        }
        _ => {
            let reorder = e0.extra[0] as c_int;
            let w = if e0.extra[1] == 0 { transport::unweighted() } else { transport::weights_empty() };
            let info = transport::info_null();
            unsafe {
                if f == fcode::DIST_GRAPH_CREATE {
                    mpi::MPI_Dist_graph_create(c, 0, d, d, d, w, info, reorder, &mut nc);
                } else {
                    mpi::MPI_Dist_graph_create_adjacent(c, 0, d, w, 0, d, w, info, reorder, &mut nc);
                }
            }
        }
    }
    transport::stats::transient_comm(nc != transport::comm_null());
    if nc != transport::comm_null() {
        unsafe { mpi::MPI_Comm_free(&mut nc) };
    }
}

/// Position of `list[k]` among the equal entries before it.
fn occurrence(list: &[c_int], k: usize) -> usize {
    list[..k].iter().filter(|r| **r == list[k]).count()
}

/// The o-th entry of a live member's list that names `me`: its amount.
fn amount_for(list: &[u64], me: c_int, o: usize) -> i32 {
    list.iter().filter(|w| word_rank(**w) == me).nth(o).map_or(0, |w| word_amount(*w))
}

fn prefix(v: &[c_int]) -> Vec<c_int> {
    let mut acc = 0;
    v.iter()
        .map(|x| {
            let d = acc;
            acc += x;
            d
        })
        .collect()
}

/// `MPI_Aint`s in a byte buffer, aligned for MPI (the buffer outlives the call).
fn aints(values: &[MPI_Aint]) -> (Vec<u8>, *const MPI_Aint) {
    let sz = std::mem::size_of::<MPI_Aint>();
    let mut b = vec![0u8; (values.len() + 1) * sz];
    let off = b.as_ptr().align_offset(std::mem::align_of::<MPI_Aint>());
    let p = unsafe { b.as_mut_ptr().add(off) } as *mut MPI_Aint;
    for (i, v) in values.iter().enumerate() {
        unsafe { p.add(i).write(*v) };
    }
    (b, p)
}

fn join_neighbor(who: &Who, f: u32, nb: bool, entries: &[Option<Desc>]) -> Joined {
    let Some(adj) = adjacency(who.real) else { return Joined::Unsupported };
    let me = who.rank as c_int;
    let live = |r: c_int| -> Option<&Desc> { if r < 0 { None } else { entries.get(r as usize)?.as_ref() } };
    let uniform = matches!(f, fcode::NEIGHBOR_ALLGATHER | fcode::NEIGHBOR_ALLTOALL);
    if !uniform && entries.iter().flatten().any(|e| e.extra[2] != LISTS) {
        return Joined::Unsupported;
    }
    // What each out-neighbor expects from us, what each in-neighbor sends us.
    let send_amt: Vec<i32> = (0..adj.outs.len())
        .map(|k| live(adj.outs[k]).map_or(0, |e| amount_for(&e.peers, me, occurrence(&adj.outs, k))))
        .collect();
    let recv_amt: Vec<i32> = (0..adj.ins.len())
        .map(|k| live(adj.ins[k]).map_or(0, |e| amount_for(&e.peer_types, me, occurrence(&adj.ins, k))))
        .collect();
    // The datatypes: a live out-neighbor's receive type, a live in-neighbor's send type.
    let mut out_spec = adj.outs.iter().find_map(|j| live(*j)).map(|e| e.recv);
    let mut in_spec = adj.ins.iter().find_map(|i| live(*i)).map(|e| e.send);
    if uniform {
        // One signature both ways: Open MPI refuses (MPI_ERR_TRUNCATE, before
        // sending anything) a uniform neighborhood collective whose send and
        // receive sizes differ, and a rank whose neighbors on one side are all
        // dead has no count for that side (the live ones use one size anyway).
        out_spec = out_spec.or(in_spec);
        in_spec = in_spec.or(out_spec);
    }
    let (st, sm) = describe::type_for(out_spec.map_or(0, |s| s.ty));
    let (rt, rm) = describe::type_for(in_spec.map_or(0, |s| s.ty));
    let (sty, rty) = (out_spec.map_or(0, |s| s.ty), in_spec.map_or(0, |s| s.ty));
    let c = who.real;
    let mut req = transport::request_null();
    let r = &mut req as *mut mpi::MPI_Request;
    let (nin, nout) = (adj.ins.len() as i32, adj.outs.len() as i32);
    let mut bufs: Vec<Vec<u8>> = Vec::new();
    let mut ints: Vec<Vec<c_int>> = Vec::new();
    let mut types: Vec<Vec<MPI_Datatype>> = Vec::new();
    // SAFETY: buffers, counts and types outlive the call (kept in the Pending).
    let code = unsafe {
        match f {
            fcode::NEIGHBOR_ALLGATHER | fcode::NEIGHBOR_ALLTOALL => {
                let sc = out_spec.map_or(0, |s| s.count);
                let rc = in_spec.map_or(0, |s| s.count);
                let per = if f == fcode::NEIGHBOR_ALLTOALL { nout } else { 1 };
                let mut sb = vec![0u8; describe::bytes_for(sc * per, sty).max(8)];
                let mut rb = vec![0u8; describe::bytes_for(rc * nin, rty).max(8)];
                let (sp, rp) = (sb.as_mut_ptr() as P, rb.as_mut_ptr() as M);
                let (sc, rc) = (sc * sm, rc * rm);
                let code = match (f == fcode::NEIGHBOR_ALLGATHER, nb) {
                    (true, false) => mpi::MPI_Neighbor_allgather(sp, sc, st, rp, rc, rt, c),
                    (true, true) => mpi::MPI_Ineighbor_allgather(sp, sc, st, rp, rc, rt, c, r),
                    (false, false) => mpi::MPI_Neighbor_alltoall(sp, sc, st, rp, rc, rt, c),
                    (false, true) => mpi::MPI_Ineighbor_alltoall(sp, sc, st, rp, rc, rt, c, r),
                };
                bufs.extend([sb, rb]);
                code
            }
            fcode::NEIGHBOR_ALLGATHERV => {
                // Our one send count: what the live out-neighbors expect (they agree).
                let sc = send_amt.iter().copied().max().unwrap_or(0);
                let rcs: Vec<c_int> = recv_amt.iter().map(|a| a * rm).collect();
                let displs = prefix(&rcs);
                let total: i32 = recv_amt.iter().sum();
                let mut sb = vec![0u8; describe::bytes_for(sc, sty).max(8)];
                let mut rb = vec![0u8; describe::bytes_for(total, rty).max(8)];
                let (sp, rp) = (sb.as_mut_ptr() as P, rb.as_mut_ptr() as M);
                let code = if nb {
                    mpi::MPI_Ineighbor_allgatherv(sp, sc * sm, st, rp, rcs.as_ptr(), displs.as_ptr(), rt, c, r)
                } else {
                    mpi::MPI_Neighbor_allgatherv(sp, sc * sm, st, rp, rcs.as_ptr(), displs.as_ptr(), rt, c)
                };
                bufs.extend([sb, rb]);
                ints.extend([rcs, displs]);
                code
            }
            fcode::NEIGHBOR_ALLTOALLV => {
                let scs: Vec<c_int> = send_amt.iter().map(|a| a * sm).collect();
                let rcs: Vec<c_int> = recv_amt.iter().map(|a| a * rm).collect();
                let (sd, rd) = (prefix(&scs), prefix(&rcs));
                let mut sb = vec![0u8; describe::bytes_for(send_amt.iter().sum(), sty).max(8)];
                let mut rb = vec![0u8; describe::bytes_for(recv_amt.iter().sum(), rty).max(8)];
                let (sp, rp) = (sb.as_mut_ptr() as P, rb.as_mut_ptr() as M);
                let (a, b, x, y) = (scs.as_ptr(), sd.as_ptr(), rcs.as_ptr(), rd.as_ptr());
                let code = if nb {
                    mpi::MPI_Ineighbor_alltoallv(sp, a, b, st, rp, x, y, rt, c, r)
                } else {
                    mpi::MPI_Neighbor_alltoallv(sp, a, b, st, rp, x, y, rt, c)
                };
                bufs.extend([sb, rb]);
                ints.extend([scs, sd, rcs, rd]);
                code
            }
            fcode::NEIGHBOR_ALLTOALLW => {
                // Amounts are bytes.
                let byte = transport::dt_byte();
                let scs: Vec<c_int> = send_amt.clone();
                let rcs: Vec<c_int> = recv_amt.clone();
                let sdv: Vec<MPI_Aint> = prefix(&scs).into_iter().map(|x| x as MPI_Aint).collect();
                let rdv: Vec<MPI_Aint> = prefix(&rcs).into_iter().map(|x| x as MPI_Aint).collect();
                let (sdb, sd) = aints(&sdv);
                let (rdb, rd) = aints(&rdv);
                let stv = vec![byte; scs.len().max(1)];
                let rtv = vec![byte; rcs.len().max(1)];
                let mut sb = vec![0u8; (scs.iter().sum::<i32>().max(0) as usize).max(8)];
                let mut rb = vec![0u8; (rcs.iter().sum::<i32>().max(0) as usize).max(8)];
                let (sp, rp) = (sb.as_mut_ptr() as P, rb.as_mut_ptr() as M);
                let code = if nb {
                    mpi::MPI_Ineighbor_alltoallw(sp, scs.as_ptr(), sd, stv.as_ptr(), rp, rcs.as_ptr(), rd, rtv.as_ptr(), c, r)
                } else {
                    mpi::MPI_Neighbor_alltoallw(sp, scs.as_ptr(), sd, stv.as_ptr(), rp, rcs.as_ptr(), rd, rtv.as_ptr(), c)
                };
                bufs.extend([sb, rb, sdb, rdb]);
                ints.extend([scs, rcs]);
                types.extend([stv, rtv]);
                code
            }
            _ => return Joined::Unsupported,
        }
    };
    if code != 0 && news::debug() {
        // A peer of this join waits for a message that was never sent.
        crate::say!("MPIFT join {}: comm {:x} #{} f{} failed at once: error {}", news::world_rank(), who.id, who.seq, f, code);
    }
    if nb {
        Joined::Pending(Pending::holding(req, bufs, ints, types))
    } else {
        Joined::Done
    }
}
