//! Reading what `MPIFT_TRACE=DIR` leaves (src/inject/trace.rs in the library):
//! `calls.<rank>` (run-length encoded calls) and `status.<rank>` (one live line).

use std::path::Path;

/// One rank's calls: runs `(first call, count, function)`, and its death if any.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Calls {
    pub runs: Vec<(u64, u64, String)>,
    pub dead: Option<(u64, String)>,
    /// Seconds from `MPI_Init` to `MPI_Finalize` (a live rank's `end` line).
    pub end: Option<f64>,
}

impl Calls {
    /// The number of calls (the last call's number).
    pub fn count(&self) -> u64 {
        self.runs.last().map_or(0, |(first, n, _)| first + n - 1)
    }

    /// The function of call `call`, if traced.
    pub fn function(&self, call: u64) -> Option<&str> {
        let i = self.runs.partition_point(|(first, _, _)| *first <= call);
        let (first, n, name) = self.runs.get(i.checked_sub(1)?)?;
        (call < first + n).then_some(name.as_str())
    }
}

/// Parses a `calls.<rank>` text; an error names the bad line.
pub fn parse_calls(text: &str) -> Result<Calls, String> {
    let mut c = Calls::default();
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let bad = || format!("line {}: `{line}` is not `<first call> <count> <function>`, `dead <call> <function>` or `end <seconds> -`", i + 1);
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() != 3 {
            return Err(bad());
        }
        if f[0] == "end" {
            c.end = Some(f[1].parse().map_err(|_| bad())?);
            continue;
        }
        if f[0] == "dead" {
            c.dead = Some((f[1].parse().map_err(|_| bad())?, f[2].to_string()));
            continue;
        }
        let (first, n): (u64, u64) = (f[0].parse().map_err(|_| bad())?, f[1].parse().map_err(|_| bad())?);
        if n == 0 || c.count() >= first && !c.runs.is_empty() {
            return Err(format!("{}: runs must be non-empty and in increasing call order", bad()));
        }
        c.runs.push((first, n, f[2].to_string()));
    }
    Ok(c)
}

/// Every `calls.<rank>` of a trace directory, indexed by rank (missing ranks:
/// empty), for ranks 0..np.
pub fn read_dir_calls(dir: &Path, np: usize) -> Result<Vec<Calls>, String> {
    (0..np)
        .map(|r| {
            let p = dir.join(format!("calls.{r}"));
            let text = std::fs::read_to_string(&p).map_err(|e| format!("cannot read {}: {e}", p.display()))?;
            parse_calls(&text).map_err(|e| format!("{}: {e}", p.display()))
        })
        .collect()
}

/// The number of ranks that left a calls or status file in `dir`.
pub fn ranks_in(dir: &Path) -> usize {
    let Ok(rd) = std::fs::read_dir(dir) else { return 0 };
    rd.filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let (_, r) = name.split_once('.')?;
            r.parse::<usize>().ok().map(|r| r + 1)
        })
        .max()
        .unwrap_or(0)
}

/// One rank's status line: where it is (`pid P call N F in|out|dead-serving|...`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Status {
    pub rank: usize,
    pub pid: Option<i32>,
    pub line: String,
}

/// Parses a status file's text (a padded line).
pub fn parse_status(rank: usize, text: &str) -> Status {
    let line = text.trim().to_string();
    let pid = line.strip_prefix("pid ").and_then(|r| r.split_whitespace().next()).and_then(|p| p.parse().ok());
    Status { rank, pid, line }
}

/// The status of every rank that has a status file in `dir`.
pub fn read_status(dir: &Path) -> Vec<Status> {
    (0..ranks_in(dir))
        .filter_map(|r| std::fs::read(dir.join(format!("status.{r}"))).ok().map(|b| parse_status(r, &String::from_utf8_lossy(&b))))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_round_trip() {
        let c = parse_calls("1 1 MPI_Init\n2 3 MPI_Send\n5 1 MPI_Recv\n\n6 2 MPI_Send\n").unwrap();
        assert_eq!(c.count(), 7);
        assert_eq!(c.function(1), Some("MPI_Init"));
        assert_eq!(c.function(4), Some("MPI_Send"));
        assert_eq!(c.function(5), Some("MPI_Recv"));
        assert_eq!(c.function(7), Some("MPI_Send"));
        assert_eq!(c.function(8), None);
        assert_eq!(c.function(0), None);
        assert_eq!(c.dead, None);
        let e = parse_calls("1 1 MPI_Init\n2 3 MPI_Barrier\nend 0.250000 -\n").unwrap();
        assert_eq!((e.count(), e.end), (4, Some(0.25)));
        let d = parse_calls("1 1 MPI_Init\n2 1 MPI_Barrier\ndead 2 MPI_Barrier\n").unwrap();
        assert_eq!(d.dead, Some((2, "MPI_Barrier".into())));
    }

    #[test]
    fn bad_calls_are_errors() {
        assert!(parse_calls("1 MPI_Init").unwrap_err().contains("line 1"));
        assert!(parse_calls("x 1 MPI_Init").is_err());
        assert!(parse_calls("1 0 MPI_Init").is_err());
        assert!(parse_calls("1 3 MPI_Init\n2 1 MPI_Send").is_err(), "overlapping runs");
        assert_eq!(parse_calls("").unwrap().count(), 0);
    }

    #[test]
    fn status_lines() {
        let s = parse_status(3, "pid 4242 call 17 MPI_Allreduce in          \n");
        assert_eq!((s.rank, s.pid, s.line.as_str()), (3, Some(4242), "pid 4242 call 17 MPI_Allreduce in"));
        assert_eq!(parse_status(0, "garbage").pid, None);
    }
}
