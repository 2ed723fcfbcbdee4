//! When a dead rank leaves (engine::dead::zombie::serve): what protocol::exit reads,
//! gathered from the log cache and the news, and what the rank says while it
//! stays (its `MPIFT_TRACE` status, through engine::base::observer; the
//! `MPIFT_DEBUG=stuck` report).

use crate::engine::base::settings;
use crate::engine::base::runtime;
use crate::engine::dead::dead_comm::{InFlight, Own, ZComm};
use crate::engine::base::observer::{self, DeadStatus};
use crate::engine::{colls::describe, news::logs};
use crate::protocol::exit::{self, Comm, Exit, View, Why};
use std::time::{Duration, Instant};

/// The dead rank's side of the exit rule, kept across rounds of its loop.
#[derive(Default)]
pub struct Leaving {
    /// With spares: read cycles that must finish before "every live rank is
    /// finalizing" counts ([`Leaving::live_not_final`]).
    confirm: Option<Vec<(u32, u64)>>,
    /// Per world rank known dead here: the read cycle of its log that must
    /// have finished (the first that started after its death was known).
    dead_need: Vec<Option<u64>>,
    /// Since when only this rank's own obligations hold it (every live rank
    /// finalizing), and whether the stuck report was made.
    since: Option<Instant>,
    said: bool,
    /// The status last reported.
    shown: Option<Why>,
}

impl Leaving {
    /// The rule's answer this round. `owed`: communicators whose next
    /// collective it can join but waits for a turn (with the function code);
    /// `chores_done`: its news is out, no agreement or revoke of its pending.
    pub fn decide(&mut self, comms: &[ZComm], pending: &[InFlight], own: &[Own], owed: &[(u64, u32)], chores_done: bool) -> Exit {
        let (me, n) = (runtime::world_rank(), runtime::world_size());
        self.note_deaths(me, n);
        let nobody_alive = nobody_alive(me, n);
        let views: Vec<Comm> = comms.iter().map(|c| Comm { id: c.id, joined: c.seq, next_ready: owed.iter().any(|o| o.0 == c.id) }).collect();
        let joins: Vec<(u64, u64)> = pending.iter().map(|f| (f.what.0, f.what.1)).collect();
        let own_needed: Vec<(u64, u64)> =
            if nobody_alive { Vec::new() } else { own.iter().filter_map(|o| o.coll).filter(|(id, s)| entered_by_all(comms, *id, *s)).collect() };
        let live_not_final = self.live_not_final(me, n);
        let dead_unread = self.dead_unread().first().copied();
        let view = View { nobody_alive, chores_done, live_not_final, dead_unread, comms: &views, joins_in_flight: &joins, own_needed: &own_needed };
        let e = exit::decide(&view);
        if let Exit::Stay(why) = e {
            self.show(why, pending, owed);
            self.check_stuck(why, live_not_final.is_none(), || format!("joins in flight {:x?}, own requests {} (collectives {:x?})", pending.iter().map(|f| f.what).collect::<Vec<_>>(), own.len(), own.iter().filter_map(|o| o.coll).collect::<Vec<_>>()));
        }
        e
    }

    /// Notes the read cycle each newly known death needs: a read in flight now
    /// may have started before the dead rank's last log entry.
    fn note_deaths(&mut self, me: usize, n: usize) {
        self.dead_need.resize(n, None);
        let new: Vec<u32> = (0..n as u32).filter(|p| *p as usize != me && self.dead_need[*p as usize].is_none() && runtime::is_dead(*p)).collect();
        if new.is_empty() {
            return;
        }
        for (p, c) in logs::with(|cache| cache.next_cycles(&new)) {
            self.dead_need[p as usize] = Some(c);
        }
    }

    /// Ranks known dead whose logs no read started after their death has
    /// finished reading.
    pub fn dead_unread(&self) -> Vec<u32> {
        let need: Vec<(u32, u64)> = self.dead_need.iter().enumerate().filter_map(|(p, c)| c.map(|c| (p as u32, c))).collect();
        logs::with(|cache| cache.unfinished(&need).collect())
    }

    /// A live rank not known to be finalizing with its log read to the end. With
    /// spares (calls::spares) a waiting spare's word says finalizing and a
    /// spawn that takes it clears it, so a word read before that must not
    /// count: all are final only once read cycles that started after the first
    /// such answer (`confirm`) have finished and still say so.
    fn live_not_final(&mut self, me: usize, n: usize) -> Option<u32> {
        let live: Vec<u32> = (0..n as u32).filter(|p| *p as usize != me && !runtime::is_dead(*p)).collect();
        if let Some(p) = logs::with(|cache| live.iter().copied().find(|p| !cache.read_to_end(*p as usize))) {
            self.confirm = None;
            return Some(p);
        }
        if !crate::engine::base::process::spares_on() {
            return None;
        }
        match &self.confirm {
            None => {
                // Not yet, whoever is live: the confirming reads start now.
                self.confirm = Some(logs::with(|cache| cache.next_cycles(&live)));
                Some(live.first().copied().unwrap_or(me as u32))
            }
            Some(need) => logs::with(|cache| cache.unfinished(need).next()),
        }
    }

    /// The status line says why it stays, when that changes.
    fn show(&mut self, why: Why, pending: &[InFlight], owed: &[(u64, u32)]) {
        if self.shown == Some(why) {
            return;
        }
        self.shown = Some(why);
        let f = match why {
            Why::Joining(c, s) => pending.iter().find(|p| (p.what.0, p.what.1) == (c, s)).map(|p| p.what.2),
            Why::Owes(c, _) => owed.iter().find(|o| o.0 == c).map(|o| o.1),
            _ => None,
        };
        observer::dead_status(&DeadStatus::Waits(why, f.map(describe::fname)));
    }

    /// With `MPIFT_DEBUG` (`stuck` included): a dead rank that has not left 5 s
    /// after every live rank began finalizing says once why, with the logs of
    /// ranks known dead not read since their death (a dead rank that never
    /// leaves is a hang of the whole job).
    fn check_stuck(&mut self, why: Why, live_final: bool, state: impl FnOnce() -> String) {
        if !settings::debug_stuck() || self.said {
            return;
        }
        if !live_final {
            self.since = None;
            return;
        }
        let since = *self.since.get_or_insert_with(Instant::now);
        if since.elapsed() > Duration::from_secs(5) {
            self.said = true;
            crate::say!(
                "MPIFT: rank {}: dead, every live rank finalizing for 5 s, not leaving: {why}; dead logs unread since the death {:?}; {}",
                runtime::world_rank(),
                self.dead_unread(),
                state()
            );
        }
    }
}

/// Every member of communicator `id` not known dead has entered its collective
/// `s` (as engine::dead::zombie::next_ready asks before a dummy joins): known once this
/// rank joined a later one there, or from the members' logs.
fn entered_by_all(comms: &[ZComm], id: u64, s: u64) -> bool {
    let Some(c) = comms.iter().find(|c| c.id == id) else { return false };
    if c.seq > c.alive_seq {
        return true;
    }
    // This rank entered it alive; with every other member dead, nobody else has to.
    logs::with(|cache| c.entered_by_the_others(cache.get(id, s)))
}

/// Every process of the job is dead (and no spare can replace one).
pub fn nobody_alive(me: usize, n: usize) -> bool {
    !crate::engine::base::process::spares_on() && (0..n).all(|p| p == me || runtime::is_dead(p as u32))
}
