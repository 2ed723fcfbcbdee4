//! One campaign: the failure-free run, the kill points, the runs in parallel,
//! the records, the summary and the matrix (docs/CAMPAIGN.md).

use crate::cli::{self, Args};
use crate::points::{self, Point, Selection};
use crate::results::{self, Record};
use crate::run;
use crate::trace::{self, Calls};
use crate::verdict::{self, Checks, Evidence, Verdict};
use std::collections::{HashMap, VecDeque};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{mpsc, Mutex};
use std::time::Duration;

/// Why a campaign stopped early.
#[derive(Debug)]
pub enum Error {
    /// The options do not fit the job (exit status 2).
    Usage(String),
    /// The campaign could not run (exit status 1).
    Run(String),
}

/// What every run shares (also minimize's runs).
pub struct Ctx {
    pub command: Vec<String>,
    pub seed: u64,
    pub np: usize,
    pub timeout: Duration,
    pub checks: Checks,
    pub gdb: bool,
    pub out: PathBuf,
}

/// The failure-free run's facts.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Baseline {
    pub command: Vec<String>,
    pub seed: u64,
    pub seconds: f64,
    pub world_size: usize,
}

pub fn io(what: &str, p: &Path) -> impl FnOnce(std::io::Error) -> Error {
    let what = format!("cannot {what} {}", p.display());
    move |e| Error::Run(format!("{what}: {e}"))
}

/// Runs the campaign; Ok(true) when every run was PASS.
pub fn run(args: Args) -> Result<bool, Error> {
    let started = std::time::SystemTime::now();
    let out = args.out.clone();
    prepare(&out, args.fresh)?;
    let checks = Checks { check: args.check.clone(), expect: args.expect.clone(), expect_survivors: args.expect_survivors.clone() };
    let (base, traces) = baseline(&args.command, args.seed, &out, args.baseline_timeout, &checks)?;
    // A correct program is never judged hung for waiting on late news.
    let late = cli::late_allowance(std::env::var("MPIFT_SEMANTICS").ok().as_deref(), std::env::var("MPIFT_LATENCY").ok().as_deref());
    let timeout = args.timeout.unwrap_or((10.0 * base.seconds).max(10.0)) + late;
    let sel = Selection {
        ranks: args.ranks.as_ref().map(|r| r.0.clone()),
        calls_of: args.calls_of.clone(),
        every: args.every,
        first: args.first,
        sample: args.sample,
        pairs: args.pairs,
        time: args.time,
        no_single: args.no_single,
        seed: args.seed,
    };
    let points = points::select(&sel, &traces, base.seconds).map_err(Error::Usage)?;
    let jsonl = out.join("runs.jsonl");
    let done: HashMap<String, Record> = results::load(&jsonl).into_iter().filter(|r| r.seed == args.seed).map(|r| (r.kill.clone(), r)).collect();
    let todo: Vec<Point> = points.iter().filter(|p| !done.contains_key(&p.rule())).cloned().collect();
    let jobs = args.jobs.map_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()), |j| j as usize);
    let counts: Vec<u64> = traces.iter().map(Calls::count).collect();
    eprintln!(
        "mpift-campaign: failure-free run: {} ranks, {}-{} calls, {:.2} s; {} kill points ({} done before), timeout {:.1} s, {} at a time",
        base.world_size,
        counts.iter().min().unwrap_or(&0),
        counts.iter().max().unwrap_or(&0),
        base.seconds,
        points.len(),
        points.len() - todo.len(),
        timeout,
        jobs
    );
    let ctx = Ctx { command: args.command.clone(), seed: args.seed, np: base.world_size, timeout: Duration::from_secs_f64(timeout), checks, gdb: run::on_path("gdb"), out: out.clone() };
    let fresh = run_all(&ctx, todo, jobs, &jsonl)?;
    let mut by_rule: HashMap<String, Record> = done;
    by_rule.extend(fresh.into_iter().map(|r| (r.kill.clone(), r)));
    let records: Vec<Record> = points.iter().filter_map(|p| by_rule.get(&p.rule()).cloned()).collect();
    let all_pass = finish(&ctx, &base, &traces, &points, &records)?;
    if let Some(path) = &args.junit {
        let suite = crate::junit::Suite { command: &ctx.command, seed: ctx.seed, timeout, started, traces: &traces, records: &records };
        crate::junit::write(path, &suite).map_err(io("write", path))?;
    }
    Ok(all_pass)
}

/// Creates the output directory; `--fresh` removes what an earlier campaign left.
fn prepare(out: &Path, fresh: bool) -> Result<(), Error> {
    if fresh {
        for f in ["runs.jsonl", "summary.json", "matrix.png", "baseline.json"] {
            let _ = std::fs::remove_file(out.join(f));
        }
        for d in ["runs", "baseline", "waits"] {
            let _ = std::fs::remove_dir_all(out.join(d));
        }
    }
    std::fs::create_dir_all(out.join("runs")).map_err(io("create", out))
}

/// The failure-free run in `out/baseline` (or the one an earlier campaign of the
/// same command and seed made there): its facts and every rank's calls.
/// `limit`: its timeout in seconds.
pub fn baseline(job: &[String], seed: u64, out: &Path, limit: f64, checks: &Checks) -> Result<(Baseline, Vec<Calls>), Error> {
    let dir = out.join("baseline");
    let trace_dir = dir.join("trace");
    let saved = out.join("baseline.json");
    if let Some(b) = std::fs::read_to_string(&saved).ok().and_then(|t| serde_json::from_str::<Baseline>(&t).ok()) {
        if b.command != job || b.seed != seed {
            return Err(Error::Usage(format!(
                "{} holds a campaign of another command or seed (`{}`, --seed {}); use --fresh or another --out",
                out.display(),
                results::command_line(&b.command),
                b.seed
            )));
        }
        if let Ok(t) = trace::read_dir_calls(&trace_dir, b.world_size) {
            return Ok((b, t));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&trace_dir).map_err(io("create", &trace_dir))?;
    let (out, report) = (dir.join("output.txt"), dir.join("report.json"));
    let mut cmd = command(job, &dir, &trace_dir, &report);
    cmd.env("MPIFT_SEED", seed.to_string());
    let limit = Duration::from_secs_f64(limit);
    let spawn = |e: std::io::Error| Error::Run(format!("cannot run `{}`: {e}", job[0]));
    let (exit, secs, _) = run::run_job(&mut cmd, &out, limit, |_| run::diagnose(&trace_dir, &dir, true, false)).map_err(spawn)?;
    let fail = |why: String| Error::Run(format!("the failure-free run failed: {why}\n  output: {}\n{}", out.display(), tail(&out)));
    let (deaths, world) = verdict::read_report(&report).unwrap_or_default();
    let np = world.unwrap_or_else(|| trace::ranks_in(&trace_dir));
    let ev = Evidence { exit: &exit, out: &out, report: &report, kill: "", np, deaths: deaths.len(), check_out: &dir.join("check.txt") };
    if let (v, Some(why)) = verdict::judge(checks, &ev) {
        return Err(fail(format!("{v}: {why}")));
    }
    if !deaths.is_empty() {
        // A program that kills ranks itself (Sim_FT_kill_me, a mapped exit): its
        // victims' traces end at their deaths, so every kill point is reached.
        eprintln!("mpift-campaign: note: {} rank(s) die in the failure-free run by the program's own doing", deaths.len());
    }
    if np == 0 {
        return Err(fail("no rank left a trace: is the program linked with MPIFT (libmpift.a)?".into()));
    }
    let traces = trace::read_dir_calls(&trace_dir, np).map_err(fail)?;
    let b = Baseline { command: job.to_vec(), seed, seconds: secs, world_size: np };
    let text = serde_json::to_string_pretty(&b).unwrap_or_default();
    std::fs::write(&saved, text).map_err(io("write", &saved))?;
    Ok((b, traces))
}

/// The last lines of a file, indented (for error messages).
fn tail(p: &Path) -> String {
    let text = std::fs::read_to_string(p).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(10)..].iter().map(|l| format!("  | {l}\n")).collect()
}

/// The job's command with MPIFT's tracing and report in `dir`. MPIFT_KILL_FILE
/// is dropped: the campaign's rule is the only one.
pub fn command(argv: &[String], dir: &Path, trace_dir: &Path, report: &Path) -> Command {
    let mut c = Command::new(&argv[0]);
    c.args(&argv[1..])
        .env_remove("MPIFT_KILL")
        .env_remove("MPIFT_KILL_FILE")
        .env("MPIFT_TRACE", trace_dir)
        .env("MPIFT_REPORT", report)
        .env("CAMPAIGN_DIR", dir);
    c
}

/// Gives the job a temporary directory of its own (TMPDIR), returned for removal:
/// two Open MPI 4.1 launchers starting at once both create the session directory
/// /tmp/ompi.<host>.<uid> and one may fail with "File exists" in orte_init (a
/// CRASH of the loaded campaign at 2 runs at a time, nothing to do with MPIFT).
/// Short, under the system's temporary directory: Open MPI puts socket paths in it.
fn own_tmpdir(cmd: &mut Command) -> Option<std::path::PathBuf> {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let k = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let t = std::env::temp_dir().join(format!("mftc{}.{k}", std::process::id()));
    std::fs::create_dir_all(&t).ok()?;
    cmd.env("TMPDIR", &t);
    Some(t)
}

/// A run's scratch directory name: the rule with its separators replaced.
pub fn dir_name(rule: &str) -> String {
    rule.chars().map(|c| if c.is_ascii_alphanumeric() || c == '.' { c } else { '_' }).collect()
}

/// One kill point, run and judged in `OUT/runs/<rule>`; a hang's picture also
/// goes beside matrix.png, as `OUT/waits/<rule>.png`.
fn run_point(ctx: &Ctx, p: &Point) -> Result<Record, Error> {
    let rule = p.rule();
    let dir = ctx.out.join("runs").join(dir_name(&rule));
    let r = run_rule(ctx, &rule, &dir)?;
    if r.hang.as_ref().is_some_and(|h| h.finding.is_some()) {
        let pics = ctx.out.join("waits");
        let _ = std::fs::create_dir_all(&pics).and_then(|_| std::fs::copy(dir.join("waits.png"), pics.join(format!("{}.png", dir_name(&rule)))));
    }
    Ok(r)
}

/// One run of the job with `MPIFT_KILL=rule`, judged, in the scratch directory
/// `dir` (emptied first). Shared by the campaign and `minimize`.
pub fn run_rule(ctx: &Ctx, rule: &str, dir: &Path) -> Result<Record, Error> {
    let (rule, dir) = (rule.to_string(), dir.to_path_buf());
    let _ = std::fs::remove_dir_all(&dir);
    let trace_dir = dir.join("trace");
    std::fs::create_dir_all(&trace_dir).map_err(io("create", &trace_dir))?;
    let (out, report) = (dir.join("output.txt"), dir.join("report.json"));
    let mut cmd = command(&ctx.command, &dir, &trace_dir, &report);
    cmd.env("MPIFT_KILL", &rule).env("MPIFT_SEED", ctx.seed.to_string());
    let tmp = own_tmpdir(&mut cmd);
    let on_hang = |diagnose: bool| run::diagnose(&trace_dir, &dir, diagnose, ctx.gdb);
    let ran = run::run_job(&mut cmd, &out, ctx.timeout, on_hang);
    if let Some(t) = tmp {
        let _ = std::fs::remove_dir_all(t);
    }
    let (exit, secs, hang) = ran.map_err(|e| match e.kind() {
        std::io::ErrorKind::Interrupted => Error::Run(format!("interrupted; rerun with --out {} to resume", ctx.out.display())),
        _ => Error::Run(format!("cannot run the job for {}: {e}", dir.display())),
    })?;
    let deaths = verdict::read_report(&report).map(|r| r.0).unwrap_or_default();
    let ev = Evidence { exit: &exit, out: &out, report: &report, kill: &rule, np: ctx.np, deaths: deaths.len(), check_out: &dir.join("check.txt") };
    let (v, why) = verdict::judge(&ctx.checks, &ev);
    let (exit_code, signal) = exit.code_and_signal();
    Ok(Record {
        replay: results::replay(&rule, ctx.seed, &ctx.command),
        kill: rule,
        seed: ctx.seed,
        verdict: v,
        seconds: (secs * 1000.0).round() / 1000.0,
        exit: exit.describe(),
        exit_code,
        signal,
        deaths,
        why,
        dir: dir.display().to_string(),
        hang,
    })
}

/// Runs the points `jobs` at a time; each record is appended as it arrives.
fn run_all(ctx: &Ctx, todo: Vec<Point>, jobs: usize, jsonl: &Path) -> Result<Vec<Record>, Error> {
    let bar = progress(todo.len() as u64);
    let queue = Mutex::new(todo.into_iter().collect::<VecDeque<_>>());
    let (tx, rx) = mpsc::channel::<Result<Record, Error>>();
    let mut got = Vec::new();
    let mut first_error = None;
    std::thread::scope(|s| {
        for _ in 0..jobs {
            let (tx, queue) = (tx.clone(), &queue);
            s.spawn(move || loop {
                let Some(p) = queue.lock().unwrap_or_else(|e| e.into_inner()).pop_front() else { break };
                if tx.send(run_point(ctx, &p)).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        let mut n: HashMap<Verdict, usize> = HashMap::new();
        for r in rx {
            match r.and_then(|r| results::append(jsonl, &r).map(|_| r).map_err(io("append to", jsonl))) {
                Ok(r) => {
                    *n.entry(r.verdict).or_default() += 1;
                    bar.inc(1);
                    bar.set_message(Verdict::ALL.iter().map(|v| format!("{v} {}", n.get(v).unwrap_or(&0))).collect::<Vec<_>>().join("  "));
                    got.push(r);
                }
                Err(e) => {
                    // Stop: no more points are taken; the running ones finish
                    // (or, on an interrupt, are killed).
                    queue.lock().unwrap_or_else(|e| e.into_inner()).clear();
                    first_error.get_or_insert(e);
                }
            }
        }
    });
    bar.finish_and_clear();
    match first_error {
        Some(e) => Err(e),
        None => Ok(got),
    }
}

/// A progress bar on stderr, hidden when stderr is not a terminal (CI).
fn progress(n: u64) -> indicatif::ProgressBar {
    if !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(n);
    if let Ok(style) = indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} runs  {msg}  [{elapsed} < {eta}]") {
        bar.set_style(style);
    }
    bar
}

/// summary.json, the human summary (stdout) and matrix.png.
fn finish(ctx: &Ctx, base: &Baseline, traces: &[Calls], points: &[Point], records: &[Record]) -> Result<bool, Error> {
    let s = results::summarize(&ctx.command, ctx.seed, ctx.np, base.seconds, ctx.timeout.as_secs_f64(), records);
    let path = ctx.out.join("summary.json");
    std::fs::write(&path, serde_json::to_string_pretty(&s).unwrap_or_default()).map_err(io("write", &path))?;
    let verdicts: HashMap<&str, Verdict> = records.iter().map(|r| (r.kill.as_str(), r.verdict)).collect();
    let cells: HashMap<(u32, u64), Verdict> = points
        .iter()
        .filter_map(|p| match p {
            Point::Call { rank, call } => verdicts.get(p.rule().as_str()).map(|v| ((*rank, *call), *v)),
            _ => None,
        })
        .collect();
    let png = ctx.out.join("matrix.png");
    let title = format!("{}: {} runs, {} PASS, {} HANG, {} CRASH, {} WRONG", results::command_line(&ctx.command), s.runs, s.pass, s.hang, s.crash, s.wrong);
    if let Err(e) = crate::matrix::draw(&png, traces, &cells, &title) {
        eprintln!("mpift-campaign: warning: no matrix.png: {e}");
    }
    print!("{}", results::human(&s, &ctx.out));
    Ok(s.runs == s.pass && s.runs == points.len())
}

#[cfg(test)]
mod tests {
    #[test]
    fn dir_names() {
        assert_eq!(super::dir_name("rank=1@call=5;rank=2@call=7"), "rank_1_call_5_rank_2_call_7");
        assert_eq!(super::dir_name("rank=0@time=0.250000"), "rank_0_time_0.250000");
    }
}
