//! Dead ranks taking turns for their joins of the host's blocking collectives
//! (protocol::turns, driven in production by engine::dead::turns), in a seeded
//! in-memory world: overlapping communicators, one global order of blocking
//! collectives, each completing once every member is inside it (the host's
//! `MPI_Bcast` from a dead root, `MPI_Allreduce`, ...); live processes run those
//! of their communicators in order; dead ones (from before any collective of
//! theirs) join each once every live member of its communicator is inside, in
//! their communicator's order. A dead rank publishes its state at once and reads
//! each other dead rank's state at a later step of its own (RMA reads complete
//! one by one, while everybody moves on).
//!
//! Checked: every live process finishes and no two dead ranks are ever inside
//! joins of two different communicators; without turns (a dead rank enters the
//! first joinable collective it finds), the same worlds hang.
//!
//! And the end of a job in which every process dies (`Sim::all_die`): the live
//! processes die at some step (each once it is out of its collective), the dead
//! ranks learn of entries late (each from its own snapshot of who entered what,
//! refreshed now and then, as the engine reads the logs; and a rooted collective's
//! other members return before it completes), and leave once nobody
//! is alive and they owe nothing they could join, through `Turn::abandon`.
//! Checked: every dead rank leaves and none is left inside a join; leaving at
//! once when nobody is alive (the rule before) leaves one inside in some
//! schedules.
//!
//! And news that lands late (`Sim::late`): some processes die while the job
//! goes on, and each other process learns of a death at a step of its own (the
//! dying rank's flag landing in its window); a dead rank reads the turns of the
//! ranks it knows dead. Checked: with the rule that a dead rank asks for a turn
//! only once every process has its news, no two dead ranks are ever inside
//! joins of two communicators and every live process finishes; without that
//! rule (engine::dead::zombie before it), two are in some schedules (examples/ulfm/
//! overlap_b.c under load on Open MPI 4.1: rank 1 inside a Reduce on one
//! communicator, rank 2, dead later, inside a Bcast on another, rank 3 owing
//! both, for ever).
//!
//! And a join that takes no turn (`Sim::no_turn`, a dead rank's
//! `MPI_Comm_idup`): kept in flight, every world completes; waited for where it
//! started (the engine before issue 53), some schedules hang.

use mpift::protocol::turns::{Decision, Leave, State, Turn};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use std::collections::HashSet;

struct World {
    comms: Vec<Vec<usize>>,
    /// Communicator of each collective, in global order.
    prog: Vec<usize>,
}

#[derive(Default)]
struct Proc {
    dead: bool,
    /// Live: position in `mine`. Dead: collectives joined.
    pc: usize,
    mine: Vec<usize>,
    joined: HashSet<usize>,
    /// Inside this collective.
    inside: Option<usize>,
    turn: Turn,
    state: Option<State>,
    /// Dead: peers still to read in this read cycle, and what was read.
    to_read: Vec<usize>,
    read: Vec<State>,
    /// Dead: each peer's state in its last read, publishes so far and their
    /// count when the cycle started, what it knows of who entered what (None:
    /// all of it), and whether it left.
    last: Vec<Option<State>>,
    epoch: usize,
    cycle_epoch: usize,
    known: Option<Vec<HashSet<usize>>>,
    gone: bool,
}

struct Sim<'w> {
    w: &'w World,
    p: Vec<Proc>,
    entered: Vec<HashSet<usize>>,
    done: Vec<bool>,
    turns: bool,
    events: usize,
    /// The dead ranks.
    dead: Vec<usize>,
    /// Every live process dies once this many events happened; leaving by the
    /// rule before (at once once nobody is alive) instead of Turn::abandon.
    all_die: Option<usize>,
    leave_at_once: bool,
    /// These die once this many events happened, the job going on; their news
    /// lands late, at each other process's steps (`heard[d][p]`: p has d's).
    late: Option<(Vec<usize>, usize)>,
    heard: Vec<Vec<bool>>,
    /// A dead rank asks for a turn only once every process has its news.
    told_first: bool,
    /// Times two dead ranks were inside joins of two communicators.
    clashes: usize,
    /// Collectives a dead rank joins without a turn (`MPI_Comm_idup`, whose join
    /// is a request): started at once and kept in flight, or (the engine before
    /// issue 53) `wait_outside_turns`: waited for where it was started.
    no_turn: HashSet<usize>,
    wait_outside_turns: bool,
}

impl<'w> Sim<'w> {
    fn new(w: &'w World, dead: &[usize], turns: bool) -> Sim<'w> {
        let n = w.comms.iter().flatten().max().map_or(0, |m| m + 1);
        let mut p: Vec<Proc> = (0..n).map(|_| Proc::default()).collect();
        for (g, c) in w.prog.iter().enumerate() {
            for m in &w.comms[*c] {
                p[*m].mine.push(g);
            }
        }
        for d in dead {
            p[*d].dead = true;
        }
        for q in p.iter_mut() {
            q.last = vec![None; n];
        }
        let entered = vec![HashSet::new(); w.prog.len()];
        let heard = vec![vec![true; n]; n];
        Sim {
            w,
            p,
            entered,
            done: vec![false; w.prog.len()],
            turns,
            events: 0,
            dead: dead.to_vec(),
            all_die: None,
            leave_at_once: false,
            late: None,
            heard,
            told_first: true,
            clashes: 0,
            no_turn: HashSet::new(),
            wait_outside_turns: false,
        }
    }

    fn enter(&mut self, me: usize, g: usize) {
        self.entered[g].insert(me);
        self.p[me].inside = Some(g);
        self.events += 1;
        let c = self.w.prog[g];
        if self.w.comms[c].iter().all(|m| self.entered[g].contains(m)) {
            self.done[g] = true;
        }
    }

    /// Collectives dead rank `me` owes and may join now: per communicator its
    /// next one not joined, if every live member is inside.
    fn owed(&self, me: usize) -> Vec<usize> {
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        let known = self.p[me].known.as_ref().unwrap_or(&self.entered);
        for &g in &self.p[me].mine {
            let c = self.w.prog[g];
            if self.p[me].joined.contains(&g) || !seen.insert(c) {
                continue;
            }
            // Someone logged it, and every member not dead did.
            let logged = !known[g].is_empty() || self.all_die.is_none();
            if logged && self.w.comms[c].iter().all(|m| self.p[*m].dead || known[g].contains(m)) {
                out.push(g);
            }
        }
        // Nothing on a communicator with a member that left for good.
        let p = &self.p[me];
        out.retain(|g| !self.w.comms[self.w.prog[*g]].iter().any(|m| p.last[*m] == Some(State::Abandoned)));
        out
    }

    /// In the all-die worlds every third collective is rooted (a Reduce): its
    /// members other than the root (the communicator's first) return once
    /// inside, as the host's may, and the root waits for everyone.
    fn returns_early(&self, me: usize, g: usize) -> bool {
        let c = &self.w.comms[self.w.prog[g]];
        self.all_die.is_some() && g % 3 == 1 && c[0] != me
    }

    fn nobody_alive(&self) -> bool {
        self.p.iter().all(|p| p.dead)
    }

    /// The live processes die (each once out of its collective, at the latest
    /// when its program is done); a dead rank's
    /// snapshot of the logs is refreshed now and then.
    fn deaths_and_reads(&mut self, me: usize, rng: &mut StdRng) {
        self.late_deaths(me, rng);
        let Some(at) = self.all_die else { return };
        let finished = self.p[me].pc == self.p[me].mine.len();
        if !self.p[me].dead && (self.events >= at || finished) && self.p[me].inside.is_none() {
            let pc = self.p[me].pc;
            let q = &mut self.p[me];
            q.dead = true;
            q.joined = q.mine[..pc].iter().copied().collect();
            self.dead.push(me);
        }
        if self.p[me].dead && (self.p[me].known.is_none() || rng.gen_bool(0.2)) {
            self.p[me].known = Some(self.entered.clone());
        }
    }

    /// `Sim::late`: its death when its time came (once out of its collective),
    /// and the news of others' deaths landing here now and then.
    fn late_deaths(&mut self, me: usize, rng: &mut StdRng) {
        let Some((who, at)) = self.late.clone() else { return };
        if !self.p[me].dead && who.contains(&me) && self.events >= at && self.p[me].inside.is_none() {
            let pc = self.p[me].pc;
            let q = &mut self.p[me];
            q.dead = true;
            q.joined = q.mine[..pc].iter().copied().collect();
            self.dead.push(me);
            self.heard[me] = (0..self.p.len()).map(|p| p == me).collect();
            self.events += 1;
        }
        for d in self.dead.clone() {
            if !self.heard[d][me] && rng.gen_bool(0.3) {
                self.heard[d][me] = true;
                self.events += 1;
            }
        }
    }

    /// Once nobody is alive and it owes nothing it could join: leaves (at once
    /// by the rule before), or takes the next step of Turn::abandon. True if
    /// it acted.
    fn leave(&mut self, me: usize, rng: &mut StdRng) -> bool {
        if self.all_die.is_none() || !self.nobody_alive() {
            return false;
        }
        if self.leave_at_once {
            self.p[me].gone = true;
            self.events += 1;
            return true;
        }
        if !self.owed(me).is_empty() {
            return false;
        }
        let mine: Vec<u64> = (0..self.w.comms.len()).filter(|c| self.w.comms[*c].contains(&me)).map(|c| c as u64).collect();
        let q = &mut self.p[me];
        let read = std::mem::take(&mut q.read);
        let fresh = q.cycle_epoch == q.epoch;
        match q.turn.abandon(fresh.then_some(&read[..]), &mine) {
            Leave::Go => {
                q.gone = true;
                self.events += 1;
                return true;
            }
            Leave::Publish(s) => {
                q.state = Some(s);
                q.epoch += 1;
                self.events += 1;
            }
            Leave::Read => {}
        }
        self.start_cycle(me, rng);
        true
    }

    fn step(&mut self, me: usize, rng: &mut StdRng) {
        self.deaths_and_reads(me, rng);
        if self.p[me].gone {
            return;
        }
        if let Some(g) = self.p[me].inside {
            if !self.done[g] && !self.returns_early(me, g) {
                return;
            }
            self.p[me].inside = None;
            self.events += 1;
            if !self.p[me].dead {
                self.p[me].pc += 1;
            } else if self.turns && !self.no_turn.contains(&g) {
                let d = self.p[me].turn.left();
                self.apply(me, d, rng);
            }
            return;
        }
        if !self.p[me].dead {
            if let Some(&g) = self.p[me].mine.get(self.p[me].pc) {
                self.enter(me, g);
            }
            return;
        }
        if !self.turns {
            if let Some(&g) = self.owed(me).choose(rng) {
                self.p[me].joined.insert(g);
                self.enter(me, g);
            }
            return;
        }
        if let Some(g) = self.owed(me).into_iter().find(|g| self.no_turn.contains(g)) {
            self.p[me].joined.insert(g);
            self.enter(me, g);
            if !self.wait_outside_turns {
                self.p[me].inside = None; // a request, progressed by the serve loop
            }
            return;
        }
        // One RMA read completes per step; then the decision.
        if let Some(j) = self.p[me].to_read.pop() {
            let s = self.p[j].state.unwrap_or(State::Idle);
            self.p[me].read.push(s);
            self.p[me].last[j] = Some(s);
            return;
        }
        if self.leave(me, rng) {
            return;
        }
        let owed = self.owed(me);
        if !owed.is_empty() && self.told_first && !self.heard[me].iter().all(|h| *h) {
            return;
        }
        let ids: Vec<u64> = owed.iter().map(|g| self.w.prog[*g] as u64).collect();
        let read = std::mem::take(&mut self.p[me].read);
        let d = self.p[me].turn.decide(&ids, &read);
        self.apply(me, d, rng);
        if let Decision::Enter(c) = d {
            let g = owed[ids.iter().position(|x| *x == c).expect("owed")];
            self.p[me].joined.insert(g);
            self.enter(me, g);
        }
    }

    /// Publishes what the decision says and starts the next read cycle.
    fn apply(&mut self, me: usize, d: Decision, rng: &mut StdRng) {
        match d {
            Decision::Publish(s) => self.p[me].state = Some(s),
            Decision::Enter(c) => self.p[me].state = Some(State::In(c as u64)),
            Decision::Wait => {}
        }
        if d != Decision::Wait {
            self.p[me].epoch += 1;
            self.events += 1;
        }
        self.start_cycle(me, rng);
    }

    fn start_cycle(&mut self, me: usize, rng: &mut StdRng) {
        self.p[me].cycle_epoch = self.p[me].epoch;
        // The ranks dead by its window when the cycle starts.
        let mut peers: Vec<usize> = self.dead.iter().copied().filter(|j| *j != me && self.heard[*j][me]).collect();
        peers.shuffle(rng);
        self.p[me].to_read = peers;
        self.p[me].read.clear();
    }

    /// Dead ranks inside joins of at most one communicator (counted in
    /// `clashes` when news lands late, else a panic).
    fn check_one_inside(&mut self) {
        let ins: HashSet<usize> = self.dead.iter().filter_map(|d| self.p[*d].inside.map(|g| self.w.prog[g])).collect();
        if ins.len() > 1 && (self.late.is_some() || self.wait_outside_turns) {
            self.clashes += 1;
            return;
        }
        assert!(ins.len() <= 1, "dead ranks inside joins of communicators {ins:?}");
    }

    /// Runs until nothing happens for a while; true if every live process finished.
    fn run(&mut self, rng: &mut StdRng) -> bool {
        let n = self.p.len();
        let mut order: Vec<usize> = (0..n).collect();
        let mut quiet = 0;
        // A dead rank's read cycle takes one step per other dead rank.
        // (A bound on rounds: dead ranks that wait for each other's turns while
        // publishing again and again are as stuck as quiet ones.)
        let mut rounds = 0;
        while quiet < 8 * self.dead.len() + 40 && rounds < 20_000 {
            rounds += 1;
            let before = self.events;
            order.shuffle(rng);
            for &r in &order {
                for _ in 0..rng.gen_range(1..3) {
                    self.step(r, rng);
                    if self.turns {
                        self.check_one_inside();
                    }
                }
            }
            quiet = if self.events == before { quiet + 1 } else { 0 };
        }
        self.p.iter().all(|p| p.dead || p.pc == p.mine.len())
    }
}

/// Random overlapping communicators over n processes, each of 2..=max members,
/// plus the world; every process is in the world and a few others.
fn world(n: usize, comms: usize, len: usize, rng: &mut StdRng) -> World {
    let mut cs = vec![(0..n).collect::<Vec<_>>()];
    for _ in 0..comms {
        let k = rng.gen_range(2..=n.clamp(2, 12));
        let mut m: Vec<usize> = (0..n).collect();
        m.shuffle(rng);
        m.truncate(k);
        m.sort_unstable();
        cs.push(m);
    }
    let prog = (0..len).map(|_| rng.gen_range(0..cs.len())).collect();
    World { comms: cs, prog }
}

fn some_dead(n: usize, k: usize, rng: &mut StdRng) -> Vec<usize> {
    let mut all: Vec<usize> = (0..n).collect();
    all.shuffle(rng);
    all.truncate(k);
    all
}

#[test]
fn the_thesis_case_hangs_without_turns_and_completes_with_them() {
    // Ranks 2 and 3 dead; comm 1 = {0, 2, 3}, comm 2 = {1, 2, 3}; rank 0 runs
    // comm 1's collective while rank 1 runs comm 2's.
    let w = World { comms: vec![vec![0, 1, 2, 3], vec![0, 2, 3], vec![1, 2, 3]], prog: vec![1, 2] };
    let mut hung = 0;
    for seed in 0..40 {
        let mut rng = StdRng::seed_from_u64(seed);
        let mut s = Sim::new(&w, &[2, 3], false);
        hung += usize::from(!s.run(&mut rng));
        let mut s = Sim::new(&w, &[2, 3], true);
        assert!(s.run(&mut rng), "seed {seed}: with turns");
    }
    assert!(hung > 0, "without turns it never hung in 40 schedules");
}

/// Issue 53: a join that takes no turn (a dead rank's `MPI_Comm_idup`; before
/// issue 53 also its part of a shrink's `MPI_Comm_create_group`, which now takes
/// a turn like any blocking join) must not hold the dead rank. Ranks 2 and 3 dead; A = {0, 2, 3}, B = {1, 2, 3}; rank 1
/// enters B's collective at once, rank 0 A's idup after k collectives of its
/// own. Waited for where it is started, the idup hangs some schedules (rank 3
/// inside B's collective in its turn, which needs rank 2; rank 2, not yet in,
/// inside the idup, which needs rank 3); kept in flight, none. Then random
/// worlds with every fourth collective such a join.
#[test]
fn a_join_without_a_turn_is_kept_in_flight() {
    let run = |w: &World, dead: &[usize], wait: bool, no_turn: HashSet<usize>, rng: &mut StdRng| {
        let mut s = Sim::new(w, dead, true);
        s.no_turn = no_turn;
        s.wait_outside_turns = wait;
        s.run(rng)
    };
    let mut hung = 0;
    for seed in 0..200 {
        let mut rng = StdRng::seed_from_u64(seed);
        let k = 1 + seed as usize % 4;
        // Collective 0: B's; 1..=k: rank 0's own; k + 1: A's idup.
        let prog = [vec![2], vec![3; k], vec![1]].concat();
        let w = World { comms: vec![vec![0, 1, 2, 3], vec![0, 2, 3], vec![1, 2, 3], vec![0]], prog };
        hung += usize::from(!run(&w, &[2, 3], true, [k + 1].into(), &mut rng));
        assert!(run(&w, &[2, 3], false, [k + 1].into(), &mut rng), "seed {seed}: kept in flight");
    }
    eprintln!("the idup waited for outside the turns: {hung} of 200 schedules hung; kept in flight: none");
    assert!(hung > 0, "waited for outside the turns, it never hung");
    let mut rng = StdRng::seed_from_u64(53);
    let (mut runs, mut hung) = (0, 0);
    for n in [4usize, 6, 8] {
        for _ in 0..10 {
            let w = world(n, 4, 16, &mut rng);
            let dead = some_dead(n, rng.gen_range(2..=3), &mut rng);
            let every4: HashSet<usize> = (0..w.prog.len()).filter(|g| g % 4 == 0).collect();
            assert!(run(&w, &dead, false, every4.clone(), &mut rng), "n {n}, dead {dead:?}, comms {:?}, prog {:?}", w.comms, w.prog);
            hung += usize::from(!run(&w, &dead, true, every4, &mut rng));
            runs += 1;
        }
    }
    eprintln!("{runs} random worlds complete with the idups in flight; waited for, {hung} hung");
}

#[test]
fn small_worlds_every_pair_and_triple_of_deaths() {
    let mut rng = StdRng::seed_from_u64(36);
    let (mut runs, mut hung_without) = (0, 0);
    for n in [4usize, 6, 8] {
        for _ in 0..6 {
            let w = world(n, 4, 16, &mut rng);
            for a in 0..n {
                for b in a + 1..n {
                    let mut dead = vec![a, b];
                    if rng.gen_bool(0.3) {
                        dead.push((b + 1 + rng.gen_range(0..n - 1)) % n);
                        dead.dedup();
                    }
                    let mut s = Sim::new(&w, &dead, true);
                    assert!(s.run(&mut rng), "n {n}, dead {dead:?}, comms {:?}, prog {:?}", w.comms, w.prog);
                    let mut s = Sim::new(&w, &dead, false);
                    hung_without += usize::from(!s.run(&mut rng));
                    runs += 1;
                }
            }
        }
    }
    eprintln!("{runs} worlds complete with turns; without, {hung_without} hung");
    assert!(hung_without > 0);
}

#[test]
fn thousands_of_ranks() {
    let mut rng = StdRng::seed_from_u64(3636);
    for (n, comms, len, dead) in [(256usize, 40usize, 60usize, 12usize), (2048, 120, 80, 30), (4096, 200, 60, 60)] {
        let w = world(n, comms, len, &mut rng);
        let d = some_dead(n, dead, &mut rng);
        let mut s = Sim::new(&w, &d, true);
        assert!(s.run(&mut rng), "n {n}: {dead} dead");
    }
}

/// Runs world `w` with `dead` dead from the start and everyone else dying after
/// `at` events; the dead ranks left inside a join at the end (panics if one
/// neither left nor is inside one).
fn all_die(w: &World, dead: &[usize], at: usize, at_once: bool, rng: &mut StdRng) -> usize {
    let mut s = Sim::new(w, dead, true);
    s.all_die = Some(at);
    s.leave_at_once = at_once;
    s.run(rng);
    let stuck = s.p.iter().filter(|p| p.inside.is_some_and(|g| !s.done[g])).count();
    for (r, p) in s.p.iter().enumerate() {
        assert!(p.gone || p.inside.is_some(), "rank {r} neither left nor is inside a join (at {at}, dead {dead:?}): owed {:?} state {:?} turn {:?} last {:?} comms {:?} prog {:?} entered {:?} joined {:?}", s.owed(r), p.state, p.turn, p.last, w.comms, w.prog, s.entered, p.joined);
    }
    stuck
}

#[test]
fn everyone_dies_and_every_dead_rank_leaves() {
    let mut rng = StdRng::seed_from_u64(3539);
    let (mut runs, mut stuck_before) = (0, 0);
    for n in [3usize, 4, 6, 8] {
        for _ in 0..12 {
            let w = world(n, 3, 12, &mut rng);
            for _ in 0..8 {
                let k = rng.gen_range(1..n);
                let dead = some_dead(n, k, &mut rng);
                let at = rng.gen_range(0..3 * w.prog.len());
                let stuck = all_die(&w, &dead, at, false, &mut rng);
                assert_eq!(stuck, 0, "n {n}, dead {dead:?}, dying at {at}, comms {:?}, prog {:?}", w.comms, w.prog);
                for _ in 0..5 {
                    stuck_before += usize::from(all_die(&w, &dead, at, true, &mut rng) > 0);
                }
                runs += 1;
            }
        }
    }
    eprintln!("{runs} jobs in which everyone dies: every dead rank leaves; by the rule before, {stuck_before} of {} schedules left one inside", 5 * runs);
    assert!(stuck_before > 0, "the rule before never left a dead rank inside a join");
}

#[test]
fn everyone_dies_among_hundreds() {
    let mut rng = StdRng::seed_from_u64(3540);
    for (n, comms, len, dead) in [(64usize, 12usize, 30usize, 8usize), (256, 30, 30, 20)] {
        let w = world(n, comms, len, &mut rng);
        for _ in 0..3 {
            let d = some_dead(n, dead, &mut rng);
            let at = rng.gen_range(0..2 * len);
            assert_eq!(all_die(&w, &d, at, false, &mut rng), 0, "n {n}");
        }
    }
}

/// Runs world `w` with `dead` dead from the start and `later` dying after `at`
/// events, their news landing late: (every live process finished, clashes).
fn late_news(w: &World, dead: &[usize], later: &[usize], at: usize, told_first: bool, rng: &mut StdRng) -> (bool, usize) {
    let mut s = Sim::new(w, dead, true);
    s.late = Some((later.to_vec(), at));
    s.told_first = told_first;
    let finished = s.run(rng);
    (finished, s.clashes)
}

#[test]
fn news_that_lands_late_needs_every_process_told_before_a_turn() {
    let mut rng = StdRng::seed_from_u64(3641);
    let (mut runs, mut clashed_before, mut hung_before) = (0, 0, 0);
    for n in [4usize, 6, 8] {
        for _ in 0..10 {
            let w = world(n, 4, 16, &mut rng);
            for _ in 0..10 {
                let k = rng.gen_range(1..n - 1);
                let mut all = some_dead(n, k + 1, &mut rng);
                let later = all.split_off(rng.gen_range(1..=k));
                let at = rng.gen_range(0..2 * w.prog.len());
                let (finished, clashes) = late_news(&w, &all, &later, at, true, &mut rng);
                assert!(finished && clashes == 0, "n {n}, dead {all:?}, later {later:?} at {at}: finished {finished}, {clashes} clashes; comms {:?} prog {:?}", w.comms, w.prog);
                for _ in 0..3 {
                    let (finished, clashes) = late_news(&w, &all, &later, at, false, &mut rng);
                    clashed_before += usize::from(clashes > 0);
                    hung_before += usize::from(!finished);
                }
                runs += 1;
            }
        }
    }
    eprintln!("{runs} jobs with deaths whose news lands late: no clash, all finish; turns asked before everyone was told: {clashed_before} of {} schedules clashed, {hung_before} hung", 3 * runs);
    assert!(clashed_before > 0, "asking before everyone was told never clashed");
}

#[test]
fn news_that_lands_late_among_thousands() {
    let mut rng = StdRng::seed_from_u64(3642);
    for (n, comms, len, dead, later) in [(256usize, 40usize, 60usize, 8usize, 8usize), (2048, 120, 60, 20, 20)] {
        let w = world(n, comms, len, &mut rng);
        let mut d = some_dead(n, dead + later, &mut rng);
        let l = d.split_off(dead);
        let (finished, clashes) = late_news(&w, &d, &l, len / 2, true, &mut rng);
        assert!(finished && clashes == 0, "n {n}: finished {finished}, {clashes} clashes");
    }
}
