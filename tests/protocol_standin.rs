//! Dead ranks standing in for themselves in MPIFT's own collectives
//! (protocol::part, driven in production by engine::join::standin), in a seeded
//! in-memory world: up to thousands of processes, overlapping communicators, one
//! global order of barriers and small allreduces (each process runs those of its
//! communicators, one at a time, as a program does), deaths before any of a
//! process's collectives. A dead rank joins a collective once every live member
//! of its communicator has entered it (engine::dead::zombie's rule), in its
//! communicator's order; the next process to step is drawn at random.
//!
//! Two dead-rank models:
//! - `Parts` (production since issue 35): a dead rank starts its part in every
//!   collective it may join and advances all of them at each step;
//! - `OneAtATime` (before): it runs one part to the end before it starts the next,
//!   taking the first joinable one in the global order.
//!
//! Checked: with `Parts` every live process finishes its program and every part
//! ends, for every single death at every step and for random pairs at small sizes,
//! and for random deaths at thousands of processes; the one-at-a-time model hangs
//! on the thesis's overlapping-communicator case, which `Parts` completes.

use mpift::protocol::dissem::Stamp;
use mpift::protocol::part::{Kind, Part};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use std::collections::HashSet;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Model {
    Parts,
    OneAtATime,
}

struct World {
    /// World ranks of each communicator's members.
    comms: Vec<Vec<u32>>,
    /// The program: (communicator, kind) in global order.
    prog: Vec<(usize, Kind)>,
}

impl World {
    fn rank_in(&self, c: usize, w: u32) -> Option<usize> {
        self.comms[c].iter().position(|m| *m == w)
    }
    /// Stamp of global collective g: (communicator, its number there).
    fn stamp(&self, g: usize) -> Stamp {
        let c = self.prog[g].0;
        let seq = self.prog[..=g].iter().filter(|(x, _)| *x == c).count() as u64;
        Stamp { id: c as u64, seq }
    }
}

#[derive(Default)]
struct Proc {
    /// Global indices of the collectives of its communicators, in order.
    mine: Vec<usize>,
    pc: usize,
    cur: Option<(usize, Part)>,
    /// Dies before entering its `die_at`-th collective.
    die_at: Option<usize>,
    dead: bool,
    /// Dead: how many of `mine` it had entered alive, those it joined since,
    /// and its running parts.
    joined: usize,
    done: HashSet<usize>,
    parts: Vec<(usize, Part)>,
    mailbox: HashSet<(u32, Stamp)>,
}

struct Sim<'w> {
    w: &'w World,
    procs: Vec<Proc>,
    /// entered[g]: live members (world ranks) that entered collective g.
    entered: Vec<HashSet<u32>>,
    model: Model,
    /// Sends and receives so far (a step that changes it moved).
    events: usize,
}

impl<'w> Sim<'w> {
    fn new(w: &'w World, deaths: &[(u32, usize)], model: Model) -> Sim<'w> {
        let n = w.comms[0].len();
        let mut procs: Vec<Proc> = (0..n).map(|_| Proc::default()).collect();
        for (g, (c, _)) in w.prog.iter().enumerate() {
            for m in &w.comms[*c] {
                procs[*m as usize].mine.push(g);
            }
        }
        for (r, k) in deaths {
            procs[*r as usize].die_at = Some(*k);
        }
        Sim { w, procs, entered: vec![HashSet::new(); w.prog.len()], model, events: 0 }
    }

    /// Advances `part` of process `me` in collective g; true once done. Counts
    /// every send and every message taken in `events`.
    fn advance(&mut self, me: u32, g: usize, part: &mut Part) -> bool {
        let c = self.w.prog[g].0;
        let st = part.stamp;
        let members = &self.w.comms[c];
        let mut out = Vec::new();
        let mut taken = 0;
        let mb = &mut self.procs[me as usize].mailbox;
        let done = part.advance(
            |from| {
                let got = mb.remove(&(members[from], st));
                taken += usize::from(got);
                got
            },
            |to| out.push(members[to]),
        );
        self.events += taken + out.len();
        for to in out {
            assert!(self.procs[to as usize].mailbox.insert((me, st)), "a second message {me} -> {to} for {st:?}");
        }
        done
    }

    fn part(&self, me: u32, g: usize) -> Part {
        let (c, kind) = self.w.prog[g];
        let r = self.w.rank_in(c, me).expect("a member");
        Part::new(self.w.stamp(g), kind, r, self.w.comms[c].len())
    }

    /// Every live member of collective g's communicator entered it.
    fn joinable(&self, g: usize) -> bool {
        let c = self.w.prog[g].0;
        self.w.comms[c].iter().all(|m| self.procs[*m as usize].dead || self.entered[g].contains(m))
    }

    /// One step of process `me`; true if anything changed.
    fn step(&mut self, me: u32) -> bool {
        if self.procs[me as usize].dead {
            return self.step_dead(me);
        }
        let p = &mut self.procs[me as usize];
        let Some((g, mut part)) = p.cur.take() else {
            if p.pc == p.mine.len() {
                return false;
            }
            if p.die_at == Some(p.pc) {
                p.dead = true;
                p.joined = p.pc;
                return true;
            }
            let g = p.mine[p.pc];
            self.entered[g].insert(me);
            let part = self.part(me, g);
            self.procs[me as usize].cur = Some((g, part));
            return true;
        };
        let before = self.events;
        if self.advance(me, g, &mut part) {
            self.procs[me as usize].pc += 1;
            return true;
        }
        self.procs[me as usize].cur = Some((g, part));
        self.events != before
    }

    fn step_dead(&mut self, me: u32) -> bool {
        let mut moved = false;
        // Joins: on each communicator its collectives in order, communicators
        // independently (engine::dead::zombie::next_ready); one at a time joins only
        // with no part running, the first joinable one in the global order.
        let mut blocked: HashSet<usize> = HashSet::new();
        for i in self.procs[me as usize].joined..self.procs[me as usize].mine.len() {
            let p = &self.procs[me as usize];
            let g = p.mine[i];
            let c = self.w.prog[g].0;
            if p.done.contains(&g) || blocked.contains(&c) {
                continue;
            }
            if self.model == Model::OneAtATime && !p.parts.is_empty() {
                break;
            }
            if !self.joinable(g) {
                blocked.insert(c);
                continue;
            }
            let part = self.part(me, g);
            let p = &mut self.procs[me as usize];
            p.done.insert(g);
            p.parts.push((g, part));
            moved = true;
        }
        let mut parts = std::mem::take(&mut self.procs[me as usize].parts);
        let (before, running) = (self.events, parts.len());
        parts.retain_mut(|(g, part)| !self.advance(me, *g, part));
        moved |= self.events != before || parts.len() != running;
        self.procs[me as usize].parts = parts;
        moved
    }

    /// Runs until nothing moves; true if every live process finished and every
    /// part ended.
    fn run(&mut self, rng: &mut StdRng) -> bool {
        let n = self.procs.len() as u32;
        let mut order: Vec<u32> = (0..n).collect();
        let mut idle_sweeps = 0;
        while idle_sweeps < 2 {
            order.shuffle(rng);
            let mut moved = false;
            for &r in &order {
                // Some processes take several steps in a row.
                for _ in 0..rng.gen_range(1..4) {
                    moved |= self.step(r);
                }
            }
            idle_sweeps = if moved { 0 } else { idle_sweeps + 1 };
        }
        self.procs.iter().all(|p| if p.dead { p.parts.is_empty() && p.joined + p.done.len() == p.mine.len() } else { p.pc == p.mine.len() })
    }
}

/// n processes; communicators: the world, two halves, three strided groups
/// (r mod 3), and blocks of 4: each process is in four or five of them.
fn overlapping(n: usize) -> Vec<Vec<u32>> {
    let all: Vec<u32> = (0..n as u32).collect();
    let mut comms = vec![all.clone()];
    comms.push(all[..n / 2].to_vec());
    comms.push(all[n / 2..].to_vec());
    for k in 0..3 {
        comms.push(all.iter().copied().filter(|r| *r as usize % 3 == k).collect());
    }
    comms.extend(all.chunks(4).map(|c| c.to_vec()));
    comms.retain(|c| !c.is_empty());
    comms
}

fn program(comms: usize, len: usize, rng: &mut StdRng) -> Vec<(usize, Kind)> {
    (0..len)
        .map(|_| (rng.gen_range(0..comms), if rng.gen_bool(0.5) { Kind::Barrier } else { Kind::Allreduce }))
        .collect()
}

#[test]
fn thesis_case_one_at_a_time_hangs_parts_complete() {
    // Comm 0: the world (4). Comm 1: {0, 2, 3}; comm 2: {1, 2, 3}. Ranks 2 and 3
    // die at once; rank 0 runs a barrier on comm 1, rank 1 a barrier on comm 2.
    // Rank 1 enters first: rank 3 finds comm 2's barrier joinable and starts it;
    // then rank 0 enters, and rank 2 takes comm 1's (first in the global order).
    let w = World { comms: vec![vec![0, 1, 2, 3], vec![0, 2, 3], vec![1, 2, 3]], prog: vec![(1, Kind::Barrier), (2, Kind::Barrier)] };
    for model in [Model::OneAtATime, Model::Parts] {
        let mut s = Sim::new(&w, &[(2, 0), (3, 0)], model);
        s.step(2);
        s.step(3);
        s.step(1);
        s.step(1);
        s.step(3);
        s.step(0);
        s.step(0);
        s.step(2);
        let mut rng = StdRng::seed_from_u64(1);
        let ok = s.run(&mut rng);
        match model {
            Model::OneAtATime => assert!(!ok, "one at a time: expected the hang"),
            Model::Parts => assert!(ok, "parts: every collective completes"),
        }
    }
}

#[test]
fn every_single_death_and_random_pairs_small() {
    let mut rng = StdRng::seed_from_u64(35);
    let (mut runs, mut hung_one_at_a_time) = (0, 0);
    for n in [4usize, 5, 8, 12] {
        let w = World { comms: overlapping(n), prog: vec![] };
        let prog = program(w.comms.len(), 24, &mut rng);
        let w = World { prog, ..w };
        let steps = |r: usize| w.prog.iter().filter(|(c, _)| w.comms[*c].contains(&(r as u32))).count();
        for r in 0..n {
            for k in 0..=steps(r) {
                let mut s = Sim::new(&w, &[(r as u32, k)], Model::Parts);
                assert!(s.run(&mut rng), "n {n}: rank {r} dead before its collective {k}");
                runs += 1;
            }
        }
        for _ in 0..300 {
            let (a, b) = (rng.gen_range(0..n), rng.gen_range(0..n));
            if a == b {
                continue;
            }
            let d = [(a as u32, rng.gen_range(0..=steps(a))), (b as u32, rng.gen_range(0..=steps(b)))];
            let mut s = Sim::new(&w, &d, Model::Parts);
            assert!(s.run(&mut rng), "n {n}: deaths {d:?}");
            runs += 1;
            let mut s = Sim::new(&w, &d, Model::OneAtATime);
            hung_one_at_a_time += usize::from(!s.run(&mut rng));
        }
    }
    eprintln!("{runs} runs with parts, all complete; one at a time hung {hung_one_at_a_time} of the pairs");
    assert!(runs > 1000, "{runs} runs");
    // The same random pairs find the class the parts remove.
    assert!(hung_one_at_a_time > 0, "the pairs never caught the one-at-a-time hang");
}

#[test]
fn thousands_of_ranks_many_deaths() {
    let mut rng = StdRng::seed_from_u64(3535);
    for (n, deaths, len) in [(64usize, 6usize, 40usize), (512, 20, 16), (2048, 40, 8), (4096, 100, 6)] {
        let comms = overlapping(n);
        let prog = program(comms.len().min(8), len, &mut rng);
        let w = World { comms, prog };
        for round in 0..3 {
            let steps = |r: usize| w.prog.iter().filter(|(c, _)| w.comms[*c].contains(&(r as u32))).count();
            let mut d: Vec<(u32, usize)> = Vec::new();
            while d.len() < deaths {
                let r = rng.gen_range(0..n) as u32;
                if !d.iter().any(|x| x.0 == r) {
                    d.push((r, rng.gen_range(0..=steps(r as usize))));
                }
            }
            let mut s = Sim::new(&w, &d, Model::Parts);
            assert!(s.run(&mut rng), "n {n} round {round}: {} deaths", d.len());
        }
    }
}

