//! Waits-for forensics of a hung run (docs/CAMPAIGN.md, "Why a run hangs"):
//! the ranks' states ([`crate::states`]) joined into a graph whose edges say
//! which rank waits for which, in which call, on which communicator; then one
//! paragraph in the program's terms and a pattern name, both from the graph
//! only (never from the program's name or output).
//!
//! A live rank inside a call waits for:
//! - a receive or probe: the rank it receives from (any source: every other
//!   member);
//! - a send: the rank it sends to;
//! - a wait or test: the peers of its requests, or the members of their
//!   collectives;
//! - any other call on a communicator (collectives, agreement, shrink,
//!   constructors): every member that is not in the same function on the same
//!   communicator.
//!
//! The hang is MPIFT's own when a live rank waits for a dead rank whose status
//! says it owes or is inside a join on that communicator, or when the only
//! ranks a live rank waits for are dead: under ULFM a call that involves a dead
//! rank returns (an error, or a result), so it never waits for the dead alone.

use crate::states::{Names, RankState, Req};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// One "A waits for B" edge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Edge {
    pub from: u32,
    pub to: u32,
    /// The function rank `from` is in.
    pub function: String,
    /// `from` (a receive), `to` (a send), or `member` (a collective).
    pub how: String,
    pub comm: String,
}

/// What the forensics found (a HANG record's `finding`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// One paragraph in the program's terms.
    pub paragraph: String,
    /// `mpift-owes-join`, `waits-for-dead`, `peer-in-recovery`, `skipped-collective`,
    /// `waits-for-finished`, `cycle`, `unknown`.
    pub pattern: String,
    /// The hang is MPIFT's, not the program's.
    pub mpift: bool,
    pub edges: Vec<Edge>,
}

/// The ULFM calls a survivor makes to recover.
fn recovery(f: &str) -> bool {
    matches!(f, "MPIX_Comm_agree" | "MPIX_Comm_shrink" | "MPIX_Comm_iagree" | "MPIX_Comm_ishrink" | "MPI_Comm_agree" | "MPI_Comm_shrink")
}

fn receives(f: &str) -> bool {
    f.contains("recv") || f.contains("Recv") || f.contains("robe")
}

fn sends(f: &str) -> bool {
    f.contains("send") || f.contains("Send")
}

fn waits(f: &str) -> bool {
    f.starts_with("MPI_Wait") || (f.starts_with("MPI_Test") && f != "MPI_Test_cancelled")
}

fn name(names: &Names, id: u64) -> String {
    names.get(&id).cloned().unwrap_or_else(|| format!("communicator {id:x}"))
}

/// World rank of rank `p` of `members` (None: out of range).
fn world(members: &[u32], p: i32) -> Option<u32> {
    usize::try_from(p).ok().and_then(|p| members.get(p).copied())
}

/// The members of communicator `id` that has `rank` among them, as some
/// rank's dump shows them (the groups of one `MPI_Comm_split` share an id).
fn members_of(states: &[RankState], id: u64, rank: u32) -> Vec<u32> {
    let c = states.iter().filter_map(|s| s.comm.as_ref()).find(|c| c.id == id && c.members.contains(&rank));
    c.map(|c| c.members.clone()).unwrap_or_default()
}

/// Whether rank `t` is in function `f` on communicator `id`.
fn in_same(t: &RankState, f: &str, id: u64) -> bool {
    t.inside() && t.function == f && t.comm.as_ref().is_some_and(|c| c.id == id)
}

/// The edges of one live rank inside a call.
pub fn edges_of(s: &RankState, states: &[RankState], names: &Names) -> Vec<Edge> {
    let mut out = Vec::new();
    let edge = |to: u32, how: &str, id: u64| Edge { from: s.rank, to, function: s.function.clone(), how: how.into(), comm: name(names, id) };
    let Some(c) = s.comm.as_ref() else {
        for r in &s.requests {
            match r {
                Req::Recv(p, id) | Req::Send(p, id) => {
                    let how = if matches!(r, Req::Recv(..)) { "from" } else { "to" };
                    let targets: Vec<u32> = match p {
                        Some(w) => vec![*w],
                        None => members_of(states, *id, s.rank).into_iter().filter(|w| *w != s.rank).collect(),
                    };
                    out.extend(targets.into_iter().map(|t| edge(t, how, *id)));
                }
                Req::Coll(id) | Req::Agree(id) => {
                    let m = members_of(states, *id, s.rank);
                    out.extend(m.into_iter().filter(|w| *w != s.rank).map(|t| edge(t, "member", *id)));
                }
            }
        }
        return out;
    };
    let p2p = |p: Option<i32>, how: &str, out: &mut Vec<Edge>| match p {
        Some(p) if p < 0 => out.extend(c.members.iter().copied().filter(|w| *w != s.rank).map(|t| edge(t, how, c.id))),
        Some(p) => out.extend(world(&c.members, p).map(|t| edge(t, how, c.id))),
        None => {}
    };
    if s.source.is_some() || s.dest.is_some() {
        if receives(&s.function) {
            p2p(s.source, "from", &mut out);
        }
        if sends(&s.function) {
            p2p(s.dest, "to", &mut out);
        }
        return out;
    }
    if waits(&s.function) {
        return out;
    }
    for t in states.iter().filter(|t| t.rank != s.rank && c.members.contains(&t.rank)) {
        if !in_same(t, &s.function, c.id) {
            out.push(edge(t.rank, "member", c.id));
        }
    }
    out
}

/// What rank `t` is doing, as a clause: `rank 3 is in MPIX_Comm_agree on
/// MPI_COMM_WORLD`, `rank 1 is dead`, `rank 0 has finished`.
pub fn clause(t: &RankState, names: &Names) -> String {
    if t.is_dead() {
        return format!("rank {} is dead", t.rank);
    }
    match t.state.as_str() {
        "finalized" => format!("rank {} has finished", t.rank),
        "gone" => format!("rank {} has exited", t.rank),
        "out" => format!("rank {} is between calls (after {})", t.rank, t.function),
        _ => match (&t.comm, t.requests.first()) {
            (Some(c), _) => format!("rank {} is in {} on {}", t.rank, t.function, name(names, c.id)),
            (None, Some(r)) => format!("rank {} is in {} ({})", t.rank, t.function, request_words(r, names)),
            (None, None) => format!("rank {} is in {}", t.rank, t.function),
        },
    }
}

/// A request in words: `a receive from rank 1 on MPI_COMM_WORLD`.
fn request_words(r: &Req, names: &Names) -> String {
    let peer = |p: &Option<u32>| p.map_or_else(|| "any rank".to_string(), |p| format!("rank {p}"));
    match r {
        Req::Recv(p, id) => format!("a receive from {} on {}", peer(p), name(names, *id)),
        Req::Send(p, id) => format!("a send to {} on {}", peer(p), name(names, *id)),
        Req::Coll(id) => format!("a collective on {}", name(names, *id)),
        Req::Agree(id) => format!("an agreement on {}", name(names, *id)),
    }
}

/// The communicator id a dead rank's status names (`owes comm 1a #3`, `blocks F comm 1a #3`, ...).
fn dead_comm(t: &RankState) -> Option<u64> {
    let w: Vec<&str> = t.dead.split_whitespace().collect();
    let i = w.iter().position(|x| *x == "comm")?;
    u64::from_str_radix(w.get(i + 1)?, 16).ok()
}

/// The wait clause of a rank: `rank 2 waits in MPI_Recv from rank 3 on MPI_COMM_WORLD`.
fn wait_clause(s: &RankState, es: &[Edge]) -> String {
    let Some(e) = es.first() else { return format!("rank {} waits in {}", s.rank, s.function) };
    match e.how.as_str() {
        "from" | "to" if es.iter().all(|x| x.to == e.to) => format!("rank {} waits in {} {} rank {} on {}", s.rank, s.function, e.how, e.to, e.comm),
        "from" => format!("rank {} waits in {} from any rank on {}", s.rank, s.function, e.comm),
        _ => format!("rank {} waits in {} on {}", s.rank, s.function, e.comm),
    }
}

/// Finds the cycle through `start` in the edges, if any (ranks in order).
fn cycle(edges: &[Edge], start: u32) -> Option<Vec<u32>> {
    let mut path = vec![start];
    let mut seen = BTreeSet::new();
    fn dfs(edges: &[Edge], start: u32, path: &mut Vec<u32>, seen: &mut BTreeSet<u32>) -> bool {
        let at = *path.last().unwrap_or(&start);
        for e in edges.iter().filter(|e| e.from == at) {
            if e.to == start && path.len() > 1 {
                return true;
            }
            if seen.insert(e.to) {
                path.push(e.to);
                if dfs(edges, start, path, seen) {
                    return true;
                }
                path.pop();
            }
        }
        false
    }
    dfs(edges, start, &mut path, &mut seen).then_some(path)
}

/// A dead rank `t` blocked in its part of a collective (`blocks F comm X #s`)
/// on the communicator of `s`'s wait: that part completes only when every live
/// member has entered the collective, so live members of that communicator
/// inside other calls hold it (a collective skipped, or left on an error, by the
/// program: not MPIFT's hang). Returns the clause and the pattern naming them.
fn join_held(s: &RankState, t: &RankState, states: &[RankState], names: &Names) -> Option<(String, Option<(&'static str, String)>)> {
    let w: Vec<&str> = t.dead.split_whitespace().collect();
    let (Some(&"blocks"), Some(f)) = (w.first(), w.get(1)) else { return None };
    let c = s.comm.as_ref().filter(|c| Some(c.id) == dead_comm(t))?;
    let others: Vec<&RankState> =
        states.iter().filter(|m| c.members.contains(&m.rank) && !m.is_dead() && m.inside() && m.function != *f).collect();
    if others.is_empty() {
        return None;
    }
    let list: Vec<String> = others.iter().map(|m| format!("rank {} ({})", m.rank, m.function)).collect();
    let comm = name(names, c.id);
    let clause = format!(
        " and is blocked in its part of {f} there, which ends only when every live member has entered it; live members in other calls: {}",
        list.join(", ")
    );
    let why = format!(
        "The dead rank {} joined {f} on {comm}, which a live member skipped or left on an error ({}): the hang is the program's.",
        t.rank,
        list.join(", ")
    );
    Some((clause, Some(("skipped-collective", why))))
}

/// The waits-for analysis of a hung run.
pub fn analyze(states: &[RankState], names: &Names) -> Option<Finding> {
    let blocked: Vec<&RankState> = states.iter().filter(|s| s.inside() || s.spinning.is_some()).collect();
    if blocked.is_empty() {
        return None;
    }
    let by_rank = |r: u32| states.iter().find(|s| s.rank == r);
    let mut edges = Vec::new();
    let mut sentences = Vec::new();
    let mut pattern: Option<(&str, String)> = None;
    let mut mpift = false;
    for s in &blocked {
        let es = edges_of(s, states, names);
        let targets: BTreeSet<u32> = es.iter().map(|e| e.to).collect();
        let mut parts = Vec::new();
        let (mut live_missing, mut dead_owing) = (0, Vec::new());
        for t in targets.iter().filter_map(|r| by_rank(*r)) {
            let mut c = clause(t, names);
            if t.is_dead() {
                let comm = es.iter().find(|e| e.to == t.rank).map(|e| e.comm.clone()).unwrap_or_default();
                if let Some((held, found)) = join_held(s, t, states, names) {
                    c += &held;
                    if rank_of(&found) > rank_of(&pattern) {
                        pattern = found;
                    }
                } else if dead_comm(t).is_some_and(|id| name(names, id) == comm) {
                    c += &format!(" and still owes its part there ({})", t.dead);
                    dead_owing.push(t.rank);
                }
            } else if !t.finished() {
                live_missing += 1;
            }
            let p2p = es.iter().any(|e| e.to == t.rank && e.how != "member");
            if t.inside() && p2p {
                c += if es.iter().any(|e| e.to == t.rank && e.how == "from") { " and will not send" } else { " and will not receive" };
            } else if t.inside() && !t.is_dead() {
                c += &format!(" and will not enter {}", s.function);
            }
            parts.push(c);
            let found = never_made(s, t, &es, names).or_else(|| classify(s, t, &es));
            if rank_of(&found) > rank_of(&pattern) {
                pattern = found;
            }
        }
        let only_dead = !targets.is_empty() && live_missing == 0 && targets.iter().filter_map(|r| by_rank(*r)).all(|t| t.is_dead());
        if !dead_owing.is_empty() || only_dead {
            mpift = true;
        }
        if let Some((a, b)) = s.spinning {
            sentences.push(format!("rank {} does not block: it went on calling MPI (call {a}, then call {b} a moment later; now in {}).", s.rank, s.function));
        } else {
            sentences.push(format!("{}: {}.", wait_clause(s, &es), if parts.is_empty() { "no rank it waits for is known".to_string() } else { parts.join("; ") }));
        }
        if let Some(found) = unacknowledged(s, names) {
            if rank_of(&Some(found.clone())) > rank_of(&pattern) {
                pattern = Some(found);
            }
        }
        edges.extend(es);
    }
    if let Some(cyc) = blocked.iter().find_map(|s| cycle(&edges, s.rank)) {
        let ranks: Vec<String> = cyc.iter().map(u32::to_string).collect();
        sentences.push(format!("Ranks {} wait for each other in a cycle.", ranks.join(", ")));
        if rank_of(&pattern) < rank_of(&Some(("cycle", String::new()))) {
            pattern = Some(("cycle", String::new()));
        }
    }
    let (pat, hint) = if mpift {
        ("mpift-owes-join", "The hang is MPIFT's, not the program's: a live rank waits only for dead ranks, which under ULFM would have made its call return. Please report it with this run's directory.".to_string())
    } else {
        pattern.unwrap_or(("unknown", String::new()))
    };
    if !hint.is_empty() {
        sentences.push(hint);
    }
    Some(Finding { paragraph: sentences.join(" "), pattern: pat.into(), mpift, edges })
}

/// A rank waiting for a wildcard receive that is PENDING: a failure on its
/// communicator is unacknowledged, and until the program acknowledges it ULFM
/// may answer the receive with `MPI_ERR_PROC_FAILED_PENDING` however often the
/// program waits (MPIFT's adversarial mode does, its `wildcard` choice).
fn unacknowledged(s: &RankState, names: &Names) -> Option<(&'static str, String)> {
    let id = s.pending.first()?;
    Some((
        "wildcard-unacknowledged",
        format!(
            "Its receive from any rank on {} stays MPI_ERR_PROC_FAILED_PENDING while a failure there is unacknowledged: rank {} never called MPIX_Comm_ack_failed or MPIX_Comm_failure_ack on it.",
            name(names, *id),
            s.rank
        ),
    ))
}

/// `s` waits on a communicator a constructor made, with live rank `t`, which
/// never had it (not in its `comms.R`): the constructor gave it to some ranks
/// and an error to others, and nothing made them agree on its outcome.
fn never_made(s: &RankState, t: &RankState, es: &[Edge], names: &Names) -> Option<(&'static str, String)> {
    let comm = &es.iter().find(|e| e.to == t.rank)?.comm;
    let id = names.iter().find(|(_, n)| *n == comm)?.0;
    if t.is_dead() || t.made.is_empty() || t.made.contains(id) || !comm.starts_with("the communicator from ") {
        return None;
    }
    Some((
        "constructor-not-uniform",
        format!(
            "Rank {} never got {comm}, which rank {} has: the constructor returned an error at one and a communicator at the other, and nothing made them agree on its outcome (MPIX_Comm_agree) before using it.",
            t.rank, s.rank
        ),
    ))
}

/// Which explanation wins when a rank waits for several: the one that names
/// a live rank's mistake first.
fn rank_of(p: &Option<(&'static str, String)>) -> u8 {
    match p.as_ref().map(|p| p.0) {
        Some("constructor-not-uniform") => 7,
        Some("wildcard-unacknowledged") => 6,
        Some("peer-in-recovery") => 5,
        Some("skipped-collective") => 4,
        Some("waits-for-finished") => 3,
        Some("cycle") => 2,
        Some("waits-for-dead") => 1,
        _ => 0,
    }
}

/// The pattern of one wait `s` -> `t`, with the sentence that explains it.
fn classify(s: &RankState, t: &RankState, es: &[Edge]) -> Option<(&'static str, String)> {
    let comm = es.iter().find(|e| e.to == t.rank).map(|e| e.comm.clone()).unwrap_or_default();
    let revoked = s.comm.as_ref().is_some_and(|c| c.revoked);
    if t.is_dead() {
        return Some(("waits-for-dead", String::new()));
    }
    if t.finished() || t.state == "gone" {
        return Some(("waits-for-finished", format!("Rank {} left before the call rank {} waits in could complete.", t.rank, s.rank)));
    }
    if t.inside() && recovery(&t.function) && !recovery(&s.function) && !revoked {
        return Some((
            "peer-in-recovery",
            format!("A survivor that went to recovery ({}) did not revoke {comm}, so rank {} was never interrupted.", t.function, s.rank),
        ));
    }
    let coll = es.iter().all(|e| e.how == "member");
    if coll && t.inside() && t.function != s.function {
        return Some(("skipped-collective", format!("Rank {} skipped {} on {comm}: it is in {} instead.", t.rank, s.function, t.function)));
    }
    Some(("unknown", String::new()))
}

/// The signature of a hang for comparing runs (minimization): the pattern and
/// the functions on both ends of every edge, without rank numbers.
pub fn signature(f: &Finding) -> String {
    let ends: BTreeSet<String> = f.edges.iter().map(|e| format!("{}:{}", e.function, e.how)).collect();
    format!("{} [{}]", f.pattern, ends.into_iter().collect::<Vec<_>>().join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::states::Comm;

    const WORLD: u64 = 2;

    fn names() -> Names {
        [(WORLD, "MPI_COMM_WORLD".to_string())].into_iter().collect()
    }

    /// Rank `r` of `n` inside `f` on MPI_COMM_WORLD.
    fn live(r: u32, n: u32, f: &str) -> RankState {
        let comm = Some(Comm { id: WORLD, members: (0..n).collect(), ..Comm::default() });
        RankState { rank: r, call: 10, function: f.into(), state: "in".into(), comm, ..RankState::default() }
    }

    fn dead(r: u32, status: &str) -> RankState {
        RankState { rank: r, function: "MPI_Send".into(), state: "dead-serving".into(), dead: status.into(), ..RankState::default() }
    }

    /// The four ranks' roles turned by `k` (rank r plays the role of r - k).
    fn turned(states: &[RankState], k: u32, n: u32) -> Vec<RankState> {
        let t = |r: u32| (r + k) % n;
        let mut out: Vec<RankState> = states
            .iter()
            .map(|s| {
                let mut s = s.clone();
                s.rank = t(s.rank);
                s.source = s.source.map(|p| t(p as u32) as i32);
                s.dest = s.dest.map(|p| t(p as u32) as i32);
                s
            })
            .collect();
        out.sort_by_key(|s| s.rank);
        out
    }

    #[test]
    fn a_survivor_in_the_agreement_that_did_not_revoke() {
        let mut recv = live(2, 4, "MPI_Recv");
        recv.source = Some(3);
        let states = vec![live(0, 4, "MPIX_Comm_agree"), dead(1, "waits chores"), recv, live(3, 4, "MPIX_Comm_agree")];
        let f = analyze(&states, &names()).unwrap();
        for want in ["rank 2 waits in MPI_Recv from rank 3 on MPI_COMM_WORLD", "rank 3 is in MPIX_Comm_agree on MPI_COMM_WORLD", "rank 1 is dead", "did not revoke MPI_COMM_WORLD"] {
            assert!(f.paragraph.contains(want), "`{want}` not in: {}", f.paragraph);
        }
        assert_eq!((f.pattern.as_str(), f.mpift), ("peer-in-recovery", false));
        // The same with the roles turned: the same pattern and signature, other ranks.
        for k in 1..4 {
            let g = analyze(&turned(&states, k, 4), &names()).unwrap();
            assert_eq!(signature(&g), signature(&f));
            let want = format!("rank {} waits in MPI_Recv from rank {} on MPI_COMM_WORLD", (2 + k) % 4, (3 + k) % 4);
            assert!(g.paragraph.contains(&want), "{want}: {}", g.paragraph);
        }
    }

    #[test]
    fn a_survivor_that_skipped_a_collective() {
        let states = vec![live(0, 4, "MPI_Bcast"), dead(1, "waits chores"), live(2, 4, "MPI_Bcast"), live(3, 4, "MPI_Barrier")];
        let f = analyze(&states, &names()).unwrap();
        assert_eq!((f.pattern.as_str(), f.mpift), ("skipped-collective", false), "{}", f.paragraph);
        assert!(f.paragraph.contains("rank 0 waits in MPI_Bcast on MPI_COMM_WORLD"), "{}", f.paragraph);
        assert!(f.paragraph.contains("rank 3 is in MPI_Barrier on MPI_COMM_WORLD and will not enter MPI_Bcast"), "{}", f.paragraph);
    }

    #[test]
    fn a_dead_rank_that_owes_its_join_is_mpifts_hang() {
        let states = vec![live(0, 4, "MPI_Barrier"), dead(1, "waits owes comm 2 #3 MPI_Barrier"), live(2, 4, "MPI_Barrier"), live(3, 4, "MPI_Barrier")];
        let f = analyze(&states, &names()).unwrap();
        assert!(f.mpift && f.pattern == "mpift-owes-join", "{f:?}");
        assert!(f.paragraph.contains("The hang is MPIFT's, not the program's"), "{}", f.paragraph);
        assert!(f.paragraph.contains("rank 1 is dead and still owes its part there"), "{}", f.paragraph);
        // A receive from a dead rank that never returns: MPIFT's too (ULFM returns an error).
        let mut recv = live(0, 2, "MPI_Recv");
        recv.source = Some(1);
        let g = analyze(&[recv, dead(1, "waits chores")], &names()).unwrap();
        assert!(g.mpift, "{g:?}");
    }

    #[test]
    fn a_dead_rank_blocked_in_a_collective_a_live_rank_skipped_is_the_programs() {
        // gather_no_revoke: rank 1 was told success by a Gather and waits in the
        // next Bcast; ranks 0 and 3 are in the shrink (3 skipped the Gather the
        // dead rank 2 joined).
        let states = vec![
            live(0, 4, "MPIX_Comm_shrink"),
            live(1, 4, "MPI_Bcast"),
            dead(2, "blocks MPI_Gather comm 2 #5"),
            live(3, 4, "MPIX_Comm_shrink"),
        ];
        let f = analyze(&states, &names()).unwrap();
        assert!(!f.mpift, "{}", f.paragraph);
        assert!(f.paragraph.contains("rank 2 is dead and is blocked in its part of MPI_Gather there"), "{}", f.paragraph);
        assert!(f.paragraph.contains("live members in other calls: rank 0 (MPIX_Comm_shrink), rank 1 (MPI_Bcast), rank 3 (MPIX_Comm_shrink)"), "{}", f.paragraph);
        // Every live member inside the same collective: the join is stuck for no
        // reason of the program's, MPIFT's hang.
        let stuck = vec![live(0, 3, "MPI_Gather"), dead(1, "blocks MPI_Gather comm 2 #5"), live(2, 3, "MPI_Gather")];
        let g = analyze(&stuck, &names()).unwrap();
        assert!(g.mpift, "{}", g.paragraph);
    }

    #[test]
    fn a_program_error_is_never_called_mpifts() {
        // A dead rank owes a join elsewhere; the live ranks wait for a live one.
        let mut recv = live(0, 3, "MPI_Recv");
        recv.source = Some(2);
        let f = analyze(&[recv, dead(1, "waits owes comm 7 #1 MPI_Bcast"), live(2, 3, "MPI_Barrier")], &names()).unwrap();
        assert!(!f.mpift, "{f:?}");
    }

    #[test]
    fn a_wait_for_a_finished_rank_and_a_cycle() {
        let mut recv = live(0, 2, "MPI_Recv");
        recv.source = Some(1);
        let done = RankState { rank: 1, function: "MPI_Finalize".into(), state: "finalized".into(), ..RankState::default() };
        let f = analyze(&[recv.clone(), done], &names()).unwrap();
        assert_eq!(f.pattern, "waits-for-finished");
        assert!(f.paragraph.contains("rank 1 has finished"), "{}", f.paragraph);
        let mut other = live(1, 2, "MPI_Recv");
        other.source = Some(0);
        let g = analyze(&[recv, other], &names()).unwrap();
        assert_eq!(g.pattern, "cycle", "{}", g.paragraph);
        assert!(g.paragraph.contains("Ranks 0, 1 wait for each other in a cycle"), "{}", g.paragraph);
    }

    #[test]
    fn a_pending_wildcard_receive_names_the_missing_acknowledgement() {
        let mut wait = live(0, 4, "MPI_Wait");
        wait.comm = None;
        wait.requests = vec![Req::Recv(None, 1)];
        wait.pending = vec![1];
        let done = |r| RankState { rank: r, function: "MPI_Finalize".into(), state: "finalized".into(), ..RankState::default() };
        let f = analyze(&[wait.clone(), done(1), dead(2, "serving"), done(3)], &names()).unwrap();
        assert_eq!(f.pattern, "wildcard-unacknowledged", "{}", f.paragraph);
        // Seen spinning (its wait returns PENDING at once, and it waits again).
        let mut spin = wait.clone();
        spin.function = "MPI_Comm_group".into();
        spin.spinning = Some((40, 900));
        let h = analyze(&[spin, done(1), dead(2, "serving"), done(3)], &names()).unwrap();
        assert_eq!(h.pattern, "wildcard-unacknowledged", "{}", h.paragraph);
        assert!(h.paragraph.contains("does not block") && !h.paragraph.contains("waits in MPI_Comm_group"), "{}", h.paragraph);
        assert!(f.paragraph.contains("is unacknowledged") && !f.mpift, "{}", f.paragraph);
        // The same wait with the failure acknowledged is another story.
        wait.pending.clear();
        let g = analyze(&[wait, done(1), dead(2, "serving"), done(3)], &names()).unwrap();
        assert_ne!(g.pattern, "wildcard-unacknowledged");
    }

    #[test]
    fn a_collective_on_a_dup_a_live_member_never_got() {
        let mut n = names();
        n.insert(9, "the communicator from MPI_Comm_dup at call 21".into());
        let mut a = live(0, 3, "MPI_Allreduce");
        a.comm = Some(Comm { id: 9, members: vec![0, 1, 2], ..Comm::default() });
        a.made = [1, 9].into_iter().collect();
        let mut b = live(1, 3, "MPIX_Comm_shrink");
        b.made = [1].into_iter().collect();
        let f = analyze(&[a.clone(), b.clone(), dead(2, "serving")], &n).unwrap();
        assert_eq!(f.pattern, "constructor-not-uniform", "{}", f.paragraph);
        assert!(f.paragraph.contains("Rank 1 never got the communicator from MPI_Comm_dup at call 21"), "{}", f.paragraph);
        // Both have it: not this pattern.
        b.made.insert(9);
        let g = analyze(&[a, b, dead(2, "serving")], &n).unwrap();
        assert_ne!(g.pattern, "constructor-not-uniform", "{}", g.paragraph);
    }

    #[test]
    fn nothing_inside_a_call_no_finding() {
        let out = RankState { rank: 0, function: "MPI_Send".into(), state: "out".into(), ..RankState::default() };
        assert!(analyze(&[out], &names()).is_none());
    }
}
