//! MPIFT's own allreduce schedule: recursive doubling, with the members beyond
//! the largest power of two folded in first (engine::own::allreduce).
//!
//! With n = p + rem members, p the largest power of two <= n: among the first
//! 2 * rem members, each even one hands its data to the odd one after it and
//! waits for the result from it; the odd ones and the members from 2 * rem on
//! are the p *participants*, numbered v = r / 2 and v = r - rem. Participants
//! exchange their partial results with v ^ 1, v ^ 2, v ^ 4, ... and combine
//! them; the odd members of the fold then send the result to their even partner.
//! Every participant's partial result covers a contiguous run of members, in
//! member order, so combining "lower run first" gives every member the same
//! operand order as r0 op r1 op ... op r(n-1): right for non-commutative
//! operations too, and bitwise the same result at every member.
//!
//! A pair of members exchanges at most one message in each direction per
//! allreduce, so a message carries only which allreduce it belongs to (the
//! stamps of protocol::dissem).

/// What member `me` of `n` does in an allreduce.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    me: usize,
    rem: usize,
    p: usize,
}

/// One step of a member's part.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Send the data to `to`, then receive the final result from it (and stop).
    HandOff { to: usize },
    /// Receive the data of `from`, whose run comes first, and combine.
    TakeIn { from: usize },
    /// Send the partial result to `peer`, receive its partial result and combine;
    /// `peer_first`: the peer's run comes before this member's.
    Exchange { peer: usize, peer_first: bool },
    /// Send the final result to `to`.
    GiveBack { to: usize },
}

impl Plan {
    pub fn new(me: usize, n: usize) -> Plan {
        let p = if n == 0 { 0 } else { 1usize << (usize::BITS - 1 - n.leading_zeros()) };
        Plan { me, rem: n - p, p }
    }

    /// The participant number of member `r`, if it is one.
    fn virt(&self, r: usize) -> Option<usize> {
        if r < 2 * self.rem {
            (r % 2 == 1).then_some(r / 2)
        } else {
            Some(r - self.rem)
        }
    }

    /// The member of participant number `v`.
    fn real(&self, v: usize) -> usize {
        if v < self.rem {
            2 * v + 1
        } else {
            v + self.rem
        }
    }

    /// Step `i` of this member's part (None: done).
    pub fn step(&self, i: usize) -> Option<Step> {
        let me = self.me;
        let Some(v) = self.virt(me) else {
            return (i == 0).then(|| Step::HandOff { to: me + 1 });
        };
        let folded = me < 2 * self.rem;
        let mut i = i;
        if folded {
            if i == 0 {
                return Some(Step::TakeIn { from: me - 1 });
            }
            i -= 1;
        }
        let rounds = self.p.trailing_zeros() as usize;
        if i < rounds {
            let pv = v ^ (1 << i);
            return Some(Step::Exchange { peer: self.real(pv), peer_first: pv < v });
        }
        (folded && i == rounds).then(|| Step::GiveBack { to: me - 1 })
    }

    /// The steps in order.
    pub fn steps(self) -> impl Iterator<Item = Step> {
        (0..).map_while(move |i| self.step(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    /// Runs the schedules of all `n` members against each other with messages in
    /// per-pair FIFO queues and string concatenation as the (non-commutative)
    /// operation; returns every member's result.
    fn simulate(n: usize) -> Vec<String> {
        let mut acc: Vec<String> = (0..n).map(|r| format!("{r},")).collect();
        let mut pc = vec![0usize; n];
        // sent[a][b]: messages from a to b not yet received.
        let mut q: Vec<Vec<VecDeque<String>>> = vec![vec![VecDeque::new(); n]; n];
        // Per member: did it already send in its current step?
        let mut sent = vec![false; n];
        let mut done = vec![false; n];
        let mut progress = true;
        while progress {
            progress = false;
            for r in 0..n {
                if done[r] {
                    continue;
                }
                let Some(s) = Plan::new(r, n).step(pc[r]) else {
                    done[r] = true;
                    progress = true;
                    continue;
                };
                let (send_to, recv_from) = match s {
                    Step::HandOff { to } => (Some(to), Some(to)),
                    Step::TakeIn { from } => (None, Some(from)),
                    Step::Exchange { peer, .. } => (Some(peer), Some(peer)),
                    Step::GiveBack { to } => (Some(to), None),
                };
                if let (Some(to), false) = (send_to, sent[r]) {
                    q[r][to].push_back(acc[r].clone());
                    sent[r] = true;
                    progress = true;
                }
                let got = match recv_from {
                    Some(f) => match q[f][r].pop_front() {
                        Some(m) => Some(m),
                        None => continue,
                    },
                    None => None,
                };
                match (s, got) {
                    (Step::HandOff { .. }, Some(m)) => acc[r] = m,
                    (Step::TakeIn { .. }, Some(m)) => acc[r] = m + &acc[r],
                    (Step::Exchange { peer_first: true, .. }, Some(m)) => acc[r] = m + &acc[r],
                    (Step::Exchange { peer_first: false, .. }, Some(m)) => acc[r] = acc[r].clone() + &m,
                    _ => {}
                }
                pc[r] += 1;
                sent[r] = false;
                progress = true;
            }
        }
        assert!(done.iter().all(|d| *d), "n {n}: a member is stuck");
        assert!(q.iter().flatten().all(|m| m.is_empty()), "n {n}: a message nobody received");
        acc
    }

    #[test]
    fn every_member_gets_the_ordered_result() {
        for n in 1..300 {
            let want: String = (0..n).map(|r| format!("{r},")).collect();
            for (r, got) in simulate(n).iter().enumerate() {
                assert_eq!(*got, want, "n {n} member {r}");
            }
        }
    }

    #[test]
    fn one_message_per_direction_per_pair() {
        for n in 1..300 {
            let mut seen = std::collections::HashSet::new();
            for r in 0..n {
                for s in Plan::new(r, n).steps() {
                    let to = match s {
                        Step::HandOff { to } | Step::GiveBack { to } => Some(to),
                        Step::Exchange { peer, .. } => Some(peer),
                        Step::TakeIn { .. } => None,
                    };
                    if let Some(to) = to {
                        assert!(to < n && to != r, "n {n}: {r} sends to {to}");
                        assert!(seen.insert((r, to)), "n {n}: {r} sends to {to} twice");
                    }
                }
            }
        }
    }

    #[test]
    fn steps_are_logarithmic() {
        for n in [1usize, 2, 3, 4, 5, 7, 8, 1000, 4096, 5000] {
            let most = (0..n).map(|r| Plan::new(r, n).steps().count()).max().unwrap();
            let log = (usize::BITS - n.leading_zeros()) as usize;
            assert!(most <= log + 1, "n {n}: {most} steps");
        }
    }
}
