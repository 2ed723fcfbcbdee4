//! The ULFM calls (MPIX_ names and the unprefixed ones): revoke, agree, shrink,
//! and the failure queries (ULFM-SEMANTICS.md; docs/ARCHITECTURE.md, "Failures").
//!
//! Agree and shrink are one real `MPI_Allreduce` (BAND over bitmaps) on the
//! communicator itself, plus a real `MPI_Comm_split` for shrink; dead members join
//! both with their own contribution (layer::zombie), so they complete everywhere and
//! give every survivor the same answer. On a revoked communicator a rank first
//! catches up on the collectives it skipped ([`catch_up`]).

use crate::ffi::errors::{Failure, Outcome, SIM_FT_ERR_PROC_FAILED};
use crate::ffi::handles::{self, CommRef, Sim_FT_MPI_Comm, Sim_FT_MPI_Request};
use crate::layer::describe::{fcode, Desc, Spec};
use crate::layer::hooks::{self, Kind};
use crate::layer::join::{self, Joined, Who};
use crate::layer::{comm, logs, news, request};
use crate::protocol::failures::Failures;
use crate::protocol::Rank;
use crate::transport::{self, mpi};
use mpi_sys::MPI_Group;
use std::os::raw::c_int;

fn check(rc: c_int, on: &CommRef) -> Outcome {
    if rc == 0 {
        Ok(())
    } else {
        Err(Failure::on(on.handle, rc))
    }
}

/// `MPIX_Comm_revoke`: not collective. Marks the communicator revoked here, puts
/// "revoked" into every member's window region, reads the members' collective
/// logs, publishes the horizon (the last collective any member entered), and
/// wakes everyone so blocked point-to-point waits return `MPI_ERR_REVOKED`.
/// The updates are one-sided and complete only once applied at each target, so the
/// revoke reaches every live member even while it is blocked, and a member that
/// dies meanwhile cannot stop it.
pub fn revoke(c: Sim_FT_MPI_Comm) -> Outcome {
    let cr = handles::comm_arg(c)?;
    news::refresh();
    let (members, me, seq, already) =
        comm::read(c, |s| (s.members.clone(), news::world_rank() as u32, s.seq, s.horizon.is_some()))
            .expect("looked up above");
    comm::troubled();
    comm::update(c, |s| s.revoked = true);
    if already {
        return Ok(());
    }
    let others: Vec<u32> = members.iter().copied().filter(|w| *w != me).collect();
    news::announce_revoke(cr.id, None, &others);
    // Every member either saw the revoke before entering a collective, or logged
    // that collective before we read its log here (Dekker pair, transport::window).
    let horizon = logs::with(|cache| {
        cache.poll(&others);
        cache.max_seq(cr.id).unwrap_or(0).max(seq)
    });
    news::announce_revoke(cr.id, Some(horizon), &others);
    comm::update(c, |s| s.horizon = Some(horizon.max(s.horizon.unwrap_or(0))));
    news::wake_all();
    Ok(())
}

/// `MPIX_Comm_is_revoked`.
pub fn is_revoked(c: Sim_FT_MPI_Comm, flag: *mut c_int) -> Outcome {
    let cr = handles::comm_arg(c)?;
    handles::check_out_ptr(flag, &cr)?;
    news::refresh();
    unsafe { *flag = comm::read(c, |s| s.revoked).unwrap_or(false) as c_int };
    Ok(())
}

/// On a revoked communicator: joins, with dummy data, every collective up to the
/// horizon that this rank skipped (returned `MPI_ERR_REVOKED` for), so members
/// still inside one are released and every member's collective count is the same
/// before agree/shrink/free run their own collectives on it.
///
/// `merge`: the caller is about to run MPIFT's own collective of this kind (agree or
/// shrink). If the last collective before the horizon is that same operation, some
/// members are inside it already: the caller does not join it as a dummy but runs
/// its own operation as that collective, so everyone gets the same result.
pub(crate) fn catch_up(cr: &CommRef, merge: Option<u32>) -> Outcome {
    catch_up_to(cr, merge, false)
}

/// [`catch_up`] for a collective refused because the communicator is revoked: joins
/// the program's collectives the others are inside, but stops before an agree or
/// shrink. Those are called by every member on the revoked communicator itself
/// (recovery), possibly *after* the revoke, so the horizon can include one; joining
/// it here with dummy data would make this rank's own agree/shrink a collective
/// the others never call (api_check hung in shrink this way on MPICH).
pub(crate) fn catch_up_refused(cr: &CommRef) -> Outcome {
    catch_up_to(cr, None, true)
}

fn catch_up_to(cr: &CommRef, merge: Option<u32>, stop_at_ft: bool) -> Outcome {
    let horizon = loop {
        news::refresh();
        let Some((revoked, h)) = comm::read(cr.handle, |s| (s.revoked, s.horizon)) else { return Ok(()) };
        if !revoked {
            return Ok(());
        }
        if let Some(h) = h {
            break h;
        }
        news::drain_wakes();
        std::thread::sleep(std::time::Duration::from_micros(50));
    };
    let (members, rank) = comm::read(cr.handle, |s| (s.members.clone(), s.rank as usize)).unwrap();
    let me = news::world_rank() as u32;
    let others: Vec<u32> = members.iter().copied().filter(|w| *w != me).collect();
    loop {
        let seq = comm::read(cr.handle, |s| s.seq).unwrap();
        if seq >= horizon {
            return Ok(());
        }
        let s = seq + 1;
        let (d, per) = loop {
            let got = logs::with(|cache| {
                cache.poll(&others);
                cache.get(cr.id, s).and_then(|f| logs::by_member(f, &members))
            });
            if let Some(x) = got {
                break x;
            }
            news::refresh();
            std::thread::sleep(std::time::Duration::from_micros(50));
        };
        if s == horizon && merge == Some(d.fcode) {
            return Ok(());
        }
        if stop_at_ft && logs::is_ft(&d) {
            return Ok(());
        }
        news::log_collective(cr.id, s, &Desc { fcode: d.fcode | logs::DUMMY, ..Desc::default() });
        comm::update(cr.handle, |st| st.seq = s);
        let who = Who { real: cr.real, rank, size: members.len() };
        let words = vec![!0u64; d.send.count.max(1) as usize];
        if let Joined::Pending(mut p) = join::join(&who, &d, &per, &words) {
            unsafe { mpi::MPI_Wait(&mut p.req, transport::status_ignore()) };
        }
        logs::with(|cache| cache.prune(cr.id, s));
    }
}

/// Words per bitmap over `n` ranks.
fn bitmap_words(n: usize) -> usize {
    n.div_ceil(64)
}

/// The reduction behind agree and shrink: BAND over
/// `[flag, alive bits, acknowledged bits]`. A live rank contributes its flag, 1 for
/// every rank it does not know to be dead, 1 for every failure it acknowledged; a
/// dead rank contributes all ones except its own alive bit. The result is the same
/// at every survivor: the AND of live flags, the failed ranks, and which failures
/// every survivor acknowledged.
fn ft_reduce(cr: &CommRef, fc: u32, flag: c_int) -> Result<(u32, Vec<u32>, bool, u64), Failure> {
    news::refresh();
    if comm::read(cr.handle, |s| s.revoked).unwrap_or(false) {
        catch_up(cr, Some(fc))?;
    }
    let (n, failed, acked) =
        comm::read(cr.handle, |s| (s.size(), s.failures.known().to_vec(), s.failures.acked().to_vec())).unwrap();
    let w = bitmap_words(n);
    let mut words = vec![0u64; 1 + 2 * w];
    words[0] = 0xffff_ffff_0000_0000 | (flag as u32 as u64);
    for r in 0..n {
        if !failed.contains(&(r as u32)) {
            words[1 + r / 64] |= 1 << (r % 64);
        }
    }
    for r in &acked {
        let r = *r as usize;
        words[1 + w + r / 64] |= 1 << (r % 64);
    }
    let desc = Desc { fcode: fc, send: Spec { count: words.len() as i32, ty: 0 }, ..Desc::default() };
    // Allowed on a revoked communicator (agree/shrink are the way out).
    let seq = hooks::log_entry(cr, &desc, false).ok_or_else(|| Failure::on(cr.handle, transport::err::get(unsafe { &transport::err::COMM })))?;
    let mut out = vec![0u64; words.len()];
    let rc = unsafe {
        mpi::MPI_Allreduce(
            words.as_ptr() as *const _,
            out.as_mut_ptr() as *mut _,
            words.len() as c_int,
            transport::dt_uint64(),
            transport::op_band(),
            cr.real,
        )
    };
    check(rc, cr)?;
    let dead: Vec<u32> = (0..n).filter(|r| out[1 + r / 64] & (1 << (r % 64)) == 0).map(|r| r as u32).collect();
    let all_acked = dead.iter().all(|r| out[1 + w + *r as usize / 64] & (1 << (*r as usize % 64)) != 0);
    if !dead.is_empty() {
        comm::troubled();
    }
    comm::update(cr.handle, |s| {
        for r in &dead {
            s.failures.learn(*r);
        }
    });
    Ok((out[0] as u32, dead, all_acked, seq))
}

/// `MPIX_Comm_shrink`: the live members, in the old rank order, the same at every
/// survivor; works on revoked communicators; the result is not revoked.
pub fn shrink(c: Sim_FT_MPI_Comm, newcomm: *mut Sim_FT_MPI_Comm) -> Outcome {
    let cr = handles::comm_arg(c)?;
    handles::check_out_ptr(newcomm, &cr)?;
    let (_, dead, _, seq) = ft_reduce(&cr, fcode::FT_SHRINK, !0)?;
    // The new communicator: exactly the live members in the old order, made by
    // the live members only (MPI_Comm_create_group is collective over the group),
    // so neither dead ranks nor the parent's collective count are involved.
    let live: Vec<c_int> = (0..cr.size).filter(|r| !dead.contains(&(*r as u32))).collect();
    let mut all = transport::group_empty();
    let mut g = transport::group_empty();
    check(unsafe { mpi::MPI_Comm_group(cr.real, &mut all) }, &cr)?;
    check(unsafe { mpi::MPI_Group_incl(all, live.len() as c_int, live.as_ptr(), &mut g) }, &cr)?;
    let mut real = transport::comm_null();
    let rc = unsafe { mpi::MPI_Comm_create_group(cr.real, g, SHRINK_TAG, &mut real) };
    unsafe {
        mpi::MPI_Group_free(&mut g);
        mpi::MPI_Group_free(&mut all);
    }
    check(rc, &cr)?;
    let id = comm::child_id(cr.id, (1 << 40) | seq);
    unsafe { *newcomm = comm::adopt(real, &cr, id) };
    Ok(())
}

/// Tag of shrink's `MPI_Comm_create_group`.
const SHRINK_TAG: c_int = 0x5f7;

/// `MPIX_Comm_ishrink`: completes the shrink at once and returns a request that is
/// already complete (a zero-byte receive from `MPI_PROC_NULL`).
pub fn ishrink(
    c: Sim_FT_MPI_Comm,
    newcomm: *mut Sim_FT_MPI_Comm,
    req: *mut Sim_FT_MPI_Request,
) -> Outcome {
    let cr = handles::comm_arg(c)?;
    handles::check_out_ptr(req, &cr)?;
    shrink(c, newcomm)?;
    unsafe { *req = done_request(&cr)? };
    Ok(())
}

fn done_request(cr: &CommRef) -> Result<Sim_FT_MPI_Request, Failure> {
    let mut real = transport::request_null();
    check(
        unsafe {
            mpi::MPI_Irecv(
                std::ptr::null_mut(),
                0,
                transport::dt_byte(),
                transport::proc_null(),
                0,
                transport::comm_self(),
                &mut real,
            )
        },
        cr,
    )?;
    Ok(request::adopt(real, Kind::P2pStart, cr))
}

/// `MPIX_Comm_agree`: bitwise AND of `*flag` over the live members; allowed on
/// revoked communicators. `MPI_ERR_PROC_FAILED` at every survivor unless every
/// failure was acknowledged by every survivor; `*flag` is valid either way.
pub fn agree(c: Sim_FT_MPI_Comm, flag: *mut c_int) -> Outcome {
    let cr = handles::comm_arg(c)?;
    handles::check_out_ptr(flag, &cr)?;
    let (f, _dead, all_acked, _) = ft_reduce(&cr, fcode::FT_AGREE, unsafe { *flag })?;
    unsafe { *flag = f as c_int };
    if !all_acked {
        return Err(Failure::on(c, SIM_FT_ERR_PROC_FAILED));
    }
    Ok(())
}

/// `MPIX_Comm_iagree`: runs the agreement at once; the request is already
/// complete and carries its error (if any) when waited for.
pub fn iagree(c: Sim_FT_MPI_Comm, flag: *mut c_int, req: *mut Sim_FT_MPI_Request) -> Outcome {
    let cr = handles::comm_arg(c)?;
    handles::check_out_ptr(flag, &cr)?;
    handles::check_out_ptr(req, &cr)?;
    let (f, _dead, all_acked, _) = ft_reduce(&cr, fcode::FT_AGREE, unsafe { *flag })?;
    unsafe { *flag = f as c_int };
    unsafe { *req = done_request(&cr)? };
    if !all_acked {
        return Err(Failure::on(c, SIM_FT_ERR_PROC_FAILED));
    }
    Ok(())
}

/// `MPIX_Comm_failure_ack`: acknowledges the failures known so far.
pub fn failure_ack(c: Sim_FT_MPI_Comm) -> Outcome {
    handles::comm_arg(c)?;
    news::refresh();
    comm::update(c, |st| st.failures.ack_all());
    Ok(())
}

/// Reads a list of failed ranks of `c` (known or acknowledged) as C ints.
fn failed_ranks(c: Sim_FT_MPI_Comm, which: impl FnOnce(&Failures) -> &[Rank]) -> Vec<c_int> {
    comm::read(c, |st| which(&st.failures).iter().map(|&r| r as c_int).collect()).unwrap_or_default()
}

/// A new group of the given ranks of `comm` (the failed ones).
fn group_of(cr: &CommRef, ranks: &[c_int], out: *mut MPI_Group) -> Outcome {
    handles::check_out_ptr(out, cr)?;
    let mut all = transport::group_empty();
    check(unsafe { mpi::MPI_Comm_group(cr.real, &mut all) }, cr)?;
    let rc = unsafe { mpi::MPI_Group_incl(all, ranks.len() as c_int, ranks.as_ptr(), out) };
    unsafe { mpi::MPI_Group_free(&mut all) };
    check(rc, cr)
}

/// `MPIX_Comm_failure_get_acked`: the acknowledged failed processes.
pub fn failure_get_acked(c: Sim_FT_MPI_Comm, out: *mut MPI_Group) -> Outcome {
    let cr = handles::comm_arg(c)?;
    group_of(&cr, &failed_ranks(c, Failures::acked), out)
}

/// `MPIX_Comm_get_failed`: the failed processes known locally, in detection order
/// (earlier results are prefixes of later ones).
pub fn get_failed(c: Sim_FT_MPI_Comm, out: *mut MPI_Group) -> Outcome {
    let cr = handles::comm_arg(c)?;
    news::refresh();
    group_of(&cr, &failed_ranks(c, Failures::known), out)
}

/// `MPIX_Comm_ack_failed`: acknowledges the first `num_to_ack` known failures and
/// reports how many are acknowledged.
pub fn ack_failed(c: Sim_FT_MPI_Comm, num_to_ack: c_int, num_acked: *mut c_int) -> Outcome {
    let cr = handles::comm_arg(c)?;
    news::refresh();
    handles::check_out_ptr(num_acked, &cr)?;
    let mut n = 0;
    comm::update(c, |st| n = st.failures.ack_first(num_to_ack.max(0) as usize));
    unsafe { *num_acked = n as c_int };
    Ok(())
}
