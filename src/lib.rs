//! MPIFT: simulated process failures and the ULFM fault-tolerance API on top of
//! any ordinary MPI.
//!
//! A C or C++ program swaps `<mpi.h>` for `MPI-FT.h` + `MPI-FT_redefine.h` (or adds
//! `-I<prefix>/include/compat`) and links `libmpift.a`. Every MPI call then enters
//! this library through [`ffi`], which checks handles and contains panics, and is
//! carried out by [`layer`] on the real MPI through [`transport`].
//!
//! The rooms of the house (see `docs/ARCHITECTURE.md`):
//! - [`ffi`]: every `extern "C"` item, handle checks, the panic boundary, error codes.
//! - [`layer`]: MPIFT's communicator and request objects and the semantics of each call.
//! - [`transport`]: the only code that calls the real MPI.
//! - [`protocol`]: pure state machines (no MPI), tested in memory at scale.
//! - [`inject`]: fault injection (kill policies, bit flips) and the run report.

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
