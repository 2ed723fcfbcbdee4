//! Intercommunicators in the agreement (engine::agree::ft): how an agreement over both
//! groups keeps their flags apart, and how a shrink makes the survivors'
//! intercommunicator (docs/ARCHITECTURE.md, "Intercommunicators"); and the
//! agreement on a communicator with members of another job.

use crate::engine::base::runtime;
use crate::engine::base::errors::{Failure, Outcome, SIM_FT_ERR_PROC_FAILED};
use crate::engine::base::handles::CommRef;
use crate::engine::registry::comm;
use crate::protocol::Rank;
use crate::transport::{self, MPI_Comm};
use std::os::raw::{c_int, c_void};

/// An agreement on an intercommunicator runs over both groups, in the order
/// [`comm_state::CommState::union`] gives (the same at every member of either group).
#[derive(Clone, Copy)]
pub(crate) struct Sides {
    /// The local group comes first.
    pub local_first: bool,
    /// Sizes of the local and the remote group.
    pub nlocal: u32,
    pub nremote: u32,
}

impl Sides {
    /// Offsets of the local and the remote group in the agreement's order.
    pub fn offsets(&self) -> (u32, u32) {
        if self.local_first {
            (0, self.nlocal)
        } else {
            (self.nremote, 0)
        }
    }
    /// Where participant `f` of the agreement is: `Ok(rank)` in the local group,
    /// `Err(rank)` in the remote one.
    pub fn split(&self, f: Rank) -> Result<Rank, Rank> {
        let (lo, ro) = self.offsets();
        if (lo..lo + self.nlocal).contains(&f) {
            Ok(f - lo)
        } else {
            Err(f - ro)
        }
    }
    /// The flag word a member contributes: its flag in the half of its group, the
    /// other half neutral, so that the AND keeps each group's flags apart.
    pub fn flag_word(&self, flag: u32) -> u64 {
        if self.local_first {
            0xffff_ffff_0000_0000 | flag as u64
        } else {
            (flag as u64) << 32 | 0xffff_ffff
        }
    }
    /// ULFM's agree on an intercommunicator gives each group the AND of the
    /// *remote* group's flags (Open MPI 5 ULFM, checked on the oracle).
    pub fn remote_flag(&self, word: u64) -> u32 {
        if self.local_first {
            (word >> 32) as u32
        } else {
            word as u32
        }
    }
}

/// A shrunk intercommunicator: the live members of each group, in their old
/// order. The survivors of both groups make one intracommunicator over the
/// shadow world (`MPI_Comm_create_group`, collective over them only), split it
/// by group and join the halves with `MPI_Intercomm_create`. `MPI_ERR_PROC_FAILED`
/// when a whole group is gone: an intercommunicator needs two groups.
pub(crate) fn shrunk(members: &[u32], me: usize, sides: Sides, live: &[Rank], tag: c_int) -> Result<MPI_Comm, c_int> {
    let first = if sides.local_first { sides.nlocal } else { sides.nremote };
    let (a, b): (Vec<Rank>, Vec<Rank>) = live.iter().partition(|r| **r < first);
    if a.is_empty() || b.is_empty() {
        return Err(SIM_FT_ERR_PROC_FAILED);
    }
    let worlds: Vec<c_int> = live.iter().map(|r| members[*r as usize] as c_int).collect();
    let shadow = runtime::shadow();
    let mut wg = transport::group_empty();
    let mut g = transport::group_empty();
    let mut both = transport::comm_null();
    // Groups of the shadow world (a dup of MPI_COMM_WORLD, so world ranks are
    // its ranks), freed here; `both` is freed below.
    transport::comm::group(shadow, &mut wg);
    transport::comm::group_incl(wg, &worlds, &mut g);
    let rc = transport::comm::create_group(shadow, g, tag, &mut both);
    transport::comm::group_free(&mut g);
    transport::comm::group_free(&mut wg);
    if rc != 0 {
        return Err(rc);
    }
    // In `both`, rank i is live[i]: the first group's survivors are 0..a.len().
    let me_first = (me as Rank) < first;
    let mut half = transport::comm_null();
    let mut out = transport::comm_null();
    let remote_leader = if me_first { a.len() } else { 0 } as c_int;
    // `both` is this function's; the halves and the result are new handles.
    let rc = {
        let mut rank = 0;
        transport::comm::rank(both, &mut rank);
        let mut rc = transport::comm::split(both, if me_first { 0 } else { 1 }, rank, &mut half);
        if rc == 0 {
            rc = transport::comm::intercomm_create(half, 0, both, remote_leader, tag, &mut out);
            transport::comm::free(&mut half);
        }
        transport::comm::free(&mut both);
        rc
    };
    if rc != 0 {
        return Err(rc);
    }
    Ok(out)
}

/// `MPIX_Comm_agree` on a communicator with members in another job's world: a
/// host spawn's intercommunicator (the check of the ULFM tutorial's
/// `MPIX_Comm_replace`, HEAT's `jacobi_ulfm`) or its merge (the respawn
/// pattern). No failure among them can be simulated (no news crosses jobs), so
/// the agreement is the host's `MPI_Allreduce(BAND)` of the flags: on an
/// intercommunicator that gives each group the other group's AND, as ULFM's
/// agree does. `MPI_ERR_PROC_FAILED` if an unacknowledged failure of a member of
/// this world is known. A dead member would leave the others inside the allreduce.
pub(crate) fn agree_foreign(cr: &CommRef, flag: *mut c_int) -> Outcome {
    // SAFETY: checked non-null by the caller.
    let mine = unsafe { *flag };
    let mut out: c_int = 0;
    // SAFETY: one int in, one out (locals that outlive the blocking call), on
    // the communicator's real handle.
    let rc = unsafe {
        transport::generated::MPI_Allreduce(
            &mine as *const c_int as *const c_void,
            &mut out as *mut c_int as *mut c_void,
            1,
            transport::dt_int(),
            transport::op_band(),
            cr.real,
        )
    };
    Failure::check(rc, cr.handle)?;
    // SAFETY: the program's flag, checked non-null by the caller (read above).
    unsafe { *flag = out };
    if comm::read(cr.handle, |s| s.failures.has_unacknowledged()).unwrap_or(false) {
        return Err(Failure::on(cr.handle, SIM_FT_ERR_PROC_FAILED));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two groups agree: each member's word ANDed over everyone gives each group
    /// the other group's AND, whichever group comes first.
    #[test]
    fn each_group_reads_the_remote_groups_and() {
        let a = [0b1110u32, 0b1101]; // group A's flags
        let b = [0b1011u32, 0b0111, 0b1111]; // group B's flags
        let and = |v: &[u32]| v.iter().fold(!0u32, |x, y| x & y);
        for a_first in [true, false] {
            let sa = Sides { local_first: a_first, nlocal: a.len() as u32, nremote: b.len() as u32 };
            let sb = Sides { local_first: !a_first, nlocal: b.len() as u32, nremote: a.len() as u32 };
            let word = a.iter().map(|f| sa.flag_word(*f)).chain(b.iter().map(|f| sb.flag_word(*f))).fold(!0u64, |x, y| x & y);
            assert_eq!(sa.remote_flag(word), and(&b), "A reads B's AND (A first: {a_first})");
            assert_eq!(sb.remote_flag(word), and(&a), "B reads A's AND (A first: {a_first})");
            // The offsets place each group in the shared order.
            assert_eq!(sa.offsets(), if a_first { (0, 2) } else { (3, 0) });
            assert_eq!(sb.offsets(), if a_first { (2, 0) } else { (0, 3) });
            // Every participant maps back to its own group's rank.
            let order: Vec<Result<Rank, Rank>> = (0..5).map(|f| sa.split(f)).collect();
            let want: Vec<Result<Rank, Rank>> =
                if a_first { vec![Ok(0), Ok(1), Err(0), Err(1), Err(2)] } else { vec![Err(0), Err(1), Err(2), Ok(0), Ok(1)] };
            assert_eq!(order, want, "A's view (A first: {a_first})");
        }
    }
}
