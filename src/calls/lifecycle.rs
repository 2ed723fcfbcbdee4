//! `MPI_Init*` and `MPI_Finalize` (MPI-3.1 §8.7).

use crate::engine::registry::comm_state;
use crate::engine::base::runtime;
use crate::engine::base::errors::{Failure, Outcome};
use crate::calls::{spare, spares};
use crate::engine::base::backoff::Backoff;
use crate::engine::base::process;
use crate::engine::{registry::comm, agree::ft, news::logs, news::news, registry::orphans, registry::request, revoke::revoke, progress::service};
use crate::transport;
use std::os::raw::{c_char, c_int, c_void};


/// The keyval of the `MPIX_FT` attribute (Open MPI 5's `MPI_FT`): set on
/// `MPI_COMM_WORLD` by `MPI_Init`; its value points to a nonzero int, telling a
/// program that fault tolerance is available. `MPI_KEYVAL_INVALID` before init.
#[no_mangle]
pub static mut Sim_FT_MPIX_FT_keyval: c_int = -1;
/// The value of the `MPIX_FT` attribute: fault tolerance is on.
static FT_ON: c_int = 1;

/// After the host MPI's `init` (`MPI_Init` or `MPI_Init_thread`) returned. A
/// spare process (calls::spares) stays here until a spawn takes it.
fn after_init(init: &'static str, argc: *mut c_int, argv: *mut *mut *mut c_char) -> Outcome {
    // Lock the layer's tables for real only if the program may call MPI from
    // several threads at once (transport::serial).
    let mut level: c_int = 0;
    transport::env::query_thread(&mut level);
    let multi = level == transport::thread_multiple();
    transport::serial::set_multithreaded(multi);
    crate::engine::base::edges::set(crate::engine::base::edges::MULTI, multi);
    // The engine's waits below the service run it through this hook.
    service::install();
    crate::calls::errhandler::reserve_classes();
    Failure::check_world(news::start().err().unwrap_or(0))?;
    if let Err(stop) = crate::inject::start(runtime::shadow(), runtime::world_rank() as u32, runtime::world_size() as u32, init) {
        crate::say!("MPIFT: rank {}: MPI_Init: {}", runtime::world_rank(), stop.why);
        if !stop.everywhere {
            // Only this rank's own policy is wrong: the others cannot know. Give the
            // launcher time to forward the message first (MPICH's hydra dropped it
            // in 1 of 4 runs when the abort came at once).
            std::thread::sleep(std::time::Duration::from_millis(300));
            transport::env::abort(transport::comm_world(), 1);
        }
        // Every rank read the same (rank 0's) policy, so every rank stops here, with
        // the same message, and the job ends cleanly with a nonzero status. The
        // barrier: no rank exits (and makes the launcher end the job) before every
        // rank has written its message (MPICH's hydra lost one rank's line once in a
        // suite run, tests/inject "invalid MPIFT_KILL").
        // SAFETY: a communicator handle, passed by value.
        unsafe { transport::generated::MPI_Barrier(transport::comm_world()) };
        // And the launcher time to forward every rank's line before the first
        // nonzero exit makes it end the job (Open MPI 4.1 lost one rank's line in 1
        // of 4 runs of that tests/inject case under load).
        std::thread::sleep(std::time::Duration::from_millis(200));
        if crate::inject::settings::spawned_job() {
            // The parents are past MPI_Comm_spawn and would wait for this job
            // for ever (Open MPI 5: in their next call on the intercommunicator):
            // an abort ends the parent job too.
            // The real world communicator, after the real MPI_Init.
            transport::env::abort(transport::comm_world(), 1);
        }
        news::stop();
        transport::env::finalize();
        std::process::exit(1);
    }
    let spare = spares::start().map_err(Failure::on_world)?;
    let mut keyval = -1;
    Failure::check_world(transport::create_ft_keyval(&mut keyval))?;
    // The value points to a static int that lives as long as the process (the
    // program only reads it).
    Failure::check_world(transport::comm::set_attr(transport::comm_world(), keyval, &FT_ON as *const c_int as *mut c_void))?;
    // SAFETY: a plain store, no reference to the static is made; MPI_Init runs
    // once, before the program may read the keyval (no MPI use before MPI_Init,
    // MPI-3.1 §8.7), so no other thread reads it meanwhile.
    unsafe { Sim_FT_MPIX_FT_keyval = keyval };
    if spare {
        spare::wait_as_spare(argc, argv);
    }
    process::set_active(true);
    Ok(())
}

/// MPICH's own fault tolerance (`MPIR_CVAR_ENABLE_FT=1`, which MPICH's
/// `test/mpi/ft` testlist sets) is switched off before the host MPI starts:
/// MPIFT's deaths are simulated, so the host has no failure to handle, and MPICH
/// 4.0's ch4 device asserts (ch4_request.h:16, `MPID_Request_is_anysource`) in
/// `MPI_Test` of any pending `MPI_ANY_SOURCE` receive when it is on, which MPIFT's
/// wake receive always is (plain MPICH does the same with such a program).
/// MPICH reads the variable under three prefixes.
fn host_ft_off() {
    for v in ["MPIR_CVAR_ENABLE_FT", "MPIR_PARAM_ENABLE_FT", "MPICH_ENABLE_FT"] {
        if std::env::var_os(v).is_some() {
            std::env::set_var(v, "0");
        }
    }
}

/// `MPI_Init`.
pub fn init(argc: *mut c_int, argv: *mut *mut *mut c_char) -> Outcome {
    host_ft_off();
    // SAFETY: the program's MPI_Init arguments passed through unchanged: null or
    // its main's argc and argv (MPI-3.1 §8.7), as env::init requires.
    Failure::check_world(unsafe { transport::env::init(argc, argv) })?;
    after_init("MPI_Init", argc, argv)
}

/// `MPI_Init_thread`.
pub fn init_thread(
    argc: *mut c_int,
    argv: *mut *mut *mut c_char,
    required: c_int,
    provided: *mut c_int,
) -> Outcome {
    host_ft_off();
    // SAFETY: the program's MPI_Init_thread arguments passed through unchanged:
    // null or its main's argc and argv, and its out-int `provided` (MPI-3.1 §12.4.3).
    Failure::check_world(unsafe { transport::env::init_thread(argc, argv, required, provided) })?;
    after_init("MPI_Init_thread", argc, argv)
}

/// `MPI_Initialized`.
pub fn initialized(flag: *mut c_int) -> Outcome {
    // SAFETY: the program's out-int, passed through as it gave it (the host
    // reports a null one as it would to the program).
    Failure::check_world(unsafe { transport::env::initialized(flag) })
}

/// `MPI_Finalized`.
pub fn finalized(flag: *mut c_int) -> Outcome {
    // SAFETY: the program's out-int, passed through as it gave it (the host
    // reports a null one as it would to the program).
    Failure::check_world(unsafe { transport::env::finalized(flag) })
}

/// `MPI_Get_version`: the MPI version MPIFT covers (3.1) when the real MPI is newer,
/// matching `MPI_VERSION`/`MPI_SUBVERSION` in include/MPI-FT_redefine.h.
pub fn get_version(version: *mut c_int, subversion: *mut c_int) -> Outcome {
    // SAFETY: the program's two out-ints, passed through as it gave them.
    Failure::check_world(unsafe { transport::env::get_version(version, subversion) })?;
    if !version.is_null() && !subversion.is_null() {
        // SAFETY: non-null (checked) program out-ints the host's successful call
        // just wrote, so valid for reads.
        let (v, s) = unsafe { (*version, *subversion) };
        if (v, s) > (3, 1) {
            // SAFETY: the same two non-null, writable program out-ints.
            unsafe {
                *version = 3;
                *subversion = 1;
            }
        }
    }
    Ok(())
}

/// `MPI_Finalize`.
pub fn finalize() -> Outcome {
    // MPIFT_TRACE: this rank's calls, complete now (MPI_Finalize was the last).
    crate::inject::trace::finish();
    // MPI_COMM_SELF's attributes go first, while MPI is fully usable (§8.7.1).
    crate::calls::keyval::before_finalize();
    // Catch up on revoked communicators (members may still be inside a collective
    // this rank skipped), let abandoned requests finish, then tell the dead ranks:
    // they finalize once every live rank has got here (engine::dead::zombie).
    // (Every revoked communicator, in ascending id: engine::revoke::revoke.) This rank's own
    // revokes must have reached everyone before it stops answering.
    let mut idle = Backoff::wait();
    loop {
        let _ = service::run();
        if !revoke::jobs_pending() {
            break;
        }
        idle.pause();
    }
    comm_state::note_owed();
    let _ = revoke::catch_up_owed();
    // Stage 1: the program is done; the fill-ins owed for doomed collectives
    // the others entered or will enter (engine::dead::fillin), then stage 2.
    news::set_program_done();
    crate::engine::dead::fillin::settle_owed(|| {
        let _ = service::run();
        idle.pause();
    });
    orphans::settle();
    news::set_finalizing();
    process::set_active(false);
    // The report's gather: dead ranks join it once every live rank is here.
    crate::inject::finalize();
    crate::engine::dead::fillin::settle();
    news::stop();
    logs::clear();
    ft::clear();
    // Blocking: never blocks for ever: the host's MPI_Finalize waits for every
    // process; each gets here once MPIFT needs it no more (protocol::exit: a live
    // rank after its fill-ins, a dead one once every live rank finalizes).
    let rc = transport::env::finalize();
    request::clear();
    comm::clear();
    Failure::check_world(rc)
}
