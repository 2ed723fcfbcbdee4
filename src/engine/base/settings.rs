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
    /// The adversarial semantics mode's choices in force (`MPIFT_SEMANTICS`,
    /// [`parse_semantics`]): bits of [`choice`]; 0 is the default mode.
    pub adversary: u32,
    /// The job's seed (`MPIFT_SEED`, or the one rank 0 chose): the adversary's
    /// draws are keyed by it.
    pub seed: u64,
}

/// The adversarial mode's choices (docs/CONFIGURATION.md, "MPIFT_SEMANTICS"):
/// each one a bit of [`Settings::adversary`], named in `MPIFT_SEMANTICS`.
pub mod choice {
    /// A survivor of a collective a failure touched is told success where its
    /// result is real (protocol::outcome), as the seed draws.
    pub const COLLECTIVES: u32 = 1;
    /// The names `MPIFT_SEMANTICS` accepts, with their bits.
    pub const NAMES: &[(&str, u32)] = &[("collectives", COLLECTIVES)];
    /// Every choice (what `adversarial` alone means).
    pub const ALL: u32 = COLLECTIVES;
}

/// Reads `MPIFT_SEMANTICS`: `default`, `adversarial` (every choice), or
/// `adversarial:` followed by a comma-separated list of choices, each switched on
/// by its name or off by `-name` (a list of only `-name`s starts from every
/// choice). The error names the bad token.
pub fn parse_semantics(text: &str) -> Result<u32, String> {
    let text = text.trim();
    let (mode, list) = match text.split_once(':') {
        Some((m, l)) => (m.trim(), Some(l)),
        None => (text, None),
    };
    match (mode, list) {
        ("default" | "", None) => return Ok(0),
        ("adversarial", None) => return Ok(choice::ALL),
        ("adversarial", Some(_)) => {}
        (m, _) => return Err(format!("bad token `{m}`: expected `default` or `adversarial[:choice,...]`")),
    }
    let tokens: Vec<&str> = list.unwrap_or("").split(',').map(str::trim).filter(|t| !t.is_empty()).collect();
    let only_off = tokens.iter().all(|t| t.starts_with('-'));
    let mut bits = if only_off { choice::ALL } else { 0 };
    for t in &tokens {
        let (off, name) = match t.strip_prefix('-') {
            Some(n) => (true, n),
            None => (false, *t),
        };
        let Some((_, bit)) = choice::NAMES.iter().find(|(n, _)| *n == name) else {
            let known: Vec<&str> = choice::NAMES.iter().map(|(n, _)| *n).collect();
            return Err(format!("bad token `{t}`: expected a choice ({}), or one with `-` before it to switch it off", known.join(", ")));
        };
        bits = if off { bits & !bit } else { bits | bit };
    }
    Ok(bits)
}

impl Default for Settings {
    /// The values before `MPI_Init` (and in the in-memory tests).
    fn default() -> Settings {
        Settings { fanout: DEFAULT_FANOUT, nonblocking_colls: false, own_barrier: true, own_allreduce: true, adversary: 0, seed: 0 }
    }
}

static FANOUT: AtomicU32 = AtomicU32::new(DEFAULT_FANOUT);
static NB_COLLS: AtomicBool = AtomicBool::new(false);
static OWN_BARRIER: AtomicBool = AtomicBool::new(true);
static OWN_ALLREDUCE: AtomicBool = AtomicBool::new(true);
static ADVERSARY: AtomicU32 = AtomicU32::new(0);
static SEED: AtomicU64 = AtomicU64::new(0);
/// Simulated detection delay in microseconds (`SIM_FT_TIMEOUT`).
static TIMEOUT_US: AtomicU64 = AtomicU64::new(0);

/// Sets every agreed field (`MPI_Init`, src/inject's configure_engine).
pub fn install(s: &Settings) {
    FANOUT.store(s.fanout.clamp(1, 1 << 20), Ordering::Relaxed);
    NB_COLLS.store(s.nonblocking_colls, Ordering::Relaxed);
    OWN_BARRIER.store(s.own_barrier, Ordering::Relaxed);
    OWN_ALLREDUCE.store(s.own_allreduce, Ordering::Relaxed);
    ADVERSARY.store(s.adversary, Ordering::Relaxed);
    SEED.store(s.seed, Ordering::Relaxed);
}

/// The settings in force.
pub fn current() -> Settings {
    Settings {
        fanout: fanout(),
        nonblocking_colls: nonblocking_colls(),
        own_barrier: own_barrier(),
        own_allreduce: own_allreduce(),
        adversary: ADVERSARY.load(Ordering::Relaxed),
        seed: seed(),
    }
}

/// The adversarial mode's choice `bit` ([`choice`]) is on. Read only where a
/// failure is already known (never on the calm path).
pub fn adversary(bit: u32) -> bool {
    ADVERSARY.load(Ordering::Relaxed) & bit != 0
}

/// The job's seed (the adversary's draws).
pub fn seed() -> u64 {
    SEED.load(Ordering::Relaxed)
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
        let s = Settings { fanout: 0, nonblocking_colls: true, own_barrier: false, own_allreduce: false, adversary: 1, seed: 9 };
        install(&s);
        assert_eq!(current(), Settings { fanout: 1, ..s });
        install(&before);
        assert_eq!(current(), before);
    }

    #[test]
    fn semantics_parse_modes_choices_and_name_a_bad_token() {
        assert_eq!(parse_semantics("default"), Ok(0));
        assert_eq!(parse_semantics(" adversarial "), Ok(choice::ALL));
        assert_eq!(parse_semantics("adversarial:collectives"), Ok(choice::COLLECTIVES));
        assert_eq!(parse_semantics("adversarial:-collectives"), Ok(0));
        let e = parse_semantics("friendly").unwrap_err();
        assert!(e.contains("`friendly`"), "{e}");
        let e = parse_semantics("adversarial:collectives,latencyy").unwrap_err();
        assert!(e.contains("`latencyy`") && e.contains("collectives"), "{e}");
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
