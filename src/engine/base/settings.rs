//! The engine's settings: one struct, set once at `MPI_Init` ([`install`]) from
//! what the job agreed (src/inject reads the environment; rank 0's values win),
//! read everywhere through the getters below. Each getter is one relaxed load,
//! as cheap as the scattered statics it replaces. The list, with the variables
//! that set each field, is in docs/CONFIGURATION.md ("The engine's settings").
//!
//! Two knobs are not part of the agreement: the detection delay, which
//! `SIM_FT_TIMEOUT` sets at `MPI_Init` and `Sim_FT_set_timeout` may change at
//! any time ([`set_timeout`]); and `MPIFT_DEBUG`, read once on first use
//! ([`debug`]).

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

/// Default fan-out of the agreement tree: 8 children per node gives depth 4 at
/// 4,096 ranks.
pub const DEFAULT_FANOUT: u32 = 8;

/// What the job agreed at `MPI_Init`, as the engine uses it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settings {
    /// Fan-out of the agreement tree (`TREE_SUCCESSOR_COUNT`,
    /// `Sim_FT_set_tree_fanout`); clamped to 1..=2^20.
    pub fanout: u32,
    /// Blocking collectives run as their non-blocking forms plus MPIFT's wait
    /// (`MPIFT_COLLECTIVES=nonblocking`), so a rank inside one keeps doing what
    /// it owes others (revoke catch-ups, agreements).
    pub nonblocking_colls: bool,
    /// `MPI_Barrier` on intracommunicators is MPIFT's own (`MPIFT_BARRIER`).
    pub own_barrier: bool,
    /// Small `MPI_Allreduce`s are MPIFT's own (`MPIFT_ALLREDUCE`).
    pub own_allreduce: bool,
}

impl Default for Settings {
    /// The values before `MPI_Init` (and in the in-memory tests).
    fn default() -> Settings {
        Settings { fanout: DEFAULT_FANOUT, nonblocking_colls: false, own_barrier: true, own_allreduce: true }
    }
}

static FANOUT: AtomicU32 = AtomicU32::new(DEFAULT_FANOUT);
static NB_COLLS: AtomicBool = AtomicBool::new(false);
static OWN_BARRIER: AtomicBool = AtomicBool::new(true);
static OWN_ALLREDUCE: AtomicBool = AtomicBool::new(true);
/// Simulated detection delay in microseconds (`SIM_FT_TIMEOUT`).
static TIMEOUT_US: AtomicU64 = AtomicU64::new(0);

/// Sets every agreed field (`MPI_Init`, src/inject's configure_engine).
pub fn install(s: &Settings) {
    FANOUT.store(s.fanout.clamp(1, 1 << 20), Ordering::Relaxed);
    NB_COLLS.store(s.nonblocking_colls, Ordering::Relaxed);
    OWN_BARRIER.store(s.own_barrier, Ordering::Relaxed);
    OWN_ALLREDUCE.store(s.own_allreduce, Ordering::Relaxed);
}

/// The settings in force.
pub fn current() -> Settings {
    Settings { fanout: fanout(), nonblocking_colls: nonblocking_colls(), own_barrier: own_barrier(), own_allreduce: own_allreduce() }
}

/// The fan-out every process uses.
pub fn fanout() -> u32 {
    FANOUT.load(Ordering::Relaxed)
}

/// Blocking collectives run as their non-blocking forms (generated wrappers).
#[inline]
pub fn nonblocking_colls() -> bool {
    NB_COLLS.load(Ordering::Relaxed)
}

/// Barriers (the program's and the joins') run as MPIFT's own.
#[inline]
pub fn own_barrier() -> bool {
    OWN_BARRIER.load(Ordering::Relaxed)
}

/// Small predefined allreduces run as MPIFT's own (engine::own::allreduce::eligible).
#[inline]
pub fn own_allreduce() -> bool {
    OWN_ALLREDUCE.load(Ordering::Relaxed)
}

/// The simulated detection delay (`SIM_FT_TIMEOUT`; 0 when unset).
pub fn timeout() -> Duration {
    Duration::from_micros(TIMEOUT_US.load(Ordering::Relaxed))
}

/// Sets the detection delay in seconds; not finite or not positive: none.
pub fn set_timeout(seconds: f64) {
    let us = if seconds.is_finite() && seconds > 0.0 { (seconds * 1e6) as u64 } else { 0 };
    TIMEOUT_US.store(us, Ordering::Relaxed);
}

/// `MPIFT_DEBUG` as read once: None unset, Some(true) `stuck`, Some(false) any
/// other value.
fn debug_setting() -> Option<bool> {
    static ON: OnceLock<Option<bool>> = OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("MPIFT_DEBUG").map(|v| v == "stuck"))
}

/// `MPIFT_DEBUG` is set, to anything but `stuck`: dead ranks report what they
/// read and wait for, at every turn of their loop.
pub fn debug() -> bool {
    debug_setting() == Some(false)
}

/// `MPIFT_DEBUG` is set, `stuck` included: a dead rank that cannot leave says why
/// (engine::dead::zombie), and nothing else is printed with `stuck`, so a hunt for a
/// rare hang keeps the timing of a quiet run.
pub fn debug_stuck() -> bool {
    debug_setting().is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn install_sets_every_field_and_clamps_the_fanout() {
        let before = current();
        let s = Settings { fanout: 0, nonblocking_colls: true, own_barrier: false, own_allreduce: false };
        install(&s);
        assert_eq!(current(), Settings { fanout: 1, ..s });
        install(&before);
        assert_eq!(current(), before);
    }

    #[test]
    fn a_timeout_that_is_not_a_positive_number_means_none() {
        for bad in [f64::NAN, f64::INFINITY, -1.0, 0.0] {
            set_timeout(bad);
            assert_eq!(timeout(), Duration::ZERO, "{bad}");
        }
        set_timeout(0.25);
        assert_eq!(timeout(), Duration::from_millis(250));
        set_timeout(0.0);
    }
}
