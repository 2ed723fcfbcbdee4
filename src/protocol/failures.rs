//! What one rank knows about the failed members of one communicator, and what its
//! program has acknowledged (ULFM: `get_failed` / `ack_failed`, and the older
//! `failure_ack` / `failure_get_acked`).
//!
//! Two separate things, on purpose: *known* failures change whenever failure news
//! arrives (in the background, at any time), *acknowledged* failures change only
//! when the program calls an acknowledging function. ULFM ties behaviour to the
//! second: a wildcard receive fails with `MPI_ERR_PROC_FAILED_PENDING` while some
//! known failure is unacknowledged, and `agree` reports `MPI_ERR_PROC_FAILED`
//! unless every failure was acknowledged. Mixing them would make those calls
//! depend on when news happened to arrive rather than on what the program saw.

use super::Rank;

#[derive(Clone, Debug, Default)]
pub struct Failures {
    /// Known failed ranks in detection order. Invariant: no duplicates, and it only
    /// grows, so every result `get_failed` returned is a prefix of later ones.
    known: Vec<Rank>,
    /// How many of `known` (a prefix) the program has acknowledged.
    /// Invariant: `acked <= known.len()`.
    acked: usize,
}

impl Failures {
    pub fn new() -> Self {
        Self::default()
    }

    /// Failure news; true if `r` was not known before.
    pub fn learn(&mut self, r: Rank) -> bool {
        if self.known.contains(&r) {
            return false;
        }
        self.known.push(r);
        true
    }

    pub fn is_failed(&self, r: Rank) -> bool {
        self.known.contains(&r)
    }

    /// `MPIX_Comm_get_failed`: every known failure, in detection order.
    pub fn known(&self) -> &[Rank] {
        &self.known
    }

    /// `MPIX_Comm_ack_failed(comm, num_to_ack, &num_acked)`: acknowledges the first
    /// `num_to_ack` known failures (never fewer than already acknowledged) and
    /// returns how many are acknowledged now.
    pub fn ack_first(&mut self, num_to_ack: usize) -> usize {
        self.acked = self.acked.max(num_to_ack.min(self.known.len()));
        self.acked
    }

    /// `MPIX_Comm_failure_ack`: acknowledges every failure known now.
    pub fn ack_all(&mut self) {
        self.acked = self.known.len();
    }

    /// `MPIX_Comm_failure_get_acked`: the acknowledged failures.
    pub fn acked(&self) -> &[Rank] {
        &self.known[..self.acked]
    }

    /// A known failure the program has not acknowledged: wildcard receives must
    /// report `MPI_ERR_PROC_FAILED_PENDING` (ULFM-SEMANTICS.md, Point-to-point).
    pub fn has_unacknowledged(&self) -> bool {
        self.acked < self.known.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn get_failed_results_are_prefixes_of_later_ones() {
        let mut f = Failures::new();
        let mut seen: Vec<Vec<Rank>> = Vec::new();
        for r in [5, 2, 5, 9, 2, 0] {
            f.learn(r);
            seen.push(f.known().to_vec());
        }
        for w in seen.windows(2) {
            assert!(w[1].starts_with(&w[0]));
        }
        assert_eq!(f.known(), &[5, 2, 9, 0]);
    }

    #[test]
    fn acknowledging_gates_wildcard_receives() {
        let mut f = Failures::new();
        assert!(!f.has_unacknowledged());
        f.learn(3);
        f.learn(1);
        assert!(f.has_unacknowledged());
        assert_eq!(f.ack_first(1), 1);
        assert!(f.has_unacknowledged());
        assert_eq!(f.acked(), &[3]);
        assert_eq!(f.ack_first(0), 1, "acknowledgement never shrinks");
        assert_eq!(f.ack_first(10), 2, "cannot acknowledge more than is known");
        assert!(!f.has_unacknowledged());
        f.learn(7);
        assert!(f.has_unacknowledged(), "news after the ack needs a new ack");
        f.ack_all();
        assert_eq!(f.acked(), &[3, 1, 7]);
        assert!(!f.has_unacknowledged());
    }
}
