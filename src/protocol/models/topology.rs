//! Overlays for the layer's own traffic, computed over a *view*: the ranks of a
//! communicator minus those the local node knows to have failed. When the view
//! shrinks, the overlay is recomputed on the live ranks, so it stays connected
//! however many ranks fail (each node forwards again to neighbours it gains).

use crate::protocol::Rank;
use std::collections::BTreeSet;

/// The ranks `0..n` a node believes alive.
#[derive(Clone, Debug)]
pub struct View {
    n: Rank,
    /// Known failed ranks. Invariant: every element is `< n`.
    dead: BTreeSet<Rank>,
}

impl View {
    pub fn new(n: Rank) -> View {
        View { n, dead: BTreeSet::new() }
    }
    pub fn size(&self) -> Rank {
        self.n
    }
    pub fn live_count(&self) -> Rank {
        self.n - self.dead.len() as Rank
    }
    pub fn is_dead(&self, r: Rank) -> bool {
        self.dead.contains(&r)
    }
    pub fn dead(&self) -> impl Iterator<Item = Rank> + '_ {
        self.dead.iter().copied()
    }
    /// Records a failure; true if it was news.
    pub fn mark_dead(&mut self, r: Rank) -> bool {
        assert!(r < self.n, "rank {r} outside a view of {}", self.n);
        self.dead.insert(r)
    }
    /// Position of live rank `r` among the live ranks.
    pub fn index_of(&self, r: Rank) -> Rank {
        debug_assert!(!self.is_dead(r));
        r - self.dead.range(..r).count() as Rank
    }
    /// The live rank at position `i` (`i < live_count()`).
    pub fn at(&self, i: Rank) -> Rank {
        let mut r = i;
        for &d in &self.dead {
            if d <= r {
                r += 1;
            } else {
                break;
            }
        }
        r
    }
}

/// Who a node sends broadcast traffic to, given its view.
pub trait Topology {
    /// Neighbours of live rank `me` in `view` (never `me`, never a dead rank).
    fn neighbours(&self, me: Rank, view: &View) -> Vec<Rank>;
}

/// The Binomial Graph of Plan B (Bosilca et al., EuroMPI'15, section 3.2): node `i`
/// of `m` links to `i ± 2^k (mod m)` for every `2^k < m`. Degree about 2·log2(m),
/// diameter about log2(m), and it stays connected after any `degree - 1` failures
/// even before the view is updated.
#[derive(Clone, Copy, Debug, Default)]
pub struct BinomialGraph;

impl Topology for BinomialGraph {
    fn neighbours(&self, me: Rank, view: &View) -> Vec<Rank> {
        let m = view.live_count();
        let i = view.index_of(me);
        let mut out = Vec::new();
        let mut step = 1;
        while step < m {
            for j in [(i + step) % m, (i + m - step) % m] {
                let r = view.at(j);
                if r != me && !out.contains(&r) {
                    out.push(r);
                }
            }
            step *= 2;
        }
        out
    }
}

/// A k-ary tree rooted at the first live rank (thesis 5.3.5.1, `TREE_SUCCESSOR_COUNT`
/// successors per node): neighbours are the parent and the children, so a
/// broadcast started anywhere floods the tree.
#[derive(Clone, Copy, Debug)]
pub struct KaryTree {
    pub k: Rank,
}

impl Topology for KaryTree {
    fn neighbours(&self, me: Rank, view: &View) -> Vec<Rank> {
        let m = view.live_count();
        let i = view.index_of(me);
        let mut out = Vec::new();
        if i > 0 {
            out.push(view.at((i - 1) / self.k));
        }
        for c in 1..=self.k {
            let child = i as u64 * self.k as u64 + c as u64;
            if child < m as u64 {
                out.push(view.at(child as Rank));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn view_indexing_round_trips() {
        let mut v = View::new(10);
        for d in [0, 3, 4, 9] {
            v.mark_dead(d);
        }
        let live: Vec<Rank> = (0..10).filter(|r| !v.is_dead(*r)).collect();
        for (i, &r) in live.iter().enumerate() {
            assert_eq!(v.index_of(r), i as Rank);
            assert_eq!(v.at(i as Rank), r);
        }
    }

    #[test]
    fn bmg_degree_is_logarithmic_and_links_are_symmetric() {
        let v = View::new(1000);
        for me in [0, 1, 499, 999] {
            let nb = BinomialGraph.neighbours(me, &v);
            assert!(nb.len() <= 2 * 10, "degree {} at {me}", nb.len());
            for other in nb {
                assert!(BinomialGraph.neighbours(other, &v).contains(&me));
            }
        }
    }

    #[test]
    fn tree_links_are_symmetric() {
        let mut v = View::new(50);
        v.mark_dead(0);
        v.mark_dead(7);
        let t = KaryTree { k: 3 };
        for me in (0..50).filter(|r| !v.is_dead(*r)) {
            for other in t.neighbours(me, &v) {
                assert!(!v.is_dead(other));
                assert!(t.neighbours(other, &v).contains(&me), "{me} -> {other}");
            }
        }
    }
}
