//! Topologies (MPI-3.1 §7): dead-rank joins for the graph constructors and the
//! neighborhood collectives (engine::join::join dispatches here), from the descriptors
//! of [`crate::engine::colls::describe_topo`].
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

use crate::engine::base::settings;
use crate::engine::base::runtime;
use crate::engine::join::join_types::free_comm;
use crate::engine::colls::describe::{self, fcode, Desc, Spec};
use crate::engine::colls::describe_topo::{adjacency, word_amount, word_rank, LISTS};
use crate::engine::join::join_types::{Joined, Pending, Who};
use crate::transport::{self, comm, generated, MPI_Aint, MPI_Comm, MPI_Datatype, MPI_Request};
use std::os::raw::{c_int, c_void};

type P = *const c_void;
type M = *mut c_void;

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

fn join_constructor(c: MPI_Comm, f: u32, e0: &Desc) {
    let mut nc = transport::comm_null();
    let dummy = [0 as c_int; 1];
    match f {
        fcode::GRAPH_CREATE => {
            let nnodes = e0.extra[0] as u32 as c_int;
            let index = vec![0 as c_int; nnodes.max(1) as usize];
            comm::graph_create(c, nnodes, &index, &dummy, e0.extra[1] as c_int, &mut nc);
        }
        _ => {
            let reorder = e0.extra[0] as c_int;
            let w = if e0.extra[1] == 0 { transport::unweighted() } else { transport::weights_empty() };
            let info = transport::info_null();
            // No edges: zero sources (`n` 0) and empty neighbor lists, with the
            // dummy's address as the (unread) arrays; `w` is a sentinel.
            let (d, none) = (dummy.as_ptr(), &dummy[..0]);
            if f == fcode::DIST_GRAPH_CREATE {
                // SAFETY: `n` is 0, so no source, degree or destination is read
                // beyond the one-int dummy; `w` is MPI_UNWEIGHTED or MPI_WEIGHTS_EMPTY.
                unsafe { comm::dist_graph_create(c, 0, d, d, d, w, info, reorder, &mut nc) };
            } else {
                // SAFETY: both neighbor lists are empty and `w` is MPI_UNWEIGHTED or
                // MPI_WEIGHTS_EMPTY, so no weight is read.
                unsafe { comm::dist_graph_create_adjacent(c, none, w, none, w, info, reorder, &mut nc) };
            }
        }
    }
    free_comm(nc);
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

/// What a dummy exchanges with its neighbors in a neighborhood collective.
struct Plan {
    /// What each out-neighbor expects from us, what each in-neighbor sends us.
    send_amt: Vec<i32>,
    recv_amt: Vec<i32>,
    /// The datatypes: a live out-neighbor's receive type, a live in-neighbor's
    /// send type (with their counts, for the uniform collectives).
    out_spec: Option<Spec>,
    in_spec: Option<Spec>,
}

impl Plan {
    fn nin(&self) -> i32 {
        self.recv_amt.len() as i32
    }
    fn nout(&self) -> i32 {
        self.send_amt.len() as i32
    }
    /// Type code, datatype and count multiplier of what we send.
    fn send_type(&self) -> (u32, MPI_Datatype, i32) {
        let ty = self.out_spec.map_or(0, |s| s.ty);
        let (t, m) = describe::type_for(ty);
        (ty, t, m)
    }
    /// Type code, datatype and count multiplier of what we receive.
    fn recv_type(&self) -> (u32, MPI_Datatype, i32) {
        let ty = self.in_spec.map_or(0, |s| s.ty);
        let (t, m) = describe::type_for(ty);
        (ty, t, m)
    }
}

/// The plan of a dummy's part in neighborhood collective `f` on `who`, from its
/// adjacency and the live neighbors' lists (None: no topology, or lists missing).
fn plan(who: &Who, f: u32, entries: &[Option<Desc>]) -> Option<Plan> {
    let adj = adjacency(who.real)?;
    let me = who.rank as c_int;
    let live = |r: c_int| -> Option<&Desc> { if r < 0 { None } else { entries.get(r as usize)?.as_ref() } };
    let uniform = matches!(f, fcode::NEIGHBOR_ALLGATHER | fcode::NEIGHBOR_ALLTOALL);
    if !uniform && entries.iter().flatten().any(|e| e.extra[2] != LISTS) {
        return None;
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
    Some(Plan { send_amt, recv_amt, out_spec, in_spec })
}

fn join_neighbor(who: &Who, f: u32, nb: bool, entries: &[Option<Desc>]) -> Joined {
    let Some(x) = plan(who, f, entries) else { return Joined::Unsupported };
    let mut p = Pending::empty();
    let code = match f {
        fcode::NEIGHBOR_ALLGATHER | fcode::NEIGHBOR_ALLTOALL => neighbor_uniform(who.real, f, nb, &x, &mut p),
        fcode::NEIGHBOR_ALLGATHERV => neighbor_allgatherv(who.real, nb, &x, &mut p),
        fcode::NEIGHBOR_ALLTOALLV => neighbor_alltoallv(who.real, nb, &x, &mut p),
        fcode::NEIGHBOR_ALLTOALLW => neighbor_alltoallw(who.real, nb, &x, &mut p),
        _ => return Joined::Unsupported,
    };
    if code != 0 && settings::debug() {
        // A peer of this join waits for a message that was never sent.
        crate::say!("MPIFT join {}: comm {:x} #{} f{} failed at once: error {}", runtime::world_rank(), who.id, who.seq, f, code);
    }
    if nb {
        Joined::Pending(p)
    } else {
        Joined::Done
    }
}

/// `MPI_Neighbor_allgather` and `MPI_Neighbor_alltoall`: one count each way.
fn neighbor_uniform(c: MPI_Comm, f: u32, nb: bool, x: &Plan, p: &mut Pending) -> c_int {
    let ((sty, st, sm), (rty, rt, rm)) = (x.send_type(), x.recv_type());
    let sc = x.out_spec.map_or(0, |s| s.count);
    let rc = x.in_spec.map_or(0, |s| s.count);
    let per = if f == fcode::NEIGHBOR_ALLTOALL { x.nout() } else { 1 };
    let mut sb = vec![0u8; describe::bytes_for(sc * per, sty).max(8)];
    let mut rb = vec![0u8; describe::bytes_for(rc * x.nin(), rty).max(8)];
    let (sp, rp) = (sb.as_mut_ptr() as P, rb.as_mut_ptr() as M);
    let (sc, rc) = (sc * sm, rc * rm);
    let r: &mut MPI_Request = &mut p.req;
    // SAFETY: `sb` holds `sc` elements of `st` per out-neighbor (alltoall) or
    // once, `rb` `rc` of `rt` per in-neighbor; both are kept in `p`, which the
    // caller keeps until the request completes.
    let code = unsafe {
        match (f == fcode::NEIGHBOR_ALLGATHER, nb) {
            (true, false) => generated::MPI_Neighbor_allgather(sp, sc, st, rp, rc, rt, c),
            (true, true) => generated::MPI_Ineighbor_allgather(sp, sc, st, rp, rc, rt, c, r),
            (false, false) => generated::MPI_Neighbor_alltoall(sp, sc, st, rp, rc, rt, c),
            (false, true) => generated::MPI_Ineighbor_alltoall(sp, sc, st, rp, rc, rt, c, r),
        }
    };
    p.buf(sb);
    p.buf(rb);
    code
}

/// `MPI_Neighbor_allgatherv`: our one send count, a count per in-neighbor.
fn neighbor_allgatherv(c: MPI_Comm, nb: bool, x: &Plan, p: &mut Pending) -> c_int {
    let ((sty, st, sm), (rty, rt, rm)) = (x.send_type(), x.recv_type());
    // Our one send count: what the live out-neighbors expect (they agree).
    let sc = x.send_amt.iter().copied().max().unwrap_or(0);
    let rcs: Vec<c_int> = x.recv_amt.iter().map(|a| a * rm).collect();
    let displs = prefix(&rcs);
    let total: i32 = x.recv_amt.iter().sum();
    let mut sb = vec![0u8; describe::bytes_for(sc, sty).max(8)];
    let mut rb = vec![0u8; describe::bytes_for(total, rty).max(8)];
    let (sp, rp) = (sb.as_mut_ptr() as P, rb.as_mut_ptr() as M);
    // SAFETY: `rcs` and `displs` have one entry per in-neighbor and `rb` holds
    // their sum of elements of `rt`, `sb` `sc * sm` of `st`; all are kept in `p`,
    // which the caller keeps until the request completes.
    let code = unsafe {
        if nb {
            generated::MPI_Ineighbor_allgatherv(sp, sc * sm, st, rp, rcs.as_ptr(), displs.as_ptr(), rt, c, &mut p.req)
        } else {
            generated::MPI_Neighbor_allgatherv(sp, sc * sm, st, rp, rcs.as_ptr(), displs.as_ptr(), rt, c)
        }
    };
    p.buf(sb);
    p.buf(rb);
    p.ints(rcs);
    p.ints(displs);
    code
}

/// `MPI_Neighbor_alltoallv`: a count per neighbor each way, in the live members'
/// datatypes.
fn neighbor_alltoallv(c: MPI_Comm, nb: bool, x: &Plan, p: &mut Pending) -> c_int {
    let ((sty, st, sm), (rty, rt, rm)) = (x.send_type(), x.recv_type());
    let scs: Vec<c_int> = x.send_amt.iter().map(|a| a * sm).collect();
    let rcs: Vec<c_int> = x.recv_amt.iter().map(|a| a * rm).collect();
    let (sd, rd) = (prefix(&scs), prefix(&rcs));
    let mut sb = vec![0u8; describe::bytes_for(x.send_amt.iter().sum(), sty).max(8)];
    let mut rb = vec![0u8; describe::bytes_for(x.recv_amt.iter().sum(), rty).max(8)];
    let (sp, rp) = (sb.as_mut_ptr() as P, rb.as_mut_ptr() as M);
    let (a, b, y, z) = (scs.as_ptr(), sd.as_ptr(), rcs.as_ptr(), rd.as_ptr());
    // SAFETY: the count and displacement arrays have one entry per neighbor on
    // their side; `sb` and `rb` hold the sums of the counts (elements of `st`,
    // `rt`); all are kept in `p`, which the caller keeps until completion.
    let code = unsafe {
        if nb {
            generated::MPI_Ineighbor_alltoallv(sp, a, b, st, rp, y, z, rt, c, &mut p.req)
        } else {
            generated::MPI_Neighbor_alltoallv(sp, a, b, st, rp, y, z, rt, c)
        }
    };
    p.buf(sb);
    p.buf(rb);
    for v in [scs, sd, rcs, rd] {
        p.ints(v);
    }
    code
}

/// `MPI_Neighbor_alltoallw`: amounts in bytes, sent as `MPI_BYTE`.
fn neighbor_alltoallw(c: MPI_Comm, nb: bool, x: &Plan, p: &mut Pending) -> c_int {
    let byte = transport::dt_byte();
    let scs: Vec<c_int> = x.send_amt.clone();
    let rcs: Vec<c_int> = x.recv_amt.clone();
    let sd: Vec<MPI_Aint> = prefix(&scs).into_iter().map(|x| x as MPI_Aint).collect();
    let rd: Vec<MPI_Aint> = prefix(&rcs).into_iter().map(|x| x as MPI_Aint).collect();
    let stv = vec![byte; scs.len().max(1)];
    let rtv = vec![byte; rcs.len().max(1)];
    let mut sb = vec![0u8; (scs.iter().sum::<i32>().max(0) as usize).max(8)];
    let mut rb = vec![0u8; (rcs.iter().sum::<i32>().max(0) as usize).max(8)];
    let (sp, rp) = (sb.as_mut_ptr() as P, rb.as_mut_ptr() as M);
    let (a, b, y, z) = (scs.as_ptr(), sd.as_ptr(), rcs.as_ptr(), rd.as_ptr());
    // SAFETY: the count, displacement and type arrays have one entry per neighbor
    // on their side; `sb` and `rb` hold the byte sums of the counts; all are kept
    // in `p`, which the caller keeps until the request completes.
    let code = unsafe {
        if nb {
            generated::MPI_Ineighbor_alltoallw(sp, a, b, stv.as_ptr(), rp, y, z, rtv.as_ptr(), c, &mut p.req)
        } else {
            generated::MPI_Neighbor_alltoallw(sp, a, b, stv.as_ptr(), rp, y, z, rtv.as_ptr(), c)
        }
    };
    p.buf(sb);
    p.buf(rb);
    p.aints(sd);
    p.aints(rd);
    p.ints(scs);
    p.ints(rcs);
    p.types(stv);
    p.types(rtv);
    code
}
