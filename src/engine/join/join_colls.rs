//! A dummy's part in the collectives proper (barrier to exscan, blocking or
//! non-blocking), one function per family: [`crate::engine::join::join`] dispatches
//! here. Each sizes its buffers from the live members' log entries, calls the
//! host's collective (the I-form when the program's was), and returns the
//! [`Pending`] that keeps buffers and arrays alive until the call completes.
//!
//! **Why the host calls are sound.** Every buffer passed is a zeroed `Vec<u8>`
//! allocated here for the count and datatype passed with it (`buf`: `count`
//! elements by their extent, at least 8 bytes; the v/w forms size theirs from the
//! sum of the counts), and every count, displacement or datatype array has one
//! entry per member of the communicator. All of them move into the returned
//! [`Pending`] (moving a `Vec` does not move its heap block), which the caller
//! keeps until the request completes (non-blocking) or drops after the blocking
//! call returned.

use crate::engine::colls::describe::{self, fcode, peer_recv, peer_send, Desc, Spec, TY_BYTES};
use crate::engine::join::join_types::{At, Pending};
use crate::transport::{self, env, generated, MPI_Aint, MPI_Datatype, MPI_Op};
use std::os::raw::{c_int, c_void};

fn buf(count: i32, ty: u32) -> Vec<u8> {
    vec![0u8; describe::bytes_for(count, ty).max(8)]
}

fn dt(ty: u32) -> (MPI_Datatype, i32) {
    describe::type_for(ty)
}

/// The reduction a dummy uses: the predefined op, or a no-op with the same
/// commutativity; on a derived type (sent as bytes) always the no-op.
fn op_for(code: u32, ty: u32) -> MPI_Op {
    if ty & TY_BYTES == 0 {
        if let Some(op) = describe::predef_op(code) {
            return op;
        }
    }
    transport::noop_op(code != describe::OP_USER_NONCOMMUTE)
}

/// What a dummy sends in a rooted gather-like collective (count uniform).
/// Gather: what the other non-root members send, as the dead rank's own code
/// would have, else what the root receives per rank. The two agree in a correct
/// program; where they do not (MPICH's `ft/gather` passes the whole buffer's
/// size as the per-rank receive count), a dummy that sent the root's count would
/// write past what any live member writes into the root's buffer. Scatter: what
/// the root sends per rank, else what the others receive.
fn uniform_spec(entries: &[Option<Desc>], root: usize, from_root_recv: bool) -> Spec {
    let non_root = entries.iter().enumerate().find_map(|(i, e)| e.as_ref().filter(|_| i != root));
    if from_root_recv {
        if let Some(e) = non_root {
            return e.send;
        }
    }
    if let Some(Some(r)) = entries.get(root) {
        return if from_root_recv { r.recv } else { r.send };
    }
    non_root.map_or_else(Spec::default, |e| if from_root_recv { e.send } else { e.recv })
}

/// Joins collective `f` (barrier to exscan, without the NB bit) on `at`; `None`:
/// a dummy cannot join it (its count arrays do not fit the communicator).
pub(crate) fn join(at: &At, f: u32, e0: &Desc, entries: &[Option<Desc>]) -> Option<Pending> {
    match f {
        fcode::BARRIER | fcode::BCAST => Some(barrier_bcast(at, f, e0)),
        fcode::REDUCE | fcode::ALLREDUCE | fcode::SCAN | fcode::EXSCAN | fcode::REDUCE_SCATTER_BLOCK => {
            Some(reduction(at, f, e0))
        }
        fcode::REDUCE_SCATTER => reduce_scatter(at, e0),
        fcode::GATHER | fcode::SCATTER => Some(gather_scatter(at, f, e0, entries)),
        fcode::GATHERV | fcode::SCATTERV => Some(gatherv_scatterv(at, f, e0, entries)),
        fcode::ALLGATHER | fcode::ALLTOALL => Some(allgather_alltoall(at, f, e0)),
        fcode::ALLGATHERV => allgatherv(at, e0),
        fcode::ALLTOALLV | fcode::ALLTOALLW => Some(alltoallv_w(at, f, e0, entries)),
        _ => None,
    }
}

/// `MPI_Barrier` and `MPI_Bcast` (the root's count and type).
fn barrier_bcast(at: &At, f: u32, e0: &Desc) -> Pending {
    let (c, mut p) = (at.c, Pending::empty());
    if f == fcode::BARRIER {
        // SAFETY: a communicator handle and the request kept in `p` (module doc).
        unsafe {
            if at.nb {
                generated::MPI_Ibarrier(c, &mut p.req);
            } else {
                generated::MPI_Barrier(c);
            }
        }
        return p;
    }
    let (t, m) = dt(e0.send.ty);
    let mut b = buf(e0.send.count, e0.send.ty);
    let bp = b.as_mut_ptr() as *mut c_void;
    let (cnt, root) = (e0.send.count * m, e0.root);
    // SAFETY: `b` holds `cnt` elements of `t` and is kept in `p` (module doc).
    unsafe {
        if at.nb {
            generated::MPI_Ibcast(bp, cnt, t, root, c, &mut p.req);
        } else {
            generated::MPI_Bcast(bp, cnt, t, root, c);
        }
    }
    p.buf(b);
    p
}

/// The reductions with one count: reduce, allreduce, scan, exscan and
/// reduce_scatter_block (whose send buffer holds a block per member).
fn reduction(at: &At, f: u32, e0: &Desc) -> Pending {
    let (c, n, nb, mut p) = (at.c, at.n, at.nb, Pending::empty());
    let (t, m) = dt(e0.send.ty);
    let cnt = e0.send.count * m;
    let total = if f == fcode::REDUCE_SCATTER_BLOCK { e0.send.count * n as i32 } else { e0.send.count };
    let mut sb = buf(total, e0.send.ty);
    let mut rb = buf(total, e0.send.ty);
    let (s, rv) = (sb.as_mut_ptr() as *const c_void, rb.as_mut_ptr() as *mut c_void);
    let op = op_for(e0.op, e0.send.ty);
    let r = &mut p.req;
    // SAFETY: `sb` and `rb` hold `total` >= `cnt` elements of `t` (n blocks of
    // `cnt` for reduce_scatter_block) and are kept in `p` (module doc).
    unsafe {
        match (f, nb) {
            (fcode::REDUCE, false) => generated::MPI_Reduce(s, rv, cnt, t, op, e0.root, c),
            (fcode::REDUCE, true) => generated::MPI_Ireduce(s, rv, cnt, t, op, e0.root, c, r),
            (fcode::ALLREDUCE, false) => generated::MPI_Allreduce(s, rv, cnt, t, op, c),
            (fcode::ALLREDUCE, true) => generated::MPI_Iallreduce(s, rv, cnt, t, op, c, r),
            (fcode::SCAN, false) => generated::MPI_Scan(s, rv, cnt, t, op, c),
            (fcode::SCAN, true) => generated::MPI_Iscan(s, rv, cnt, t, op, c, r),
            (fcode::EXSCAN, false) => generated::MPI_Exscan(s, rv, cnt, t, op, c),
            (fcode::EXSCAN, true) => generated::MPI_Iexscan(s, rv, cnt, t, op, c, r),
            (_, false) => generated::MPI_Reduce_scatter_block(s, rv, cnt, t, op, c),
            (_, true) => generated::MPI_Ireduce_scatter_block(s, rv, cnt, t, op, c, r),
        };
    }
    p.buf(sb);
    p.buf(rb);
    p
}

/// `MPI_Reduce_scatter`: the per-member counts from a live member's entry.
fn reduce_scatter(at: &At, e0: &Desc) -> Option<Pending> {
    let (c, mut p) = (at.c, Pending::empty());
    let (t, m) = dt(e0.send.ty);
    let counts: Vec<c_int> = e0.peers.iter().map(|w| peer_recv(*w) * m).collect();
    if counts.len() != at.n {
        return None;
    }
    let total: i32 = e0.peers.iter().map(|w| peer_recv(*w)).sum();
    let mut sb = buf(total, e0.send.ty);
    let mut rb = buf(total, e0.send.ty);
    let op = op_for(e0.op, e0.send.ty);
    let (s, rv) = (sb.as_mut_ptr() as *const c_void, rb.as_mut_ptr() as *mut c_void);
    // SAFETY: `counts` has one entry per member; `sb` and `rb` hold their sum of
    // elements of `t`; all three are kept in `p` (module doc).
    unsafe {
        if at.nb {
            generated::MPI_Ireduce_scatter(s, rv, counts.as_ptr(), t, op, c, &mut p.req);
        } else {
            generated::MPI_Reduce_scatter(s, rv, counts.as_ptr(), t, op, c);
        }
    }
    p.buf(sb);
    p.buf(rb);
    p.ints(counts);
    Some(p)
}

/// `MPI_Gather` and `MPI_Scatter`: one uniform count ([`uniform_spec`]).
fn gather_scatter(at: &At, f: u32, e0: &Desc, entries: &[Option<Desc>]) -> Pending {
    let (c, n, me, mut p) = (at.c, at.n, at.me, Pending::empty());
    let root = e0.root as usize;
    // Gather: everyone sends what the root receives per rank; scatter: the reverse.
    let s = uniform_spec(entries, root, f == fcode::GATHER);
    let (t, m) = dt(s.ty);
    let cnt = s.count * m;
    let mut one = buf(s.count, s.ty);
    let mut all = buf(if me == root { s.count * n as i32 } else { 0 }, s.ty);
    let (op, ap) = (one.as_mut_ptr() as *mut c_void, all.as_mut_ptr() as *mut c_void);
    let (rt, r) = (root as c_int, &mut p.req);
    // SAFETY: `one` holds `cnt` elements of `t`, `all` (significant at the root
    // only) n times that; both are kept in `p` (module doc).
    unsafe {
        match (f == fcode::GATHER, at.nb) {
            (true, false) => generated::MPI_Gather(op, cnt, t, ap, cnt, t, rt, c),
            (true, true) => generated::MPI_Igather(op, cnt, t, ap, cnt, t, rt, c, r),
            (false, false) => generated::MPI_Scatter(ap, cnt, t, op, cnt, t, rt, c),
            (false, true) => generated::MPI_Iscatter(ap, cnt, t, op, cnt, t, rt, c, r),
        };
    }
    p.buf(one);
    p.buf(all);
    p
}

/// `MPI_Gatherv` and `MPI_Scatterv`: at the root the live members' counts, elsewhere
/// the root's count for this rank.
fn gatherv_scatterv(at: &At, f: u32, e0: &Desc, entries: &[Option<Desc>]) -> Pending {
    let (c, n, me, mut p) = (at.c, at.n, at.me, Pending::empty());
    let root = e0.root as usize;
    let gather = f == fcode::GATHERV;
    // Type: the live members' element type on the side that talks to us.
    let ty = entries
        .iter()
        .enumerate()
        .find_map(|(i, e)| e.as_ref().map(|e| if (i == root) == gather { e.recv.ty } else { e.send.ty }))
        .unwrap_or(e0.send.ty);
    let (t, m) = dt(ty);
    let mut mine = 0;
    let mut counts = vec![0 as c_int; n];
    if me == root {
        for (i, e) in entries.iter().enumerate() {
            if let Some(e) = e {
                counts[i] = if gather { e.send.count } else { e.recv.count } * m;
            }
        }
    } else if let Some(Some(re)) = entries.get(root) {
        if let Some(w) = re.peers.get(me) {
            mine = if gather { peer_recv(*w) } else { peer_send(*w) } * m;
        }
    }
    let displs = prefix(&counts);
    let total: i32 = counts.iter().sum();
    let mut one = buf(mine.max(1), ty);
    let mut all = buf(total.max(1), ty);
    let (op, ap) = (one.as_mut_ptr() as *mut c_void, all.as_mut_ptr() as *mut c_void);
    let (rt, r) = (root as c_int, &mut p.req);
    let (cp, dp) = (counts.as_ptr(), displs.as_ptr());
    // SAFETY: `counts` and `displs` have one entry per member; `all` holds at
    // least the sum of `counts` elements of `t` and `one` at least `mine` (`buf`
    // sizes m times more); all are kept in `p` (module doc).
    unsafe {
        match (gather, at.nb) {
            (true, false) => generated::MPI_Gatherv(op, mine, t, ap, cp, dp, t, rt, c),
            (true, true) => generated::MPI_Igatherv(op, mine, t, ap, cp, dp, t, rt, c, r),
            (false, false) => generated::MPI_Scatterv(ap, cp, dp, t, op, mine, t, rt, c),
            (false, true) => generated::MPI_Iscatterv(ap, cp, dp, t, op, mine, t, rt, c, r),
        };
    }
    p.buf(one);
    p.buf(all);
    p.ints(counts);
    p.ints(displs);
    p
}

/// `MPI_Allgather` and `MPI_Alltoall`: the live members' receive count.
fn allgather_alltoall(at: &At, f: u32, e0: &Desc) -> Pending {
    let (c, n, mut p) = (at.c, at.n, Pending::empty());
    let s = e0.recv;
    let (t, m) = dt(s.ty);
    let cnt = s.count * m;
    let per = if f == fcode::ALLTOALL { n as i32 } else { 1 };
    let mut sb = buf(s.count * per, s.ty);
    let mut rb = buf(s.count * n as i32, s.ty);
    let (sp, rp) = (sb.as_mut_ptr() as *const c_void, rb.as_mut_ptr() as *mut c_void);
    let r = &mut p.req;
    // SAFETY: `sb` holds `cnt` elements of `t` per destination, `rb` `cnt` per
    // member; both are kept in `p` (module doc).
    unsafe {
        match (f == fcode::ALLGATHER, at.nb) {
            (true, false) => generated::MPI_Allgather(sp, cnt, t, rp, cnt, t, c),
            (true, true) => generated::MPI_Iallgather(sp, cnt, t, rp, cnt, t, c, r),
            (false, false) => generated::MPI_Alltoall(sp, cnt, t, rp, cnt, t, c),
            (false, true) => generated::MPI_Ialltoall(sp, cnt, t, rp, cnt, t, c, r),
        };
    }
    p.buf(sb);
    p.buf(rb);
    p
}

/// `MPI_Allgatherv`: the per-member counts from a live member's entry.
fn allgatherv(at: &At, e0: &Desc) -> Option<Pending> {
    let (c, mut p) = (at.c, Pending::empty());
    let (t, m) = dt(e0.recv.ty);
    let counts: Vec<c_int> = e0.peers.iter().map(|w| peer_recv(*w) * m).collect();
    if counts.len() != at.n {
        return None;
    }
    let displs = prefix(&counts);
    let total: i32 = counts.iter().sum();
    let mine = counts[at.me];
    let mut sb = vec![0u8; (mine.max(1) as usize) * elem(t)];
    let mut rb = vec![0u8; (total.max(1) as usize) * elem(t)];
    let (sp, rp) = (sb.as_mut_ptr() as *const c_void, rb.as_mut_ptr() as *mut c_void);
    // SAFETY: `counts` and `displs` have one entry per member; `sb` holds `mine`
    // and `rb` their sum of elements of `t` by its extent; all are kept in `p`.
    unsafe {
        if at.nb {
            generated::MPI_Iallgatherv(sp, mine, t, rp, counts.as_ptr(), displs.as_ptr(), t, c, &mut p.req);
        } else {
            generated::MPI_Allgatherv(sp, mine, t, rp, counts.as_ptr(), displs.as_ptr(), t, c);
        }
    }
    p.buf(sb);
    p.buf(rb);
    p.ints(counts);
    p.ints(displs);
    Some(p)
}

/// What a dummy sends to and receives from each member in an alltoallv/w.
struct PerPeer {
    sc: Vec<c_int>,
    rc: Vec<c_int>,
    st: Vec<MPI_Datatype>,
    rt: Vec<MPI_Datatype>,
    /// The v form's one element type (the first live member's receive type).
    ty_v: Option<u32>,
}

/// Per peer j: we send what j expects from us and receive what j sends us.
fn per_peer(at: &At, w: bool, entries: &[Option<Desc>]) -> PerPeer {
    let (n, me) = (at.n, at.me);
    let mut x = PerPeer {
        sc: vec![0 as c_int; n],
        rc: vec![0 as c_int; n],
        st: vec![transport::dt_byte(); n],
        rt: vec![transport::dt_byte(); n],
        ty_v: None,
    };
    for (j, e) in entries.iter().enumerate() {
        let Some(e) = e else { continue };
        let Some(pw) = e.peers.get(me) else { continue };
        if w {
            let tw = e.peer_types.get(me).copied().unwrap_or(0);
            let (t_s, m_s) = dt((tw >> 32) as u32);
            let (t_r, m_r) = dt(tw as u32);
            x.sc[j] = peer_recv(*pw) * m_s;
            x.rc[j] = peer_send(*pw) * m_r;
            x.st[j] = t_s;
            x.rt[j] = t_r;
        } else {
            let ty = *x.ty_v.get_or_insert(e.recv.ty);
            let (_, m) = dt(ty);
            x.sc[j] = peer_recv(*pw) * m;
            x.rc[j] = peer_send(*pw) * m;
        }
    }
    x
}

/// `MPI_Alltoallv` and `MPI_Alltoallw` ([`per_peer`]).
fn alltoallv_w(at: &At, f: u32, e0: &Desc, entries: &[Option<Desc>]) -> Pending {
    let x = per_peer(at, f == fcode::ALLTOALLW, entries);
    if f == fcode::ALLTOALLW {
        alltoallw(at, x)
    } else {
        let (t, _) = dt(x.ty_v.unwrap_or(e0.recv.ty));
        alltoallv(at, x, t)
    }
}

fn alltoallw(at: &At, x: PerPeer) -> Pending {
    let (c, mut p) = (at.c, Pending::empty());
    let PerPeer { sc, rc, st, rt, .. } = x;
    // Alltoallw displacements are in bytes.
    let sd = prefix_bytes(&sc, &st);
    let rd = prefix_bytes(&rc, &rt);
    let sbytes = total_bytes(&sc, &st);
    let rbytes = total_bytes(&rc, &rt);
    let mut sb = vec![0u8; sbytes.max(8)];
    let mut rb = vec![0u8; rbytes.max(8)];
    let (sp, rp) = (sb.as_mut_ptr() as *const c_void, rb.as_mut_ptr() as *mut c_void);
    let (a, b, x, y) = (sc.as_ptr(), sd.as_ptr(), rc.as_ptr(), rd.as_ptr());
    // SAFETY: all six arrays have one entry per member; `sb` and `rb` hold the
    // byte sums of counts times extents the displacements walk through; all are
    // kept in `p` (module doc).
    unsafe {
        if at.nb {
            generated::MPI_Ialltoallw(sp, a, b, st.as_ptr(), rp, x, y, rt.as_ptr(), c, &mut p.req);
        } else {
            generated::MPI_Alltoallw(sp, a, b, st.as_ptr(), rp, x, y, rt.as_ptr(), c);
        }
    }
    p.buf(sb);
    p.buf(rb);
    for v in [sc, rc, sd, rd] {
        p.ints(v);
    }
    p.types(st);
    p.types(rt);
    p
}

fn alltoallv(at: &At, x: PerPeer, t: MPI_Datatype) -> Pending {
    let (c, mut p) = (at.c, Pending::empty());
    let PerPeer { sc, rc, .. } = x;
    let sd = prefix(&sc);
    let rd = prefix(&rc);
    let es = elem(t);
    let mut sb = vec![0u8; (sc.iter().sum::<i32>().max(1) as usize) * es];
    let mut rb = vec![0u8; (rc.iter().sum::<i32>().max(1) as usize) * es];
    let (sp, rp) = (sb.as_mut_ptr() as *const c_void, rb.as_mut_ptr() as *mut c_void);
    let (a, b, x, y) = (sc.as_ptr(), sd.as_ptr(), rc.as_ptr(), rd.as_ptr());
    // SAFETY: the four arrays have one entry per member; `sb` and `rb` hold the
    // sums of their counts of `t` by its extent; all are kept in `p` (module doc).
    unsafe {
        if at.nb {
            generated::MPI_Ialltoallv(sp, a, b, t, rp, x, y, t, c, &mut p.req);
        } else {
            generated::MPI_Alltoallv(sp, a, b, t, rp, x, y, t, c);
        }
    }
    p.buf(sb);
    p.buf(rb);
    for v in [sc, rc, sd, rd] {
        p.ints(v);
    }
    p
}

fn elem(t: MPI_Datatype) -> usize {
    let (mut lb, mut ext) = (0 as MPI_Aint, 0 as MPI_Aint);
    env::type_get_extent(t, &mut lb, &mut ext);
    ext.max(1) as usize
}

fn prefix(counts: &[c_int]) -> Vec<c_int> {
    let mut acc = 0;
    counts
        .iter()
        .map(|x| {
            let d = acc;
            acc += x;
            d
        })
        .collect()
}

fn prefix_bytes(counts: &[c_int], types: &[MPI_Datatype]) -> Vec<c_int> {
    let mut acc = 0usize;
    counts
        .iter()
        .zip(types)
        .map(|(c, t)| {
            let d = acc;
            acc += (*c).max(0) as usize * elem(*t);
            d as c_int
        })
        .collect()
}

fn total_bytes(counts: &[c_int], types: &[MPI_Datatype]) -> usize {
    counts.iter().zip(types).map(|(c, t)| (*c).max(0) as usize * elem(*t)).sum()
}
