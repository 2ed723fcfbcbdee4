//! Communicator constructors that do not fit the generic `comm_new` wrapper
//! (MPI-3.1 §6.4.2, §6.6.2), with their descriptors and dead-rank joins.
//!
//! - `MPI_Comm_idup` hands out the new handle before the communicator is usable.
//!   MPIFT allocates the handle at once and registers the communicator at its first
//!   use after the request completed (`engine::registry::pending`), because only then may
//!   the real one be queried. A dead rank joins the idup with a real
//!   `MPI_Comm_idup`, waits for it (every live member has started it, so it
//!   completes) and frees the result.
//! - `MPI_Comm_create_group` is collective over the group only, not over the
//!   parent: it is therefore not a numbered collective of the parent (members
//!   outside the group would count differently), its id comes from the parent, the
//!   tag and the group, and a dead rank does not join it. It fails at once with
//!   `MPI_ERR_PROC_FAILED` when a member of the group is known dead. Over live
//!   ranks it goes ahead whatever failures the parent has, so that every member
//!   gives the same answer: Open MPI 5 ULFM refuses it once its detector has
//!   reported a failure in the parent, and creates it before, and members that
//!   disagree on that would leave the others blocked in it (MPICH's `ft/nbccoll`
//!   needs the creation). A member that does not know of a dead group member yet
//!   blocks (docs/ARCHITECTURE.md, "Not simulated").
//! - `MPI_Intercomm_create` is a collective of the local communicator: a dead
//!   non-leader joins with `MPI_COMM_NULL` as the peer communicator (not
//!   significant there); a dead leader uses the peer communicator another member
//!   named, if any did. The two groups derive their ids from different parents,
//!   so right after the creation every member, dead ones included, takes part in
//!   one `MPI_Allreduce(BAND)` of two words on the new intercommunicator, which
//!   gives each group the other's id and verdict (`engine::join::ctor_join::inter_id`); both then name it
//!   by the pair, and a group whose creation failed (a dead member) makes the other
//!   fail too, as the oracle fails at both. A revoke or an agreement on it needs one
//!   id at every member of both groups. (The only message MPIFT adds to a
//!   constructor, once per creation.)

use crate::engine::base::errors;
use crate::engine::base::runtime;
use crate::engine::base::errors::{Failure, Outcome, SIM_FT_ERR_PROC_FAILED, SIM_FT_ERR_REVOKED};
use crate::engine::base::handles::{CommRef, Sim_FT_MPI_Comm, Sim_FT_MPI_Request};
use crate::engine::colls::describe::{self, fcode, Desc};
use crate::engine::entry::hooks;
use crate::engine::registry::req_state::Kind;
use crate::engine::join::ctor_join::inter_id;
use crate::engine::join::join_types::free_comm;
use crate::engine::registry::pending::{self, PendingDup};
use crate::engine::{registry::args, registry::comm, news::news, registry::request, base::handles::Real};
use crate::transport::{self, MPI_Comm, MPI_Group};
use std::collections::HashMap;
use std::os::raw::c_int;
use std::sync::Mutex;

/// `MPI_Comm_idup`.
pub fn idup(c: Sim_FT_MPI_Comm, newcomm: *mut Sim_FT_MPI_Comm, req: *mut Sim_FT_MPI_Request) -> Outcome {
    let cr = args::comm_arg(c)?;
    errors::check_out_ptr(newcomm, &cr)?;
    errors::check_out_ptr(req, &cr)?;
    let desc = describe::unless_inter(&cr, || Desc { fcode: fcode::COMM_IDUP | fcode::NB, ..Desc::default() });
    hooks::coll_enter(&cr, &desc)?;
    let id = hooks::next_child_id(&cr);
    let errhandler = comm::read(c, |s| s.errhandler).expect("looked up above");
    let mut real = transport::comm_null();
    let mut real_req = transport::request_null();
    // SAFETY: `real` is read right after the call, before the request completes:
    // MPICH and Open MPI set the new handle before MPI_Comm_idup returns (the
    // communicator is registered only after completion, engine::registry::pending).
    let rc = unsafe { transport::comm::idup(cr.real, &mut real, &mut real_req) };
    hooks::leave(Kind::CollStart, &cr, rc)?;
    let h = comm::new_handle();
    let r = request::adopt(real_req, Kind::CollStart, &cr);
    let real_errhandler = Real(crate::calls::errhandler::real_for(errhandler.0));
    pending::push(PendingDup { handle: Real(h), real: Real(real), request: Real(r), errhandler, real_errhandler, id });
    // SAFETY: both checked non-null above; the program's out handles, which MPI
    // requires valid for writing.
    unsafe {
        *newcomm = h;
        *req = r;
    }
    Ok(())
}

/// Per (parent, group, tag): `MPI_Comm_create_group` calls so far. Every member of
/// the group makes the same calls in the same order, so the count is the same.
static GROUP_CALLS: Mutex<Option<HashMap<u64, u64>>> = Mutex::new(None);

/// World ranks of the members of `group`, a group of `cr`'s members, in group order
/// (`u32::MAX` for one that is not in `cr`).
fn in_parent(cr: &CommRef, group: MPI_Group) -> Vec<u32> {
    let mut gsize: c_int = 0;
    let mut pg = transport::group_empty();
    transport::comm::group_size(group, &mut gsize);
    transport::comm::group(cr.real, &mut pg);
    let n = gsize.max(0) as usize;
    let ranks: Vec<c_int> = (0..n as c_int).collect();
    let mut in_parent = vec![0 as c_int; n];
    transport::comm::group_translate_ranks(group, &ranks, pg, &mut in_parent);
    transport::comm::group_free(&mut pg);
    let members = comm::read(cr.handle, |s| s.members.clone()).unwrap_or_default();
    in_parent.iter().map(|r| members.get(*r as usize).copied().unwrap_or(u32::MAX)).collect()
}

/// Job-wide id of a communicator made by `MPI_Comm_create_group`.
fn group_child_id(cr: &CommRef, group: MPI_Group, tag: c_int) -> u64 {
    let mut key = comm::child_id(cr.id, tag as u32 as u64 | (1 << 42));
    for w in in_parent(cr, group) {
        key = comm::child_id(key, w as u64);
    }
    let mut g = GROUP_CALLS.lock().unwrap();
    let k = g.get_or_insert_with(HashMap::new).entry(key).or_insert(0);
    *k += 1;
    comm::child_id(key, *k)
}

/// `MPI_Comm_create_group`: refused on a revoked communicator and with a known
/// failure in the group; not logged (see the module documentation).
pub fn create_group(c: Sim_FT_MPI_Comm, group: MPI_Group, tag: c_int, newcomm: *mut Sim_FT_MPI_Comm) -> Outcome {
    let cr = args::comm_arg(c)?;
    errors::check_out_ptr(newcomm, &cr)?;
    news::refresh();
    let (revoked, failed) = comm::read(c, |s| (s.revoked, s.has_failed())).unwrap_or((false, false));
    if revoked {
        return Err(Failure::on(c, SIM_FT_ERR_REVOKED));
    }
    if failed && group_has_dead(&cr, group) {
        return Err(Failure::on(c, SIM_FT_ERR_PROC_FAILED));
    }
    let id = group_child_id(&cr, group, tag);
    let mut real = transport::comm_null();
    let rc = transport::comm::create_group(cr.real, group, tag, &mut real);
    Failure::check(rc, c)?;
    let adopted = comm::adopt(real, &cr, id);
    // SAFETY: checked non-null above; the program's out handle, which MPI
    // requires valid for writing.
    unsafe { *newcomm = adopted };
    Ok(())
}

/// A member of `group` (a group of `cr`'s members) is known dead here: from the
/// news, or as a known failure of `cr` (an agreement can report a death before
/// the dead rank's news lands here; MPIX_Comm_get_failed then lists it, and a
/// member that entered the real call with the dead rank in the group would hang
/// there while the others, refused, went on: unjoinable_dead on MPICH, where
/// their next `MPI_Comm_create_group` with the same tag even matched it).
fn group_has_dead(cr: &CommRef, group: MPI_Group) -> bool {
    let known = comm::read(cr.handle, |s| s.failed_world_ranks()).unwrap_or_default();
    in_parent(cr, group).iter().any(|w| runtime::is_dead(*w) || known.contains(w))
}

/// Descriptor of `MPI_Intercomm_create` on the local communicator: leaders, tag,
/// and the job-wide id of the peer communicator (0 where it was not given).
pub fn describe_intercomm_create(_c: &CommRef, local_leader: c_int, peer: MPI_Comm, remote_leader: c_int, tag: c_int) -> Desc {
    let peer_id = if peer == transport::comm_null() {
        0
    } else {
        comm::find_by_real(peer).and_then(|h| comm::read(h, |s| s.id)).unwrap_or(0)
    };
    Desc {
        fcode: fcode::INTERCOMM_CREATE,
        root: local_leader,
        extra: [remote_leader as u32 as u64, tag as u32 as u64, peer_id, 0],
        op: describe::OP_NONE,
        ..Desc::default()
    }
}

/// `MPI_Intercomm_create` (see the module comment).
pub fn intercomm_create(
    local: Sim_FT_MPI_Comm,
    local_leader: c_int,
    peer: Sim_FT_MPI_Comm,
    remote_leader: c_int,
    tag: c_int,
    newintercomm: *mut Sim_FT_MPI_Comm,
) -> Outcome {
    intercomm_create_ran(local, local_leader, peer, remote_leader, tag, newintercomm).0
}

/// [`intercomm_create`], and whether this process made the real call (a spawn
/// from spares must know whether its children's side was answered,
/// calls::spares).
pub(crate) fn intercomm_create_ran(
    local: Sim_FT_MPI_Comm,
    local_leader: c_int,
    peer: Sim_FT_MPI_Comm,
    remote_leader: c_int,
    tag: c_int,
    newintercomm: *mut Sim_FT_MPI_Comm,
) -> (Outcome, bool) {
    let entered = || -> Result<(CommRef, MPI_Comm), Failure> {
        let cr = args::comm_arg(local)?;
        let peer_r = args::comm_arg_or_null(peer)?;
        errors::check_out_ptr(newintercomm, &cr)?;
        let desc = describe::unless_inter(&cr, || describe_intercomm_create(&cr, local_leader, peer_r.real, remote_leader, tag));
        hooks::coll_enter(&cr, &desc)?;
        Ok((cr, peer_r.real))
    };
    match entered() {
        Err(f) => (Err(f), false),
        Ok((cr, peer_real)) => (created(&cr, local_leader, peer_real, remote_leader, tag, newintercomm), true),
    }
}

/// The part of [`intercomm_create`] after the entry: the real call (`peer`: the
/// real peer communicator), the verdict and id exchange, the new handle.
fn created(
    cr: &CommRef,
    local_leader: c_int,
    peer: MPI_Comm,
    remote_leader: c_int,
    tag: c_int,
    newintercomm: *mut Sim_FT_MPI_Comm,
) -> Outcome {
    let local_id = hooks::next_child_id(cr);
    let mut nc = transport::comm_null();
    let rc = transport::comm::intercomm_create(cr.real, local_leader, peer, remote_leader, tag, &mut nc);
    // The local group's verdict is uniform (a dead member joined and every live
    // one sees the death at the leave); the exchange makes it the other group's
    // too, so that no group keeps an intercommunicator the other freed.
    let mut outcome = hooks::coll_leave(cr, rc);
    let mut id = local_id;
    if rc == 0 {
        let (common, remote_ok) = inter_id(nc, local_id, outcome.is_ok());
        id = common;
        if outcome.is_ok() && !remote_ok {
            outcome = Err(Failure::on(cr.handle, SIM_FT_ERR_PROC_FAILED));
        }
    }
    if let Err(failure) = outcome {
        free_comm(nc);
        // SAFETY: checked non-null in intercomm_create_ran's entry; the program's
        // out handle, which MPI requires valid for writing.
        unsafe { *newintercomm = std::ptr::null_mut() };
        return Err(failure);
    }
    let adopted = comm::adopt(nc, cr, id);
    // SAFETY: checked non-null in intercomm_create_ran's entry; the program's
    // out handle, which MPI requires valid for writing.
    unsafe { *newintercomm = adopted };
    Ok(())
}
