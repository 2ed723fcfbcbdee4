//! The data of agree and shrink: what each member contributes to the one internal
//! `Allreduce(BAND)` and how the reduced words are read back. Pure functions on
//! `&[u64]`, called by the MPI layer around the real reduction and by the
//! in-memory model (`colljoin`).
//!
//! Layout of a contribution for a communicator of `n` ranks, `w = ceil(n / 64)`:
//! `[flag, alive[0..w], acked[0..w]]`, rank `r` at bit `r % 64` of word `r / 64`.
//!
//! Why each field reduces correctly under AND:
//! - `flag`: ULFM's agree is the AND of the live ranks' flags, so a zombie puts
//!   all ones (neutral).
//! - `alive`: a rank is failed as soon as anyone says so. A live rank clears the
//!   bits of the ranks it knows dead, a zombie clears its own bit (it always knows
//!   it is dead, even if no live rank has read its news yet). A live rank is never
//!   known dead, so its bit stays 1: `alive` is exactly the live participants.
//! - `acked`: bit `r` set means "I acknowledged r's failure". AND gives
//!   "acknowledged by every live rank"; zombies put all ones (no vote). A live rank
//!   that has not even learnt of a failure has not acknowledged it, so the failure
//!   is not acknowledged by all, which is what ULFM asks for.
//!
//! Padding bits (at and above `n`) are zero in every contribution and ignored.

use super::Rank;

/// The uniform outcome of an agree, identical at every participant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    /// AND of the live participants' flags.
    pub flag: u64,
    /// Ranks some participant reported failed, ascending.
    pub failed: Vec<Rank>,
    /// Every failed rank was acknowledged by every live participant; when false
    /// the agree returns `MPI_ERR_PROC_FAILED` (at every participant alike).
    pub all_acked: bool,
}

/// Words of a bitmap over `n` ranks.
pub fn bitmap_words(n: Rank) -> usize {
    (n as usize).div_ceil(64)
}

/// Words of a whole contribution over `n` ranks.
pub fn contribution_len(n: Rank) -> usize {
    1 + 2 * bitmap_words(n)
}

fn set(bits: &mut [u64], r: Rank) {
    bits[r as usize / 64] |= 1 << (r % 64);
}

fn clear(bits: &mut [u64], r: Rank) {
    bits[r as usize / 64] &= !(1 << (r % 64));
}

fn get(bits: &[u64], r: Rank) -> bool {
    bits[r as usize / 64] >> (r % 64) & 1 == 1
}

/// Bits `0..n` set, padding clear.
fn all_ranks(n: Rank) -> Vec<u64> {
    let mut v = vec![!0u64; bitmap_words(n)];
    if n % 64 != 0 {
        *v.last_mut().expect("n % 64 != 0 implies n > 0") = (1u64 << (n % 64)) - 1;
    }
    v
}

fn assemble(flag: u64, alive: Vec<u64>, acked: Vec<u64>) -> Vec<u64> {
    let mut out = Vec::with_capacity(1 + alive.len() + acked.len());
    out.push(flag);
    out.extend(alive);
    out.extend(acked);
    out
}

/// What a live rank contributes: its flag, every rank alive except those it knows
/// dead, and the failures its program acknowledged on this communicator.
pub fn contribution_live(n: Rank, flag: u64, known_dead: &[Rank], acked: &[Rank]) -> Vec<u64> {
    let mut alive = all_ranks(n);
    for &d in known_dead {
        assert!(d < n, "dead rank {d} outside a communicator of {n}");
        clear(&mut alive, d);
    }
    let mut ack = vec![0u64; bitmap_words(n)];
    for &a in acked {
        assert!(a < n, "acked rank {a} outside a communicator of {n}");
        set(&mut ack, a);
    }
    assemble(flag, alive, ack)
}

/// What a zombie contributes: neutral flag and acknowledgements, its own death.
pub fn contribution_zombie(n: Rank, me: Rank) -> Vec<u64> {
    assert!(me < n, "rank {me} outside a communicator of {n}");
    let mut alive = all_ranks(n);
    clear(&mut alive, me);
    assemble(!0, alive, all_ranks(n))
}

/// `acc &= x`, word by word (what `MPI_BAND` does; for the model and tests).
pub fn and_into(acc: &mut [u64], x: &[u64]) {
    assert_eq!(acc.len(), x.len(), "contributions of different communicator sizes");
    for (a, b) in acc.iter_mut().zip(x) {
        *a &= b;
    }
}

fn split(n: Rank, reduced: &[u64]) -> (u64, &[u64], &[u64]) {
    assert_eq!(reduced.len(), contribution_len(n), "reduced words do not match n = {n}");
    let w = bitmap_words(n);
    (reduced[0], &reduced[1..1 + w], &reduced[1 + w..])
}

/// Reads the reduced words of an agree.
pub fn decide(n: Rank, reduced: &[u64]) -> Decision {
    let (flag, alive, acked) = split(n, reduced);
    let failed: Vec<Rank> = (0..n).filter(|&r| !get(alive, r)).collect();
    let all_acked = failed.iter().all(|&r| get(acked, r));
    Decision { flag, failed, all_acked }
}

/// Shrink: the members of the new communicator, in old rank order (the split key
/// is the old rank, so the MPI split keeps this order).
pub fn survivors(n: Rank, reduced: &[u64]) -> Vec<Rank> {
    let (_, alive, _) = split(n, reduced);
    (0..n).filter(|&r| get(alive, r)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reduce(parts: &[Vec<u64>]) -> Vec<u64> {
        let mut acc = parts[0].clone();
        for p in &parts[1..] {
            and_into(&mut acc, p);
        }
        acc
    }

    #[test]
    fn no_failure_means_everyone_survives_and_flags_are_anded() {
        for n in [1, 63, 64, 65, 130] {
            let parts: Vec<Vec<u64>> = (0..n).map(|r| contribution_live(n, !(1u64 << (r % 3)), &[], &[])).collect();
            let red = reduce(&parts);
            let d = decide(n, &red);
            let expect = if n >= 3 {
                !0b111
            } else if n == 2 {
                !0b11
            } else {
                !0b1
            };
            assert_eq!(d, Decision { flag: expect, failed: vec![], all_acked: true }, "n={n}");
            assert_eq!(survivors(n, &red), (0..n).collect::<Vec<_>>());
        }
    }

    #[test]
    fn a_zombie_is_failed_even_if_nobody_knew() {
        let n = 70;
        let mut parts: Vec<Vec<u64>> = (0..n).filter(|&r| r != 66).map(|_| contribution_live(n, 5, &[], &[])).collect();
        parts.push(contribution_zombie(n, 66));
        let red = reduce(&parts);
        let d = decide(n, &red);
        assert_eq!(d.flag, 5, "the zombie's flag is neutral");
        assert_eq!(d.failed, vec![66]);
        assert!(!d.all_acked, "nobody acknowledged 66");
        assert_eq!(survivors(n, &red).len(), 69);
        assert!(!survivors(n, &red).contains(&66));
    }

    #[test]
    fn acknowledged_only_if_every_live_rank_acked() {
        let n = 10;
        let all = |acked: &[Rank]| contribution_live(n, 1, &[3], acked);
        let mut parts: Vec<Vec<u64>> = (0..8).map(|_| all(&[3])).collect();
        parts.push(contribution_zombie(n, 3));
        assert!(decide(n, &reduce(&parts)).all_acked);
        // One live rank knows of the failure but has not acknowledged it.
        parts.push(all(&[]));
        let d = decide(n, &reduce(&parts));
        assert_eq!(d.failed, vec![3]);
        assert!(!d.all_acked);
        // A live rank that did not even know: its alive bit for 3 is 1, but the
        // zombie's own 0 wins, and its missing ack makes the error uniform.
        let mut parts2: Vec<Vec<u64>> = (0..8).map(|_| all(&[3])).collect();
        parts2.push(contribution_live(n, 1, &[], &[]));
        parts2.push(contribution_zombie(n, 3));
        let d2 = decide(n, &reduce(&parts2));
        assert_eq!(d2.failed, vec![3]);
        assert!(!d2.all_acked);
    }

    #[test]
    fn padding_is_clear_and_lengths_match() {
        for n in [1, 64, 65, 128, 129] {
            let c = contribution_live(n, 0, &[], &[]);
            assert_eq!(c.len(), contribution_len(n));
            let w = bitmap_words(n);
            let alive = &c[1..1 + w];
            assert_eq!(alive.iter().map(|x| x.count_ones()).sum::<u32>(), n);
            let z = contribution_zombie(n, n - 1);
            assert_eq!(z[1 + w..].iter().map(|x| x.count_ones()).sum::<u32>(), n);
        }
    }

    #[test]
    #[should_panic(expected = "outside")]
    fn out_of_range_rank_is_a_bug() {
        contribution_live(4, 0, &[4], &[]);
    }
}
