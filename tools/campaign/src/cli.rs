//! The command line (clap): every option of docs/CAMPAIGN.md, with the parsers
//! that turn bad values into clap errors (exit status 2), never a panic.

use clap::Parser;
use std::path::PathBuf;

/// Runs an MPI program built with MPIFT once per kill point and sorts the runs
/// into PASS, HANG, CRASH and WRONG (docs/CAMPAIGN.md).
#[derive(Parser, Debug, Clone)]
#[command(
    name = "mpift-campaign",
    version,
    after_help = "Example: mpift-campaign --every 7 --expect 'sum = .* \\(correct\\)' -- mpiexec -n 5 ./master_worker --kill 0\n\
                  Exit status: 0 every run PASS, 1 a run was not PASS (or the campaign could not run), 2 usage error.\n\
                  The deaths that matter in a failing run: mpift-campaign minimize --help."
)]
pub struct Args {
    /// Output directory: runs.jsonl, summary.json, matrix.png, one scratch directory per run.
    #[arg(long, default_value = "campaign-out")]
    pub out: PathBuf,
    /// Start over: delete the output directory's previous results instead of resuming.
    #[arg(long)]
    pub fresh: bool,
    /// Runs at the same time (default: the number of cores).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub jobs: Option<u32>,
    /// MPIFT_SEED of every run, and the seed of every sampling choice.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// What survivors are told: MPIFT_SEMANTICS of every run, `default` or
    /// `adversarial[:choice,-choice...]` (MPIFT checks the choices at MPI_Init).
    /// One seed per campaign: run seeds 1, 2, 3 as three campaigns, each with its --seed and --out.
    #[arg(long, value_parser = parse_semantics)]
    pub semantics: Option<String>,
    /// The adversarial mode's range of late news: MPIFT_LATENCY of every run,
    /// `MIN:MAX` such as `1ms:1s` (MPIFT's default), each with a unit `us`, `ms`
    /// or `s`. In the adversarial mode the HANG timeout grows by 4 x MAX.
    #[arg(long, value_parser = parse_latency_max)]
    pub latency: Option<String>,
    /// Seconds before a run counts as HANG (default: max(10, 10 x the failure-free
    /// time)), plus 4 x the latency range's most in the adversarial mode.
    #[arg(long, value_parser = positive_secs)]
    pub timeout: Option<f64>,
    /// Only these world ranks die: a list of ranks and ranges, e.g. `0,2-3`.
    #[arg(long, value_parser = parse_rank_list)]
    pub ranks: Option<RankList>,
    /// Only calls of these MPI functions (per the failure-free trace), e.g. `MPI_Sendrecv,MPI_Allreduce`.
    #[arg(long, value_delimiter = ',')]
    pub calls_of: Vec<String>,
    /// Every N-th call: calls N, 2N, ... (with --calls-of: the N-th, 2N-th, ... call of those functions).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub every: Option<u64>,
    /// Only each rank's first N calls: calls 2..=N (with --calls-of: the first N calls of those functions); --every thins these.
    #[arg(long, value_parser = clap::value_parser!(u64).range(2..))]
    pub first: Option<u64>,
    /// K single-death points drawn at random (with --seed) from the candidates.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub sample: Option<u64>,
    /// Also K sampled two-death points: two different ranks, each at one of its candidate calls.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub pairs: Option<u64>,
    /// Also K deaths at sampled times `rank=R@time=S`, S in (0, failure-free time).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub time: Option<u64>,
    /// No single-death call points (run only --pairs and --time points).
    #[arg(long)]
    pub no_single: bool,
    /// A check run through `sh -c` after each run; non-zero exit = WRONG. It sees
    /// CAMPAIGN_OUT (the run's stdout+stderr), CAMPAIGN_REPORT (the MPIFT report) and CAMPAIGN_KILL.
    #[arg(long)]
    pub check: Option<String>,
    /// The output must contain a line matching this regular expression.
    #[arg(long, value_parser = parse_regex)]
    pub expect: Option<regex::Regex>,
    /// At least (ranks - deaths) output lines must match this regular expression.
    #[arg(long, value_parser = parse_regex)]
    pub expect_survivors: Option<regex::Regex>,
    /// Also write a JUnit XML report to FILE, one test case per run (HANG, CRASH,
    /// WRONG: a <failure>), for CI test reports (GitLab, Jenkins).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Seconds a failure-free run may take (the first run).
    #[arg(long, default_value_t = 600.0, value_parser = positive_secs)]
    pub baseline_timeout: f64,
    /// The job to run, after `--`: e.g. `-- mpiexec -n 4 ./prog args...`.
    #[arg(last = true, required = true, num_args = 1.., value_name = "COMMAND")]
    pub command: Vec<String>,
}

pub fn positive_secs(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!("`{s}` is not a positive number of seconds")),
    }
}

/// The most of a latency range `MIN:MAX` (or one value), in seconds; checks the
/// range as MPIFT does at MPI_Init (a unit `us`, `ms` or `s`, bare seconds; MIN at most MAX).
pub fn latency_max_secs(s: &str) -> Result<f64, String> {
    let one = |t: &str| -> Result<f64, String> {
        let t = t.trim();
        let (num, scale) = match (t.strip_suffix("us"), t.strip_suffix("ms"), t.strip_suffix('s')) {
            (Some(n), _, _) => (n, 1e-6),
            (_, Some(n), _) => (n, 1e-3),
            (_, _, Some(n)) => (n, 1.0),
            _ => (t, 1.0),
        };
        match num.trim().parse::<f64>() {
            Ok(v) if v.is_finite() && v >= 0.0 && v * scale <= 3600.0 => Ok(v * scale),
            _ => Err(format!("`{t}` is not a time such as `5ms`, `0.5s` or `200us`")),
        }
    };
    let (lo, hi) = match s.split_once(':') {
        Some((a, b)) => (one(a)?, one(b)?),
        None => (one(s)?, one(s)?),
    };
    if lo > hi {
        return Err(format!("`{}`: the least delay is above the most", s.trim()));
    }
    Ok(hi)
}

fn parse_latency_max(s: &str) -> Result<String, String> {
    latency_max_secs(s).map(|_| s.trim().to_string())
}

/// Seconds added to the HANG timeout: in the adversarial mode a death's news
/// and a revoke's may each be held for the latency range's most, and a run may
/// have two deaths and a revoke after each, so 4 x the most (MPIFT's default
/// range, 1ms:1s, when `latency` is None); nothing in the default mode.
pub fn late_allowance(semantics: Option<&str>, latency: Option<&str>) -> f64 {
    match semantics.map(str::trim) {
        Some(m) if m.starts_with("adversarial") => 4.0 * latency.and_then(|l| latency_max_secs(l).ok()).unwrap_or(1.0),
        _ => 0.0,
    }
}

/// `default`, `adversarial` or `adversarial:LIST` (the list is MPIFT's to check).
pub fn parse_semantics(s: &str) -> Result<String, String> {
    let t = s.trim();
    let mode = t.split(':').next().unwrap_or("");
    match (mode, t.contains(':')) {
        ("default", false) | ("adversarial", _) => Ok(t.to_string()),
        _ => Err(format!("`{s}` is not a semantics mode (expected `default` or `adversarial[:choice,...]`)")),
    }
}

pub fn parse_regex(s: &str) -> Result<regex::Regex, String> {
    regex::Regex::new(s).map_err(|e| format!("not a valid regular expression: {e}"))
}

/// The ranks of `--ranks` (a type of its own: clap reads `Option<Vec<_>>` as a
/// repeated option).
#[derive(Debug, Clone, PartialEq)]
pub struct RankList(pub Vec<u32>);

fn parse_rank_list(s: &str) -> Result<RankList, String> {
    parse_ranges(s).map(RankList)
}

/// `0,2-3` -> [0, 2, 3] (sorted, without duplicates).
pub fn parse_ranges(s: &str) -> Result<Vec<u32>, String> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim) {
        let num = |t: &str| t.trim().parse::<u32>().map_err(|_| format!("bad rank `{t}` in `{s}` (expected e.g. 0,2-3)"));
        match part.split_once('-') {
            _ if part.is_empty() => return Err(format!("empty item in `{s}` (expected e.g. 0,2-3)")),
            Some((a, b)) => {
                let (a, b) = (num(a)?, num(b)?);
                if a > b {
                    return Err(format!("range `{part}` runs backwards"));
                }
                if b - a > 1_000_000 {
                    return Err(format!("range `{part}` is too large"));
                }
                out.extend(a..=b);
            }
            None => out.push(num(part)?),
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_ranges_and_the_hang_allowance() {
        assert_eq!(latency_max_secs("1ms:2s"), Ok(2.0));
        assert_eq!(latency_max_secs("250ms"), Ok(0.25));
        assert!(latency_max_secs("2s:1s").unwrap_err().contains("`2s:1s`"));
        assert!(latency_max_secs("1ms:soon").is_err());
        assert_eq!(late_allowance(None, Some("1ms:3s")), 0.0);
        assert_eq!(late_allowance(Some("default"), None), 0.0);
        assert_eq!(late_allowance(Some("adversarial"), None), 4.0);
        assert_eq!(late_allowance(Some("adversarial:latency"), Some("1ms:3s")), 12.0);
        let parse = |v: &[&str]| Args::try_parse_from(std::iter::once("mpift-campaign").chain(v.iter().copied()));
        assert!(parse(&["--latency", "3s:1s", "--", "mpiexec"]).is_err());
        assert_eq!(parse(&["--latency", "1ms:3s", "--", "mpiexec"]).unwrap().latency.as_deref(), Some("1ms:3s"));
    }

    #[test]
    fn semantics_modes() {
        assert_eq!(parse_semantics("adversarial:-collectives").unwrap(), "adversarial:-collectives");
        assert_eq!(parse_semantics(" default ").unwrap(), "default");
        assert!(parse_semantics("friendly").unwrap_err().contains("`friendly`"));
        assert!(parse_semantics("default:x").is_err());
    }

    #[test]
    fn ranges() {
        assert_eq!(parse_ranges("0,2-3").unwrap(), vec![0, 2, 3]);
        assert_eq!(parse_ranges(" 4 , 1-2,2").unwrap(), vec![1, 2, 4]);
        assert_eq!(parse_ranges("7").unwrap(), vec![7]);
        assert!(parse_ranges("3-1").unwrap_err().contains("backwards"));
        assert!(parse_ranges("a").unwrap_err().contains("bad rank `a`"));
        assert!(parse_ranges("1,,2").unwrap_err().contains("empty"));
        assert!(parse_ranges("-2").is_err());
        assert!(parse_ranges("").is_err());
    }

    #[test]
    fn command_line_errors_are_clap_errors() {
        let parse = |v: &[&str]| Args::try_parse_from(std::iter::once("mpift-campaign").chain(v.iter().copied()));
        assert!(parse(&["--every", "3"]).is_err(), "no command");
        assert!(parse(&["--sample", "0", "--", "mpiexec"]).is_err());
        assert!(parse(&["--ranks", "2-1", "--", "mpiexec"]).is_err());
        assert!(parse(&["--expect", "(", "--", "mpiexec"]).is_err());
        assert!(parse(&["--timeout", "-1", "--", "mpiexec"]).is_err());
        let a = parse(&["--calls-of", "MPI_Send,MPI_Recv", "--", "mpiexec", "-n", "4", "./p", "--x"]).unwrap();
        assert_eq!(a.calls_of, vec!["MPI_Send", "MPI_Recv"]);
        assert_eq!(a.command, vec!["mpiexec", "-n", "4", "./p", "--x"]);
        assert_eq!(a.seed, 1);
        let a = parse(&["--ranks", "0,2-3", "--", "mpiexec"]).unwrap();
        assert_eq!(a.ranks, Some(RankList(vec![0, 2, 3])));
        assert_eq!((a.every, a.first), (None, None));
        let a = parse(&["--first", "100", "--every", "3", "--", "mpiexec"]).unwrap();
        assert_eq!((a.every, a.first), (Some(3), Some(100)));
        assert!(parse(&["--first", "1", "--", "mpiexec"]).is_err(), "call 1 (MPI_Init) is never a kill point");
        assert!(parse(&["--first", "x", "--", "mpiexec"]).is_err());
    }
}
