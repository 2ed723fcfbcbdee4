//! The agreement of `protocol::ftagree` (agree, iagree, shrink, ishrink) at scale,
//! in memory: thousands of members, deaths at every point of the protocol, news of
//! each death reaching each member at a random later time, every read a snapshot
//! that may be stale, members starting late. Checked: every member that does not
//! die decides; all decisions are equal; the decision is the AND of each member's
//! contribution, or of the zombie value for members that died without one.
//! And the cost claim: without failures a decision takes at most
//! 2 * depth + 1 rounds of reads (depth = ceil(log_k n)), O(log n), and each
//! round reads at most k slots per member.

use mpift::protocol::agree::{contribution_live, decide};
use mpift::protocol::ftagree::{expected, Agreement, Published, Step, Tree, View};
use mpift::protocol::Rank;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use std::collections::{HashMap, HashSet};

/// One member as the harness sees it.
#[derive(Default)]
struct Member {
    agr: Option<Agreement>,
    /// Snapshots of other members' slots, as last read.
    cache: HashMap<Rank, Published>,
    /// Deaths this member knows of.
    known_dead: HashSet<Rank>,
    /// Known dead and read since: the snapshot is final.
    final_: HashSet<Rank>,
    waiting: Vec<Rank>,
    decided: Option<Vec<u64>>,
    dead: bool,
    /// Own protocol steps before dying (victims only); 0: dies before starting.
    dies_after: Option<u32>,
    steps: u32,
    /// Members this one has given up waiting for (View::stalled).
    stalled: HashSet<Rank>,
    /// Own protocol steps after which this member blocks (in a host call that
    /// needs the others first, as in examples/ulfm/iagree_wait_coll): it takes
    /// no step until every other live member decided.
    blocks_after: Option<u32>,
}

struct MemberView<'a> {
    m: &'a Member,
}
impl View for MemberView<'_> {
    fn published(&self, x: Rank) -> Option<&Published> {
        self.m.cache.get(&x)
    }
    fn is_dead(&self, x: Rank) -> bool {
        self.m.final_.contains(&x)
    }
    fn stalled(&self, x: Rank) -> bool {
        self.m.stalled.contains(&x)
    }
}

struct World {
    n: Rank,
    k: Rank,
    members: Vec<Member>,
    /// The truth: what each member has published.
    slots: Vec<Published>,
    /// (to, dead): a death's news on its way.
    news: Vec<(Rank, Rank)>,
    rng: StdRng,
    reads: u64,
    /// Members may give up waiting for each other (a timeout in the driver).
    stalls: bool,
}

fn contribution(n: Rank, r: Rank) -> Vec<u64> {
    // A flag that differs per rank, nothing known dead yet, nothing acknowledged.
    contribution_live(n, !(1u64 << (r % 64)) & !(1u64 << ((r / 64) % 64)), &[], &[])
}

impl World {
    fn new(n: Rank, k: Rank, seed: u64) -> World {
        World {
            n,
            k,
            members: (0..n).map(|_| Member::default()).collect(),
            slots: vec![Published::default(); n as usize],
            news: Vec::new(),
            rng: StdRng::seed_from_u64(seed),
            reads: 0,
            stalls: false,
        }
    }

    fn start(&mut self, r: Rank) {
        let c = contribution(self.n, r);
        self.slots[r as usize].contrib = Some(c.clone());
        self.members[r as usize].agr = Some(Agreement::new(self.n, r, self.k, c));
    }

    fn die(&mut self, r: Rank) {
        let m = &mut self.members[r as usize];
        assert!(!m.dead);
        m.dead = true;
        for to in 0..self.n {
            if to != r {
                self.news.push((to, r));
            }
        }
    }

    /// One protocol step of member r (advance once, apply a publish).
    fn advance(&mut self, r: Rank) {
        let mut agr = self.members[r as usize].agr.take().expect("started");
        let step = agr.advance(&MemberView { m: &self.members[r as usize] });
        let m = &mut self.members[r as usize];
        m.agr = Some(agr);
        m.steps += 1;
        match step {
            Step::Publish { partial, result } => {
                let s = &mut self.slots[r as usize];
                if let Some(p) = partial {
                    assert!(s.partial.is_none(), "a partial is published once");
                    s.partial = Some(p);
                }
                if let Some(x) = result {
                    assert!(s.result.is_none(), "a result is published once");
                    s.result = Some(x);
                }
            }
            Step::Wait(need) => m.waiting = need,
            Step::Decided(x) => {
                if let Some(prev) = &m.decided {
                    assert_eq!(prev, &x, "a decision never changes");
                }
                m.decided = Some(x);
                m.waiting.clear();
            }
        }
    }

    fn read(&mut self, r: Rank, x: Rank) {
        self.reads += 1;
        let snap = self.slots[x as usize].clone();
        let m = &mut self.members[r as usize];
        m.cache.insert(x, snap);
        if m.known_dead.contains(&x) {
            m.final_.insert(x);
        }
    }

    fn deliver(&mut self, to: Rank, dead: Rank) {
        self.members[to as usize].known_dead.insert(dead);
    }

    /// A blocked member stays blocked until every other live member decided.
    fn blocked(&self, r: Rank) -> bool {
        let m = &self.members[r as usize];
        if !m.blocks_after.is_some_and(|b| m.steps >= b) {
            return false;
        }
        let others_done = |x: &Member| x.dead || x.decided.is_some() || x.blocks_after.is_some_and(|b| x.steps >= b);
        !self.members.iter().all(others_done)
    }

    /// Runs to the end in a random interleaving; returns the steps taken.
    fn run(&mut self, max_steps: u64) -> u64 {
        self.try_run(max_steps).unwrap_or_else(|| panic!("no decision after {max_steps} steps: a deadlock"))
    }

    /// As [`World::run`]; None if it did not end within `max_steps`.
    fn try_run(&mut self, max_steps: u64) -> Option<u64> {
        let mut steps = 0;
        loop {
            // What can happen now.
            let mut options: Vec<(u8, Rank, Rank)> = Vec::new();
            for r in 0..self.n {
                let m = &self.members[r as usize];
                if m.dead {
                    continue;
                }
                if m.agr.is_none() {
                    options.push((0, r, 0));
                    continue;
                }
                if m.dies_after.is_some_and(|d| m.steps >= d) {
                    options.push((1, r, 0));
                    continue;
                }
                if m.decided.is_some() || self.blocked(r) {
                    continue;
                }
                if m.waiting.is_empty() {
                    options.push((2, r, 0));
                } else {
                    for &x in &m.waiting {
                        options.push((3, r, x));
                        if self.stalls && !m.stalled.contains(&x) {
                            options.push((5, r, x));
                        }
                    }
                    options.push((2, r, 0));
                }
            }
            for i in 0..self.news.len() {
                options.push((4, i as Rank, 0));
            }
            if options.is_empty() {
                return Some(steps);
            }
            steps += 1;
            if steps > max_steps {
                return None;
            }
            let (what, a, b) = *options.choose(&mut self.rng).unwrap();
            match what {
                0 => {
                    if self.members[a as usize].dies_after == Some(0) {
                        self.die(a);
                    } else {
                        self.start(a);
                    }
                }
                1 => self.die(a),
                2 => self.advance(a),
                3 => self.read(a, b),
                5 => {
                    self.members[a as usize].stalled.insert(b);
                }
                _ => {
                    let (to, dead) = self.news.swap_remove(a as usize);
                    self.deliver(to, dead);
                }
            }
        }
    }

    fn check(&self) {
        let contributions: Vec<Option<Vec<u64>>> = self.slots.iter().map(|s| s.contrib.clone()).collect();
        let want = expected(self.n, &contributions);
        let mut deciders = 0;
        for (r, m) in self.members.iter().enumerate() {
            if !m.dead {
                assert_eq!(m.decided.as_ref(), Some(&want), "member {r} (n={}, k={})", self.n, self.k);
                deciders += 1;
            } else if let Some(d) = &m.decided {
                assert_eq!(d, &want, "a member that decided before dying");
            }
        }
        assert!(deciders > 0);
        // The decision marks exactly the members that died without contributing as
        // failed (nobody contributed knowing of a death).
        let failed: Vec<Rank> = (0..self.n).filter(|r| self.slots[*r as usize].contrib.is_none()).collect();
        assert_eq!(decide(self.n, &want).failed, failed);
    }
}

fn plan_deaths(w: &mut World, victims: usize) {
    let mut ranks: Vec<Rank> = (0..w.n).collect();
    ranks.shuffle(&mut w.rng);
    for &v in ranks.iter().take(victims) {
        let d = w.rng.gen_range(0..6);
        w.members[v as usize].dies_after = Some(d);
    }
}

#[test]
fn uniform_decisions_with_deaths_at_random_points() {
    for seed in 0..40u64 {
        let mut rng = StdRng::seed_from_u64(seed);
        let n: Rank = if seed % 8 == 0 { rng.gen_range(1000..1400) } else { rng.gen_range(1..80) };
        let k: Rank = [1, 2, 3, 4, 8, 16][rng.gen_range(0..6)];
        let mut w = World::new(n, k, seed);
        // Half the runs with spurious stalls: members that give up waiting for
        // live, busy members and compute around them.
        w.stalls = seed % 2 == 1;
        let victims = if n < 3 { 0 } else { rng.gen_range(0..=(n as usize / 3).min(40)) };
        plan_deaths(&mut w, victims);
        w.run(200_000_000);
        w.check();
    }
}

/// Marks `blocked` members to block after 0..3 of their own steps (they
/// contributed, maybe published a partial or the result).
fn plan_blocks(w: &mut World, blocked: &[Rank]) {
    for &b in blocked {
        let after = w.rng.gen_range(0..3);
        w.members[b as usize].blocks_after = Some(after);
    }
}

#[test]
fn members_blocked_elsewhere_do_not_stop_the_others() {
    // Live members that contributed and then block in a host call the others
    // join only after deciding (iagree, then a host collective on another
    // communicator): the root, inner nodes, leaves, several at once, with deaths
    // of other members at random points. The others decide by computing around
    // the blocked ones; the blocked ones, released, decide the same.
    for seed in 0..60u64 {
        let mut rng = StdRng::seed_from_u64(seed ^ 0x5eed);
        let n: Rank = if seed % 10 == 0 { rng.gen_range(500..900) } else { rng.gen_range(2..80) };
        let k: Rank = [1, 2, 3, 4, 8][rng.gen_range(0..5)];
        let mut w = World::new(n, k, seed);
        w.stalls = true;
        let mut ranks: Vec<Rank> = (0..n).collect();
        ranks.shuffle(&mut w.rng);
        let nb = rng.gen_range(1..=(n as usize / 2).clamp(1, 4));
        let mut blocked: Vec<Rank> = ranks[..nb].to_vec();
        if seed % 3 == 0 && !blocked.contains(&0) {
            blocked[0] = 0;
        }
        plan_blocks(&mut w, &blocked);
        let others: Vec<Rank> = ranks[nb..].iter().copied().filter(|r| !blocked.contains(r)).collect();
        for &v in others.iter().take(if n < 4 { 0 } else { rng.gen_range(0..=(n as usize / 4).min(20)) }) {
            if v != 0 || !blocked.is_empty() {
                w.members[v as usize].dies_after = Some(w.rng.gen_range(0..6));
            }
        }
        w.run(400_000_000);
        w.check();
    }
}

#[test]
fn a_blocked_member_at_every_place_of_small_trees() {
    // Every rank in turn blocked after each of its first steps, several
    // interleavings each; and without stalls the same run cannot end (the test
    // is able to see the deadlock the stall rule removes).
    for n in [2u32, 3, 5, 9] {
        for k in [1u32, 2, 3] {
            for b in 0..n {
                for after in 0..3 {
                    for seed in 0..4u64 {
                        let mut w = World::new(n, k, seed * 1000 + b as u64 * 10 + after);
                        w.stalls = true;
                        w.members[b as usize].blocks_after = Some(after as u32);
                        w.run(1_000_000);
                        w.check();
                    }
                }
            }
        }
    }
    let mut w = World::new(5, 2, 7);
    w.members[0].blocks_after = Some(0);
    assert!(w.try_run(200_000).is_none(), "a blocked root stops the others when nobody may stall");
}

#[test]
fn a_death_at_every_single_point_of_small_runs() {
    // One victim, every rank in turn, dying after 0..6 of its own steps (before
    // contributing, after contributing, after its partial, after deciding), with
    // several interleavings each: the root, inner nodes and leaves all die.
    for n in [2u32, 3, 5, 9] {
        for k in [1u32, 2, 3] {
            for victim in 0..n {
                for after in 0..7 {
                    for seed in 0..6u64 {
                        let mut w = World::new(n, k, seed * 1000 + victim as u64 * 10 + after as u64);
                        w.members[victim as usize].dies_after = Some(after);
                        w.run(1_000_000);
                        w.check();
                    }
                }
            }
        }
    }
}

#[test]
fn chains_of_dead_ancestors_and_a_dead_root() {
    // Fan-out 1 makes a chain: every member's only ancestor path is every lower
    // rank, so deaths of the root and of runs of ancestors are exercised.
    for seed in 0..30u64 {
        let n = 12;
        let mut w = World::new(n, 1, seed);
        for v in [0, 1, 2, 5, 6] {
            w.members[v].dies_after = Some((seed as u32 + v as u32) % 5);
        }
        w.run(10_000_000);
        w.check();
    }
}

/// Synchronous rounds: each round every undecided member reads the slots it
/// waits for (snapshots taken at the start of the round), then advances as far as
/// it can. Returns (rounds, reads) until everybody decided.
fn rounds(n: Rank, k: Rank, dead: &[Rank]) -> (u32, u64) {
    let mut w = World::new(n, k, 1);
    for &d in dead {
        w.members[d as usize].dead = true;
        for to in 0..n {
            w.members[to as usize].known_dead.insert(d);
        }
    }
    for r in 0..n {
        if !w.members[r as usize].dead {
            w.start(r);
        }
    }
    let live: Vec<Rank> = (0..n).filter(|r| !w.members[*r as usize].dead).collect();
    let mut round = 0;
    loop {
        if live.iter().all(|r| w.members[*r as usize].decided.is_some()) {
            return (round, w.reads);
        }
        round += 1;
        assert!(round < 10_000, "no decision");
        let snapshot = w.slots.clone();
        for &r in &live {
            let need = std::mem::take(&mut w.members[r as usize].waiting);
            assert!(need.len() as u32 <= k.max(1) + dead.len() as u32 * (k + 1), "reads per round");
            for x in need {
                w.reads += 1;
                let m = &mut w.members[r as usize];
                m.cache.insert(x, snapshot[x as usize].clone());
                if m.known_dead.contains(&x) {
                    m.final_.insert(x);
                }
            }
        }
        for &r in &live {
            if w.members[r as usize].decided.is_some() {
                continue;
            }
            loop {
                w.advance(r);
                let m = &w.members[r as usize];
                if m.decided.is_some() || !m.waiting.is_empty() {
                    break;
                }
            }
        }
    }
}

#[test]
fn log_n_rounds_without_failures() {
    for (n, k) in [(1000u32, 2u32), (1000, 8), (4096, 2), (4096, 4), (4096, 16), (3000, 3)] {
        let depth = Tree::new(n, k).depth();
        let (r, reads) = rounds(n, k, &[]);
        // Up the tree (depth rounds), down again (depth rounds), plus one read of
        // the parent's result; the root decides as soon as its children are in.
        assert!(r <= 2 * depth + 2, "n={n} k={k}: {r} rounds, depth {depth}");
        // Each member reads its children once and its parent until the result is
        // there: at most (k + 2 depth) reads per member.
        assert!(reads <= n as u64 * (k as u64 + 2 * depth as u64 + 2), "n={n} k={k}: {reads} reads");
        eprintln!("n={n} k={k}: depth {depth}, {r} rounds, {reads} reads ({:.1} per member)", reads as f64 / n as f64);
    }
}

#[test]
fn rounds_stay_logarithmic_with_known_deaths() {
    // Deaths known before the start (the usual case: agree after a failure):
    // the root, an inner node and a batch of leaves of a 2048-member tree.
    let n = 2048;
    for k in [2u32, 4, 8] {
        let depth = Tree::new(n, k).depth();
        let mut dead: Vec<Rank> = vec![0, 1, 5];
        dead.extend((n - 40..n).step_by(3));
        let (r, reads) = rounds(n, k, &dead);
        assert!(r <= 2 * depth + 6, "n={n} k={k}: {r} rounds with deaths, depth {depth}");
        eprintln!("n={n} k={k} with {} dead: {r} rounds, {reads} reads", dead.len());
    }
}
