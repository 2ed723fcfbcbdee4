//! Joining a collective with dummy data (GUIDE principle 3: "the dead stay helpful").
//!
//! Used by a simulated-dead rank for every collective the survivors enter after its
//! death, and by a live rank catching up on a revoked communicator (collectives it
//! skipped with `MPI_ERR_REVOKED` while others were already inside). The dummy
//! participant calls the *same* MPI function (blocking or non-blocking, because MPI
//! never matches one with the other) with buffers of the right size, derived from
//! the other members' log entries ([`crate::engine::colls::describe`]).
//!
//! Counts between two dummy participants are zero where MPI allows per-pair counts
//! (the v/w variants): neither has an entry to read the other's counts from, so
//! both use zero and still agree.
//!
//! This file holds the dispatch ([`join`]), the communicator constructors a dummy
//! joins, and the buffers kept while a non-blocking join runs; the collectives
//! proper are in [`crate::engine::join::join_colls`], the topology ones in
//! [`crate::engine::join::topo`], `MPI_Comm_idup` and `MPI_Intercomm_create` in
//! [`crate::engine::join::ctor_join`].

use crate::engine::join::join_types::{free_comm, At, Joined, Pending, Who};
use crate::engine::colls::describe::{fcode, peer_recv, peer_send, Desc};
use crate::engine::join::join_colls;
use crate::engine::join::standin;
use crate::protocol::part::Kind;
use crate::transport::{self, comm, MPI_Comm};
use std::os::raw::c_int;

/// Some entry, to read the common parameters from.
fn any<'a>(entries: &'a [Option<Desc>]) -> Option<&'a Desc> {
    entries.iter().flatten().next()
}

/// The one of MPIFT's own collectives that collective `fc` runs as, with the
/// bytes its messages carry, read from log entry `e`; None: the host's.
fn own_kind(fc: u32, e: &Desc) -> Option<(Kind, usize)> {
    match fc {
        fcode::BARRIER if crate::engine::base::settings::own_barrier() => Some((Kind::Barrier, 0)),
        fcode::ALLREDUCE => crate::engine::own::allreduce::eligible(e).map(|bytes| (Kind::Allreduce, bytes)),
        _ => None,
    }
}

/// Whether a dead rank's join of `d` blocks inside the host MPI until the other
/// members are there (a blocking host collective or constructor), rather than
/// starting a request or a part (engine::join::standin) or doing nothing. Those take
/// turns among dead ranks (engine::dead::turns).
pub fn blocks(d: &Desc) -> bool {
    d.fcode & fcode::NB == 0 && !matches!(d.fcode, fcode::COMM_IDUP | fcode::OPAQUE) && own_kind(d.fcode, d).is_none()
}

/// Joins collective `d` (`d.fcode` decides which) on `who`, where `entries[r]` is
/// member r's own log entry for it (None for dead or catching-up members).
pub fn join(who: &Who, d: &Desc, entries: &[Option<Desc>]) -> Joined {
    transport::stats::bump(&transport::stats::DUMMY_JOINS);
    let nb = d.fcode & fcode::NB != 0;
    let f = d.fcode & !fcode::NB;
    let at = At { c: who.real, n: who.size, me: who.rank, nb };
    let e0 = any(entries).cloned().unwrap_or_else(|| d.clone());
    if let Some((kind, bytes)) = own_kind(f, &e0).filter(|_| !nb) {
        match (who.standin, kind) {
            (true, _) => standin::start(kind, who.id, who.seq, at.me, who.members, bytes),
            (false, Kind::Barrier) => crate::engine::own::barrier::join(who.id, who.seq, at.me, who.members),
            (false, Kind::Allreduce) => crate::engine::own::allreduce::join(who.id, who.seq, at.me, who.members, &e0),
        }
        return at.outcome(Some(Pending::empty()));
    }
    match f {
        fcode::BARRIER..=fcode::EXSCAN => at.outcome(join_colls::join(&at, f, &e0, entries)),
        fcode::COMM_DUP..=fcode::CART_SUB | fcode::INTERCOMM_MERGE => {
            join_constructor(&at, f, &e0);
            at.outcome(Some(Pending::empty()))
        }
        fcode::NEIGHBOR_ALLGATHER..=fcode::NEIGHBOR_ALLTOALLW
        | fcode::GRAPH_CREATE
        | fcode::DIST_GRAPH_CREATE
        | fcode::DIST_GRAPH_CREATE_ADJACENT => crate::engine::join::topo::join(who, f, nb, &e0, entries),
        fcode::COMM_IDUP | fcode::INTERCOMM_CREATE => crate::engine::join::ctor_join::join(who, f, &e0, entries),
        _ => Joined::Unsupported,
    }
}

/// A dummy's part in a blocking communicator constructor `f` (`MPI_Comm_dup`,
/// `MPI_Intercomm_merge`, `MPI_Comm_split`, `MPI_Comm_split_type`,
/// `MPI_Comm_create`, `MPI_Cart_create`, `MPI_Cart_sub`): it takes no part in the
/// result and frees it at once.
fn join_constructor(at: &At, f: u32, e0: &Desc) {
    let c = at.c;
    let mut nc = transport::comm_null();
    match f {
        fcode::COMM_DUP => {
            comm::dup(c, &mut nc);
        }
        fcode::INTERCOMM_MERGE => {
            // The intercommunicator being joined, with the group's `high`.
            comm::intercomm_merge(c, e0.extra[0] as c_int, &mut nc);
        }
        fcode::COMM_SPLIT => {
            comm::split(c, transport::undefined(), 0, &mut nc);
        }
        fcode::COMM_SPLIT_TYPE => {
            comm::split_type(c, transport::undefined(), 0, transport::info_null(), &mut nc);
        }
        fcode::COMM_CREATE => join_comm_create(c, e0, &mut nc),
        fcode::CART_CREATE => {
            let nd = e0.extra[0] as c_int;
            let dims: Vec<c_int> = e0.peers.iter().map(|w| peer_send(*w)).collect();
            let per: Vec<c_int> = e0.peers.iter().map(|w| peer_recv(*w)).collect();
            comm::cart_create(c, nd, &dims, &per, e0.extra[1] as c_int, &mut nc);
        }
        fcode::CART_SUB => {
            let remain: Vec<c_int> = e0.peers.iter().map(|w| peer_send(*w)).collect();
            // SAFETY: `remain` has one entry per dimension of `c`: a live member
            // described this same Cartesian communicator with `MPI_Cartdim_get`
            // entries (describe::MPI_Cart_sub).
            unsafe { comm::cart_sub(c, &remain, &mut nc) };
        }
        _ => return,
    }
    free_comm(nc);
}

/// `MPI_Comm_create` with the group the live members named (as ranks of `c`).
fn join_comm_create(c: MPI_Comm, e0: &Desc, nc: &mut MPI_Comm) {
    let ranks: Vec<c_int> = e0.peers.iter().map(|w| *w as u32 as c_int).collect();
    let (mut g, mut sub) = (transport::zero_group(), transport::zero_group());
    comm::group(c, &mut g);
    comm::group_incl(g, &ranks, &mut sub);
    comm::create(c, sub, nc);
    comm::group_free(&mut sub);
    comm::group_free(&mut g);
}
