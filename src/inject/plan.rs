//! A rank's kill plan: when the policy will kill it, drawn once at `MPI_Init` from
//! the rank's seeded generator. Pure (no MPI), so the same seed and rules give
//! the same plan, which the report records and the tests compare.
//!
//! Random rules are turned into deadlines up front, which keeps the per-call check
//! to one or two comparisons:
//! - `rate=P`: dying at each call with probability P means the number of calls
//!   survived is geometric, so the death call is drawn once (Geometric(P));
//! - `memory=K`: the same with p_p(P, p_f, K) (thesis 5.4); the cause is `rate`
//!   with probability P / p_p, else `bitflip`;
//! - `mtbf=S`: an exponential lifetime with mean S; `weibull=K:L`: a Weibull one.
//!   A lifetime is a time deadline: the rank dies at its first call after it.

use crate::inject::model::process_failure_probability;
use crate::inject::policy::{KillPolicy, Trigger};
use crate::inject::rng::Rng;
use rand::Rng as _;
use rand_distr::{Distribution, Exp, Geometric, Weibull};

/// Why a rank died (the report's `cause`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cause {
    /// `Sim_FT_kill_me()` or a kill callback that said yes.
    Api,
    /// `rank=R@call=N` or `rank=R@time=S`.
    Rule,
    /// `rate=P`.
    Rate,
    /// `mtbf=S` or `weibull=K:L`.
    Lifetime,
    /// Another rank of its node died (`node=`).
    Node,
    /// `memory=K`: a crash caused by bit flips.
    Bitflip,
    /// `raise(SIGKILL)` etc. under `-DMPIFT_MAP_SIGNALS`.
    Signal,
    /// `exit()` before `MPI_Finalize` with `MPIFT_EXIT_KILLS=1`.
    Exit,
}

impl Cause {
    pub const ALL: [Cause; 8] =
        [Cause::Api, Cause::Rule, Cause::Rate, Cause::Lifetime, Cause::Node, Cause::Bitflip, Cause::Signal, Cause::Exit];
    pub fn name(self) -> &'static str {
        match self {
            Cause::Api => "api",
            Cause::Rule => "rule",
            Cause::Rate => "rate",
            Cause::Lifetime => "lifetime",
            Cause::Node => "node",
            Cause::Bitflip => "bitflip",
            Cause::Signal => "signal",
            Cause::Exit => "exit",
        }
    }
    pub fn code(self) -> u64 {
        Cause::ALL.iter().position(|c| *c == self).unwrap() as u64 + 1
    }
    pub fn from_code(c: u64) -> Option<Cause> {
        Cause::ALL.get((c as usize).wrapping_sub(1)).copied()
    }
    /// Deaths the injection policy decided (bounded by `max`, refused for spares).
    pub fn is_injected(self) -> bool {
        matches!(self, Cause::Rule | Cause::Rate | Cause::Lifetime | Cause::Bitflip | Cause::Node)
    }
}

/// When a rank is to die.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Plan {
    /// Dies at the entry of this call number.
    pub call: Option<(u64, Cause)>,
    /// Dies at its first call this many seconds after `MPI_Init`.
    pub time: Option<(f64, Cause)>,
}

impl Plan {
    pub fn is_empty(&self) -> bool {
        self.call.is_none() && self.time.is_none()
    }
    fn earlier_call(&mut self, n: u64, cause: Cause) {
        if self.call.map_or(true, |(m, _)| n < m) {
            self.call = Some((n, cause));
        }
    }
    fn earlier_time(&mut self, s: f64, cause: Cause) {
        if s.is_finite() && self.time.map_or(true, |(t, _)| s < t) {
            self.time = Some((s, cause));
        }
    }
}

/// The plan of world rank `rank`, whose `MPI_Init` was its call number
/// `init_call` (1 unless it called e.g. `MPI_Initialized` first). `p_f`: the
/// bit-flip probability per bit (0 without `MPIFT_BITFLIP`). Draws from `rng` in
/// the order of the rules, only for rules that apply to this rank.
pub fn plan(policy: &KillPolicy, rank: u32, init_call: u64, p_f: f64, rng: &mut Rng) -> Plan {
    let mut plan = Plan::default();
    if policy.is_spare(rank) {
        return plan;
    }
    let mine = |r: &crate::inject::policy::Rule| r.ranks.as_ref().map_or(true, |s| s.contains(rank));
    let mut rate_p = Vec::new();
    for r in policy.rules.iter().filter(|r| mine(r)) {
        match r.trigger {
            Trigger::Call(n) => plan.earlier_call(n.max(init_call + 1), Cause::Rule),
            Trigger::Time(s) => plan.earlier_time(s, Cause::Rule),
            Trigger::Rate(p) => rate_p.push(p),
            Trigger::Mtbf(mean) => {
                let life = Exp::new(1.0 / mean).map(|d| d.sample(rng)).unwrap_or(f64::INFINITY);
                plan.earlier_time(life, Cause::Lifetime);
            }
            Trigger::Weibull { shape, scale } => {
                let life = Weibull::new(scale, shape).map(|d| d.sample(rng)).unwrap_or(f64::INFINITY);
                plan.earlier_time(life, Cause::Lifetime);
            }
        }
    }
    // Independent per-call chances combine into one: survive all of them.
    let p_c = 1.0 - rate_p.iter().fold(1.0, |s, p| s * (1.0 - p));
    let p_call = match policy.memory {
        Some(k) => process_failure_probability(p_c, p_f, k),
        None => p_c,
    };
    if p_call > 0.0 {
        if let Ok(g) = Geometric::new(p_call) {
            let survived = g.sample(rng);
            let cause = if policy.memory.is_none() || rng.gen::<f64>() * p_call < p_c { Cause::Rate } else { Cause::Bitflip };
            plan.earlier_call(init_call.saturating_add(1).saturating_add(survived), cause);
        }
    }
    plan
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inject::policy::parse_kill;
    use crate::inject::rng::{for_rank, Stream};

    fn plan_of(text: &str, rank: u32, seed: u64) -> Plan {
        plan(&parse_kill(text).unwrap(), rank, 1, 0.0, &mut for_rank(seed, rank, Stream::Kill))
    }

    #[test]
    fn rules_pick_the_earliest_deadline() {
        let p = plan_of("rank=2@call=50;rank=1-3@call=40;rank=2@time=3;rank=2@time=1.5", 2, 1);
        assert_eq!(p.call, Some((40, Cause::Rule)));
        assert_eq!(p.time, Some((1.5, Cause::Rule)));
        assert!(plan_of("rank=2@call=50", 1, 1).is_empty());
        assert!(plan_of("rank=2@call=50;spare=2", 2, 1).is_empty());
    }

    #[test]
    fn a_call_before_init_fires_at_the_first_call_after() {
        let p = plan(&parse_kill("rank=0@call=2").unwrap(), 0, 3, 0.0, &mut for_rank(1, 0, Stream::Kill));
        assert_eq!(p.call, Some((4, Cause::Rule)));
    }

    #[test]
    fn same_seed_same_plan_other_seed_other_plan() {
        let text = "rate=0.01;mtbf=30;weibull=2:10";
        for rank in 0..4 {
            assert_eq!(plan_of(text, rank, 7), plan_of(text, rank, 7));
        }
        let a: Vec<Plan> = (0..4).map(|r| plan_of(text, r, 7)).collect();
        let b: Vec<Plan> = (0..4).map(|r| plan_of(text, r, 8)).collect();
        assert_ne!(a, b);
        assert_ne!(a[0], a[1], "ranks draw from their own streams");
    }

    #[test]
    fn rate_deaths_are_geometric() {
        // Mean number of calls until death (after MPI_Init) is 1/p.
        let p: f64 = 0.02;
        let n = 4000;
        let mean = (0..n)
            .map(|s| plan_of(&format!("rate={p}"), 0, s).call.unwrap().0 as f64 - 1.0)
            .sum::<f64>()
            / n as f64;
        let sd = ((1.0 - p) / (p * p)).sqrt() / (n as f64).sqrt();
        assert!((mean - 1.0 / p).abs() < 4.0 * sd, "mean {mean}, expected {}", 1.0 / p);
        assert_eq!(plan_of("rate=1", 0, 1).call, Some((2, Cause::Rate)), "rate=1 dies at the first call after init");
        assert!(plan_of("rate=0", 0, 1).is_empty());
    }

    #[test]
    fn lifetimes_have_the_requested_mean() {
        let n = 4000;
        let mean = |text: &str| (0..n).map(|s| plan_of(text, 0, s).time.unwrap().0).sum::<f64>() / n as f64;
        let m = mean("mtbf=10");
        assert!((m - 10.0).abs() < 4.0 * 10.0 / (n as f64).sqrt(), "exponential mean {m}");
        // Weibull(k = 1) is exponential with mean = scale.
        let m = mean("weibull=1:5");
        assert!((m - 5.0).abs() < 4.0 * 5.0 / (n as f64).sqrt(), "weibull mean {m}");
        assert_eq!(plan_of("mtbf=10", 0, 1).time.unwrap().1, Cause::Lifetime);
    }

    #[test]
    fn memory_turns_flips_into_deaths() {
        let policy = parse_kill("memory=100").unwrap();
        let p = plan(&policy, 0, 1, 0.01, &mut for_rank(1, 0, Stream::Kill));
        assert_eq!(p.call.unwrap().1, Cause::Bitflip, "without rate every such death is a bit-flip death");
        let policy = parse_kill("rate=0.05;memory=1").unwrap();
        let causes: Vec<Cause> = (0..400).map(|s| plan(&policy, 0, 1, 0.05, &mut for_rank(s, 0, Stream::Kill)).call.unwrap().1).collect();
        assert!(causes.contains(&Cause::Rate) && causes.contains(&Cause::Bitflip));
        assert!(plan(&policy, 0, 1, 0.0, &mut for_rank(1, 0, Stream::Kill)).call.unwrap().1 == Cause::Rate);
    }

    #[test]
    fn cause_codes_round_trip() {
        for c in Cause::ALL {
            assert_eq!(Cause::from_code(c.code()), Some(c));
        }
        assert_eq!(Cause::from_code(0), None);
    }
}
