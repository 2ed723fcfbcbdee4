//! The campaign's records: `runs.jsonl` (one JSON object per run, appended as
//! runs finish, read back to resume), `summary.json` and the human summary.

use crate::run::Hang;
use crate::verdict::{Death, Verdict};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

/// One run (a line of runs.jsonl).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Record {
    /// The `MPIFT_KILL` rule (the point's key).
    pub kill: String,
    pub seed: u64,
    pub verdict: Verdict,
    pub seconds: f64,
    /// `exit status N`, `killed by signal N` or `timed out`.
    pub exit: String,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    /// From the run's MPIFT report (empty when there is none).
    pub deaths: Vec<Death>,
    /// Why the verdict is not PASS.
    pub why: Option<String>,
    /// The command that replays the run.
    pub replay: String,
    /// The run's scratch directory (output, report, trace, backtraces).
    pub dir: String,
    pub hang: Option<Hang>,
}

/// The records already in `runs.jsonl` (a line cut short by an interrupted
/// campaign is skipped: that point runs again).
pub fn load(path: &Path) -> Vec<Record> {
    let Ok(text) = std::fs::read_to_string(path) else { return Vec::new() };
    if !text.is_empty() && !text.ends_with('\n') {
        // End the cut line, so the next record starts a line of its own.
        let _ = std::fs::OpenOptions::new().append(true).open(path).and_then(|mut f| f.write_all(b"\n"));
    }
    text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
}

/// Appends one record as one line.
pub fn append(path: &Path, r: &Record) -> std::io::Result<()> {
    let mut line = serde_json::to_string(r).map_err(std::io::Error::other)?;
    line.push('\n');
    let mut f = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
    f.write_all(line.as_bytes())
}

/// Counts by verdict.
pub fn counts(records: &[Record]) -> BTreeMap<Verdict, usize> {
    let mut m: BTreeMap<Verdict, usize> = Verdict::ALL.iter().map(|v| (*v, 0)).collect();
    for r in records {
        *m.entry(r.verdict).or_default() += 1;
    }
    m
}

/// `summary.json`.
#[derive(Debug, Serialize, Deserialize)]
pub struct Summary {
    pub command: Vec<String>,
    pub seed: u64,
    pub world_size: usize,
    pub failure_free_seconds: f64,
    pub timeout_seconds: f64,
    pub runs: usize,
    #[serde(rename = "PASS")]
    pub pass: usize,
    #[serde(rename = "HANG")]
    pub hang: usize,
    #[serde(rename = "CRASH")]
    pub crash: usize,
    #[serde(rename = "WRONG")]
    pub wrong: usize,
    /// Every run that was not PASS: kill rule, verdict, why, replay command.
    pub failures: Vec<Failure>,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct Failure {
    pub kill: String,
    pub verdict: Verdict,
    pub why: Option<String>,
    /// A HANG's waits-for paragraph (forensics).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finding: Option<String>,
    pub replay: String,
    pub dir: String,
}

pub fn summarize(command: &[String], seed: u64, np: usize, ff: f64, timeout: f64, records: &[Record]) -> Summary {
    let c = counts(records);
    Summary {
        command: command.to_vec(),
        seed,
        world_size: np,
        failure_free_seconds: ff,
        timeout_seconds: timeout,
        runs: records.len(),
        pass: c[&Verdict::Pass],
        hang: c[&Verdict::Hang],
        crash: c[&Verdict::Crash],
        wrong: c[&Verdict::Wrong],
        failures: records
            .iter()
            .filter(|r| r.verdict != Verdict::Pass)
            .map(|r| Failure {
                kill: r.kill.clone(),
                verdict: r.verdict,
                why: r.why.clone(),
                finding: r.hang.as_ref().and_then(|h| h.finding.as_ref()).map(|f| f.paragraph.clone()),
                replay: r.replay.clone(),
                dir: r.dir.clone(),
            })
            .collect(),
    }
}

/// The summary for people (stdout): counts, then at most 20 failures to replay.
pub fn human(s: &Summary, out_dir: &Path) -> String {
    let mut t = format!(
        "campaign: {} runs: {} PASS, {} HANG, {} CRASH, {} WRONG (failure-free run {:.2} s, timeout {:.1} s, seed {})\n",
        s.runs, s.pass, s.hang, s.crash, s.wrong, s.failure_free_seconds, s.timeout_seconds, s.seed
    );
    if !s.failures.is_empty() {
        t += "failures (replay with):\n";
        for f in s.failures.iter().take(20) {
            t += &format!("  {:5} {}  # {}\n", f.verdict.to_string(), f.replay, f.why.as_deref().unwrap_or(""));
            if let Some(p) = &f.finding {
                t += &format!("        why it hangs: {p}\n");
            }
        }
        if s.failures.len() > 20 {
            t += &format!("  ... and {} more in {}\n", s.failures.len() - 20, out_dir.join("summary.json").display());
        }
    }
    t += &format!("results: {}\n", out_dir.display());
    t
}

/// A word for `sh`: as is when it is plain, else single-quoted.
pub fn shell_quote(w: &str) -> String {
    let plain = !w.is_empty() && w.chars().all(|c| c.is_ascii_alphanumeric() || "_-./=:,@+%^".contains(c));
    if plain {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', r"'\''"))
    }
}

/// The command as one line for `sh`.
pub fn command_line(command: &[String]) -> String {
    command.iter().map(|w| shell_quote(w)).collect::<Vec<_>>().join(" ")
}

/// `MPIFT_KILL='...' MPIFT_SEED=S mpiexec ...`, with `MPIFT_SEMANTICS=...` first
/// when the runs had a mode other than the default (--semantics, or inherited),
/// and `MPIFT_LATENCY=...` when set (--latency, or inherited).
pub fn replay(kill: &str, seed: u64, command: &[String]) -> String {
    let semantics = std::env::var("MPIFT_SEMANTICS").ok().filter(|m| !m.trim().is_empty() && m.trim() != "default");
    let mut mode = semantics.map_or(String::new(), |m| format!("MPIFT_SEMANTICS={} ", shell_quote(m.trim())));
    if let Some(l) = std::env::var("MPIFT_LATENCY").ok().filter(|l| !l.trim().is_empty()) {
        mode += &format!("MPIFT_LATENCY={} ", shell_quote(l.trim()));
    }
    // The rule always quoted: `;` separates rules.
    format!("{mode}MPIFT_KILL='{}' MPIFT_SEED={seed} {}", kill.replace('\'', r"'\''"), command_line(command))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(kill: &str, v: Verdict) -> Record {
        Record {
            kill: kill.into(),
            seed: 1,
            verdict: v,
            seconds: 0.5,
            exit: "exit status 0".into(),
            exit_code: Some(0),
            signal: None,
            deaths: vec![],
            why: None,
            replay: replay(kill, 1, &["mpiexec".into(), "-n".into(), "4".into(), "./p".into()]),
            dir: "runs/x".into(),
            hang: None,
        }
    }

    #[test]
    fn quoting_and_replay() {
        assert_eq!(shell_quote("./prog"), "./prog");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(replay("rank=1@call=5;rank=2@call=7", 3, &["mpiexec".into(), "./p".into()]), "MPIFT_KILL='rank=1@call=5;rank=2@call=7' MPIFT_SEED=3 mpiexec ./p");
    }

    #[test]
    fn jsonl_round_trip_skips_cut_lines() {
        let d = std::env::temp_dir().join(format!("campaign-results-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let p = d.join("runs.jsonl");
        let _ = std::fs::remove_file(&p);
        append(&p, &rec("rank=1@call=2", Verdict::Pass)).unwrap();
        append(&p, &rec("rank=1@call=3", Verdict::Hang)).unwrap();
        std::fs::OpenOptions::new().append(true).open(&p).unwrap().write_all(b"{\"kill\": \"rank=1@ca").unwrap();
        let back = load(&p);
        assert_eq!(back.len(), 2);
        append(&p, &rec("rank=1@call=4", Verdict::Pass)).unwrap();
        assert_eq!(load(&p).len(), 3, "a record after a cut line is kept");
        assert_eq!(back[1].verdict, Verdict::Hang);
        let s = summarize(&["mpiexec".into()], 1, 4, 1.0, 10.0, &back);
        assert_eq!((s.runs, s.pass, s.hang, s.failures.len()), (2, 1, 1, 1));
        let j = serde_json::to_value(&s).unwrap();
        assert_eq!(j["PASS"], 1);
        assert!(human(&s, &d).contains("2 runs: 1 PASS, 1 HANG, 0 CRASH, 0 WRONG"));
        std::fs::remove_dir_all(&d).unwrap();
    }
}
