//! `mpift-campaign minimize`: from a failing run with several deaths (explicit
//! rules, or the deaths of a policy run's MPIFT report), a smallest set of those
//! deaths that still fails the same way, with its replay command
//! (docs/CAMPAIGN.md, "Minimizing a failure").
//!
//! The search (pure, [`search`]): each single death first — a candidate that
//! passes usually costs one run, and a failing single is minimal at once, since
//! the failure-free run passes — then ddmin (Zeller and Hildebrandt's delta
//! debugging: try halves, then complements of halves, then finer parts) over
//! all the deaths. The result is 1-minimal: removing any one death from it makes
//! the failure go away (or change). Each candidate's runs go through the
//! campaign's own runner ([`campaign::run_rule`]).

use crate::campaign::{self, Ctx, Error};
use crate::cli::{parse_regex, positive_secs};
use crate::junit::case_name;
use crate::results::{self, Record};
use crate::trace::Calls;
use crate::verdict::{Checks, Verdict};
use clap::Parser;
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

/// Finds a smallest set of a failing run's deaths that still fails the same way
/// (docs/CAMPAIGN.md).
#[derive(Parser, Debug, Clone)]
#[command(
    name = "mpift-campaign minimize",
    bin_name = "mpift-campaign minimize",
    after_help = "Example: mpift-campaign minimize --kill 'rank=1@call=40;rank=3@call=90;rank=4@call=12' --expect '^result: OK' -- mpiexec -n 6 ./prog\n\
                  \"The same way\": the same verdict and, for a HANG, the same ranks in the same functions.\n\
                  Search: each death alone, then ddmin; the result is 1-minimal (without any one of its deaths, no such failure).\n\
                  Exit status: 0 a minimal set found, 1 the failure did not reproduce or --max-runs ran out (the smallest failing set so far is printed), 2 usage error."
)]
pub struct Args {
    /// The failing run's deaths: `rank=R@call=C;rank=S@call=D;...` (also `rank=R@time=T`).
    #[arg(long, value_parser = parse_kill, required_unless_present = "from_report", conflicts_with = "from_report")]
    pub kill: Option<Deaths>,
    /// Or the MPIFT report (MPIFT_REPORT) of a failing run, e.g. of a rate, mtbf or
    /// weibull policy: each injected death becomes `rank=R@call=C`, and its seed the seed.
    #[arg(long, value_name = "REPORT")]
    pub from_report: Option<PathBuf>,
    /// MPIFT_SEED of every run (default: the report's seed with --from-report, else 1).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Runs per candidate: a candidate counts as failing the same way only if all N
    /// runs do (its first run that does not ends its trial).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    pub runs: u32,
    /// At most this many runs in all (the failure-free run included); then the
    /// smallest failing set found so far is reported, not known to be minimal.
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u32).range(2..))]
    pub max_runs: u32,
    /// Seconds before a run counts as HANG (default: max(10, 10 x the failure-free time)).
    #[arg(long, value_parser = positive_secs)]
    pub timeout: Option<f64>,
    /// Seconds the failure-free run may take.
    #[arg(long, default_value_t = 600.0, value_parser = positive_secs)]
    pub baseline_timeout: f64,
    /// Output directory: minimize.json, runs.jsonl, one scratch directory per run.
    #[arg(long, default_value = "minimize-out")]
    pub out: PathBuf,
    /// As for a campaign: a check through `sh -c` after each run; non-zero exit = WRONG.
    #[arg(long)]
    pub check: Option<String>,
    /// As for a campaign: the output must contain a line matching this regular expression.
    #[arg(long, value_parser = parse_regex)]
    pub expect: Option<regex::Regex>,
    /// As for a campaign: at least (ranks - deaths) output lines must match this.
    #[arg(long, value_parser = parse_regex)]
    pub expect_survivors: Option<regex::Regex>,
    /// The job, after `--`: e.g. `-- mpiexec -n 6 ./prog args...`.
    #[arg(last = true, required = true, num_args = 1.., value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// The deaths of `--kill`, one rule each (a type of its own: clap reads
/// `Option<Vec<_>>` as a repeated option).
#[derive(Debug, Clone, PartialEq)]
pub struct Deaths(pub Vec<String>);

/// `rank=R@call=C;...`: only explicit deaths, one rank each, so that each token
/// is one death the search can drop.
fn parse_kill(s: &str) -> Result<Deaths, String> {
    let mut out = Vec::new();
    for t in s.split(';').map(str::trim).filter(|t| !t.is_empty()) {
        let explicit = t.strip_prefix("rank=").and_then(|r| r.split_once('@')).is_some_and(|(rank, trig)| {
            rank.parse::<u32>().is_ok()
                && (trig.strip_prefix("call=").is_some_and(|c| c.parse::<u64>().is_ok_and(|c| c >= 2))
                    || trig.strip_prefix("time=").is_some_and(|x| x.parse::<f64>().is_ok_and(|x| x > 0.0)))
        });
        if !explicit {
            return Err(format!("`{t}` is not one death `rank=R@call=C` (C >= 2) or `rank=R@time=S` (a policy run: --from-report)"));
        }
        out.push(t.to_string());
    }
    if out.is_empty() {
        return Err("no death given".into());
    }
    Ok(Deaths(out))
}

/// What `--from-report` takes from an MPIFT report.
#[derive(Debug, PartialEq)]
pub struct FromReport {
    /// Its injected deaths as `rank=R@call=C`, in the report's order.
    pub rules: Vec<String>,
    pub seed: Option<u64>,
    /// The deaths left out, in words.
    pub notes: Vec<String>,
}

/// The injected deaths of an MPIFT report as `rank=R@call=C` rules, and its seed.
/// Deaths the program caused itself (`api`, `signal`, `exit`) happen without a
/// rule, so they are no candidates: they are left out, and named in the notes.
pub fn deaths_from_report(text: &str) -> Result<FromReport, String> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| format!("not a JSON report: {e}"))?;
    let deaths = v.get("deaths").and_then(|d| d.as_array()).ok_or("the report has no `deaths` list")?;
    let (mut rules, mut notes) = (Vec::new(), Vec::new());
    for d in deaths {
        let rank = d.get("rank").and_then(|x| x.as_u64());
        let call = d.get("call").and_then(|x| x.as_u64());
        let cause = d.get("cause").and_then(|x| x.as_str()).unwrap_or("?");
        match (rank, call) {
            (Some(r), Some(c)) if c >= 2 && ["rule", "rate", "lifetime", "node", "bitflip"].contains(&cause) => rules.push(format!("rank={r}@call={c}")),
            (Some(r), c) => notes.push(format!("rank {r} (call {}, cause {cause}) left out: not an injected death", c.map_or("?".into(), |c| c.to_string()))),
            _ => return Err(format!("a death without a rank: {d}")),
        }
    }
    if rules.is_empty() {
        return Err("the report has no injected death to minimize".into());
    }
    Ok(FromReport { rules, seed: v.get("seed").and_then(|s| s.as_u64()), notes })
}

/// What "fails the same way" compares: the verdict and, for a HANG, the
/// waits-for pattern of the forensics (its name and the functions on both ends
/// of every edge, without rank numbers: dropping an irrelevant death leaves it
/// as it was).
pub fn failure_signature(r: &Record) -> String {
    let mut s = r.verdict.to_string();
    if r.verdict == Verdict::Hang {
        // The waits-for pattern, without rank numbers (forensics::signature);
        // without a finding (no rank inside a call), the same words.
        match r.hang.as_ref().and_then(|h| h.finding.as_ref()) {
            Some(f) => s += &format!(" {}", crate::forensics::signature(f)),
            None => s += " (no rank inside a call)",
        }
    }
    s
}

/// What the search found: indices into the deaths, and whether it is known to
/// be 1-minimal (false: the run budget ended the search first).
#[derive(Debug, PartialEq)]
pub struct Found {
    pub set: Vec<usize>,
    pub complete: bool,
}

/// A 1-minimal failing subset of deaths 0..n, given that all n fail and none
/// fail (the failure-free run). `fails(set)`: Some(true) when that set fails
/// the same way, None when no run is left. Each set is asked about once.
pub fn search(n: usize, mut fails: impl FnMut(&[usize]) -> Option<bool>) -> Found {
    let all: Vec<usize> = (0..n).collect();
    let mut known: HashMap<Vec<usize>, bool> = HashMap::from([(Vec::new(), false), (all.clone(), true)]);
    let mut ask = |s: &[usize]| -> Option<bool> {
        if let Some(b) = known.get(s) {
            return Some(*b);
        }
        let b = fails(s)?;
        known.insert(s.to_vec(), b);
        Some(b)
    };
    for i in 0..n {
        match ask(&[i]) {
            Some(true) => return Found { set: vec![i], complete: true },
            Some(false) => {}
            None => return Found { set: all, complete: false },
        }
    }
    ddmin(all, &mut ask)
}

/// ddmin from a failing `c`: split it in `parts`; a failing part becomes c (and
/// back to halves), else a failing complement of a part becomes c (one part
/// fewer), else twice the parts, until the parts are single deaths.
fn ddmin(mut c: Vec<usize>, ask: &mut impl FnMut(&[usize]) -> Option<bool>) -> Found {
    let mut parts = 2;
    while c.len() >= 2 {
        let chunks: Vec<Vec<usize>> = (0..parts).map(|i| c[i * c.len() / parts..(i + 1) * c.len() / parts].to_vec()).collect();
        // With two parts, a complement is the other part: tried already.
        let rests: Vec<Vec<usize>> = if parts > 2 { chunks.iter().map(|ch| c.iter().copied().filter(|x| !ch.contains(x)).collect()).collect() } else { Vec::new() };
        let tries = chunks.iter().map(|s| (s, 2)).chain(rests.iter().map(|s| (s, (parts - 1).max(2))));
        let mut next = None;
        for (s, p) in tries {
            match ask(s) {
                Some(true) => {
                    next = Some((s.clone(), p));
                    break;
                }
                Some(false) => {}
                None => return Found { set: c, complete: false },
            }
        }
        match next {
            Some((s, p)) => {
                parts = p.min(s.len().max(2));
                c = s;
            }
            None if parts >= c.len() => break,
            None => parts = (parts * 2).min(c.len()),
        }
    }
    Found { set: c, complete: true }
}

/// One candidate's trial, for minimize.json.
#[derive(Debug, serde::Serialize)]
struct Step {
    /// The candidate's rule (`;`-separated deaths).
    candidate: String,
    deaths: usize,
    /// Each run: verdict, signature, seconds, scratch directory.
    runs: Vec<serde_json::Value>,
    verdicts: Vec<Verdict>,
    /// All its runs failed the same way as the original: the search goes on from it.
    kept: bool,
}

/// minimize.json.
#[derive(Debug, serde::Serialize)]
struct Report<'a> {
    command: &'a [String],
    seed: u64,
    runs_per_candidate: u32,
    max_runs: u32,
    timeout_seconds: f64,
    failure_free_seconds: f64,
    deaths: &'a [String],
    signature: Option<String>,
    steps: &'a [Step],
    runs: u32,
    minimal: Vec<String>,
    minimal_rule: String,
    replay: String,
    complete: bool,
}

/// The running state: the job, the runs spent and the steps so far.
struct Trials<'a> {
    ctx: Ctx,
    deaths: &'a [String],
    per: u32,
    max: u32,
    used: u32,
    steps: Vec<Step>,
}

impl Trials<'_> {
    /// Runs candidate `set` up to `per` times, stopping at the first run whose
    /// signature is not `want` (None: the first run's, unless it passed). Ok(None)
    /// when the budget ended before the trial was decided.
    fn trial(&mut self, set: &[usize], want: Option<&str>) -> Result<Option<(bool, String)>, Error> {
        let rule = set.iter().map(|i| self.deaths[*i].as_str()).collect::<Vec<_>>().join(";");
        let mut step = Step { candidate: rule.clone(), deaths: set.len(), runs: Vec::new(), verdicts: Vec::new(), kept: false };
        let mut want = want.map(String::from);
        let mut same = true;
        for k in 1..=self.per {
            if self.used >= self.max {
                self.steps.push(step);
                return Ok(None);
            }
            self.used += 1;
            let dir = self.ctx.out.join("runs").join(format!("{}.{k}", campaign::dir_name(&rule)));
            let r = campaign::run_rule(&self.ctx, &rule, &dir)?;
            let jsonl = self.ctx.out.join("runs.jsonl");
            results::append(&jsonl, &r).map_err(campaign::io("append to", &jsonl))?;
            let sig = failure_signature(&r);
            eprintln!("  {:>2} of {} deaths, run {k}: {} ({})", set.len(), self.deaths.len(), sig, r.dir);
            step.runs.push(serde_json::json!({"verdict": r.verdict, "signature": sig, "seconds": r.seconds, "dir": r.dir, "why": r.why}));
            step.verdicts.push(r.verdict);
            let w = want.get_or_insert_with(|| sig.clone());
            if r.verdict == Verdict::Pass || *w != sig {
                same = false;
                break;
            }
        }
        step.kept = same;
        self.steps.push(step);
        Ok(Some((same, want.unwrap_or_default())))
    }
}

/// `mpift-campaign minimize`: Ok(true) when a 1-minimal set was found.
pub fn run(a: Args) -> Result<bool, Error> {
    let (deaths, report_seed) = match (&a.kill, &a.from_report) {
        (Some(k), _) => (k.0.clone(), None),
        (None, Some(p)) => {
            let text = std::fs::read_to_string(p).map_err(|e| Error::Usage(format!("cannot read {}: {e}", p.display())))?;
            let r = deaths_from_report(&text).map_err(|e| Error::Usage(format!("{}: {e}", p.display())))?;
            r.notes.iter().for_each(|n| eprintln!("mpift-campaign minimize: note: {n}"));
            (r.rules, r.seed)
        }
        (None, None) => return Err(Error::Usage("give the deaths: --kill or --from-report".into())),
    };
    let seed = a.seed.or(report_seed).unwrap_or(1);
    let out = a.out.clone();
    // A fresh start each time: the steps and runs are this search's only.
    for f in ["minimize.json", "runs.jsonl", "baseline.json"] {
        let _ = std::fs::remove_file(out.join(f));
    }
    for d in ["runs", "baseline"] {
        let _ = std::fs::remove_dir_all(out.join(d));
    }
    std::fs::create_dir_all(out.join("runs")).map_err(campaign::io("create", &out))?;
    let checks = Checks { check: a.check.clone(), expect: a.expect.clone(), expect_survivors: a.expect_survivors.clone() };
    let (base, traces) = campaign::baseline(&a.command, seed, &out, a.baseline_timeout, &checks)?;
    let timeout = a.timeout.unwrap_or((10.0 * base.seconds).max(10.0));
    eprintln!(
        "mpift-campaign minimize: failure-free run {:.2} s (PASS); {} deaths; timeout {timeout:.1} s; {} runs per candidate, at most {} runs",
        base.seconds,
        deaths.len(),
        a.runs,
        a.max_runs
    );
    let ctx = Ctx { command: a.command.clone(), seed, np: base.world_size, timeout: Duration::from_secs_f64(timeout), checks, gdb: crate::run::on_path("gdb"), out: out.clone() };
    let mut t = Trials { ctx, deaths: &deaths, per: a.runs, max: a.max_runs, used: 1, steps: Vec::new() };
    let all: Vec<usize> = (0..deaths.len()).collect();
    let report = |t: &Trials, sig: Option<String>, found: &Found| write_report(&a, &t.ctx, &traces, base.seconds, t, sig, found);
    let established = match t.trial(&all, None) {
        Ok(e) => e,
        Err(e) => {
            report(&t, None, &Found { set: all, complete: false })?;
            return Err(not_resumable(e));
        }
    };
    let sig = match established {
        Some((true, sig)) => sig,
        ended => {
            let verdicts: Vec<String> = t.steps.last().map(|s| s.verdicts.iter().map(Verdict::to_string).collect()).unwrap_or_default();
            report(&t, None, &Found { set: all, complete: false })?;
            let why = if ended.is_none() { format!("--max-runs {} ran out first", a.max_runs) } else { "nothing to minimize".into() };
            return Err(Error::Run(format!(
                "all {} deaths together did not fail the same way in {} runs (verdicts: {}): {why} (see {})",
                deaths.len(),
                a.runs,
                verdicts.join(" "),
                out.join("minimize.json").display()
            )));
        }
    };
    eprintln!("mpift-campaign minimize: the failure: {sig} ({} of {} runs of all {} deaths)", a.runs, a.runs, deaths.len());
    let mut failed: Option<Error> = None;
    let found = search(deaths.len(), |set| match t.trial(set, Some(&sig)) {
        Ok(r) => r.map(|(same, _)| same),
        Err(e) => {
            failed = Some(e);
            None
        }
    });
    if let Some(e) = failed {
        report(&t, Some(sig), &found)?;
        return Err(not_resumable(e));
    }
    print!("{}", report(&t, Some(sig), &found)?);
    Ok(found.complete)
}

/// An interrupt's error without the campaign's advice to resume: `minimize`
/// starts afresh each time.
fn not_resumable(e: Error) -> Error {
    if crate::run::interrupted() {
        return Error::Run("interrupted; the steps so far are in minimize.json".into());
    }
    e
}

/// minimize.json, and the summary for people (returned).
fn write_report(a: &Args, ctx: &Ctx, traces: &[Calls], ff: f64, t: &Trials, sig: Option<String>, found: &Found) -> Result<String, Error> {
    let minimal: Vec<String> = found.set.iter().map(|i| t.deaths[*i].clone()).collect();
    let rule = minimal.join(";");
    let replay = results::replay(&rule, ctx.seed, &ctx.command);
    let r = Report {
        command: &ctx.command,
        seed: ctx.seed,
        runs_per_candidate: a.runs,
        max_runs: a.max_runs,
        timeout_seconds: ctx.timeout.as_secs_f64(),
        failure_free_seconds: ff,
        deaths: t.deaths,
        signature: sig.clone(),
        steps: &t.steps,
        runs: t.used,
        minimal: minimal.clone(),
        minimal_rule: rule.clone(),
        replay: replay.clone(),
        complete: found.complete,
    };
    let path = ctx.out.join("minimize.json");
    std::fs::write(&path, serde_json::to_string_pretty(&r).unwrap_or_default()).map_err(campaign::io("write", &path))?;
    let how = if found.complete { "1-minimal: without any one of them it passes or fails otherwise" } else { "NOT known to be minimal: --max-runs ran out" };
    let mut s = format!(
        "minimize: {} of {} deaths fail the same way ({}); {how}; {} runs, {} candidates\n",
        minimal.len(),
        t.deaths.len(),
        sig.unwrap_or_default(),
        t.used,
        t.steps.len()
    );
    s += &format!("  {}\n", case_name(&rule, traces));
    s += &format!("rule: {rule}\nreplay: {replay}\ndetails: {}\n", path.display());
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::Hang;
    use crate::trace::Status;

    /// The search with an oracle: returns the found set and the sets asked about.
    fn with(n: usize, fails: impl Fn(&[usize]) -> bool, budget: usize) -> (Found, Vec<Vec<usize>>) {
        let mut asked = Vec::new();
        let found = search(n, |s| {
            if asked.len() >= budget {
                return None;
            }
            asked.push(s.to_vec());
            Some(fails(s))
        });
        (found, asked)
    }

    #[test]
    fn two_of_seven_matter() {
        // Fails only when deaths 1 and 5 are both in.
        let (f, asked) = with(7, |s| s.contains(&1) && s.contains(&5), 1000);
        assert_eq!(f, Found { set: vec![1, 5], complete: true });
        let mut uniq = asked.clone();
        uniq.sort();
        uniq.dedup();
        assert_eq!(uniq.len(), asked.len(), "a set is asked about once");
        assert!(!asked.contains(&vec![]) && !asked.contains(&(0..7).collect()), "the known sets are not run");
        assert!(asked.len() <= 20, "{} candidates", asked.len());
        // Every pair position among 7.
        for a in 0..7 {
            for b in a + 1..7 {
                let (f, _) = with(7, |s| s.contains(&a) && s.contains(&b), 1000);
                assert_eq!(f.set, vec![a, b]);
            }
        }
    }

    #[test]
    fn singles_first() {
        let (f, asked) = with(7, |s| s.contains(&3), 1000);
        assert_eq!(f, Found { set: vec![3], complete: true });
        assert_eq!(asked, [[0], [1], [2], [3]]);
        let (f, asked) = with(1, |_| true, 1000);
        assert_eq!((f.set, asked.len()), (vec![0], 0), "one death: known to fail, nothing to run");
    }

    #[test]
    fn three_and_everything() {
        let (f, _) = with(9, |s| [0, 4, 8].iter().all(|x| s.contains(x)), 1000);
        assert_eq!(f.set, vec![0, 4, 8]);
        let (f, _) = with(5, |s| s.len() == 5, 1000);
        assert_eq!(f, Found { set: vec![0, 1, 2, 3, 4], complete: true }, "all of them matter");
        // Either of two deaths alone suffices: a single is found.
        let (f, _) = with(6, |s| s.contains(&2) || s.contains(&4), 1000);
        assert_eq!(f.set, vec![2]);
    }

    #[test]
    fn budget_ends_the_search() {
        let (f, asked) = with(7, |s| s.contains(&1) && s.contains(&5), 9);
        assert!(!f.complete);
        assert_eq!(asked.len(), 9);
        assert!(f.set.contains(&1) && f.set.contains(&5), "the set so far still fails: {:?}", f.set);
    }

    #[test]
    fn kill_and_report_parsing() {
        assert_eq!(parse_kill("rank=1@call=10; rank=3@call=40 ;").unwrap().0, ["rank=1@call=10", "rank=3@call=40"]);
        assert_eq!(parse_kill("rank=2@time=0.5").unwrap().0, ["rank=2@time=0.5"]);
        for bad in ["rate=0.01", "rank=1@call=1", "rank=1-3@call=5", "rank=1@cal=5", "", "rank=1@call=5;max=1"] {
            assert!(parse_kill(bad).is_err(), "{bad}");
        }
        let report = r#"{"seed": 77, "world_size": 6, "deaths": [
            {"rank": 2, "call": 31, "time_s": 0.1, "cause": "rate"},
            {"rank": 4, "call": 90, "time_s": 0.3, "cause": "lifetime"},
            {"rank": 5, "call": 12, "time_s": 0.0, "cause": "api"}]}"#;
        let r = deaths_from_report(report).unwrap();
        assert_eq!((r.rules, r.seed), (vec!["rank=2@call=31".to_string(), "rank=4@call=90".into()], Some(77)));
        assert!(r.notes.len() == 1 && r.notes[0].contains("rank 5") && r.notes[0].contains("api"));
        assert!(deaths_from_report(r#"{"deaths": []}"#).is_err());
        assert!(deaths_from_report("{").is_err());
    }

    fn rec(v: Verdict, status: &[&str]) -> Record {
        let status = status.iter().enumerate().map(|(rank, l)| Status { rank, pid: Some(100 + rank as i32), line: l.to_string() }).collect();
        Record {
            kill: "rank=1@call=5".into(),
            seed: 1,
            verdict: v,
            seconds: 1.0,
            exit: "timed out".into(),
            exit_code: None,
            signal: None,
            deaths: vec![],
            why: None,
            replay: String::new(),
            dir: String::new(),
            hang: (v == Verdict::Hang).then(|| Hang { status, gdb: vec![], finding: None }),
        }
    }

    #[test]
    fn signatures() {
        use crate::forensics::{Edge, Finding};
        assert_eq!(failure_signature(&rec(Verdict::Wrong, &[])), "WRONG");
        let h = rec(Verdict::Hang, &["pid 1 call 9 MPI_Recv in"]);
        assert_eq!(failure_signature(&h), "HANG (no rank inside a call)");
        let edge = |from, to, f: &str, how: &str| Edge { from, to, function: f.into(), how: how.into(), comm: "MPI_COMM_WORLD".into() };
        let with = |edges: Vec<Edge>, pattern: &str| {
            let mut r = rec(Verdict::Hang, &["pid 1 call 9 MPI_Recv in"]);
            r.hang.as_mut().unwrap().finding = Some(Finding { paragraph: String::new(), pattern: pattern.into(), mpift: false, edges });
            r
        };
        let a = with(vec![edge(2, 3, "MPI_Recv", "from"), edge(3, 2, "MPIX_Comm_agree", "member")], "peer-in-recovery");
        let turned = with(vec![edge(0, 1, "MPI_Recv", "from"), edge(1, 0, "MPIX_Comm_agree", "member")], "peer-in-recovery");
        assert_eq!(failure_signature(&a), failure_signature(&turned), "rank numbers do not matter");
        assert_ne!(failure_signature(&a), failure_signature(&with(vec![edge(2, 3, "MPI_Recv", "from")], "cycle")));
    }

    #[test]
    fn command_line() {
        let parse = |v: &[&str]| Args::try_parse_from(std::iter::once("minimize").chain(v.iter().copied()));
        let a = parse(&["--kill", "rank=1@call=10;rank=3@call=40", "--", "mpiexec", "-n", "4", "./p"]).unwrap();
        assert_eq!((a.runs, a.max_runs, a.seed, a.kill.unwrap().0.len()), (3, 60, None, 2));
        assert!(parse(&["--", "mpiexec"]).is_err(), "no deaths");
        assert!(parse(&["--kill", "rank=1@call=10", "--from-report", "r.json", "--", "mpiexec"]).is_err());
        assert!(parse(&["--kill", "rank=1@call=10", "--runs", "0", "--", "mpiexec"]).is_err());
        assert!(parse(&["--kill", "rank=1@call=10"]).is_err(), "no command");
        assert!(parse(&["--from-report", "r.json", "--expect", "(", "--", "mpiexec"]).is_err());
    }
}
