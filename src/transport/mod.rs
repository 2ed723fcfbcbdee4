//! The host MPI. This folder is the only code that calls the underlying MPI
//! library; the layers above hold its handles (re-exported below) and call it
//! through typed functions, one per host call, grouped by family:
//! [`p2p`] (sends, receives, probes, cancel, pack), [`request`] (waits, tests,
//! request and generalized-request calls), [`coll`] (the local reduction and
//! an op's commutativity: the collective calls the table cannot generate),
//! [`generated`] (one host call per line of `src/ffi/mpi_functions.tbl`: every
//! collective, blocking, non-blocking and neighbourhood, among them), [`comm`]
//! (communicators, groups, attributes, error handlers, topologies, dynamic
//! processes), [`env`] (init, finalize, abort, thread level, error classes and
//! strings, datatype sizes) and [`window`] (MPIFT's one RMA window). [`serial`]
//! locks the host for programs that call it from several threads, [`script`]
//! runs sequences of window operations, [`stats`] counts MPIFT's own traffic.
//! The constants below give typed access to values that are C macros (exported
//! as symbols by `cpp/mpift_shim.c` or mpi-sys's own shim).
//!
//! **The typed functions.** Each is named after its host call in snake case
//! inside its family (`MPI_Isend` is `p2p::isend`, `MPI_Comm_free` is
//! `comm::free`, `MPI_Reduce_local` is `coll::reduce_local`) and returns the
//! host's return code: what a code means is decided above. The generated ones
//! keep the host's name (`generated::MPI_Iallreduce`) and are all `unsafe fn`s
//! (their `# Safety` is the MPI standard's). A hand-written function is safe when
//! every argument is a handle, a value, a reference or a slice (`&mut c_int` for
//! an out-value, `&mut [MPI_Request]` for an array, `Option<&mut MPI_Status>` for
//! a status that may be ignored). It is an `unsafe fn` only where a pointer the
//! program gave passes through unchecked (message buffers, the program's status
//! and request arrays, `argv`); its doc says in `# Safety` what the caller
//! promises, and each call site says why it holds. Handles are trusted: the
//! layers above only pass handles the host gave them (their registries), and a
//! wrong one makes the host report an error, as it would for the program.
//!
//! May import: nothing.

use mpi_sys as mpi;

pub mod coll;
pub mod comm;
pub mod env;
pub mod generated;
pub mod p2p;
pub mod request;
pub mod script;
pub mod serial;
pub mod stats;
pub mod window;

/// The host's handle and value types: the layers above keep and pass them.
pub use mpi_sys::{
    MPI_Aint, MPI_Comm, MPI_Datatype, MPI_Errhandler, MPI_Group, MPI_Info, MPI_Message, MPI_Op, MPI_Request, MPI_Status,
    MPI_Win,
};
/// The host's generalized-request callback types.
pub use mpi_sys::{MPI_Grequest_cancel_function, MPI_Grequest_free_function, MPI_Grequest_query_function};
/// The host's Fortran integer (`MPI_Fint`; a macro in Open MPI, so mpi-sys names it
/// `RSMPI_Fint`).
#[allow(non_camel_case_types)]
pub type MPI_Fint = mpi_sys::RSMPI_Fint;
/// The host's file handle and offset types (in the generated wrappers' signatures).
pub use mpi_sys::{MPI_File, MPI_Offset};
/// The host's `MPI_ERR_LASTCODE`, a compile-time constant of its `mpi.h` (MPIFT's
/// own error classes are placed relative to it, engine::base::errors).
pub const ERR_LASTCODE: i64 = mpi_sys::MPI_ERR_LASTCODE as i64;
use std::os::raw::{c_int, c_void};

extern "C" {
    static MPIFT_IN_PLACE: *mut c_void;
    static MPIFT_INT: MPI_Datatype;
    static MPIFT_BYTE: MPI_Datatype;
    static MPIFT_MAX_ERROR_STRING: c_int;
    static MPIFT_UINT64: MPI_Datatype;
    static MPIFT_PACKED: MPI_Datatype;
    static MPIFT_ANY_SOURCE: c_int;
    static MPIFT_ANY_TAG: c_int;
    static MPIFT_UNDEFINED: c_int;
    static MPIFT_INFO_NULL: mpi::MPI_Info;
    static MPIFT_COMM_TYPE_SHARED: c_int;
    static MPIFT_THREAD_MULTIPLE: c_int;
    static MPIFT_HOST_MPICH: c_int;
    fn mpift_create_noop_op(commute: c_int, op: *mut mpi::MPI_Op) -> c_int;
    static MPIFT_ERRORS_ABORT: MPI_Errhandler;
    static MPIFT_ERRHANDLER_NULL: MPI_Errhandler;
    fn mpift_create_ft_keyval(keyval: *mut c_int) -> c_int;
    fn mpift_create_errhandler_token(errhandler: *mut MPI_Errhandler) -> c_int;
    fn mpift_call_user_errhandler(f: *mut c_void, comm: *mut c_void, code: *mut c_int);
}

/// MPI error classes MPIFT itself returns, read from the real `mpi.h` (the C
/// shim exports each macro as a constant symbol).
pub mod err {
    use std::os::raw::c_int;
    mod sym {
        use std::os::raw::c_int;
        extern "C" {
            #[link_name = "MPIFT_SUCCESS"]
            pub static SUCCESS: c_int;
            #[link_name = "MPIFT_ERR_ARG"]
            pub static ARG: c_int;
            #[link_name = "MPIFT_ERR_COMM"]
            pub static COMM: c_int;
            #[link_name = "MPIFT_ERR_REQUEST"]
            pub static REQUEST: c_int;
            #[link_name = "MPIFT_ERR_OTHER"]
            pub static OTHER: c_int;
            #[link_name = "MPIFT_ERR_INTERN"]
            pub static INTERN: c_int;
            #[link_name = "MPIFT_ERR_IN_STATUS"]
            pub static IN_STATUS: c_int;
            #[link_name = "MPIFT_ERR_PENDING"]
            pub static PENDING: c_int;
            #[link_name = "MPIFT_ERR_SPAWN"]
            pub static SPAWN: c_int;
            #[link_name = "MPIFT_ERR_ROOT"]
            pub static ROOT: c_int;
        }
    }
    /// `MPI_SUCCESS`.
    pub fn success() -> c_int {
        // SAFETY: an immutable int the C shim initialised from the host's macro.
        unsafe { sym::SUCCESS }
    }
    /// `MPI_ERR_ARG`.
    pub fn arg() -> c_int {
        // SAFETY: an immutable int the C shim initialised from the host's macro.
        unsafe { sym::ARG }
    }
    /// `MPI_ERR_COMM`.
    pub fn comm() -> c_int {
        // SAFETY: an immutable int the C shim initialised from the host's macro.
        unsafe { sym::COMM }
    }
    /// `MPI_ERR_REQUEST`.
    pub fn request() -> c_int {
        // SAFETY: an immutable int the C shim initialised from the host's macro.
        unsafe { sym::REQUEST }
    }
    /// `MPI_ERR_OTHER`.
    pub fn other() -> c_int {
        // SAFETY: an immutable int the C shim initialised from the host's macro.
        unsafe { sym::OTHER }
    }
    /// `MPI_ERR_INTERN`.
    pub fn intern() -> c_int {
        // SAFETY: an immutable int the C shim initialised from the host's macro.
        unsafe { sym::INTERN }
    }
    /// `MPI_ERR_IN_STATUS`.
    pub fn in_status() -> c_int {
        // SAFETY: an immutable int the C shim initialised from the host's macro.
        unsafe { sym::IN_STATUS }
    }
    /// `MPI_ERR_PENDING`.
    pub fn pending() -> c_int {
        // SAFETY: an immutable int the C shim initialised from the host's macro.
        unsafe { sym::PENDING }
    }
    /// `MPI_ERR_SPAWN`.
    pub fn spawn() -> c_int {
        // SAFETY: an immutable int the C shim initialised from the host's macro.
        unsafe { sym::SPAWN }
    }
    /// `MPI_ERR_ROOT`.
    pub fn root() -> c_int {
        // SAFETY: an immutable int the C shim initialised from the host's macro.
        unsafe { sym::ROOT }
    }
}

pub fn comm_world() -> MPI_Comm {
    // SAFETY: an immutable handle mpi-sys's C shim (rsmpi.c) initialised from the host's macro.
    unsafe { mpi::RSMPI_COMM_WORLD }
}
pub fn comm_self() -> MPI_Comm {
    // SAFETY: an immutable handle mpi-sys's C shim (rsmpi.c) initialised from the host's macro.
    unsafe { mpi::RSMPI_COMM_SELF }
}
pub fn comm_null() -> MPI_Comm {
    // SAFETY: an immutable handle mpi-sys's C shim (rsmpi.c) initialised from the host's macro.
    unsafe { mpi::RSMPI_COMM_NULL }
}
pub fn request_null() -> MPI_Request {
    // SAFETY: an immutable handle mpi-sys's C shim (rsmpi.c) initialised from the host's macro.
    unsafe { mpi::RSMPI_REQUEST_NULL }
}
pub fn errors_return() -> MPI_Errhandler {
    // SAFETY: an immutable handle mpi-sys's C shim (rsmpi.c) initialised from the host's macro.
    unsafe { mpi::RSMPI_ERRORS_RETURN }
}
pub fn errors_are_fatal() -> MPI_Errhandler {
    // SAFETY: an immutable handle mpi-sys's C shim (rsmpi.c) initialised from the host's macro.
    unsafe { mpi::RSMPI_ERRORS_ARE_FATAL }
}
/// `MPI_ERRORS_ABORT` where the MPI has it (MPI-4), else `MPI_ERRORS_ARE_FATAL`.
pub fn errors_abort() -> MPI_Errhandler {
    // SAFETY: an immutable handle the C shim (cpp/mpift_shim.c) initialised from the host's MPI_ERRORS_ABORT (or MPI_ERRORS_ARE_FATAL).
    unsafe { MPIFT_ERRORS_ABORT }
}
pub fn errhandler_null() -> MPI_Errhandler {
    // SAFETY: a constant the C shim initialised from the host's macro.
    unsafe { MPIFT_ERRHANDLER_NULL }
}
/// A status for the host to fill (the starting value of an out-argument).
#[inline]
pub fn zero_status() -> MPI_Status {
    // SAFETY: MPI_Status is a C struct of integers (and, in MPICH and Open MPI, a
    // size_t count): all-zero bytes are a valid value.
    unsafe { std::mem::zeroed() }
}
/// A group handle for the host to overwrite (an out-argument's starting value).
pub fn zero_group() -> MPI_Group {
    // SAFETY: a group handle is a C int (MPICH) or a pointer (Open MPI): all-zero
    // bits are a valid value of either.
    unsafe { std::mem::zeroed() }
}
/// A message handle for the host to overwrite (an out-argument's starting value).
pub fn zero_message() -> MPI_Message {
    // SAFETY: a message handle is a C int (MPICH) or a pointer (Open MPI): all-zero
    // bits are a valid value of either.
    unsafe { std::mem::zeroed() }
}
pub fn group_empty() -> MPI_Group {
    // SAFETY: an immutable handle mpi-sys's C shim (rsmpi.c) initialised from the host's macro.
    unsafe { mpi::RSMPI_GROUP_EMPTY }
}
pub fn in_place() -> *mut c_void {
    // SAFETY: an immutable pointer constant the C shim initialised from the host's MPI_IN_PLACE (only passed back to the host, never dereferenced).
    unsafe { MPIFT_IN_PLACE }
}
pub fn dt_int() -> MPI_Datatype {
    // SAFETY: an immutable constant the C shim (cpp/mpift_shim.c) initialised from the host's macro.
    unsafe { MPIFT_INT }
}
pub fn dt_byte() -> MPI_Datatype {
    // SAFETY: an immutable constant the C shim (cpp/mpift_shim.c) initialised from the host's macro.
    unsafe { MPIFT_BYTE }
}
pub fn dt_packed() -> MPI_Datatype {
    // SAFETY: an immutable constant the C shim (cpp/mpift_shim.c) initialised from the host's macro.
    unsafe { MPIFT_PACKED }
}
pub fn dt_uint64() -> MPI_Datatype {
    // SAFETY: an immutable constant the C shim (cpp/mpift_shim.c) initialised from the host's macro.
    unsafe { MPIFT_UINT64 }
}
pub fn any_source() -> c_int {
    // SAFETY: an immutable constant the C shim (cpp/mpift_shim.c) initialised from the host's macro.
    unsafe { MPIFT_ANY_SOURCE }
}
pub fn any_tag() -> c_int {
    // SAFETY: an immutable constant the C shim (cpp/mpift_shim.c) initialised from the host's macro.
    unsafe { MPIFT_ANY_TAG }
}
pub fn undefined() -> c_int {
    // SAFETY: an immutable constant the C shim (cpp/mpift_shim.c) initialised from the host's macro.
    unsafe { MPIFT_UNDEFINED }
}
pub fn info_null() -> mpi::MPI_Info {
    // SAFETY: an immutable constant the C shim (cpp/mpift_shim.c) initialised from the host's macro.
    unsafe { MPIFT_INFO_NULL }
}
pub fn comm_type_shared() -> c_int {
    // SAFETY: an immutable constant the C shim (cpp/mpift_shim.c) initialised from the host's macro.
    unsafe { MPIFT_COMM_TYPE_SHARED }
}
/// The host MPI is MPICH (or a derivative), not Open MPI.
pub fn host_is_mpich() -> bool {
    // SAFETY: an immutable C constant.
    unsafe { MPIFT_HOST_MPICH != 0 }
}
pub fn thread_multiple() -> c_int {
    // SAFETY: an immutable constant the C shim (cpp/mpift_shim.c) initialised from the host's macro.
    unsafe { MPIFT_THREAD_MULTIPLE }
}
/// A do-nothing reduction with the given commutativity (for dead ranks' dummies).
pub fn noop_op(commute: bool) -> mpi::MPI_Op {
    struct Ops(mpi::MPI_Op, mpi::MPI_Op);
    // SAFETY: two op handles of the host, process-wide objects any thread may
    // name (Open MPI's are pointers, hence not Send by default); Rust never
    // dereferences them, and the mutex below orders their creation.
    unsafe impl Send for Ops {}
    static OPS: std::sync::Mutex<Option<Ops>> = std::sync::Mutex::new(None);
    let mut g = OPS.lock().unwrap();
    let ops = g.get_or_insert_with(|| {
        // SAFETY: MPI_Op is a C handle (a pointer in Open MPI, an int in MPICH):
        // all-zero bytes are a valid value of it, overwritten just below.
        let mut a: mpi::MPI_Op = unsafe { std::mem::zeroed() };
        // SAFETY: as for `a`: an all-zero C handle is a valid placeholder value.
        let mut b: mpi::MPI_Op = unsafe { std::mem::zeroed() };
        // SAFETY: `a` and `b` are live local out-handles; the shim passes each to
        // MPI_Op_create with its own do-nothing C reduction (after MPI_Init: the
        // dead ranks' dummies that ask for it run inside the layer).
        unsafe {
            mpift_create_noop_op(1, &mut a);
            mpift_create_noop_op(0, &mut b);
        }
        Ops(a, b)
    });
    if commute {
        ops.0
    } else {
        ops.1
    }
}
pub fn op_band() -> mpi::MPI_Op {
    // SAFETY: an immutable handle mpi-sys's C shim (rsmpi.c) initialised from the host's macro.
    unsafe { mpi::RSMPI_BAND }
}
pub fn max_error_string() -> usize {
    // SAFETY: an immutable constant the C shim (cpp/mpift_shim.c) initialised from the host's macro.
    unsafe { MPIFT_MAX_ERROR_STRING as usize }
}
pub fn proc_null() -> c_int {
    // SAFETY: an immutable value mpi-sys's C shim (rsmpi.c) initialised from the host's macro.
    unsafe { mpi::RSMPI_PROC_NULL }
}
pub fn status_ignore() -> *mut mpi::MPI_Status {
    // SAFETY: an immutable pointer constant rsmpi.c initialised from the host's MPI_STATUS_IGNORE (only passed back to the host, never dereferenced).
    unsafe { mpi::RSMPI_STATUS_IGNORE }
}

/// Is the layer's own request `r` complete? Tests it once (`MPI_REQUEST_NULL`
/// counts as complete); the status is ignored.
pub fn test_done(r: &mut MPI_Request) -> bool {
    if *r == request_null() {
        return true;
    }
    let mut flag = 0;
    // SAFETY: `r` is a request handle of the layer's own (a live &mut), `flag` a
    // local out-int, and the status is ignored.
    unsafe { mpi::MPI_Test(r, &mut flag, status_ignore()) };
    flag != 0 || *r == request_null()
}

/// Creates the keyval behind the `MPIX_FT` attribute.
pub fn create_ft_keyval(keyval: &mut c_int) -> c_int {
    // SAFETY: `keyval` is an out-int the caller owns; the shim passes it to
    // MPI_Comm_create_keyval with the host's null copy and delete functions.
    unsafe { mpift_create_ft_keyval(keyval) }
}

/// A real errhandler object that stands for a user's handler. Its C function does
/// nothing: MPIFT invokes the user's function itself, with MPIFT's handle.
pub fn create_errhandler_token(out: &mut MPI_Errhandler) -> c_int {
    // SAFETY: `out` is an out-handle the caller owns; the shim passes it to
    // MPI_Comm_create_errhandler with its own do-nothing C function.
    unsafe { mpift_create_errhandler_token(out) }
}

/// Calls a user's (C-variadic) communicator error handler through the C shim.
///
/// # Safety
/// `f` must be a function of type `MPI_Comm_errhandler_function` as seen by the
/// program (taking MPIFT's communicator handle).
pub unsafe fn call_user_errhandler(f: *mut c_void, comm: *mut c_void, code: &mut c_int) {
    mpift_call_user_errhandler(f, comm, code)
}

extern "C" {
    fn mpift_comm_c2f(comm: MPI_Comm) -> mpi::RSMPI_Fint;
    fn mpift_comm_f2c(comm: mpi::RSMPI_Fint) -> MPI_Comm;
    fn mpift_request_c2f(request: MPI_Request) -> mpi::RSMPI_Fint;
    fn mpift_request_f2c(request: mpi::RSMPI_Fint) -> MPI_Request;
    fn mpift_unweighted() -> *mut c_int;
    fn mpift_weights_empty() -> *mut c_int;
}

/// `MPI_Comm_c2f` of the real MPI (a macro in MPICH).
pub fn comm_c2f(c: MPI_Comm) -> mpi::RSMPI_Fint {
    // SAFETY: the shim's wrapper of the host's conversion: a handle in, a value out, no memory of ours.
    unsafe { mpift_comm_c2f(c) }
}
/// `MPI_Comm_f2c` of the real MPI.
pub fn comm_f2c(f: mpi::RSMPI_Fint) -> MPI_Comm {
    // SAFETY: the shim's wrapper of the host's conversion: a value in, a handle out, no memory of ours.
    unsafe { mpift_comm_f2c(f) }
}
/// `MPI_Request_c2f` of the real MPI.
pub fn request_c2f(r: MPI_Request) -> mpi::RSMPI_Fint {
    // SAFETY: the shim's wrapper of the host's conversion: a handle in, a value out, no memory of ours.
    unsafe { mpift_request_c2f(r) }
}
/// `MPI_Request_f2c` of the real MPI.
pub fn request_f2c(f: mpi::RSMPI_Fint) -> MPI_Request {
    // SAFETY: the shim's wrapper of the host's conversion: a value in, a handle out, no memory of ours.
    unsafe { mpift_request_f2c(f) }
}
/// `MPI_UNWEIGHTED` (a pointer constant: a variable in MPICH, a macro in Open MPI).
pub fn unweighted() -> *mut c_int {
    // SAFETY: the shim returns the host's MPI_UNWEIGHTED pointer constant; it
    // takes nothing, and the pointer is only passed back to the host.
    unsafe { mpift_unweighted() }
}
/// `MPI_WEIGHTS_EMPTY`.
pub fn weights_empty() -> *mut c_int {
    // SAFETY: the shim returns the host's MPI_WEIGHTS_EMPTY pointer constant; it
    // takes nothing, and the pointer is only passed back to the host.
    unsafe { mpift_weights_empty() }
}

/// Topology kinds as `MPI_Topo_test` reports them.
pub mod topo_kind {
    use std::os::raw::c_int;
    extern "C" {
        #[link_name = "MPIFT_CART"]
        pub static CART: c_int;
        #[link_name = "MPIFT_GRAPH"]
        pub static GRAPH: c_int;
        #[link_name = "MPIFT_DIST_GRAPH"]
        pub static DIST_GRAPH: c_int;
    }
}
