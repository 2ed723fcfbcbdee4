//! When a dead rank may leave (issue 52): the exit rule, one pure function.
//!
//! A dead rank serves (engine::dead::zombie) until nobody can need it any more, then
//! frees MPIFT's window with the others and ends. Leaving too early strands a
//! process: the other members of a collective it owes wait in it for ever. The
//! collectives it owes are those its members' logs show entered: every live
//! member's log is final once that member says it is finalizing and a read that
//! saw the flag has read the log to its end; a dead member's log is final once
//! one read has started after its death was known here (a rank logs nothing
//! after its death, and wrote its log before its death news). The rule waits
//! for both: before this rule, a dead rank read the logs of live ranks to the
//! end but not of ranks that died after it, and left without joining a
//! non-blocking collective such a rank had started alive (examples/ulfm/
//! overlap_b.c under load: rank 1 left, rank 3 inside the dummy `MPI_Ibarrier`
//! on Q, rank 2 waiting for its own).
//!
//! Then, with every log final, it stays while
//! - it can join the next collective of one of its communicators (every member
//!   not known dead logged it): its members are inside it or will be;
//! - a dummy join of its is still in flight: others need its part;
//! - a non-blocking collective it started alive, that every other member not
//!   known dead entered, has not completed: the others' dummy joins need it;
//! - its own chores are not done: its death news is not in every window, an
//!   agreement or shrink it had started, a revoke it had not finished sending.
//!
//! A collective that some member logged and another, live and finalizing, never
//! will, is not waited for: no live member is inside it (each is finalizing),
//! and a finalizing survivor has already filled in for every collective it
//! skipped (calls::lifecycle::finalize settles fill-ins first), so what is left
//! is the program's own mismatch.
//!
//! Once every process is dead and it can join nothing now, the turns decide
//! (protocol::turns, `abandon`): nobody needs the outcome of what it owes, only
//! no dead rank may be left inside a join that needs it.
//!
//! Proof sketch (docs/DESIGN.md, "When a dead rank leaves"): suppose dead rank
//! d left and a process q is inside collective (c, s) for ever, d a member of c.
//! If q entered (c, s), q logged it first. If q is live, q is not finalizing, so
//! d did not leave. If q is dead, it entered alive (a non-blocking start) and
//! its log was read by d after its death: d saw (c, s) logged. Every member not
//! known dead to d logged it too (else, live and finalizing, it never will, and
//! q is a dead rank whose own request others need only if they entered), so d
//! could join it, joined it (it owed it), and stayed until its join completed.
//! By induction on the collectives of c in order, d joined every (c, s') with
//! s' <= s the others entered, so its part is in (c, s), and q is not inside
//! for ever on d's account. Models: protocol::models::exit,
//! tests/protocol_exit.rs.

/// One communicator of the dead rank, as it sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Comm {
    pub id: u64,
    /// Collectives it has entered (alive) or joined (dead).
    pub joined: u64,
    /// Its next collective (`joined + 1`) is in some member's log, and every
    /// member not known dead logged it: it can join it now.
    pub next_ready: bool,
}

/// Everything the rule reads, gathered by the caller from its caches.
#[derive(Clone, Copy, Debug, Default)]
pub struct View<'a> {
    /// Every process is dead (and no spare can replace one): the turns decide.
    pub nobody_alive: bool,
    /// Its death news is in every window, and no agreement, shrink or revoke it
    /// had started alive still needs its steps.
    pub chores_done: bool,
    /// A live rank (world rank) that is not yet known to be finalizing with its
    /// log read to the end, if any.
    pub live_not_final: Option<u32>,
    /// A rank known dead whose log no read that started after its death was
    /// known here has finished, if any.
    pub dead_unread: Option<u32>,
    pub comms: &'a [Comm],
    /// Dummy joins of its in flight: (communicator id, number).
    pub joins_in_flight: &'a [(u64, u64)],
    /// Non-blocking collectives it started alive, not complete, that every
    /// other member not known dead entered: (communicator id, number).
    pub own_needed: &'a [(u64, u64)],
}

/// Why a dead rank stays (the status line and the stuck report print these).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Why {
    /// News, agreement or revoke steps of its own.
    Chores,
    /// This live rank is not finalizing, or its log is not read to the end.
    LiveRank(u32),
    /// This dead rank's log has not been read since its death.
    DeadLog(u32),
    /// It can join collective (communicator id, number) and has not yet.
    Owes(u64, u64),
    /// Its dummy join of (communicator id, number) is in flight.
    Joining(u64, u64),
    /// Its own non-blocking collective (communicator id, number) that the
    /// others entered has not completed.
    Own(u64, u64),
}

/// The rule's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    Stay(Why),
    /// Every process is dead and its chores are done: leave when the turns
    /// allow (protocol::turns::Turn::abandon).
    AskTurns,
    Go,
}

/// The exit rule (see the module's text).
pub fn decide(v: &View) -> Exit {
    if !v.chores_done {
        return Exit::Stay(Why::Chores);
    }
    let owes = v.comms.iter().find(|c| c.next_ready).map(|c| Why::Owes(c.id, c.joined + 1));
    if v.nobody_alive {
        return owes.map_or(Exit::AskTurns, Exit::Stay);
    }
    if let Some(p) = v.live_not_final {
        return Exit::Stay(Why::LiveRank(p));
    }
    if let Some(p) = v.dead_unread {
        return Exit::Stay(Why::DeadLog(p));
    }
    if let Some(w) = owes {
        return Exit::Stay(w);
    }
    if let Some(&(c, s)) = v.joins_in_flight.first() {
        return Exit::Stay(Why::Joining(c, s));
    }
    if let Some(&(c, s)) = v.own_needed.first() {
        return Exit::Stay(Why::Own(c, s));
    }
    Exit::Go
}

/// The rule before issue 52 (engine::dead::zombie::serve at 12ba021, transcribed): the
/// same, but the logs of ranks that died after this one need not have been read
/// since. Kept for the mutation test (tests/protocol_exit.rs): the model fails
/// with it.
pub fn decide_before_52(v: &View) -> Exit {
    decide(&View { dead_unread: None, ..*v })
}

impl std::fmt::Display for Why {
    /// The words of the `MPIFT_TRACE` status line and the stuck report
    /// (docs/CAMPAIGN.md, "A dead rank's status"): what it waits for, then the
    /// communicator (hex id), number, or world rank.
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            Why::Chores => write!(f, "chores"),
            Why::LiveRank(p) => write!(f, "live-rank {p}"),
            Why::DeadLog(p) => write!(f, "dead-log {p}"),
            Why::Owes(c, s) => write!(f, "owes comm {c:x} #{s}"),
            Why::Joining(c, s) => write!(f, "joining comm {c:x} #{s}"),
            Why::Own(c, s) => write!(f, "own comm {c:x} #{s}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base<'a>(comms: &'a [Comm]) -> View<'a> {
        View { chores_done: true, comms, ..View::default() }
    }

    #[test]
    fn goes_only_when_nothing_holds_it() {
        let comms = [Comm { id: 7, joined: 3, next_ready: false }];
        assert_eq!(decide(&base(&comms)), Exit::Go);
        assert_eq!(decide(&View { chores_done: false, ..base(&comms) }), Exit::Stay(Why::Chores));
        assert_eq!(decide(&View { live_not_final: Some(0), ..base(&comms) }), Exit::Stay(Why::LiveRank(0)));
        assert_eq!(decide(&View { dead_unread: Some(2), ..base(&comms) }), Exit::Stay(Why::DeadLog(2)));
        assert_eq!(decide(&View { joins_in_flight: &[(7, 4)], ..base(&comms) }), Exit::Stay(Why::Joining(7, 4)));
        assert_eq!(decide(&View { own_needed: &[(7, 2)], ..base(&comms) }), Exit::Stay(Why::Own(7, 2)));
        let ready = [Comm { id: 9, joined: 1, next_ready: true }];
        assert_eq!(decide(&base(&ready)), Exit::Stay(Why::Owes(9, 2)));
    }

    #[test]
    fn the_rule_before_ignores_unread_dead_logs_only() {
        let comms = [Comm { id: 7, joined: 3, next_ready: false }];
        let v = View { dead_unread: Some(2), ..base(&comms) };
        assert_eq!(decide_before_52(&v), Exit::Go);
        assert_eq!(decide_before_52(&View { live_not_final: Some(1), ..v }), Exit::Stay(Why::LiveRank(1)));
    }

    #[test]
    fn with_nobody_alive_the_turns_decide_after_the_chores() {
        let v = View { nobody_alive: true, live_not_final: None, dead_unread: Some(1), ..base(&[]) };
        assert_eq!(decide(&v), Exit::AskTurns);
        assert_eq!(decide(&View { chores_done: false, ..v }), Exit::Stay(Why::Chores));
        let ready = [Comm { id: 5, joined: 0, next_ready: true }];
        assert_eq!(decide(&View { comms: &ready, ..v }), Exit::Stay(Why::Owes(5, 1)));
    }

    #[test]
    fn reasons_print_in_the_status_format() {
        assert_eq!(Why::Owes(0xab, 8).to_string(), "owes comm ab #8");
        assert_eq!(Why::DeadLog(2).to_string(), "dead-log 2");
    }
}
