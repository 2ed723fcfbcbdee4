//! Agree and shrink at scale: the bitmap encoding of `protocol::agree` against a
//! brute-force model, and whole agree + shrink calls of `protocol::models::colljoin`
//! machines with zombies, acknowledged and unacknowledged failures, and revokers
//! racing ranks that entered the agree before the revoke.

use mpift::protocol::agree::{and_into, contribution_live, contribution_zombie, decide, survivors, Decision};
use mpift::protocol::models::colljoin::*;
use mpift::protocol::models::colljoin_machine::Machine;
use mpift::protocol::{CommId, Rank};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use std::collections::{BTreeSet, HashMap};

#[test]
fn encoding_matches_a_brute_force_model() {
    let mut rng = StdRng::seed_from_u64(7);
    for round in 0..300 {
        let n: Rank = if round % 10 == 0 { rng.gen_range(1000..5000) } else { rng.gen_range(1..200) };
        let zombies: BTreeSet<Rank> = (0..n).filter(|_| rng.gen_bool(0.05)).collect();
        let live: Vec<Rank> = (0..n).filter(|r| !zombies.contains(r)).collect();
        if live.is_empty() {
            continue;
        }
        // Each live rank knows some of the zombies and acknowledged some of those.
        let mut acked_by_all: BTreeSet<Rank> = zombies.clone();
        let mut flag_and = !0u64;
        let mut acc: Option<Vec<u64>> = None;
        let mut add = |c: Vec<u64>| match &mut acc {
            Some(a) => and_into(a, &c),
            None => acc = Some(c),
        };
        for _ in &live {
            let known: Vec<Rank> = zombies.iter().copied().filter(|_| rng.gen_bool(0.7)).collect();
            let acked: Vec<Rank> = known.iter().copied().filter(|_| rng.gen_bool(0.9)).collect();
            acked_by_all.retain(|z| acked.contains(z));
            let flag: u64 = rng.gen::<u64>() | rng.gen::<u64>();
            flag_and &= flag;
            add(contribution_live(n, flag, &known, &acked));
        }
        for &z in &zombies {
            add(contribution_zombie(n, z));
        }
        let red = acc.expect("some contribution");
        let d = decide(n, &red);
        let failed: Vec<Rank> = zombies.iter().copied().collect();
        assert_eq!(d, Decision { flag: flag_and, all_acked: acked_by_all.len() == zombies.len(), failed }, "n={n}");
        assert_eq!(survivors(n, &red), live, "n={n}");
    }
}

/// A collective: op, entered count, AND of bits, split colors, outcome.
type Coll = (Op, usize, Option<Vec<u64>>, Vec<Option<u32>>, Option<Outcome>);

/// A minimal world for one communicator: unbounded logs, news, collectives that
/// complete when every member entered. No wake-ups: blocked ranks are polled.
struct World {
    logs: Vec<Vec<Entry>>,
    news: Vec<Vec<News>>,
    /// `(comm, seq)` -> (op, entered) of every entry written.
    seen: HashMap<(CommId, Seq), Vec<(Op, bool)>>,
    members: HashMap<CommId, Vec<Rank>>,
    colls: HashMap<(CommId, Seq), Coll>,
    mismatch: Option<String>,
}

impl Io for World {
    fn write_log(&mut self, me: Rank, e: Entry) {
        self.logs[me as usize].push(e);
        self.seen.entry((e.comm, e.seq)).or_default().push((e.op, e.state == EntryState::Entered));
    }
    fn mark_log(&mut self, me: Rank, comm: CommId, seq: Seq, state: EntryState) {
        let e = self.logs[me as usize].iter_mut().rev().find(|e| e.comm == comm && e.seq == seq).expect("own entry");
        e.state = state;
        let op = e.op;
        self.seen.entry((comm, seq)).or_default().push((op, state == EntryState::Entered));
    }
    fn read_news(&mut self, me: Rank, from: usize) -> Vec<News> {
        self.news[me as usize][from..].to_vec()
    }
    fn has_news(&self, me: Rank, from: usize) -> bool {
        self.news[me as usize].len() > from
    }
    fn put_news(&mut self, _from: Rank, to: Rank, item: News) {
        self.news[to as usize].push(item);
    }
    fn read_log(&mut self, of: Rank, comm: CommId) -> Vec<Entry> {
        self.logs[of as usize].iter().filter(|e| e.comm == comm).copied().collect()
    }
    fn find_op(&self, comm: CommId, seq: Seq, entered_only: bool) -> Option<Op> {
        // Entries are never evicted here, and a pending one becomes Entered or
        // Cancelled; an op counts if some entry of it is (or was) Entered.
        self.seen.get(&(comm, seq))?.iter().find(|(_, entered)| *entered || !entered_only).map(|(op, _)| *op)
    }
    fn enter(&mut self, me: Rank, j: Join) {
        let m = &self.members[&j.comm];
        let (idx, size) = (m.binary_search(&me).expect("member"), m.len());
        let rec = self.colls.entry((j.comm, j.seq)).or_insert((j.op, 0, None, vec![None; size], None));
        if rec.0 != j.op {
            self.mismatch = Some(format!("#{}: {:?} vs {:?} by r{me}", j.seq, rec.0, j.op));
            return;
        }
        rec.1 += 1;
        match j.contribution {
            Contribution::Bits(b) => match &mut rec.2 {
                Some(a) => and_into(a, &b),
                None => rec.2 = Some(b),
            },
            Contribution::Color(c) => rec.3[idx] = c,
            Contribution::Data => {}
        }
        if rec.1 == size {
            let members = (j.op.kind == Kind::Split)
                .then(|| m.iter().zip(&rec.3).filter(|(_, c)| **c == Some(0)).map(|(r, _)| *r).collect());
            rec.4 = Some(Outcome { bits: rec.2.clone(), members });
        }
    }
    fn complete(&self, comm: CommId, seq: Seq) -> bool {
        self.colls.get(&(comm, seq)).is_some_and(|c| c.4.is_some())
    }
    fn outcome(&self, comm: CommId, seq: Seq) -> Option<Outcome> {
        self.colls.get(&(comm, seq)).and_then(|c| c.4.clone())
    }
}

struct Result {
    agreed: Vec<(Rank, Decision)>,
    shrunk: Vec<(Rank, Vec<Rank>)>,
    flags: u64,
    acks_all: bool,
    zombies: Vec<Rank>,
    live: Vec<Rank>,
}

/// `n` ranks on the world communicator: some die at the start (and their death
/// news is out before anyone starts), every live rank runs a barrier (so it has
/// read that news), `revokers` of them revoke, then all agree and shrink.
fn agree_then_shrink(n: Rank, seed: u64, revokers: usize) -> Result {
    const W: CommId = 1;
    let mut rng = StdRng::seed_from_u64(seed);
    let all: Vec<Rank> = (0..n).collect();
    let mut w = World {
        logs: vec![Vec::new(); n as usize],
        news: vec![Vec::new(); n as usize],
        seen: HashMap::new(),
        members: HashMap::from([(W, all.clone())]),
        colls: HashMap::new(),
        mismatch: None,
    };
    let mut ms: Vec<Machine> = all.iter().map(|&r| Machine::new(r, n, Design::FIXED, &[(W, all.clone())])).collect();
    let zombies: Vec<Rank> = all.iter().copied().filter(|_| rng.gen_bool(0.04)).collect();
    for &z in &zombies {
        ms[z as usize].start(AppCall::Kill);
        for _ in 0..n {
            ms[z as usize].step(&mut w);
        }
    }
    let live: Vec<Rank> = all.iter().copied().filter(|r| zombies.binary_search(r).is_err()).collect();
    let mut revoking: Vec<Rank> = live.clone();
    revoking.shuffle(&mut rng);
    revoking.truncate(revokers);
    // Program per live rank; the flag and ack choices are drawn up front.
    let mut progs: HashMap<Rank, Vec<AppCall>> = HashMap::new();
    let (mut flags, mut acks_all) = (!0u64, true);
    for &r in &live {
        let (flag, ack) = (rng.gen::<u64>() | rng.gen::<u64>(), rng.gen_bool(0.97));
        flags &= flag;
        acks_all &= ack;
        let mut p = vec![AppCall::Coll(W, Op { kind: Kind::Barrier, root: 0, count: 1 })];
        if revoking.contains(&r) {
            p.push(AppCall::Revoke(W));
        }
        p.extend([AppCall::Agree { comm: W, flag, ack }, AppCall::Shrink(W)]);
        p.reverse();
        progs.insert(r, p);
    }
    let mut res =
        Result { agreed: vec![], shrunk: vec![], flags, acks_all, zombies: zombies.clone(), live: live.clone() };
    let mut idle_picks = 0usize;
    while !progs.is_empty() {
        assert!(idle_picks < 50 * all.len() + 1000, "seed {seed}: no rank can step");
        let r = all[rng.gen_range(0..all.len())];
        let call_done = match ms[r as usize].step(&mut w) {
            Progress::Stepped => None,
            Progress::Blocked(_) => {
                idle_picks += 1;
                continue;
            }
            Progress::Idle => Some(None),
            Progress::Returned(x) => Some(Some(x)),
        };
        assert!(w.mismatch.is_none(), "seed {seed}: mismatch {:?}", w.mismatch);
        idle_picks = 0;
        let Some(done) = call_done else { continue };
        match done {
            Some(AppResult::Agreed(d)) => res.agreed.push((r, d)),
            Some(AppResult::Shrunk { members, .. }) => res.shrunk.push((r, members)),
            _ => {}
        }
        match progs.get_mut(&r).and_then(Vec::pop) {
            Some(c) => ms[r as usize].start(c),
            None => {
                progs.remove(&r);
                ms[r as usize].finalize();
            }
        }
    }
    res
}

fn check(r: &Result, what: &str) {
    assert_eq!(r.agreed.len(), r.live.len(), "{what}: every live rank agreed");
    let d = &r.agreed[0].1;
    assert!(r.agreed.iter().all(|(_, x)| x == d), "{what}: agree is uniform");
    assert_eq!(d.flag, r.flags, "{what}: flag is the AND of the live flags");
    assert_eq!(d.failed, r.zombies, "{what}: failed = the dead");
    // Every live rank read all deaths (barrier) before agreeing, so a failure is
    // acknowledged by all iff every live rank acknowledged.
    assert_eq!(d.all_acked, r.zombies.is_empty() || r.acks_all, "{what}: PROC_FAILED iff some failure unacknowledged");
    assert_eq!(r.shrunk.len(), r.live.len(), "{what}: every live rank shrank");
    assert!(r.shrunk.iter().all(|(_, m)| *m == r.live), "{what}: shrink keeps exactly the live ranks, in order");
}

#[test]
fn agree_and_shrink_with_thousands_of_ranks() {
    for (n, seed, revokers) in [(1000, 1, 0), (1000, 2, 1), (2000, 3, 3), (3000, 4, 1)] {
        let r = agree_then_shrink(n, seed, revokers);
        check(&r, &format!("n={n} seed={seed} revokers={revokers}"));
        assert!(!r.zombies.is_empty());
    }
}

#[test]
fn agree_racing_revokers_small_worlds() {
    // Ranks that entered the agree before the revoke and ranks that catch up to it
    // must meet in the same reduction.
    for seed in 0..3000 {
        let n = 2 + seed as Rank % 9;
        let r = agree_then_shrink(n, seed, 1 + seed as usize % 3);
        check(&r, &format!("n={n} seed={seed}"));
    }
}
