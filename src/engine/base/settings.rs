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
    /// The adversarial mode's range of late news in microseconds, least and
    /// most (`MPIFT_LATENCY`, [`parse_latency`]): the `latency` and `revoke`
    /// choices draw each delay from it.
    pub latency_us: (u64, u64),
}

/// The range of late news when `MPIFT_LATENCY` is unset: 1 ms to 1 s.
pub const DEFAULT_LATENCY_US: (u64, u64) = (1_000, 1_000_000);

/// The adversarial mode's choices (docs/CONFIGURATION.md, "MPIFT_SEMANTICS"):
/// each one a bit of [`Settings::adversary`], named in `MPIFT_SEMANTICS`.
pub mod choice {
    /// A survivor of a collective a failure touched is told success where its
    /// result is real (protocol::outcome), as the seed draws.
    pub const COLLECTIVES: u32 = 1;
    /// A death's news reaches each observer after its own delay, drawn from the
    /// latency range (after `SIM_FT_TIMEOUT`, which every observer shares).
    pub const LATENCY: u32 = 2;
    /// A revoke's news reaches each member after its own delay, drawn from the
    /// same range.
    pub const REVOKE: u32 = 4;
    /// A small non-blocking send to a dead rank that it did not receive alive
    /// completes with success (its message could have left before the failure
    /// was known), as the seed draws.
    pub const SENDS: u32 = 8;
    /// A non-blocking wildcard receive on a communicator with an unacknowledged
    /// failure is told `MPI_ERR_PROC_FAILED_PENDING` before it may match a
    /// message that is in, as the seed draws: it completes at its latest allowed
    /// point, after the failure is acknowledged.
    pub const WILDCARD: u32 = 16;
    /// A survivor of an `MPI_Comm_dup` that a failure touched is told success
    /// (the new communicator, with the dead member in it, known failed) or the
    /// default `MPI_ERR_PROC_FAILED`, as the seed draws: constructors are not
    /// uniform.
    pub const CONSTRUCTORS: u32 = 32;
    /// The names `MPIFT_SEMANTICS` accepts, with their bits.
    pub const NAMES: &[(&str, u32)] =
        &[("collectives", COLLECTIVES), ("latency", LATENCY), ("revoke", REVOKE), ("sends", SENDS), ("wildcard", WILDCARD), ("constructors", CONSTRUCTORS)];
    /// Every choice (what `adversarial` alone means).
    pub const ALL: u32 = COLLECTIVES | LATENCY | REVOKE | SENDS | WILDCARD | CONSTRUCTORS;
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

/// Reads `MPIFT_LATENCY`: `MIN:MAX`, each a number with a unit `us`, `ms` or
/// `s` (a bare number is seconds, as in `SIM_FT_TIMEOUT`), MIN at most MAX; one
/// value alone is both. Returns microseconds; the error names the bad token.
pub fn parse_latency(text: &str) -> Result<(u64, u64), String> {
    let one = |t: &str| -> Result<u64, String> {
        let t = t.trim();
        let (num, scale) = if let Some(n) = t.strip_suffix("us") {
            (n, 1.0)
        } else if let Some(n) = t.strip_suffix("ms") {
            (n, 1e3)
        } else if let Some(n) = t.strip_suffix('s') {
            (n, 1e6)
        } else {
            (t, 1e6)
        };
        match num.trim().parse::<f64>() {
            Ok(v) if v.is_finite() && v >= 0.0 && v * scale <= 3.6e9 => Ok((v * scale).round() as u64),
            _ => Err(format!("bad token `{t}`: expected a time such as `5ms`, `0.5s` or `200us` (at most an hour)")),
        }
    };
    let (lo, hi) = match text.split_once(':') {
        Some((a, b)) => (one(a)?, one(b)?),
        None => {
            let v = one(text)?;
            (v, v)
        }
    };
    if lo > hi {
        return Err(format!("bad token `{}`: the least delay is above the most", text.trim()));
    }
    Ok((lo, hi))
}

impl Default for Settings {
    /// The values before `MPI_Init` (and in the in-memory tests).
    fn default() -> Settings {
        Settings { fanout: DEFAULT_FANOUT, nonblocking_colls: false, own_barrier: true, own_allreduce: true, adversary: 0, seed: 0, latency_us: DEFAULT_LATENCY_US }
    }
}

static FANOUT: AtomicU32 = AtomicU32::new(DEFAULT_FANOUT);
static NB_COLLS: AtomicBool = AtomicBool::new(false);
static OWN_BARRIER: AtomicBool = AtomicBool::new(true);
static OWN_ALLREDUCE: AtomicBool = AtomicBool::new(true);
static ADVERSARY: AtomicU32 = AtomicU32::new(0);
static SEED: AtomicU64 = AtomicU64::new(0);
static LATENCY_MIN_US: AtomicU64 = AtomicU64::new(DEFAULT_LATENCY_US.0);
static LATENCY_MAX_US: AtomicU64 = AtomicU64::new(DEFAULT_LATENCY_US.1);
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
    LATENCY_MIN_US.store(s.latency_us.0, Ordering::Relaxed);
    LATENCY_MAX_US.store(s.latency_us.1.max(s.latency_us.0), Ordering::Relaxed);
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
        latency_us: latency_us(),
    }
}

/// The adversarial mode's range of late news, least and most, in microseconds.
pub fn latency_us() -> (u64, u64) {
    (LATENCY_MIN_US.load(Ordering::Relaxed), LATENCY_MAX_US.load(Ordering::Relaxed))
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
        let s = Settings { fanout: 0, nonblocking_colls: true, own_barrier: false, own_allreduce: false, adversary: 1, seed: 9, latency_us: (5, 7) };
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
        assert_eq!(parse_semantics("adversarial:-collectives"), Ok(choice::ALL & !choice::COLLECTIVES));
        let e = parse_semantics("friendly").unwrap_err();
        assert!(e.contains("`friendly`"), "{e}");
        let e = parse_semantics("adversarial:collectives,latencyy").unwrap_err();
        assert!(e.contains("`latencyy`") && e.contains("collectives"), "{e}");
        assert_eq!(parse_semantics("adversarial:latency,revoke"), Ok(choice::LATENCY | choice::REVOKE));
        assert_eq!(parse_semantics("adversarial:-latency"), Ok(choice::ALL & !choice::LATENCY));
        assert_eq!(parse_semantics("adversarial:sends,wildcard"), Ok(choice::SENDS | choice::WILDCARD));
        assert_eq!(choice::NAMES.iter().fold(0, |a, (_, b)| a | b), choice::ALL);
    }

    #[test]
    fn latency_ranges_take_units_and_name_a_bad_token() {
        assert_eq!(parse_latency("1ms:1s"), Ok((1_000, 1_000_000)));
        assert_eq!(parse_latency(" 200us : 0.5 "), Ok((200, 500_000)));
        assert_eq!(parse_latency("20ms"), Ok((20_000, 20_000)));
        let e = parse_latency("2s:1s").unwrap_err();
        assert!(e.contains("`2s:1s`") && e.contains("above"), "{e}");
        let e = parse_latency("1ms:fast").unwrap_err();
        assert!(e.contains("`fast`"), "{e}");
        assert!(parse_latency("-1ms:1s").is_err());
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
