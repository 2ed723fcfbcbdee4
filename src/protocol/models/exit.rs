//! The end of a job with dead ranks, in memory (issue 52): live ranks run their
//! programs (protocol::models::exit_world) to `MPI_Finalize`, ranks die at
//! their kill points, and dead ranks serve (join with dummies what their
//! members' logs show, keep their own non-blocking collectives going) until
//! the exit rule (protocol::exit) lets them leave.
//!
//! What is modelled, as the engine does it:
//! - every process keeps a log of the collectives it entered (live, for real or
//!   as a fill-in); a dead rank reads the others' logs with reads that start at
//!   one of its steps and are served only at a step of the target (MPICH serves
//!   RMA only while the target is inside MPI), so what it knows lags;
//! - a death's news lands in each other process at a later step of the dead
//!   rank (its announcement, engine::dead::zombie::announce);
//! - a dead rank joins collective `s` of a communicator once every member has
//!   its news and every member it does not know dead is in its cache as having
//!   entered `s`; the join completes once every member is in;
//! - a live rank that reaches a collective doomed by a dead member it knows of
//!   may skip it (ULFM programs do: straight to the recovery) and then owes a
//!   fill-in, which it can make only once another member entered that
//!   collective (it learns of it from that member's log), at one of its later
//!   steps, or before its next collective on that communicator;
//! - at `MPI_Finalize` a live rank says it is finalizing ([`Finalize`] says
//!   when), then only serves reads; a dead rank that left sits in
//!   `MPI_Win_free`, also serving reads.
//!
//! What is not: the turns among dead ranks' blocking joins (each join here is
//! non-blocking; protocol::turns and tests/protocol_turns.rs check that part),
//! the ring's length (every entry stays readable: issue 53), revokes.
//!
//! Checked at the end: every live rank finalized, every dead rank left, and
//! every collective someone entered or joined complete (nobody is left inside a
//! join). A run with no progress for long is a hang.

use super::exit_world::{Event, World};
use crate::protocol::exit::{self, Comm, Exit, View};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::{HashMap, HashSet};

/// The rules the model runs with.
#[derive(Clone, Copy)]
pub struct Rules {
    /// The exit rule: [`exit::decide`], or a mutation.
    pub exit: fn(&View) -> exit::Exit,
    /// What a live rank does about its fill-ins in `MPI_Finalize`.
    pub finalize: Finalize,
    /// Live ranks skip doomed collectives (and owe fill-ins).
    pub skips: bool,
}

impl Rules {
    pub const NOW: Rules = Rules { exit: exit::decide, finalize: Finalize::TwoStages, skips: true };
}

/// A live rank's fill-ins at `MPI_Finalize`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Finalize {
    /// Says it is finalizing at once; fill-ins still owed are never made
    /// (calls::lifecycle::finalize before issue 52).
    AtOnce,
    /// Makes the fill-ins the others' logs show now, then says it is finalizing.
    SettleNow,
    /// Says its program is done (stage 1), keeps filling in while some other
    /// live member of a communicator with a known dead member has not said so,
    /// then says it is finalizing (stage 2): a member may enter the collective
    /// it skipped after it reached `MPI_Finalize`.
    TwoStages,
}

/// A dead rank's read of one process's log.
#[derive(Clone, Default)]
struct Read {
    /// Cycles started, and the number of the last one finished.
    started: u64,
    done: u64,
    in_flight: bool,
    /// Served: the log's length and the finalizing flag at the target's step.
    served: Option<(usize, bool)>,
    /// Entries read so far.
    upto: usize,
    /// The last finished read saw the target finalizing (its log is then read
    /// to the end: a finalizing process logs nothing more).
    final_seen: bool,
}

#[derive(Clone, Default)]
struct Proc {
    pc: usize,
    /// In `MPI_Finalize`, its program done (stage 1).
    program_done: bool,
    dead: bool,
    left: bool,
    finalizing: bool,
    /// (communicator, number) of each collective entered, in order.
    log: Vec<(usize, u64)>,
    /// Per communicator: collectives entered (alive) or joined (dead).
    entered: Vec<u64>,
    /// Per communicator: `entered` when it died.
    alive_entered: Vec<u64>,
    /// Its program's numbering per communicator (skipped ones included).
    numbered: Vec<u64>,
    /// Non-blocking collectives started and not seen complete.
    reqs: Vec<(usize, u64)>,
    /// Ops it skipped (their waits return at once).
    skipped: HashSet<usize>,
    fillins: Vec<(usize, u64)>,
    blocked: Option<(usize, u64)>,
    known_dead: Vec<bool>,
    // A dead rank's side:
    told: Vec<bool>,
    reads: Vec<Read>,
    /// (communicator, number) -> members seen in it.
    cache: HashMap<(usize, u64), HashSet<usize>>,
    pending: Vec<(usize, u64)>,
    /// Per rank known dead: the read cycle that must have finished.
    dead_need: Vec<u64>,
}

/// The outcome of one run.
#[derive(Debug)]
pub struct Run {
    pub steps: u64,
}

pub struct Sim<'w> {
    w: &'w World,
    rules: Rules,
    rng: StdRng,
    procs: Vec<Proc>,
    /// (communicator, number) -> members in it.
    inst: HashMap<(usize, u64), HashSet<usize>>,
    steps: u64,
    last_progress: u64,
}

impl<'w> Sim<'w> {
    pub fn new(w: &'w World, rules: Rules, seed: u64) -> Sim<'w> {
        let nc = w.comms.len();
        let p = Proc { entered: vec![0; nc], numbered: vec![0; nc], known_dead: vec![false; w.n], ..Proc::default() };
        Sim { w, rules, rng: StdRng::seed_from_u64(seed), procs: vec![p; w.n], inst: HashMap::new(), steps: 0, last_progress: 0 }
    }

    /// Runs to the end; Err says what hung or who is left inside what.
    pub fn run(mut self) -> Result<Run, String> {
        let idle_limit = 64 * self.w.n as u64 + 4000;
        loop {
            if self.procs.iter().all(|p| if p.dead { p.left } else { p.finalizing }) {
                return self.check_end();
            }
            if self.steps - self.last_progress > idle_limit {
                return Err(format!("hang after {} steps: {}", self.steps, self.describe()));
            }
            self.steps += 1;
            let r = self.rng.gen_range(0..self.w.n);
            self.serve_reads(r);
            if self.procs[r].dead {
                if !self.procs[r].left {
                    self.dead_step(r);
                }
            } else if !self.procs[r].finalizing {
                self.live_step(r);
            }
        }
    }

    fn progress(&mut self) {
        self.last_progress = self.steps;
    }

    fn complete(&self, cs: (usize, u64)) -> bool {
        self.inst.get(&cs).is_some_and(|m| m.len() == self.w.comms[cs.0].len())
    }

    fn join(&mut self, r: usize, cs: (usize, u64)) {
        self.inst.entry(cs).or_default().insert(r);
        self.progress();
    }

    /// A step of `r` serves the reads of its log in flight (some of them: RMA
    /// completes in its own time).
    fn serve_reads(&mut self, r: usize) {
        let snap = (self.procs[r].log.len(), self.procs[r].finalizing);
        for d in 0..self.w.n {
            if !self.procs[d].dead || self.procs[d].left || d == r {
                continue;
            }
            let serve = self.rng.gen_bool(0.7);
            let read = &mut self.procs[d].reads[r];
            if read.in_flight && read.served.is_none() && serve {
                read.served = Some(snap);
            }
        }
    }

    fn live_step(&mut self, r: usize) {
        if let Some(k) = self.fillin_ready(r).filter(|_| self.rng.gen_bool(0.3)) {
            let f = self.procs[r].fillins.remove(k);
            self.fill_in(r, f);
        }
        if self.procs[r].program_done {
            return self.finalize(r);
        }
        if let Some(cs) = self.procs[r].blocked {
            if !self.complete(cs) {
                return;
            }
            self.procs[r].blocked = None;
            self.procs[r].pc += 1;
            self.progress();
        }
        let pc = self.procs[r].pc;
        if self.w.death[r] == Some(pc) {
            return self.die(r);
        }
        let Some(&ev) = self.w.progs[r].get(pc) else { return self.finalize(r) };
        match ev {
            Event::Coll(i) => self.enter(r, i),
            Event::Wait(i) => {
                let cs = (self.w.ops[i].comm, self.w.seq[i]);
                if self.procs[r].skipped.contains(&i) || self.complete(cs) {
                    self.procs[r].reqs.retain(|x| *x != cs);
                    self.procs[r].pc += 1;
                    self.progress();
                }
            }
        }
    }

    /// An owed fill-in of `r` that another member entered (so `r` can see it).
    fn fillin_ready(&self, r: usize) -> Option<usize> {
        let entered = |cs: &(usize, u64)| self.w.comms[cs.0].iter().any(|m| *m != r && self.procs[*m].log.contains(cs));
        self.procs[r].fillins.iter().position(entered)
    }

    fn fill_in(&mut self, r: usize, cs: (usize, u64)) {
        self.procs[r].log.push(cs);
        self.procs[r].entered[cs.0] = cs.1;
        self.join(r, cs);
    }

    /// Live `r` enters op `i`, or skips it when a dead member it knows of never
    /// entered it (doomed).
    fn enter(&mut self, r: usize, i: usize) {
        let op = self.w.ops[i];
        let cs = (op.comm, self.w.seq[i]);
        // Fill-ins owed on this communicator first (the program's next call there).
        while let Some(k) = self.procs[r].fillins.iter().position(|f| f.0 == op.comm) {
            let f = self.procs[r].fillins.remove(k);
            self.fill_in(r, f);
        }
        self.procs[r].numbered[op.comm] = cs.1;
        let p = &self.procs[r];
        let doomed = self.w.comms[op.comm].iter().any(|&m| p.known_dead[m] && !self.procs[m].log.contains(&cs));
        if self.rules.skips && doomed && self.rng.gen_bool(0.3) {
            let p = &mut self.procs[r];
            p.fillins.push(cs);
            p.skipped.insert(i);
            p.pc += 1;
            return self.progress();
        }
        self.procs[r].log.push(cs);
        self.procs[r].entered[op.comm] = cs.1;
        self.join(r, cs);
        if op.nb {
            self.procs[r].reqs.push(cs);
            self.procs[r].pc += 1;
        } else if op.early_root.is_some_and(|root| root != r) || self.complete(cs) {
            self.procs[r].pc += 1;
        } else {
            self.procs[r].blocked = Some(cs);
        }
    }

    fn finalize(&mut self, r: usize) {
        if self.rules.finalize == Finalize::TwoStages {
            if !self.procs[r].program_done {
                self.procs[r].program_done = true;
                self.progress();
            }
            // Every other live member of a communicator with a known dead member
            // is done with its program (or known dead): no more real entries.
            let p = &self.procs[r];
            let troubled = (0..self.w.comms.len()).filter(|c| self.w.comms[*c].iter().any(|m| p.known_dead[*m]));
            let waits = troubled.flat_map(|c| self.w.comms[c].iter()).any(|m| *m != r && !p.known_dead[*m] && !self.procs[*m].program_done);
            if waits {
                return;
            }
        }
        if self.rules.finalize != Finalize::AtOnce {
            while let Some(k) = self.fillin_ready(r) {
                let f = self.procs[r].fillins.remove(k);
                self.fill_in(r, f);
            }
        }
        // The fill-ins still owed are never made.
        self.procs[r].fillins.clear();
        self.procs[r].finalizing = true;
        self.progress();
    }

    fn die(&mut self, r: usize) {
        let n = self.w.n;
        let incomplete: Vec<_> = self.procs[r].reqs.iter().copied().filter(|cs| !self.complete(*cs)).collect();
        let p = &mut self.procs[r];
        p.dead = true;
        p.reqs = incomplete;
        p.fillins.clear();
        p.alive_entered = p.entered.clone();
        p.known_dead[r] = true;
        p.told = vec![false; n];
        p.told[r] = true;
        p.reads = vec![Read::default(); n];
        p.dead_need = vec![0; n];
        self.progress();
    }

    fn dead_step(&mut self, d: usize) {
        let mut p = std::mem::take(&mut self.procs[d]);
        let mut moved = false;
        // Its news, to some of those that lack it.
        for q in 0..self.w.n {
            if !p.told[q] && self.rng.gen_bool(0.5) {
                p.told[q] = true;
                self.procs[q].known_dead[d] = true;
                moved = true;
            }
        }
        moved |= self.read_logs(d, &mut p);
        let before = p.reqs.len() + p.pending.len();
        p.reqs.retain(|cs| !self.complete(*cs));
        p.pending.retain(|cs| !self.complete(*cs));
        moved |= before != p.reqs.len() + p.pending.len();
        moved |= self.join_ready(d, &mut p);
        let comms: Vec<Comm> = (0..self.w.comms.len())
            .filter(|c| self.w.comms[*c].contains(&d))
            .map(|c| Comm { id: c as u64, joined: p.entered[c], next_ready: self.ready(d, &p, c) })
            .collect();
        let own: Vec<(u64, u64)> = p.reqs.iter().filter(|cs| self.entered_by_all(d, &p, **cs)).map(|(c, s)| (*c as u64, *s)).collect();
        let pending: Vec<(u64, u64)> = p.pending.iter().map(|(c, s)| (*c as u64, *s)).collect();
        let others = |f: &dyn Fn(usize) -> bool| (0..self.w.n).find(|q| *q != d && f(*q)).map(|q| q as u32);
        let view = View {
            nobody_alive: (0..self.w.n).all(|q| p.known_dead[q]),
            chores_done: p.told.iter().all(|t| *t),
            live_not_final: others(&|q| !p.known_dead[q] && !p.reads[q].final_seen),
            dead_unread: others(&|q| p.known_dead[q] && p.reads[q].done < p.dead_need[q]),
            comms: &comms,
            joins_in_flight: &pending,
            own_needed: &own,
        };
        if matches!((self.rules.exit)(&view), Exit::Go | Exit::AskTurns) {
            p.left = true;
            moved = true;
        }
        self.procs[d] = p;
        if moved {
            self.progress();
        }
    }

    /// Finishes the served reads and starts the next; true if it learned anything.
    fn read_logs(&self, d: usize, p: &mut Proc) -> bool {
        let mut moved = false;
        for q in (0..self.w.n).filter(|q| *q != d) {
            if p.known_dead[q] && p.dead_need[q] == 0 {
                p.dead_need[q] = p.reads[q].started + 1;
            }
            let rd = &mut p.reads[q];
            if let Some((len, fin)) = rd.served.take() {
                for &(c, s) in &self.procs[q].log[rd.upto..len] {
                    if s > p.alive_entered[c] {
                        p.cache.entry((c, s)).or_default().insert(q);
                    }
                }
                moved |= rd.upto != len || rd.final_seen != fin || (rd.done < p.dead_need[q] && rd.started >= p.dead_need[q]);
                rd.upto = len;
                rd.final_seen = fin;
                rd.done = rd.started;
                rd.in_flight = false;
            }
            if !rd.in_flight {
                rd.started += 1;
                rd.in_flight = true;
            }
        }
        moved
    }

    /// Its next collective on `c` can be joined: every member has its news, and
    /// every member it does not know dead is in the cache as having entered it.
    fn ready(&self, d: usize, p: &Proc, c: usize) -> bool {
        let cs = (c, p.entered[c] + 1);
        let Some(seen) = p.cache.get(&cs) else { return false };
        let members = &self.w.comms[c];
        members.iter().all(|m| p.told[*m]) && members.iter().all(|m| *m == d || p.known_dead[*m] || seen.contains(m))
    }

    /// Every other member not known dead entered `cs` (or it joined a later one).
    fn entered_by_all(&self, d: usize, p: &Proc, cs: (usize, u64)) -> bool {
        if p.entered[cs.0] > p.alive_entered[cs.0] {
            return true;
        }
        let seen = p.cache.get(&cs);
        self.w.comms[cs.0].iter().all(|m| *m == d || p.known_dead[*m] || seen.is_some_and(|s| s.contains(m)))
    }

    fn join_ready(&mut self, d: usize, p: &mut Proc) -> bool {
        let mut moved = false;
        loop {
            let Some(c) = (0..self.w.comms.len()).find(|c| self.w.comms[*c].contains(&d) && self.ready(d, p, *c)) else {
                return moved;
            };
            let cs = (c, p.entered[c] + 1);
            p.entered[c] = cs.1;
            self.join(d, cs);
            if !self.complete(cs) {
                p.pending.push(cs);
            }
            moved = true;
        }
    }

    fn check_end(&self) -> Result<Run, String> {
        let inside: Vec<_> = self.inst.iter().filter(|(cs, m)| m.len() != self.w.comms[cs.0].len()).collect();
        if let Some(((c, s), m)) = inside.first() {
            return Err(format!("collective #{s} of communicator {c} (members {:?}) never completed: only {m:?} in it; {}", self.w.comms[*c], self.describe()));
        }
        Ok(Run { steps: self.steps })
    }

    /// Where each process is (for a failure's message).
    fn describe(&self) -> String {
        let mut out = Vec::new();
        for (r, p) in self.procs.iter().enumerate() {
            let what = match (p.dead, p.left, p.finalizing) {
                (true, true, _) => "left".to_string(),
                (true, false, _) => format!("dead, serving (pending {:?}, own {:?}, joined {:?})", p.pending, p.reqs, p.entered),
                (false, _, true) => "finalizing".to_string(),
                (false, _, false) => format!("live at call {} of {} (blocked in {:?}, fill-ins {:?})", p.pc, self.w.progs[r].len(), p.blocked, p.fillins),
            };
            out.push(format!("rank {r} {what}"));
        }
        out.join("; ")
    }
}
