//! `--junit FILE`: the campaign as a JUnit XML report, the format CI systems
//! (GitLab's `artifacts:reports:junit`, Jenkins' `junit` step) read to show and
//! gate on test results. One `<testcase>` per run, named by its kill point in
//! the program's terms (rank, call number, the MPI function of that call in the
//! failure-free run); a HANG, CRASH or WRONG run carries a `<failure>`.
//! The elements and attributes written here are the ones tests/campaign/junit.xsd
//! allows; tests/campaign/junit.sh validates a real campaign's file against it.

use crate::results::{self, Record};
use crate::trace::Calls;
use crate::verdict::Verdict;
use std::fmt::Write as _;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

/// What the report is made from.
pub struct Suite<'a> {
    pub command: &'a [String],
    pub seed: u64,
    /// The runs' timeout, seconds.
    pub timeout: f64,
    /// When the campaign started (the suite's timestamp).
    pub started: SystemTime,
    /// The failure-free run's calls, by rank (for the functions in the names).
    pub traces: &'a [Calls],
    /// Every run of the campaign, in the campaign's order.
    pub records: &'a [Record],
}

/// Writes the report to `path` (creating its directory).
pub fn write(path: &Path, suite: &Suite) -> std::io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, render(suite, &hostname()))
}

/// A HANG's forensics paragraph (why it hangs, in words), added to its
/// failure's text.
fn finding_text(r: &Record) -> Option<String> {
    r.hang.as_ref()?.finding.as_ref().map(|f| format!("why it hangs ({}): {}", f.pattern, f.paragraph))
}

/// The whole document. The suite's `time` is the runs' times added up (with
/// `--jobs 2` the campaign's wall time is about half): it stays the same when a
/// resumed campaign reuses earlier runs.
pub fn render(s: &Suite, host: &str) -> String {
    let failures = s.records.iter().filter(|r| r.verdict != Verdict::Pass).count();
    let time: f64 = s.records.iter().map(|r| r.seconds).sum();
    let name = format!("mpift-campaign: {}", results::command_line(s.command));
    let counts = format!(r#"tests="{}" failures="{failures}" errors="0" skipped="0" time="{time:.3}""#, s.records.len());
    let mut x = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(x, r#"<testsuites name="{}" {counts}>"#, attr(&name));
    let _ = writeln!(x, r#"  <testsuite name="{}" {counts} timestamp="{}" hostname="{}">"#, attr(&name), timestamp(s.started), attr(host));
    x += "    <properties>\n";
    let props = [
        ("command", results::command_line(s.command)),
        ("seed", s.seed.to_string()),
        ("world_size", s.traces.len().to_string()),
        ("timeout_seconds", format!("{:.1}", s.timeout)),
    ];
    for (k, v) in props {
        let _ = writeln!(x, r#"      <property name="{k}" value="{}"/>"#, attr(&v));
    }
    x += "    </properties>\n";
    let class = attr(&program_name(s.command).replace('.', "_"));
    for r in s.records {
        x += &testcase(r, &class, s.traces);
    }
    x += "  </testsuite>\n</testsuites>\n";
    x
}

/// One run's `<testcase>` (`class` already escaped).
fn testcase(r: &Record, class: &str, traces: &[Calls]) -> String {
    let open = format!(r#"    <testcase name="{}" classname="{class}" time="{:.3}""#, attr(&case_name(&r.kill, traces)), r.seconds);
    if r.verdict == Verdict::Pass {
        return open + "/>\n";
    }
    let why = r.why.clone().unwrap_or_default();
    let mut body = format!("{why}\nreplay: {}\nrun directory: {}\n", r.replay, r.dir);
    if let Some(f) = finding_text(r) {
        body += &format!("\n{f}\n");
    }
    let message = format!("{}: {why}", r.verdict);
    format!(
        "{open}>\n      <failure message=\"{}\" type=\"{}\">{}</failure>\n    </testcase>\n",
        attr(&message),
        r.verdict,
        text(&body)
    )
}

/// One death of a rule: `rank=R@call=N` or `rank=R@time=S`.
enum Death<'a> {
    Call(&'a str, u64),
    Time(&'a str, f64),
}

fn parse_death(token: &str) -> Option<Death<'_>> {
    let (rank, trigger) = token.trim().strip_prefix("rank=")?.split_once('@')?;
    rank.parse::<u32>().ok()?;
    if let Some(c) = trigger.strip_prefix("call=") {
        return c.parse().ok().map(|c| Death::Call(rank, c));
    }
    trigger.strip_prefix("time=")?.parse().ok().map(|s| Death::Time(rank, s))
}

/// A rule in the user's terms: `rank 1 dies at call 10 (MPI_Send)`,
/// `rank 1 at call 10 (MPI_Send) + rank 3 at call 40 (MPI_Recv)`,
/// `rank 2 dies at 0.25 s`. The function is that call's in the failure-free
/// run; a call past the rank's last one has none. A token of another form is
/// shown as it is.
pub fn case_name(rule: &str, traces: &[Calls]) -> String {
    let tokens: Vec<&str> = rule.split(';').map(str::trim).filter(|t| !t.is_empty()).collect();
    let verb = if tokens.len() == 1 { " dies" } else { "" };
    let one = |t: &str| match parse_death(t) {
        Some(Death::Call(rank, call)) => {
            let f = rank.parse::<usize>().ok().and_then(|r| traces.get(r)).and_then(|c| c.function(call));
            format!("rank {rank}{verb} at call {call}{}", f.map(|f| format!(" ({f})")).unwrap_or_default())
        }
        // `{}` of an f64: 0.250000 -> 0.25, the shortest form that reads back the same.
        Some(Death::Time(rank, secs)) => format!("rank {rank}{verb} at {secs} s"),
        None => t.to_string(),
    };
    if tokens.is_empty() {
        return "no death".into();
    }
    tokens.iter().map(|t| one(t)).collect::<Vec<_>>().join(" + ")
}

/// The program the job runs, for `classname`: the first word after the launcher
/// (and `env`, its `VAR=value` words, options and numbers) that names a path, else
/// the first such word at all, else the launcher. `mpiexec -n 5 ./mw --kill 0` -> `mw`.
pub fn program_name(command: &[String]) -> String {
    let launcher = |w: &str| {
        let b = base(w);
        ["mpiexec", "mpirun", "orterun", "srun", "aprun", "jsrun"].iter().any(|l| b.starts_with(l)) || b == "env" || b == "timeout"
    };
    let plain = |w: &&String| !w.starts_with('-') && !w.contains('=') && w.parse::<f64>().is_err() && !launcher(w);
    let words = || command.iter().filter(plain);
    let pick = words().find(|w| w.contains('/')).or_else(|| words().next()).or(command.first());
    pick.map_or_else(|| "program".into(), |w| base(w).to_string())
}

fn base(w: &str) -> &str {
    w.rsplit('/').next().unwrap_or(w)
}

/// A character XML 1.0 allows (the rest, e.g. a program's stray escape codes in
/// a `why`, would make the whole file unreadable): U+FFFD instead.
fn xml_char(c: char) -> char {
    let ok = matches!(c, '\t' | '\n' | '\r') || (c >= ' ' && c != '\u{FFFE}' && c != '\u{FFFF}');
    if ok {
        c
    } else {
        '\u{FFFD}'
    }
}

/// Escaped for element text.
pub fn text(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars().map(xml_char) {
        match c {
            '&' => o += "&amp;",
            '<' => o += "&lt;",
            '>' => o += "&gt;",
            // A bare CR would be read back as LF.
            '\r' => o += "&#13;",
            c => o.push(c),
        }
    }
    o
}

/// Escaped for a double-quoted attribute value; tab, LF and CR as character
/// references, since a parser turns them into spaces otherwise.
pub fn attr(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars().map(xml_char) {
        match c {
            '&' => o += "&amp;",
            '<' => o += "&lt;",
            '>' => o += "&gt;",
            '"' => o += "&quot;",
            '\'' => o += "&apos;",
            '\t' => o += "&#9;",
            '\n' => o += "&#10;",
            '\r' => o += "&#13;",
            c => o.push(c),
        }
    }
    o
}

/// `YYYY-MM-DDTHH:MM:SS`, UTC, without a zone: the form Jenkins' schema for
/// `timestamp` takes.
pub fn timestamp(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()) as i64;
    let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_date(days);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}", rest / 3600, rest / 60 % 60, rest % 60)
}

/// The proleptic Gregorian date of a day count from 1970-01-01. Counts from
/// 0000-03-01 so a leap day ends its year, then splits into 400-year eras of
/// 146,097 days, years of the era, and months from March (153 days per 5 months).
fn civil_date(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468; // days from 0000-03-01 to 1970-01-01
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (era * 400 + yoe + i64::from(month <= 2), month, day)
}

/// This machine's name (the suite's `hostname`).
fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most buf.len() bytes into a buffer we own.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return "localhost".into();
    }
    let end = buf.iter().position(|b| *b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::parse_calls;

    fn traces() -> Vec<Calls> {
        vec![
            parse_calls("1 1 MPI_Init\n2 9 MPI_Send\n11 1 MPI_Finalize").unwrap(),
            parse_calls("1 1 MPI_Init\n2 8 MPI_Recv\n10 1 MPI_Send\n11 1 MPI_Finalize").unwrap(),
            parse_calls("1 1 MPI_Init\n2 1 MPI_Finalize").unwrap(),
            parse_calls("1 1 MPI_Init\n2 40 MPI_Recv\n42 1 MPI_Finalize").unwrap(),
        ]
    }

    #[test]
    fn names_in_the_users_terms() {
        let t = traces();
        assert_eq!(case_name("rank=1@call=10", &t), "rank 1 dies at call 10 (MPI_Send)");
        assert_eq!(case_name("rank=1@call=10;rank=3@call=40", &t), "rank 1 at call 10 (MPI_Send) + rank 3 at call 40 (MPI_Recv)");
        assert_eq!(case_name("rank=2@time=0.250000", &t), "rank 2 dies at 0.25 s");
        assert_eq!(case_name("rank=2@call=99", &t), "rank 2 dies at call 99", "past its last call: no function");
        assert_eq!(case_name("rank=7@call=3", &t), "rank 7 dies at call 3", "a rank the trace lacks");
        assert_eq!(case_name("rank=0@call=2;rank=2@time=1.500000;max=1", &t), "rank 0 at call 2 (MPI_Send) + rank 2 at 1.5 s + max=1");
        assert_eq!(case_name("", &t), "no death");
    }

    #[test]
    fn program_names() {
        let w = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
        assert_eq!(program_name(&w("mpiexec.openmpi -n 5 ./master_worker --kill 0")), "master_worker");
        assert_eq!(program_name(&w("env A=1 MPIFT_SPARES=4 mpiexec.mpich -n 8 /tmp/x/respawn_deaths")), "respawn_deaths");
        assert_eq!(program_name(&w("mpirun -np 4 hostname")), "hostname");
        assert_eq!(program_name(&w("./prog")), "prog");
        assert_eq!(program_name(&w("mpiexec")), "mpiexec");
        assert_eq!(program_name(&[]), "program");
    }

    #[test]
    fn escaping() {
        assert_eq!(text("a < b && c > d"), "a &lt; b &amp;&amp; c &gt; d");
        assert_eq!(text("line 1\nline 2\r"), "line 1\nline 2&#13;");
        assert_eq!(attr(r#"no line matches --expect `\(correct\)$` "x" 'y'"#), r"no line matches --expect `\(correct\)$` &quot;x&quot; &apos;y&apos;");
        assert_eq!(attr("a\tb\nc\rd<&>"), "a&#9;b&#10;c&#13;d&lt;&amp;&gt;");
        // Characters XML 1.0 cannot carry at all (an ANSI colour code, NUL).
        assert_eq!(text("\u{1b}[31mred\u{0}"), "\u{FFFD}[31mred\u{FFFD}");
        assert_eq!(attr("\u{FFFF}é"), "\u{FFFD}é");
    }

    #[test]
    fn timestamps() {
        let at = |s: u64| timestamp(UNIX_EPOCH + std::time::Duration::from_secs(s));
        assert_eq!(at(0), "1970-01-01T00:00:00");
        assert_eq!(at(951_782_400 + 3_661), "2000-02-29T01:01:01");
        assert_eq!(at(1_704_067_199), "2023-12-31T23:59:59");
        assert_eq!(at(4_107_542_400), "2100-03-01T00:00:00", "2100 is not a leap year");
    }

    fn rec(kill: &str, v: Verdict, why: Option<&str>) -> Record {
        Record {
            kill: kill.into(),
            seed: 1,
            verdict: v,
            seconds: 0.5,
            exit: "exit status 0".into(),
            exit_code: Some(0),
            signal: None,
            deaths: vec![],
            why: why.map(String::from),
            replay: results::replay(kill, 1, &["mpiexec".into(), "./p".into()]),
            dir: "out/runs/x".into(),
            hang: None,
        }
    }

    #[test]
    fn document() {
        let t = traces();
        let records = [rec("rank=1@call=10", Verdict::Pass, None), rec("rank=3@call=40", Verdict::Wrong, Some("no output line matches --expect `<ok>`"))];
        let cmd: Vec<String> = ["mpiexec", "-n", "4", "./a.out"].map(String::from).to_vec();
        let s = Suite { command: &cmd, seed: 1, timeout: 10.0, started: UNIX_EPOCH, traces: &t, records: &records };
        let x = render(&s, "node&1");
        assert!(x.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites "));
        assert!(x.contains(r#"tests="2" failures="1" errors="0" skipped="0" time="1.000" timestamp="1970-01-01T00:00:00" hostname="node&amp;1""#));
        assert!(x.contains(r#"<testcase name="rank 1 dies at call 10 (MPI_Send)" classname="a_out" time="0.500"/>"#));
        assert!(x.contains(r#"<failure message="WRONG: no output line matches --expect `&lt;ok&gt;`" type="WRONG">no output line matches --expect `&lt;ok&gt;`"#));
        assert!(x.contains("replay: MPIFT_KILL='rank=3@call=40' MPIFT_SEED=1 mpiexec ./p\nrun directory: out/runs/x\n</failure>"));
        assert_eq!(x.matches("<testcase ").count(), 2);
        assert!(x.ends_with("</testsuite>\n</testsuites>\n"));
    }
}
