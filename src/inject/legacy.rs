//! Legacy injection: test programs written for a real ULFM MPI kill a rank with
//! `raise(SIGKILL)`, `kill(getpid(), SIGTERM)` or plain `exit()`. Opt-in, they
//! become simulated deaths:
//! - compiled with `-DMPIFT_MAP_SIGNALS`, `MPI-FT.h` turns `raise(sig)` and
//!   `kill(pid, sig)` into [`raise`] and [`kill`]: SIGKILL or SIGTERM aimed at the
//!   process itself, between `MPI_Init` and `MPI_Finalize`, is `Sim_FT_kill_me()`
//!   (cause `signal`); any other signal or process gets the real call;
//! - run with `MPIFT_EXIT_KILLS=1`, an `exit()` (or a return from `main`) between
//!   `MPI_Init` and `MPI_Finalize` is a death (cause `exit`): an `atexit` handler
//!   turns the process into a dead rank, which serves the survivors until they
//!   finalize and then ends the process with status 0 through `_exit` (calling
//!   `exit` again from inside an `atexit` handler is undefined behaviour).

use crate::inject::death::{die_now, is_dead};
use crate::inject::plan::Cause;
use std::os::raw::c_int;
use std::sync::atomic::{AtomicBool, Ordering};

/// Inside the `atexit` handler: the dead rank must end with `_exit`.
static IN_EXIT: AtomicBool = AtomicBool::new(false);
static HOOKED: AtomicBool = AtomicBool::new(false);

fn mapped(sig: c_int) -> bool {
    sig == libc::SIGKILL || sig == libc::SIGTERM
}

fn can_die() -> bool {
    crate::engine::base::process::is_active() && !is_dead()
}

/// `raise` under `-DMPIFT_MAP_SIGNALS`.
pub fn raise(sig: c_int) -> c_int {
    if mapped(sig) && can_die() {
        die_now(Cause::Signal);
    }
    // SAFETY: raise takes a plain int and touches no memory of ours; the
    // program asked for exactly this call.
    unsafe { libc::raise(sig) }
}

/// `kill` under `-DMPIFT_MAP_SIGNALS`.
pub fn kill(pid: c_int, sig: c_int) -> c_int {
    if mapped(sig) && pid == std::process::id() as c_int && can_die() {
        die_now(Cause::Signal);
    }
    // SAFETY: kill takes plain ints and touches no memory of ours; the program
    // asked for exactly this call.
    unsafe { libc::kill(pid as libc::pid_t, sig) }
}

extern "C" fn at_exit() {
    if can_die() {
        IN_EXIT.store(true, Ordering::Release);
        die_now(Cause::Exit);
    }
}

/// From `MPI_Init`: installs the `exit` hook if `MPIFT_EXIT_KILLS=1`.
pub fn start() {
    let on = match std::env::var("MPIFT_EXIT_KILLS") {
        Ok(v) => match v.trim() {
            "1" | "yes" | "true" => true,
            "" | "0" | "no" | "false" => false,
            other => {
                crate::say!("MPIFT: MPIFT_EXIT_KILLS=`{other}` is not 0 or 1; exit() stays a real exit");
                false
            }
        },
        Err(_) => false,
    };
    // Registered after the MPI library's own handlers, so it runs before them.
    if on && !HOOKED.swap(true, Ordering::AcqRel) {
        // SAFETY: `at_exit` is an `extern "C" fn()` that lives as long as the
        // program, and HOOKED registers it once.
        unsafe { libc::atexit(at_exit) };
    }
}

/// How a dead rank ends its process once the survivors have finalized.
pub fn end_process(status: c_int) -> ! {
    if IN_EXIT.load(Ordering::Acquire) {
        // SAFETY: fflush(NULL) flushes every C stream (a null stream is its
        // documented argument for that); _exit ends the process without running
        // the atexit handlers we are inside of.
        unsafe {
            libc::fflush(std::ptr::null_mut());
            libc::_exit(status)
        }
    }
    std::process::exit(status)
}
