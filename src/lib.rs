//! MPIFT: simulated process failures and the ULFM fault-tolerance API on top of
//! any ordinary MPI.
//!
//! A C or C++ program swaps `<mpi.h>` for `MPI-FT.h` + `MPI-FT_redefine.h` (or adds
//! `-I<prefix>/include/compat`) and links `libmpift.a`. Every MPI call then enters
//! this library through [`ffi`] and is carried out on the host MPI through
//! [`transport`]. The folders, each importing only those below it
//! (`docs/ARCHITECTURE.md`; `tests/arch/check.py` keeps it so):
//! - [`ffi`]: every `extern "C"` function, the panic boundary, the one error path.
//! - [`calls`]: the semantics of the MPI call families that need more than the
//!   generic wrappers.
//! - [`inject`]: fault injection (kill policies, bit flips) and the run report.
//! - [`engine`]: the process runtime: registries, failure news, revoke, dead
//!   ranks' joins, agreement, completion, progress.
//! - [`protocol`]: pure state machines (no MPI), tested in memory at scale.
//! - [`transport`]: the only code that calls the host MPI.

/// `eprintln!` in one `write(2)`: the standard macro writes each formatted piece
/// separately, and `mpiexec` then interleaves other ranks' output inside MPIFT's
/// lines (a line `MPIFT: rank 11 passed, 0 failed` was seen in a campaign). A line
/// shorter than `PIPE_BUF` reaches the pipe whole.
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {{
        let mut line = format!($($arg)*);
        line.push('\n');
        $crate::say_raw(&line);
    }};
}

/// Writes `text` to stderr in one call (see [`say!`]); errors are ignored, as
/// `eprintln!`'s are not (it panics), and MPIFT must never panic for a notice.
pub fn say_raw(text: &str) {
    use std::io::Write;
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

pub mod calls;
pub mod engine;
pub mod ffi;
pub mod inject;
pub mod protocol;
pub mod transport;
