//! The one word the edges of every MPI call read (ffi::boundary, issue 36):
//! zero while nothing is out of the ordinary, so a failure-free call pays one
//! load at its entry and one at its exit instead of a load per flag (seven
//! flags, 21 instructions per call, bench/callgrind.sh).
//!
//! Each bit *is* its flag, not a copy of it: the modules that own the flags set
//! and clear their bits here ([`set`]), and read them here ([`any`]). Only
//! [`AGREEING`] is derived (from engine::agree::ft's count of running operations,
//! resynchronised after every change of the count); under
//! `MPI_THREAD_MULTIPLE` two threads could interleave that, so there the word
//! carries [`MULTI`] for good and the entry never takes the one-load way.

use std::sync::atomic::{AtomicU32, Ordering};

/// Outside `MPI_Init`..`MPI_Finalize` (engine::base::process).
pub const INACTIVE: u32 = 1;
/// Fault injection's slow path is on: a policy, a callback, tracing (inject).
pub const ARMED: u32 = 1 << 1;
/// Some failure or revoke is known here (engine::registry::comm).
pub const TROUBLE: u32 = 1 << 2;
/// Some agreement or shrink is running here (engine::agree::ft).
pub const AGREEING: u32 = 1 << 3;
/// Communicators to release at the call's end (engine::registry::comm).
pub const DEFERRED: u32 = 1 << 4;
/// Receives of revoked communicators to end at the call's end (engine::revoke::revoke).
pub const OWED_END: u32 = 1 << 5;
/// The host runs at `MPI_THREAD_MULTIPLE` (module docs).
pub const MULTI: u32 = 1 << 6;
/// Some collective log entry is open (engine::news::kept): a blocking
/// collective's successful end may close it.
pub const KEPT: u32 = 1 << 7;

/// What a call's entry must see clear to go straight to its body: active, not
/// armed, no service due ([`AGREEING`] is exact only without [`MULTI`]).
pub const ENTRY: u32 = INACTIVE | ARMED | TROUBLE | AGREEING | MULTI;
/// What a call's exit must see clear to return at once.
pub const EXIT: u32 = DEFERRED | OWED_END | ARMED;

static WORD: AtomicU32 = AtomicU32::new(INACTIVE);

/// Whether any of `bits` is set (one bit: its owner's flag).
#[inline(always)]
pub fn any(bits: u32) -> bool {
    WORD.load(Ordering::Acquire) & bits != 0
}

/// Sets (`on`) or clears `bit` (one bit); a read-modify-write only when it
/// changes (inject re-arms at every call it watches).
#[inline]
pub fn set(bit: u32, on: bool) {
    if any(bit) == on {
        return;
    }
    if on {
        WORD.fetch_or(bit, Ordering::SeqCst);
    } else {
        WORD.fetch_and(!bit, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_are_distinct_and_masks_cover_their_flags() {
        let all = [INACTIVE, ARMED, TROUBLE, AGREEING, DEFERRED, OWED_END, MULTI];
        assert_eq!(all.iter().fold(0, |a, b| a | b).count_ones(), all.len() as u32);
        assert_eq!(ENTRY & (DEFERRED | OWED_END), 0);
        assert_eq!(EXIT & ARMED, ARMED);
    }
}
