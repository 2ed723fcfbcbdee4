//! One member's part in one of MPIFT's own collectives (the barrier of
//! protocol::dissem, the allreduce of protocol::recdbl) as a non-blocking state
//! machine: a list of exchanges (send to one member, then receive from one
//! member), advanced as far as the messages that have arrived allow, and never
//! waiting. No I/O here: the driver says which messages are in (`take`) and does
//! the sends (`send`).
//!
//! Why (issue 35): a dead rank stands in for itself in every collective the
//! survivors enter after its death. Run one at a time, its part in a collective
//! on communicator A waits for a member that is itself waiting in a collective on
//! communicator B for this dead rank's part there: with two dead ranks in two
//! overlapping communicators, each could hold the other's. As [`Part`]s, a dead
//! rank is in every owed collective at once (engine::join::standin drives them all from
//! one loop), so no order of events between communicators decides liveness.
//!
//! A part carries no data of its own: a stand-in's contribution is thrown away
//! (the collective fails at the live members) and its messages only need the
//! right length, which the driver knows.

use crate::protocol::dissem::{partners, rounds, Stamp};
use crate::protocol::recdbl::{Plan, Step};

/// One step of a part: send to member `to`, then receive from member `from`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Exchange {
    pub to: Option<usize>,
    pub from: Option<usize>,
}

/// Which of MPIFT's own collectives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Barrier,
    Allreduce,
}

/// The exchanges of member `me` of `n` in a collective of `kind`, in order: the
/// same messages, to the same members, as the blocking forms send
/// (engine::own::barrier, engine::own::allreduce), so live members running those and
/// stand-ins running parts meet.
pub fn schedule(kind: Kind, me: usize, n: usize) -> Vec<Exchange> {
    match kind {
        Kind::Barrier => rounds(n)
            .map(|d| {
                let (to, from) = partners(me, n, d);
                Exchange { to: Some(to), from: Some(from) }
            })
            .collect(),
        Kind::Allreduce => Plan::new(me, n)
            .steps()
            .map(|s| match s {
                Step::HandOff { to } => Exchange { to: Some(to), from: Some(to) },
                Step::TakeIn { from } => Exchange { to: None, from: Some(from) },
                Step::Exchange { peer, .. } => Exchange { to: Some(peer), from: Some(peer) },
                Step::GiveBack { to } => Exchange { to: Some(to), from: None },
            })
            .collect(),
    }
}

/// One member's part in one collective.
#[derive(Clone, Debug)]
pub struct Part {
    pub stamp: Stamp,
    pub kind: Kind,
    steps: Vec<Exchange>,
    at: usize,
    /// The current step's send went out.
    sent: bool,
}

impl Part {
    /// Member `me`'s part in collective `stamp` of `kind` among `n` members.
    pub fn new(stamp: Stamp, kind: Kind, me: usize, n: usize) -> Part {
        Part { stamp, kind, steps: schedule(kind, me, n), at: 0, sent: false }
    }

    /// Goes as far as the arrived messages allow: `send(to)` sends this part's
    /// message to member `to`; `take(from)` takes this part's message from member
    /// `from` if it has arrived (true) or says it has not (false). Each send is
    /// made once, and each receive asked for until it is in. True once done.
    pub fn advance(&mut self, mut take: impl FnMut(usize) -> bool, mut send: impl FnMut(usize)) -> bool {
        while let Some(e) = self.steps.get(self.at).copied() {
            if !self.sent {
                if let Some(to) = e.to {
                    send(to);
                }
                self.sent = true;
            }
            if let Some(from) = e.from {
                if !take(from) {
                    return false;
                }
            }
            self.at += 1;
            self.sent = false;
        }
        true
    }

    /// Every step done.
    pub fn done(&self) -> bool {
        self.at == self.steps.len()
    }

    /// The member whose message this part waits for, if it waits.
    pub fn waits_for(&self) -> Option<usize> {
        self.steps.get(self.at).and_then(|e| e.from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    /// All `n` members' parts against each other, messages delivered at once.
    fn all_done(kind: Kind, n: usize) -> bool {
        let st = Stamp { id: 1, seq: 1 };
        let mut parts: Vec<Part> = (0..n).map(|r| Part::new(st, kind, r, n)).collect();
        let mut inbox: HashSet<(usize, usize)> = HashSet::new();
        for _ in 0..2 * n + 64 {
            for r in 0..n {
                let mut out = Vec::new();
                parts[r].advance(|f| inbox.remove(&(f, r)), |t| out.push(t));
                for t in out {
                    assert!(inbox.insert((r, t)), "n {n}: two messages {r} -> {t} in flight");
                }
            }
        }
        parts.iter().all(|p| p.done()) && inbox.is_empty()
    }

    #[test]
    fn every_part_completes_against_the_others() {
        for n in 1..130 {
            assert!(all_done(Kind::Barrier, n), "barrier n {n}");
            assert!(all_done(Kind::Allreduce, n), "allreduce n {n}");
        }
    }

    #[test]
    fn a_part_waits_without_its_message_and_sends_once() {
        let mut p = Part::new(Stamp { id: 3, seq: 9 }, Kind::Barrier, 0, 4);
        let mut sent = Vec::new();
        assert!(!p.advance(|_| false, |t| sent.push(t)));
        assert!(!p.advance(|_| false, |t| sent.push(t)));
        assert_eq!(sent, vec![1], "round 1's send, once");
        assert_eq!(p.waits_for(), Some(3));
        assert!(!p.advance(|f| f == 3, |t| sent.push(t)));
        assert_eq!(sent, vec![1, 2]);
        assert!(p.advance(|f| f == 2, |t| sent.push(t)));
        assert!(p.done() && p.waits_for().is_none());
    }
}
