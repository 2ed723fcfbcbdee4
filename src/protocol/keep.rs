//! Which of a process's collective log entries it keeps after its ring of the
//! last `ring` entries has overwritten them (issue 53: "a log that loses nothing
//! a dead rank needs").
//!
//! A dead rank joins a collective that a live member is inside with dummy data,
//! and reads what its part is from the members' log entries. For most
//! collectives any member's entry says it (the same counts, types, root and op
//! at every member), so one entry left in any member's ring is enough. For the
//! others the entry's list differs by member and only its writer ever had it: a
//! Scatterv's or Gatherv's counts at the root, the v and w forms of all-to-all,
//! the neighborhood collectives, `MPI_Comm_create`, the intercommunicator
//! constructors. Such an entry is *open* from when it is written until it is
//! *closed*: its writer completed, with success, a later collective on the same
//! intracommunicator whose completion needs every member's part (a barrier, an
//! allreduce, an allgather(v), an alltoall(v, w), a reduce_scatter(_block)).
//! Then every member has entered the first collective, alive or as a dead rank's
//! join (a dead rank joins in each communicator's order), so nobody can need the
//! entry any more. A collective that failed closes nothing, nor does one on an
//! intercommunicator (there a member's completion may not need its own group).
//!
//! When the ring is about to overwrite an open entry, the writer first copies it
//! into one of `slots` keep slots of its window, and a reader that finds a gap in
//! the ring (it read too late) reads the keep slots too. A slot is free again
//! once its entry is closed. When every slot holds an open entry, the oldest is
//! given up (counted in [`Keep::evicted`]; the reader then reports the hole as
//! before): an entry is lost only when a process has more than `slots` open
//! entries out of its ring at once, that is, that many such collectives without
//! one that closes them in between.
//!
//! The failure-free cost is one flag read per collective ([`Keep::any_open`])
//! while no such collective was made, and what [`Keep::note`] does for the few
//! that open or close entries.

use crate::protocol::CommId;

/// The kinds of collective this machine tells apart (the engine maps its
/// function codes onto them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Its entry differs by member: kept until closed.
    PerMember,
    /// On an intracommunicator, its success at this process means every member
    /// entered it: closes the open entries of its communicator before it.
    AllMembers,
    /// Neither.
    Other,
}

/// An open entry: its stamp (1-based number in the writer's log) and collective.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Open {
    pub stamp: u64,
    pub comm: CommId,
    pub seq: u64,
}

#[derive(Clone, Debug)]
pub struct Keep {
    ring: u64,
    /// Open entries, oldest first (at most `ring` + slots of them: the others
    /// were given up).
    open: Vec<Open>,
    /// Per keep slot: the stamp of the open entry copied there, if any.
    slots: Vec<Option<u64>>,
    /// The all-member collective written last on an intracommunicator while
    /// entries were open: it closes them if it succeeds ([`Keep::succeeded`]).
    closing: Option<(CommId, u64)>,
    /// Open entries given up because every slot was taken.
    pub evicted: u64,
}

impl Keep {
    pub fn new(ring: usize, slots: usize) -> Keep {
        Keep { ring: ring as u64, open: Vec::new(), slots: vec![None; slots], closing: None, evicted: 0 }
    }

    /// Some entry is open: the writer must look before it overwrites a ring slot
    /// and note the collectives that may close it.
    #[inline]
    pub fn any_open(&self) -> bool {
        !self.open.is_empty()
    }

    /// The writer is about to write entry `stamp` into the ring, over entry
    /// `stamp - ring`: the keep slot to copy that entry into first, if it is open.
    pub fn before_write(&mut self, stamp: u64) -> Option<usize> {
        let old = stamp.checked_sub(self.ring).filter(|s| *s > 0)?;
        self.open.iter().any(|o| o.stamp == old).then(|| self.slot_for(old))
    }

    fn slot_for(&mut self, stamp: u64) -> usize {
        if let Some(j) = self.slots.iter().position(|s| s.is_none()) {
            self.slots[j] = Some(stamp);
            return j;
        }
        // Every slot holds an open entry: give up the oldest.
        let j = (0..self.slots.len()).min_by_key(|j| self.slots[*j]).expect("at least one keep slot");
        let gone = self.slots[j].take().expect("a taken slot");
        self.open.retain(|o| o.stamp != gone);
        self.evicted += 1;
        self.slots[j] = Some(stamp);
        j
    }

    /// Entry `stamp` (collective `seq` of `comm`, of kind `kind`, on an
    /// intracommunicator or not) was written. `AllMembers` is for a blocking
    /// collective, whose end the engine reports ([`Keep::succeeded`]).
    /// Whatever collective was noted before has ended or goes on without the
    /// engine asking again (a non-blocking one): only the one noted last can close.
    pub fn note(&mut self, stamp: u64, comm: CommId, seq: u64, kind: Kind, intra: bool) {
        self.closing = None;
        match kind {
            Kind::PerMember => self.open.push(Open { stamp, comm, seq }),
            Kind::AllMembers if intra && self.any_open() => self.closing = Some((comm, seq)),
            _ => {}
        }
    }

    /// The collective on `comm` this process was in ended with success: if it is
    /// the all-member collective noted last, it closes the open entries of `comm`
    /// before it.
    pub fn succeeded(&mut self, comm: CommId) {
        match self.closing {
            Some((c, seq)) if c == comm => {
                self.closing = None;
                self.close(|o| o.comm == c && o.seq < seq);
            }
            _ => {}
        }
    }

    /// Entry `stamp` was taken back (its collective never entered): nobody joins it.
    pub fn cancelled(&mut self, stamp: u64) {
        self.close(|o| o.stamp == stamp);
    }

    fn close(&mut self, gone: impl Fn(&Open) -> bool) {
        let slots = &mut self.slots;
        self.open.retain(|o| {
            if !gone(o) {
                return true;
            }
            for s in slots.iter_mut().filter(|s| **s == Some(o.stamp)) {
                *s = None;
            }
            false
        });
    }

    /// The open entries (oldest first).
    pub fn open(&self) -> &[Open] {
        &self.open
    }

    /// The stamp held in keep slot `j`, if any.
    pub fn slot(&self, j: usize) -> Option<u64> {
        self.slots[j]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_open_entry_is_copied_before_the_ring_overwrites_it() {
        let mut k = Keep::new(4, 2);
        k.note(1, 7, 1, Kind::PerMember, true);
        assert!(k.any_open());
        for s in 2..=4 {
            assert_eq!(k.before_write(s), None, "stamp {s} overwrites nothing");
            k.note(s, 9, s, Kind::Other, true);
        }
        assert_eq!(k.before_write(5), Some(0), "entry 1 leaves the ring");
        assert_eq!(k.slot(0), Some(1));
        assert_eq!(k.before_write(6), None, "entry 2 was not open");
    }

    #[test]
    fn a_later_all_member_success_on_the_same_communicator_closes() {
        let mut k = Keep::new(2, 1);
        k.note(1, 7, 1, Kind::PerMember, true);
        k.note(2, 8, 1, Kind::AllMembers, true);
        k.succeeded(8);
        assert!(k.any_open(), "another communicator closes nothing");
        k.note(3, 7, 2, Kind::AllMembers, true);
        k.note(4, 7, 3, Kind::Other, true);
        k.succeeded(7);
        assert!(k.any_open(), "only the collective noted last can close");
        k.note(5, 7, 4, Kind::AllMembers, false);
        k.succeeded(7);
        assert!(k.any_open(), "an intercommunicator closes nothing");
        assert_eq!(k.before_write(3), Some(0));
        k.note(6, 7, 5, Kind::AllMembers, true);
        k.succeeded(7);
        assert!(!k.any_open());
        assert_eq!(k.slot(0), None, "its slot is free again");
    }

    #[test]
    fn a_failed_collective_closes_nothing_and_the_oldest_is_given_up_when_full() {
        let mut k = Keep::new(1, 2);
        for s in 1..=4 {
            k.before_write(s);
            k.note(s, 7, s, Kind::PerMember, true);
        }
        // Stamps 1, 2, 3 left the ring; two slots: entry 1 was given up.
        assert_eq!(k.evicted, 1);
        assert_eq!(k.open().iter().map(|o| o.stamp).collect::<Vec<_>>(), vec![2, 3, 4]);
        k.note(5, 7, 5, Kind::AllMembers, true);
        // No `succeeded`: the barrier failed. A cancelled entry closes alone.
        k.cancelled(4);
        assert_eq!(k.open().len(), 2);
    }
}
