//! The policy languages of `MPIFT_KILL` and `MPIFT_BITFLIP` (docs/INJECTION.md):
//! pure parsing and validation, no MPI. Every error names the token it rejects, so
//! `MPI_Init` can stop the job with a message the user can act on.
//!
//! `MPIFT_KILL` is a `;`-separated list (newlines count as `;`, `#` starts a
//! comment, whitespace around tokens is ignored):
//!
//! | token | meaning |
//! |---|---|
//! | `rank=R@call=N` | rank(s) R die at the entry of their N-th MPI call (N >= 2: call 1 is `MPI_Init`) |
//! | `rank=R@time=S` | rank(s) R die at their first MPI call S seconds or more after `MPI_Init` |
//! | `[rank=R@]rate=P` | at every MPI call after `MPI_Init`, die with probability P |
//! | `[rank=R@]mtbf=S` | exponential lifetime, mean S seconds (thesis 5.3.6, 5.5.2) |
//! | `[rank=R@]weibull=K:L` | Weibull lifetime, shape K, scale L seconds |
//! | `memory=K` | per-call death probability p_p(P, p_f, K) (thesis 5.4), P from `rate`, p_f from `MPIFT_BITFLIP` |
//! | `node=SIZE` / `node=host` | a death takes down its node: SIZE consecutive world ranks, or one host |
//! | `max=M` | at most M injected deaths in the whole job |
//! | `spare=R` | these ranks are never killed by injection |
//!
//! R is a rank `3`, a list `2,5`, a range `4-7`, or a mix `0,4-7`.
//!
//! `MPIFT_BITFLIP` is a probability per bit, alone (`1e-6`) or as `p=1e-6`, with
//! optional `;`-separated filters `rank=R` (sending world ranks), `op=NAMES`
//! (`MPI_Send,MPI_Isend`, case-insensitive, `MPI_` optional) and `tag=T` (tags,
//! same syntax as ranks).

use std::fmt;

/// A rejected token and why.
#[derive(Clone, Debug, PartialEq)]
pub struct ParseError {
    pub token: String,
    pub why: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bad token `{}`: {}", self.token, self.why)
    }
}

fn bad<T>(token: &str, why: impl Into<String>) -> Result<T, ParseError> {
    Err(ParseError { token: token.to_string(), why: why.into() })
}

/// A set of non-negative integers (ranks or tags) as inclusive ranges.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Ranges(pub Vec<(u32, u32)>);

impl Ranges {
    pub fn contains(&self, x: u32) -> bool {
        self.0.iter().any(|(a, b)| *a <= x && x <= *b)
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    pub fn max(&self) -> Option<u32> {
        self.0.iter().map(|r| r.1).max()
    }
    /// `3`, `2,5`, `4-7`, `0,4-7`.
    fn parse(text: &str, token: &str) -> Result<Ranges, ParseError> {
        let mut v = Vec::new();
        for item in text.split(',') {
            let item = item.trim();
            let (a, b) = match item.split_once('-') {
                Some((a, b)) => (a.trim(), b.trim()),
                None => (item, item),
            };
            let (Ok(a), Ok(b)) = (a.parse::<u32>(), b.parse::<u32>()) else {
                return bad(token, format!("`{item}` is not a number or a range A-B of numbers"));
            };
            if a > b {
                return bad(token, format!("range `{item}` is empty (start above end)"));
            }
            v.push((a, b));
        }
        Ok(Ranges(v))
    }
}

/// What makes a rule fire.
#[derive(Clone, Debug, PartialEq)]
pub enum Trigger {
    /// At the entry of the N-th MPI call.
    Call(u64),
    /// At the first MPI call at least S seconds after `MPI_Init`.
    Time(f64),
    /// At each MPI call after `MPI_Init`, with this probability.
    Rate(f64),
    /// Exponential lifetime with this mean (seconds).
    Mtbf(f64),
    /// Weibull lifetime.
    Weibull { shape: f64, scale: f64 },
}

/// One rule: which ranks (None: all) and the trigger. `token` is the text it came
/// from, for messages.
#[derive(Clone, Debug, PartialEq)]
pub struct Rule {
    pub ranks: Option<Ranges>,
    pub trigger: Trigger,
    pub token: String,
}

/// The `node=` modifier.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Node {
    /// Blocks of this many consecutive world ranks.
    Block(u32),
    /// All ranks on one host.
    Host,
}

/// A parsed `MPIFT_KILL`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KillPolicy {
    pub rules: Vec<Rule>,
    pub node: Option<Node>,
    pub max: Option<u64>,
    pub spare: Ranges,
    /// `memory=K`: k of the process-failure model.
    pub memory: Option<f64>,
}

impl KillPolicy {
    /// Nothing to do: no rule and no modifier that acts on its own (`node`
    /// propagates any death, so it counts).
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty() && self.node.is_none() && self.memory.is_none()
    }
    pub fn is_spare(&self, rank: u32) -> bool {
        self.spare.contains(rank)
    }
    /// Checks what needs the job: ranks below the world size, `memory` only with a
    /// bit-flip probability.
    pub fn validate(&self, world_size: u32, bitflip: Option<&BitflipPolicy>) -> Result<(), ParseError> {
        for r in &self.rules {
            if let Some(m) = r.ranks.as_ref().and_then(Ranges::max) {
                if m >= world_size {
                    return bad(&r.token, format!("rank {m} does not exist (the world has {world_size} ranks)"));
                }
            }
        }
        if let Some(m) = self.spare.max() {
            if m >= world_size {
                return bad(&format!("spare={}", fmt_ranges(&self.spare)), format!("rank {m} does not exist (the world has {world_size} ranks)"));
            }
        }
        if let (Some(k), None) = (self.memory, bitflip) {
            return bad(&format!("memory={k}"), "needs MPIFT_BITFLIP (the flip probability per bit p_f)");
        }
        Ok(())
    }
}

pub fn fmt_ranges(r: &Ranges) -> String {
    r.0.iter().map(|(a, b)| if a == b { a.to_string() } else { format!("{a}-{b}") }).collect::<Vec<_>>().join(",")
}

/// The tokens of a policy text: split at `;` and newlines, comments and blanks dropped.
fn tokens(text: &str) -> Vec<&str> {
    text.lines()
        .map(|l| l.split('#').next().unwrap_or(""))
        .flat_map(|l| l.split(';'))
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect()
}

fn number<T: std::str::FromStr>(text: &str, token: &str, what: &str) -> Result<T, ParseError> {
    text.trim().parse::<T>().or_else(|_| bad(token, format!("`{}` is not {what}", text.trim())))
}

fn seconds(text: &str, token: &str, positive: bool) -> Result<f64, ParseError> {
    let s: f64 = number(text, token, "a number of seconds")?;
    if !s.is_finite() || s < 0.0 || (positive && s == 0.0) {
        return bad(token, format!("`{}` must be a {} number of seconds", text.trim(), if positive { "positive" } else { "non-negative" }));
    }
    Ok(s)
}

fn probability(text: &str, token: &str) -> Result<f64, ParseError> {
    let p: f64 = number(text, token, "a probability")?;
    if !(0.0..=1.0).contains(&p) {
        return bad(token, format!("probability `{}` is not between 0 and 1", text.trim()));
    }
    Ok(p)
}

/// Splits `key=value` (key lower-cased); a token without `=` is an error.
fn key_value(token: &str) -> Result<(String, &str), ParseError> {
    match token.split_once('=') {
        Some((k, v)) => Ok((k.trim().to_ascii_lowercase(), v.trim())),
        None => bad(token, "expected key=value"),
    }
}

fn trigger(key: &str, value: &str, token: &str) -> Result<Trigger, ParseError> {
    Ok(match key {
        "call" => {
            let n: u64 = number(value, token, "a call number")?;
            if n < 2 {
                return bad(token, "call 1 is MPI_Init, before MPIFT can kill; the first call a rank can die at is 2");
            }
            Trigger::Call(n)
        }
        "time" => Trigger::Time(seconds(value, token, false)?),
        "rate" => Trigger::Rate(probability(value, token)?),
        "mtbf" => Trigger::Mtbf(seconds(value, token, true)?),
        "weibull" => {
            let Some((k, l)) = value.split_once(':') else {
                return bad(token, "expected weibull=SHAPE:SCALE, e.g. weibull=1.5:60");
            };
            let shape: f64 = number(k, token, "a shape (a positive number)")?;
            if !(shape.is_finite() && shape > 0.0) {
                return bad(token, format!("shape `{}` must be positive", k.trim()));
            }
            Trigger::Weibull { shape, scale: seconds(l, token, true)? }
        }
        other => {
            return bad(token, format!("unknown trigger `{other}` (expected call, time, rate, mtbf or weibull)"));
        }
    })
}

fn set_once<T>(slot: &mut Option<T>, v: T, token: &str) -> Result<(), ParseError> {
    if slot.is_some() {
        return bad(token, "this modifier is given twice");
    }
    *slot = Some(v);
    Ok(())
}

/// Parses `MPIFT_KILL` (see the module docs).
pub fn parse_kill(text: &str) -> Result<KillPolicy, ParseError> {
    let mut p = KillPolicy::default();
    let mut spare_seen = false;
    for token in tokens(text) {
        if let Some((lhs, rhs)) = token.split_once('@') {
            let (k, v) = key_value(lhs)?;
            if k != "rank" {
                return bad(token, format!("`{}` before `@`: expected rank=R", lhs.trim()));
            }
            let ranks = Ranges::parse(v, token)?;
            let (k2, v2) = key_value(rhs).or_else(|_| bad(token, "expected a trigger after `@`, e.g. call=N"))?;
            let trigger = trigger(&k2, v2, token)?;
            p.rules.push(Rule { ranks: Some(ranks), trigger, token: token.to_string() });
            continue;
        }
        let (k, v) = key_value(token)?;
        match k.as_str() {
            "call" | "time" => return bad(token, format!("`{k}=` needs the ranks it applies to, e.g. rank=2@{k}={v}")),
            "rate" | "mtbf" | "weibull" => {
                let trigger = trigger(&k, v, token)?;
                p.rules.push(Rule { ranks: None, trigger, token: token.to_string() });
            }
            "rank" => return bad(token, "a rank needs a trigger: rank=R@call=N, rank=R@time=S, ..."),
            "node" => {
                let node = if v.eq_ignore_ascii_case("host") {
                    Node::Host
                } else {
                    let n: u32 = number(v, token, "a node size or `host`")?;
                    if n == 0 {
                        return bad(token, "node size must be at least 1");
                    }
                    Node::Block(n)
                };
                set_once(&mut p.node, node, token)?;
            }
            "max" => {
                let m: u64 = number(v, token, "a number of deaths")?;
                set_once(&mut p.max, m, token)?;
            }
            "spare" => {
                if spare_seen {
                    return bad(token, "this modifier is given twice");
                }
                spare_seen = true;
                p.spare = Ranges::parse(v, token)?;
            }
            "memory" => {
                let k: f64 = number(v, token, "a memory size k >= 1")?;
                if !(k.is_finite() && k >= 1.0) {
                    return bad(token, format!("memory size `{v}` must be at least 1"));
                }
                set_once(&mut p.memory, k, token)?;
            }
            other => {
                return bad(
                    token,
                    format!("unknown key `{other}` (expected rank=R@..., rate, mtbf, weibull, memory, node, max or spare)"),
                )
            }
        }
    }
    Ok(p)
}

/// A parsed `MPIFT_BITFLIP`.
#[derive(Clone, Debug, PartialEq)]
pub struct BitflipPolicy {
    /// Probability per bit.
    pub p: f64,
    /// Sending world ranks (None: all).
    pub ranks: Option<Ranges>,
    /// MPI function names, normalised to `MPI_Xxx` (None: every send).
    pub ops: Option<Vec<String>>,
    /// Tags (None: all).
    pub tags: Option<Ranges>,
}

impl BitflipPolicy {
    pub fn applies(&self, rank: u32, op: &str, tag: i32) -> bool {
        self.ranks.as_ref().map_or(true, |r| r.contains(rank))
            && self.ops.as_ref().map_or(true, |o| o.iter().any(|x| x == op))
            && self.tags.as_ref().map_or(true, |t| tag >= 0 && t.contains(tag as u32))
    }
}

/// The sends a bit-flip policy can corrupt (blocking, non-blocking, sendrecv).
pub const FLIPPABLE_OPS: [&str; 10] = [
    "MPI_Send", "MPI_Ssend", "MPI_Bsend", "MPI_Rsend", "MPI_Isend", "MPI_Issend", "MPI_Ibsend", "MPI_Irsend",
    "MPI_Sendrecv", "MPI_Sendrecv_replace",
];

/// `send` / `mpi_send` / `MPI_Send` -> `MPI_Send`, if it is a send MPIFT corrupts.
fn op_name(word: &str) -> Option<&'static str> {
    let w = word.trim().to_ascii_lowercase();
    let w = w.strip_prefix("mpi_").unwrap_or(&w).to_string();
    FLIPPABLE_OPS.iter().copied().find(|op| op[4..].eq_ignore_ascii_case(&w))
}

/// Parses `MPIFT_BITFLIP` (see the module docs).
pub fn parse_bitflip(text: &str) -> Result<BitflipPolicy, ParseError> {
    let mut p = None;
    let (mut ranks, mut ops, mut tags) = (None, None, None);
    for token in tokens(text) {
        if !token.contains('=') {
            set_once(&mut p, probability(token, token)?, token)?;
            continue;
        }
        let (k, v) = key_value(token)?;
        match k.as_str() {
            "p" => set_once(&mut p, probability(v, token)?, token)?,
            "rank" => set_once(&mut ranks, Ranges::parse(v, token)?, token)?,
            "tag" => set_once(&mut tags, Ranges::parse(v, token)?, token)?,
            "op" => {
                let mut names = Vec::new();
                for w in v.split(',') {
                    match op_name(w) {
                        Some(n) => names.push(n.to_string()),
                        None => {
                            return bad(token, format!("`{}` is not a send MPIFT corrupts ({})", w.trim(), FLIPPABLE_OPS.join(", ")))
                        }
                    }
                }
                set_once(&mut ops, names, token)?;
            }
            other => return bad(token, format!("unknown key `{other}` (expected p, rank, op or tag)")),
        }
    }
    let Some(p) = p else {
        return bad(text.trim(), "no probability: expected e.g. MPIFT_BITFLIP=1e-6 or p=1e-6;rank=0");
    };
    Ok(BitflipPolicy { p, ranks, ops, tags })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> ParseError {
        parse_kill(text).expect_err(text)
    }

    #[test]
    fn call_and_time_rules() {
        let p = parse_kill("rank=2@call=50").unwrap();
        assert_eq!(p.rules.len(), 1);
        assert_eq!(p.rules[0].trigger, Trigger::Call(50));
        assert!(p.rules[0].ranks.as_ref().unwrap().contains(2));
        assert!(!p.rules[0].ranks.as_ref().unwrap().contains(3));
        let p = parse_kill(" rank = 2,5 @ time = 1.5 ; rank=4-7@call=9 ;").unwrap();
        assert_eq!(p.rules[0].trigger, Trigger::Time(1.5));
        let r = p.rules[0].ranks.as_ref().unwrap();
        assert!(r.contains(2) && r.contains(5) && !r.contains(3));
        let r = p.rules[1].ranks.as_ref().unwrap();
        assert!((4..=7).all(|x| r.contains(x)) && !r.contains(8) && !r.contains(3));
    }

    #[test]
    fn random_rules_and_modifiers() {
        let p = parse_kill("rate=0.01; mtbf=60; rank=1-2@weibull=1.5:30; node=4; max=3; spare=0,9; memory=8").unwrap();
        assert_eq!(p.rules[0], Rule { ranks: None, trigger: Trigger::Rate(0.01), token: "rate=0.01".into() });
        assert_eq!(p.rules[1].trigger, Trigger::Mtbf(60.0));
        assert_eq!(p.rules[2].trigger, Trigger::Weibull { shape: 1.5, scale: 30.0 });
        assert_eq!(p.node, Some(Node::Block(4)));
        assert_eq!(p.max, Some(3));
        assert!(p.is_spare(0) && p.is_spare(9) && !p.is_spare(1));
        assert_eq!(p.memory, Some(8.0));
        assert_eq!(parse_kill("node=HOST").unwrap().node, Some(Node::Host));
    }

    #[test]
    fn comments_newlines_and_empty_text() {
        let p = parse_kill("# yesterday's failure\nrank=3@call=100   # the victim\n\nmax=1\n").unwrap();
        assert_eq!(p.rules.len(), 1);
        assert_eq!(p.max, Some(1));
        assert!(parse_kill("").unwrap().is_empty());
        assert!(parse_kill(" ; ;").unwrap().is_empty());
    }

    #[test]
    fn errors_name_the_bad_token() {
        for (text, token) in [
            ("rank=2@cal=50", "rank=2@cal=50"),
            ("rank=2@call=50;rate=1.5", "rate=1.5"),
            ("rank=x@call=5", "rank=x@call=5"),
            ("rank=5-3@call=5", "rank=5-3@call=5"),
            ("rank=2@call=1", "rank=2@call=1"),
            ("rank=2@call=-4", "rank=2@call=-4"),
            ("call=50", "call=50"),
            ("rank=2", "rank=2"),
            ("mtbf=0", "mtbf=0"),
            ("mtbf=-1", "mtbf=-1"),
            ("weibull=2", "weibull=2"),
            ("weibull=0:5", "weibull=0:5"),
            ("node=0", "node=0"),
            ("node=rack", "node=rack"),
            ("max=two", "max=two"),
            ("max=1;max=2", "max=2"),
            ("memory=0.5", "memory=0.5"),
            ("kill", "kill"),
            ("frequency=3", "frequency=3"),
            ("node=2@call=5", "node=2@call=5"),
            ("rank=1@time=soon", "rank=1@time=soon"),
        ] {
            let e = err(text);
            assert_eq!(e.token, token, "{text}: {e}");
            assert!(e.to_string().contains(&format!("`{token}`")), "{e}");
        }
    }

    #[test]
    fn validation_needs_the_world() {
        let p = parse_kill("rank=2-4@call=50").unwrap();
        assert!(p.validate(5, None).is_ok());
        let e = p.validate(4, None).unwrap_err();
        assert_eq!(e.token, "rank=2-4@call=50");
        assert!(e.why.contains("rank 4"), "{e}");
        assert_eq!(parse_kill("spare=0,7").unwrap().validate(4, None).unwrap_err().token, "spare=0,7");
        let m = parse_kill("memory=4").unwrap();
        assert!(m.validate(4, None).unwrap_err().why.contains("MPIFT_BITFLIP"));
        let b = parse_bitflip("1e-3").unwrap();
        assert!(m.validate(4, Some(&b)).is_ok());
    }

    #[test]
    fn bitflip_policies() {
        let b = parse_bitflip("1e-6").unwrap();
        assert_eq!(b.p, 1e-6);
        assert!(b.applies(3, "MPI_Isend", 7));
        let b = parse_bitflip("p=0.5; rank=0,2; op=send,MPI_ISEND; tag=10-12").unwrap();
        assert_eq!(b.ops, Some(vec!["MPI_Send".to_string(), "MPI_Isend".to_string()]));
        assert!(b.applies(2, "MPI_Send", 11));
        assert!(!b.applies(1, "MPI_Send", 11));
        assert!(!b.applies(2, "MPI_Ssend", 11));
        assert!(!b.applies(2, "MPI_Send", 13));
        for (text, token) in [("2", "2"), ("p=0.1;p=0.2", "p=0.2"), ("p=0.1;op=recv", "op=recv"), ("p=0.1;colour=red", "colour=red"), ("rank=1", "rank=1")]
        {
            assert_eq!(parse_bitflip(text).unwrap_err().token, token, "{text}");
        }
    }
}
