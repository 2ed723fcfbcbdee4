//! The keep slots of a process's collective log (protocol::keep, driven in
//! production by engine::news::news), against a ground truth computed from the
//! program alone: a seeded writer makes collectives on a few communicators
//! (per-member ones, all-member ones that succeed or fail, blocking or not,
//! others; some on an intercommunicator; some taken back), into a ring of 32
//! entries and 8 keep slots modelled as memory (the copy really moves the
//! entry's words). A *needed* entry is a per-member one, not taken back, with no
//! later successful blocking all-member collective on its intracommunicator.
//!
//! Checked after every write, at thousands of seeds: each needed entry is in
//! the ring or in a keep slot, with its own content, unless more than 8 needed
//! entries are out of the ring at once; then exactly the newest 8 of those are
//! kept, and the machine counted each one it gave up.

use mpift::protocol::keep::{Keep, Kind};
use std::collections::HashSet;

const RING: usize = 32;
const SLOTS: usize = 8;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct Entry {
    stamp: u64,
    comm: u64,
    seq: u64,
    per_member: bool,
    cancelled: bool,
}

/// One writer's history, and what the ring and the slots hold (by stamp).
struct Writer {
    log: Vec<Entry>,
    ring: Vec<Option<Entry>>,
    slots: Vec<Option<Entry>>,
    keep: Keep,
    /// Needed entries that were beyond the newest SLOTS out of the ring at some point.
    lost: HashSet<u64>,
    seqs: [u64; 4],
    /// Per communicator: the highest seq a successful blocking all-member
    /// collective closed (entries before it are not needed).
    closed_below: [u64; 4],
}

impl Writer {
    fn new() -> Writer {
        Writer {
            log: Vec::new(),
            ring: vec![None; RING],
            slots: vec![None; SLOTS],
            keep: Keep::new(RING, SLOTS),
            lost: HashSet::new(),
            seqs: [0; 4],
            closed_below: [0; 4],
        }
    }

    /// One collective: communicator 3 is an intercommunicator.
    fn step(&mut self, rng: &mut Rng, per_member_rate: u64) {
        let comm = rng.below(4);
        self.seqs[comm as usize] += 1;
        let seq = self.seqs[comm as usize];
        let roll = rng.below(100);
        let kind = if roll < per_member_rate {
            Kind::PerMember
        } else if roll < per_member_rate + 15 {
            Kind::AllMembers
        } else {
            Kind::Other
        };
        let blocking = rng.below(3) > 0;
        let stamp = self.log.len() as u64 + 1;
        if let Some(j) = self.keep.any_open().then(|| self.keep.before_write(stamp)).flatten() {
            self.slots[j] = self.ring[(stamp as usize - 1) % RING];
        }
        let e = Entry { stamp, comm, seq, per_member: kind == Kind::PerMember, cancelled: false };
        self.ring[(stamp as usize - 1) % RING] = Some(e);
        self.log.push(e);
        self.mark_lost();
        let engine_kind = if kind == Kind::AllMembers && !blocking { Kind::Other } else { kind };
        if self.keep.any_open() || kind == Kind::PerMember {
            self.keep.note(stamp, comm, seq, engine_kind, comm != 3);
        }
        if rng.below(20) == 0 {
            // Taken back (the communicator was revoked): never entered.
            self.log.last_mut().unwrap().cancelled = true;
            self.keep.cancelled(stamp);
            return;
        }
        let succeeded = rng.below(10) > 0;
        if blocking && succeeded {
            self.keep.succeeded(comm);
            if kind == Kind::AllMembers && comm != 3 {
                self.closed_below[comm as usize] = seq;
            }
        }
    }

    fn needed(&self, e: &Entry) -> bool {
        e.per_member && !e.cancelled && e.seq > self.closed_below[e.comm as usize]
    }

    /// The needed entries out of the ring, oldest first.
    fn out(&self) -> Vec<Entry> {
        let head = self.log.len() as u64;
        self.log.iter().filter(|e| e.stamp + RING as u64 <= head && self.needed(e)).copied().collect()
    }

    /// Beyond the newest SLOTS needed entries out of the ring, an entry may be
    /// given up, for good. Called right after each write (a collective that will
    /// close entries has not ended yet) and after each step.
    fn mark_lost(&mut self) {
        for e in self.out().iter().rev().skip(SLOTS) {
            self.lost.insert(e.stamp);
        }
    }

    fn check(&mut self, seed: u64) {
        self.mark_lost();
        let head = self.log.len() as u64;
        let kept: Vec<(u64, u64, u64)> = self.slots.iter().flatten().map(|e| (e.stamp, e.comm, e.seq)).collect();
        for e in self.out().iter().filter(|e| !self.lost.contains(&e.stamp)) {
            assert!(
                kept.contains(&(e.stamp, e.comm, e.seq)),
                "seed {seed}, head {head}: needed entry {e:?} is neither in the ring nor kept"
            );
        }
        assert!(self.keep.evicted <= self.lost.len() as u64, "seed {seed}: gave up an entry a slot was due to");
        for e in self.log.iter().rev().take(RING) {
            assert_eq!(self.ring[(e.stamp as usize - 1) % RING].map(|r| r.stamp), Some(e.stamp));
        }
    }
}

fn run(seed: u64, steps: usize, per_member_rate: u64) -> Writer {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let mut w = Writer::new();
    for _ in 0..steps {
        w.step(&mut rng, per_member_rate);
        w.check(seed);
    }
    w
}

#[test]
fn every_needed_entry_stays_readable_while_the_slots_suffice() {
    let mut evicted = 0;
    for seed in 0..2000 {
        evicted += run(seed, 400, 10).keep.evicted;
    }
    eprintln!("2000 writers x 400 collectives, 10 % per-member: {evicted} entries given up");
}

#[test]
fn with_many_open_entries_the_newest_are_kept_and_the_rest_counted() {
    let (mut evicted, mut lost) = (0, 0);
    for seed in 0..100 {
        let w = run(seed, 2000, 60);
        evicted += w.keep.evicted;
        lost += w.lost.len() as u64;
    }
    assert!(evicted > 0, "60 % per-member collectives must overflow 8 slots somewhere");
    eprintln!("100 writers x 2000 collectives, 60 % per-member: {evicted} given up of {lost} allowed");
}

#[test]
fn needed_entries_do_leave_the_ring_in_these_programs() {
    // What the slots are for: with the ring alone these writers lose needed
    // entries (tests/protocol_colljoin.rs names the flaw for the log as a whole).
    let lost = (0..200u64).any(|seed| {
        let w = run(seed, 400, 10);
        let head = w.log.len() as u64;
        w.log.iter().any(|e| e.stamp + RING as u64 <= head && w.needed(e))
    });
    assert!(lost, "some needed entry must be older than the ring");
}

