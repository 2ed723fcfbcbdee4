//! Joining a collective with dummy data (GUIDE principle 3: "the dead stay helpful").
//!
//! Used by a simulated-dead rank for every collective the survivors enter after its
//! death, and by a live rank catching up on a revoked communicator (collectives it
//! skipped with `MPI_ERR_REVOKED` while others were already inside). The dummy
//! participant calls the *same* MPI function (blocking or non-blocking, because MPI
//! never matches one with the other) with buffers of the right size, derived from
//! the other members' log entries ([`crate::engine::describe`]).
//!
//! Counts between two dummy participants are zero where MPI allows per-pair counts
//! (the v/w variants): neither has an entry to read the other's counts from, so
//! both use zero and still agree.

use crate::engine::describe::{self, fcode, peer_recv, peer_send, Desc, Spec, TY_BYTES};
use crate::transport::{self, mpi};
use std::os::raw::{c_int, c_void};

/// Buffers and request of a non-blocking dummy join, kept until it completes.
pub struct Pending {
    pub req: mpi::MPI_Request,
    _bufs: Vec<Vec<u8>>,
    _ints: Vec<Vec<c_int>>,
    _types: Vec<Vec<mpi::MPI_Datatype>>,
}
unsafe impl Send for Pending {}

impl Pending {
    /// The real request and what must live until it completes.
    pub fn into_parts(self) -> (mpi::MPI_Request, Box<dyn std::any::Any + Send>) {
        let req = self.req;
        (req, Box::new(PendingBuffers(self._bufs, self._ints, self._types)))
    }
}

/// The buffers of a dummy join handed over with its request.
#[allow(dead_code)] // held, never read: MPI reads and writes them
struct PendingBuffers(Vec<Vec<u8>>, Vec<Vec<c_int>>, Vec<Vec<mpi::MPI_Datatype>>);
// Only touched (dropped) by the thread that calls MPI.
unsafe impl Send for PendingBuffers {}

/// The communicator a dummy joins on, from the joiner's point of view, and the
/// collective's number there.
pub struct Who<'a> {
    pub real: mpi::MPI_Comm,
    pub rank: usize,
    pub size: usize,
    /// Job-wide id and world ranks of the members (MPIFT's own barrier).
    pub id: u64,
    pub members: &'a [u32],
    pub seq: u64,
}

/// Outcome of a join: done (blocking), pending (non-blocking), or impossible.
pub enum Joined {
    Done,
    Pending(Pending),
    Unsupported,
}

fn buf(count: i32, ty: u32) -> Vec<u8> {
    vec![0u8; describe::bytes_for(count, ty).max(8)]
}

fn dt(ty: u32) -> (mpi::MPI_Datatype, i32) {
    describe::type_for(ty)
}

/// The reduction a dummy uses: the predefined op, or a no-op with the same
/// commutativity; on a derived type (sent as bytes) always the no-op.
fn op_for(code: u32, ty: u32) -> mpi::MPI_Op {
    if ty & TY_BYTES == 0 {
        if let Some(op) = describe::predef_op(code) {
            return op;
        }
    }
    transport::noop_op(code != describe::OP_USER_NONCOMMUTE)
}

/// Some entry, to read the common parameters from.
fn any<'a>(entries: &'a [Option<Desc>]) -> Option<&'a Desc> {
    entries.iter().flatten().next()
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

/// Joins collective `d` (`d.fcode` decides which) on `who`, where `entries[r]` is
/// member r's own log entry for it (None for dead or catching-up members).
pub fn join(who: &Who, d: &Desc, entries: &[Option<Desc>]) -> Joined {
    transport::stats::bump(&transport::stats::DUMMY_JOINS);
    let nb = d.fcode & fcode::NB != 0;
    let f = d.fcode & !fcode::NB;
    let c = who.real;
    let n = who.size;
    let me = who.rank;
    let mut p = Pending { req: transport::request_null(), _bufs: vec![], _ints: vec![], _types: vec![] };
    let r = &mut p.req as *mut mpi::MPI_Request;
    macro_rules! call {
        ($blocking:expr, $nonblocking:expr) => {{
            unsafe {
                if nb {
                    $nonblocking;
                } else {
                    $blocking;
                }
            }
        }};
    }
    let e0 = any(entries).cloned().unwrap_or_else(|| d.clone());
    match f {
        fcode::BARRIER if !nb && crate::engine::barrier::own() => {
            crate::engine::barrier::join(who.id, who.seq, me, who.members);
        }
        fcode::BARRIER => call!(mpi::MPI_Barrier(c), mpi::MPI_Ibarrier(c, r)),
        fcode::ALLREDUCE if !nb && crate::engine::allreduce::eligible(&e0).is_some() => {
            crate::engine::allreduce::join(who.id, who.seq, me, who.members, &e0);
        }
        fcode::BCAST => {
            let (t, m) = dt(e0.send.ty);
            let mut b = buf(e0.send.count, e0.send.ty);
            let bp = b.as_mut_ptr() as *mut c_void;
            let (cnt, root) = (e0.send.count * m, e0.root);
            call!(mpi::MPI_Bcast(bp, cnt, t, root, c), mpi::MPI_Ibcast(bp, cnt, t, root, c, r));
            p._bufs.push(b);
        }
        fcode::REDUCE | fcode::ALLREDUCE | fcode::SCAN | fcode::EXSCAN | fcode::REDUCE_SCATTER_BLOCK => {
            let (t, m) = dt(e0.send.ty);
            let cnt = e0.send.count * m;
            let total = if f == fcode::REDUCE_SCATTER_BLOCK { e0.send.count * n as i32 } else { e0.send.count };
            let mut sb = buf(total, e0.send.ty);
            let mut rb = buf(total, e0.send.ty);
            let (s, rv) = (sb.as_mut_ptr() as *const c_void, rb.as_mut_ptr() as *mut c_void);
            let op = op_for(e0.op, e0.send.ty);
            match f {
                fcode::REDUCE => call!(
                    mpi::MPI_Reduce(s, rv, cnt, t, op, e0.root, c),
                    mpi::MPI_Ireduce(s, rv, cnt, t, op, e0.root, c, r)
                ),
                fcode::ALLREDUCE => call!(
                    mpi::MPI_Allreduce(s, rv, cnt, t, op, c),
                    mpi::MPI_Iallreduce(s, rv, cnt, t, op, c, r)
                ),
                fcode::SCAN => call!(mpi::MPI_Scan(s, rv, cnt, t, op, c), mpi::MPI_Iscan(s, rv, cnt, t, op, c, r)),
                fcode::EXSCAN => {
                    call!(mpi::MPI_Exscan(s, rv, cnt, t, op, c), mpi::MPI_Iexscan(s, rv, cnt, t, op, c, r))
                }
                _ => call!(
                    mpi::MPI_Reduce_scatter_block(s, rv, cnt, t, op, c),
                    mpi::MPI_Ireduce_scatter_block(s, rv, cnt, t, op, c, r)
                ),
            }
            p._bufs.push(sb);
            p._bufs.push(rb);
        }
        fcode::REDUCE_SCATTER => {
            let (t, m) = dt(e0.send.ty);
            let counts: Vec<c_int> = e0.peers.iter().map(|w| peer_recv(*w) * m).collect();
            if counts.len() != n {
                return Joined::Unsupported;
            }
            let total: i32 = e0.peers.iter().map(|w| peer_recv(*w)).sum();
            let mut sb = buf(total, e0.send.ty);
            let mut rb = buf(total, e0.send.ty);
            let op = op_for(e0.op, e0.send.ty);
            let (s, rv) = (sb.as_mut_ptr() as *const c_void, rb.as_mut_ptr() as *mut c_void);
            call!(
                mpi::MPI_Reduce_scatter(s, rv, counts.as_ptr(), t, op, c),
                mpi::MPI_Ireduce_scatter(s, rv, counts.as_ptr(), t, op, c, r)
            );
            p._bufs.push(sb);
            p._bufs.push(rb);
            p._ints.push(counts);
        }
        fcode::GATHER | fcode::SCATTER => {
            let root = e0.root as usize;
            // Gather: everyone sends what the root receives per rank; scatter: the reverse.
            let s = uniform_spec(entries, root, f == fcode::GATHER);
            let (t, m) = dt(s.ty);
            let cnt = s.count * m;
            let mut one = buf(s.count, s.ty);
            let mut all = buf(if me == root { s.count * n as i32 } else { 0 }, s.ty);
            let (op, ap) = (one.as_mut_ptr() as *mut c_void, all.as_mut_ptr() as *mut c_void);
            if f == fcode::GATHER {
                call!(
                    mpi::MPI_Gather(op, cnt, t, ap, cnt, t, root as c_int, c),
                    mpi::MPI_Igather(op, cnt, t, ap, cnt, t, root as c_int, c, r)
                );
            } else {
                call!(
                    mpi::MPI_Scatter(ap, cnt, t, op, cnt, t, root as c_int, c),
                    mpi::MPI_Iscatter(ap, cnt, t, op, cnt, t, root as c_int, c, r)
                );
            }
            p._bufs.push(one);
            p._bufs.push(all);
        }
        fcode::GATHERV | fcode::SCATTERV => {
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
            let (cp, dp) = (counts.as_ptr(), displs.as_ptr());
            let rt = root as c_int;
            if gather {
                call!(
                    mpi::MPI_Gatherv(op, mine, t, ap, cp, dp, t, rt, c),
                    mpi::MPI_Igatherv(op, mine, t, ap, cp, dp, t, rt, c, r)
                );
            } else {
                call!(
                    mpi::MPI_Scatterv(ap, cp, dp, t, op, mine, t, rt, c),
                    mpi::MPI_Iscatterv(ap, cp, dp, t, op, mine, t, rt, c, r)
                );
            }
            p._bufs.push(one);
            p._bufs.push(all);
            p._ints.push(counts);
            p._ints.push(displs);
        }
        fcode::ALLGATHER | fcode::ALLTOALL => {
            let s = e0.recv;
            let (t, m) = dt(s.ty);
            let cnt = s.count * m;
            let per = if f == fcode::ALLTOALL { n as i32 } else { 1 };
            let mut sb = buf(s.count * per, s.ty);
            let mut rb = buf(s.count * n as i32, s.ty);
            let (sp, rp) = (sb.as_mut_ptr() as *const c_void, rb.as_mut_ptr() as *mut c_void);
            if f == fcode::ALLGATHER {
                call!(
                    mpi::MPI_Allgather(sp, cnt, t, rp, cnt, t, c),
                    mpi::MPI_Iallgather(sp, cnt, t, rp, cnt, t, c, r)
                );
            } else {
                call!(
                    mpi::MPI_Alltoall(sp, cnt, t, rp, cnt, t, c),
                    mpi::MPI_Ialltoall(sp, cnt, t, rp, cnt, t, c, r)
                );
            }
            p._bufs.push(sb);
            p._bufs.push(rb);
        }
        fcode::ALLGATHERV => {
            let (t, m) = dt(e0.recv.ty);
            let counts: Vec<c_int> = e0.peers.iter().map(|w| peer_recv(*w) * m).collect();
            if counts.len() != n {
                return Joined::Unsupported;
            }
            let displs = prefix(&counts);
            let total: i32 = counts.iter().sum();
            let mine = counts[me];
            let mut sb = vec![0u8; (mine.max(1) as usize) * elem(t)];
            let mut rb = vec![0u8; (total.max(1) as usize) * elem(t)];
            let (sp, rp) = (sb.as_mut_ptr() as *const c_void, rb.as_mut_ptr() as *mut c_void);
            call!(
                mpi::MPI_Allgatherv(sp, mine, t, rp, counts.as_ptr(), displs.as_ptr(), t, c),
                mpi::MPI_Iallgatherv(sp, mine, t, rp, counts.as_ptr(), displs.as_ptr(), t, c, r)
            );
            p._bufs.push(sb);
            p._bufs.push(rb);
            p._ints.push(counts);
            p._ints.push(displs);
        }
        fcode::ALLTOALLV | fcode::ALLTOALLW => {
            // Per peer j: we send what j expects from us and receive what j sends us.
            let w = f == fcode::ALLTOALLW;
            let mut sc = vec![0 as c_int; n];
            let mut rc = vec![0 as c_int; n];
            let mut st = vec![transport::dt_byte(); n];
            let mut rt = vec![transport::dt_byte(); n];
            let mut ty_v = None;
            for (j, e) in entries.iter().enumerate() {
                let Some(e) = e else { continue };
                let Some(pw) = e.peers.get(me) else { continue };
                if w {
                    let tw = e.peer_types.get(me).copied().unwrap_or(0);
                    let (t_s, m_s) = dt((tw >> 32) as u32);
                    let (t_r, m_r) = dt(tw as u32);
                    sc[j] = peer_recv(*pw) * m_s;
                    rc[j] = peer_send(*pw) * m_r;
                    st[j] = t_s;
                    rt[j] = t_r;
                } else {
                    let ty = *ty_v.get_or_insert(e.recv.ty);
                    let (_, m) = dt(ty);
                    sc[j] = peer_recv(*pw) * m;
                    rc[j] = peer_send(*pw) * m;
                }
            }
            if w {
                // Alltoallw displacements are in bytes.
                let sd = prefix_bytes(&sc, &st);
                let rd = prefix_bytes(&rc, &rt);
                let sbytes = total_bytes(&sc, &st);
                let rbytes = total_bytes(&rc, &rt);
                let mut sb = vec![0u8; sbytes.max(8)];
                let mut rb = vec![0u8; rbytes.max(8)];
                let (sp, rp) = (sb.as_mut_ptr() as *const c_void, rb.as_mut_ptr() as *mut c_void);
                call!(
                    mpi::MPI_Alltoallw(sp, sc.as_ptr(), sd.as_ptr(), st.as_ptr(), rp, rc.as_ptr(), rd.as_ptr(), rt.as_ptr(), c),
                    mpi::MPI_Ialltoallw(
                        sp,
                        sc.as_ptr(),
                        sd.as_ptr(),
                        st.as_ptr(),
                        rp,
                        rc.as_ptr(),
                        rd.as_ptr(),
                        rt.as_ptr(),
                        c,
                        r
                    )
                );
                p._bufs.push(sb);
                p._bufs.push(rb);
                p._ints.extend([sc, rc, sd, rd]);
                p._types.extend([st, rt]);
            } else {
                let (t, _) = dt(ty_v.unwrap_or(e0.recv.ty));
                let sd = prefix(&sc);
                let rd = prefix(&rc);
                let es = elem(t);
                let mut sb = vec![0u8; (sc.iter().sum::<i32>().max(1) as usize) * es];
                let mut rb = vec![0u8; (rc.iter().sum::<i32>().max(1) as usize) * es];
                let (sp, rp) = (sb.as_mut_ptr() as *const c_void, rb.as_mut_ptr() as *mut c_void);
                call!(
                    mpi::MPI_Alltoallv(sp, sc.as_ptr(), sd.as_ptr(), t, rp, rc.as_ptr(), rd.as_ptr(), t, c),
                    mpi::MPI_Ialltoallv(sp, sc.as_ptr(), sd.as_ptr(), t, rp, rc.as_ptr(), rd.as_ptr(), t, c, r)
                );
                p._bufs.push(sb);
                p._bufs.push(rb);
                p._ints.extend([sc, rc, sd, rd]);
            }
        }
        fcode::COMM_DUP => {
            let mut nc = transport::comm_null();
            unsafe { mpi::MPI_Comm_dup(c, &mut nc) };
            free_comm(nc);
        }
        fcode::INTERCOMM_MERGE => {
            let mut nc = transport::comm_null();
            // SAFETY: the intercommunicator being joined; `nc` an out, freed.
            unsafe { mpi::MPI_Intercomm_merge(c, e0.extra[0] as c_int, &mut nc) };
            free_comm(nc);
        }
        fcode::COMM_SPLIT => {
            let mut nc = transport::comm_null();
            unsafe { mpi::MPI_Comm_split(c, transport::undefined(), 0, &mut nc) };
            free_comm(nc);
        }
        fcode::COMM_SPLIT_TYPE => {
            let mut nc = transport::comm_null();
            unsafe { mpi::MPI_Comm_split_type(c, transport::undefined(), 0, transport::info_null(), &mut nc) };
            free_comm(nc);
        }
        fcode::COMM_CREATE => {
            let ranks: Vec<c_int> = e0.peers.iter().map(|w| *w as u32 as c_int).collect();
            let mut g = unsafe { std::mem::zeroed() };
            let mut sub = unsafe { std::mem::zeroed() };
            let mut nc = transport::comm_null();
            unsafe {
                mpi::MPI_Comm_group(c, &mut g);
                mpi::MPI_Group_incl(g, ranks.len() as c_int, ranks.as_ptr(), &mut sub);
                mpi::MPI_Comm_create(c, sub, &mut nc);
                mpi::MPI_Group_free(&mut sub);
                mpi::MPI_Group_free(&mut g);
            }
            free_comm(nc);
        }
        fcode::CART_CREATE => {
            let nd = e0.extra[0] as c_int;
            let dims: Vec<c_int> = e0.peers.iter().map(|w| peer_send(*w)).collect();
            let per: Vec<c_int> = e0.peers.iter().map(|w| peer_recv(*w)).collect();
            let mut nc = transport::comm_null();
            unsafe { mpi::MPI_Cart_create(c, nd, dims.as_ptr(), per.as_ptr(), e0.extra[1] as c_int, &mut nc) };
            free_comm(nc);
        }
        fcode::CART_SUB => {
            let remain: Vec<c_int> = e0.peers.iter().map(|w| peer_send(*w)).collect();
            let mut nc = transport::comm_null();
            unsafe { mpi::MPI_Cart_sub(c, remain.as_ptr(), &mut nc) };
            free_comm(nc);
        }
        fcode::NEIGHBOR_ALLGATHER..=fcode::NEIGHBOR_ALLTOALLW
        | fcode::GRAPH_CREATE
        | fcode::DIST_GRAPH_CREATE
        | fcode::DIST_GRAPH_CREATE_ADJACENT => return crate::engine::topo::join(who, f, nb, &e0, entries),
        fcode::COMM_IDUP | fcode::INTERCOMM_CREATE => return crate::engine::ctor_join::join(who, f, &e0, entries),
        _ => return Joined::Unsupported,
    }
    if nb {
        Joined::Pending(p)
    } else {
        Joined::Done
    }
}

fn free_comm(mut nc: mpi::MPI_Comm) {
    transport::stats::transient_comm(nc != transport::comm_null());
    if nc != transport::comm_null() {
        unsafe { mpi::MPI_Comm_free(&mut nc) };
    }
}

fn elem(t: mpi::MPI_Datatype) -> usize {
    let (mut lb, mut ext) = (0 as mpi::MPI_Aint, 0 as mpi::MPI_Aint);
    unsafe { mpi::MPI_Type_get_extent(t, &mut lb, &mut ext) };
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

fn prefix_bytes(counts: &[c_int], types: &[mpi::MPI_Datatype]) -> Vec<c_int> {
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

fn total_bytes(counts: &[c_int], types: &[mpi::MPI_Datatype]) -> usize {
    counts.iter().zip(types).map(|(c, t)| (*c).max(0) as usize * elem(*t)).sum()
}

impl Pending {
    /// A non-blocking join started elsewhere (engine::topo), with the buffers and
    /// arrays MPI uses until it completes.
    pub(crate) fn holding(
        req: mpi::MPI_Request,
        bufs: Vec<Vec<u8>>,
        ints: Vec<Vec<c_int>>,
        types: Vec<Vec<mpi::MPI_Datatype>>,
    ) -> Pending {
        Pending { req, _bufs: bufs, _ints: ints, _types: types }
    }
}
