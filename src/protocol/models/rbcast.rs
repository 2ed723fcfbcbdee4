//! Reliable broadcast: the protocol that revoke and failure propagation are thin
//! clients of (Plan B, section 3; Open MPI ULFM's `comm_ft_reliable_bcast`).
//!
//! Guarantee (non-uniform reliable broadcast): if any node that stays alive
//! delivers a message, every node that stays alive delivers it, provided every
//! failure eventually becomes known to every live node (the failure propagation
//! guarantees that). A broadcast whose initiator dies before anyone delivered may
//! be lost; ULFM allows that.
//!
//! How: a node delivers a message the first time it sees it and sends it to every
//! overlay neighbour that is not known to have it. When a failure becomes known,
//! the overlay is recomputed over the live ranks and every delivered message goes
//! to the neighbours the node gained. Nodes that "die" in MPIFT are zombies: they
//! keep forwarding (GUIDE principle 3), which only adds paths.

use super::topology::{Topology, View};
use crate::protocol::{CommId, Epoch, Rank};
use std::collections::{BTreeSet, HashMap};

/// What is being broadcast.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Topic {
    /// The communicator is revoked (ULFM `MPIX_Comm_revoke`).
    Revoke,
    /// This rank has failed.
    Failure(Rank),
}

/// One broadcast message. `(comm, epoch)` identify the protocol instance: a
/// message for another instance is stale and dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Msg {
    pub comm: CommId,
    pub epoch: Epoch,
    pub topic: Topic,
    /// Overlay hops from the initiator (for measurements only).
    pub hops: u32,
}

/// A message to send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Out {
    pub to: Rank,
    pub msg: Msg,
}

/// What happened to an incoming message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Received {
    /// First sight: delivered now.
    Delivered,
    /// Already delivered before.
    Duplicate,
    /// For another communicator or epoch.
    Stale,
}

/// The reliable-broadcast state of one node for one (communicator, epoch).
pub struct Rbcast<T: Topology> {
    me: Rank,
    comm: CommId,
    epoch: Epoch,
    topo: T,
    view: View,
    /// Delivered topics, with their hop count and the ranks known to have them
    /// (sent to, or received from). Invariant: a topic is here iff delivered.
    delivered: HashMap<Topic, (u32, BTreeSet<Rank>)>,
    /// Messages this node has sent (its share of the protocol's cost).
    pub sent: u64,
}

impl<T: Topology> Rbcast<T> {
    pub fn new(me: Rank, n: Rank, comm: CommId, epoch: Epoch, topo: T) -> Self {
        Rbcast { me, comm, epoch, topo, view: View::new(n), delivered: HashMap::new(), sent: 0 }
    }

    pub fn view(&self) -> &View {
        &self.view
    }

    pub fn is_delivered(&self, topic: Topic) -> bool {
        self.delivered.contains_key(&topic)
    }

    /// Hops after which `topic` arrived here (0 at the initiator).
    pub fn hops(&self, topic: Topic) -> Option<u32> {
        self.delivered.get(&topic).map(|(h, _)| *h)
    }

    /// Starts broadcasting `topic` (idempotent: a delivered topic sends nothing).
    pub fn start(&mut self, topic: Topic) -> Vec<Out> {
        if self.is_delivered(topic) {
            return Vec::new();
        }
        self.delivered.insert(topic, (0, BTreeSet::new()));
        self.forward(topic)
    }

    /// A message arrived from `from`.
    pub fn on_message(&mut self, from: Rank, msg: Msg) -> (Received, Vec<Out>) {
        if msg.comm != self.comm || msg.epoch != self.epoch {
            return (Received::Stale, Vec::new());
        }
        if let Some((_, have)) = self.delivered.get_mut(&msg.topic) {
            have.insert(from);
            return (Received::Duplicate, Vec::new());
        }
        self.delivered.insert(msg.topic, (msg.hops + 1, BTreeSet::from([from])));
        (Received::Delivered, self.forward(msg.topic))
    }

    /// Rank `r` is known to have failed: heal the overlay. Returns whether the
    /// view changed, and the messages to neighbours gained.
    pub fn on_failure(&mut self, r: Rank) -> (bool, Vec<Out>) {
        // A zombie keeps itself in its own view: it still forwards.
        if r == self.me || !self.view.mark_dead(r) {
            return (false, Vec::new());
        }
        let topics: Vec<Topic> = self.delivered.keys().copied().collect();
        let out = topics.into_iter().flat_map(|t| self.forward(t)).collect();
        (true, out)
    }

    /// Sends `topic` to every current neighbour not known to have it.
    fn forward(&mut self, topic: Topic) -> Vec<Out> {
        let neighbours = self.topo.neighbours(self.me, &self.view);
        let (hops, have) = self.delivered.get_mut(&topic).expect("forward only delivered topics");
        let msg = Msg { comm: self.comm, epoch: self.epoch, topic, hops: *hops };
        let out: Vec<Out> = neighbours
            .into_iter()
            .filter(|r| have.insert(*r))
            .map(|to| Out { to, msg })
            .collect();
        self.sent += out.len() as u64;
        out
    }
}
