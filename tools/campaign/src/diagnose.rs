//! `mpift-campaign diagnose [options] -- command`: runs the user's own command
//! once (it does not attach to a running job), traced, under a deadline; when
//! it hangs, says why (forensics) before killing it. The run's files go to
//! `--out`: output.txt, report.json, trace/, record.json (a campaign record:
//! verdict, the ranks' status lines, the finding), waits.png.

use crate::campaign::{self, Error};
use crate::results::{self, Record};
use crate::run;
use crate::verdict::{self, Checks, Evidence, Verdict};
use clap::Parser;
use std::path::PathBuf;
use std::time::Duration;

/// Runs a command once under MPIFT's trace and, if it hangs, says why.
#[derive(Parser, Debug, Clone)]
#[command(name = "mpift-campaign diagnose", bin_name = "mpift-campaign diagnose", after_help = "Exit status: 0 the run ended well, 1 it hung, crashed or failed a check, 2 usage error.")]
pub struct Args {
    /// Seconds before the run counts as hung.
    #[arg(long, default_value_t = 60.0, value_parser = crate::cli::positive_secs)]
    pub timeout: f64,
    /// Output directory (its earlier contents are replaced).
    #[arg(long, default_value = "diagnose-out")]
    pub out: PathBuf,
    /// The output must contain a line matching this regular expression.
    #[arg(long, value_parser = crate::cli::parse_regex)]
    pub expect: Option<regex::Regex>,
    /// Also keep gdb backtraces of every rank (`gdb.<rank>.txt`) when gdb is on PATH.
    #[arg(long)]
    pub gdb: bool,
    /// The job, after `--`: e.g. `-- mpiexec -n 4 ./prog`.
    #[arg(last = true, required = true, num_args = 1.., value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// Runs it; Ok(true) when the run ended well.
pub fn run(args: Args) -> Result<bool, Error> {
    let dir = args.out.clone();
    let _ = std::fs::remove_dir_all(&dir);
    let trace_dir = dir.join("trace");
    std::fs::create_dir_all(&trace_dir).map_err(|e| Error::Run(format!("cannot create {}: {e}", trace_dir.display())))?;
    let (out, report) = (dir.join("output.txt"), dir.join("report.json"));
    let mut cmd = campaign::command(&args.command, &dir, &trace_dir, &report);
    if let Ok(k) = std::env::var("MPIFT_KILL") {
        cmd.env("MPIFT_KILL", k);
    }
    let gdb = args.gdb && run::on_path("gdb");
    let ran = run::run_job(&mut cmd, &out, Duration::from_secs_f64(args.timeout), |d| run::diagnose(&trace_dir, &dir, d, gdb));
    let (exit, secs, hang) = ran.map_err(|e| Error::Run(format!("cannot run `{}`: {e}", args.command[0])))?;
    let (deaths, world) = verdict::read_report(&report).unwrap_or_default();
    let checks = Checks { expect: args.expect.clone(), ..Checks::default() };
    let np = world.unwrap_or_else(|| crate::trace::ranks_in(&trace_dir));
    let ev = Evidence { exit: &exit, out: &out, report: &report, kill: "", np, deaths: deaths.len(), check_out: &dir.join("check.txt") };
    let (v, why) = verdict::judge(&checks, &ev);
    let (exit_code, signal) = exit.code_and_signal();
    let kill = std::env::var("MPIFT_KILL").unwrap_or_default();
    let rec = Record {
        replay: results::command_line(&args.command),
        kill,
        seed: 0,
        verdict: v,
        seconds: (secs * 1000.0).round() / 1000.0,
        exit: exit.describe(),
        exit_code,
        signal,
        deaths,
        why,
        dir: dir.display().to_string(),
        hang,
    };
    let path = dir.join("record.json");
    std::fs::write(&path, serde_json::to_string_pretty(&rec).unwrap_or_default()).map_err(|e| Error::Run(format!("cannot write {}: {e}", path.display())))?;
    print!("{}", say(&rec));
    Ok(v == Verdict::Pass)
}

/// What diagnose prints: the verdict, and for a hang the paragraph and where
/// the picture is.
pub fn say(r: &Record) -> String {
    let mut t = format!("diagnose: {} ({}, {:.1} s); files in {}\n", r.verdict, r.exit, r.seconds, r.dir);
    if let Some(f) = r.hang.as_ref().and_then(|h| h.finding.as_ref()) {
        t += &format!("why it hangs ({}): {}\n", f.pattern, f.paragraph);
        t += &format!("picture: {}/waits.png\n", r.dir);
    } else if r.verdict == Verdict::Hang {
        t += "why it hangs: no rank was inside an MPI call (the program waits outside MPI)\n";
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_values_are_clap_errors() {
        let parse = |v: &[&str]| Args::try_parse_from(std::iter::once("diagnose").chain(v.iter().copied()));
        assert!(parse(&["--timeout", "0", "--", "mpiexec"]).is_err());
        assert!(parse(&["--expect", "(", "--", "mpiexec"]).is_err());
        assert!(parse(&["--timeout", "x", "--", "mpiexec"]).is_err());
        let a = parse(&["--timeout", "2.5", "--expect", "OK$", "--", "mpiexec", "-n", "4", "./p"]).unwrap();
        assert_eq!((a.timeout, a.command.len()), (2.5, 4));
        assert!(a.expect.unwrap().is_match("rank 0: OK"));
    }
}
