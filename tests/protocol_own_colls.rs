//! MPIFT's own collectives, the barrier (`protocol::dissem`) and the small
//! allreduce (`protocol::recdbl`), in a seeded in-memory world: thousands of
//! processes, overlapping communicators, collectives run in one global order
//! (each process runs those of its communicators), messages in FIFO channels per
//! ordered pair of processes and per collective kind (as MPI matches a receive
//! from one source and tag; the two kinds have their own tags), the next process
//! to step drawn at random, communicators revoked at random times and each
//! member learning of it at its own later time.
//!
//! A member that abandons a collective may find that its cancelled receive had
//! matched a message already (MPI_Test_cancelled false): that message is sorted.
//!
//! Checked: a collective that completes at a member had been entered by every
//! member (safety); an allreduce that completes gives every member its members'
//! values in member order (string concatenation: not commutative); no process
//! ever waits for ever (liveness: every collective completes or is abandoned on a
//! revoked communicator); a message is taken only by its own collective
//! (stamps); nothing is left kept once every revoke is known.

use mpift::protocol::dissem::*;
use mpift::protocol::recdbl::{Plan, Step};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::{HashMap, HashSet, VecDeque};

struct Comm {
    id: u64,
    members: Vec<u32>,
    revoked_at: Option<usize>,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Barrier,
    Allreduce,
}

#[derive(Default)]
struct Proc {
    /// Index into the global program.
    pc: usize,
    /// In a collective: (program index, step index, sent this step).
    cur: Option<(usize, usize, bool)>,
    seq: HashMap<u64, u64>,
    known_revoked: HashSet<u64>,
    /// One per kind (each kind its own tag).
    mailbox: [Mailbox<String>; 2],
    /// The allreduce's partial result.
    acc: String,
    completed: usize,
    abandoned: usize,
}

/// Step `i` of member `me` of `n` in a collective of `kind`: (send to, receive
/// from, the allreduce step), or None when done.
fn step_of(kind: Kind, me: usize, n: usize, i: usize) -> Option<(Option<usize>, Option<usize>, Option<Step>)> {
    match kind {
        Kind::Barrier => rounds(n).nth(i).map(|d| {
            let (to, from) = partners(me, n, d);
            (Some(to), Some(from), None)
        }),
        Kind::Allreduce => Plan::new(me, n).step(i).map(|s| match s {
            Step::HandOff { to } => (Some(to), Some(to), Some(s)),
            Step::TakeIn { from } => (None, Some(from), Some(s)),
            Step::Exchange { peer, .. } => (Some(peer), Some(peer), Some(s)),
            Step::GiveBack { to } => (Some(to), None, Some(s)),
        }),
    }
}

struct World {
    comms: Vec<Comm>,
    program: Vec<(usize, Kind)>,
    procs: Vec<Proc>,
    chan: HashMap<(u32, u32, usize), VecDeque<(Stamp, String)>>,
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
        let program: Vec<(usize, Kind)> = (0..ops)
            .map(|_| (rng.gen_range(0..comms.len()), if rng.gen_bool(0.5) { Kind::Barrier } else { Kind::Allreduce }))
            .collect();
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
            // Between collectives: the next one of a communicator this process is in.
            while self.procs[wi].pc < self.program.len() && self.rank_in(self.program[self.procs[wi].pc].0, w).is_none() {
                self.procs[wi].pc += 1;
            }
            let i = self.procs[wi].pc;
            if i >= self.program.len() {
                return false;
            }
            let c = self.program[i].0;
            let id = self.comms[c].id;
            let pr = &mut self.procs[wi];
            pr.acc = format!("{w},");
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
        let (c, kind) = self.program[i];
        let k = kind as usize;
        let (id, n) = (self.comms[c].id, self.comms[c].members.len());
        let me = self.rank_in(c, w).unwrap();
        let seq = self.procs[wi].seq[&id];
        let want = Stamp { id, seq };
        let member = |r: usize| self.comms[c].members[r];
        if self.procs[wi].known_revoked.contains(&id) {
            // Abandoned: ULFM returns MPI_ERR_REVOKED. The step's posted receive
            // may have matched a message before the cancel (every other time
            // here): it is sorted like any other, not dropped.
            if sent && (wi + i + round) % 2 == 0 {
                if let Some((_, Some(from), _)) = step_of(kind, me, n, round) {
                    let from = member(from);
                    if let Some((got, body)) = self.chan.get_mut(&(from, w, k)).and_then(|q| q.pop_front()) {
                        let known = self.procs[wi].known_revoked.clone();
                        let _ = self.procs[wi].mailbox[k].sort(from, got, want, |id| known.contains(&id), || body);
                    }
                }
            }
            let pr = &mut self.procs[wi];
            pr.cur = None;
            pr.pc += 1;
            pr.abandoned += 1;
            return true;
        }
        let Some((to, from, st)) = step_of(kind, me, n, round) else {
            // Every step done.
            let all = &self.entered[&(c, seq)];
            assert_eq!(all.len(), n, "{kind:?} #{seq} on comm {id} completed at {w} before every member entered");
            if kind == Kind::Allreduce {
                let want: String = self.comms[c].members.iter().map(|m| format!("{m},")).collect();
                assert_eq!(self.procs[wi].acc, want, "allreduce #{seq} on comm {id} at {w}");
            }
            let pr = &mut self.procs[wi];
            pr.cur = None;
            pr.pc += 1;
            pr.completed += 1;
            return true;
        };
        let (to, from) = (to.map(member), from.map(member));
        if !sent {
            if let Some(to) = to {
                let acc = self.procs[wi].acc.clone();
                self.chan.entry((w, to, k)).or_default().push_back((want, acc));
            }
            self.procs[wi].cur = Some((i, round, true));
            return true;
        }
        let Some(from) = from else {
            self.procs[wi].cur = Some((i, round + 1, false));
            return true;
        };
        let body = match self.procs[wi].mailbox[k].take(from, want) {
            Some(b) => b,
            None => {
                let Some((got, body)) = self.chan.get_mut(&(from, w, k)).and_then(|q| q.pop_front()) else {
                    return false;
                };
                let known = self.procs[wi].known_revoked.clone();
                match self.procs[wi].mailbox[k].sort(from, got, want, |id| known.contains(&id), || body.clone()) {
                    Sorted::Mine => body,
                    Sorted::Stale | Sorted::Kept => return true,
                }
            }
        };
        let pr = &mut self.procs[wi];
        match st {
            Some(Step::HandOff { .. }) => pr.acc = body,
            Some(Step::TakeIn { .. }) | Some(Step::Exchange { peer_first: true, .. }) => pr.acc = body + &pr.acc,
            Some(Step::Exchange { peer_first: false, .. }) => pr.acc.push_str(&body),
            _ => {}
        }
        pr.cur = Some((i, round + 1, false));
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
        for m in pr.mailbox.iter_mut() {
            m.purge(|id| known.contains(&id));
        }
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
            assert!(pr.cur.is_none(), "process {w} hangs in a collective (program index {})", pr.pc);
            for m in &pr.mailbox {
                assert!(m.is_empty(), "process {w} keeps {} messages no collective took", m.len());
            }
        }
    }
}

#[test]
fn no_revoke_every_collective_completes_everywhere() {
    for seed in 0..20u64 {
        let mut rng = StdRng::seed_from_u64(seed);
        let p = [2, 3, 5, 8, 13, 64][seed as usize % 6];
        let mut w = World::new(&mut rng, p, 4, 40, 0);
        w.run(&mut rng, 0.0);
        assert!(w.procs.iter().all(|p| p.abandoned == 0), "seed {seed}: a collective was abandoned without a revoke");
        let total: usize = w.program.iter().map(|(c, _)| w.comms[*c].members.len()).sum();
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
