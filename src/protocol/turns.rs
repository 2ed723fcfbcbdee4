//! Turns among dead ranks for the joins they must make inside the host MPI's
//! blocking collectives (issue 35).
//!
//! A dead rank joins a host's blocking collective (an `MPI_Bcast` the survivors
//! entered, say) with the same blocking call: MPI does not match it with the
//! non-blocking one, and inside it the dead rank advances nothing else. Two dead
//! ranks in two overlapping communicators, each inside one communicator's
//! collective that needs the other, then wait for each other for ever (with the
//! survivors of both inside). Which collective a dead rank sees joinable first
//! depends on when it reads the logs, so no local choice of order avoids it.
//!
//! The rule: at any time the dead ranks inside blocking joins are all inside
//! collectives of one communicator (id). Each dead rank publishes its state in
//! its window: idle, *wants* communicator c, or *in* communicator c. It enters
//! only when a read of every other dead rank's state that started after its own
//! "wants c" was published shows each of them idle, wanting c or in c. Of two
//! that want different communicators, one reads the other's wish (each publishes
//! before it reads), so they never both enter; the one wanting the larger id
//! withdraws, one inside another communicator's collective makes the others
//! withdraw, or join it if they owe it. Collectives of one communicator need no
//! turns among themselves: each member joins them in the communicator's order.
//! "Every other dead rank" is every rank dead by the reader's window when its
//! read starts, so a rank that dies while others take turns asks for none
//! before its death is in every window: of it and any reader, whichever
//! published first is read by the other.
//!
//! Once every process is dead, a dead rank leaves without joining what it still
//! owes (nobody needs the outcome), but never while another dead rank is inside a
//! blocking join that needs it: it publishes *abandoned* only after a read showed
//! no other dead rank inside a communicator it is in, and goes only if a read that
//! started after that publish shows none inside or wanting one either
//! ([`Turn::abandon`]); one inside makes it withdraw to idle, stay, and join
//! when it owes. A dead rank enters no
//! communicator with an abandoned member (the engine leaves those out of what it
//! owes). Of a rank that enters and one that abandons, each publishes before it
//! reads, so one of them sees the other: the enterer never enters, or the leaver
//! stays.
//!
//! Pure: the engine (engine::dead::turns) publishes, reads the others' windows with
//! RMA and feeds [`Turn::decide`] and [`Turn::abandon`] what it read.

/// What a dead rank publishes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Idle,
    /// Wants to enter a blocking join on communicator `id`.
    Wants(u64),
    /// Is inside a blocking join on communicator `id`.
    In(u64),
    /// Every process is dead and this one is leaving: it joins nothing more,
    /// and nobody enters a communicator it is in.
    Abandoned,
}

/// The next step of a dead rank that would leave while every process is dead.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Leave {
    /// Publish this state, then read the others again.
    Publish(State),
    /// Read the others (again) before deciding.
    Read,
    /// Leave: nobody needs this rank any more.
    Go,
}

/// The next step of the dead rank.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Publish this state, then read the others again.
    Publish(State),
    /// Publish `In(id)`, then enter this communicator's collective that it owes.
    Enter(u64),
    /// Read the others again (nothing to publish).
    Wait,
}

/// One dead rank's side.
#[derive(Clone, Copy, Debug, Default)]
pub struct Turn {
    /// What it last published (and the read being decided on started after).
    pub published: Option<u64>,
    /// It published [`State::Abandoned`] (and nothing since).
    pub abandoning: bool,
}

impl Turn {
    /// Decides, given the ids of the communicators whose next collective this
    /// rank owes and could join now (`owed`, its blocking joins) and the others'
    /// states as read after its last publish.
    pub fn decide(&mut self, owed: &[u64], others: &[State]) -> Decision {
        let inside = others.iter().find_map(|s| if let State::In(c) = s { Some(*c) } else { None });
        let wanted_min = others.iter().filter_map(|s| if let State::Wants(c) = s { Some(*c) } else { None }).min();
        // The communicator this rank goes for: one the others are inside if it
        // owes it, else the lowest it owes.
        let target = match inside {
            Some(c) => owed.contains(&c).then_some(c),
            None => owed.iter().copied().min(),
        };
        let Some(want) = target else {
            // Nothing to go for now (or someone is inside a communicator it does
            // not owe): make way.
            return self.publish_if_changed(None);
        };
        if self.published != Some(want) {
            // Not published yet: not over a lower wish (`want` is the lowest it
            // owes, so it does not owe that one), which would only have to
            // withdraw again.
            if inside.is_none() && wanted_min.is_some_and(|m| m < want) {
                return self.publish_if_changed(None);
            }
            self.published = Some(want);
            self.abandoning = false;
            return Decision::Publish(State::Wants(want));
        }
        // Its wish is published, and these states were read after it.
        let clash = |s: &State| match s {
            State::Idle | State::Abandoned => false,
            State::Wants(c) | State::In(c) => *c != want,
        };
        if !others.iter().any(clash) {
            return Decision::Enter(want);
        }
        if inside.is_some_and(|c| c != want) || wanted_min.is_some_and(|m| m < want) {
            // Someone inside another communicator, or a lower wish: withdraw.
            return self.publish_if_changed(None);
        }
        // Higher wishes only: they withdraw once they read this one.
        Decision::Wait
    }

    /// Nothing to join any more: its wish, if it published one, must not hold
    /// the others.
    pub fn idle(&mut self) -> Decision {
        self.publish_if_changed(None)
    }

    /// The join on the entered communicator returned: idle again.
    pub fn left(&mut self) -> Decision {
        self.published = None;
        self.abandoning = false;
        Decision::Publish(State::Idle)
    }

    /// Every process is dead and this rank owes nothing it could join: whether
    /// it may leave. `read`: the others' states from a read that started after
    /// its last publish (None: no such read yet); `mine`: the communicators it
    /// is a member of. A rank inside one of those needs this rank's part.
    ///
    /// Another rank wanting such a communicator may have read this one before
    /// it published: it enters (and this rank, reading it inside, withdraws and
    /// stays) or, reading *abandoned*, gives up its wish (and this rank goes).
    pub fn abandon(&mut self, read: Option<&[State]>, mine: &[u64]) -> Leave {
        let inside = |r: &[State]| r.iter().any(|s| matches!(s, State::In(c) if mine.contains(c)));
        let wants = |r: &[State]| r.iter().any(|s| matches!(s, State::Wants(c) if mine.contains(c)));
        let Some(read) = read else { return Leave::Read };
        match (self.abandoning, inside(read)) {
            (false, true) => Leave::Read,
            (false, false) => {
                self.abandoning = true;
                self.published = None;
                Leave::Publish(State::Abandoned)
            }
            (true, false) if wants(read) => Leave::Read,
            (true, false) => Leave::Go,
            (true, true) => {
                self.abandoning = false;
                Leave::Publish(State::Idle)
            }
        }
    }

    fn publish_if_changed(&mut self, to: Option<u64>) -> Decision {
        // (Abandoned, published None, makes way as idle does.)
        if self.published == to {
            return Decision::Wait;
        }
        self.abandoning = false;
        self.published = to;
        Decision::Publish(to.map_or(State::Idle, State::Wants))
    }
}

/// Words of a published state: (id, kind, check), where kind is 0 idle, 1
/// wants, 2 in, 3 abandoned; a reader that finds a check that does not match read it while it
/// changed, and reads again. All zero (never written) is idle.
pub const WORDS: usize = 3;

pub fn encode(s: State) -> [u64; WORDS] {
    let (id, kind) = match s {
        State::Idle => return [0; WORDS],
        State::Wants(c) => (c, 1),
        State::In(c) => (c, 2),
        State::Abandoned => (0, 3),
    };
    [id, kind, check(id, kind)]
}

/// The state, or None if the words were read while they changed.
pub fn decode(w: [u64; WORDS]) -> Option<State> {
    if w == [0; WORDS] {
        return Some(State::Idle);
    }
    if w[2] != check(w[0], w[1]) {
        return None;
    }
    match w[1] {
        1 => Some(State::Wants(w[0])),
        2 => Some(State::In(w[0])),
        3 => Some(State::Abandoned),
        _ => None,
    }
}

fn check(id: u64, kind: u64) -> u64 {
    (id ^ kind.rotate_left(29) ^ 0x2545_f491_4f6c_dd1d).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_round_trip_and_torn_reads_are_refused() {
        for s in [State::Idle, State::Wants(7), State::In(u64::MAX - 3)] {
            assert_eq!(decode(encode(s)), Some(s));
        }
        let mut w = encode(State::In(9));
        w[0] = 10;
        assert_eq!(decode(w), None);
    }

    #[test]
    fn alone_it_wants_then_enters_then_leaves() {
        let mut t = Turn::default();
        assert_eq!(t.decide(&[5, 3], &[State::Idle]), Decision::Publish(State::Wants(3)));
        assert_eq!(t.decide(&[5, 3], &[State::Idle]), Decision::Enter(3));
        assert_eq!(t.left(), Decision::Publish(State::Idle));
    }

    #[test]
    fn a_higher_wish_withdraws_and_the_lower_waits_for_it() {
        let (mut a, mut b) = (Turn::default(), Turn::default());
        assert_eq!(a.decide(&[2], &[State::Idle]), Decision::Publish(State::Wants(2)));
        assert_eq!(b.decide(&[4], &[State::Idle]), Decision::Publish(State::Wants(4)));
        assert_eq!(a.decide(&[2], &[State::Wants(4)]), Decision::Wait);
        assert_eq!(b.decide(&[4], &[State::Wants(2)]), Decision::Publish(State::Idle));
        assert_eq!(a.decide(&[2], &[State::Idle]), Decision::Enter(2));
        // b owes 2 as well once it reads a's logs: it follows a inside.
        assert_eq!(b.decide(&[2, 4], &[State::In(2)]), Decision::Publish(State::Wants(2)));
        assert_eq!(b.decide(&[2, 4], &[State::In(2)]), Decision::Enter(2));
    }

    #[test]
    fn nothing_owed_any_more_withdraws_a_published_wish_once() {
        let mut t = Turn::default();
        assert_eq!(t.idle(), Decision::Wait);
        assert_eq!(t.decide(&[3], &[State::Idle]), Decision::Publish(State::Wants(3)));
        assert_eq!(t.idle(), Decision::Publish(State::Idle));
        assert_eq!(t.idle(), Decision::Wait);
    }

    #[test]
    fn abandoning_waits_for_one_inside_and_for_a_wish() {
        let mine = [4, 9];
        let mut t = Turn::default();
        assert_eq!(t.abandon(None, &mine), Leave::Read, "no read since its last publish");
        assert_eq!(t.abandon(Some(&[State::In(9)]), &mine), Leave::Read, "one inside: not yet");
        assert_eq!(t.abandon(Some(&[State::In(5), State::Wants(4)]), &mine), Leave::Publish(State::Abandoned));
        assert_eq!(t.abandon(Some(&[State::Wants(4)]), &mine), Leave::Read, "the wish may enter: read again");
        assert_eq!(t.abandon(Some(&[State::In(4)]), &mine), Leave::Publish(State::Idle), "it entered: stay");
        assert!(!t.abandoning);
        assert_eq!(t.abandon(Some(&[State::Idle, State::In(5)]), &mine), Leave::Publish(State::Abandoned));
        assert_eq!(t.abandon(Some(&[State::Abandoned, State::In(5)]), &mine), Leave::Go);
        assert_eq!(decode(encode(State::Abandoned)), Some(State::Abandoned));
    }

    #[test]
    fn abandoned_is_no_clash_and_a_wish_replaces_it() {
        let mut t = Turn::default();
        assert_eq!(t.abandon(Some(&[]), &[1]), Leave::Publish(State::Abandoned));
        assert_eq!(t.idle(), Decision::Wait, "abandoned already makes way");
        assert_eq!(t.decide(&[2], &[State::Abandoned]), Decision::Publish(State::Wants(2)));
        assert!(!t.abandoning);
        assert_eq!(t.decide(&[2], &[State::Abandoned]), Decision::Enter(2));
    }

    #[test]
    fn someone_inside_another_communicator_makes_way() {
        let mut t = Turn::default();
        assert_eq!(t.decide(&[1], &[State::In(6)]), Decision::Wait, "nothing published: stays idle");
        assert_eq!(t.decide(&[1], &[State::Idle]), Decision::Publish(State::Wants(1)));
        assert_eq!(t.decide(&[1], &[State::In(6)]), Decision::Publish(State::Idle));
    }
}
