//! Communicator attribute keyvals with callbacks (MPI-3.1 §6.7.2): the copy and
//! delete functions a program registers take MPIFT's communicator handle, so the
//! real MPI gets trampolines that translate the real communicator it passes into
//! the program's handle before calling the program's function. The deprecated
//! MPI-1 names (`MPI_Keyval_create`, `MPI_Attr_*`) are aliases of the same calls.
//!
//! - A keyval's record (the program's two functions and its `extra_state`) is the
//!   real keyval's `extra_state`. It lives until the real MPI hands out the same
//!   keyval number again (it reuses a number only after the keyval is gone, i.e.
//!   after its last attribute was deleted), so callbacks can never see a freed
//!   record.
//! - A simulated-dead rank runs no program code: there the trampolines copy
//!   nothing and delete silently.
//! - Communicators MPIFT creates for itself and frees at once (a dead rank's or a
//!   catching-up rank's dummy `MPI_Comm_dup`, a constructor that failed because a
//!   member is dead) are not the program's: their delete callbacks are not called.
//!   A copy callback that allocated for such a communicator therefore leaks.
//! - `MPI_Finalize` deletes `MPI_COMM_SELF`'s attributes first, in the reverse
//!   order of setting, while MPI is still fully usable (MPI-3.1 §8.7.1), so
//!   "cleanup at finalize" callbacks may call MPI.

use crate::engine::base::runtime;
use crate::engine::base::errors::{Failure, Outcome};
use crate::engine::base::handles::{self, Sim_FT_MPI_Comm, Sim_FT_MPI_Comm_copy_attr_function, Sim_FT_MPI_Comm_delete_attr_function};
use crate::engine::{registry::args, registry::comm};
use crate::transport::{self, err, MPI_Comm};
use std::os::raw::{c_int, c_void};
use std::sync::Mutex;

type CopyFn = unsafe extern "C" fn(Sim_FT_MPI_Comm, c_int, *mut c_void, *mut c_void, *mut c_void, *mut c_int) -> c_int;
type DeleteFn = unsafe extern "C" fn(Sim_FT_MPI_Comm, c_int, *mut c_void, *mut c_void) -> c_int;

/// The program's side of a keyval.
struct Keyval {
    copy: Option<CopyFn>,
    delete: Option<DeleteFn>,
    extra: *mut c_void,
}

/// (keyval, its record as a raw `Box<Keyval>`).
static KEYVALS: Mutex<Vec<(c_int, usize)>> = Mutex::new(Vec::new());
/// Keyvals set on `MPI_COMM_SELF`, in the order they were (last) set.
static SELF_ORDER: Mutex<Vec<c_int>> = Mutex::new(Vec::new());

/// True in a simulated-dead rank: while it serves, and in its final
/// `MPI_Finalize` (the library is still active but the news runtime is gone).
fn in_dead_rank() -> bool {
    runtime::is_zombie() || (crate::engine::base::process::is_active() && runtime::with(|_| ()).is_none())
}

/// The host's copy callback of every keyval made by [`create`].
///
/// # Safety
/// Called by the host only: `extra` is the keyval's record (a live `Keyval`,
/// module doc) and `flag` (and `val_out`, for the program's function) are the
/// host's valid out-pointers.
unsafe extern "C" fn copy_trampoline(
    old: MPI_Comm,
    keyval: c_int,
    extra: *mut c_void,
    val_in: *mut c_void,
    val_out: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    let kv = &*(extra as *const Keyval);
    match (kv.copy, in_dead_rank(), comm::find_by_real(old)) {
        (Some(f), false, Some(h)) => f(h, keyval, kv.extra, val_in, val_out, flag),
        _ => {
            *flag = 0;
            0
        }
    }
}

/// The host's delete callback of every keyval made by [`create`].
///
/// # Safety
/// Called by the host only: `extra` is the keyval's record (a live `Keyval`,
/// module doc).
unsafe extern "C" fn delete_trampoline(c: MPI_Comm, keyval: c_int, val: *mut c_void, extra: *mut c_void) -> c_int {
    let kv = &*(extra as *const Keyval);
    match (kv.delete, in_dead_rank(), comm::find_by_real(c)) {
        (Some(f), false, Some(h)) => f(h, keyval, val, kv.extra),
        _ => 0,
    }
}

/// `MPI_Comm_create_keyval` (and `MPI_Keyval_create`).
pub fn create(
    copy_fn: *mut Sim_FT_MPI_Comm_copy_attr_function,
    delete_fn: *mut Sim_FT_MPI_Comm_delete_attr_function,
    keyval: *mut c_int,
    extra_state: *mut c_void,
) -> Outcome {
    if keyval.is_null() {
        return Err(Failure::on_world(err::arg()));
    }
    let rec = Box::into_raw(Box::new(Keyval {
        // SAFETY: `Option<CopyFn>` is a pointer with null as None; the program
        // passed null or a function of the C type `CopyFn` spells
        // (MPI_Comm_copy_attr_function on MPIFT's handles, MPI-3.1 §6.7.2).
        copy: unsafe { std::mem::transmute::<*mut c_void, Option<CopyFn>>(copy_fn) },
        // SAFETY: the same, for the delete function (`DeleteFn`).
        delete: unsafe { std::mem::transmute::<*mut c_void, Option<DeleteFn>>(delete_fn) },
        extra: extra_state,
    }));
    // SAFETY: the trampolines read `extra` as a `Keyval`: `rec` is one, leaked
    // here and freed only when the host hands out its keyval number again, i.e.
    // after the keyval and its last attribute are gone (module doc), so it
    // outlives every callback. `keyval` is the program's out-int, checked non-null.
    let rc = unsafe { transport::comm::create_keyval(copy_trampoline, delete_trampoline, &mut *keyval, rec as *mut c_void) };
    if rc != 0 {
        // SAFETY: `rec` came from Box::into_raw above and the host refused the
        // keyval, so nothing else holds it.
        drop(unsafe { Box::from_raw(rec) });
        return Err(Failure::on_world(rc));
    }
    // SAFETY: the program's out-int, checked non-null, just written by the host.
    let k = unsafe { *keyval };
    let mut t = KEYVALS.lock().unwrap();
    if let Some(i) = t.iter().position(|(x, _)| *x == k) {
        // The number was reused: the keyval it named is gone, and its record with it.
        // SAFETY: a record from Box::into_raw in an earlier `create`, removed from
        // the table below; its keyval is gone, so no callback can still read it.
        drop(unsafe { Box::from_raw(t[i].1 as *mut Keyval) });
        t.swap_remove(i);
    }
    t.push((k, rec as usize));
    Ok(())
}

/// `MPI_Comm_free_keyval` (and `MPI_Keyval_free`). The record stays: attributes
/// with this keyval may still be copied or deleted.
pub fn free(keyval: *mut c_int) -> Outcome {
    if keyval.is_null() {
        return Err(Failure::on_world(err::arg()));
    }
    // SAFETY: the program's in-out keyval, checked non-null above, an int it
    // owns for the call (MPI-3.1 §6.7.2).
    let rc = transport::comm::free_keyval(unsafe { &mut *keyval });
    Failure::check_world(rc)
}

/// `MPI_Comm_set_attr` (and `MPI_Attr_put`).
pub fn set_attr(c: Sim_FT_MPI_Comm, keyval: c_int, val: *mut c_void) -> Outcome {
    let cr = args::comm_arg(c)?;
    let rc = transport::comm::set_attr(cr.real, keyval, val);
    Failure::check(rc, c)?;
    if c == handles::self_handle() {
        let mut order = SELF_ORDER.lock().unwrap();
        order.retain(|k| *k != keyval);
        order.push(keyval);
    }
    Ok(())
}

/// `MPI_Comm_get_attr` (and `MPI_Attr_get`). With spare processes the program's
/// `MPI_COMM_WORLD` is a part of the host's (calls::spares), and only the host's
/// carries the predefined attributes (`MPI_TAG_UB`, `MPI_UNIVERSE_SIZE`, ...,
/// `MPIX_FT`): what the world's own real communicator lacks is read there.
pub fn get_attr(c: Sim_FT_MPI_Comm, keyval: c_int, val: *mut c_void, flag: *mut c_int) -> Outcome {
    let cr = args::comm_arg(c)?;
    // SAFETY: the program's out-pointers, passed through as it gave them to
    // MPI_Comm_get_attr; the real communicator of a checked handle.
    let mut rc = unsafe { transport::comm::get_attr(cr.real, keyval, val, flag) };
    // SAFETY: `flag` was written by the successful call.
    if rc == 0 && c == handles::world_handle() && cr.real != transport::comm_world() && unsafe { *flag } == 0 {
        // SAFETY: the same program out-pointers, which the host just wrote
        // through (so valid), now on the host's world.
        rc = unsafe { transport::comm::get_attr(transport::comm_world(), keyval, val, flag) };
    }
    Failure::check(rc, c)
}

/// Called first by `MPI_Finalize`: deletes `MPI_COMM_SELF`'s attributes, last set
/// first, while the program may still call MPI from the delete callbacks.
pub(crate) fn before_finalize() {
    let order = std::mem::take(&mut *SELF_ORDER.lock().unwrap());
    let real = transport::comm_self();
    for k in order.into_iter().rev() {
        let mut val: *mut c_void = std::ptr::null_mut();
        let mut flag: c_int = 0;
        // SAFETY: `val` (room for the attribute's pointer value) and `flag` are
        // locals of this frame.
        unsafe { transport::comm::get_attr(real, k, &mut val as *mut *mut c_void as *mut c_void, &mut flag) };
        if flag != 0 {
            transport::comm::delete_attr(real, k);
        }
    }
}

/// `MPI_COMM_NULL_COPY_FN` (also `MPI_NULL_COPY_FN`): do not copy.
pub fn null_copy(flag: *mut c_int) -> c_int {
    if !flag.is_null() {
        // SAFETY: the copy function's out-flag (MPI-3.1 §6.7.2), checked non-null.
        unsafe { *flag = 0 };
    }
    0
}

/// `MPI_COMM_DUP_FN` (also `MPI_DUP_FN`): copy the attribute value.
pub fn dup_copy(val_in: *mut c_void, val_out: *mut c_void, flag: *mut c_int) -> c_int {
    if !val_out.is_null() {
        // SAFETY: `attribute_val_out` is the address of the new attribute value,
        // a `void *` slot (MPI-3.1 §6.7.2), checked non-null.
        unsafe { *(val_out as *mut *mut c_void) = val_in };
    }
    if !flag.is_null() {
        // SAFETY: the copy function's out-flag (MPI-3.1 §6.7.2), checked non-null.
        unsafe { *flag = 1 };
    }
    0
}
