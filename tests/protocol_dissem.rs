//! MPIFT's own barrier (`protocol::dissem`) in a seeded in-memory world: thousands
//! of processes, overlapping communicators, barriers run in one global order
//! (each process runs those of its communicators), messages in FIFO channels per
//! ordered pair of processes (as MPI matches a receive from one source and tag),
//! the next process to step drawn at random, communicators revoked at random
//! times and each member learning of it at its own later time.
//!
//! A member that abandons a barrier may find that its cancelled receive had
//! matched a message already (MPI_Test_cancelled false): that message is sorted.
//!
//! Checked: a barrier that completes at a member had been entered by every member
//! (safety); no process ever waits for ever (liveness: every barrier completes or
//! is abandoned on a revoked communicator); a message is taken only by its own
//! barrier (stamps); nothing is left kept once every revoke is known.

use mpift::protocol::dissem::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::{HashMap, HashSet, VecDeque};

struct Comm {
    id: u64,
    members: Vec<u32>,
    revoked_at: Option<usize>,
}

#[derive(Default)]
struct Proc {
    /// Index into the global program.
    pc: usize,
    /// In a barrier: (program index, round distance index, sent this round).
    cur: Option<(usize, usize, bool)>,
    seq: HashMap<u64, u64>,
    known_revoked: HashSet<u64>,
    mailbox: Mailbox,
    completed: usize,
    abandoned: usize,
}

struct World {
    comms: Vec<Comm>,
    program: Vec<usize>,
    procs: Vec<Proc>,
    chan: HashMap<(u32, u32), VecDeque<Stamp>>,
    /// (comm index, seq) -> members that entered.
    entered: HashMap<(usize, u64), HashSet<u32>>,
    /// Revoke news not delivered yet: (process, comm id).
    news: Vec<(u32, u64)>,
}

impl World {
    fn new(rng: &mut StdRng, p: usize, extra: usize, ops: usize, revokes: usize) -> World {
        let mut comms = vec![Comm { id: 1000, members: (0..p as u32).collect(), revoked_at: None }];
        for i in 0..extra {
            let size = rng.gen_range(2..=p.max(2));
            let mut all: Vec<u32> = (0..p as u32).collect();
            for j in 0..size {
                let k = rng.gen_range(j..p);
                all.swap(j, k);
            }
            let mut m = all[..size].to_vec();
            // Member order differs from world order, as after MPI_Comm_split keys.
            if rng.gen_bool(0.5) {
                m.sort();
            }
            comms.push(Comm { id: 2000 + i as u64, members: m, revoked_at: None });
        }
        let program: Vec<usize> = (0..ops).map(|_| rng.gen_range(0..comms.len())).collect();
        for _ in 0..revokes {
            let c = rng.gen_range(0..comms.len());
            comms[c].revoked_at.get_or_insert(rng.gen_range(0..ops.max(1)));
        }
        World { comms, program, procs: (0..p).map(|_| Proc::default()).collect(), chan: HashMap::new(), entered: HashMap::new(), news: vec![] }
    }

    fn rank_in(&self, c: usize, w: u32) -> Option<usize> {
        self.comms[c].members.iter().position(|m| *m == w)
    }

    /// One action of process `w`; true if it did something.
    fn step(&mut self, w: u32) -> bool {
        let wi = w as usize;
        // Revokes that fire when the first process reaches their point in the program.
        let pc = self.procs[wi].pc;
        for c in 0..self.comms.len() {
            if self.comms[c].revoked_at == Some(pc) {
                self.comms[c].revoked_at = None;
                let id = self.comms[c].id;
                for m in self.comms[c].members.clone() {
                    self.news.push((m, id));
                }
            }
        }
        let Some((i, round, sent)) = self.procs[wi].cur else {
            // Between barriers: the next one of a communicator this process is in.
            while self.procs[wi].pc < self.program.len() && self.rank_in(self.program[self.procs[wi].pc], w).is_none() {
                self.procs[wi].pc += 1;
            }
            let i = self.procs[wi].pc;
            if i >= self.program.len() {
                return false;
            }
            let c = self.program[i];
            let id = self.comms[c].id;
            let pr = &mut self.procs[wi];
            if pr.known_revoked.contains(&id) {
                pr.pc += 1; // refused: MPI_ERR_REVOKED
                pr.abandoned += 1;
                return true;
            }
            let s = pr.seq.entry(id).or_insert(0);
            *s += 1;
            let s = *s;
            assert!(self.entered.entry((c, s)).or_default().insert(w), "entered twice");
            pr.cur = Some((i, 0, false));
            return true;
        };
        let c = self.program[i];
        let (id, n) = (self.comms[c].id, self.comms[c].members.len());
        let me = self.rank_in(c, w).unwrap();
        let seq = self.procs[wi].seq[&id];
        let want = Stamp { id, seq };
        if self.procs[wi].known_revoked.contains(&id) {
            // Abandoned: ULFM returns MPI_ERR_REVOKED. The round's posted receive
            // may have matched a message before the cancel (every other time
            // here): it is sorted like any other, not dropped.
            if sent && (wi + i + round) % 2 == 0 {
                if let Some(d) = rounds(n).nth(round) {
                    let from = self.comms[c].members[partners(me, n, d).1];
                    if let Some(got) = self.chan.get_mut(&(from, w)).and_then(|q| q.pop_front()) {
                        let known = self.procs[wi].known_revoked.clone();
                        let _ = self.procs[wi].mailbox.sort(from, got, want, |id| known.contains(&id));
                    }
                }
            }
            let pr = &mut self.procs[wi];
            pr.cur = None;
            pr.pc += 1;
            pr.abandoned += 1;
            return true;
        }
        let Some(d) = rounds(n).nth(round) else {
            // Every round done.
            let all = &self.entered[&(c, seq)];
            assert_eq!(all.len(), n, "barrier #{seq} on comm {id} completed at {w} before every member entered");
            let pr = &mut self.procs[wi];
            pr.cur = None;
            pr.pc += 1;
            pr.completed += 1;
            return true;
        };
        let (to, from) = partners(me, n, d);
        let (to, from) = (self.comms[c].members[to], self.comms[c].members[from]);
        if !sent {
            self.chan.entry((w, to)).or_default().push_back(want);
            self.procs[wi].cur = Some((i, round, true));
            if self.procs[wi].mailbox.take(from, want) {
                self.procs[wi].cur = Some((i, round + 1, false));
            }
            return true;
        }
        let Some(got) = self.chan.get_mut(&(from, w)).and_then(|q| q.pop_front()) else {
            return false;
        };
        let known = self.procs[wi].known_revoked.clone();
        match self.procs[wi].mailbox.sort(from, got, want, |id| known.contains(&id)) {
            Sorted::Mine => self.procs[wi].cur = Some((i, round + 1, false)),
            Sorted::Stale | Sorted::Kept => {}
        }
        true
    }

    /// Delivers one piece of revoke news; true if there was one.
    fn learn(&mut self, rng: &mut StdRng) -> bool {
        if self.news.is_empty() {
            return false;
        }
        let (w, id) = self.news.swap_remove(rng.gen_range(0..self.news.len()));
        let pr = &mut self.procs[w as usize];
        pr.known_revoked.insert(id);
        let known = pr.known_revoked.clone();
        pr.mailbox.purge(|id| known.contains(&id));
        true
    }

    /// Runs to the end; panics on a hang.
    fn run(&mut self, rng: &mut StdRng, news_rate: f64) {
        let p = self.procs.len() as u32;
        let mut idle = 0usize;
        loop {
            let moved = if rng.gen_bool(news_rate) { self.learn(rng) } else { self.step(rng.gen_range(0..p)) };
            idle = if moved { 0 } else { idle + 1 };
            if idle > 40 * p as usize + 1000 {
                // Nothing moved for a while: done, or a full sweep proves a hang.
                let mut any = false;
                for w in 0..p {
                    any |= self.step(w);
                }
                while self.learn(rng) {
                    any = true;
                }
                if !any {
                    break;
                }
                idle = 0;
            }
        }
        for (w, pr) in self.procs.iter().enumerate() {
            assert!(pr.cur.is_none(), "process {w} hangs in a barrier (program index {})", pr.pc);
            assert!(pr.mailbox.is_empty(), "process {w} keeps {} messages no barrier took", pr.mailbox.len());
        }
    }
}

#[test]
fn no_revoke_every_barrier_completes_everywhere() {
    for seed in 0..20u64 {
        let mut rng = StdRng::seed_from_u64(seed);
        let p = [2, 3, 5, 8, 13, 64][seed as usize % 6];
        let mut w = World::new(&mut rng, p, 4, 40, 0);
        w.run(&mut rng, 0.0);
        assert!(w.procs.iter().all(|p| p.abandoned == 0), "seed {seed}: a barrier was abandoned without a revoke");
        let total: usize = w.program.iter().map(|c| w.comms[*c].members.len()).sum();
        let done: usize = w.procs.iter().map(|p| p.completed).sum();
        assert_eq!(done, total, "seed {seed}");
    }
}

#[test]
fn revokes_at_random_points_never_hang_or_cross() {
    for seed in 0..200u64 {
        let mut rng = StdRng::seed_from_u64(seed);
        let p = [2, 3, 4, 7, 16, 33][seed as usize % 6];
        let mut w = World::new(&mut rng, p, 5, 30, 3);
        let rate = [0.001, 0.05, 0.5][seed as usize % 3];
        w.run(&mut rng, rate);
    }
}

#[test]
fn thousands_of_processes() {
    for (seed, p) in [(1u64, 1000usize), (2, 2048), (3, 3000)] {
        let mut rng = StdRng::seed_from_u64(seed);
        let mut w = World::new(&mut rng, p, 6, 8, 2);
        w.run(&mut rng, 0.01);
        let done: usize = w.procs.iter().map(|p| p.completed + p.abandoned).sum();
        assert!(done > 0);
    }
}
