//! A run's verdict: HANG (past the deadline), CRASH (non-zero exit or a signal:
//! with MPIFT a simulated-dead rank exits 0, so a clean run exits 0), WRONG (the
//! user's checks fail), else PASS.

use crate::run::{self, Exit};
use regex::Regex;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// In JSON and messages: PASS, HANG, CRASH, WRONG.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Verdict {
    Pass,
    Hang,
    Crash,
    Wrong,
}

impl Verdict {
    pub const ALL: [Verdict; 4] = [Verdict::Pass, Verdict::Hang, Verdict::Crash, Verdict::Wrong];
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(match self {
            Verdict::Pass => "PASS",
            Verdict::Hang => "HANG",
            Verdict::Crash => "CRASH",
            Verdict::Wrong => "WRONG",
        })
    }
}

/// The user's checks of a run's outcome.
#[derive(Debug, Clone, Default)]
pub struct Checks {
    pub check: Option<String>,
    pub expect: Option<Regex>,
    pub expect_survivors: Option<Regex>,
}

/// One death from the MPIFT report (`"deaths"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Death {
    pub rank: u32,
    pub call: u64,
    #[serde(default)]
    pub time_s: f64,
    #[serde(default)]
    pub cause: String,
}

/// What the report says: the deaths and the world size (None: no readable report).
pub fn read_report(path: &Path) -> Option<(Vec<Death>, Option<usize>)> {
    #[derive(Deserialize)]
    struct Report {
        #[serde(default)]
        deaths: Vec<Death>,
        world_size: Option<usize>,
    }
    let text = std::fs::read_to_string(path).ok()?;
    let r: Report = serde_json::from_str(&text).ok()?;
    Some((r.deaths, r.world_size))
}

/// The paths and facts a verdict is made from.
pub struct Evidence<'a> {
    pub exit: &'a Exit,
    pub out: &'a Path,
    pub report: &'a Path,
    pub kill: &'a str,
    pub np: usize,
    pub deaths: usize,
    /// Where the check's own output goes.
    pub check_out: &'a Path,
}

/// The verdict and, unless PASS, why.
pub fn judge(checks: &Checks, ev: &Evidence) -> (Verdict, Option<String>) {
    match ev.exit {
        Exit::TimedOut => return (Verdict::Hang, Some("not finished before the timeout".into())),
        Exit::Code(0) => {}
        e => return (Verdict::Crash, Some(e.describe())),
    }
    match wrong(checks, ev) {
        Some(why) => (Verdict::Wrong, Some(why)),
        None => (Verdict::Pass, None),
    }
}

/// Why the output is wrong, if it is.
pub fn wrong(checks: &Checks, ev: &Evidence) -> Option<String> {
    let text = if checks.expect.is_some() || checks.expect_survivors.is_some() {
        String::from_utf8_lossy(&std::fs::read(ev.out).unwrap_or_default()).into_owned()
    } else {
        String::new()
    };
    if let Some(re) = &checks.expect {
        if !text.lines().any(|l| re.is_match(l)) {
            return Some(format!("no output line matches --expect `{re}`"));
        }
    }
    if let Some(re) = &checks.expect_survivors {
        let want = ev.np.saturating_sub(ev.deaths);
        let got = text.lines().filter(|l| re.is_match(l)).count();
        if got < want {
            return Some(format!("{got} output line(s) match --expect-survivors `{re}`, expected {want} ({} ranks - {} deaths)", ev.np, ev.deaths));
        }
    }
    if let Some(cmd) = &checks.check {
        return run_check(cmd, ev);
    }
    None
}

/// `sh -c CMD` with CAMPAIGN_OUT, CAMPAIGN_REPORT, CAMPAIGN_KILL; at most 60 s.
fn run_check(cmd: &str, ev: &Evidence) -> Option<String> {
    let mut c = Command::new("sh");
    c.args(["-c", cmd])
        .env("CAMPAIGN_OUT", ev.out)
        .env("CAMPAIGN_REPORT", ev.report)
        .env("CAMPAIGN_KILL", ev.kill);
    let res = run::run_job(&mut c, ev.check_out, Duration::from_secs(60), |_| (Default::default(), vec![]));
    match res {
        Ok((Exit::Code(0), _, _)) => None,
        Ok((e, _, _)) => Some(format!("--check failed: {} (its output: {})", e.describe(), ev.check_out.display())),
        Err(e) => Some(format!("--check could not run: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Tmp(std::path::PathBuf);
    impl Drop for Tmp {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn setup(name: &str, output: &str) -> Tmp {
        let d = std::env::temp_dir().join(format!("campaign-verdict-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("out"), output).unwrap();
        std::fs::write(d.join("report.json"), r#"{"world_size": 4, "deaths": [{"rank": 2, "call": 9, "time_s": 0.1, "cause": "rule"}]}"#).unwrap();
        Tmp(d)
    }

    fn judge_with(t: &Tmp, checks: &Checks, exit: Exit) -> (Verdict, Option<String>) {
        let (out, report, check_out) = (t.0.join("out"), t.0.join("report.json"), t.0.join("check.txt"));
        let ev = Evidence { exit: &exit, out: &out, report: &report, kill: "rank=2@call=9", np: 4, deaths: 1, check_out: &check_out };
        judge(checks, &ev)
    }

    #[test]
    fn exit_status_first() {
        let t = setup("exit", "");
        let none = Checks::default();
        assert_eq!(judge_with(&t, &none, Exit::Code(0)).0, Verdict::Pass);
        assert_eq!(judge_with(&t, &none, Exit::Code(3)), (Verdict::Crash, Some("exit status 3".into())));
        assert_eq!(judge_with(&t, &none, Exit::Signal(9)).0, Verdict::Crash);
        assert_eq!(judge_with(&t, &none, Exit::TimedOut).0, Verdict::Hang);
        // A failed check does not hide a crash.
        let fails = Checks { check: Some("exit 1".into()), ..Default::default() };
        assert_eq!(judge_with(&t, &fails, Exit::Code(2)).0, Verdict::Crash);
    }

    #[test]
    fn expect_and_survivors() {
        let t = setup("expect", "rank 0 ok\nrank 1 ok\nmanager: sum = 5 (correct)\nrank 3 ok\n");
        let c = Checks { expect: Some(Regex::new(r"\(correct\)").unwrap()), ..Default::default() };
        assert_eq!(judge_with(&t, &c, Exit::Code(0)).0, Verdict::Pass);
        let c = Checks { expect: Some(Regex::new("WRONG").unwrap()), ..Default::default() };
        let (v, why) = judge_with(&t, &c, Exit::Code(0));
        assert_eq!(v, Verdict::Wrong);
        assert!(why.unwrap().contains("--expect"));
        // 4 ranks, 1 death: 3 lines needed.
        let c = Checks { expect_survivors: Some(Regex::new(r"^rank \d ok").unwrap()), ..Default::default() };
        assert_eq!(judge_with(&t, &c, Exit::Code(0)).0, Verdict::Pass);
        let c = Checks { expect_survivors: Some(Regex::new(r"^rank [01] ok").unwrap()), ..Default::default() };
        let (v, why) = judge_with(&t, &c, Exit::Code(0));
        assert_eq!(v, Verdict::Wrong);
        assert!(why.unwrap().contains("2 output line(s)"));
    }

    #[test]
    fn check_command_sees_the_run() {
        let t = setup("check", "the answer is 42\n");
        let ok = Checks {
            check: Some(r#"grep -q 42 "$CAMPAIGN_OUT" && grep -q '"deaths"' "$CAMPAIGN_REPORT" && [ "$CAMPAIGN_KILL" = rank=2@call=9 ]"#.into()),
            ..Default::default()
        };
        assert_eq!(judge_with(&t, &ok, Exit::Code(0)), (Verdict::Pass, None));
        let bad = Checks { check: Some("sh -c 'exit 3'".into()), ..Default::default() };
        let (v, why) = judge_with(&t, &bad, Exit::Code(0));
        assert_eq!(v, Verdict::Wrong);
        assert!(why.unwrap().contains("exit status 3"));
    }

    #[test]
    fn report_deaths() {
        let t = setup("report", "");
        let (d, n) = read_report(&t.0.join("report.json")).unwrap();
        assert_eq!((d.len(), d[0].rank, d[0].call, n), (1, 2, 9, Some(4)));
        assert!(read_report(&t.0.join("missing.json")).is_none());
    }
}
