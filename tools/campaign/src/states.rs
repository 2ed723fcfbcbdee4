//! Reading the ranks' state dumps (`state.<rank>` and `comms.<rank>` of an
//! `MPIFT_TRACE` directory; src/inject/dump.rs in the library) into
//! [`RankState`]s, the waits-for forensics' input.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// One request a rank waits for (`MPI_Wait*`/`MPI_Test*`).
#[derive(Debug, Clone, PartialEq)]
pub enum Req {
    /// A receive from this world rank (None: any source) on the communicator.
    Recv(Option<u32>, u64),
    /// A send to this world rank on the communicator.
    Send(Option<u32>, u64),
    /// A non-blocking collective on the communicator.
    Coll(u64),
    /// A non-blocking agreement or shrink on the communicator.
    Agree(u64),
}

/// A communicator as one rank's dump shows it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Comm {
    pub id: u64,
    pub members: Vec<u32>,
    pub revoked: bool,
    pub failed: Vec<u32>,
    pub acked: Vec<u32>,
}

/// What one process was doing.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RankState {
    pub rank: u32,
    pub pid: Option<i32>,
    pub call: u64,
    pub function: String,
    /// `in`, `out`, `dead-serving`, `finalized`, `dead-finalized`; `gone` when
    /// the process no longer runs.
    pub state: String,
    pub comm: Option<Comm>,
    /// A peer argument: the rank in the call's communicator, [`ANY`] for any
    /// source (the dump's `any`); `null` (MPI_PROC_NULL) reads as None.
    pub source: Option<i32>,
    pub dest: Option<i32>,
    pub root: Option<i32>,
    pub tag: Option<i32>,
    pub requests: Vec<Req>,
    /// A dead rank's status words (`waits owes comm 1a #3 MPI_Barrier`, ...).
    pub dead: String,
    /// Communicators of the wildcard receives waited for that are PENDING (a
    /// failure there unacknowledged: the dump's `recv any comm 2 pending`).
    pub pending: Vec<u64>,
    /// A live rank that went on making MPI calls between two looks
    /// ([`mark_spinning`]): its call numbers at the first and the second.
    pub spinning: Option<(u64, u64)>,
    /// The communicators this rank ever had (its `comms.R` file; empty when
    /// there is none): a constructor that failed here made none.
    pub made: BTreeSet<u64>,
}

/// Compares two looks at the same ranks, a moment apart: a live rank whose
/// call number moved does not block, it spins (a loop around a call that keeps
/// failing); the second look's PENDING wildcard receives are added to the
/// first's (a spinning rank may be between its waits at either look).
pub fn mark_spinning(first: &mut [RankState], second: &[RankState]) {
    for s in first.iter_mut().filter(|s| !s.is_dead() && !s.finished()) {
        let Some(t) = second.iter().find(|t| t.rank == s.rank) else { continue };
        if t.call != s.call && !t.is_dead() && !t.finished() {
            s.spinning = Some((s.call, t.call));
        }
        for id in &t.pending {
            if !s.pending.contains(id) {
                s.pending.push(*id);
            }
        }
    }
}

impl RankState {
    pub fn is_dead(&self) -> bool {
        self.state.starts_with("dead")
    }
    pub fn finished(&self) -> bool {
        self.state == "finalized"
    }
    /// A live rank inside a call.
    pub fn inside(&self) -> bool {
        self.state == "in"
    }
}

/// `source: any` (MPI_ANY_SOURCE, whatever the MPI's value of it).
pub const ANY: i32 = -1;

fn peer(v: &str) -> Option<i32> {
    match v.trim() {
        "any" => Some(ANY),
        w => w.parse().ok().filter(|p: &i32| *p >= 0),
    }
}

fn num<T: std::str::FromStr>(v: &str) -> Option<T> {
    v.trim().parse().ok()
}

fn ranks(v: &str) -> Vec<u32> {
    v.split_whitespace().filter_map(|w| w.parse().ok()).collect()
}

fn hex(v: &str) -> Option<u64> {
    u64::from_str_radix(v.trim(), 16).ok()
}

/// `recv 3 comm 1a` (world rank 3; `any`), `send 0 comm 2`, `coll comm 2`, `agree comm 2`.
pub fn parse_request(text: &str) -> Option<Req> {
    let w: Vec<&str> = text.split_whitespace().collect();
    match w.as_slice() {
        ["recv", p, "comm", c] | ["recv", p, "comm", c, "pending"] => Some(Req::Recv(p.parse().ok(), hex(c)?)),
        ["send", p, "comm", c] => Some(Req::Send(p.parse().ok(), hex(c)?)),
        ["coll", "comm", c] => Some(Req::Coll(hex(c)?)),
        ["agree", "comm", c] => Some(Req::Agree(hex(c)?)),
        _ => None,
    }
}

/// Parses a `state.<rank>` text (`key: value` lines).
pub fn parse_state(text: &str) -> Option<RankState> {
    let kv: BTreeMap<&str, &str> = text
        .lines()
        .filter_map(|l| l.split_once(':').map(|(k, v)| (k.trim(), v.trim())))
        .collect();
    let get = |k: &str| kv.get(k).copied().unwrap_or("");
    let mut s = RankState {
        rank: num(get("rank"))?,
        pid: num(get("pid")),
        call: num(get("call")).unwrap_or(0),
        function: get("function").to_string(),
        state: get("state").to_string(),
        source: peer(get("source")),
        dest: peer(get("dest")),
        root: num(get("root")),
        tag: num(get("tag")),
        requests: get("requests").split(';').filter_map(parse_request).collect(),
        dead: get("dead").to_string(),
        comm: None,
        pending: get("requests")
            .split(';')
            .filter_map(|r| match r.split_whitespace().collect::<Vec<_>>().as_slice() {
                ["recv", "any", "comm", c, "pending"] => hex(c),
                _ => None,
            })
            .collect(),
        spinning: None,
        made: BTreeSet::new(),
    };
    // The dump's sticky `pending:` line (a wildcard receive told PENDING at an
    // earlier call, not acknowledged since).
    if let Some(id) = hex(get("pending")).filter(|id| !s.pending.contains(id)) {
        s.pending.push(id);
    }
    if let Some(id) = hex(get("comm")) {
        s.comm = Some(Comm { id, members: ranks(get("members")), revoked: get("revoked") == "yes", failed: ranks(get("failed")), acked: ranks(get("acked")) });
    }
    Some(s)
}

/// Communicator names: id -> name, from the lowest rank that named it.
pub type Names = BTreeMap<u64, String>;

/// Parses `comms.<rank>` lines `<id hex> <name>` into `names` (first wins).
pub fn parse_comms(text: &str, names: &mut Names) {
    for line in text.lines() {
        if let Some((id, name)) = line.split_once(' ') {
            if let Some(id) = hex(id) {
                names.entry(id).or_insert_with(|| name.trim().to_string());
            }
        }
    }
}

/// Every rank's state and the communicators' names, from a trace directory;
/// a rank whose process is gone (its pid no longer runs) is marked `gone`
/// unless it finished.
pub fn read(dir: &Path, np: usize) -> (Vec<RankState>, Names) {
    let mut names = Names::new();
    let mut out = Vec::new();
    for r in 0..np {
        let comms = std::fs::read_to_string(dir.join(format!("comms.{r}"))).unwrap_or_default();
        parse_comms(&comms, &mut names);
        let Some(mut s) = std::fs::read(dir.join(format!("state.{r}"))).ok().and_then(|b| parse_state(&String::from_utf8_lossy(&b))) else {
            continue;
        };
        s.made = comms.lines().filter_map(|l| hex(l.split(' ').next()?)).collect();
        let alive = s.pid.is_some_and(|p| Path::new(&format!("/proc/{p}")).exists());
        if !alive && !s.finished() && !s.is_dead() {
            s.state = "gone".into();
        }
        out.push(s);
    }
    (out, names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_file_parses() {
        let t = "rank: 2\npid: 77\ncall: 17\nfunction: MPI_Recv\nstate: in\nsince: 0.1\ncomm: 1a\ncomm_name: MPI_COMM_WORLD\ncomm_rank: 2\nmembers: 0 1 2 3\nrevoked: no\nfailed: 1\nacked: \nsource: 3\ndest: \nroot: \ntag: 5\nrequests: recv 3 comm 1a; recv any comm 1a; coll comm 2; recv any comm 3 pending\ndead: \npending: 5\n      \n";
        let s = parse_state(t).unwrap();
        assert_eq!((s.rank, s.pid, s.call, s.function.as_str(), s.state.as_str()), (2, Some(77), 17, "MPI_Recv", "in"));
        let c = s.comm.unwrap();
        assert_eq!((c.id, c.members, c.revoked, c.failed, c.acked), (0x1a, vec![0, 1, 2, 3], false, vec![1], vec![]));
        assert_eq!((s.source, s.dest, s.tag), (Some(3), None, Some(5)));
        let any = parse_state("rank: 0\nsource: any\ndest: null\n").unwrap();
        assert_eq!((any.source, any.dest), (Some(ANY), None));
        assert_eq!(s.requests, vec![Req::Recv(Some(3), 0x1a), Req::Recv(None, 0x1a), Req::Coll(2), Req::Recv(None, 3)]);
        assert_eq!(s.pending, vec![3, 5]);
        assert!(parse_state("garbage").is_none());
    }

    #[test]
    fn names_come_from_the_first_rank_that_gives_one() {
        let mut n = Names::new();
        parse_comms("2 MPI_COMM_WORLD\nab the communicator from MPI_Comm_split at call 3\n", &mut n);
        parse_comms("ab the communicator from MPI_Comm_split at call 9\n", &mut n);
        assert_eq!(n[&0xab], "the communicator from MPI_Comm_split at call 3");
        assert_eq!(n[&2], "MPI_COMM_WORLD");
    }
}
