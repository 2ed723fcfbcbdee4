//! The `collectives` choice: a survivor of a collective that a failure touched
//! is told success where its result is real (protocol::outcome has the rule per
//! kind of collective), if the seed's draw for the event says so; else the
//! default verdict, `MPI_ERR_PROC_FAILED`. The `constructors` choice does the
//! same for `MPI_Comm_dup` (its new communicator is real at every survivor: the
//! dead member is in it, known failed, and the dead rank takes it up,
//! engine::dead::zombie). The event is keyed by the
//! communicator's id, the collective's number and this process's world rank,
//! so members draw independently and a seed replays the same outcomes.

use super::{note, Made};
use crate::engine::base::handles::Sim_FT_MPI_Comm;
use crate::engine::base::{runtime, settings};
use crate::engine::colls::describe::{fcode as F, DUMMY};
use crate::engine::news::{logs, news};
use crate::engine::registry::comm;
use crate::protocol::outcome::{self, Flow};

/// How data flows in the collective of function code `f` (its non-blocking
/// twin the same); the collectives whose data the rule does not model (the
/// neighbourhood ones, the constructors) as [`Flow::All`].
pub fn flow(f: u32) -> Flow {
    match f & !F::NB & !DUMMY {
        F::BCAST | F::SCATTER | F::SCATTERV => Flow::FromRoot,
        F::REDUCE | F::GATHER | F::GATHERV => Flow::ToRoot,
        F::SCAN => Flow::Prefix,
        F::EXSCAN => Flow::ExclusivePrefix,
        F::COMM_DUP => Flow::Nothing,
        _ => Flow::All,
    }
}

/// Collective `seq` of `h` ended here while a member known dead did not enter
/// it for real (its default verdict is `MPI_ERR_PROC_FAILED`): true if this
/// survivor is told success instead (not asked on a revoked communicator, which
/// fails either way). Called only on that path (engine::entry::hooks,
/// engine::complete::complete).
#[cold]
#[inline(never)]
pub fn tells_success(h: Sim_FT_MPI_Comm, seq: u64) -> bool {
    if !settings::adversary(settings::choice::COLLECTIVES | settings::choice::CONSTRUCTORS) {
        return false;
    }
    let Some((id, me, members, dead, inter)) = comm::read(h, |s| (s.id, s.rank, s.members.clone(), s.failed_world_ranks(), s.inter)) else {
        return false;
    };
    if inter || me < 0 {
        return false;
    }
    let Some(f_root) = own_entry(id, seq) else {
        return false;
    };
    // Members that joined with dummy data: the dead ones that did not enter it
    // for real before dying, and the live ones that did not enter it for real
    // either (they filled in for it after skipping it, engine::dead::fillin, or
    // caught up on it, engine::revoke: their entry is a dummy one). An
    // intercommunicator's remote group is not here.
    if dead.iter().any(|w| !members.contains(w)) {
        return false;
    }
    let mut dummy = Vec::new();
    for (r, w) in members.iter().enumerate() {
        let real = if r as i32 == me {
            true
        } else if dead.contains(w) {
            logs::entered_before_death(*w, id, seq)
        } else {
            logs::entered_for_real(*w, id, seq)
        };
        if !real {
            dummy.push(r as u32);
        }
    }
    let (f, root) = f_root;
    // `MPI_Comm_dup` is the `constructors` choice's; the other constructors keep
    // the default (Flow::All).
    let dup = f & !F::NB & !DUMMY == F::COMM_DUP;
    let choice = if dup { settings::choice::CONSTRUCTORS } else { settings::choice::COLLECTIVES };
    if !settings::adversary(choice) || !outcome::result_is_real(flow(f), root.max(0) as u32, me as u32, &dummy) {
        return false;
    }
    let success = outcome::draw(settings::seed(), &[choice as u64, id, seq, runtime::world_rank() as u64]);
    note(if dup { Made::Constructor { comm: id, seq, success } } else { Made::Collective { comm: id, seq, success } });
    success
}

/// The function code and root of this process's own entry for collective `seq`
/// of communicator `id` (None once its log no longer holds it: the default
/// verdict then).
fn own_entry(id: u64, seq: u64) -> Option<(u32, i32)> {
    let (_, entries) = news::read_log(runtime::world_rank() as usize, 0);
    entries.iter().rev().find(|e| e.comm == id && e.seq == seq && e.desc.fcode & DUMMY == 0).map(|e| (e.desc.fcode, e.desc.root))
}
