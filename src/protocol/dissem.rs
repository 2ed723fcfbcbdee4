//! MPIFT's own barrier: a dissemination barrier whose wait can stop (engine::own::barrier).
//!
//! Round i (d = 2^i < n): member r sends to (r + d) mod n and receives from
//! (r - d) mod n; after round ceil(log2 n) every member has heard, directly or
//! through others, from every member (Hensgen, Finkel and Manber's dissemination
//! barrier). A member that learns its communicator was revoked stops waiting at
//! once (ULFM: nothing blocks on a revoked communicator); no other member has to
//! join for it, which a host MPI's blocking barrier would need.
//!
//! The messages of every barrier on every communicator share one channel per
//! ordered pair of processes (world ranks on MPIFT's shadow communicator, one
//! tag), so each carries a [`Stamp`]: the communicator's job-wide id and the
//! collective's number there. A member waiting for stamp w from peer p may
//! instead receive
//! - a *stale* message: from a barrier on a revoked communicator that it
//!   abandoned (or never reached): dropped;
//! - a message for a barrier it has not reached yet (another communicator's: a
//!   process may finish one barrier and start one on another communicator while
//!   its partner is still in the first): kept in the [`Mailbox`] until that
//!   barrier looks for it.
//!
//! On one communicator a pair exchanges at most one message per barrier, in
//! barrier order, so nothing else can arrive.

/// What a barrier message says: which barrier it belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Stamp {
    pub id: u64,
    pub seq: u64,
}

impl Stamp {
    /// The two words sent.
    pub fn words(self) -> [u64; 2] {
        [self.id, self.seq]
    }
    pub fn from_words(w: [u64; 2]) -> Stamp {
        Stamp { id: w[0], seq: w[1] }
    }
}

/// The distances of the rounds of a barrier over `n` members: 1, 2, 4, ... < n.
pub fn rounds(n: usize) -> impl Iterator<Item = usize> {
    std::iter::successors(Some(1usize), |d| d.checked_mul(2)).take_while(move |d| *d < n)
}

/// (to, from) of member `me` of `n` in the round of distance `d`.
pub fn partners(me: usize, n: usize, d: usize) -> (usize, usize) {
    ((me + d) % n, (me + n - d % n) % n)
}

/// What became of a message that arrived.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sorted {
    /// The one the barrier waits for.
    Mine,
    /// From an abandoned barrier: dropped.
    Stale,
    /// For a barrier not reached yet: kept.
    Kept,
}

/// Messages that arrived before their collective, per sending process, with what
/// they carry (`T`: nothing for a barrier, the data for an allreduce).
#[derive(Debug)]
pub struct Mailbox<T> {
    kept: Vec<(u32, Stamp, T)>,
}

impl<T> Default for Mailbox<T> {
    fn default() -> Self {
        Mailbox::new()
    }
}

impl<T> Mailbox<T> {
    pub const fn new() -> Mailbox<T> {
        Mailbox { kept: Vec::new() }
    }

    /// A message from `from` with stamp `want` arrived earlier: taken.
    pub fn take(&mut self, from: u32, want: Stamp) -> Option<T> {
        let i = self.kept.iter().position(|k| (k.0, k.1) == (from, want))?;
        Some(self.kept.swap_remove(i).2)
    }

    /// Sorts a message `got` from `from` that arrived while waiting for `want`
    /// from it; `stale(id)`: that communicator was revoked here; `body`: what the
    /// message carries, read only if it is kept.
    pub fn sort(&mut self, from: u32, got: Stamp, want: Stamp, stale: impl Fn(u64) -> bool, body: impl FnOnce() -> T) -> Sorted {
        if got == want {
            Sorted::Mine
        } else if stale(got.id) {
            Sorted::Stale
        } else {
            self.kept.push((from, got, body()));
            Sorted::Kept
        }
    }

    /// Keeps message `stamp` from `from` (it arrived before any part looked for it).
    pub fn keep(&mut self, from: u32, stamp: Stamp, body: T) {
        self.kept.push((from, stamp, body));
    }

    /// Drops kept messages of communicators revoked since they arrived.
    pub fn purge(&mut self, stale: impl Fn(u64) -> bool) {
        self.kept.retain(|(_, s, _)| !stale(s.id));
    }

    pub fn len(&self) -> usize {
        self.kept.len()
    }

    pub fn is_empty(&self) -> bool {
        self.kept.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_member_hears_from_every_member() {
        for n in 1..70 {
            // knows[r] = members whose entry r has heard of (transitively).
            let mut knows: Vec<Vec<bool>> = (0..n).map(|r| (0..n).map(|x| x == r).collect()).collect();
            for d in rounds(n) {
                let before = knows.clone();
                for (r, k) in knows.iter_mut().enumerate() {
                    let (_, from) = partners(r, n, d);
                    assert_eq!(partners(from, n, d).0, r, "n {n} d {d}: from/to disagree");
                    for x in 0..n {
                        k[x] |= before[from][x];
                    }
                }
            }
            assert!(knows.iter().all(|k| k.iter().all(|b| *b)), "n {n}");
        }
    }

    #[test]
    fn mailbox_keeps_later_drops_stale() {
        let mut m = Mailbox::default();
        let want = Stamp { id: 1, seq: 4 };
        assert_eq!(m.sort(3, want, want, |_| false, || 0), Sorted::Mine);
        assert_eq!(m.sort(3, Stamp { id: 9, seq: 1 }, want, |id| id == 9, || 1), Sorted::Stale);
        assert_eq!(m.sort(3, Stamp { id: 2, seq: 1 }, want, |_| false, || 7), Sorted::Kept);
        assert_eq!(m.take(4, Stamp { id: 2, seq: 1 }), None);
        assert_eq!(m.take(3, Stamp { id: 2, seq: 1 }), Some(7));
        assert!(m.is_empty());
        m.sort(3, Stamp { id: 5, seq: 1 }, want, |_| false, || 0);
        m.purge(|id| id == 5);
        assert!(m.is_empty());
    }
}
