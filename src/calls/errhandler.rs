//! Error handlers (MPI-3.1 §8.3) and error strings.
//!
//! The real communicator never aborts on its own: it carries `MPI_ERRORS_RETURN`
//! (or, for a user handler, a do-nothing token that keeps the real errhandler
//! object alive), so every error comes back to MPIFT, which then applies the
//! handler the user chose: return, abort, or call the user's function with the
//! user's own handle (the one a callback must see, never the real one).

use crate::engine::base::errors;
use crate::engine::registry::comm_state;
use crate::engine::base::errors::{Failure, Outcome, CLASSES};
use crate::engine::base::handles::{self, Sim_FT_MPI_Comm, Sim_FT_MPI_Comm_errhandler_function};
use crate::engine::registry::pending;
use crate::engine::{registry::args, registry::comm, base::handles::Real};
use crate::transport::{self, err, MPI_Errhandler};
use std::os::raw::{c_char, c_int, c_void};
use std::sync::Mutex;

/// User handlers: the real token errhandler and the user's C function.
static USER_HANDLERS: Mutex<Vec<(Real<MPI_Errhandler>, usize)>> = Mutex::new(Vec::new());

fn user_fn(eh: MPI_Errhandler) -> Option<usize> {
    USER_HANDLERS.lock().unwrap().iter().find(|(t, _)| t.0 == eh).map(|(_, f)| *f)
}

fn is_predefined(eh: MPI_Errhandler) -> bool {
    eh == transport::errors_return()
        || eh == transport::errors_are_fatal()
        || eh == transport::errors_abort()
}

/// Reports `failure` through its communicator's handler; returns the code the MPI
/// call returns (if the handler returns at all).
pub fn raise(name: &str, failure: Failure) -> c_int {
    let world = handles::world_handle();
    let h = if failure.comm.is_null() { world } else { failure.comm };
    let handler_and_comm = |st: &comm_state::CommState| (st.errhandler.0, st.real.0);
    let Some((eh, real)) = comm::read(h, handler_and_comm).or_else(|| comm::read(world, handler_and_comm))
    else {
        return failure.code;
    };
    if eh == transport::errors_return() {
        return failure.code;
    }
    let raised = failure.handler_code();
    if let Some(f) = user_fn(eh) {
        let mut handle = h;
        let mut code = raised;
        // SAFETY: `f` was registered by `create` as the program's
        // MPI_Comm_errhandler_function (a non-null pointer it gave); it gets
        // pointers to this frame's handle and code, both live for the call.
        unsafe {
            transport::call_user_errhandler(
                f as *mut c_void,
                &mut handle as *mut Sim_FT_MPI_Comm as *mut c_void,
                &mut code,
            )
        };
        return failure.code;
    }
    crate::say!(
        "MPIFT: {name}: {} (error code {}); the communicator's error handler is fatal: aborting",
        error_text(raised),
        raised
    );
    let exit = if (1..256).contains(&raised) { raised } else { 1 };
    transport::env::abort(real, exit);
    failure.code
}

/// The text of an error code (MPIFT's classes or the real MPI's).
pub fn error_text(code: c_int) -> String {
    if let Some((_, text)) = CLASSES.iter().find(|(c, _)| *c == code) {
        return text.to_string();
    }
    if let Some(text) = hinted_text(code) {
        return text;
    }
    let mut buf = vec![0 as c_char; transport::max_error_string() + 1];
    let mut len = 0;
    // SAFETY: `buf` has room for MPI_MAX_ERROR_STRING + 1 characters and lives
    // for the call.
    if unsafe { transport::env::error_string(code, buf.as_mut_ptr(), &mut len) } != 0 {
        return format!("unknown error code {code}");
    }
    let bytes: Vec<u8> = buf[..len.max(0) as usize].iter().map(|&c| c as u8).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// `MPI_Error_string`, knowing MPIFT's classes.
pub fn error_string(code: c_int, string: *mut c_char, resultlen: *mut c_int) -> Outcome {
    if string.is_null() || resultlen.is_null() {
        return Err(Failure::on_world(err::arg()));
    }
    let known = CLASSES.iter().find(|(c, _)| *c == code).map(|(_, t)| t.to_string()).or_else(|| hinted_text(code));
    // SAFETY: checked non-null above; the program's int out, which MPI requires
    // valid for writing.
    let resultlen = unsafe { &mut *resultlen };
    let Some(text) = known else {
        // SAFETY: `string` is the program's, checked non-null, and MPI-3.1 §8.4
        // requires room for MPI_MAX_ERROR_STRING characters there.
        let rc = unsafe { transport::env::error_string(code, string, resultlen) };
        return Failure::check_world(rc);
    };
    let n = text.len().min(transport::max_error_string() - 1);
    // SAFETY: `string` is checked non-null with room for MPI_MAX_ERROR_STRING
    // characters (MPI-3.1 §8.4); `n` + 1 is at most that, and `text` is a
    // separate Rust string of at least `n` bytes, so the copy does not overlap.
    unsafe {
        std::ptr::copy_nonoverlapping(text.as_ptr() as *const c_char, string, n);
        *string.add(n) = 0;
    }
    *resultlen = n as c_int;
    Ok(())
}

/// `MPI_Error_class`: MPIFT's classes are their own class.
pub fn error_class(code: c_int, class: *mut c_int) -> Outcome {
    if class.is_null() {
        return Err(Failure::on_world(err::arg()));
    }
    // SAFETY: checked non-null above; the program's int out, which MPI requires
    // valid for writing.
    let class = unsafe { &mut *class };
    if CLASSES.iter().any(|(c, _)| *c == code) {
        *class = code;
        return Ok(());
    }
    let rc = transport::env::error_class(code, class);
    Failure::check_world(rc)
}

/// `MPI_Comm_create_errhandler`.
pub fn create(f: *mut Sim_FT_MPI_Comm_errhandler_function, out: *mut MPI_Errhandler) -> Outcome {
    if f.is_null() || out.is_null() {
        return Err(Failure::on_world(err::arg()));
    }
    // SAFETY: an errhandler handle is a pointer (Open MPI) or an int (MPICH);
    // all zeros is a valid value of either, overwritten by the call below.
    let mut token = unsafe { std::mem::zeroed::<MPI_Errhandler>() };
    let rc = transport::create_errhandler_token(&mut token);
    Failure::check_world(rc)?;
    let mut table = USER_HANDLERS.lock().unwrap();
    table.retain(|(t, _)| t.0 != token); // a freed token's value may be reused
    table.push((Real(token), f as usize));
    // SAFETY: checked non-null above; the program's out handle.
    unsafe { *out = token };
    Ok(())
}

/// The handler the real communicator carries for the program's `eh` (see the
/// module doc): a user handler's token, else `MPI_ERRORS_RETURN`.
pub(crate) fn real_for(eh: MPI_Errhandler) -> MPI_Errhandler {
    if user_fn(eh).is_some() {
        eh
    } else {
        transport::errors_return()
    }
}

/// `MPI_Comm_set_errhandler`.
pub fn set(c: Sim_FT_MPI_Comm, eh: MPI_Errhandler) -> Outcome {
    if user_fn(eh).is_none() && !is_predefined(eh) {
        return Err(Failure::on(c, err::arg()));
    }
    if pending::with(c, |p| {
        p.errhandler = Real(eh);
        p.real_errhandler = Real(real_for(eh));
    })
    .is_some()
    {
        return Ok(());
    }
    let cr = args::comm_arg(c)?;
    let real_eh = real_for(eh);
    let rc = transport::comm::set_errhandler(cr.real, real_eh);
    Failure::check(rc, c)?;
    comm::update(c, |st| st.errhandler = Real(eh));
    Ok(())
}

/// References to user handlers that MPIFT handed out without the host's
/// (`get` on an idup's communicator before it is usable): their free is MPIFT's.
static UNBACKED: Mutex<Vec<Real<MPI_Errhandler>>> = Mutex::new(Vec::new());

/// `MPI_Errhandler_free`. A predefined handler that [`get`] handed out carries no
/// reference of the host's (the real communicator's handler is MPIFT's choice,
/// not the program's), so freeing it only nulls the program's handle, as MPI
/// allows (MPI-3.1 §8.3.4). Passing it to the host dropped a reference the host
/// never gave: Open MPI refuses the last one (`MPI_ERR_ARG`, mpi4py's
/// `test_exceptions`) and frees the predefined object before that (mpi4py's
/// `testGetFree`: `free(): invalid pointer`). User handlers: the host's call.
pub fn free(eh: *mut MPI_Errhandler) -> Outcome {
    if eh.is_null() {
        return Err(Failure::on_world(err::arg()));
    }
    // SAFETY: checked non-null; the program's in-out handle, which MPI requires
    // valid for reading and writing.
    let eh = unsafe { &mut *eh };
    if is_predefined(*eh) {
        *eh = transport::errhandler_null();
        return Ok(());
    }
    {
        let mut unbacked = UNBACKED.lock().unwrap();
        if let Some(i) = unbacked.iter().position(|r| r.0 == *eh) {
            unbacked.swap_remove(i);
            *eh = transport::errhandler_null();
            return Ok(());
        }
    }
    // The host checks the handle itself.
    let rc = transport::comm::errhandler_free(eh);
    Failure::check_world(rc)
}

/// `MPI_Comm_get_errhandler`.
pub fn get(c: Sim_FT_MPI_Comm, out: *mut MPI_Errhandler) -> Outcome {
    if let Some(eh) = pending::with(c, |p| p.errhandler.0) {
        if out.is_null() {
            return Err(Failure::on_world(err::arg()));
        }
        if user_fn(eh).is_some() {
            // The program will free this reference; the host has not given it.
            UNBACKED.lock().unwrap().push(Real(eh));
        }
        // SAFETY: checked non-null just above; the program's out handle, which
        // MPI requires valid for writing.
        unsafe { *out = eh };
        return Ok(());
    }
    let cr = args::comm_arg(c)?;
    errors::check_out_ptr(out, &cr)?;
    // SAFETY: checked non-null above; the program's out handle, which MPI
    // requires valid for writing.
    let out = unsafe { &mut *out };
    let eh = comm::read(c, |st| st.errhandler.0).expect("looked up above");
    if user_fn(eh).is_some() {
        // The real call adds the reference the caller will release.
        let rc = transport::comm::get_errhandler(cr.real, out);
        return Failure::check(rc, c);
    }
    *out = eh;
    Ok(())
}

/// `MPI_Comm_call_errhandler`: the error is "raised" on `comm`; the call itself
/// succeeds if the handler returns (MPI-3.1 §8.3.6).
pub fn call(c: Sim_FT_MPI_Comm, code: c_int) -> Outcome {
    args::comm_arg(c)?;
    raise("MPI_Comm_call_errhandler", Failure::on(c, code));
    Ok(())
}

/// Codes made by [`with_hint`]: the host's code, the hint's code, its text.
static HINTED: Mutex<Vec<(c_int, c_int, String)>> = Mutex::new(Vec::new());

/// The text of a code made by [`with_hint`] (MPIFT answers `MPI_Error_string`
/// for it: MPICH 4.0 ignores `MPI_Add_error_string` for a code of a predefined class).
fn hinted_text(code: c_int) -> Option<String> {
    HINTED.lock().unwrap().iter().find(|h| h.1 == code).map(|h| h.2.clone())
}

/// A code of `code`'s class whose `MPI_Error_string` is `hint` followed by the
/// host's text for `code` (made once per code with `MPI_Add_error_code`, so the
/// host knows its class). `code` itself if the host refuses.
pub fn with_hint(code: c_int, hint: &str) -> c_int {
    if let Some(h) = HINTED.lock().unwrap().iter().find(|h| h.0 == code) {
        return h.1;
    }
    let mut class = code;
    let mut new = 0;
    if transport::env::error_class(code, &mut class) != 0 || transport::env::add_error_code(class, &mut new) != 0 {
        return code;
    }
    let text = format!("{hint} [{}]", error_text(code));
    let max = transport::max_error_string().saturating_sub(1);
    let text: String = text.chars().filter(|c| *c != '\0').take(max).collect();
    HINTED.lock().unwrap().push((code, new, text));
    new
}

/// At `MPI_Init`, where MPIFT's classes sit above the host's `MPI_ERR_LASTCODE`
/// (engine::base::errors): takes the same three values from the host with
/// `MPI_Add_error_class`, so it never hands them out to the program and its
/// `MPI_LASTUSEDCODE` counts them. A host that answers other values (none seen)
/// is said aloud: the program's added classes could then equal MPIFT's.
pub fn reserve_classes() {
    if !crate::engine::base::errors::ABOVE_HOST {
        return;
    }
    for (want, text) in CLASSES {
        let mut got: c_int = -1;
        let rc = transport::env::add_error_class(&mut got);
        if rc != 0 || got != want {
            crate::say!("MPIFT: MPI_Init: the host MPI gave error class {got} (rc {rc}), not {want}: added classes may equal MPIFT's ULFM classes");
            return;
        }
        let mut bytes: Vec<u8> = text.bytes().take(transport::max_error_string().saturating_sub(1)).collect();
        bytes.push(0);
        // The host reads up to the first NUL, as before: the pushed one or an
        // earlier one in `text`.
        let string = std::ffi::CStr::from_bytes_until_nul(&bytes).expect("ends with a NUL");
        transport::env::add_error_string(got, string);
    }
}
