//! A deterministic in-memory network for protocol tests: every pending event
//! (message or failure notice) sits in one pool and the next one is drawn by a
//! seeded generator, so messages are reordered arbitrarily, notices arrive after
//! arbitrary delays, and a seed replays a run exactly.

use crate::protocol::Rank;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Something the network delivers.
#[derive(Clone, Debug)]
pub enum Event<M> {
    Message { from: Rank, to: Rank, msg: M },
    /// `to` learns that `failed` has failed.
    Notice { to: Rank, failed: Rank },
}

pub struct Net<M> {
    pool: Vec<Event<M>>,
    pub rng: StdRng,
    /// Events handed out so far.
    pub steps: u64,
    /// Messages put on the network so far.
    pub messages: u64,
}

impl<M> Net<M> {
    pub fn new(seed: u64) -> Self {
        Net { pool: Vec::new(), rng: StdRng::seed_from_u64(seed), steps: 0, messages: 0 }
    }

    pub fn send(&mut self, from: Rank, to: Rank, msg: M) {
        self.messages += 1;
        self.pool.push(Event::Message { from, to, msg });
    }

    /// Queues a failure notice for each rank in `to`.
    pub fn notify(&mut self, failed: Rank, to: impl IntoIterator<Item = Rank>) {
        for t in to {
            self.pool.push(Event::Notice { to: t, failed });
        }
    }

    /// The next event, drawn at random among all pending ones.
    pub fn next(&mut self) -> Option<Event<M>> {
        if self.pool.is_empty() {
            return None;
        }
        self.steps += 1;
        let i = self.rng.gen_range(0..self.pool.len());
        Some(self.pool.swap_remove(i))
    }

    pub fn pending(&self) -> usize {
        self.pool.len()
    }
}
