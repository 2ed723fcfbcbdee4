//! Agreement without the dead: the protocol behind `MPIX_Comm_agree`, `iagree`,
//! `shrink` and `ishrink` (docs/ARCHITECTURE.md, "Agreement").
//!
//! Each member publishes, in its own slot (its window region, readable by RMA), up
//! to three values for one agreement instance: its *contribution* (the
//! [`super::agree`] layout), the *partial* AND over its subtree of a k-ary tree
//! over the ranks, and the *result*. Members only read other members' slots:
//! a member reads its children's partials, the root publishes the result, and each
//! member reads its parent's result. O(log_k n) rounds, O(n) reads in all.
//!
//! The dead do not take part. What makes that simple is a property of MPIFT's
//! simulated deaths: a dead rank is a running process whose slot stays readable and
//! never changes again, and everything it published before dying is visible before
//! the news of its death (it publishes, later dies at the entry of an MPI call,
//! then announces). So once a member knows that `m` is dead, `m`'s slot is final,
//! and every member that looks at it sees the same thing. The value of member `m`
//! in the AND is therefore the same wherever it is taken:
//!
//! - its contribution, if it ever published one (it died after starting), else
//! - [`super::agree::contribution_zombie`] (neutral flag and acknowledgements,
//!   its own death).
//!
//! A member whose child is dead and published no partial takes the child's value
//! and descends into the child's children; a member whose parent is dead and
//! published no result asks the grandparent, and so on; if the root died without a
//! result, the lowest rank not known dead (the *acting root*) computes it from the
//! whole tree by the same rule. Every partial is the AND of the values of its
//! subtree, every result the AND of all values, whoever computes it: the result
//! is uniform (ULFM's requirement) without any further round.
//!
//! Pure: the driver (`engine::agree::ft` over RMA, or the tests in memory) supplies
//! snapshots of other members' slots and what this member knows of deaths, and
//! publishes what [`Agreement::advance`] asks it to.

use super::agree;
use super::Rank;

/// A k-ary tree over ranks `0..n`, rooted at 0: the children of `r` are
/// `k r + 1 ..= k r + k`.
#[derive(Clone, Copy, Debug)]
pub struct Tree {
    pub n: Rank,
    pub k: Rank,
}

impl Tree {
    pub fn new(n: Rank, k: Rank) -> Tree {
        assert!(n > 0 && k > 0, "a tree needs ranks and a fan-out");
        Tree { n, k }
    }
    pub fn parent(&self, r: Rank) -> Option<Rank> {
        (r > 0).then(|| (r - 1) / self.k)
    }
    pub fn children(&self, r: Rank) -> impl Iterator<Item = Rank> {
        let first = (r as u64) * self.k as u64 + 1;
        let last = (first + self.k as u64).min(self.n as u64);
        (first..last).map(|c| c as Rank)
    }
    /// Levels below the root (a tree of one rank has depth 0).
    pub fn depth(&self) -> u32 {
        let mut d = 0;
        let mut r = self.n - 1;
        while let Some(p) = self.parent(r) {
            r = p;
            d += 1;
        }
        d
    }
}

/// What one member has published for one instance, as another member read it.
/// Fields only ever go from `None` to `Some` and never change afterwards.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Published {
    pub contrib: Option<Vec<u64>>,
    pub partial: Option<Vec<u64>>,
    pub result: Option<Vec<u64>>,
}

/// The reading member's knowledge: snapshots of slots and of deaths.
pub trait View {
    /// The latest snapshot of member `m`'s slot for this instance (None: never
    /// read, or nothing published when read).
    fn published(&self, m: Rank) -> Option<&Published>;
    /// This member knows `m` is dead *and* the snapshot [`View::published`] gives
    /// of `m` was read after that became known, so it is final. (A snapshot read
    /// before could miss a contribution `m` published just before dying; while it
    /// is not final, `m` counts as alive and [`Step::Wait`] asks for a fresh read.)
    fn is_dead(&self, m: Rank) -> bool;
    /// This member has waited long for `m` (a live member can be blocked in a
    /// host call that needs this member first). A stalled member that published
    /// its contribution is computed around like a dead one: its partial is the
    /// AND of its contribution and its children's subtrees, whoever computes it,
    /// so nothing changes but who does the work. One without a contribution is
    /// still waited for (its value is not known yet).
    fn stalled(&self, _m: Rank) -> bool {
        false
    }
}

/// What the driver does next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Write these into this member's slot, then advance again.
    Publish { partial: Option<Vec<u64>>, result: Option<Vec<u64>> },
    /// Nothing to do until fresh snapshots of these members' slots (or news of
    /// deaths) arrive. Never empty.
    Wait(Vec<Rank>),
    /// The result (AND over every member's value; read it with
    /// [`super::agree::decide`]). Stays the answer of every later `advance`.
    Decided(Vec<u64>),
}

/// One member's part in one agreement instance.
#[derive(Clone, Debug)]
pub struct Agreement {
    tree: Tree,
    me: Rank,
    own: Vec<u64>,
    partial: Option<Vec<u64>>,
    result: Option<Vec<u64>>,
    partial_out: bool,
    result_out: bool,
}

impl Agreement {
    /// `contribution` is this member's words ([`super::agree::contribution_live`]);
    /// the driver publishes it before the first `advance`.
    pub fn new(n: Rank, me: Rank, fanout: Rank, contribution: Vec<u64>) -> Agreement {
        assert!(me < n, "rank {me} outside a communicator of {n}");
        assert_eq!(contribution.len(), agree::contribution_len(n), "contribution of the wrong size");
        Agreement { tree: Tree::new(n, fanout), me, own: contribution, partial: None, result: None, partial_out: false, result_out: false }
    }

    pub fn contribution(&self) -> &[u64] {
        &self.own
    }
    pub fn tree(&self) -> Tree {
        self.tree
    }
    pub fn result(&self) -> Option<&[u64]> {
        self.result.as_deref()
    }

    /// Makes as much progress as the view allows.
    pub fn advance(&mut self, v: &dyn View) -> Step {
        if let Some(r) = self.result.clone() {
            if !self.result_out {
                self.result_out = true;
                return Step::Publish { partial: self.take_partial_out(), result: Some(r) };
            }
            return Step::Decided(r);
        }
        let mut need = Vec::new();
        if self.partial.is_none() {
            let mut acc = self.own.clone();
            for c in self.tree.children(self.me) {
                self.gather(c, v, &mut acc, &mut need);
            }
            if need.is_empty() {
                self.partial = Some(acc);
            }
        }
        if let Some(p) = &self.partial {
            if self.me == 0 {
                self.result = Some(p.clone());
            } else if let Some(r) = self.find_result(v, &mut need) {
                self.result = Some(r);
            }
        }
        if self.result.is_some() {
            return self.advance(v);
        }
        if let Some(p) = self.take_partial_out() {
            return Step::Publish { partial: Some(p), result: None };
        }
        need.sort_unstable();
        need.dedup();
        assert!(!need.is_empty(), "rank {}: undecided and waiting for nobody", self.me);
        Step::Wait(need)
    }

    fn take_partial_out(&mut self) -> Option<Vec<u64>> {
        if self.partial_out {
            return None;
        }
        let p = self.partial.clone()?;
        self.partial_out = true;
        Some(p)
    }

    /// The result, from the nearest ancestor that has one; past dead ancestors
    /// without one; computed here if this member is the acting root.
    fn find_result(&self, v: &dyn View, need: &mut Vec<Rank>) -> Option<Vec<u64>> {
        let mut a = self.tree.parent(self.me);
        while let Some(x) = a {
            if let Some(r) = v.published(x).and_then(|p| p.result.clone()) {
                return Some(r);
            }
            if !v.is_dead(x) && !v.stalled(x) {
                need.push(x);
                return None;
            }
            a = self.tree.parent(x);
        }
        // Root dead (or stalled) without a result: the lowest rank neither known
        // dead nor stalled computes it.
        for s in 0..self.tree.n {
            if let Some(r) = v.published(s).and_then(|p| p.result.clone()) {
                return Some(r);
            }
            if s != self.me && (v.is_dead(s) || v.stalled(s)) {
                continue;
            }
            if s != self.me {
                need.push(s);
                return None;
            }
            let mut acc = vec![!0u64; self.own.len()];
            let before = need.len();
            self.gather(0, v, &mut acc, need);
            return (need.len() == before).then_some(acc);
        }
        unreachable!("rank {} is neither dead nor stalled in its own view", self.me)
    }
}

impl Agreement {
    /// ANDs the value of the subtree under `c` into `acc`: its partial if
    /// published (this member's own partial once computed); if `c` is dead without
    /// one, or stalled with a contribution, its value (contribution or zombie) and
    /// its children's subtrees; else `c` is pushed onto `need`.
    fn gather(&self, c: Rank, v: &dyn View, acc: &mut [u64], need: &mut Vec<Rank>) {
        let p = v.published(c);
        let part = if c == self.me { self.partial.as_ref() } else { p.and_then(|p| p.partial.as_ref()) };
        if let Some(part) = part {
            agree::and_into(acc, part);
            return;
        }
        let contributed = p.is_some_and(|p| p.contrib.is_some());
        if c == self.me || !(v.is_dead(c) || v.stalled(c) && contributed) {
            need.push(c);
            return;
        }
        match p.and_then(|p| p.contrib.as_ref()) {
            Some(own) => agree::and_into(acc, own),
            None => agree::and_into(acc, &agree::contribution_zombie(self.tree.n, c)),
        }
        for g in self.tree.children(c) {
            self.gather(g, v, acc, need);
        }
    }
}

/// The value every member's result must equal: each member's contribution, or
/// the zombie value for members that died without publishing one.
pub fn expected(n: Rank, contributions: &[Option<Vec<u64>>]) -> Vec<u64> {
    let mut acc = vec![!0u64; agree::contribution_len(n)];
    for (m, c) in contributions.iter().enumerate() {
        match c {
            Some(c) => agree::and_into(&mut acc, c),
            None => agree::and_into(&mut acc, &agree::contribution_zombie(n, m as Rank)),
        }
    }
    acc
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{HashMap, HashSet};

    struct Mem {
        slots: HashMap<Rank, Published>,
        dead: HashSet<Rank>,
    }
    impl View for Mem {
        fn published(&self, m: Rank) -> Option<&Published> {
            self.slots.get(&m)
        }
        fn is_dead(&self, m: Rank) -> bool {
            self.dead.contains(&m)
        }
    }

    #[test]
    fn tree_shape() {
        let t = Tree::new(10, 3);
        assert_eq!(t.parent(0), None);
        assert_eq!(t.children(0).collect::<Vec<_>>(), vec![1, 2, 3]);
        assert_eq!(t.children(2).collect::<Vec<_>>(), vec![7, 8, 9]);
        assert_eq!(t.children(3).count(), 0);
        assert_eq!(t.parent(9), Some(2));
        assert_eq!(t.depth(), 2);
        assert_eq!(Tree::new(1, 4).depth(), 0);
    }

    #[test]
    fn a_single_rank_decides_at_once() {
        let c = agree::contribution_live(1, 7, &[], &[]);
        let mut a = Agreement::new(1, 0, 2, c.clone());
        let m = Mem { slots: HashMap::new(), dead: HashSet::new() };
        assert_eq!(a.advance(&m), Step::Publish { partial: Some(c.clone()), result: Some(c.clone()) });
        assert_eq!(a.advance(&m), Step::Decided(c));
    }

    #[test]
    fn a_leaf_waits_for_its_parent_and_a_dead_parent_is_skipped() {
        let n = 7;
        let c = |r: Rank| agree::contribution_live(n, !(1 << r), &[], &[]);
        // Rank 4's parent is 1 (fan-out 3): with 1 dead and no result there, 4 asks 0.
        let mut a = Agreement::new(n, 4, 3, c(4));
        let mut m = Mem { slots: HashMap::new(), dead: HashSet::new() };
        assert_eq!(a.advance(&m), Step::Publish { partial: Some(c(4)), result: None });
        assert_eq!(a.advance(&m), Step::Wait(vec![1]));
        m.dead.insert(1);
        assert_eq!(a.advance(&m), Step::Wait(vec![0]));
        let r = expected(n, &[Some(c(0)), None, Some(c(2)), Some(c(3)), Some(c(4)), Some(c(5)), Some(c(6))]);
        m.slots.insert(0, Published { result: Some(r.clone()), ..Published::default() });
        assert_eq!(a.advance(&m), Step::Publish { partial: None, result: Some(r.clone()) });
        assert_eq!(a.advance(&m), Step::Decided(r));
    }

    #[test]
    fn the_acting_root_uses_a_dead_members_contribution_and_descends() {
        let n = 5;
        let c = |r: Rank| agree::contribution_live(n, !(1 << r), &[], &[]);
        // Fan-out 2: 0 -> {1, 2}, 1 -> {3, 4}. Ranks 0 and 1 dead; 1 had contributed.
        let mut m = Mem { slots: HashMap::new(), dead: [0, 1].into_iter().collect() };
        m.slots.insert(1, Published { contrib: Some(c(1)), ..Published::default() });
        for r in [2, 3, 4] {
            m.slots.insert(r, Published { contrib: Some(c(r)), partial: Some(c(r)), result: None });
        }
        let mut a = Agreement::new(n, 2, 2, c(2));
        let want = expected(n, &[None, Some(c(1)), Some(c(2)), Some(c(3)), Some(c(4))]);
        assert_eq!(a.advance(&m), Step::Publish { partial: Some(c(2)), result: Some(want.clone()) });
        let d = agree::decide(n, &want);
        assert_eq!(d.failed, vec![0], "1 contributed alive before it died");
        assert_eq!(d.flag as u32, !0b11110);
    }
}
